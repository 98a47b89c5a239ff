//! `ssm_scan` calls (ggml's `SSM_SCAN`).

use super::{check_count, require, require_len, take_f32, LinearError};
use crate::Device;
use onekernel_dsl::types::Literal;
use onekernel_runtime::{Args, HostBuffer};

const K: &str = "ssm_scan";

/// One call's inputs, in ggml's layouts (row-major, outermost first).
#[derive(Clone, Debug, PartialEq)]
pub struct ScanInputs {
    /// Heads H.
    pub n_heads: u32,
    /// Channels per head P (Mamba-1: 1 per head, d_inner heads).
    pub head_dim: u32,
    /// State entries N per channel.
    pub d_state: u32,
    /// B/C groups (a power of two; head h uses group h % n_groups).
    pub n_groups: u32,
    /// Tokens per sequence T.
    pub n_tokens: u32,
    /// Sequences B.
    pub n_seqs: u32,
    /// States `[slots][H][P][N]`; sequence b starts from slot `ids[b]`.
    pub state: Vec<f32>,
    /// `[B][T][H][P]`.
    pub x: Vec<f32>,
    /// `[B][T][H]` (softplus is applied inside).
    pub dt: Vec<f32>,
    /// `[H]` (Mamba-2) or `[H][N]` (Mamba-1).
    pub a: Vec<f32>,
    /// `[B][T][G][N]`.
    pub b: Vec<f32>,
    /// `[B][T][G][N]`.
    pub c: Vec<f32>,
    /// `[B]`: each sequence's state slot.
    pub ids: Vec<i32>,
}

/// What `ssm_scan` returns.
#[derive(Clone, Debug, PartialEq)]
pub struct ScanOutput {
    /// `[B][T][H][P]`.
    pub y: Vec<f32>,
    /// `[B][H][P][N]`: the states after the last token.
    pub state: Vec<f32>,
}

impl ScanInputs {
    /// Whether A has one value per head (Mamba-2) rather than one per state entry.
    pub fn mamba2(&self) -> bool {
        self.a.len() == self.n_heads as usize
    }

    /// Checks every count and length; names the argument at fault.
    pub fn check(&self) -> Result<(), LinearError> {
        check_count(K, "n_seqs", self.n_seqs)?;
        for (name, n) in [("n_heads", self.n_heads), ("head_dim", self.head_dim), ("d_state", self.d_state), ("n_groups", self.n_groups)] {
            require(K, name, (1..=1 << 16).contains(&n), || format!("is {n}; it must be 1 … 65536"))?;
        }
        require(K, "n_groups", self.n_groups.is_power_of_two(), || format!("{} is not a power of two (ggml's rule)", self.n_groups))?;
        require(K, "n_tokens", self.n_tokens >= 1, || "is 0; a call takes at least one token".into())?;
        let (b, t, h, p, n, g) =
            (self.n_seqs as u64, self.n_tokens as u64, self.n_heads as u64, self.head_dim as u64, self.d_state as u64, self.n_groups as u64);
        // The grid has ⌈H·P/64⌉ workgroups along x.
        let big =
            b * t * h * p > u32::MAX as u64 / 2 || b * h * p * n > u32::MAX as u64 / 2 || b * t * g * n > u32::MAX as u64 / 2 || h * p > 65_535 * 64;
        require(K, "n_tokens", !big, || "the buffers would pass 2^31 values".into())?;
        let u = |x: u64| x as usize;
        require_len(K, "x", self.x.len(), u(b * t * h * p))?;
        require_len(K, "dt", self.dt.len(), u(b * t * h))?;
        require(K, "a", self.a.len() == u(h) || self.a.len() == u(h * n), || {
            format!("holds {} values: it takes H = {h} (Mamba-2) or H·N = {} (Mamba-1)", self.a.len(), h * n)
        })?;
        require_len(K, "b", self.b.len(), u(b * t * g * n))?;
        require_len(K, "c", self.c.len(), u(b * t * g * n))?;
        let per = u(h * p * n);
        require(K, "state", !self.state.is_empty() && self.state.len().is_multiple_of(per), || {
            format!("holds {} values: not a whole number of states of {per} (H·P·N)", self.state.len())
        })?;
        require_len(K, "ids", self.ids.len(), u(b))?;
        let slots = self.state.len() / per;
        for (i, &id) in self.ids.iter().enumerate() {
            require(K, "ids", id >= 0 && (id as usize) < slots, || format!("ids[{i}] = {id} is outside the {slots} states"))?;
        }
        Ok(())
    }
}

impl Device<'_> {
    /// The selective scan; returns `y` and the new states.
    pub fn ssm_scan(&mut self, s: &ScanInputs) -> Result<ScanOutput, LinearError> {
        s.check()?;
        let per = (s.n_heads * s.head_dim * s.d_state) as usize;
        let mut args = Args::new()
            .buffer("state", HostBuffer::from_f32(&s.state))
            .buffer("x", HostBuffer::from_f32(&s.x))
            .buffer("dt", HostBuffer::from_f32(&s.dt))
            .buffer("a", HostBuffer::from_f32(&s.a))
            .buffer("b_in", HostBuffer::from_f32(&s.b))
            .buffer("c_in", HostBuffer::from_f32(&s.c))
            .buffer("ids", HostBuffer::from_i32(&s.ids))
            .buffer("y", HostBuffer::from_f32(&vec![0.0; s.x.len()]))
            .buffer("state_out", HostBuffer::from_f32(&vec![0.0; s.n_seqs as usize * per]))
            .scalar("n_heads", s.n_heads)
            .scalar("head_dim", s.head_dim)
            .scalar("d_state", s.d_state)
            .scalar("n_groups", s.n_groups)
            .scalar("n_tokens", s.n_tokens);
        let groups = [(s.n_heads * s.head_dim).div_ceil(64), s.n_seqs, 1];
        self.run_linear(K, &[("mamba2", Literal::Bool(s.mamba2()))], &mut args, groups)?;
        Ok(ScanOutput { y: take_f32(&args, "y"), state: take_f32(&args, "state_out") })
    }
}
