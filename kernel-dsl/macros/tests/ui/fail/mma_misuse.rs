use onekernel_macros::kernel;

// The inner dimension is a multiple of 16, and the accumulators are f32.
#[kernel(workgroup = 32, fast)]
fn k(y: &mut [f32]) {
    let a = shared::<u32, 128>();
    let b = shared::<u32, 64>();
    let c = shared::<u32, 128>();
    mma_f16(c, 0, 8, 1, 8, a, 0, 16, false, b, 0, 16, 24);
    y[local_id().x] = 0.0;
}

fn main() {}
