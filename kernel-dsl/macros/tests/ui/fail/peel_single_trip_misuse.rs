use onekernel_macros::kernel;

// A stepped loop cannot be peeled.
#[kernel(workgroup = 64)]
fn stepped(y: &mut [f32], #[push] n: u32) {
    #[peel_single_trip]
    for i in (0..n).step_by(2u32) {
        y[i] = 1.0;
    }
}

// `for` takes no other attribute.
#[kernel(workgroup = 64)]
fn unknown(y: &mut [f32], #[push] n: u32) {
    #[unroll]
    for i in 0..n {
        y[i] = 1.0;
    }
}

// The peeled trip is no loop: nothing in it may leave or restart it (a nested loop's
// `break` is fine).
#[kernel(workgroup = 64)]
fn leaves(y: &mut [f32], #[push] n: u32) {
    #[peel_single_trip]
    for i in 0..n {
        for j in 0..4u32 {
            if j == i {
                break;
            }
        }
        if i == 3 {
            continue;
        }
        y[i] = 1.0;
    }
}

// Other statements take no attribute at all.
#[kernel(workgroup = 64)]
fn on_let(y: &mut [f32]) {
    #[peel_single_trip]
    let x = 1.0;
    y[0] = x;
}

#[kernel(workgroup = 64)]
fn on_if(y: &mut [f32], #[push] n: u32) {
    #[allow(unused)]
    if n > 0 {
        y[0] = 1.0;
    }
}

fn main() {}
