//! Identifiers: DSL names are Rust identifiers, which may be reserved words in GLSL,
//! CUDA C++ or MSL (`input`, `sample`, `half`, `kernel` …). Those get a trailing `_`,
//! in every backend alike, so the manifest names one spelling.

const RESERVED: &[&str] = &[
    "active", "asm", "atomic_uint", "attribute", "auto", "bool", "buffer", "case", "cast", "centroid", "char",
    "class", "coherent", "common", "const", "constant", "default", "delete", "device", "discard", "do",
    "double", "extern", "external", "false", "filter", "fixed", "flat", "float", "for", "fragment", "goto",
    "half", "highp", "if", "in", "inline", "inout", "input", "int", "interface", "invariant", "kernel",
    "layout", "long", "lowp", "main", "mediump", "namespace", "new", "noinline", "noperspective", "operator",
    "out", "output", "partition", "patch", "precise", "precision", "private", "public", "readonly",
    "register", "resource", "restrict", "sample", "sampler", "short", "signed", "sizeof", "smooth", "static",
    "struct", "subroutine", "superp", "switch", "template", "texture", "this", "thread", "threadgroup",
    "true", "typedef", "typename", "uint", "uniform", "union", "unsigned", "using", "varying", "vertex",
    "void", "volatile", "while", "writeonly", "data", "pc",
];

/// `name`, or `name_` where `name` is reserved in some target (or by the templates).
pub fn ident(name: &str) -> String {
    if RESERVED.contains(&name) || name.starts_with("ok_") || name.starts_with("gl_") || name.starts_with("__") {
        format!("{name}_")
    } else {
        name.to_string()
    }
}
