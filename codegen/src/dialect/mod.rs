//! What differs between the three target languages, behind one trait, so that a single
//! IR printer ([`crate::print`]) emits every backend's kernel body.
//!
//! A dialect only spells things; what they mean is fixed by the IR semantics (see
//! `docs/CODEGEN.md`): e.g. every backend loads `f16` as 16-bit integers and widens
//! them with the same integer helper, so no backend depends on a driver's half rounding.

mod cuda;
mod glsl;
mod msl;

pub use cuda::Cuda;
pub use glsl::Glsl;
pub use msl::Msl;

use onekernel_dsl::ir::{Access, Builtin, Param, TileReduce, TileRole};
use onekernel_dsl::types::{Scalar, StorageType};

/// A buffer parameter as the signature and the bindings spell it.
pub struct SignatureBuffer<'a> {
    /// The identifier.
    pub name: &'a str,
    /// Its element type.
    pub elem: StorageType,
    /// Read-only or read-write.
    pub access: Access,
    /// Read by other workgroups after a `last_arrival` (MSL: `coherent(device)`).
    pub coherent: bool,
}

/// Memory a tile is loaded from or stored to, as printed.
#[derive(Clone)]
pub struct TileMemory {
    /// The array: a shared array's name, or a buffer's.
    pub array: String,
    /// It is workgroup-shared memory (else a storage buffer).
    pub shared: bool,
    /// A buffer the kernel does not write.
    pub read_only: bool,
    /// Element `(i, j)`'s index: `index + i · stride + j` (`col_major`: `+ j · stride + i`),
    /// counting f16 values for operand tiles and f32 values for accumulators.
    pub index: String,
    /// See `index`.
    pub stride: String,
    /// The memory holds the tile column by column.
    pub col_major: bool,
    /// A load must first order the group's earlier shared-memory writes (a warp,
    /// subgroup or SIMD-group barrier): the group may have written this shared array
    /// since its last barrier or fence (the printer tracks it).
    pub fence: bool,
}

/// A `tile_mma_panel`'s operands, printed (docs/DSL.md, "Panels").
pub struct PanelMma {
    /// The accumulator tiles: four (64 columns) or eight (128).
    pub accs: Vec<String>,
    /// The A tile.
    pub a: String,
    /// The shared array.
    pub array: String,
    /// The panel's first word.
    pub base: String,
    /// Its rows.
    pub rows: String,
    /// The first row read.
    pub row0: String,
    /// The first column read.
    pub col0: String,
    /// The panel's rows are B's rows.
    pub by_rows: bool,
    /// The group may have written the array since its last barrier (see
    /// [`TileMemory::fence`]).
    pub fence: bool,
}

/// One `async_copy` as the printer hands it to a dialect: `words` elements of type
/// `elem` of buffer `src` from `src_index` into shared array `dst` from `dst_index`
/// (printed expressions), past L1 where `bypass_l1`.
pub struct CopyText<'a> {
    /// The shared array's name.
    pub dst: &'a str,
    /// Its first element.
    pub dst_index: &'a str,
    /// The buffer's name.
    pub src: &'a str,
    /// Its first element.
    pub src_index: &'a str,
    /// The elements' type.
    pub elem: Scalar,
    /// Elements per copy: 1, 2 or 4.
    pub words: u32,
    /// `async_copy_bypass_l1`: a cache hint.
    pub bypass_l1: bool,
}

/// A shared-array index `base + ((x >> k) & mask)` as printed parts (`mask + 1` a power
/// of two): a table's start plus a bit field of a word.
pub struct FieldText {
    /// The table's start (elements).
    pub base: String,
    /// The word.
    pub x: String,
    /// The shift.
    pub k: String,
    /// The shift's value where it is a literal.
    pub k_value: Option<u32>,
    /// The field's mask.
    pub mask: u32,
}

/// One target language.
pub trait Dialect {
    /// The tera template of a whole kernel in this language (under `templates/`).
    fn template(&self) -> &'static str;

