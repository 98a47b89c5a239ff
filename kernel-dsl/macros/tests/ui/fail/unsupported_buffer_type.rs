use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(x: &[f64], y: &mut [f32]) {
    y[0] = 1.0;
}

fn main() {}
