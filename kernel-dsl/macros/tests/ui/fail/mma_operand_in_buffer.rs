use onekernel_macros::kernel;

// A and B are read from shared memory (staged there first).
#[kernel(workgroup = 32, fast)]
fn k(x: &[u32], y: &mut [f32]) {
    let b = shared::<u32, 64>();
    let c = shared::<f32, 128>();
    mma_f16(c, 0, 8, 1, 8, x, 0, 16, false, b, 0, 16, 16);
    y[local_id().x] = c[local_id().x];
}

fn main() {}
