use onekernel_macros::kernel;

// `load_words` fills a local array (registers); shared memory takes `async_copy`.
#[kernel(workgroup = 64)]
fn k(x: &[u32], y: &mut [u32]) {
    let s = shared::<u32, 256>();
    load_words(s, 4 * local_id().x, x, 4 * local_id().x, 4);
    barrier();
    y[local_id().x] = s[local_id().x];
}

fn main() {}
