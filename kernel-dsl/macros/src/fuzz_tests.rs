//! The macro never panics: every kernel of the catalogue, its token streams mutated at
//! random (tokens deleted, duplicated, swapped, replaced by DSL words, hostile literals
//! and stray punctuation, groups emptied or re-delimited), goes through the macro's
//! expansion, which must return either code or diagnostics, each with a source span.
//!
//! Seeded and reproducible: ONEKERNEL_MACRO_FUZZ_SEED picks the seed (default 1),
//! ONEKERNEL_MACRO_FUZZ_CASES the number of mutated kernels (default 3000); a failure
//! prints the seed, the case and the mutated source.

use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// splitmix64: small, seedable, the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Words of the DSL and of Rust the mutations put where an identifier was.
const WORDS: &[&str] = &[
    "u32",
    "i32",
    "f32",
    "f16",
    "bf16",
    "u8",
    "u16",
    "bool",
    "let",
    "mut",
    "if",
    "else",
    "for",
    "in",
    "while",
    "loop",
    "return",
    "break",
    "continue",
    "as",
    "fn",
    "shared",
    "barrier",
    "last_arrival",
    "global_id",
    "local_id",
    "group_id",
    "num_groups",
    "workgroup_sum",
    "workgroup_max",
    "workgroup_argmax",
    "subgroup_sum",
    "tile_acc",
    "tile_mma",
    "tile_load",
    "async_copy",
    "async_copy_bypass_l1",
    "exp",
    "sqrt",
    "fma",
    "f32_to_f16_bits",
    "select",
    "min",
    "max",
    "push",
    "len",
    "spec",
    "values",
    "workgroup",
    "class",
    "exact",
    "fast",
    "resident",
    "self",
    "Self",
    "super",
    "crate",
    "true",
    "false",
    "_",
    "x",
    "y",
];

fn hostile_literal(rng: &mut Rng) -> Literal {
    match rng.below(12) {
        0 => Literal::u32_unsuffixed(0),
        1 => Literal::u64_unsuffixed(u64::MAX),
        2 => Literal::u64_unsuffixed(1 << 32),
        3 => Literal::u32_unsuffixed(4_000_000_000),
        4 => Literal::f64_unsuffixed(1e300),
        5 => Literal::f32_suffixed(f32::MIN_POSITIVE),
        6 => Literal::string("a string"),
        7 => Literal::character('k'),
        8 => Literal::i64_suffixed(-1),
        9 => Literal::u8_suffixed(255),
        10 => Literal::byte_string(b"\x00\xff"),
        _ => Literal::u32_unsuffixed(65_536),
    }
}

fn hostile_token(rng: &mut Rng) -> TokenTree {
    match rng.below(4) {
        0 => TokenTree::Ident(Ident::new(WORDS[rng.below(WORDS.len())].trim_start_matches("r#"), Span::call_site())),
        1 => TokenTree::Literal(hostile_literal(rng)),
        2 => {
            let p = [';', ',', '=', '<', '>', '&', '*', '-', '+', '!', '#', '.', ':', '?', '|', '@'][rng.below(16)];
            TokenTree::Punct(Punct::new(p, if rng.below(2) == 0 { Spacing::Alone } else { Spacing::Joint }))
        }
        _ => {
            let d = [Delimiter::Parenthesis, Delimiter::Bracket, Delimiter::Brace][rng.below(3)];
            TokenTree::Group(Group::new(d, TokenStream::new()))
        }
    }
}

/// One mutation at a random depth of `ts`.
fn mutate(ts: TokenStream, rng: &mut Rng, depth: u32) -> TokenStream {
    let mut tokens: Vec<TokenTree> = ts.into_iter().collect();
    let groups: Vec<usize> = tokens.iter().enumerate().filter(|(_, t)| matches!(t, TokenTree::Group(_))).map(|(i, _)| i).collect();
    // Descend into a group about half the time, deeper less often.
    if !groups.is_empty() && rng.below(2 + depth as usize) == 0 {
        let i = groups[rng.below(groups.len())];
        if let TokenTree::Group(g) = &tokens[i] {
            let inner = mutate(g.stream(), rng, depth + 1);
            let mut ng = Group::new(g.delimiter(), inner);
            ng.set_span(g.span());
            tokens[i] = TokenTree::Group(ng);
        }
        return tokens.into_iter().collect();
    }
    let n = tokens.len();
    match rng.below(8) {
        0 if n > 0 => {
            tokens.remove(rng.below(n));
        }
        1 if n > 0 => {
            let i = rng.below(n);
            let t = tokens[i].clone();
            tokens.insert(i, t);
        }
        2 if n > 1 => {
            let i = rng.below(n - 1);
            tokens.swap(i, i + 1);
        }
        3 if n > 0 => {
            // Replace an identifier or literal in place, keeping its span.
            let i = rng.below(n);
            let span = tokens[i].span();
            let mut t = hostile_token(rng);
            t.set_span(span);
            tokens[i] = t;
        }
        4 => {
            let i = rng.below(n + 1);
            let mut t = hostile_token(rng);
            t.set_span(neighbour_span(&tokens, i));
            tokens.insert(i, t);
        }
        5 if n > 0 => {
            tokens.truncate(rng.below(n));
        }
        6 if !groups.is_empty() => {
            let i = groups[rng.below(groups.len())];
            if let TokenTree::Group(g) = &tokens[i] {
                let d = [Delimiter::Parenthesis, Delimiter::Bracket, Delimiter::Brace, Delimiter::None][rng.below(4)];
                let stream = if rng.below(2) == 0 { TokenStream::new() } else { g.stream() };
                let mut ng = Group::new(d, stream);
                ng.set_span(g.span());
                tokens[i] = TokenTree::Group(ng);
            }
        }
        _ => {
            let i = rng.below(n + 1);
            let mut l = hostile_literal(rng);
            l.set_span(neighbour_span(&tokens, i));
            tokens.insert(i, TokenTree::Literal(l));
        }
    }
    tokens.into_iter().collect()
}

