use onekernel_macros::kernel;

// An asynchronous copy fills a shared array of the buffer's element type.
#[kernel(workgroup = 64)]
fn k(x: &[f32], y: &mut [f32]) {
    let s = shared::<u32, 256>();
    async_copy(s, 4 * local_id().x, x, 4 * local_id().x, 4);
    async_commit();
    async_wait(0);
    barrier();
    y[local_id().x] = f32::from_bits(s[local_id().x]);
}

fn main() {}