    /// The backend whose artifact this language is (`cuda`, `vulkan`, `metal`), for
    /// errors and the manifest.
    fn backend(&self) -> &'static str;

    /// The kernel entry's parameters and, where the entry calls an inner function, the
    /// arguments it passes (`buffers` in binding order; `push`: whether the kernel has
    /// push constants, passed as one `ok_push_<kernel>` block). Languages whose entry
    /// takes no parameters (GLSL: bindings and push constants are globals) keep the
    /// default, none.
    fn kernel_signature(&self, kernel: &str, buffers: &[SignatureBuffer], push: bool) -> (Vec<String>, Vec<String>) {
        let _ = (kernel, buffers, push);
        (Vec::new(), Vec::new())
    }

    /// Whether shared arrays past a static limit go to a dynamic region
    /// ([`crate::analysis::KernelInfo::cuda_dynamic_shared`]).
    fn has_dynamic_shared(&self) -> bool {
        false
    }

    /// `cuda`, `glsl` or `msl`.
    fn name(&self) -> &'static str;

    /// The spelling of a value type.
    fn scalar(&self, s: Scalar) -> &'static str;

    /// An f32 constant given by its bits (exact: finite values print as shortest
    /// round-trip decimals, everything else through a bit cast).
    fn float_literal(&self, bits: u32) -> String {
        let v = f32::from_bits(bits);
        if v.is_finite() && (v == 0.0 || v.is_normal()) {
            let mut s = format!("{v:?}");
            if !s.contains('.') && !s.contains('e') {
                s.push_str(".0");
            }
            format!("{s}{}", self.float_suffix())
        } else {
            self.bitcast(Scalar::U32, Scalar::F32, &format!("0x{bits:08x}u"))
        }
    }

    /// `f` for C-family languages, empty for GLSL.
    fn float_suffix(&self) -> &'static str;

    /// A u32 constant.
    fn uint_literal(&self, v: u32) -> String {
        format!("{v}u")
    }

    /// An i32 constant.
    fn int_literal(&self, v: i32) -> String {
        if v == i32::MIN {
            "(-2147483647 - 1)".to_string()
        } else if v < 0 {
            format!("({v})")
        } else {
            v.to_string()
        }
    }

    /// A component of a built-in id.
    fn builtin(&self, b: Builtin, axis: u8) -> String;

    /// The invocation's linear index in its workgroup.
    fn local_linear_id(&self) -> &'static str;

    /// How the body reads a push constant.
    fn push_ref(&self, p: &Param) -> String;

    /// How the body reads a specialization constant.
    fn spec_ref(&self, p: &Param) -> String;

    /// How a buffer's elements are declared: every 16-bit type is an unsigned 16-bit
    /// integer (f16/bf16 are converted by the exact integer helpers), bytes are bytes.
    fn storage_type(&self, t: StorageType) -> &'static str;

    /// Element `index` of buffer `name`, raw.
    fn buffer_element(&self, name: &str, index: &str) -> String;

    /// Converts a 32-bit value to a narrow storage type (keeping the low bits).
    fn narrow(&self, t: StorageType, value: &str) -> String {
        format!("{}({value})", self.storage_type(t))
    }

    /// The expression that loads element `index` of buffer `name` as a 32-bit value.
    fn buffer_load(&self, name: &str, elem: StorageType, index: &str) -> String {
        let raw = self.buffer_element(name, index);
        match elem {
            StorageType::F32 | StorageType::I32 | StorageType::U32 => raw,
            StorageType::F16 => format!("ok_f16_to_f32({})", self.cast(Scalar::I32, Scalar::U32, &raw)),
            StorageType::Bf16 => format!("ok_bf16_to_f32({})", self.cast(Scalar::I32, Scalar::U32, &raw)),
            StorageType::U8 | StorageType::U16 => self.cast(Scalar::I32, Scalar::U32, &raw),
            StorageType::I8 => self.cast(Scalar::U32, Scalar::I32, &raw),
        }
    }

