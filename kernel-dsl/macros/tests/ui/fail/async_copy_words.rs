use onekernel_macros::kernel;

// 1, 2 or 4 elements per copy: the sizes every backend copies natively.
#[kernel(workgroup = 64)]
fn k(x: &[u32], y: &mut [u32]) {
    let s = shared::<u32, 256>();
    async_copy(s, 3 * local_id().x, x, 3 * local_id().x, 3);
    async_commit();
    async_wait(0);
    barrier();
    y[local_id().x] = s[local_id().x];
}

fn main() {}
