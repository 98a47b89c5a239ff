//! The FP8 cache write as a call: f32 rows stored as `fp8_e4m3` or `fp8_mixed` rows by
//! `kv_fp8_encode`, bit for bit [`KvFormat::encode_row`].

use super::format::KvFormat;
use crate::call::require;
use crate::{CallError, Device};
use onekernel_dsl::types::StorageType;
use onekernel_runtime::{Args, HostBuffer};

impl Device<'_> {
    /// Stores `x` (`[rows][dim]`, finite) as `rows` FP8 rows of `format` (`fp8_e4m3` or
    /// `fp8_mixed`): the cache image, `rows × format.row_bytes(dim)` bytes.
    pub fn kv_fp8_encode(&mut self, x: &[f32], rows: usize, dim: usize, format: KvFormat) -> Result<Vec<u8>, CallError> {
        const K: &str = "kv_fp8_encode";
        require(K, "format", format.is_fp8(), || format!("`{}` is not an FP8 row format (fp8_e4m3, fp8_mixed)", format.name()))?;
        require(K, "dim", dim > 0 && dim.is_multiple_of(4) && dim <= 1 << 16, || format!("{dim} elements per row: a multiple of 4 up to 65536"))?;
        let f8 = format.fp8_dims(dim as u32) as usize;
        require(K, "format", f8 <= dim && f8.is_multiple_of(4), || format!("fp8_dims = {f8}: a multiple of 4 up to the row's {dim} elements"))?;
        require(K, "x", rows > 0 && rows < 1 << 31 && rows.checked_mul(dim) == Some(x.len()), || {
            format!("{} values for {rows} rows × {dim}", x.len())
        })?;
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(CallError::Invalid { kernel: K, argument: "x", message: format!("x[{i}] = {} is not finite", x[i]) });
        }
        let row_bytes = format.row_bytes(dim);
        let mut a = Args::new()
            .buffer("x", HostBuffer::from_f32(x))
            .buffer("rows", HostBuffer::zeros(StorageType::U32, rows * row_bytes / 4))
            .scalar("n_rows", rows as u32)
            .scalar("dim", dim as u32)
            .scalar("fp8_dims", f8 as u32);
        self.launch_variant(K, &[], &mut a, [rows as u32, 1, 1])?;
        Ok(a.get_buffer("rows").map(|b| b.as_bytes().to_vec()).unwrap_or_default())
    }
}
