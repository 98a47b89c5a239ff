use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(#[len(local_id().x + n)] y: &mut [f32], #[push] n: u32) {
    y[0] = 1.0;
}

fn main() {}
