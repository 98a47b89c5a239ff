use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(y: &mut [f32]) {
    let acc = 0.0;
    acc = acc + 1.0;
    y[0] = acc;
}

fn main() {}