    /// The statement (without `;`) that stores 32-bit `value` into element `index`.
    fn buffer_store(&self, name: &str, elem: StorageType, index: &str, value: &str) -> String {
        let v = match elem {
            StorageType::F32 | StorageType::I32 | StorageType::U32 => value.to_string(),
            StorageType::F16 => self.narrow(elem, &format!("ok_f32_to_f16({value})")),
            StorageType::Bf16 => self.narrow(elem, &format!("ok_f32_to_bf16({value})")),
            StorageType::U16 | StorageType::U8 | StorageType::I8 => self.narrow(elem, value),
        };
        format!("{} = {v}", self.buffer_element(name, index))
    }

    /// Reinterprets the bits of `e` (f32, i32, u32).
    fn bitcast(&self, from: Scalar, to: Scalar, e: &str) -> String;

    /// Value conversion `e as to`.
    fn cast(&self, from: Scalar, to: Scalar, e: &str) -> String {
        if from == to {
            return e.to_string();
        }
        format!("{}({e})", self.scalar(to))
    }

    /// i32 `+ − ×` and unary `−` with wrap-around. C++ backends go through unsigned
    /// arithmetic (signed overflow is undefined behaviour there); GLSL wraps natively.
    fn wrapping_i32(&self, op: &str, a: &str, b: Option<&str>) -> String;

    /// `barrier()`: workgroup execution barrier ordering shared memory.
    fn barrier(&self) -> &'static str;

    /// `name = last_arrival(…)` at the buffer element `counter` with `count` (printed
    /// expressions): every invocation's buffer writes released at device scope, a
    /// barrier, one atomic increment by invocation 0 (the last sets the counter back to
    /// 0), the result through the shared flag [`crate::print::ARRIVAL_FLAG`], and in the
    /// last workgroup an acquire before its reads. One protocol; the dialects supply its
    /// pieces ([`Dialect::device_fence`], [`Dialect::arrival_atomics`]).
    fn arrive(&self, counter: &str, count: &str, name: &str) -> Vec<String> {
        let (fence, u) = (self.device_fence(), self.scalar(Scalar::U32));
        let (add, reset) = self.arrival_atomics(counter);
        let flag = crate::print::ARRIVAL_FLAG;
        vec![
            fence.to_string(),
            format!("{};", self.barrier()),
            "if (ok_lindex == 0u) {".into(),
            format!("    const {u} ok_last = {add} + 1u == ({count}) ? 1u : 0u;"),
            format!("    if (ok_last != 0u) {{ {reset}; }}"),
            format!("    {flag}[0] = ok_last;"),
            "}".into(),
            format!("{};", self.barrier()),
            format!("{name} = {flag}[0] != 0u;"),
            format!("if ({name}) {{ {fence} }}"),
        ]
    }

    /// A statement ordering this invocation's buffer writes and reads at device scope
    /// (a release before an arrival, an acquire after the last one).
    fn device_fence(&self) -> &'static str;

    /// At buffer element `counter`: an atomic increment that yields the old value, and an
    /// atomic store of 0 (statement without `;`).
    fn arrival_atomics(&self, counter: &str) -> (String, String);

    /// The vector type of `words` (2 or 4) elements of type `elem` (`uint4`, `uvec4` …).
    fn word_vector(&self, elem: Scalar, words: u32) -> String;

    /// The name under which `load_words` reads buffer `buffer` as vectors of `words`
    /// elements: GLSL declares such a view; the C++ dialects cast the buffer pointer.
    fn word_view(&self, buffer: &str, words: u32) -> String {
        format!("ok_w{words}_{buffer}")
    }

    /// The vector of `words` elements of `buffer` at element `index` (a multiple of
    /// `words`), read with one aligned load.
    fn word_load(&self, buffer: &str, index: &str, elem: Scalar, words: u32) -> String;

    /// `load_words`: one aligned load of `words` elements of `buffer` from `src_index`
    /// into local array `dst` from `dst_index`.
    fn load_words(&self, dst: &str, dst_index: &str, buffer: &str, src_index: &str, elem: Scalar, words: u32) -> String {
        self.unpack_words(dst, dst_index, &self.word_load(buffer, src_index, elem, words), elem, words)
    }

