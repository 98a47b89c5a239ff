//! Writing generated files and comparing them with a directory (the regeneration check).
//!
//! The generator owns `manifest.json` and the `cuda/`, `vulkan/` and `metal/`
//! directories of the output; anything else there (such as `evidence/`) is left alone.
//! A write removes a stale file only where the directory's previous manifest lists it
//! as an artifact: a file onekernel did not write is never deleted, even in an owned
//! directory (an output directory pointed at a project's own `cuda/` loses nothing).

use crate::error::CodegenError;
use crate::generate::Generated;
use std::fs;
use std::path::{Path, PathBuf};

/// Directories whose whole content the generator owns.
pub const OWNED_DIRS: &[&str] = &["cuda", "vulkan", "metal"];

/// One way a directory differs from a fresh generation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Difference {
    /// A generated file is missing from the directory.
    Missing(String),
    /// The file exists with other contents.
    Changed(String),
    /// A file in an owned directory that generation does not produce.
    Extra(String),
    /// Such a file that no previous manifest lists: [`Generated::write_to`] leaves it.
    Foreign(String),
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Difference::Missing(p) => write!(f, "missing: {p}"),
            Difference::Changed(p) => write!(f, "differs: {p}"),
            Difference::Extra(p) => write!(f, "stale (not generated any more): {p}"),
            Difference::Foreign(p) => write!(f, "not written by onekernel, left in place: {p}"),
        }
    }
}

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> CodegenError {
    let path = path.to_path_buf();
    move |source| CodegenError::Io { action, path, source }
}

/// Files currently in the owned directories of `dir`, relative paths.
fn owned_files(dir: &Path) -> Result<Vec<String>, CodegenError> {
    let mut out = Vec::new();
    for sub in OWNED_DIRS {
        let d = dir.join(sub);
        if !d.exists() {
            continue;
        }
        for e in fs::read_dir(&d).map_err(io("read", &d))? {
            let e = e.map_err(io("read", &d))?;
            if e.path().is_file() {
                out.push(format!("{sub}/{}", e.file_name().to_string_lossy()));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The artifact paths the manifest already in `dir` lists (none where there is no
/// readable manifest).
fn previous_artifacts(dir: &Path) -> std::collections::BTreeSet<String> {
    let Ok(bytes) = fs::read(dir.join("manifest.json")) else { return Default::default() };
    let Ok(m) = serde_json::from_slice::<crate::manifest::Manifest>(&bytes) else { return Default::default() };
    m.kernels.iter().flat_map(|k| k.artifacts().into_iter().map(|(_, a)| a.path.clone())).collect()
}

impl Generated {
    /// Writes every file under `dir` (creating directories) and removes the stale files
    /// the directory's previous manifest lists; other files in the owned directories are
    /// returned as [`Difference::Foreign`] and left. Files whose contents are unchanged
    /// are not rewritten.
    pub fn write_to(&self, dir: &Path) -> Result<Vec<Difference>, CodegenError> {
        let listed = previous_artifacts(dir);
        let changes: Vec<Difference> = self
            .compare_with(dir)?
            .into_iter()
            .map(|d| match d {
                Difference::Extra(rel) if !listed.contains(&rel) => Difference::Foreign(rel),
                d => d,
            })
            .collect();
        fs::create_dir_all(dir).map_err(io("create directory", dir))?;
        for (rel, bytes) in &self.files {
            let path: PathBuf = dir.join(rel);
            if fs::read(&path).ok().as_deref() == Some(bytes.as_slice()) {
                continue;
            }
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent).map_err(io("create directory", parent))?;
            }
            fs::write(&path, bytes).map_err(io("write", &path))?;
        }
        for c in &changes {
            if let Difference::Extra(rel) = c {
                let p = dir.join(rel);
                fs::remove_file(&p).map_err(io("remove", &p))?;
            }
        }
        Ok(changes)
    }

    /// How `dir` differs from this generation (empty when it is up to date).
    pub fn compare_with(&self, dir: &Path) -> Result<Vec<Difference>, CodegenError> {
        let mut diffs = Vec::new();
        for (rel, bytes) in &self.files {
            let path = dir.join(rel);
            match fs::read(&path) {
                Ok(existing) if existing == *bytes => {}
                Ok(_) => diffs.push(Difference::Changed(rel.clone())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => diffs.push(Difference::Missing(rel.clone())),
                Err(e) => return Err(io("read", &path)(e)),
            }
        }
        for rel in owned_files(dir)? {
            if !self.files.contains_key(&rel) {
                diffs.push(Difference::Extra(rel));
            }
        }
        Ok(diffs)
    }
}

#[cfg(test)]
mod tests {
    use super::Difference;
    use crate::generate::Generated;

    #[test]
    fn a_write_removes_only_files_a_previous_manifest_lists() {
        let dir = std::env::temp_dir().join(format!("onekernel-output-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // A project's own hand-written kernel where the output goes.
        std::fs::create_dir_all(dir.join("cuda")).unwrap();
        std::fs::write(dir.join("cuda/mine.cu"), b"// hand-written").unwrap();
        let mut g = Generated::default();
        g.files.insert("manifest.json".into(), br#"{"schema":1,"generator":"t","kernels":[]}"#.to_vec());
        let changes = g.write_to(&dir).unwrap();
        assert!(changes.contains(&Difference::Foreign("cuda/mine.cu".into())), "{changes:?}");
        assert_eq!(std::fs::read(dir.join("cuda/mine.cu")).unwrap(), b"// hand-written");
        // `check` still reports it.
        assert!(g.compare_with(&dir).unwrap().contains(&Difference::Extra("cuda/mine.cu".into())));
        let _ = std::fs::remove_dir_all(dir);
    }
}
