use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(x: &[f32], y: &mut [f32]) {
    let i = local_id().x;
    y[i] = x[i] + i;
}

fn main() {}
