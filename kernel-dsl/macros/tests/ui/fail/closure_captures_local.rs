use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(x: &[f32], y: &mut [f32]) {
    let i = local_id().x;
    let load = |j: u32| -> f32 { x[i + j] };
    let v = load(1);
    y[i] = v;
}

fn main() {}
