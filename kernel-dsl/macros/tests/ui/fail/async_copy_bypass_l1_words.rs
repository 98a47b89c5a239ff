use onekernel_macros::kernel;

// Only 16-byte copies can bypass L1 (CUDA's `cp.async.cg`): 4 elements, not 2.
#[kernel(workgroup = 64)]
fn k(x: &[u32], y: &mut [u32]) {
    let s = shared::<u32, 256>();
    async_copy_bypass_l1(s, 2 * local_id().x, x, 2 * local_id().x, 2);
    async_commit();
    async_wait(0);
    barrier();
    y[local_id().x] = s[local_id().x];
}

fn main() {}
