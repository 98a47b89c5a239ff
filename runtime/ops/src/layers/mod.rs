//! Per-layer building blocks of large models as calls: rotary position embedding from an
//! f32 cache ([`Device::rope`](crate::Device::rope), with the cache built in f64 by [`rope_cache`]),
//! mixture-of-experts top-k routing ([`Device::moe_route`](crate::Device::moe_route)) and the Sinkhorn-Knopp
//! normalization of hyper-connection mixing matrices ([`Device::sinkhorn`](crate::Device::sinkhorn)).
//!
//! Every call checks its inputs before anything is launched and names the argument it
//! rejects; [`reference`](mod@reference) holds independent float64 references with their own tests.

pub mod reference;
mod rope;
mod routing;
mod sinkhorn;

pub use rope::{rope_cache, RopeCache, RopeInputs, RopeOutput, RopePairing};
pub use routing::{Routing, MAX_EXPERTS};
pub use sinkhorn::SINKHORN_SIZES;

/// Why a layer call could not run.
pub type LayerError = crate::CallError;

use crate::call::require;