    /// The vector of `words` elements of shared array `array` at element `index` (a
    /// multiple of `words`), read with one aligned load, where the language can view a
    /// shared array as vectors; `None` where it cannot.
    fn shared_word_load(&self, _array: &str, _index: &str, _elem: Scalar, _words: u32) -> Option<String> {
        None
    }

    /// `load_words` from a shared array: one aligned load where the language has one
    /// ([`Dialect::shared_word_load`]), otherwise the `words` element reads, which the
    /// driver's compiler may merge (GLSL cannot alias a shared array with vectors).
    fn load_shared_words(&self, dst: &str, dst_index: &str, array: &str, src_index: &str, elem: Scalar, words: u32) -> String {
        if let Some(load) = self.shared_word_load(array, src_index, elem, words) {
            return self.unpack_words(dst, dst_index, &load, elem, words);
        }
        let u = self.scalar(Scalar::U32);
        let mut body = format!("{{ const {u} ok_ld = {dst_index}; const {u} ok_ls = {src_index};");
        for w in 0..words {
            body.push_str(&format!(" {dst}[ok_ld + {w}u] = {array}[ok_ls + {w}u];"));
        }
        body.push_str(" }");
        body
    }

    /// The place of the vector of `words` elements of writable buffer `buffer` at element
    /// `index` (a multiple of `words`), written with one aligned store, where the
    /// language can view a buffer as vectors for writing; `None` where it cannot.
    fn word_store_place(&self, _buffer: &str, _index: &str, _elem: Scalar, _words: u32) -> Option<String> {
        None
    }

    /// `store_words`: `words` elements of local array `src` from `src_index` into
    /// `buffer` from `index`, as one aligned store where the language has one
    /// ([`Dialect::word_store_place`]), otherwise as the element stores. GLSL writes the
    /// elements: a second, vector-typed view of a binding that is also written through
    /// its own declaration would need the two views' writes ordered, which GLSL does not
    /// state for aliased blocks.
    #[allow(clippy::too_many_arguments)]
    fn store_words(&self, buffer: &str, elem: StorageType, index: &str, src: &str, src_index: &str, words: u32) -> String {
        let u = self.scalar(Scalar::U32);
        let value = elem.value_type();
        if let Some(place) = self.word_store_place(buffer, index, value, words) {
            let v = self.word_vector(value, words);
            let mut body = format!("{{ const {u} ok_si = {src_index}; {v} ok_sw;");
            for (w, lane) in ["x", "y", "z", "w"].iter().take(words as usize).enumerate() {
                body.push_str(&format!(" ok_sw.{lane} = {src}[ok_si + {w}u];"));
            }
            body.push_str(&format!(" {place} = ok_sw; }}"));
            return body;
        }
        let mut body = format!("{{ const {u} ok_sj = {index}; const {u} ok_si = {src_index};");
        for w in 0..words {
            body.push_str(&format!(" {};", self.buffer_store(buffer, elem, &format!("ok_sj + {w}u"), &format!("{src}[ok_si + {w}u]"))));
        }
        body.push_str(" }");
        body
    }

    /// Stores the lanes of vector expression `load` (`words` elements) into local array
    /// `dst` from `dst_index`.
    fn unpack_words(&self, dst: &str, dst_index: &str, load: &str, elem: Scalar, words: u32) -> String {
        self.unpack_words_as(dst, dst_index, load, elem, words, &|lane| lane.to_string())
    }

    /// [`Dialect::unpack_words`] with each lane passed through `convert` before it is
    /// stored (a word stored into an array the dialect declares as f16 pairs).
    fn unpack_words_as(&self, dst: &str, dst_index: &str, load: &str, elem: Scalar, words: u32, convert: &dyn Fn(&str) -> String) -> String {
        let v = self.word_vector(elem, words);
        let u = self.scalar(Scalar::U32);
        let mut body = format!("{{ const {v} ok_lw = {load}; const {u} ok_ld = {dst_index};");
        for (w, lane) in ["x", "y", "z", "w"].iter().take(words as usize).enumerate() {
            body.push_str(&format!(" {dst}[ok_ld + {w}u] = {};", convert(&format!("ok_lw.{lane}"))));
        }
        body.push_str(" }");
        body
    }

