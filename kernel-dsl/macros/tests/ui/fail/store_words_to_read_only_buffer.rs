use onekernel_macros::kernel;

// `store_words` writes `&mut` buffers only.
#[kernel(workgroup = 64)]
fn k(x: &[u32], y: &mut [u32]) {
    let w = [x[local_id().x], 1u32];
    store_words(x, 2 * local_id().x, w, 0, 2);
    y[local_id().x] = w[1];
}

fn main() {}
