use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(x: &[u32], y: &mut [f32]) {
    match x[0] {
        0 => y[0] = 1.0,
        _ => y[0] = 2.0,
    }
}

fn main() {}
