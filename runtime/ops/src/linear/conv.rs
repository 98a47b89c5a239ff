//! `ssm_conv` calls: the whole window (ggml's form), or new inputs with the conv state
//! read from and written back to a slot, fused or as the unfused sequence.

use super::{check_count, check_slots, require, require_len, take_f32, LinearError, RowCopy, RowTable};
use crate::Device;
use onekernel_dsl::types::Literal;
use onekernel_runtime::{Args, HostBuffer};

const K: &str = "ssm_conv";

/// The convolution's shape, weights and activation.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvInputs {
    /// Window W (2 … 4).
    pub d_conv: u32,
    /// Channels C.
    pub channels: u32,
    /// New tokens per sequence T.
    pub n_tokens: u32,
    /// Sequences B.
    pub n_seqs: u32,
    /// Apply `y·σ(y)`.
    pub silu: bool,
    /// `[C][W]`.
    pub weight: Vec<f32>,
}

impl ConvInputs {
    /// Checks the counts and the weights; names the argument at fault.
    pub fn check(&self) -> Result<(), LinearError> {
        require(K, "d_conv", (2..=4).contains(&self.d_conv), || format!("window {} is not supported: it takes 2, 3 or 4", self.d_conv))?;
        require(K, "channels", (1..=1 << 24).contains(&self.channels), || format!("is {}; it must be 1 … 2^24", self.channels))?;
        check_count(K, "n_seqs", self.n_seqs)?;
        require(K, "n_tokens", self.n_tokens >= 1, || "is 0; a call takes at least one token".into())?;
        let values = self.n_seqs as u64 * self.channels as u64 * (self.d_conv as u64 - 1 + self.n_tokens as u64);
        require(K, "n_tokens", values <= u32::MAX as u64 / 2, || "the buffers would pass 2^31 values".into())?;
        require_len(K, "weight", self.weight.len(), (self.channels * self.d_conv) as usize)
    }

    /// Values of one sequence's conv state: C·(W − 1).
    pub fn state_len(&self) -> usize {
        (self.channels * (self.d_conv - 1)) as usize
    }

    fn args(&self, x: &[f32], slots: &[i32], conv_state: &[f32]) -> Args {
        Args::new()
            .buffer("x", HostBuffer::from_f32(x))
            .buffer("weight", HostBuffer::from_f32(&self.weight))
            .buffer("slots", HostBuffer::from_i32(if slots.is_empty() { &[0] } else { slots }))
            .buffer("conv_state", HostBuffer::from_f32(if conv_state.is_empty() { &[0.0] } else { conv_state }))
            .buffer("out", HostBuffer::from_f32(&vec![0.0; (self.n_seqs * self.n_tokens * self.channels) as usize]))
            .scalar("channels", self.channels)
            .scalar("n_tokens", self.n_tokens)
    }

    fn axes(&self, in_place: bool, gather: bool) -> [(&'static str, Literal); 4] {
        [
            ("d_conv", Literal::U32(self.d_conv)),
            ("silu", Literal::Bool(self.silu)),
            ("in_place", Literal::Bool(in_place)),
            ("gather", Literal::Bool(gather)),
        ]
    }

    fn groups(&self) -> [u32; 3] {
        [self.channels.div_ceil(128), self.n_seqs, 1]
    }
}

impl Device<'_> {
    /// ggml's form: `x` is the window `[B][C][W − 1 + T]`; returns `[B][T][C]`.
    pub fn ssm_conv(&mut self, c: &ConvInputs, x: &[f32]) -> Result<Vec<f32>, LinearError> {
        c.check()?;
        require_len(K, "x", x.len(), (c.n_seqs * c.channels * (c.d_conv - 1 + c.n_tokens)) as usize)?;
        let mut args = c.args(x, &[], &[]);
        self.run_linear(K, &c.axes(false, false), &mut args, c.groups())?;
        Ok(take_f32(&args, "out"))
    }

    /// The fused step: `x_new` `[B][C][T]`; the previous inputs come from the conv-state
    /// cache `conv_state` (`[rows][C][W − 1]`) at row `slots[b]` (row `b` without a
    /// table), and the window's last W − 1 inputs are written back there.
    pub fn ssm_conv_cached(
        &mut self,
        c: &ConvInputs,
        x_new: &[f32],
        conv_state: &mut Vec<f32>,
        slots: Option<&[i32]>,
    ) -> Result<Vec<f32>, LinearError> {
        self.check_step(c, x_new, conv_state, slots)?;
        let mut args = c.args(x_new, slots.unwrap_or(&[]), conv_state);
        self.run_linear(K, &c.axes(true, slots.is_some()), &mut args, c.groups())?;
        *conv_state = take_f32(&args, "conv_state");
        Ok(take_f32(&args, "out"))
    }

    /// The unfused sequence [`Device::ssm_conv_cached`] replaces, as five launches:
    /// gather the previous inputs and append the new ones into a window (`copy_rows`
    /// twice), convolve it, scatter the window's tail back into the cache.
    pub fn ssm_conv_unfused(
        &mut self,
        c: &ConvInputs,
        x_new: &[f32],
        conv_state: &mut Vec<f32>,
        slots: Option<&[i32]>,
    ) -> Result<Vec<f32>, LinearError> {
        self.check_step(c, x_new, conv_state, slots)?;
        let (prev, t, rows) = (c.d_conv - 1, c.n_tokens, c.n_seqs * c.channels);
        let table = slots.unwrap_or(&[]);
        let (gather, scatter) = if slots.is_some() { (RowTable::Source, RowTable::Destination) } else { (RowTable::None, RowTable::None) };
        let mut window = vec![0.0; (rows * (prev + t)) as usize];
        let per_entry = c.channels;
        self.copy_rows(conv_state, table, &mut window, gather, RowCopy { rows, row_len: prev, per_entry, src: (prev, 0), dst: (prev + t, 0) })?;
        self.copy_rows(x_new, &[], &mut window, RowTable::None, RowCopy { rows, row_len: t, per_entry, src: (t, 0), dst: (prev + t, prev) })?;
        let out = self.ssm_conv(c, &window)?;
        self.copy_rows(&window, table, conv_state, scatter, RowCopy { rows, row_len: prev, per_entry, src: (prev + t, t), dst: (prev, 0) })?;
        Ok(out)
    }

    fn check_step(&self, c: &ConvInputs, x_new: &[f32], conv_state: &[f32], slots: Option<&[i32]>) -> Result<(), LinearError> {
        c.check()?;
        require_len(K, "x", x_new.len(), (c.n_seqs * c.channels * c.n_tokens) as usize)?;
        let per = c.state_len();
        require(K, "conv_state", !conv_state.is_empty() && conv_state.len().is_multiple_of(per), || {
            format!("holds {} values: not a whole number of conv states of {per} (C·(W − 1))", conv_state.len())
        })?;
        let n_rows = conv_state.len() / per;
        match slots {
            Some(s) => check_slots(K, s, c.n_seqs, n_rows),
            None => require(K, "conv_state", n_rows >= c.n_seqs as usize, || format!("holds {n_rows} conv states for {} sequences", c.n_seqs)),
        }
    }
}
