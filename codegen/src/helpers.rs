//! Each generated file carries only the helpers it calls. The templates include a
//! dialect's whole helper file (`templates/*/helpers.*`); after rendering, the helper
//! file's text is cut into definitions and only those whose `ok_` name the rest of the
//! file uses — directly or through another kept helper — stay.
//!
//! A definition is a top-level function with the comment lines right above it, or a
//! whole `#if … #endif` region (kept when any name it defines is used, as a prefix:
//! `ok_async_copy##BYTES` defines `ok_async_copy16`). The helper file's first comment
//! line is its header and stays.

use std::collections::BTreeSet;

/// One definition of a helper file.
struct Block {
    text: String,
    /// The `ok_` names it defines.
    defines: Vec<String>,
}

/// Every `ok_` identifier in `s`.
fn names(s: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i + 3 <= b.len() {
        let boundary = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if boundary && &b[i..i + 3] == b"ok_" {
            let start = i;
            i += 3;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.insert(s[start..i].to_string());
        } else {
            i += 1;
        }
    }
    out
}

/// The helper file's header line and its definitions.
fn blocks(helpers: &str) -> (String, Vec<Block>) {
    let mut lines = helpers.lines().peekable();
    let header = if lines.peek().is_some_and(|l| l.starts_with("//")) { lines.next().unwrap_or_default().to_string() } else { String::new() };
    let mut out = Vec::new();
    let mut pending = String::new();
    let mut current: Option<(String, i64, bool)> = None; // text, brace depth, inside #if
    let mut if_depth = 0;
    for line in lines {
        if let Some((text, depth, in_if)) = current.as_mut() {
            text.push_str(line);
            text.push('\n');
            if *in_if {
                if line.starts_with("#if") {
                    if_depth += 1;
                } else if line.starts_with("#endif") {
                    if_depth -= 1;
                    if if_depth == 0 {
                        *in_if = false;
                    }
                }
                if *in_if {
                    continue;
                }
            } else {
                *depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
                if *depth > 0 {
                    continue;
                }
            }
            let (text, _, _) = current.take().unwrap_or_default();
            let defines = definitions(&text);
            out.push(Block { text, defines });
            continue;
        }
        if line.trim().is_empty() {
            pending.push_str(line);
            pending.push('\n');
            continue;
        }
        if line.starts_with("//") {
            pending.push_str(line);
            pending.push('\n');
            continue;
        }
        let mut text = std::mem::take(&mut pending);
        text.push_str(line);
        text.push('\n');
        if line.starts_with("#if") {
            if_depth = 1;
            current = Some((text, 0, true));
            continue;
        }
        let depth = line.matches('{').count() as i64 - line.matches('}').count() as i64;
        if depth > 0 {
            current = Some((text, depth, false));
        } else {
            let defines = definitions(&text);
            out.push(Block { text, defines });
        }
    }
    if let Some((text, _, _)) = current {
        let defines = definitions(&text);
        out.push(Block { text, defines });
    }
    if !pending.trim().is_empty() {
        out.push(Block { text: pending, defines: Vec::new() });
    }
    (header, out)
}

/// The `ok_` names a definition introduces: those followed by `(` on a line that is not
/// indented (the function's own name; in a region, each function and macro name).
fn definitions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with("//")) {
        if !line.starts_with(' ') {
            // The identifier right before the first `(`: the function's name.
            if let Some(at) = line.find('(') {
                if let Some(start) = line[..at].rfind("ok_") {
                    out.extend(names(&line[start..at]));
                }
            }
        }
        // A macro that builds names (`ok_async_copy##BYTES`), at any indentation.
        for n in names(line) {
            if line.contains(&format!("{n}##")) {
                out.push(n);
            }
        }
    }
    out
}

/// `rendered` with the verbatim copy of `helpers` in it reduced to the definitions the
/// rest of the file uses. A file without that copy is returned as it is.
pub fn prune(rendered: &str, helpers: &str) -> String {
    let Some(at) = rendered.find(helpers.trim_end()) else {
        return rendered.to_string();
    };
    let end = at + helpers.trim_end().len();
    let (header, blocks) = blocks(helpers);
    let mut used = names(&rendered[..at]);
    used.extend(names(&rendered[end..]));
    let is_used = |b: &Block, used: &BTreeSet<String>| {
        b.defines.iter().any(|d| used.contains(d) || used.iter().any(|u| u.starts_with(d.as_str()) && b.text.contains(&format!("{d}##"))))
    };
    let mut keep = vec![false; blocks.len()];
    loop {
        let mut changed = false;
        for (i, b) in blocks.iter().enumerate() {
            if !keep[i] && is_used(b, &used) {
                keep[i] = true;
                changed = true;
                used.extend(names(&b.text));
            }
        }
        if !changed {
            break;
        }
    }
    let mut kept = header;
    kept.push('\n');
    for (b, k) in blocks.iter().zip(&keep) {
        if *k {
            kept.push_str(&b.text);
        }
    }
    format!("{}{}{}", &rendered[..at], kept.trim_end(), &rendered[end..])
}

#[cfg(test)]
mod tests {
    use super::*;

    const HELPERS: &str = "// header\n\
        float ok_min_f32(float a, float b) { return a < b ? a : b; }\n\
        float ok_max_f32(float a, float b) { return a > b ? a : b; }\n\
        float ok_clamp_f32(float x, float lo, float hi) { return ok_min_f32(ok_max_f32(x, lo), hi); }\n\
        // A comment that belongs to the next helper.\n\
        uint ok_bits(float f) {\n    return 1u;\n}\n\
        #if A\n\
        #define MAKE(N) void ok_copy##N() {}\n\
        MAKE(4)\n\
        #endif\n";

    fn file(body: &str) -> String {
        format!("before\n{HELPERS}{body}\n")
    }

    #[test]
    fn only_called_helpers_and_their_callees_stay() {
        let out = prune(&file("y = ok_clamp_f32(x, 0.0, 1.0);"), HELPERS);
        assert!(out.contains("ok_min_f32(float") && out.contains("ok_max_f32(float") && out.contains("ok_clamp_f32(float"), "{out}");
        assert!(!out.contains("ok_bits(float") && !out.contains("A comment") && !out.contains("#if A"), "{out}");
        assert!(out.contains("// header") && out.starts_with("before\n") && out.contains("y = ok_clamp_f32"), "{out}");
    }

    #[test]
    fn multi_line_helpers_with_their_comments_and_regions_by_prefix() {
        let out = prune(&file("ok_bits(1.0); ok_copy4();"), HELPERS);
        assert!(out.contains("// A comment that belongs to the next helper.\nuint ok_bits(float f) {\n    return 1u;\n}"), "{out}");
        assert!(out.contains("#if A") && out.contains("MAKE(4)\n#endif"), "{out}");
        assert!(!out.contains("ok_min_f32(float"), "{out}");
        // Nothing used: only the header is left.
        let none = prune(&file("x = 1;"), HELPERS);
        assert!(!none.contains("ok_") && none.contains("// header"), "{none}");
    }
}
