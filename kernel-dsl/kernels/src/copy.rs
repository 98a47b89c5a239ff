//! The benchmarks' memory kernels: a plain copy, their bandwidth baseline (what the
//! memory system gives a generated kernel with the same 4-byte accesses), and a read
//! of a buffer, their L2 flush.

use onekernel_macros::kernel;

/// `dst[i] = src[i]` for `i < n`; each invocation copies four words, a workgroup's
/// accesses contiguous.
#[kernel(workgroup = 256)]
pub fn copy_words(#[len(n)] src: &[u32], #[len(n)] dst: &mut [u32], #[push] n: u32) {
    let base = group_id().x * 1024 + local_id().x;
    for k in 0..4u32 {
        let i = base + k * 256;
        if i < n {
            dst[i] = src[i];
        }
    }
}

/// Reads `words[i]` for `i < n` and writes `tag` to `hits[0]` where the four words an
/// invocation reads (as `copy_words` lays them out) XOR to `tag`; nothing else is
/// written. The benchmarks run it over zeroed scratch with a tag no invocation meets
/// before each timed launch: it replaces the L2's contents with clean lines, so the
/// timed kernel reads from DRAM without writing back what a flush by a memset left
/// dirty (docs/PERFORMANCE.md, "Method").
#[kernel(workgroup = 256)]
pub fn read_words(#[len(n)] words: &[u32], hits: &mut [u32], #[push] n: u32, #[push] tag: u32) {
    let base = group_id().x * 1024 + local_id().x;
    let mut x = 0u32;
    for k in 0..4u32 {
        let i = base + k * 256;
        if i < n {
            x = x ^ words[i];
        }
    }
    if x == tag {
        hits[0] = tag;
    }
}
