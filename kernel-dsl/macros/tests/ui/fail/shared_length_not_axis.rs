use onekernel_macros::kernel;

// A shared array's length may depend on variant axes only: a free spec constant or a
// push constant has no finite set of values to size every variant by.
#[kernel(workgroup = 64)]
fn k(y: &mut [f32], #[spec(default = 128)] d: u32) {
    let s = shared::<f32, { d * 2 }>();
    s[local_id().x] = 1.0;
    barrier();
    y[local_id().x] = s[63 - local_id().x];
}

fn main() {}
