use onekernel_macros::kernel;

// Element access with slots of the wrong length, type or mutability, a scratch of the
// wrong type, and a `tile_b()` set from slots.
#[kernel(workgroup = 32, fast)]
fn k(y: &mut [f32]) {
    let s = shared::<f32, 256>();
    let c = tile_acc();
    let a = tile_a();
    let b = tile_b();
    let mut short = [0.0; 4];
    let fixed = [0.0; 8];
    let mut v = [0.0; 8];
    let mut rows = [0.0; 8];
    let mut cols = [0u32; 8];
    tile_fill(c, 0.0);
    tile_get(short, c, s, 0, 16);
    tile_get(fixed, c, s, 0, 16);
    tile_set(a, v, s, 0, 16);
    tile_set(b, v, s, 0, 16);
    tile_coords(rows, cols);
    tile_row_max(v);
    y[local_id().x] = short[0] + rows[0] + (cols[0] as f32);
}

fn main() {}