/// The span of the token at `i` or before it: an inserted token sits in the source
/// where its neighbour is, as every token the compiler hands a macro has a position.
fn neighbour_span(tokens: &[TokenTree], i: usize) -> Span {
    tokens.get(i).or_else(|| tokens.get(i.wrapping_sub(1))).map(|t| t.span()).unwrap_or_else(Span::call_site)
}

/// `(attribute arguments, function without the attribute)` of every `#[kernel]` in the
/// catalogue's sources.
fn catalogue_kernels() -> Vec<(String, TokenStream, TokenStream)> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    fn items(list: &[syn::Item], out: &mut Vec<(String, TokenStream, TokenStream)>) {
        for item in list {
            match item {
                syn::Item::Fn(f) => {
                    if let Some(a) = f.attrs.iter().find(|a| a.path().is_ident("kernel")) {
                        let args = match &a.meta {
                            syn::Meta::List(l) => l.tokens.clone(),
                            _ => TokenStream::new(),
                        };
                        let mut f = f.clone();
                        f.attrs.retain(|a| !a.path().is_ident("kernel"));
                        out.push((f.sig.ident.to_string(), args, quote::quote!(#f)));
                    }
                }
                syn::Item::Mod(m) => {
                    if let Some((_, inner)) = &m.content {
                        items(inner, out);
                    }
                }
                _ => {}
            }
        }
    }
    let mut files = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/src"), &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let file: syn::File = syn::parse_str(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        items(&file.items, &mut out);
    }
    out
}

/// The source lines `tokens` span.
fn line_range(tokens: impl Iterator<Item = TokenTree>) -> std::ops::RangeInclusive<usize> {
    let (mut lo, mut hi) = (usize::MAX, 0);
    for t in tokens {
        lo = lo.min(t.span().start().line);
        hi = hi.max(t.span().end().line);
    }
    lo..=hi
}

#[test]
fn a_workgroup_whose_size_overflows_is_a_diagnostic() {
    let item: TokenStream = "fn k(y: &mut [f32]) { y[0] = 1.0; }".parse().unwrap();
    let attr: TokenStream = "workgroup = (4294967295, 4294967295, 2)".parse().unwrap();
    let e = catch_unwind(AssertUnwindSafe(|| super::expand(attr, item))).expect("no panic").unwrap_err();
    assert!(e.to_string().contains("workgroup"), "{e}");
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[test]
fn the_macro_never_panics_and_every_error_has_a_span() {
    let kernels = catalogue_kernels();
    assert!(kernels.len() >= 20, "only {} kernels found in the catalogue's sources", kernels.len());
    // The unmutated catalogue expands: the harness itself is sound.
    for (name, attr, item) in &kernels {
        if let Err(e) = super::expand(attr.clone(), item.clone()) {
            panic!("catalogue kernel `{name}` does not expand: {e}");
        }
    }
    let seed = env_u64("ONEKERNEL_MACRO_FUZZ_SEED", 1);
    let cases = env_u64("ONEKERNEL_MACRO_FUZZ_CASES", 3000);
    let mut rng = Rng(seed);
    let (mut rejected, mut accepted) = (0u64, 0u64);
    for case in 0..cases {
        let (name, attr, item) = &kernels[rng.below(kernels.len())];
        let lines = line_range(attr.clone().into_iter().chain(item.clone()));
        let (mut attr, mut item) = (attr.clone(), item.clone());
        for _ in 0..1 + rng.below(3) {
            if rng.below(5) == 0 {
                attr = mutate(attr, &mut rng, 0);
            } else {
                item = mutate(item, &mut rng, 0);
            }
        }
        let repro = format!(
            "ONEKERNEL_MACRO_FUZZ_SEED={seed} (case {case} of kernel `{name}`): cargo test -p onekernel-macros the_macro_never_panics\n\
             #[kernel({attr})]\n{item}"
        );
        let result = catch_unwind(AssertUnwindSafe(|| super::expand(attr.clone(), item.clone())));
        match result {
            Err(_) => panic!("the macro panicked on {repro}"),
            Ok(Ok(_)) => accepted += 1,
            Ok(Err(e)) => {
                rejected += 1;
                for part in e {
                    let msg = part.to_string();
                    assert!(!msg.trim().is_empty(), "an empty diagnostic for {repro}");
                    // In the kernel's own lines, or at the call site (the `#[kernel]`
                    // attribute, where the compiler puts end-of-input errors).
                    let (span, site) = (part.span(), Span::call_site());
                    let at_site = span.start() == site.start() && span.end() == site.end();
                    let line = span.start().line;
                    assert!(at_site || lines.contains(&line), "diagnostic `{msg}` at line {line}, outside the kernel's lines {lines:?}, for {repro}");
                }
            }
        }
    }
    println!("{cases} mutated kernels (seed {seed}): {rejected} rejected with spanned diagnostics, {accepted} accepted");
    assert!(rejected > cases / 2, "too few mutations were rejected ({rejected} of {cases}): the mutator is not hostile");
}
