//! The IR validator. Everything the code generator and the interpreter assume about a
//! kernel is checked here, with messages that name the kernel, the construct and,
//! where the IR came from DSL source, the `file:line:column`.
//!
//! The `#[kernel]` macro runs the validator at compile time and turns its errors into
//! compile errors at the offending span; the catalogue runs it again on load, so IR
//! built by hand or deserialized is held to the same rules.

mod assigned;
mod barriers;
mod limits;
mod names;
mod typecheck;
mod uniformity;

use crate::ir::{Kernel, SpanId};
use thiserror::Error;

pub use limits::{Limits, MAX_PUSH_BYTES, MAX_WORKGROUP_INVOCATIONS, SHARED_LIMIT_BYTES};
pub use names::{is_identifier, MAX_NAME_LEN};

/// What class of rule a [`ValidationError`] broke.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ErrorKind {
    /// Operand or result types do not fit together.
    Type,
    /// A reference to a variable, parameter, array or function that does not exist.
    Undeclared,
    /// A value read before it is certainly assigned.
    Unassigned,
    /// Assignment to a variable not declared `mut`, or a store into a read-only buffer.
    Immutable,
    /// `barrier()` or a workgroup reduction in non-uniform control flow.
    NonUniform,
    /// Shared memory, push-constant or workgroup-size limit exceeded.
    Limit,
    /// A specialization constant or variant axis without a usable default.
    SpecDefault,
    /// A construct the DSL does not support (in this position).
    Unsupported,
    /// A shared element read where another invocation's write is not yet ordered by a
    /// barrier (the plain pattern the validator decides; `validate/barriers.rs`).
    MissingBarrier,
}

/// A rule the kernel breaks.
#[derive(Clone, PartialEq, Eq, Debug, Error)]
#[error("kernel `{kernel}`{}: {message}", location_suffix(.location))]
pub struct ValidationError {
    /// The kernel's name.
    pub kernel: String,
    /// `file:line:column` of the construct, when known.
    pub location: Option<String>,
    /// The span in the IR (the macro maps it back to a compiler span).
    pub span: SpanId,
    /// The rule class.
    pub kind: ErrorKind,
    /// What is wrong and what is allowed instead.
    pub message: String,
}

fn location_suffix(loc: &Option<String>) -> String {
    loc.as_ref().map(|l| format!(" at {l}")).unwrap_or_default()
}

/// Collects errors while walking one kernel.
pub(crate) struct Diagnostics<'k> {
    kernel: &'k Kernel,
    errors: Vec<ValidationError>,
}

impl<'k> Diagnostics<'k> {
    fn new(kernel: &'k Kernel) -> Self {
        Diagnostics { kernel, errors: Vec::new() }
    }

    pub(crate) fn error(&mut self, span: SpanId, kind: ErrorKind, message: impl Into<String>) {
        let location = self.kernel.loc(span).map(|_| self.kernel.describe_span(span));
        self.errors.push(ValidationError { kernel: self.kernel.name.clone(), location, span, kind, message: message.into() });
    }
}

/// Validates a kernel with the default [`Limits`]; returns every error found.
pub fn validate(kernel: &Kernel) -> Result<(), Vec<ValidationError>> {
    validate_with(kernel, &Limits::default())
}

/// Validates a kernel against explicit limits.
pub fn validate_with(kernel: &Kernel, limits: &Limits) -> Result<(), Vec<ValidationError>> {
    let mut diag = Diagnostics::new(kernel);
    names::check(kernel, &mut diag);
    limits::check(kernel, limits, &mut diag);
    let types_ok = typecheck::check(kernel, &mut diag);
    // The flow analyses index locals and params by id: only run them on well-formed IR.
    if types_ok {
        assigned::check(kernel, &mut diag);
        uniformity::check(kernel, &mut diag);
        barriers::check(kernel, &mut diag);
    }
    if diag.errors.is_empty() {
        Ok(())
    } else {
        Err(diag.errors)
    }
}
