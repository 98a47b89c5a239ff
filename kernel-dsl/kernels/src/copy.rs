//! A plain copy, the bandwidth baseline of the benchmarks: what the memory system gives
//! a generated kernel with the same 4-byte accesses.

use onekernel_macros::kernel;

/// `dst[i] = src[i]` for `i < n`; each invocation copies four words, a workgroup's
/// accesses contiguous.
#[kernel(workgroup = 256)]
pub fn copy_words(#[len(n)] src: &[u32], #[len(n)] dst: &mut [u32], #[push] n: u32) {
    let base = group_id().x * 1024 + local_id().x;
    for k in 0..4u32 {
        let i = base + k * 256;
        if i < n {
            dst[i] = src[i];
        }
    }
}
