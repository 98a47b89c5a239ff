use onekernel_macros::kernel;

// Tile arrays misused: an index the macro cannot know, past the end (a literal, and a
// counter's arithmetic in its last copy), the array where one tile goes, an unrolled
// loop over a bound that is not a literal, over too many values or with a `break`, a
// length that is not a literal, and an element whose generated name is another tile's.
#[kernel(workgroup = 32, fast)]
fn k(x: &[u32], y: &mut [f32], #[push] n: u32) {
    let o = [tile_acc(); 4];
    let a = tile_a();
    let b = tile_b();
    let p = [tile_b(); n];
    let o2 = tile_acc();
    let i = local_id().x % 4;
    tile_fill(o[i], 0.0);
    tile_fill(o[4], 0.0);
    for j in 0..4u32 {
        tile_fill(o[j + 1], 0.0);
    }
    tile_mma(o, a, b);
    for j in 0..n {
        tile_fill(o[j], 0.0);
    }
    for j in 0..1000u32 {
        tile_fill(o[j % 4], 0.0);
    }
    for j in 0..4u32 {
        tile_fill(o[j], 0.0);
        if j == 2 {
            break;
        }
    }
    tile_load(a, x, 0, 16, false);
    y[0] = 0.0;
}

fn main() {}
