use onekernel_macros::kernel;

// Operands of the wrong role, a store into a read-only buffer, a tile loaded from
// memory of the wrong type, and a workgroup that is not whole groups of 32.
#[kernel(workgroup = 48, fast)]
fn k(x: &[u32], z: &[f32], y: &mut [f32]) {
    let s = shared::<f32, 256>();
    let c = tile_acc();
    let a = tile_a();
    let b = tile_b();
    tile_load(a, x, 0, 16, false);
    tile_load(b, s, 0, 16, false);
    tile_fill(c, 0.0);
    tile_mma(c, b, a);
    tile_store(c, z, 0, 16, false);
    tile_fill(a, 1.0);
    y[local_id().x] = 0.0;
}

fn main() {}
