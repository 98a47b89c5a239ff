//! Linear attention as calls: the gated delta net, the short convolution and the
//! selective scan, each with its recurrent state read from and written back to a slot
//! of a state cache (the fused forms) or passed per sequence, plus the unfused
//! gather → kernel → scatter sequences the fused forms are proven equal to.
//!
//! Every call checks its inputs before anything is launched and names the argument it
//! rejects. [`reference`](mod@reference) holds independent float64 references, [`fixture`] the runner
//! of the `gated_delta_net` / `ssm_conv` fixture schema.

mod conv;
pub mod fixture;
mod gdn;
pub mod reference;
mod scan;

pub use conv::ConvInputs;
pub use gdn::{GdnInputs, GdnOutput, RawGates, GDN_HEAD_SIZES};
pub use scan::{ScanInputs, ScanOutput};

use crate::Device;
use onekernel_dsl::types::Literal;
use onekernel_runtime::{Args, HostBuffer};

/// Why a linear-attention call could not run.
pub type LinearError = crate::CallError;

pub(crate) use crate::call::require;

/// `values` holds exactly `want` entries.
pub(crate) fn require_len(kernel: &'static str, argument: &'static str, values: usize, want: usize) -> Result<(), LinearError> {
    require(kernel, argument, values == want, || format!("holds {values} values, the shape needs {want}"))
}

/// A slot table: one entry per sequence, each in `0..n_slots`, no slot twice (two
/// sequences writing one slot would race).
pub(crate) fn check_slots(kernel: &'static str, slots: &[i32], n_seqs: u32, n_slots: usize) -> Result<(), LinearError> {
    require_len(kernel, "slots", slots.len(), n_seqs as usize)?;
    let mut seen = vec![false; n_slots];
    for (b, &s) in slots.iter().enumerate() {
        require(kernel, "slots", s >= 0 && (s as usize) < n_slots, || format!("slots[{b}] = {s} is outside the cache's {n_slots} slots"))?;
        require(kernel, "slots", !seen[s as usize], || format!("slot {s} appears twice (slots[{b}])"))?;
        seen[s as usize] = true;
    }
    Ok(())
}

/// A positive count that fits a grid dimension.
pub(crate) fn check_count(kernel: &'static str, argument: &'static str, n: u32) -> Result<(), LinearError> {
    require(kernel, argument, (1..=65_535).contains(&n), || format!("is {n}; it must be 1 … 65535"))
}

/// How `copy_rows` maps rows through its table.
#[derive(Clone, Copy)]
pub(crate) enum RowTable {
    /// Row r to row r.
    None = 0,
    /// Source rows through the table (a gather).
    Source = 1,
    /// Destination rows through the table (a scatter).
    Destination = 2,
}

/// One `copy_rows` launch's geometry.
pub(crate) struct RowCopy {
    pub rows: u32,
    pub row_len: u32,
    pub per_entry: u32,
    pub src: (u32, u32),
    pub dst: (u32, u32),
}

impl Device<'_> {
    /// Launches the variant of `kernel` with `axes` once over `groups`.
    pub(crate) fn run_linear(
        &mut self,
        kernel: &'static str,
        axes: &[(&str, Literal)],
        args: &mut Args,
        groups: [u32; 3],
    ) -> Result<(), LinearError> {
        Ok(self.launch_variant(kernel, axes, args, groups)?)
    }

    /// `dst` rows ← `src` rows through `slots` as `table` says (one `copy_rows` launch).
    pub(crate) fn copy_rows(&mut self, src: &[f32], slots: &[i32], dst: &mut Vec<f32>, table: RowTable, c: RowCopy) -> Result<(), LinearError> {
        let slot_buf = if slots.is_empty() { vec![0] } else { slots.to_vec() };
        let mut args = Args::new()
            .buffer("src", HostBuffer::from_f32(src))
            .buffer("slots", HostBuffer::from_i32(&slot_buf))
            .buffer("dst", HostBuffer::from_f32(dst))
            .scalar("row_len", c.row_len)
            .scalar("per_entry", c.per_entry)
            .scalar("src_stride", c.src.0)
            .scalar("src_offset", c.src.1)
            .scalar("dst_stride", c.dst.0)
            .scalar("dst_offset", c.dst.1)
            .scalar("n_src_rows", (src.len() / c.src.0.max(1) as usize) as u32)
            .scalar("n_dst_rows", (dst.len() / c.dst.0.max(1) as usize) as u32);
        self.run_linear("copy_rows", &[("table", Literal::U32(table as u32))], &mut args, [c.row_len.div_ceil(256), c.rows, 1])?;
        *dst = take_f32(&args, "dst");
        Ok(())
    }
}

/// Buffer `name` of `args` as f32 values (empty when absent).
pub(crate) fn take_f32(args: &Args, name: &str) -> Vec<f32> {
    args.get_buffer(name).map(HostBuffer::to_f32).unwrap_or_default()
}
