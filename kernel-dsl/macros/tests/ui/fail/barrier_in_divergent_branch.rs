use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(y: &mut [f32]) {
    let s = shared::<f32, 64>();
    let t = local_id().x;
    s[t] = 1.0;
    if t < 32 {
        barrier();
    }
    y[t] = s[63 - t];
}

fn main() {}
