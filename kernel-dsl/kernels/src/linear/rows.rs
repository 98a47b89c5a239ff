//! Row copies through a slot table: the unfused gather, scatter and concatenation steps
//! around the recurrent kernels.

use onekernel_macros::kernel;

/// Copies `row_len` values of each of `n_rows` rows:
/// `dst[d·dst_stride + dst_offset + e] = src[s·src_stride + src_offset + e]`, where for
/// row `r` (entry `r / per_entry`, sub-row `r % per_entry`) `s = d = r`, except that
/// with `table = 1` the source row is `table[entry]·per_entry + sub-row` (a gather from a
/// cache) and with `table = 2` the destination row is (a scatter into one). Values are
/// copied bit for bit. Grid `[⌈row_len/256⌉, n_rows, 1]`; rows `n_src_rows` /
/// `n_dst_rows` bound the buffers.
#[kernel(workgroup = 256, variants(table = [0u32, 1, 2]))]
pub fn copy_rows(
    #[len(n_src_rows * src_stride)] src: &[f32],
    #[len(select(table == 0, 1, num_groups().y / per_entry))] slots: &[i32],
    #[len(n_dst_rows * dst_stride)] dst: &mut [f32],
    #[push] row_len: u32,
    #[push] per_entry: u32,
    #[push] src_stride: u32,
    #[push] src_offset: u32,
    #[push] dst_stride: u32,
    #[push] dst_offset: u32,
    #[push] n_src_rows: u32,
    #[push] n_dst_rows: u32,
) {
    let e = global_id().x;
    let r = group_id().y;
    if e < row_len {
        let mut s = r;
        let mut d = r;
        if table != 0 {
            let mapped = (slots[r / per_entry] as u32) * per_entry + r % per_entry;
            if table == 1 {
                s = mapped;
            } else {
                d = mapped;
            }
        }
        dst[d * dst_stride + dst_offset + e] = src[s * src_stride + src_offset + e];
    }
}
