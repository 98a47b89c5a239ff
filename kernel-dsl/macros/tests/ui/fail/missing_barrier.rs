use onekernel_macros::kernel;

// Each invocation stores its own element, then reads another's with no barrier between:
// a compile error at the read. The same kernel with `barrier();` after the store compiles
// (tests/ui/pass).
#[kernel(workgroup = 64)]
fn reverse(x: &[f32], y: &mut [f32]) {
    let s = shared::<f32, 64>();
    let t = local_id().x;
    s[t] = x[global_id().x];
    y[global_id().x] = s[63 - t];
}

fn main() {}
