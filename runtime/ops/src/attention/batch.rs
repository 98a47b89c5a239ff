//! Batches built from sequences: random sequences in any format, and their packing
//! into one cache (contiguous, or paged with a shuffled block table), so that the same
//! sequence can be run alone and inside other batches.

use super::format::KvFormat;
use super::problem::DecodeProblem;
use onekernel_runtime::validate::splitmix;

/// A seeded SplitMix64 stream (fixed forever, like the validator's inputs).
#[derive(Clone, Debug)]
pub struct SeqRng(u64);

impl SeqRng {
    /// A stream from a seed.
    pub fn new(seed: u64) -> Self {
        SeqRng(seed)
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (splitmix(&mut self.0) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: u32) -> u32 {
        (((splitmix(&mut self.0) >> 32) * n as u64) >> 32) as u32
    }
}

/// Heads, formats and options shared by every sequence of a batch.
#[derive(Clone, Debug)]
pub struct BatchShape {
    /// D.
    pub head_dim: u32,
    /// Hq.
    pub n_heads: u32,
    /// Hkv.
    pub n_kv_heads: u32,
    /// K format.
    pub k_format: KvFormat,
    /// V format.
    pub v_format: KvFormat,
    /// Multiplies q·k.
    pub scale: f32,
    /// Logit softcap (0 = off).
    pub softcap: f32,
    /// ALiBi `max_bias` (0 = off).
    pub max_bias: f32,
    /// Whether the additive mask is applied.
    pub mask: bool,
    /// Per-head sinks.
    pub sinks: Option<Vec<f32>>,
    /// Elements of a V row where they differ from `head_dim` (MLA's 512 beside K's 576).
    pub v_head_dim: Option<u32>,
}

impl BatchShape {
    /// `n_heads` query heads over `n_kv_heads`, rows of `head_dim` in formats `k` / `v`,
    /// scale `1/√D`, no softcap, ALiBi, mask or sinks, V rows as long as K's.
    pub fn new(head_dim: u32, n_heads: u32, n_kv_heads: u32, k: KvFormat, v: KvFormat) -> Self {
        BatchShape {
            head_dim,
            n_heads,
            n_kv_heads,
            k_format: k,
            v_format: v,
            scale: 1.0 / (head_dim as f32).sqrt(),
            softcap: 0.0,
            max_bias: 0.0,
            mask: false,
            sinks: None,
            v_head_dim: None,
        }
    }
}

/// One sequence: its query and its tokens' K/V rows (`[len][Hkv]`, stored format).
#[derive(Clone, Debug)]
pub struct Sequence {
    /// `[Hq][D]` query.
    pub q: Vec<f32>,
    /// `[len][Hkv]` K rows in the shape's K format.
    pub k: Vec<u8>,
    /// `[len][Hkv]` V rows in the shape's V format.
    pub v: Vec<u8>,
    /// `[len]` mask values (f16-representable; −65504 masks a token).
    pub mask: Vec<f32>,
    /// Tokens.
    pub len: u32,
}

impl Sequence {
    /// A random sequence of `len` tokens: values uniform in [−1, 1) stored in the
    /// shape's formats, mask values in [−3, 0] with one token in 16 masked out.
    pub fn random(shape: &BatchShape, seed: u64, len: u32) -> Sequence {
        let mut r = SeqRng::new(seed);
        let d = shape.head_dim as usize;
        let dv = shape.v_head_dim.map_or(d, |x| x as usize);
        let rows = (len * shape.n_kv_heads) as usize;
        let row = |f: KvFormat, n: usize, r: &mut SeqRng| f.encode_row(&(0..n).map(|_| r.range(-1.0, 1.0) as f32).collect::<Vec<_>>());
        let q = (0..shape.n_heads as usize * d).map(|_| r.range(-1.0, 1.0) as f32).collect();
        let k = (0..rows).flat_map(|_| row(shape.k_format, d, &mut r)).collect();
        let v = (0..rows).flat_map(|_| row(shape.v_format, dv, &mut r)).collect();
        let h = |x: f32| onekernel_dsl::half::f16_to_f32(onekernel_dsl::half::f32_to_f16(x));
        let mask = (0..len).map(|_| if r.below(16) == 0 { -65504.0 } else { h(r.range(-3.0, 0.0) as f32) }).collect();
        Sequence { q, k, v, mask, len }
    }

