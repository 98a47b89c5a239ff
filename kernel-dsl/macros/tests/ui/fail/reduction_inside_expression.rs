use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(x: &[f32], y: &mut [f32]) {
    let t = local_id().x;
    y[t] = 2.0 * workgroup_sum(x[t]);
}

fn main() {}
