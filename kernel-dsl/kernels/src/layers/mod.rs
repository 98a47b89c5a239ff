//! Per-layer building blocks of large models: rotary position embedding from an f32
//! cache ([`rope`]), mixture-of-experts top-k routing ([`routing`]) and the
//! Sinkhorn-Knopp normalization of hyper-connection mixing matrices ([`sinkhorn`]).
//! All are `exact`: every backend gives the interpreter's bits.

pub mod rope;
pub mod routing;
pub mod sinkhorn;
