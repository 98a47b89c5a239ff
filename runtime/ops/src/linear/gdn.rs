//! `gated_delta_net` calls: per-sequence states or a slot cache, fused or as the
//! unfused gather → kernel → scatter sequence.

use super::{check_count, check_slots, require, require_len, take_f32, LinearError, RowCopy, RowTable};
use crate::Device;
use onekernel_dsl::types::Literal;
use onekernel_runtime::{Args, HostBuffer};

const K: &str = "gated_delta_net";

/// The head sizes the kernel is built for (its `s_v` variants).
pub const GDN_HEAD_SIZES: [u32; 4] = [16, 32, 64, 128];

/// The raw-gate form: `β = σ(beta)`, `g ← a[h]·softplus(g + dt_bias)`.
#[derive(Clone, Debug, PartialEq)]
pub struct RawGates {
    /// One factor per value head (a model's `−exp(A_log)`).
    pub a: Vec<f32>,
    /// `[H]`, or `[H][S]` with the per-channel (KDA) gate.
    pub dt_bias: Vec<f32>,
}

/// One call's inputs, in the layouts of `tests/fixtures/gdn/README.md`.
#[derive(Clone, Debug, PartialEq)]
pub struct GdnInputs {
    /// Head size S of q, k and v (the state is S × S).
    pub s_v: u32,
    /// Value heads H.
    pub n_heads: u32,
    /// q/k heads Hk (H is a multiple; value head h reads q/k head h % Hk).
    pub n_k_heads: u32,
    /// Tokens per sequence T.
    pub n_tokens: u32,
    /// Sequences B.
    pub n_seqs: u32,
    /// One gate per key channel (KDA) instead of one per head.
    pub kda: bool,
    /// `[B][T][Hk][S]`.
    pub q: Vec<f32>,
    /// `[B][T][Hk][S]`.
    pub k: Vec<f32>,
    /// `[B][T][H][S]`.
    pub v: Vec<f32>,
    /// `[B][T][H]`, or `[B][T][H][S]` with `kda`: log-decays (raw with `raw_gates`).
    pub g: Vec<f32>,
    /// `[B][T][H]` (raw with `raw_gates`).
    pub beta: Vec<f32>,
    /// The raw-gate form, if the gates are raw projections.
    pub raw_gates: Option<RawGates>,
}

/// What a call returns.
#[derive(Clone, Debug, PartialEq)]
pub struct GdnOutput {
    /// `[B][T][H][S]`.
    pub out: Vec<f32>,
    /// `[B][H][S][S]` (transposed as ggml stores it); `None` where the new states were
    /// written back into the cache.
    pub state: Option<Vec<f32>>,
}

impl GdnInputs {
    /// Values in one sequence's state: H·S·S.
    pub fn state_len(&self) -> usize {
        (self.n_heads * self.s_v * self.s_v) as usize
    }

    /// Checks every count and length; names the argument at fault.
    pub fn check(&self) -> Result<(), LinearError> {
        require(K, "s_v", GDN_HEAD_SIZES.contains(&self.s_v), || format!("head size {} is not supported: it takes 16, 32, 64 or 128", self.s_v))?;
        check_count(K, "n_heads", self.n_heads)?;
        check_count(K, "n_k_heads", self.n_k_heads)?;
        check_count(K, "n_seqs", self.n_seqs)?;
        require(K, "n_tokens", self.n_tokens >= 1, || "is 0; a call takes at least one token".into())?;
        require(K, "n_heads", self.n_heads.is_multiple_of(self.n_k_heads), || {
            format!("{} value heads are not a multiple of the {} q/k heads", self.n_heads, self.n_k_heads)
        })?;
        let (b, t, h, hk, s) = (self.n_seqs as u64, self.n_tokens as u64, self.n_heads as u64, self.n_k_heads as u64, self.s_v as u64);
        let too_big = b * t * h * s > u32::MAX as u64 / 2 || b * h * s * s > u32::MAX as u64 / 2;
        require(K, "n_tokens", !too_big, || "the buffers would pass 2^31 values".into())?;
        let n = |x: u64| x as usize;
        require_len(K, "q", self.q.len(), n(b * t * hk * s))?;
        require_len(K, "k", self.k.len(), n(b * t * hk * s))?;
        require_len(K, "v", self.v.len(), n(b * t * h * s))?;
        require_len(K, "g", self.g.len(), n(b * t * h * if self.kda { s } else { 1 }))?;
        require_len(K, "beta", self.beta.len(), n(b * t * h))?;
        if let Some(r) = &self.raw_gates {
            require_len(K, "a", r.a.len(), n(h))?;
            require_len(K, "dt_bias", r.dt_bias.len(), n(h * if self.kda { s } else { 1 }))?;
        }
        Ok(())
    }

