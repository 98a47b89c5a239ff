use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(x: &[f32], y: &mut [f32], #[push] n: u32) {
    let i = global_id().x;
    if i >= n {
        return;
    }
    let s = workgroup_sum(x[i]);
    y[i] = s;
}

fn main() {}
