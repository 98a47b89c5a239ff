use onekernel_macros::kernel;

// `load_words` reads read-only buffers: GLSL reads them through a second, vector-typed
// declaration of the binding.
#[kernel(workgroup = 64)]
fn k(x: &mut [u32], y: &mut [u32]) {
    let mut w = [0u32; 4];
    load_words(w, 0, x, 4 * local_id().x, 4);
    y[local_id().x] = w[0] + w[3];
}

fn main() {}
