use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(x: &[f32], y: &mut [f32]) {
    let clamp_load = |j: u32| -> f32 {
        if j >= 64 {
            return;
        }
        x[j]
    };
    let i = local_id().x;
    let v = clamp_load(i);
    y[i] = v;
}

fn main() {}
