use onekernel_macros::kernel;

// `f32_to_f16_bits` rounds an f32 to binary16 bits; a u32 (bits already) is an error, not
// a silent reinterpretation.
#[kernel(workgroup = 64)]
pub fn k(#[len(n)] x: &[u32], #[len(n)] y: &mut [u32], #[push] n: u32) {
    let i = global_id().x;
    y[i] = f32_to_f16_bits(x[i]);
}

fn main() {}
