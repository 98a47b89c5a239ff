//! Names reach generated source text and file paths (`vulkan/<kernel>.spv`), so every
//! name in the IR is an ASCII identifier of bounded length and the kernel's parameter
//! and shared-array names are distinct. The macro only produces such names; IR built by
//! hand or deserialized is held to the same rule here, so a name like `../x` or `a; b`
//! cannot leave the output directory or inject code.

use super::{Diagnostics, ErrorKind};
use crate::ir::{Kernel, SpanId};

/// Longest name accepted.
pub const MAX_NAME_LEN: usize = 128;

/// Whether `s` is an ASCII identifier of at most [`MAX_NAME_LEN`] bytes.
pub fn is_identifier(s: &str) -> bool {
    let mut c = s.chars();
    s.len() <= MAX_NAME_LEN
        && matches!(c.next(), Some(ch) if ch == '_' || ch.is_ascii_alphabetic())
        && c.all(|ch| ch == '_' || ch.is_ascii_alphanumeric())
}

pub(super) fn check(k: &Kernel, d: &mut Diagnostics) {
    let bad = |what: &str, name: &str, span: SpanId, d: &mut Diagnostics| {
        d.error(span, ErrorKind::Unsupported, format!("{what} name {name:?} is not an ASCII identifier of at most {MAX_NAME_LEN} bytes"));
    };
    if !is_identifier(&k.name) {
        bad("kernel", &k.name, SpanId(0), d);
    }
    let mut seen = std::collections::BTreeSet::new();
    for p in &k.params {
        if !is_identifier(&p.name) {
            bad("parameter", &p.name, p.span, d);
        } else if !seen.insert(p.name.as_str()) {
            d.error(p.span, ErrorKind::Unsupported, format!("parameter `{}` is declared twice", p.name));
        }
    }
    for s in &k.shared {
        if !is_identifier(&s.name) {
            bad("shared array", &s.name, s.span, d);
        } else if !seen.insert(s.name.as_str()) {
            d.error(s.span, ErrorKind::Unsupported, format!("shared array `{}` has the name of another parameter or array", s.name));
        }
    }
    for l in &k.locals {
        if !is_identifier(&l.name) {
            bad("local", &l.name, SpanId(0), d);
        }
    }
    for f in &k.functions {
        if !is_identifier(&f.name) {
            bad("function", &f.name, SpanId(0), d);
        }
        for l in f.locals.iter().filter(|l| !is_identifier(&l.name)) {
            bad("local", &l.name, SpanId(0), d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_identifier;

    #[test]
    fn identifiers_and_not() {
        for ok in ["k", "_x", "attn_decode_chunk", "a1"] {
            assert!(is_identifier(ok), "{ok}");
        }
        for bad in ["", "1a", "../x", "a b", "a;b", "ü", "a-b", &"x".repeat(129)] {
            assert!(!is_identifier(bad), "{bad}");
        }
    }
}
