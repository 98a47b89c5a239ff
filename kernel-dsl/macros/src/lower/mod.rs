//! Lowering of a kernel body from `syn` syntax to typed onekernel IR.
//!
//! Types are inferred the way a kernel author expects: every value has a type from
//! its declaration or its operands; an unsuffixed literal takes the type its context
//! requires (the other operand, the declared type, the parameter), and with no context
//! an integer literal is `u32` (or `i32` when negative) and a float literal `f32`.
//! Every rejected construct is an error at its span that says what to write instead.

mod closure;
mod expr;
mod stmt;
mod tile;

use onekernel_dsl::ir::{LocalDecl, Param, ParamId, SharedDecl, SharedId, SpanId, SrcLoc, TileDecl, TileId, TileRole, VarId};
use onekernel_dsl::types::VarType;
use proc_macro2::Span;
use std::collections::{BTreeSet, HashMap};

/// What a name in the body refers to.
#[derive(Clone, Copy)]
pub enum Name {
    Local(VarId),
    Shared(SharedId),
    Tile(TileId),
    Param(ParamId),
    /// A parameter of an expression closure being inlined: its argument's IR
    /// ([`Lowerer::substitutions`]).
    Argument(u32),
    /// `let o = [tile_acc(); N];`: tiles `first … first + len − 1`, element i named
    /// `o[i]`.
    TileArray {
        first: TileId,
        len: u32,
    },
    /// The counter of a `for` loop unrolled because it indexes a tile array: in each
    /// copy of the body, its value's literal ([`Lowerer::substitutions`]).
    Counter(u32),
}

/// Lowering state for one kernel instance.
pub struct Lowerer {
    pub params: Vec<Param>,
    pub shared: Vec<SharedDecl>,
    pub tiles: Vec<TileDecl>,
    pub locals: Vec<LocalDecl>,
    pub spans: Vec<SrcLoc>,
    /// Compiler spans, indexed like `spans`, to report validation errors in place.
    pub span_map: Vec<Span>,
    /// Library functions the body calls directly.
    pub used_functions: BTreeSet<String>,
    scopes: Vec<HashMap<String, Name>>,
    /// Nesting of blocks (0 = the kernel's top level).
    depth: u32,
    /// Kernel closures declared so far.
    closures: Vec<closure::Closure>,
    /// Closures being inlined, innermost last (recursion check).
    inlining: Vec<usize>,
    /// Loops around the current statement (within the closure being inlined, if any).
    loop_depth: u32,
    /// Arguments of expression closures being inlined.
    substitutions: Vec<onekernel_dsl::ir::Expr>,
    /// Names whose `let` failed to lower: their later uses are not reported again.
    failed_lets: Vec<String>,
    /// Locals typed by an unsuffixed integer literal with nothing else to go by
    /// (`let mut s = 0;`): the literal's span, for the hint when such a local meets an f32.
    pub(crate) int_literal_locals: HashMap<u32, Span>,
}

pub fn err(span: Span, msg: impl std::fmt::Display) -> syn::Error {
    syn::Error::new(span, msg)
}

impl Lowerer {
    pub fn new(params: Vec<Param>) -> Self {
        Lowerer {
            params,
            shared: Vec::new(),
            tiles: Vec::new(),
            locals: Vec::new(),
            spans: Vec::new(),
            span_map: Vec::new(),
            used_functions: BTreeSet::new(),
            scopes: vec![HashMap::new()],
            depth: 0,
            closures: Vec::new(),
            inlining: Vec::new(),
            loop_depth: 0,
            substitutions: Vec::new(),
            failed_lets: Vec::new(),
            int_literal_locals: HashMap::new(),
        }
    }

    /// Registers a compiler span and returns its IR id.
    pub fn span_id(&mut self, s: Span) -> SpanId {
        let start = s.start();
        self.spans.push(SrcLoc { line: start.line as u32, column: start.column as u32 + 1 });
        self.span_map.push(s);
        SpanId(self.spans.len() as u32 - 1)
    }

