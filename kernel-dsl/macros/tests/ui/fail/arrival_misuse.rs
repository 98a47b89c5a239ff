use onekernel_macros::kernel;

// `last_arrival` under a branch on the invocation, at an index that differs between
// invocations, on f32 counters, and inside an expression; its counters read as data.
#[kernel(workgroup = 64)]
fn u(y: &mut [f32], c: &mut [u32]) {
    if local_id().x == 0 {
        let last = last_arrival(c, 0, 4);
        if last {
            y[0] = 1.0;
        }
    }
    let mine = last_arrival(c, local_id().x, 4);
    if mine {
        y[1] = 1.0;
    }
}

#[kernel(workgroup = 64)]
fn k(y: &mut [f32], f: &mut [f32]) {
    let wrong = last_arrival(f, 0, 4);
    if wrong {
        y[1] = f[0];
    }
}

#[kernel(workgroup = 64)]
fn e(y: &mut [f32], c: &mut [u32]) {
    y[0] = select(last_arrival(c, 0, 4), 1.0, 0.0);
}

fn main() {}
