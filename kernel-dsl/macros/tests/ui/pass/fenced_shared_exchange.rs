use onekernel_macros::kernel;

// The negative control of tests/ui/fail/missing_barrier.rs: with the barrier, reading
// another invocation's element compiles; so does reading one's own element without one.
#[kernel(workgroup = 64)]
fn reverse(x: &[f32], y: &mut [f32]) {
    let s = shared::<f32, 64>();
    let t = local_id().x;
    s[t] = x[global_id().x];
    let mine = s[t];
    barrier();
    y[global_id().x] = s[63 - t] + mine;
}

fn main() {}
