use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(y: &mut [f32]) {
    let mut i = 0;
    loop {
        i += 1;
    }
}

fn main() {}