    fn args(&self, state: &[f32], slots: &[i32], write_back: bool) -> Args {
        let (a, dt_bias) = match &self.raw_gates {
            Some(r) => (r.a.clone(), r.dt_bias.clone()),
            None => (vec![0.0], vec![0.0]),
        };
        let state_out = if write_back { 1 } else { self.n_seqs as usize * self.state_len() };
        Args::new()
            .buffer("q", HostBuffer::from_f32(&self.q))
            .buffer("k", HostBuffer::from_f32(&self.k))
            .buffer("v", HostBuffer::from_f32(&self.v))
            .buffer("g", HostBuffer::from_f32(&self.g))
            .buffer("beta", HostBuffer::from_f32(&self.beta))
            .buffer("a", HostBuffer::from_f32(&a))
            .buffer("dt_bias", HostBuffer::from_f32(&dt_bias))
            .buffer("slots", HostBuffer::from_i32(if slots.is_empty() { &[0] } else { slots }))
            .buffer("state", HostBuffer::from_f32(state))
            .buffer("out", HostBuffer::from_f32(&vec![0.0; self.v.len()]))
            .buffer("state_out", HostBuffer::from_f32(&vec![0.0; state_out]))
            .scalar("n_k_heads", self.n_k_heads)
            .scalar("n_tokens", self.n_tokens)
    }

    fn axes(&self, gather: bool, write_back: bool) -> [(&'static str, Literal); 5] {
        [
            ("s_v", Literal::U32(self.s_v)),
            ("kda", Literal::Bool(self.kda)),
            ("raw_gates", Literal::Bool(self.raw_gates.is_some())),
            ("gather", Literal::Bool(gather)),
            ("write_back", Literal::Bool(write_back)),
        ]
    }

    fn groups(&self) -> [u32; 3] {
        // `512 / min(S, 32)` columns per workgroup, all 16 at S = 16.
        [(self.s_v * self.s_v.min(32) / 512).max(1), self.n_heads, self.n_seqs]
    }
}

impl Device<'_> {
    /// The gated delta net over per-sequence states `state` (`[B][H][S][S]`): returns the
    /// output and the new states.
    pub fn gated_delta_net(&mut self, x: &GdnInputs, state: &[f32]) -> Result<GdnOutput, LinearError> {
        x.check()?;
        require_len(K, "state", state.len(), x.n_seqs as usize * x.state_len())?;
        let mut args = x.args(state, &[], false);
        self.run_linear(K, &x.axes(false, false), &mut args, x.groups())?;
        Ok(GdnOutput { out: take_f32(&args, "out"), state: Some(take_f32(&args, "state_out")) })
    }

    /// The fused form over a state cache (`[n_slots][H][S][S]`): sequence `b` reads slot
    /// `slots[b]` (with `gather`; else slot `b`) and, with `write_back`, writes its new
    /// state there (else returns it). Slots not read are never touched.
    pub fn gated_delta_net_cached(
        &mut self,
        x: &GdnInputs,
        cache: &mut Vec<f32>,
        slots: Option<&[i32]>,
        write_back: bool,
    ) -> Result<GdnOutput, LinearError> {
        x.check()?;
        let per = x.state_len();
        require(K, "state", !cache.is_empty() && cache.len().is_multiple_of(per), || {
            format!("holds {} values: not a whole number of states of {per} (H·S·S)", cache.len())
        })?;
        let n_slots = cache.len() / per;
        match slots {
            Some(s) => check_slots(K, s, x.n_seqs, n_slots)?,
            None => require(K, "state", n_slots >= x.n_seqs as usize, || format!("holds {n_slots} states for {} sequences", x.n_seqs))?,
        }
        let table = slots.unwrap_or(&[]);
        let mut args = x.args(cache, table, write_back);
        self.run_linear(K, &x.axes(slots.is_some(), write_back), &mut args, x.groups())?;
        let state = if write_back {
            *cache = take_f32(&args, "state");
            None
        } else {
            Some(take_f32(&args, "state_out"))
        };
        Ok(GdnOutput { out: take_f32(&args, "out"), state })
    }

    /// The unfused sequence the fused form replaces, as three launches: gather the slots'
    /// states (`copy_rows`), run the kernel on them, scatter the new states back.
    pub fn gated_delta_net_unfused(&mut self, x: &GdnInputs, cache: &mut Vec<f32>, slots: &[i32]) -> Result<Vec<f32>, LinearError> {
        x.check()?;
        let per = x.state_len();
        require(K, "state", !cache.is_empty() && cache.len().is_multiple_of(per), || {
            format!("holds {} values: not a whole number of states of {per} (H·S·S)", cache.len())
        })?;
        check_slots(K, slots, x.n_seqs, cache.len() / per)?;
        let p = per as u32;
        let rows = |rows| RowCopy { rows, row_len: p, per_entry: 1, src: (p, 0), dst: (p, 0) };
        let mut batch = vec![0.0; x.n_seqs as usize * per];
        self.copy_rows(cache, slots, &mut batch, RowTable::Source, rows(x.n_seqs))?;
        let r = self.gated_delta_net(x, &batch)?;
        let new = r.state.unwrap_or_default();
        self.copy_rows(&new, slots, cache, RowTable::Destination, rows(x.n_seqs))?;
        Ok(r.out)
    }
}
