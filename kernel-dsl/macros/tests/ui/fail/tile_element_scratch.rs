use onekernel_macros::kernel;

// Element access goes through a shared array where a backend must, never a buffer.
#[kernel(workgroup = 32, fast)]
fn k(x: &[f32], y: &mut [f32]) {
    let c = tile_acc();
    let mut v = [0.0; 8];
    tile_load(c, x, 0, 16, false);
    tile_get(v, c, y, 0, 16);
    y[local_id().x] = v[0];
}

fn main() {}
