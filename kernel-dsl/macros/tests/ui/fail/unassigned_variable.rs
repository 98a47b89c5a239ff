use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(x: &[f32], y: &mut [f32]) {
    let v: f32;
    if x[0] > 0.0 {
        v = 1.0;
    }
    y[0] = v;
}

fn main() {}
