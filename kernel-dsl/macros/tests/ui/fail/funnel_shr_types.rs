use onekernel_macros::kernel;

// `funnel_shr` reads a bit window of two u32 words; signed words are an error, not a
// silent reinterpretation.
#[kernel(workgroup = 64)]
fn k(x: &[i32], y: &mut [u32]) {
    let i = local_id().x;
    y[i] = funnel_shr(x[i], x[i + 1], 8u32);
}

fn main() {}
