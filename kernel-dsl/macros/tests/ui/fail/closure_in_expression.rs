use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(x: &[f32], y: &mut [f32]) {
    let twice = |v: f32| -> f32 {
        let w = v * 2.0;
        w
    };
    let i = local_id().x;
    y[i] = twice(x[i]) + 1.0;
}

fn main() {}
