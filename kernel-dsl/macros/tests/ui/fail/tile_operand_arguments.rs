use onekernel_macros::kernel;

// `col_major` is a literal, and tiles move through shared arrays or buffers.
#[kernel(workgroup = 32, fast)]
fn k(x: &[u32], y: &mut [f32]) {
    let a = tile_a();
    let mut l = [0u32; 4];
    let flag = local_id().x == 0;
    tile_load(a, x, 0, 16, flag);
    tile_load(a, l, 0, 16, false);
    tile_mma(a, x, a);
    y[local_id().x] = 0.0;
}

fn main() {}
