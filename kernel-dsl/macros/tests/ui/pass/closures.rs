//! Kernel closures: declared at the top level, called as the value of a `let` or an
//! assignment, with buffer and scalar parameters, loops, `if` and locals inside, and one
//! closure calling another.
use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(words: &[u32], halves: &[f16], y: &mut [f32], #[push] n: u32) {
    // An expression closure: callable inside expressions.
    let bits_at = |w: &[u32], i: u32| -> u32 { (w[i / 2] >> ((i % 2) * 16)) & 65535 };
    let half_at = |w: &[u32], i: u32| -> f32 {
        let bits = bits_at(w, i);
        f16_bits_to_f32(bits)
    };
    let sum_row = |w: &[u32], row: u32| -> f32 {
        let mut s = 0.0;
        for j in 0..4u32 {
            let v = half_at(w, row * 4 + j);
            if v > 0.0 {
                s += v;
            }
        }
        s
    };
    let i = global_id().x;
    if i < n {
        let mut acc = sum_row(words, i);
        acc = acc + (bits_at(words, i) as f32) * 0.5;
        acc = acc + (halves[i] as f32);
        y[i] = acc;
    }
}

fn main() {}
