//! Per-layer building blocks of large models as calls: rotary position embedding from an
//! f32 cache ([`Device::rope`], with the cache built in f64 by [`rope_cache`]),
//! mixture-of-experts top-k routing ([`Device::moe_route`]) and the Sinkhorn-Knopp
//! normalization of hyper-connection mixing matrices ([`Device::sinkhorn`]).
//!
//! Every call checks its inputs before anything is launched and names the argument it
//! rejects; [`reference`] holds independent float64 references with their own tests.

pub mod reference;
mod rope;
mod routing;
mod sinkhorn;

pub use rope::{rope_cache, RopeCache, RopeInputs, RopeOutput, RopePairing};
pub use routing::{Routing, MAX_EXPERTS};
pub use sinkhorn::SINKHORN_SIZES;

/// Why a call could not run.
#[derive(Debug, thiserror::Error)]
pub enum LayerError {
    /// Malformed input; nothing was launched.
    #[error("{kernel}: argument `{argument}`: {message}")]
    Invalid {
        /// The kernel.
        kernel: &'static str,
        /// The argument at fault.
        argument: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The manifest lacks the kernel.
    #[error("`{0}` is not in the manifest; run `onekernel gen`")]
    Missing(&'static str),
    /// The manifest's kernel lacks the variant a call needs.
    #[error("`{kernel}` has no variant {variant} in the manifest; run `onekernel gen`")]
    MissingVariant {
        /// The kernel.
        kernel: &'static str,
        /// The wanted variant-axis values.
        variant: String,
    },
    /// The backend failed.
    #[error(transparent)]
    Backend(#[from] onekernel_runtime::BackendError),
}

impl From<crate::device::VariantLaunchError> for LayerError {
    fn from(e: crate::device::VariantLaunchError) -> Self {
        use crate::device::VariantLaunchError as V;
        match e {
            V::Missing(k) => LayerError::Missing(k),
            V::MissingVariant { kernel, variant } => LayerError::MissingVariant { kernel, variant },
            V::Backend(b) => LayerError::Backend(b),
        }
    }
}

/// `Err(Invalid)` naming `argument` unless `ok`.
fn require(kernel: &'static str, argument: &'static str, ok: bool, message: impl FnOnce() -> String) -> Result<(), LayerError> {
    if ok {
        Ok(())
    } else {
        Err(LayerError::Invalid { kernel, argument, message: message() })
    }
}
