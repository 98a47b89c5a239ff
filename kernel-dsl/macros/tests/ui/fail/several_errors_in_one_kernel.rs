use onekernel_macros::kernel;

const SCALE: f32 = 0.5;

// Every error of a kernel is reported in one compile, each at its own span: a float
// accumulator started from an integer literal, an outer constant, a helper `fn`, f32
// divided by u32; a failed `let` is not reported again at its uses.
#[kernel(workgroup = 64)]
fn k(x: &[f32], y: &mut [f32], #[push] n: u32) {
    let mut s = 0;
    for i in 0..n {
        s += x[i];
    }
    let t = x[0] * SCALE;
    let h = helper(x[1]);
    let bad = x[2] / n;
    y[0] = bad + t + h;
    y[1] = s;
}

fn helper(v: f32) -> f32 {
    v
}

fn main() {}
