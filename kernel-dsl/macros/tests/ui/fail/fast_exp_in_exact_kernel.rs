use onekernel_macros::kernel;

// The hardware's exp is not the interpreter's: a kernel using `fast_exp` is `fast`.
#[kernel(workgroup = 32)]
fn k(x: &[f32], y: &mut [f32]) {
    let i = local_id().x;
    y[i] = fast_exp(x[i]);
}

fn main() {}
