//! Decode attention (one query token per sequence) over a paged or contiguous KV cache,
//! in ggml's `FLASH_ATTN_EXT` conventions (`tests/fixtures/attention/README.md`),
//! split over the KV sequence:
//!
//! * `attn_decode_chunk`: grid `[n_chunks, n_kv_heads, n_seq]`; each workgroup scores
//!   one contiguous chunk of one sequence's tokens for the query heads of one KV head
//!   (GQA: each K/V row is read once per four query heads) and writes per query head
//!   the chunk's max `m`, sum `l = Σ exp(s − m)` and `acc[d] = Σ exp(s − m) v[d]`.
//! * `attn_decode_combine`: grid `[n_heads, n_seq]`; merges a sequence's chunks in chunk
//!   order (the fixed merge order), adds the head's sink to the denominator, normalizes.
//!
//! With `deterministic`, a sequence of at most `det_long` tokens is split into chunks of
//! 128 tokens starting at token 0, a longer one into chunks of 256: the rule reads the
//! sequence's own length only, so its result does not depend on the batch it is in, the
//! grid, or the page layout. A workgroup takes one 128-token chunk or two consecutive
//! ones (`chunk_tokens` > 128), with the same bits either way (each chunk's softmax and V
//! sums are its own), so the runtime sizes the grid from the work without changing
//! results; a 256-token chunk is one workgroup's, or, in the `long_pairs` variant, one of
//! two in a 512-token workgroup with the same bits (the runtime takes that variant where
//! every sequence of a deterministic launch is long and K is staged). Otherwise the caller chooses
//! `chunk_tokens` (≤ 512 with `async_k`, ≤ 256 without) from the work and the device,
//! one chunk per workgroup.
//! `paged` selects the in-kernel block-table read (`block_table[b][t / page_size]`);
//! without it sequence b owns pages `b·pages_per_seq …` in order.

use onekernel_macros::kernel;

