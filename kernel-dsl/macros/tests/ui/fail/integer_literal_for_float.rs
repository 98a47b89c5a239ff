use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(y: &mut [f32]) {
    let v: f32 = 1;
    y[0] = v;
}

fn main() {}
