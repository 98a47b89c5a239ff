use onekernel_macros::kernel;

// More resident workgroups than a multiprocessor holds.
#[kernel(workgroup = 256, resident = 10)]
fn too_many(y: &mut [f32]) {
    y[0] = 1.0;
}

#[kernel(workgroup = 64, resident = 0)]
fn none(y: &mut [f32]) {
    y[0] = 1.0;
}

fn main() {}
