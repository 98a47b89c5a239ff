use onekernel_macros::kernel;

// `load_words` reads a buffer or a shared array; a local array is copied element-wise.
#[kernel(workgroup = 64)]
fn k(x: &[u32], y: &mut [u32]) {
    let a = [x[local_id().x], 1u32, 2u32, 3u32];
    let mut w = [0u32; 4];
    load_words(w, 0, a, 0, 4);
    y[local_id().x] = w[0];
}

fn main() {}
