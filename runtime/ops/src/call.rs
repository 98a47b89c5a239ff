//! The error of a checked kernel call (linear attention, the layer kernels): input
//! rejected before launch with the argument named, a kernel or variant missing from the
//! manifest, or the backend's failure.

/// Why a call could not run.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
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

impl From<crate::device::VariantLaunchError> for CallError {
    fn from(e: crate::device::VariantLaunchError) -> Self {
        use crate::device::VariantLaunchError as V;
        match e {
            V::Missing(k) => CallError::Missing(k),
            V::MissingVariant { kernel, variant } => CallError::MissingVariant { kernel, variant },
            V::Backend(b) => CallError::Backend(b),
        }
    }
}

/// `Err(Invalid)` naming `argument` unless `ok`.
pub(crate) fn require(kernel: &'static str, argument: &'static str, ok: bool, message: impl FnOnce() -> String) -> Result<(), CallError> {
    if ok {
        Ok(())
    } else {
        Err(CallError::Invalid { kernel, argument, message: message() })
    }
}
