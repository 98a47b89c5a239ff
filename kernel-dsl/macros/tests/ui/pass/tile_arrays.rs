use onekernel_macros::kernel;

// Tile arrays: elements by literal, by an unrolled loop's counter (u32 and i32, with a
// step, nested in a loop that stays a loop), by arithmetic on it, and as a panel's eight
// accumulators.
#[kernel(workgroup = 128, fast)]
fn k(x: &[u32], y: &mut [f32]) {
    let kv = shared::<u32, 8704>();
    let sc = shared::<f32, 4096>();
    let o = [tile_acc(); 8];
    let q = [tile_a(); 4];
    let b = tile_b();
    let mut v = [0.0; 8];
    for i in (local_id().x..8704u32).step_by(128) {
        kv[i] = x[i % 64];
    }
    barrier();
    for j in 0..8u32 {
        tile_fill(o[j], 0.0);
    }
    for kk in 0..4u32 {
        tile_load(q[kk], kv, 16 * kk, 136, false);
    }
    for r in 0..2u32 {
        for j in (0..8i32).step_by(2) {
            tile_load(b, kv, r * 16 + 16 * j as u32, 136, false);
            tile_mma(o[j], q[1], b);
        }
    }
    for h in 0..2u32 {
        tile_mma(o[4 * h + 3], q[(h + 1) % 2], b);
    }
    tile_mma_panel(o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], q[0], kv, 0, 64, 0, 0, true);
    tile_mma_wait();
    tile_get(v, o[7], sc, (local_id().x / 32) * 256, 16);
    y[local_id().x] = v[0];
}

fn main() {}
