//! The benchmarks' baseline kernels: a plain copy, their bandwidth baseline (what the
//! memory system gives a generated kernel with the same 4-byte accesses), a read of a
//! buffer, their L2 flush, and `tile_probe`, what each register-tile operation costs
//! (`onekernel bench-tiles`).

use onekernel_macros::kernel;

/// `dst[i] = src[i]` for `i < n`; each invocation copies four words, a workgroup's
/// accesses contiguous.
#[kernel(workgroup = 256)]
pub fn copy_words(#[len(n)] src: &[u32], #[len(n)] dst: &mut [u32], #[push] n: u32) {
    let base = group_id().x * 1024 + local_id().x;
    for k in 0..4u32 {
        let i = base + k * 256;
        if i < n {
            dst[i] = src[i];
        }
    }
}

/// Reads `words[i]` for `i < n` and writes `tag` to `hits[0]` where the four words an
/// invocation reads (as `copy_words` lays them out) XOR to `tag`; nothing else is
/// written. The benchmarks run it over zeroed scratch with a tag no invocation meets
/// before each timed launch: it replaces the L2's contents with clean lines, so the
/// timed kernel reads from DRAM without writing back what a flush by a memset left
/// dirty (docs/PERFORMANCE.md, "Method").
#[kernel(workgroup = 256)]
pub fn read_words(#[len(n)] words: &[u32], hits: &mut [u32], #[push] n: u32, #[push] tag: u32) {
    let base = group_id().x * 1024 + local_id().x;
    let mut x = 0u32;
    for k in 0..4u32 {
        let i = base + k * 256;
        if i < n {
            x = x ^ words[i];
        }
    }
    if x == tag {
        hits[0] = tag;
    }
}

/// What each register-tile operation costs (`onekernel bench-tiles`, docs/PERFORMANCE.md):
/// after staging `src` in shared memory, each group of 32 runs `iters` iterations over
/// its own 16 × 136 region of f16 values, each a product after the pattern `mode`: 0–3
/// load A and B from shared memory (A by rows, B by columns; both by columns; both by
/// rows; A by columns, B by rows), 4 loads nothing, 5 stores the accumulators to shared
/// memory and loads them back, 6 loads A by rows and B by columns from `src` itself;
/// then the group stores its accumulators to `out`. With `padded` the workgroup also holds 25 KiB of shared
/// memory it barely uses (47 KiB in all, as the tensor-core decode kernel's Vulkan
/// form): what that does to the workgroups an SM keeps.
#[kernel(workgroup = 128, fast, variants(padded = [false, true]))]
pub fn tile_probe(#[len(4352)] src: &[u32], #[len(num_groups().x * 1024)] out: &mut [f32], #[push] iters: u32, #[push] mode: u32) {
    let sa = shared::<u32, 4352>();
    let sf = shared::<f32, 1024>();
    let filler = shared::<u32, { select(padded, 6400u32, 4u32) }>();
    let acc = tile_acc();
    let ta = tile_a();
    let tb = tile_b();
    let t = local_id().x;
    let g = t / 32;
    for i in (t..4352u32).step_by(128) {
        sa[i] = src[i];
    }
    if t < 4 {
        filler[t] = src[t] & 0;
    }
    barrier();
    tile_fill(acc, 0.0);
    let base = g * 2176;
    tile_load(ta, sa, base, 136, false);
    tile_load(tb, sa, base, 136, true);
    for it in 0..iters {
        // Another place along the rows each iteration, so no load can be hoisted.
        let at = base + (it % 8) * 16;
        if mode == 0 {
            tile_load(ta, sa, at, 136, false);
            tile_load(tb, sa, at, 136, true);
        } else if mode == 1 {
            tile_load(ta, sa, at, 136, true);
            tile_load(tb, sa, at, 136, true);
        } else if mode == 2 {
            tile_load(ta, sa, at, 136, false);
            tile_load(tb, sa, at, 136, false);
        } else if mode == 3 {
            tile_load(ta, sa, at, 136, true);
            tile_load(tb, sa, at, 136, false);
        } else if mode == 5 {
            tile_store(acc, sf, g * 256, 16, false);
            tile_load(acc, sf, g * 256, 16, false);
        } else if mode == 6 {
            tile_load(ta, src, at, 136, false);
            tile_load(tb, src, at, 136, true);
        }
        tile_mma(acc, ta, tb);
    }
    tile_store(acc, out, group_id().x * 1024 + g * 256, 16, false);
    if filler[t % 4] != 0 {
        out[0] = 1.0;
    }
}