    /// The compiler span of an IR span (the call site when unknown).
    pub fn compiler_span(&self, id: SpanId) -> Span {
        self.span_map.get(id.0 as usize).copied().unwrap_or_else(Span::call_site)
    }

    fn declare(&mut self, name: &str, n: Name) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), n);
        }
    }

    pub fn declare_local(&mut self, name: &str, ty: VarType, mutable: bool) -> VarId {
        let id = VarId(self.locals.len() as u32);
        self.locals.push(LocalDecl { name: name.to_string(), ty, mutable });
        self.declare(name, Name::Local(id));
        id
    }

    pub fn declare_shared(&mut self, decl: SharedDecl) -> SharedId {
        let id = SharedId(self.shared.len() as u32);
        let name = decl.name.clone();
        self.shared.push(decl);
        self.declare(&name, Name::Shared(id));
        id
    }

    pub fn declare_tile(&mut self, decl: TileDecl) -> TileId {
        let id = TileId(self.tiles.len() as u32);
        let name = decl.name.clone();
        self.tiles.push(decl);
        self.declare(&name, Name::Tile(id));
        id
    }

    /// `len` tiles of one role as the array `name` (elements `name[0]` …).
    pub fn declare_tile_array(&mut self, name: &str, role: TileRole, len: u32, span: SpanId) -> TileId {
        let first = TileId(self.tiles.len() as u32);
        for i in 0..len {
            self.tiles.push(TileDecl { name: format!("{name}[{i}]"), role, span });
        }
        self.declare(name, Name::TileArray { first, len });
        first
    }

    pub fn lookup(&self, name: &str) -> Option<Name> {
        for scope in self.scopes.iter().rev() {
            if let Some(n) = scope.get(name) {
                return Some(*n);
            }
        }
        self.params.iter().position(|p| p.name == name).map(|i| Name::Param(ParamId(i as u32)))
    }

    /// Lowers a block in a new scope.
    pub fn block(&mut self, stmts: &[syn::Stmt]) -> syn::Result<Vec<onekernel_dsl::ir::Stmt>> {
        self.scopes.push(HashMap::new());
        self.depth += 1;
        let r = self.stmts(stmts);
        self.depth -= 1;
        self.scopes.pop();
        r
    }

    /// Lowers the kernel's top-level statements (same scope as the parameters).
    pub fn body(&mut self, stmts: &[syn::Stmt]) -> syn::Result<Vec<onekernel_dsl::ir::Stmt>> {
        self.stmts(stmts)
    }

    /// Lowers statements in order, going on after one that fails so that a compile
    /// reports every error of the kernel; a `let` that failed leaves its name undeclared,
    /// and its later uses are not reported again.
    fn stmts(&mut self, stmts: &[syn::Stmt]) -> syn::Result<Vec<onekernel_dsl::ir::Stmt>> {
        let mut out = Vec::new();
        let mut errors: Option<syn::Error> = None;
        for s in stmts {
            let Err(e) = self.stmt(s, &mut out) else { continue };
            if let syn::Stmt::Local(l) = s {
                self.failed_lets.extend(let_names(&l.pat));
            }
            for part in e {
                let msg = part.to_string();
                if msg.contains("cannot find") && self.failed_lets.iter().any(|n| msg.contains(&format!("`{n}` in"))) {
                    continue;
                }
                match &mut errors {
                    Some(all) => all.combine(part),
                    None => errors = Some(part),
                }
            }
        }
        match errors {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }
}

/// The names a `let` pattern binds.
fn let_names(p: &syn::Pat) -> Vec<String> {
    match p {
        syn::Pat::Ident(pi) => vec![pi.ident.to_string()],
        syn::Pat::Type(pt) => let_names(&pt.pat),
        syn::Pat::Tuple(t) => t.elems.iter().flat_map(let_names).collect(),
        _ => vec![],
    }
}