/// Scores, softmax numerator and weighted V of one chunk (see the module docs).
///
/// K and V are memory images of the cache as little-endian 32-bit words; `k_type` /
/// `v_type` give their formats independently: 0 `f32`, 1 `f16`, 2 `bf16`, 3 `q8_0`
/// (per 32 elements: f16 scale `d` + 32 × i8, value `d·q`), 4 `q4_0` (f16 `d` + 16 bytes;
/// element j < 16 is the low nibble of byte j, j ≥ 16 the high nibble of byte j − 16;
/// value `d·(nibble − 8)`). Every format widens exactly to f32, so results are those
/// over the stored values. The formats are push constants: a uniform branch per element
/// costs little next to the loads, and 25 format pairs as specializations would multiply
/// every backend's variants.
///
/// Work split (docs/PERFORMANCE.md): with `async_k` (the variant the runtime picks
/// where `async_copy` is truly asynchronous) K rows are staged in shared memory, f16
/// tiles of 64 tokens copied straight into two buffers, the next tile while this one is
/// scored, and a fast-mode workgroup takes up to 512 tokens; without it the rows are read where
/// they lie, which keeps the workgroup's shared memory small (9 KiB) for drivers that
/// size residency by it, and a workgroup takes up to 256 tokens. Then eight
/// invocations share a token, each dotting one eighth of the dimensions against the query slice it holds in
/// registers, for four query heads at once, and the eight partial dots are added in
/// slice order. V is read row by row, one 16-byte quad (eight f16 dimensions) per
/// invocation, eight rows in flight beside the eight in use (the first eight requested
/// before the softmax); the `128 / (D/8)` token groups' partial sums are added in group
/// order. Staging moves data only, so both `async_k` variants give the same bits for the
/// same chunks (fast chunks of more than 256 tokens are the staged variant's alone).
#[kernel(workgroup = 128, variants(paged = [false, true], deterministic = [false, true], async_k = [false, true], long_pairs = [false, true]))]
pub fn attn_decode_chunk(
    #[len(num_groups().z * n_heads * head_dim)] q: &[f32],
    #[len((n_kv_heads * select(k_type == 0, head_dim * 4, select(k_type <= 2, head_dim * 2, head_dim / 32 * select(k_type == 3, 34, 18))) + 3) / 4)]
    k: &[u32],
    #[len((n_kv_heads * select(v_type == 0, head_dim * 4, select(v_type <= 2, head_dim * 2, head_dim / 32 * select(v_type == 3, 34, 18))) + 3) / 4)]
    v: &[u32],
    #[len(select(paged, num_groups().z * pages_per_seq, 1))] block_table: &[i32],
    #[len(num_groups().z)] kv_len: &[u32],
    #[len(select(has_mask != 0, num_groups().z * pages_per_seq * page_size, 1))] mask: &[f16],
    #[len(num_groups().z * n_heads * n_chunks)] part_m: &mut [f32],
    #[len(num_groups().z * n_heads * n_chunks)] part_l: &mut [f32],
    #[len(num_groups().z * n_heads * n_chunks * head_dim)] part_acc: &mut [f32],
    #[push] n_heads: u32,
    #[push] n_kv_heads: u32,
    #[push] page_size: u32,
    #[push] pages_per_seq: u32,
    #[push] n_chunks: u32,
    #[push] chunk_tokens: u32,
    #[push] scale: f32,
    #[push] softcap: f32,
    #[push] max_bias: f32,
    #[push] has_mask: u32,
    #[push] k_type: u32,
    #[push] v_type: u32,
    #[push] det_long: u32,
    #[spec(default = 128)] head_dim: u32,
) {
    // Tokens a workgroup holds at most (`cap`): 512 in the fast `async_k` variant, so
    // that a workgroup's fixed costs (the first K tile, the softmax's barriers, the V
    // pass's first rows and its group sums, the partial writes) are paid once per 512
    // tokens where the caller asks for such chunks; 256 without `async_k`, whose shared
    // memory stays 9 KiB (below), and in deterministic mode, whose workgroups hold one or
    // two 128-token chunks: there the longer arrays and the softmax's sixteen values per
    // lane cost CUDA 7–8 % (measured on the H200, docs/PERFORMANCE.md).
    // [4 heads][cap tokens]: scores, head-major, so that the softmax's 32 invocations
    // per head read 32 consecutive tokens per load without bank conflicts; then the
    // softmax numerators [cap tokens][4 heads], token-major, written by the softmax's
    // invocations from their registers, so that the V pass reads a token's four heads
    // with one 16-byte load.
    let scores = shared::<f32, { select(async_k, select(deterministic, 1024u32, 2048u32), 1024u32) }>();
    // The cache cell ((page·page_size + slot)·n_kv_heads + kvh) of each chunk token.
    let cells = shared::<u32, { select(async_k, select(deterministic, 256u32, 512u32), 256u32) }>();
    // With `async_k`: K tiles of up to 64 rows, `stride` words apart (see the staging
    // geometry below), in two buffers of `kbuf` words; after the last q·k pass the V
    // partial sums [groups][4 heads][head_dim] as f32 bits. Without it K is not staged
    // (the q·k pass reads its rows from memory) and the workgroup takes 9 KiB of shared
    // memory in all: NVIDIA's Vulkan driver sizes residency by it (one workgroup of
    // 30 KiB per SM, two of 17.5 KiB; docs/PERFORMANCE.md). `async_k` (CUDA, whose
    // occupancy its registers bound at four workgroups) takes 52 KiB in fast mode, past
    // CUDA's 48 KiB of static shared memory: the generated code keeps this array in
    // dynamic shared memory (docs/CODEGEN.md); 47 KiB in deterministic mode.
    let ktile = shared::<u32, { select(async_k, 8704u32, 1u32) }>();
    // q·k partials [4 heads][`ptile` tokens][8 slices]; after the last tile the
    // softmax's per-lane values (words 0–127), then, without `async_k`, the V partial
    // sums [groups][4 heads][head_dim], as many groups at a time as fit (`vgroups`).
    let part = shared::<f32, { select(async_k, 2048u32, 1024u32) }>();
    // Bytes of one `[head_dim]` row in format `fmt`.
    let row_bytes =
        |fmt: u32| -> u32 { select(fmt == 0, head_dim * 4, select(fmt <= 2, head_dim * 2, head_dim / 32 * select(fmt == 3, 34u32, 18u32))) };
    // Element d of the row at byte `row` of image `w` in format `fmt`.
    let elem = |w: &[u32], row: u32, d: u32, fmt: u32| -> f32 {
        let mut x = 0.0;
        if fmt == 0 {
            x = f32::from_bits(w[row / 4 + d]);
        } else if fmt <= 2 {
            let o = row + 2 * d;
            let bits = (w[o / 4] >> ((o % 4) * 8)) & 65535;
            x = select(fmt == 1, f16_bits_to_f32(bits), f32::from_bits(bits << 16));
        } else {
            // Blocks start at even bytes, so the f16 scale never straddles a word.
            let o = row + (d / 32) * select(fmt == 3, 34u32, 18u32);
            let sc = f16_bits_to_f32((w[o / 4] >> ((o % 4) * 8)) & 65535);
            let j = d % 32;
            let mut qv = 0i32;
            if fmt == 3 {
                let at = o + 2 + j;
                let raw = (w[at / 4] >> ((at % 4) * 8)) & 255;
                qv = (raw as i32) - select(raw >= 128, 256, 0);
            } else {
                let at = o + 2 + j % 16;
                let byte = (w[at / 4] >> ((at % 4) * 8)) & 255;
                qv = (select(j < 16, byte & 15, byte >> 4) as i32) - 8;
            }
            x = sc * (qv as f32);
        }
        x
    };
    let c = group_id().x;
    let kvh = group_id().y;
    let b = group_id().z;
    let t0 = local_id().x;
    // V roles (below): dimensions [u·vd, u·vd + vd) of the row (one 16-byte quad of f16,
    // or one pair of elements of the other formats), token group g of `groups`.
    let f16_v = v_type == 1 && head_dim % 8 == 0;
    let vd = select(f16_v, 8u32, 2u32);
    let units = head_dim / vd;
    let groups = WORKGROUP_X / units;
    // Deterministic mode splits a sequence of at most `det_long` tokens into 128-token
    // chunks (`split`): two per workgroup where `chunk_tokens` > 128 asks for them and the
    // V pass has a token group for each (not at one group: D > 128 in a format other than
    // f16), else one. A longer sequence takes one 256-token chunk per workgroup, the fast
    // path's shape: the rule reads only the sequence's own length, so it stays
    // batch-invariant. Fast: one chunk of `chunk_tokens`.
    let len = kv_len[b];
    let split = deterministic && len <= det_long;
    let per = select(split && chunk_tokens > 128 && groups >= 2, 2u32, 1u32);
    let cap = select(async_k && !deterministic, 512u32, 256u32);
    // `long_pairs` (with `async_k`, in the fast code, whose workgroups hold 512 tokens):
    // a workgroup's 512 tokens are two 256-token chunks, partial rows 2c and 2c + 1, each
    // with its own softmax and with its V rows split among all the token groups as in a
    // workgroup of one 256-token chunk: the same bits as the deterministic split's long
    // chunks, at the fast mode's tokens per workgroup. The runtime takes it for
    // deterministic launches whose sequences are all long. Only where a chunk's groups
    // take whole blocks of eight V rows (at most 32 groups: D ≥ 32 for f16 V, D ≥ 8
    // otherwise), as the runtime's rule; elsewhere the variant is the fast one.
    let pairs = long_pairs && async_k && !deterministic && groups <= 32;
    let chunk = select(split, 128 * per, select(deterministic, 256u32, select(pairs, 512u32, min(chunk_tokens, cap))));
    // Two chunks' softmax in one workgroup: the second chunk is the lanes' values
    // e ≥ `e_half` (tokens 128 … or 256 …).
    let two = split || pairs;
    let e_half = select(deterministic, 4u32, 8u32);
    let start = c * chunk;
    let end = min(start + chunk, len);
    let n = select(end > start, end - start, 0u32);
    let group = n_heads / n_kv_heads;
    let k_bytes = row_bytes(k_type);
    let v_bytes = row_bytes(v_type);
    // ALiBi (ggml): n2 = largest power of two ≤ n_heads.
    let mut n2 = 1u32;
    while n2 * 2 <= n_heads {
        n2 = n2 * 2;
    }
    let nf = n2 as f32;
    // The block table is read once per token, here; both passes use the cells.
    for i in (t0..n).step_by(WORKGROUP_X) {
        let t = start + i;
        let logical = b * pages_per_seq + t / page_size;
        let mut page = logical;
        if paged {
            page = block_table[logical] as u32;
        }
        cells[i] = (page * page_size + t % page_size) * n_kv_heads + kvh;
    }
    // Staging geometry. f16 rows with D % 16 = 0 move as 16-byte quads: a staged row is
    // D/2 + 4 words, its second half four words further, so the eight slices that one
    // 16-byte shared load serves hit 32 different banks and every quad stays 16-byte
    // aligned. Other rows cover `kw` words (two more when rows are not word aligned) at
    // an odd stride; their flat staging index is row · 2^kwl + word (no division).
    let f16_rows = k_type == 1 && head_dim % 16 == 0;
    let kw = select(k_bytes % 4 == 0, k_bytes / 4, k_bytes / 4 + 2);
    let stride = select(f16_rows, head_dim / 2 + 4, kw | 1);
    let mut kwl = 0u32;
    while (1u32 << kwl) < kw {
        kwl += 1;
    }
    // `async_k` (chosen where copies are truly asynchronous, CUDA): f16 tiles are
    // copied straight into two buffers, the next while this one is scored; rows of
    // other formats go through registers, sixteen words in flight per invocation.
    // Otherwise nothing is staged and a tile is the 32 tokens whose q·k partials
    // `part` holds.
    let quads = head_dim / 8;
    let copy_k = async_k && f16_rows;
    let kbuf = 4352u32;
    // Rows per tile at most (`part` holds their q·k partials). A power of two, so
    // per-tile indices are shifts and masks.
    let ptile = select(async_k, 64u32, 32u32);
    let mut tile = ptile;
    while async_k && tile * stride > kbuf {
        tile = tile / 2;
    }
    let mut tile_log = 0u32;
    while (1u32 << tile_log) < tile {
        tile_log += 1;
    }
    // f16 staging roles: quad `qx / 4` of rows row0, row0 + rp, … (stored at word `qs`
    // of the staged row); invocations beyond rp · quads copy nothing.
    let rp = WORKGROUP_X / max(quads, 1u32);
    let row0 = t0 / max(quads, 1u32);
    let qx = 4 * (t0 % max(quads, 1u32));
    let qs = qx + select(qx >= head_dim / 4, 4u32, 0u32);
    // q·k roles: token j of 16, dimension slice s of 8 (`ds` dimensions each).
    let s = t0 % 8;
    let j = t0 / 8;
    let ds = (head_dim + 7) / 8;
    // Word of slice s in a staged f16 row (the second half is four words further).
    let slice_at = s * (head_dim / 16) + select(s >= 4, 4u32, 0u32);
    let u = t0 % units;
    let g = t0 / units;
    barrier();
    // The query heads sharing this KV head, four at a time: each K and V row is read
    // once per four heads.
    for h0 in (0..group).step_by(4u32) {
        let hn = min(4u32, group - h0);
        let head0 = kvh * group + h0;
        // Score slots from the chunk's last token to the next multiple of 32 hold −inf
        // (the score pass writes only the others), so the softmax reads whole runs of 32
        // tokens without guards. Set per block of heads: the last block's numerators
        // were stored token-major over them. The previous block's last reads of
        // `scores` are behind a barrier.
        if n + t0 % 32 < (n + 31) / 32 * 32 {
            scores[t0 / 32 * cap + n + t0 % 32] = f32::NEG_INFINITY;
        }
        let mut qr = [0.0; 128];
        for hh in 0..4u32 {
            if hh < hn {
                for e in 0..(head_dim + 7) / 8 {
                    let d = s * ds + e;
                    if d < head_dim {
                        qr[hh * 32 + e] = q[(b * n_heads + head0 + hh) * head_dim + d];
                    }
                }
            }
        }
        // Unstaged f16 K (no `async_k`): slice s of the tile's rows j and j + 16 (the
        // latter clamped to the tile's last row) sits in registers, the first tile's
        // requested now and each later one's while the tile before it is scored.
        let mut ka = [0u32; 16];
        let mut kb2 = [0u32; 16];
        // A slice is head_dim / 16 words: read as 16-byte loads where that is a
        // multiple of four (rows and slices then start at multiples of four words).
        let k_quads = head_dim % 64 == 0;
        if !async_k && f16_rows && j < n {
            let ga = cells[j] * (head_dim / 2) + s * (head_dim / 16);
            let gb = cells[min(j + 16, min(tile, n) - 1)] * (head_dim / 2) + s * (head_dim / 16);
            if k_quads {
                for w4 in 0..head_dim / 64 {
                    load_words(ka, 4 * w4, k, ga + 4 * w4, 4);
                    load_words(kb2, 4 * w4, k, gb + 4 * w4, 4);
                }
            } else {
                for w in 0..head_dim / 16 {
                    ka[w] = k[ga + w];
                    kb2[w] = k[gb + w];
                }
            }
        }
        // Asynchronous K: the first tile now, each later one while the tile before it is
        // scored.
        // Four rows per batch, unrolled: the copies' addresses do not wait on a loop.
        if copy_k {
            let lim = select(row0 < rp, min(tile, n), 0u32);
            for r0 in (row0..lim).step_by(4 * rp) {
                for uu in 0..4u32 {
                    let row = r0 + uu * rp;
                    if row < lim {
                        async_copy(ktile, row * stride + qs, k, cells[row] * (head_dim / 2) + qx, 4);
                    }
                }
            }
            async_commit();
        }
        for tb in (0..n).step_by(tile) {
            let tn = min(tile, n - tb);
            // This tile's buffer (the other one receives the next tile): tile i uses
            // buffer i % 2. Computed from `tb` rather than toggled across iterations, so
            // that the compiler sees a multiple of `kbuf` and keeps the q·k pass's
            // 16-byte shared loads (a toggled offset cost 13 of its 131 instructions).
            let kb = select(copy_k, ((tb >> tile_log) & 1u32) * kbuf, 0u32);
            if copy_k {
                if tb + tile < n {
                    let tb2 = tb + tile;
                    let lim = select(row0 < rp, min(tile, n - tb2), 0u32);
                    for r0 in (row0..lim).step_by(4 * rp) {
                        for uu in 0..4u32 {
                            let row = r0 + uu * rp;
                            if row < lim {
                                async_copy(ktile, kbuf - kb + row * stride + qs, k, cells[tb2 + row] * (head_dim / 2) + qx, 4);
                            }
                        }
                    }
                    async_commit();
                    async_wait(1);
                } else {
                    async_wait(0);
                }
            } else if async_k && !f16_rows {
                let total = tn << kwl;
                for base in (0..total).step_by(16 * WORKGROUP_X) {
                    let mut r = [0u32; 16];
                    for uu in 0..16u32 {
                        let idx = base + uu * WORKGROUP_X + t0;
                        let w = idx & ((1u32 << kwl) - 1);
                        if idx < total && w < kw {
                            let row = cells[tb + (idx >> kwl)] * k_bytes;
                            if w < (row % 4 + k_bytes + 3) / 4 {
                                r[uu] = k[row / 4 + w];
                            }
                        }
                    }
                    for uu in 0..16u32 {
                        let idx = base + uu * WORKGROUP_X + t0;
                        let w = idx & ((1u32 << kwl) - 1);
                        if idx < total && w < kw {
                            ktile[(idx >> kwl) * stride + w] = r[uu];
                        }
                    }
                }
            }
            barrier();
            if f16_rows {
                // f16: two tokens per pass (j and j + 16), so both rows' shared loads are
                // in flight before the first product; the second is clamped to the
                // tile's last row (a repeat that is not stored).
                for sp in (0..tn).step_by(32u32) {
                    let ja = sp + j;
                    if ja < tn {
                        let jb = ja + 16;
                        let sa = kb + ja * (head_dim / 2 + 4) + slice_at;
                        let sb = kb + min(jb, tn - 1) * (head_dim / 2 + 4) + slice_at;
                        // Unstaged tiles are one pass of 32 rows, already in registers;
                        // staged slices are read as 16-byte loads where rows and slices
                        // start at multiples of four words (stated: nvcc does not always
                        // prove it, and split loads cost the q·k loop 12 instructions).
                        if async_k {
                            if k_quads {
                                for w4 in 0..head_dim / 64 {
                                    load_words(ka, 4 * w4, ktile, sa + 4 * w4, 4);
                                    load_words(kb2, 4 * w4, ktile, sb + 4 * w4, 4);
                                }
                            } else {
                                for w in 0..head_dim / 16 {
                                    ka[w] = ktile[sa + w];
                                    kb2[w] = ktile[sb + w];
                                }
                            }
                        }
                        let mut da = [0.0; 4];
                        let mut db = [0.0; 4];
                        for w in 0..head_dim / 16 {
                            let wa = ka[w];
                            let wb = kb2[w];
                            let alo = f16_bits_to_f32(wa & 65535);
                            let ahi = f16_bits_to_f32(wa >> 16);
                            let blo = f16_bits_to_f32(wb & 65535);
                            let bhi = f16_bits_to_f32(wb >> 16);
                            for hh in 0..4u32 {
                                da[hh] = fma(qr[hh * 32 + 2 * w + 1], ahi, fma(qr[hh * 32 + 2 * w], alo, da[hh]));
                                db[hh] = fma(qr[hh * 32 + 2 * w + 1], bhi, fma(qr[hh * 32 + 2 * w], blo, db[hh]));
                            }
                        }
                        for hh in 0..4u32 {
                            part[(hh * ptile + ja) * 8 + s] = da[hh];
                        }
                        if jb < tn {
                            for hh in 0..4u32 {
                                part[(hh * ptile + jb) * 8 + s] = db[hh];
                            }
                        }
                    }
                }
                // Unstaged: the next tile's rows, in flight during this tile's scores.
                let t2 = tb + tile;
                if !async_k && t2 + j < n {
                    let ga = cells[t2 + j] * (head_dim / 2) + s * (head_dim / 16);
                    let gb = cells[t2 + min(j + 16, min(tile, n - t2) - 1)] * (head_dim / 2) + s * (head_dim / 16);
                    if k_quads {
                        for w4 in 0..head_dim / 64 {
                            load_words(ka, 4 * w4, k, ga + 4 * w4, 4);
                            load_words(kb2, 4 * w4, k, gb + 4 * w4, 4);
                        }
                    } else {
                        for w in 0..head_dim / 16 {
                            ka[w] = k[ga + w];
                            kb2[w] = k[gb + w];
                        }
                    }
                }
            } else {
                for sp in (0..tn).step_by(16u32) {
                    let jj = sp + j;
                    if jj < tn {
                        let at = jj * stride;
                        let mut dots = [0.0; 4];
                        let off = (cells[tb + jj] * k_bytes) % 4;
                        for e in 0..(head_dim + 7) / 8 {
                            let d = s * ds + e;
                            if d < head_dim {
                                let mut x = 0.0;
                                if !async_k {
                                    // Unstaged: the element straight from memory.
                                    x = elem(k, cells[tb + jj] * k_bytes, d, k_type);
                                } else if k_type == 0 {
                                    x = f32::from_bits(ktile[at + d]);
                                } else if k_type <= 2 {
                                    let o = off + 2 * d;
                                    let bits = (ktile[at + o / 4] >> ((o % 4) * 8)) & 65535;
                                    x = select(k_type == 1, f16_bits_to_f32(bits), f32::from_bits(bits << 16));
                                } else {
                                    let o = off + (d / 32) * select(k_type == 3, 34u32, 18u32);
                                    let sc = f16_bits_to_f32((ktile[at + o / 4] >> ((o % 4) * 8)) & 65535);
                                    let jd = d % 32;
                                    let mut qv = 0i32;
                                    if k_type == 3 {
                                        let bo = o + 2 + jd;
                                        let raw = (ktile[at + bo / 4] >> ((bo % 4) * 8)) & 255;
                                        qv = (raw as i32) - select(raw >= 128, 256, 0);
                                    } else {
                                        let bo = o + 2 + jd % 16;
                                        let byte = (ktile[at + bo / 4] >> ((bo % 4) * 8)) & 255;
                                        qv = (select(jd < 16, byte & 15, byte >> 4) as i32) - 8;
                                    }
                                    x = sc * (qv as f32);
                                }
                                for hh in 0..4u32 {
                                    dots[hh] = fma(qr[hh * 32 + e], x, dots[hh]);
                                }
                            }
                        }
                        // All four heads are stored (a missing head's dot is 0 and never
                        // read): unguarded stores at fixed offsets from one address.
                        for hh in 0..4u32 {
                            part[(hh * ptile + jj) * 8 + s] = dots[hh];
                        }
                    }
                }
            }
            barrier();
            // Scores of the heads this block lacks (hn < 4) are zeros, so that the V
            // pass reads all four with one load.
            for idx in (t0..4 * tile).step_by(WORKGROUP_X) {
                let hh = idx >> tile_log;
                let jj = idx & (tile - 1);
                if jj < tn {
                    let i = tb + jj;
                    let mut sc = 0.0;
                    if hh < hn {
                        let mut dot = part[(hh * ptile + jj) * 8];
                        for s2 in 1..8u32 {
                            dot += part[(hh * ptile + jj) * 8 + s2];
                        }
                        let h = head0 + hh;
                        sc = dot * scale;
                        if softcap > 0.0 {
                            sc = softcap * tanh(sc / softcap);
                        }
                        if has_mask != 0 {
                            let slope_lo = exp2(-(max_bias / nf) * ((h + 1) as f32));
                            let slope_hi = exp2(-(max_bias / 2.0 / nf) * ((2 * (h - min(h, n2)) + 1) as f32));
                            let slope = select(max_bias > 0.0, select(h < n2, slope_lo, slope_hi), 1.0);
                            sc = fma(slope, mask[b * pages_per_seq * page_size + start + i], sc);
                        }
                    }
                    scores[hh * cap + i] = sc;
                }
            }
        }
        // The softmax and the V pass treat each deterministic 128-token chunk on its own
        // (`n_sub` of them, partial rows `c_first`, `c_first + 1`); a fast workgroup's tokens
        // are one chunk. A chunk's V rows are split among `gpc` token groups in order: group
        // g sums rows [ilo, ihi) of chunk `vc`, the chunk's groups are added in group order,
        // so a chunk's sums are the same whether its workgroup holds one chunk or two (the
        // groups past `per · gpc` idle).
        let n_sub = select(split, (n + 127) / 128, select(pairs, (n + 255) / 256, 1u32));
        let c_first = select(split, c * per, select(pairs, 2 * c, c));
        let gpc = select(split, max(groups / 2, 1u32), groups);
        let vc = g / gpc;
        let clo = select(split, min(vc * 128, n), 0u32);
        let clen = select(split, min(n - clo, 128u32), select(pairs, min(n, 256u32), n));
        let span = (clen + gpc - 1) / gpc;
        let ilo = clo + min((g - vc * gpc) * span, clen);
        let ihi = min(ilo + span, clo + clen);
        let v_active = g < groups && vc < per;
        // `pairs` with a second chunk: each group takes its rows of the first chunk,
        // [ilo, ihi), then those of the second (below), the first chunk's sums set aside
        // in the free K tiles at `abase`, [groups][4 heads][head_dim], after the second's.
        let pair_b = pairs && n > 256;
        let abase = 4 * groups * head_dim;
        // (Computed here rather than before the head loop: live through the q·k pass they
        // cost registers where the CUDA variants have none to spare.)
        // The first eight rows' f16 V quads are requested now and arrive during the
        // softmax.
        // Rows past the group's last are clamped to it here and below: those loads repeat
        // a cached row and are never used, so the hot loop has no guards.
        let mut vw = [0u32; 32];
        if v_active && f16_v && ilo < ihi {
            for uu in 0..8u32 {
                let at = cells[min(ilo + uu, ihi - 1)] * (head_dim / 2) + 4 * u;
                load_words(vw, 4 * uu, v, at, 4);
            }
        }
        barrier();
        // Softmax per head: 32 invocations per head, tokens lane, lane + 32, … each (held
        // in registers between the two passes); their maxima and sums are combined in
        // lane order (three barriers, not a tree per reduction). Runs of 32 tokens past
        // the last are skipped (a uniform test); the slots of the last run past the last
        // token are −inf: they leave the maximum alone and add zeros to the sum, so the
        // bits do not depend on `cap`. Lane l holds tokens l + 32e rather than
        // `cap/32`·l + e so that the token-major stores of the numerators below hit
        // eight banks per store instead of one (measured on the H200: the 32-way
        // conflicts of 8l + e cost CUDA 8 % at 128 × 8192).
        let sh = t0 / 32;
        let lane = t0 % 32;
        let srow = sh * cap + lane;
        let mut sv = [0.0; 16];
        for e in 0..select(async_k && !deterministic, 16u32, 8u32) {
            if 32 * e < n {
                sv[e] = scores[srow + 32 * e];
            }
        }
        // A workgroup's second chunk (`two`) is its lanes' values e ≥ `e_half` (tokens
        // 128 … or 256 …): its maximum and sum are `mx2` / `ls2`, the first chunk's `mx` /
        // `ls`.
        let mut mx = f32::NEG_INFINITY;
        let mut mx2 = f32::NEG_INFINITY;
        if sh < hn {
            for e in 0..select(async_k && !deterministic, 16u32, 8u32) {
                if 32 * e < n {
                    if two && e >= e_half {
                        mx2 = max(mx2, sv[e]);
                    } else {
                        mx = max(mx, sv[e]);
                    }
                }
            }
        }
        // The q·k partials are read (the last score pass is behind a barrier): the lanes'
        // maxima and sums go to `part` (the second chunk's 128 words further).
        part[t0] = mx;
        if two {
            part[WORKGROUP_X + t0] = mx2;
        }
        barrier();
        let mut m = f32::NEG_INFINITY;
        let mut m2 = f32::NEG_INFINITY;
        for l2 in 0..32u32 {
            m = max(m, part[sh * 32 + l2]);
        }
        if two {
            for l2 in 0..32u32 {
                m2 = max(m2, part[WORKGROUP_X + sh * 32 + l2]);
            }
        }
        let mut ls = 0.0;
        let mut ls2 = 0.0;
        if sh < hn {
            for e in 0..select(async_k && !deterministic, 16u32, 8u32) {
                if 32 * e < n {
                    let second = two && e >= e_half;
                    let sc = sv[e];
                    let p = select(sc == f32::NEG_INFINITY, 0.0, exp(sc - select(second, m2, m)));
                    if second {
                        ls2 += p;
                    } else {
                        ls += p;
                    }
                    sv[e] = p;
                }
            }
        }
        // Every invocation has read its scores (before the barrier above), so the
        // numerators are stored token-major over them for the V pass: four heads per
        // 16-byte load. Heads past the block's last keep their zeros; nothing reads the
        // slots past the chunk's last token before they are set to −inf again.
        for e in 0..select(async_k && !deterministic, 16u32, 8u32) {
            if 32 * e < n {
                scores[(lane + 32 * e) * 4 + sh] = sv[e];
            }
        }
        barrier();
        part[t0] = ls;
        if two {
            part[WORKGROUP_X + t0] = ls2;
        }
        barrier();
        if lane == 0 && sh < hn {
            for k in 0..n_sub {
                let mut l = 0.0;
                for l2 in 0..32u32 {
                    l += part[k * WORKGROUP_X + sh * 32 + l2];
                }
                let row = (b * n_heads + head0 + sh) * n_chunks + c_first + k;
                part_m[row] = select(k == 0, m, m2);
                part_l[row] = l;
            }
        }
        barrier();
        // [4 heads][8 dimensions]; the other formats use the first two of each head.
        let mut acc = [0.0; 32];
        let mut lo = ilo;
        let mut hi = ihi;
        // A second run where there is a second chunk, in the `long_pairs` variant only. The
        // bound goes through a `let`: inline, a bound of variant axes gets the unroll hint,
        // and nvcc unrolled the two runs (+13 % at 128 × 8192). The other variants' one run
        // is peeled: NVIDIA's Vulkan compiler ran it as a loop of one trip 5–7 % slower in
        // deterministic mode than the pass without a loop (H200).
        let runs = select(long_pairs && async_k && !deterministic, 2u32, 1u32);
        #[peel_single_trip]
        for half in 0..runs {
            if half == 1 && !pair_b {
                lo = hi;
            }
            if half == 1 && pair_b {
                // The second chunk's rows: group g's share of tokens [256, n), the first
                // eight requested before the first chunk's sums are set aside.
                let clen_b = n - 256;
                let span_b = (clen_b + gpc - 1) / gpc;
                lo = 256 + min(g * span_b, clen_b);
                hi = min(lo + span_b, 256 + clen_b);
                if v_active && f16_v && lo < hi {
                    for uu in 0..8u32 {
                        let at = cells[min(lo + uu, hi - 1)] * (head_dim / 2) + 4 * u;
                        load_words(vw, 4 * uu, v, at, 4);
                    }
                }
                if v_active {
                    for hh in 0..4u32 {
                        for e in 0..8u32 {
                            if e < vd {
                                ktile[abase + (g * 4 + hh) * head_dim + vd * u + e] = acc[8 * hh + e].to_bits();
                            }
                            acc[8 * hh + e] = 0.0;
                        }
                    }
                }
            }
            if v_active {
                if f16_v {
                    // Whole blocks of eight rows: the next eight rows' quads are in flight
                    // while these eight are used; each quad gives eight dimensions for four
                    // heads.
                    let full = lo + (hi - lo) / 8 * 8;
                    for i0 in (lo..full).step_by(8u32) {
                        let mut nx = [0u32; 32];
                        for uu in 0..8u32 {
                            let at = cells[min(i0 + 8 + uu, hi - 1)] * (head_dim / 2) + 4 * u;
                            load_words(nx, 4 * uu, v, at, 4);
                        }
                        for uu in 0..8u32 {
                            let i = i0 + uu;
                            let mut pw = [0.0; 4];
                            load_words(pw, 0, scores, i * 4, 4);
                            for e in 0..4u32 {
                                let x0 = f16_bits_to_f32(vw[4 * uu + e] & 65535);
                                let x1 = f16_bits_to_f32(vw[4 * uu + e] >> 16);
                                for hh in 0..4u32 {
                                    let p = pw[hh];
                                    acc[8 * hh + 2 * e] = fma(p, x0, acc[8 * hh + 2 * e]);
                                    acc[8 * hh + 2 * e + 1] = fma(p, x1, acc[8 * hh + 2 * e + 1]);
                                }
                            }
                        }
                        for uu in 0..32u32 {
                            vw[uu] = nx[uu];
                        }
                    }
                    // The last (hi − full) < 8 rows, already in `vw`.
                    for uu in 0..8u32 {
                        let i = full + uu;
                        if i < hi {
                            let mut pw = [0.0; 4];
                            load_words(pw, 0, scores, i * 4, 4);
                            for e in 0..4u32 {
                                let x0 = f16_bits_to_f32(vw[4 * uu + e] & 65535);
                                let x1 = f16_bits_to_f32(vw[4 * uu + e] >> 16);
                                for hh in 0..4u32 {
                                    let p = pw[hh];
                                    acc[8 * hh + 2 * e] = fma(p, x0, acc[8 * hh + 2 * e]);
                                    acc[8 * hh + 2 * e + 1] = fma(p, x1, acc[8 * hh + 2 * e + 1]);
                                }
                            }
                        }
                    }
                } else {
                    for i0 in (lo..hi).step_by(8u32) {
                        for uu in 0..8u32 {
                            let i = i0 + uu;
                            if i < hi {
                                let row = cells[i] * v_bytes;
                                let x0 = elem(v, row, 2 * u, v_type);
                                let x1 = elem(v, row, 2 * u + 1, v_type);
                                for hh in 0..4u32 {
                                    let p = scores[i * 4 + hh];
                                    acc[8 * hh] = fma(p, x0, acc[8 * hh]);
                                    acc[8 * hh + 1] = fma(p, x1, acc[8 * hh + 1]);
                                }
                            }
                        }
                    }
                }
            }
        }
        // The token groups' partial sums are added in group order, `vgroups` groups at a
        // time: all of them in the free K tiles with `async_k`, otherwise as many as
        // `part` holds (two at D = 128). Each invocation folds up to eight (head,
        // dimension) sums (4 · head_dim ≤ 8 · WORKGROUP_X since head_dim ≤ 256).
        // `n_vc` chunks hold tokens; with two, the first chunk's sums (groups 0 … gpc − 1)
        // are written as soon as they are complete and `sum` restarts for the second, so
        // the pair costs no second set of sums.
        let vgroups = max(1u32, min(groups, select(async_k, 8704u32, 1024u32) / (4 * head_dim)));
        let n_vc = select(split, max(min(per, n_sub), 1u32), select(pair_b, 2u32, 1u32));
        let used_groups = min(groups, n_vc * gpc);
        let mut sum = [0.0; 8];
        for g0 in (0..used_groups).step_by(vgroups) {
            if g >= g0 && g < g0 + vgroups && v_active {
                for hh in 0..4u32 {
                    if hh < hn {
                        for e in 0..8u32 {
                            if e < vd {
                                let at = ((g - g0) * 4 + hh) * head_dim + vd * u + e;
                                if async_k {
                                    ktile[at] = acc[8 * hh + e].to_bits();
                                } else {
                                    part[at] = acc[8 * hh + e];
                                }
                            }
                        }
                    }
                }
            }
            barrier();
            for r in 0..8u32 {
                let idx = t0 + r * WORKGROUP_X;
                if idx < hn * head_dim {
                    let hh = idx / head_dim;
                    let d = idx % head_dim;
                    // `pair_b`: the first chunk's sums, set aside during the V pass.
                    if pair_b {
                        let mut sa = 0.0;
                        for g2 in 0..groups {
                            let x = f32::from_bits(ktile[abase + (g2 * 4 + hh) * head_dim + d]);
                            sa = select(g2 == 0, x, sa + x);
                        }
                        part_acc[((b * n_heads + head0 + hh) * n_chunks + c_first) * head_dim + d] = sa;
                    }
                    for g2 in g0..min(g0 + vgroups, used_groups) {
                        let at = ((g2 - g0) * 4 + hh) * head_dim + d;
                        let mut x = 0.0;
                        if async_k {
                            x = f32::from_bits(ktile[at]);
                        } else {
                            x = part[at];
                        }
                        // A chunk's first group's sum is taken as it is (0 + x would turn
                        // −0 into +0).
                        sum[r] = select(g2 == 0 || (split && g2 == gpc), x, sum[r] + x);
                        if split && n_vc == 2 && g2 + 1 == gpc {
                            part_acc[((b * n_heads + head0 + hh) * n_chunks + c_first) * head_dim + d] = sum[r];
                        }
                    }
                }
            }
            // Also orders this head block's last shared reads before the next one's
            // staging.
            barrier();
        }
        for r in 0..8u32 {
            let idx = t0 + r * WORKGROUP_X;
            if idx < hn * head_dim && n_sub > 0 {
                part_acc[((b * n_heads + head0 + idx / head_dim) * n_chunks + c_first + n_vc - 1) * head_dim + idx % head_dim] = sum[r];
            }
        }
    }
}

