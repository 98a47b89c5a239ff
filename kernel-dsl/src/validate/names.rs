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

/// Whether `s` names a tile: an identifier, or element `name[i]` of a tile array.
pub fn is_tile_name(s: &str) -> bool {
    match s.strip_suffix(']').and_then(|r| r.split_once('[')) {
        Some((array, index)) => is_identifier(array) && !index.is_empty() && index.len() <= 4 && index.bytes().all(|b| b.is_ascii_digit()),
        None => is_identifier(s),
    }
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
    // Tiles print as `tl_` and their name with an element's brackets dropped (`o[3]`:
    // `tl_o3`), so those spellings are distinct too.
    let mut tiles = std::collections::BTreeSet::new();
    for t in &k.tiles {
        if !is_tile_name(&t.name) {
            bad("tile", &t.name, t.span, d);
        } else if !tiles.insert(crate::ir::tile_identifier(&t.name)) {
            d.error(t.span, ErrorKind::Unsupported, format!("tile `{}` has the generated name of another tile", t.name));
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
    fn tile_names_are_identifiers_or_array_elements() {
        for ok in ["o", "q0", "o[0]", "acc_x[63]"] {
            assert!(super::is_tile_name(ok), "{ok}");
        }
        for bad in ["o[]", "[3]", "o[x]", "o[3", "o[3]]", "o[1][2]", "a b[1]", "o[12345]"] {
            assert!(!super::is_tile_name(bad), "{bad}");
        }
    }

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
