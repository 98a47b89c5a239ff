use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(y: &mut [f32]) {
    let a = shared::<f32, 32768>();
    let b = shared::<f32, 32768>();
    let t = local_id().x;
    a[t] = 1.0;
    b[t] = 2.0;
    barrier();
    y[t] = a[t] + b[t];
}

fn main() {}
