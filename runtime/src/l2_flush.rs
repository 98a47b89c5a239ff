//! The benchmarks' L2 flush: what a GPU backend runs before each timed unit so that the
//! unit reads its inputs from DRAM. It is the catalogue's `read_words` kernel over zeroed
//! scratch larger than the L2: reading leaves the L2 full of clean lines. A flush that
//! wrote its scratch (a memset or a fill, the method until the twenty-fifth session) left
//! them dirty, and the timed kernel paid for their write-back as it evicted them — on
//! the H200 about 6–7 µs per CUDA decode step (docs/PERFORMANCE.md, "Method").

use crate::args::Args;
use crate::backend::{BackendError, Launch};
use crate::buffer::HostBuffer;
use onekernel_dsl::manifest::KernelManifest;
use onekernel_dsl::types::StorageType;
use std::path::Path;

/// The catalogue kernel a flush runs.
pub const READER: &str = "read_words";

/// Words one `read_words` workgroup reads (256 invocations, four words each).
const WORDS_PER_GROUP: u64 = 1024;

/// Workgroups a flush may dispatch: Vulkan's guaranteed minimum of
/// `maxComputeWorkGroupCount[0]`, so one dispatch covers the scratch everywhere.
const MAX_GROUPS: u64 = 65535;

/// The tag a flush passes: zeroed scratch XORs to 0, so no invocation writes.
const NEVER: u32 = u32::MAX;

/// A flush of `bytes` of scratch by `reader`, the manifest's `read_words`.
#[derive(Clone, Copy, Debug)]
pub struct L2Flush<'a> {
    /// The manifest entry of `read_words`.
    pub reader: &'a KernelManifest,
    /// Directory its artifact paths are relative to.
    pub artifacts: &'a Path,
    /// Bytes of scratch read before each timed unit: more than the L2 holds.
    pub bytes: u64,
}

impl<'a> L2Flush<'a> {
    /// Checks, before a backend prepares anything, that `reader` is `read_words` with its
    /// interface (buffers `words`, `hits`; push constants `n`, `tag`; one variant) and
    /// that `bytes` is a non-zero whole number of words one dispatch covers.
    pub fn check(&self, backend: &'static str) -> Result<(), BackendError> {
        let err = |message: String| Err(BackendError::Arguments { kernel: self.reader.name.clone(), backend, message });
        let buffers: Vec<&str> = self.reader.buffers.iter().map(|b| b.name.as_str()).collect();
        let push: Vec<&str> = self.reader.push_constants.iter().map(|p| p.name.as_str()).collect();
        if self.reader.name != READER || buffers != ["words", "hits"] || push != ["n", "tag"] || self.reader.variants.len() != 1 {
            return err(format!("an L2 flush runs `{READER}` (buffers words, hits; push constants n, tag; one variant), not this kernel (buffers {buffers:?}, push constants {push:?})"));
        }
        if self.bytes == 0 || !self.bytes.is_multiple_of(4) || self.bytes.div_ceil(4 * WORDS_PER_GROUP) > MAX_GROUPS {
            return err(format!("an L2 flush reads a whole number of 4-byte words, at least one and at most {} bytes; got {}", MAX_GROUPS * WORDS_PER_GROUP * 4, self.bytes));
        }
        Ok(())
    }

    /// Words of scratch.
    pub fn words(&self) -> u32 {
        (self.bytes / 4) as u32
    }

    /// The dispatch of `read_words` over the scratch.
    pub fn launch(&self) -> Launch<'a> {
        let spec: &'a [_] = self.reader.variants.first().map_or(&[], |v| v.spec.as_slice());
        Launch { kernel: self.reader, artifacts: self.artifacts, spec, groups: [(self.words() as u64).div_ceil(WORDS_PER_GROUP) as u32, 1, 1] }
    }

    /// Its arguments: zeroed scratch as `words`, one word of `hits`, a tag no invocation
    /// meets.
    pub fn args(&self) -> Args {
        Args::new()
            .buffer("words", HostBuffer::zeros(StorageType::U32, self.words() as usize))
            .buffer("hits", HostBuffer::zeros(StorageType::U32, 1))
            .scalar("n", self.words())
            .scalar("tag", NEVER)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use onekernel_dsl::manifest::Manifest;
    use std::path::PathBuf;

    fn manifest() -> (Manifest, PathBuf) {
        let generated = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../generated");
        (serde_json::from_slice(&std::fs::read(generated.join("manifest.json")).unwrap()).unwrap(), generated)
    }

    #[test]
    fn a_flush_reads_every_word_of_its_scratch_in_one_dispatch() {
        let (m, dir) = manifest();
        let f = L2Flush { reader: m.kernel(READER).unwrap(), artifacts: &dir, bytes: 128 << 20 };
        f.check("cuda").unwrap();
        let l = f.launch();
        assert_eq!(l.groups, [32768, 1, 1]);
        assert_eq!(l.groups[0] as u64 * WORDS_PER_GROUP * 4, f.bytes);
        let a = f.args();
        assert_eq!(a.get_buffer("words").unwrap().as_bytes().len() as u64, f.bytes);
        // A partial workgroup still counts.
        assert_eq!(L2Flush { bytes: 4100, ..f }.launch().groups, [2, 1, 1]);
    }

    #[test]
    fn another_kernel_or_a_bad_size_is_rejected() {
        let (m, dir) = manifest();
        let reader = m.kernel(READER).unwrap();
        let copy = L2Flush { reader: m.kernel("copy_words").unwrap(), artifacts: &dir, bytes: 1 << 20 };
        assert!(copy.check("vulkan").unwrap_err().to_string().contains("an L2 flush runs `read_words`"));
        for bytes in [0, 6, (MAX_GROUPS + 1) * WORDS_PER_GROUP * 4] {
            let e = L2Flush { reader, artifacts: &dir, bytes }.check("cuda").unwrap_err().to_string();
            assert!(e.contains("read_words") && e.contains("(cuda)") && e.contains(&format!("got {bytes}")), "{e}");
        }
    }
}
