//! Validation cases of the catalogue's kernels: shapes that cover full and partial
//! workgroups, rows shorter than a workgroup, and several rows.

use onekernel_dsl::cases::{Case, Fill};
use onekernel_dsl::types::Literal;

fn rms_norm(rows: u32, cols: u32) -> Case {
    let n = (rows * cols) as usize;
    Case::new(format!("{rows} rows x {cols}"), [rows, 1, 1])
        .buffer("x", n, Fill::Uniform { lo: -3.0, hi: 3.0 })
        .buffer("w", cols as usize, Fill::Uniform { lo: 0.5, hi: 1.5 })
        .buffer("y", n, Fill::Zeros)
        .scalar("n_cols", Literal::U32(cols))
        .scalar("eps", Literal::f32(1e-6))
}

fn softmax(rows: u32, cols: u32, scale: f32) -> Case {
    let n = (rows * cols) as usize;
    Case::new(format!("{rows} rows x {cols}, scale {scale}"), [rows, 1, 1])
        .buffer("x", n, Fill::Uniform { lo: -8.0, hi: 8.0 })
        .buffer("y", n, Fill::Zeros)
        .scalar("n_cols", Literal::U32(cols))
        .scalar("scale", Literal::f32(scale))
}

/// A cache format of `attn_decode_chunk`: its `k_type` code, row bytes at D = 128, and
/// the word fill that keeps every stored value finite and normal: each 16-bit half gets
/// exponent bits 0b011xx (|x| in [1/8, 2)) for f16 and for the f16 scales and quant
/// bytes of q8_0 / q4_0 (34- and 18-byte blocks start at even bytes, so each scale is a
/// whole half); f32 and bf16 get exponents 120 … 127.
#[derive(Clone, Copy)]
enum CacheFormat {
    F32,
    F16,
    Bf16,
    Q8_0,
    Q4_0,
}

impl CacheFormat {
    fn code(self) -> u32 {
        self as u32
    }

    fn row_bytes(self, d: usize) -> usize {
        match self {
            CacheFormat::F32 => 4 * d,
            CacheFormat::F16 | CacheFormat::Bf16 => 2 * d,
            CacheFormat::Q8_0 => d / 32 * 34,
            CacheFormat::Q4_0 => d / 32 * 18,
        }
    }

    fn fill(self) -> Fill {
        match self {
            CacheFormat::F32 => Fill::Bits { and: 0x83ff_ffff, or: 0x3c00_0000 },
            CacheFormat::Bf16 => Fill::Bits { and: 0x83ff_83ff, or: 0x3c00_3c00 },
            CacheFormat::F16 | CacheFormat::Q8_0 | CacheFormat::Q4_0 => Fill::Bits { and: 0x8fff_8fff, or: 0x3000_3000 },
        }
    }
}

/// B = 2 sequences of up to 300 tokens, 8 query heads over 2 KV heads (GQA 4), D = 128,
/// pages of 16 tokens; chunks of 64 (fast) or 256 (deterministic) tokens.
fn attention_chunk(kf: CacheFormat, vf: CacheFormat, label: &str, softcap: f32, max_bias: f32) -> Case {
    let (b, hq, hkv, d, p, pages_per_seq, n_chunks) = (2u32, 8u32, 2u32, 128usize, 16u32, 19u32, 5u32);
    let n_pages = (b * pages_per_seq) as usize;
    let words = |f: CacheFormat| n_pages * p as usize * hkv as usize * f.row_bytes(d) / 4;
    Case::new(label, [n_chunks, hq, b])
        .buffer("q", (b * hq) as usize * d, Fill::Uniform { lo: -1.0, hi: 1.0 })
        .buffer("k", words(kf), kf.fill())
        .buffer("v", words(vf), vf.fill())
        .buffer("block_table", n_pages, Fill::Ints { lo: 0, hi: n_pages as i64 - 1 })
        .buffer("kv_len", b as usize, Fill::Ints { lo: 1, hi: 300 })
        .buffer("mask", (b * pages_per_seq * p) as usize, Fill::Uniform { lo: -2.0, hi: 0.0 })
        .buffer("part_m", (b * hq * n_chunks) as usize, Fill::Zeros)
        .buffer("part_l", (b * hq * n_chunks) as usize, Fill::Zeros)
        .buffer("part_acc", (b * hq * n_chunks) as usize * d, Fill::Zeros)
        .scalar("n_heads", Literal::U32(hq))
        .scalar("n_kv_heads", Literal::U32(hkv))
        .scalar("page_size", Literal::U32(p))
        .scalar("pages_per_seq", Literal::U32(pages_per_seq))
        .scalar("n_chunks", Literal::U32(n_chunks))
        .scalar("chunk_tokens", Literal::U32(64))
        .scalar("scale", Literal::f32(0.088_388_35))
        .scalar("softcap", Literal::f32(softcap))
        .scalar("max_bias", Literal::f32(max_bias))
        .scalar("has_mask", Literal::U32(1))
        .scalar("k_type", Literal::U32(kf.code()))
        .scalar("v_type", Literal::U32(vf.code()))
}

fn attention_combine() -> Case {
    let (b, hq, d, n_chunks) = (2u32, 8u32, 128usize, 5u32);
    let parts = (b * hq * n_chunks) as usize;
    Case::new("2 seqs x 8 heads x 5 chunks, sinks", [hq, b, 1])
        .buffer("part_m", parts, Fill::Uniform { lo: -5.0, hi: 5.0 })
        .buffer("part_l", parts, Fill::Uniform { lo: 0.5, hi: 50.0 })
        .buffer("part_acc", parts * d, Fill::Uniform { lo: -20.0, hi: 20.0 })
        .buffer("kv_len", b as usize, Fill::Ints { lo: 1, hi: 300 })
        .buffer("sinks", hq as usize, Fill::Uniform { lo: -3.0, hi: 3.0 })
        .buffer("out", (b * hq) as usize * d, Fill::Zeros)
        .scalar("n_heads", Literal::U32(hq))
        .scalar("n_chunks", Literal::U32(n_chunks))
        .scalar("chunk_tokens", Literal::U32(64))
        .scalar("has_sinks", Literal::U32(1))
}

/// The validation cases of a catalogue kernel, by name; `None` for a kernel without
/// cases (the validator reports that as an error, never as a pass).
pub fn validation_cases(kernel: &str) -> Option<Vec<Case>> {
    Some(match kernel {
        "rms_norm_f32" | "rms_norm_f16" => vec![rms_norm(1, 100), rms_norm(4, 1000), rms_norm(3, 4096)],
        "softmax_rows" => vec![softmax(1, 5, 1.0), softmax(4, 1000, 0.125), softmax(2, 4096, 2.0)],
        "attn_decode_combine" => vec![attention_combine()],
        "attn_decode_chunk" => {
            use CacheFormat::*;
            vec![
                attention_chunk(F16, F16, "f16 K/V, B=2 Hq=8 Hkv=2 D=128 P=16, mask", 0.0, 0.0),
                attention_chunk(Q8_0, Bf16, "q8_0 K, bf16 V, B=2 Hq=8 Hkv=2 D=128 P=16, mask, softcap 20, ALiBi 8", 20.0, 8.0),
                attention_chunk(F32, Q4_0, "f32 K, q4_0 V, B=2 Hq=8 Hkv=2 D=128 P=16, mask", 0.0, 0.0),
            ]
        }
        _ => return None,
    })
}
