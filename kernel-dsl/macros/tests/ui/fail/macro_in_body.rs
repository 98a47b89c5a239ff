use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn k(y: &mut [f32]) {
    println!("hello");
    y[0] = 1.0;
}

fn main() {}
