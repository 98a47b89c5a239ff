//! Reading a generated directory's `manifest.json` for launching: size-capped, parsed,
//! checked for consistency ([`Manifest::check`]) and every artifact's bytes compared
//! with the SHA-256 the manifest records, so a hand-edited, truncated or mismatched
//! directory is refused before any kernel is compiled or run.

use onekernel_dsl::manifest::{Manifest, ManifestError};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The largest `manifest.json` read (the catalogue's is well under 1 MiB).
pub const MAX_MANIFEST_BYTES: u64 = 64 << 20;

/// Why a generated directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ManifestLoadError {
    /// The file cannot be read.
    #[error("cannot read {}: {error}", path.display())]
    Read {
        /// The manifest's path.
        path: PathBuf,
        /// The OS error.
        error: std::io::Error,
    },
    /// The file is larger than [`MAX_MANIFEST_BYTES`].
    #[error("{} is {bytes} bytes, more than a manifest can be ({MAX_MANIFEST_BYTES})", path.display())]
    TooLarge {
        /// The manifest's path.
        path: PathBuf,
        /// Its size.
        bytes: u64,
    },
    /// Not JSON of the manifest's schema.
    #[error("cannot parse {}: {message}", path.display())]
    Parse {
        /// The manifest's path.
        path: PathBuf,
        /// serde's message (field, line and column).
        message: String,
    },
    /// A field is inconsistent or out of range.
    #[error("{}: {error}", path.display())]
    Inconsistent {
        /// The manifest's path.
        path: PathBuf,
        /// Which kernel and field.
        error: ManifestError,
    },
    /// An artifact the manifest lists is missing or differs from its recorded hash.
    #[error("kernel `{kernel}`, {field}: {} {problem}; run `onekernel gen` to regenerate the directory", path.display())]
    Artifact {
        /// The kernel.
        kernel: String,
        /// The manifest field (`vulkan.spirv`).
        field: &'static str,
        /// The file.
        path: PathBuf,
        /// `is missing` or `does not match the manifest's sha256`.
        problem: String,
    },
}

/// Reads and checks `dir/manifest.json` and the artifacts it lists.
pub fn load(dir: &Path) -> Result<Manifest, ManifestLoadError> {
    let path = dir.join("manifest.json");
    let read = |error| ManifestLoadError::Read { path: path.clone(), error };
    let bytes = std::fs::metadata(&path).map_err(read)?.len();
    if bytes > MAX_MANIFEST_BYTES {
        return Err(ManifestLoadError::TooLarge { path, bytes });
    }
    let text = std::fs::read(&path).map_err(read)?;
    let m: Manifest = serde_json::from_slice(&text).map_err(|e| ManifestLoadError::Parse { path: path.clone(), message: e.to_string() })?;
    m.check().map_err(|error| ManifestLoadError::Inconsistent { path: path.clone(), error })?;
    for k in &m.kernels {
        for (field, a) in k.artifacts() {
            let file = dir.join(&a.path);
            let problem = match std::fs::read(&file) {
                Err(e) => Some(format!("cannot be read ({e})")),
                Ok(bytes) => {
                    let hex: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
                    (!hex.eq_ignore_ascii_case(&a.sha256)).then(|| "does not match the manifest's sha256".to_string())
                }
            };
            if let Some(problem) = problem {
                return Err(ManifestLoadError::Artifact { kernel: k.name.clone(), field, path: file, problem });
            }
        }
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::{load, ManifestLoadError};
    use std::path::Path;

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                copy_dir(&p, &to.join(e.file_name()));
            } else {
                std::fs::copy(&p, to.join(e.file_name())).unwrap();
            }
        }
    }

    #[test]
    fn the_checked_in_directory_loads_and_a_changed_or_missing_artifact_is_refused() {
        let generated = Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated");
        load(&generated).unwrap();
        let dir = std::env::temp_dir().join(format!("onekernel-manifest-load-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        copy_dir(&generated, &dir);
        let spv = dir.join("vulkan/softmax_rows.spv");
        let mut bytes = std::fs::read(&spv).unwrap();
        bytes[40] ^= 1;
        std::fs::write(&spv, &bytes).unwrap();
        match load(&dir) {
            Err(ManifestLoadError::Artifact { kernel, field, problem, .. }) => {
                assert_eq!((kernel.as_str(), field), ("softmax_rows", "vulkan.spirv"));
                assert!(problem.contains("sha256"), "{problem}");
            }
            other => panic!("{other:?}"),
        }
        std::fs::remove_file(&spv).unwrap();
        let e = load(&dir).unwrap_err().to_string();
        assert!(e.contains("softmax_rows") && e.contains("cannot be read"), "{e}");
        std::fs::write(dir.join("manifest.json"), b"{\"schema\": 1, \"generator\": \"x\", \"kernels\": [").unwrap();
        assert!(matches!(load(&dir), Err(ManifestLoadError::Parse { .. })));
        let _ = std::fs::remove_dir_all(dir);
    }
}
