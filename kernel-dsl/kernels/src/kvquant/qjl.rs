//! QJL (FORMATS.md §4): `block_qjl1_256` keys (256 sign bits of Π·k, bf16 ‖k‖; 34 bytes)
//! for head dimension 128 and a 128×256 projection Π (row-major `prj[i·256 + j]`).

use onekernel_macros::kernel;

/// Attention logits `score[h][t] = (√(π/2)/256)·‖k_t‖·Σ_j σ_tj·q_sketch[h][j]` with GQA
/// (`h_kv = h / (n_heads / n_kv_heads)`; K laid out `[n_kv_heads][n_tokens]`). With
/// `project = 0`, `q` is the pre-projected sketch `[n_heads][256]`; with `project = 1`
/// (mul_mv), `q` is the raw `[n_heads][128]` query and the sketch `Σ_i q_i·prj[i·256 + j]`
/// is computed once per workgroup, which equals `⟨dequantized k, q⟩`.
///
/// Work split (docs/KVQUANT.md, "Score kernel structure"): a workgroup builds, per query
/// head, the table of the 16 signed sums `±s[4p] ± s[4p+1] ± s[4p+2] ± s[4p+3]` of each
/// of the sketch's 64 nibble positions, then takes `tiles_per_group` tiles of 128 keys
/// of one KV head, each staged in shared memory with coalesced word loads (the next
/// requested while this one is scored); a key's sum is 64 table reads (per 32-bit word
/// of signs, its eight nibbles, then the words in order), one invocation per key.
///
/// `four_heads` (the variant the runtime picks for GQA) builds the tables of four query
/// heads per pass over the tiles; without it one head's, so the workgroup needs 8.5 KiB
/// of shared memory instead of 21 KiB, which NVIDIA's Vulkan driver sizes residency by
/// (docs/PERFORMANCE.md). Each head's sum is the same in both.
#[kernel(workgroup = 128, variants(four_heads = [false, true]))]
pub fn qjl_score(
    #[len(n_heads * select(project != 0, 128, 256))] q: &[f32],
    #[len((n_kv_heads * n_tokens * 34 + 3) / 4)] k: &[u32],
    #[len(select(project != 0, 32768, 1))] prj: &[f32],
    #[len(n_heads * n_tokens)] scores: &mut [f32],
    #[push] n_heads: u32,
    #[push] n_kv_heads: u32,
    #[push] n_tokens: u32,
    #[push] project: u32,
    #[push] tiles_per_group: u32,
) {
    // 128 keys of 34 bytes from a byte offset of 0 or 2, and the word past the last.
    // Before the first tile it holds the sketches of four heads [4][256] as f32 bits
    // (read only while the tables are built, which a barrier separates from the first
    // tile's stores): 4 KiB less shared memory, which NVIDIA's Vulkan driver sizes
    // residency by (docs/PERFORMANCE.md).
    let tile = shared::<u32, 1096>();
    // Each head's nibble table [64 positions][17] in its own array, so a lookup's
    // address is the nibble plus a constant. Positions are 17 entries apart, not 16 (the
    // 17th is never used): measured 7 % faster on the H200 with as many instructions
    // (docs/KVQUANT.md).
    let t0 = shared::<f32, 1088>();
    let t1 = shared::<f32, { select(four_heads, 1088u32, 1u32) }>();
    let t2 = shared::<f32, { select(four_heads, 1088u32, 1u32) }>();
    let t3 = shared::<f32, { select(four_heads, 1088u32, 1u32) }>();
    // Query heads per pass over the tiles.
    let per_pass = select(four_heads, 4u32, 1u32);
    let lid = local_id().x;
    let kvh = group_id().y;
    let ntiles = (n_tokens + 127) / 128;
    let tile0 = group_id().x * tiles_per_group;
    let tile_end = min(tile0 + tiles_per_group, ntiles);
    let group = n_heads / n_kv_heads;
    for h0 in (0..group).step_by(per_pass) {
        let hn = min(per_pass, group - h0);
        let head0 = kvh * group + h0;
        barrier();
        for i in (lid..hn * 256).step_by(WORKGROUP_X) {
            let h = head0 + i / 256;
            let j = i % 256;
            let mut s = 0.0;
            if project != 0 {
                for e in 0..128u32 {
                    s = fma(q[h * 128 + e], prj[e * 256 + j], s);
                }
            } else {
                s = q[h * 256 + j];
            }
            tile[i] = s.to_bits();
        }
        // The first tile's words, requested before the tables are built; later tiles
        // while the previous one is scored.
        let mut staged = [0u32; 9];
        let first0 = (kvh * n_tokens + tile0 * 128) * 34;
        let nw0 = (first0 + min(128u32, n_tokens - tile0 * 128) * 34 + 3) / 4 - first0 / 4;
        for u in 0..9u32 {
            let w = u * WORKGROUP_X + lid;
            staged[u] = 0u32;
            if w < nw0 {
                staged[u] = k[first0 / 4 + w];
            }
        }
        barrier();
        // Entry v of position p: sketch values 4p … 4p+3 added (bit set) or subtracted;
        // tables of heads past the group's last are zeros.
        for i in (lid..1024u32).step_by(WORKGROUP_X) {
            let v = i % 16;
            let at = 4 * (i / 16);
            let mut e = [0.0; 4];
            for hh in 0..4u32 {
                if hh < hn {
                    let mut acc = 0.0;
                    for b in 0..4u32 {
                        let x = f32::from_bits(tile[hh * 256 + at + b]);
                        acc = select(((v >> b) & 1) == 1, acc + x, acc - x);
                    }
                    e[hh] = acc;
                }
            }
            let te = (i / 16) * 17 + v;
            t0[te] = e[0];
            if four_heads {
                t1[te] = e[1];
                t2[te] = e[2];
                t3[te] = e[3];
            }
        }
        for ti in tile0..tile_end {
            let tb = ti * 128;
            let tn = min(128u32, n_tokens - tb);
            let off = ((kvh * n_tokens + tb) * 34) % 4;
            // Words a full tile may touch; the staged words past this tile's keys are
            // zeros (zero-filled when loaded). Every tile's window holds the first `full`
            // words, so those stores need no test (as in `turbo_score`).
            let nwt = (off + 128 * 34) / 4 + 2;
            let full = 32u32 * 34 + 2;
            barrier();
            for u in 0..9u32 {
                let w = u * WORKGROUP_X + lid;
                if (u + 1) * WORKGROUP_X <= full || w < nwt {
                    tile[w] = staged[u];
                }
            }
            barrier();
            if ti + 1 < tile_end {
                let first = (kvh * n_tokens + tb + 128) * 34;
                let nwn = (first + min(128u32, n_tokens - tb - 128) * 34 + 3) / 4 - first / 4;
                for u in 0..9u32 {
                    let w = u * WORKGROUP_X + lid;
                    staged[u] = 0u32;
                    if w < nwn {
                        staged[u] = k[first / 4 + w];
                    }
                }
            }
            if lid < tn {
                let ro = off + lid * 34;
                let a = ro / 4;
                let s = (ro % 4) * 8;
                let mut w = [0u32; 8];
                for i in 0..8u32 {
                    w[i] = funnel_shr(tile[a + i], tile[a + i + 1], s);
                }
                let norm = f32::from_bits(((tile[(ro + 32) / 4] >> (((ro + 32) % 4) * 8)) & 65535) << 16);
                // One head (no GQA) reads one table; otherwise all four are read (zeros
                // past the group) and each head's sum kept.
                // Each 32-bit word's eight nibbles are summed on their own, then the
                // words in order: eight independent chains instead of one of 64.
                let mut acc = [0.0; 4];
                if !four_heads || hn == 1 {
                    for wi in 0..8u32 {
                        let mut s0 = 0.0;
                        for n in 0..8u32 {
                            s0 += t0[(wi * 8 + n) * 17 + ((w[wi] >> (4 * n)) & 15)];
                        }
                        acc[0] += s0;
                    }
                } else {
                    for wi in 0..8u32 {
                        let mut s = [0.0; 4];
                        for n in 0..8u32 {
                            // Each read spelled as table start plus nibble, which CUDA
                            // prints as a byte-offset read (docs/CODEGEN.md).
                            let at = (wi * 8 + n) * 17;
                            s[0] += t0[at + ((w[wi] >> (4 * n)) & 15)];
                            s[1] += t1[at + ((w[wi] >> (4 * n)) & 15)];
                            s[2] += t2[at + ((w[wi] >> (4 * n)) & 15)];
                            s[3] += t3[at + ((w[wi] >> (4 * n)) & 15)];
                        }
                        for hh in 0..4u32 {
                            acc[hh] += s[hh];
                        }
                    }
                }
                for hh in 0..4u32 {
                    if hh < hn {
                        scores[(head0 + hh) * n_tokens + tb + lid] = (0.004895758348888673 * norm) * acc[hh];
                    }
                }
            }
        }
    }
}

/// Dequantized keys `k̂_i = (√(π/2)/256)·‖k‖·Σ_j σ_j·prj[i·256 + j]` (the fallback path):
/// one workgroup per row, `[n_rows][128]` out.
#[kernel(workgroup = 128)]
pub fn qjl_get_rows(#[len((num_groups().x * 34 + 3) / 4)] k: &[u32], #[len(32768)] prj: &[f32], #[len(num_groups().x * 128)] rows: &mut [f32]) {
    let byte = |w: &[u32], o: u32| -> u32 { (w[o / 4] >> ((o % 4) * 8)) & 255 };
    let r = group_id().x;
    let base = r * 34;
    let norm = f32::from_bits(((k[(base + 32) / 4] >> (((base + 32) % 4) * 8)) & 65535) << 16);
    for i in (local_id().x..128u32).step_by(WORKGROUP_X) {
        let mut acc = 0.0;
        for b in 0..32u32 {
            let bits = byte(k, base + b);
            for s in 0..8u32 {
                let x = prj[i * 256 + b * 8 + s];
                acc = select(((bits >> s) & 1) == 1, acc + x, acc - x);
            }
        }
        rows[r * 128 + i] = (0.004895758348888673 * norm) * acc;
    }
}
