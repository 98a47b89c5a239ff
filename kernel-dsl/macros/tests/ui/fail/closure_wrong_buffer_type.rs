use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(x: &[f32], w: &[u32], y: &mut [f32]) {
    let word = |b: &[u32], j: u32| -> u32 { b[j] };
    let i = local_id().x;
    let v = word(x, i);
    y[i] = f32::from_bits(v) + x[i] + (w[i] as f32);
}

fn main() {}
