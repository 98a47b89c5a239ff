use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(x: &[f32], y: &mut [f32]) {
    y[0] = x[0] % 2.0;
}

fn main() {}
