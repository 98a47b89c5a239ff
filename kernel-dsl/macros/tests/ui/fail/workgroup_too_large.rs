use onekernel_macros::kernel;

#[kernel(workgroup = (64, 32))]
fn k(y: &mut [f32]) {
    y[0] = 1.0;
}

fn main() {}
