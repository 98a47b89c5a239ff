use onekernel_macros::kernel;

// Tiles are declared at the top level without `mut`, and are not values.
#[kernel(workgroup = 32, fast)]
fn k(y: &mut [f32]) {
    let mut c = tile_acc();
    if local_id().x < 64 {
        let d = tile_acc();
    }
    let e = tile_acc();
    y[local_id().x] = e;
}

fn main() {}
