use onekernel_macros::kernel;

// Tensor cores do not round like the interpreter: a kernel using `mma_f16` is `fast`.
#[kernel(workgroup = 32)]
fn k(y: &mut [f32]) {
    let a = shared::<u32, 128>();
    let b = shared::<u32, 64>();
    let c = shared::<f32, 128>();
    mma_f16(c, 0, 8, 1, 8, a, 0, 16, false, b, 0, 16, 16);
    y[local_id().x] = c[local_id().x];
}

fn main() {}
