use onekernel_macros::kernel;

// `store_words` writes a buffer; a shared array is written element by element.
#[kernel(workgroup = 64)]
fn k(x: &[f32], y: &mut [f32]) {
    let s = shared::<f32, 256>();
    let w = [x[local_id().x], 1.0, 2.0, 3.0];
    store_words(s, 4 * local_id().x, w, 0, 4);
    barrier();
    y[local_id().x] = s[4 * local_id().x];
}

fn main() {}