    /// `async_copy`: the lines of copy `c`. By default a synchronous copy (the language
    /// has no asynchronous one), which completes before any `async_wait`: one aligned
    /// vector load of the `words` elements (the indices are multiples of `words`), then
    /// its lanes stored (one 16-byte load instead of four element reads took 4 % off
    /// NVIDIA Vulkan's tensor-core decode step, docs/PERFORMANCE.md). `bypass_l1` is a
    /// cache hint a synchronous copy has no use for.
    fn async_copy(&self, c: &CopyText) -> Vec<String> {
        if c.words == 1 {
            return vec![format!("{}[{}] = {};", c.dst, c.dst_index, self.buffer_element(c.src, c.src_index))];
        }
        vec![self.unpack_words(c.dst, c.dst_index, &self.word_load(c.src, c.src_index, c.elem, c.words), c.elem, c.words)]
    }

    /// `async_commit`: the line that closes a group of copies, if the language has one.
    fn async_commit(&self) -> Option<&'static str> {
        None
    }

    /// `async_wait(pending)`: the line that waits for the older groups, if the language
    /// has asynchronous copies.
    fn async_wait(&self, _pending: u32) -> Option<String> {
        None
    }

    /// The line that asks the compiler to unroll the `for` loop after it, if the language
    /// has one (see `Printer`'s rule for which loops get it).
    fn unroll_hint(&self) -> Option<&'static str> {
        None
    }

    /// Whether `&&` / `||` over specialization constants whose right operand is itself
    /// logic are printed as `?:` (GLSL: glslang turned them into SPIR-V that uses an id
    /// before defining it; docs/CODEGEN.md, "Specialization constants and glslang").
    fn spec_logic_as_select(&self) -> bool {
        false
    }

    /// The type in which shared u32 arrays that operand tiles load from are declared, and
    /// in which buffers they load from are viewed, if not u32 (GLSL: `f16vec2`, the
    /// cooperative matrix's component type, which NVIDIA's driver loads without a
    /// detour); the DSL's word accesses then convert with [`Dialect::word_from_halves`]
    /// and [`Dialect::halves_from_word`].
    fn halves_type(&self) -> Option<&'static str> {
        None
    }

    /// The u32 word of a pair of f16 values of [`Dialect::halves_type`], bit for bit.
    fn word_from_halves(&self, e: &str) -> String {
        e.to_string()
    }

    /// The pair of f16 values of a u32 word, bit for bit.
    fn halves_from_word(&self, e: &str) -> String {
        e.to_string()
    }

    /// The declaration of shared array `name` of `len` words as [`Dialect::halves_type`]
    /// pairs (without `;`), where the dialect has such a type.
    fn halves_shared_decl(&self, name: &str, len: &str) -> Option<String> {
        self.halves_type().map(|ty| format!("{ty} {name}[{len}]"))
    }

    /// The name of the [`Dialect::halves_type`] view of a buffer.
    fn halves_view(&self, buffer: &str) -> String {
        format!("ok_h2_{buffer}")
    }

    /// The declaration of a register tile of `role` named `name` (without `;`), at the
    /// top of the kernel body.
    fn tile_decl(&self, role: TileRole, name: &str) -> String;

    /// `tile_fill(acc, value)` (or, with `scale`, `tile_scale(acc, value)`): the lines.
    fn tile_fill(&self, name: &str, value: &str, scale: bool) -> Vec<String>;

    /// `tile_mma(acc, a, b)`: the lines.
    fn tile_mma(&self, acc: &str, a: &str, b: &str) -> Vec<String>;

    /// `tile_load(tile, …)` of a tile of `role`: the lines.
    fn tile_load(&self, role: TileRole, name: &str, m: &TileMemory) -> Vec<String>;

    /// `tile_store(acc, …)`: the lines.
    fn tile_store(&self, name: &str, m: &TileMemory) -> Vec<String>;

    /// `tile_get(vals, acc, scratch, …)`: this invocation's slots of `tile` into the
    /// local array `vals` (docs/DSL.md, "Element access"); `scratch` is a shared f32 array
    /// (row-major) for dialects without register access.
    fn tile_get(&self, vals: &str, tile: &str, scratch: &TileMemory) -> Vec<String>;

    /// `tile_set(tile, vals, scratch, …)` of a tile of `role` (accumulator, or A operand
    /// rounded to f16).
    fn tile_set(&self, role: TileRole, tile: &str, vals: &str, scratch: &TileMemory) -> Vec<String>;

    /// `tile_coords(rows, cols)`.
    fn tile_coords(&self, rows: &str, cols: &str) -> Vec<String>;

    /// `tile_row_max(vals)` and the other slot reductions, in place.
    fn tile_reduce(&self, vals: &str, op: TileReduce) -> Vec<String>;

    /// `tile_mma_panel(…)`: the lines. By default four B tiles loaded from the panel
    /// (rows of [`onekernel_dsl::ir::PANEL_ROW_WORDS`] words, the layout of this
    /// dialect's `ok_panel_word_u32`) and four `tile_mma`s, complete at once.
    fn tile_mma_panel(&self, p: &PanelMma) -> Vec<String> {
        let row = 2 * onekernel_dsl::ir::PANEL_ROW_WORDS;
        let mut body = vec![self.tile_decl(TileRole::B, "ok_pb") + ";"];
        for (j, acc) in p.accs.iter().enumerate() {
            // B_j's (k, n): (row0 + 16j + n, col0 + k) by columns, or (row0 + k, col0 + 16j + n).
            let index = if p.by_rows {
                format!("2u * ({}) + ({}) * {row}u + ({}) + {}u", p.base, p.row0, p.col0, 16 * j)
            } else {
                format!("2u * ({}) + (({}) + {}u) * {row}u + ({})", p.base, p.row0, 16 * j, p.col0)
            };
            let m = TileMemory {
                array: p.array.clone(),
                shared: true,
                read_only: false,
                index,
                stride: format!("{row}u"),
                col_major: !p.by_rows,
                fence: p.fence && j == 0,
            };
            body.extend(self.tile_load(TileRole::B, "ok_pb", &m));
            body.extend(self.tile_mma(acc, &p.a, "ok_pb"));
        }
        let mut lines = vec!["{".to_string()];
        lines.extend(body.into_iter().map(|l| format!("    {l}")));
        lines.push("}".into());
        lines
    }

    /// `tile_mma_wait()` in a kernel with `tiles` (role, name): the lines. Nothing where
    /// `tile_mma_panel` completes at once.
    fn tile_mma_wait(&self, tiles: &[(TileRole, String)]) -> Vec<String> {
        let _ = tiles;
        Vec::new()
    }

    /// Declaration of a workgroup-shared array of `len` elements (without `;`).
    fn shared_decl(&self, elem: Scalar, name: &str, len: &str) -> String;

    /// `barrier()` in a kernel that reads panels: where `tile_mma_panel` reads them
    /// through another path than the invocations' stores (Hopper's async proxy), the
    /// stores before the barrier are ordered before those reads too.
    fn panel_barrier(&self) -> &'static str {
        self.barrier()
    }

    /// Declaration of a shared array that holds `tile_mma_panel` panels (without `;`).
    fn panel_shared_decl(&self, elem: Scalar, name: &str, len: &str) -> String {
        self.shared_decl(elem, name, len)
    }

    /// The length text of a shared array: its per-variant expression `size` where the
    /// language sizes arrays by spec constants (CUDA template parameters, GLSL
    /// specialization constants), otherwise the largest length `len`.
    fn shared_len(&self, len: u32, size: Option<String>) -> String {
        size.unwrap_or_else(|| len.to_string())
    }

    /// Declaration of a local array with the given element values (without `;`).
    fn array_decl(&self, elem: Scalar, name: &str, len: u32, elems: &[String]) -> String;

    /// Population count as u32.
    fn count_ones(&self, e: &str) -> String;

    /// `fast_exp(e)`: the backend's hardware approximation of e^x (only in `fast`
    /// kernels).
    fn fast_exp(&self, e: &str) -> String;

    /// `fast_exp2(e)`: the hardware's 2^x.
    fn fast_exp2(&self, e: &str) -> String;

    /// A read of the 4-byte-element shared array `array` at element `f.base + ((f.x >>
    /// f.k) & f.mask)`, printed as a read at byte offset `4·base + ((x >> (k − 2)) & (mask
    /// << 2))` where the dialect addresses shared memory by bytes: the scaling folds into
    /// the field's shift and mask. `None` (the default) keeps the element index.
    fn shared_field_load(&self, array: &str, elem: Scalar, f: &FieldText) -> Option<String> {
        let _ = (array, elem, f);
        None
    }

    /// Qualifiers of a library function definition.
    fn function_prefix(&self) -> &'static str;

    /// Qualifier of a local variable declaration (e.g. GLSL's `precise`).
    fn local_prefix(&self, _ty: Scalar) -> &'static str {
        ""
    }
}

