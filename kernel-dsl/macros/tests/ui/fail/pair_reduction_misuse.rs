use onekernel_macros::kernel;

// A tuple `let` takes only a pair reduction, with a value and a u32 index.
#[kernel(workgroup = 64)]
fn k(x: &[f32], y: &mut [f32]) {
    let (a, b) = (1.0, 2.0);
    let (v, i) = workgroup_argmax(x[local_id().x]);
    let (w, j) = workgroup_argmin(x[local_id().x], 1.5);
    y[0] = a + b + v + w;
}

fn main() {}