/// Merges the chunks of each (sequence, head) and normalizes, in a fixed order.
///
/// The chunk weights `exp(m_c − max)` are computed once per chunk into shared memory
/// (blocks of 1024 chunks). Each invocation owns four dimensions (one 16-byte load per
/// chunk) and one of `128 / (D/4)` chunk lanes: a lane adds its contiguous share of a
/// block's chunks in chunk order, sixteen chunks in flight, and the lanes' sums are
/// added in lane order at the end. The order depends only on the number of chunks, so
/// a sequence's result does not depend on the batch.
///
/// With `early_loads` a lane's first sixteen chunks are requested before the maximum
/// (they do not depend on it), one dependent load fewer per invocation. It holds 64
/// more values across the maximum's barriers, which costs workgroups per SM, so the
/// runtime picks it for small launches only (docs/PERFORMANCE.md). Same bits either way.
#[kernel(workgroup = 128, variants(deterministic = [false, true], early_loads = [false, true]))]
pub fn attn_decode_combine(
    #[len(num_groups().y * n_heads * n_chunks)] part_m: &[f32],
    #[len(num_groups().y * n_heads * n_chunks)] part_l: &[f32],
    #[len(num_groups().y * n_heads * n_chunks * head_dim)] part_acc: &[f32],
    #[len(num_groups().y)] kv_len: &[u32],
    #[len(select(has_sinks != 0, n_heads, 1))] sinks: &[f32],
    #[len(num_groups().y * n_heads * head_dim)] out: &mut [f32],
    #[push] n_heads: u32,
    #[push] n_chunks: u32,
    #[push] chunk_tokens: u32,
    #[push] has_sinks: u32,
    #[push] det_long: u32,
    #[spec(default = 128)] head_dim: u32,
) {
    let weights = shared::<f32, 1024>();
    let sums = shared::<f32, 1024>();
    let h = group_id().x;
    let b = group_id().y;
    let t0 = local_id().x;
    // The chunk kernels' rule: deterministic, 128-token chunks up to `det_long` tokens,
    // 256 beyond; otherwise `chunk_tokens` as the runtime checked it for the chunk kernel
    // it launched (at most 512 for `attn_decode_chunk`, any length for the tensor cores').
    let chunk = select(deterministic, select(kv_len[b] <= det_long, 128u32, 256u32), max(chunk_tokens, 1u32));
    let used = min((kv_len[b] + chunk - 1) / chunk, n_chunks);
    let row = (b * n_heads + h) * n_chunks;
    // Roles: dimensions [4·qd, 4·qd + 4), chunk lane cl of `lanes` (head_dim ≤ 256, so
    // lanes · head_dim ≤ 512 partial sums fit `weights` at the end).
    let units = (head_dim + 3) / 4;
    let lanes = WORKGROUP_X / units;
    let qd = t0 % units;
    let cl = t0 / units;
    // `early_loads`: the lane's first sixteen chunks of the first block, requested before
    // the maximum is known.
    let nb0 = min(1024u32, used);
    let span0 = (nb0 + lanes - 1) / lanes;
    let clo0 = min(cl * span0, nb0);
    let chi0 = min(clo0 + span0, nb0);
    let mut pa = [0.0; 64];
    if early_loads && cl < lanes {
        for e in 0..16u32 {
            if clo0 + e < chi0 {
                for x in 0..4u32 {
                    if 4 * qd + x < head_dim {
                        pa[4 * e + x] = part_acc[(row + clo0 + e) * head_dim + 4 * qd + x];
                    }
                }
            }
        }
    }
    let mut m_local = f32::NEG_INFINITY;
    for c in (t0..used).step_by(WORKGROUP_X) {
        m_local = max(m_local, part_m[row + c]);
    }
    let mut big = workgroup_max(m_local);
    let mut sink = f32::NEG_INFINITY;
    if has_sinks != 0 {
        sink = sinks[h];
    }
    big = max(big, sink);
    let mut total = 0.0;
    let mut acc = [0.0; 4];
    for blk in (0..used).step_by(1024u32) {
        let nb = min(1024u32, used - blk);
        for c in (t0..nb).step_by(WORKGROUP_X) {
            let mc = part_m[row + blk + c];
            weights[c] = select(mc == f32::NEG_INFINITY, 0.0, exp(mc - big));
            sums[c] = part_l[row + blk + c];
        }
        barrier();
        for c in 0..nb {
            total = fma(sums[c], weights[c], total);
        }
        if cl < lanes {
            let span = (nb + lanes - 1) / lanes;
            let clo = min(cl * span, nb);
            let chi = min(clo + span, nb);
            for c0 in (clo..chi).step_by(16u32) {
                // A fresh array per batch, so that without `early_loads` nothing is
                // carried from one batch to the next.
                let mut pb = [0.0; 64];
                if early_loads && blk == 0 && c0 == clo {
                    for e in 0..64u32 {
                        pb[e] = pa[e];
                    }
                } else {
                    for e in 0..16u32 {
                        if c0 + e < chi {
                            for x in 0..4u32 {
                                if 4 * qd + x < head_dim {
                                    pb[4 * e + x] = part_acc[(row + blk + c0 + e) * head_dim + 4 * qd + x];
                                }
                            }
                        }
                    }
                }
                for e in 0..16u32 {
                    if c0 + e < chi {
                        for x in 0..4u32 {
                            acc[x] = fma(pb[4 * e + x], weights[c0 + e], acc[x]);
                        }
                    }
                }
            }
        }
        barrier();
    }
    if cl < lanes {
        for x in 0..4u32 {
            if 4 * qd + x < head_dim {
                weights[cl * head_dim + 4 * qd + x] = acc[x];
            }
        }
    }
    barrier();
    if has_sinks != 0 {
        total += exp(sink - big);
    }
    let inv = recip(total);
    for d in (t0..head_dim).step_by(WORKGROUP_X) {
        let mut a = weights[d];
        for l2 in 1..lanes {
            a += weights[l2 * head_dim + d];
        }
        out[(b * n_heads + h) * head_dim + d] = a * inv;
    }
}
