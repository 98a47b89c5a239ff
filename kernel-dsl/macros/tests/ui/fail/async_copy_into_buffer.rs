use onekernel_macros::kernel;

// The destination of an asynchronous copy is shared memory, not a buffer.
#[kernel(workgroup = 64)]
fn k(x: &[u32], y: &mut [u32]) {
    async_copy(y, 4 * local_id().x, x, 4 * local_id().x, 4);
    async_commit();
    async_wait(0);
}

fn main() {}
