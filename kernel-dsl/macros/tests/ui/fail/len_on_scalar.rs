use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(y: &mut [f32], #[len(4)] #[push] n: u32) {
    y[0] = 1.0;
}

fn main() {}