/// The element access of dialects that reach a tile's values only through memory
/// (GLSL's cooperative matrices, Metal's `simdgroup_matrix`): slots in
/// [`onekernel_dsl::ir::SlotLayout::RowPairs`], lane `l` holding row `l / 2`, columns
/// `8 · (l mod 2)` …, each row shared by the lanes `l` and `l ^ 1`.
pub(crate) mod row_pairs {
    use onekernel_dsl::ir::TileReduce;

    /// The group's lane.
    pub const LANE: &str = "(ok_lindex & 31u)";

    /// Index of this lane's slot `e` (a printed expression) in row-major memory of
    /// `index`, `stride`.
    pub fn slot_index(index: &str, stride: &str, e: &str) -> String {
        format!("({index}) + ({LANE} >> 1u) * ({stride}) + 8u * ({LANE} & 1u) + {e}")
    }

    /// `tile_coords` as a loop of `unroll` (the dialect's unrolling attribute).
    pub fn coords(rows: &str, cols: &str, unroll: &str) -> Vec<String> {
        vec![format!("{unroll}for (uint ok_e = 0u; ok_e < 8u; ok_e++) {{ {rows}[ok_e] = {LANE} >> 1u; {cols}[ok_e] = 8u * ({LANE} & 1u) + ok_e; }}")]
    }

    /// A reduction: over the lane's eight slots, then across lanes by `shuffle_xor(value,
    /// mask)` (the lane pair of a row, or all 32 lanes).
    pub fn reduce(vals: &str, op: TileReduce, shuffle_xor: &dyn Fn(&str, u32) -> String, unroll: &str) -> Vec<String> {
        let comb = |a: &str, b: &str| match op {
            TileReduce::RowSum => format!("{a} + {b}"),
            _ => format!("ok_max_f32({a}, {b})"),
        };
        let mut lines = vec![
            format!("{{ float ok_r = {vals}[0];"),
            format!("{unroll}for (uint ok_e = 1u; ok_e < 8u; ok_e++) {{ ok_r = {}; }}", comb("ok_r", &format!("{vals}[ok_e]"))),
        ];
        let masks: &[u32] = if op == TileReduce::AllMax { &[1, 2, 4, 8, 16] } else { &[1] };
        for &m in masks {
            lines.push(format!("ok_r = {};", comb("ok_r", &shuffle_xor("ok_r", m))));
        }
        lines.push(format!("{unroll}for (uint ok_e = 0u; ok_e < 8u; ok_e++) {{ {vals}[ok_e] = ok_r; }} }}"));
        lines
    }
}
