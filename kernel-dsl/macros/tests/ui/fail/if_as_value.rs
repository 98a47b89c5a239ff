use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(x: &[f32], y: &mut [f32]) {
    let v = if x[0] > 0.0 { 1.0 } else { 2.0 };
    y[0] = v;
}

fn main() {}
