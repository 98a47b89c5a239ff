use onekernel_macros::kernel;

// `tile_mma_panel` with a B tile among its accumulators, an accumulator as its A
// operand, a panel in an f32 array, a workgroup that is not whole warpgroups, and a flag
// that is not a literal; six accumulators (four or eight are the forms); `panel_word` in
// an exact kernel without tiles.
#[kernel(workgroup = 64, fast)]
fn k(y: &mut [f32]) {
    let p = shared::<u32, 4352>();
    let f = shared::<f32, 4352>();
    let c = tile_acc();
    let a = tile_a();
    let b = tile_b();
    p[local_id().x] = 0;
    barrier();
    tile_fill(c, 0.0);
    tile_mma_panel(c, c, c, b, a, p, 0, 64, 0, 0, false);
    tile_mma_panel(c, c, c, c, c, f, 0, 64, 0, 0, true);
    tile_mma_wait();
    y[local_id().x] = f[0];
}

#[kernel(workgroup = 128, fast)]
fn g(y: &mut [f32], #[push] flag: u32) {
    let p = shared::<u32, 4352>();
    let c = tile_acc();
    let a = tile_a();
    p[local_id().x] = 0;
    barrier();
    tile_fill(c, 0.0);
    tile_mma_panel(c, c, c, c, a, p, 0, 64, 0, 0, flag == 1);
    y[local_id().x] = 0.0;
}

#[kernel(workgroup = 128, fast)]
fn w(y: &mut [f32]) {
    let p = shared::<u32, 4352>();
    let c = tile_acc();
    let a = tile_a();
    p[local_id().x] = 0;
    barrier();
    tile_fill(c, 0.0);
    tile_mma_panel(c, c, c, c, c, c, a, p, 0, 64, 0, 0, true);
    y[local_id().x] = 0.0;
}

#[kernel(workgroup = 64)]
fn e(y: &mut [u32]) {
    y[local_id().x] = panel_word(local_id().x, 0, 8);
}

fn main() {}