    /// [`Sequence::random`] for each `(seed, len)`, in order, generated on up to
    /// `available_parallelism` threads: every sequence has its own generator, so the
    /// result does not depend on the thread count. Generation is most of a determinism
    /// grid point's host time (about 2 s for 32 sequences of up to 6144 tokens at D = 256
    /// in f32 on one core).
    pub fn random_many(shape: &BatchShape, specs: &[(u64, u32)]) -> Vec<Sequence> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, specs.len().max(1));
        // Thread i takes specs i, i + threads, …: lengths vary, so interleaving balances.
        let parts: Vec<Vec<(usize, Sequence)>> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads)
                .map(|i| {
                    scope.spawn(move || {
                        specs
                            .iter()
                            .enumerate()
                            .skip(i)
                            .step_by(threads)
                            .map(|(j, &(seed, len))| (j, Sequence::random(shape, seed, len)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        });
        let mut all: Vec<(usize, Sequence)> = parts.into_iter().flatten().collect();
        all.sort_by_key(|(j, _)| *j);
        all.into_iter().map(|(_, s)| s).collect()
    }
}

/// Packs `seqs` into one problem with pages of `page_size` tokens: contiguous (sequence
/// b owns pages `b·pages_per_seq …`) without `shuffle`, otherwise every logical page
/// gets a physical page from a seeded permutation and the kernel reads the table.
pub fn pack(shape: &BatchShape, seqs: &[&Sequence], page_size: u32, shuffle: Option<u64>) -> DecodeProblem {
    let (d, hkv) = (shape.head_dim as usize, shape.n_kv_heads as usize);
    let b = seqs.len();
    let max_len = seqs.iter().map(|s| s.len).max().unwrap_or(1);
    let pps = max_len.div_ceil(page_size) as usize;
    let n_pages = b * pps;
    let mut phys: Vec<usize> = (0..n_pages).collect();
    if let Some(seed) = shuffle {
        let mut r = SeqRng::new(seed);
        for i in (1..n_pages).rev() {
            phys.swap(i, r.below(i as u32 + 1) as usize);
        }
    }
    let p = page_size as usize;
    let dv = shape.v_head_dim.map_or(d, |x| x as usize);
    let (kt, vt) = (shape.k_format.row_bytes(d) * hkv, shape.v_format.row_bytes(dv) * hkv);
    let mut k = vec![0u8; n_pages * p * kt];
    let mut v = vec![0u8; n_pages * p * vt];
    let mut mask = vec![0.0f32; b * pps * p];
    for (s, sq) in seqs.iter().enumerate() {
        mask[s * pps * p..][..sq.len as usize].copy_from_slice(&sq.mask);
        for t in 0..sq.len as usize {
            let cell = phys[s * pps + t / p] * p + t % p;
            k[cell * kt..][..kt].copy_from_slice(&sq.k[t * kt..][..kt]);
            v[cell * vt..][..vt].copy_from_slice(&sq.v[t * vt..][..vt]);
        }
    }
    DecodeProblem {
        head_dim: shape.head_dim,
        n_heads: shape.n_heads,
        n_kv_heads: shape.n_kv_heads,
        page_size,
        pages_per_seq: pps as u32,
        kv_len: seqs.iter().map(|s| s.len).collect(),
        k_format: shape.k_format,
        v_format: shape.v_format,
        k,
        v,
        block_table: shuffle.map(|_| phys.iter().map(|&x| x as i32).collect()),
        q: seqs.iter().flat_map(|s| s.q.iter().copied()).collect(),
        scale: shape.scale,
        softcap: shape.softcap,
        max_bias: shape.max_bias,
        mask: shape.mask.then_some(mask),
        sinks: shape.sinks.clone(),
        v_head_dim: shape.v_head_dim,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_generated_in_parallel_equal_those_generated_one_by_one() {
        let shape = BatchShape {
            head_dim: 64,
            n_heads: 4,
            n_kv_heads: 2,
            k_format: KvFormat::F16,
            v_format: KvFormat::Q8_0,
            scale: 0.125,
            softcap: 0.0,
            max_bias: 0.0,
            mask: true,
            sinks: None,
            v_head_dim: None,
        };
        let specs: Vec<(u64, u32)> = (0..9).map(|i| (100 + i, 1 + 37 * i as u32)).collect();
        let many = Sequence::random_many(&shape, &specs);
        assert_eq!(many.len(), specs.len());
        for (s, &(seed, len)) in many.iter().zip(&specs) {
            let one = Sequence::random(&shape, seed, len);
            assert_eq!((s.len, &s.k, &s.v), (one.len, &one.k, &one.v), "seed {seed}");
            assert_eq!(
                s.q.iter().chain(&s.mask).map(|x| x.to_bits()).collect::<Vec<_>>(),
                one.q.iter().chain(&one.mask).map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
        // Negative control: another seed gives other rows.
        assert_ne!(many[1].k, Sequence::random(&shape, 999, specs[1].1).k);
        assert!(Sequence::random_many(&shape, &[]).is_empty());
    }
}
