//! Hostile `Builder` input: duplicate names, names that are not identifiers (a path or
//! code in hand-built IR), an output path that is a file. Each is an error naming the
//! kernel or path, and nothing is written.

use onekernel_codegen::{Builder, CodegenError};
use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn twice(#[len(n)] y: &mut [f32], #[push] n: u32) {
    let i = global_id().x;
    if i < n {
        y[i] = y[i] * 2.0;
    }
}

fn temp(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("onekernel-builder-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn two_kernels_of_one_name_are_refused_before_anything_is_written() {
    let dir = temp("dup");
    let e = Builder::new().kernel(twice().unwrap()).kernel(twice().unwrap()).out_dir(&dir).write().unwrap_err();
    assert!(matches!(&e, CodegenError::DuplicateKernel { name } if name == "twice"), "{e}");
    assert!(!dir.exists());
}

#[test]
fn names_that_are_not_identifiers_are_refused() {
    let dir = temp("names");
    let mut k = twice().unwrap();
    k.name = "../../escaped".into();
    let e = Builder::new().kernel(k).out_dir(&dir).write().unwrap_err().to_string();
    assert!(e.contains("kernel name \"../../escaped\" is not an ASCII identifier"), "{e}");
    let mut k = twice().unwrap();
    k.params[0].name = "y) { evil(); } void f(float* y".into();
    let e = Builder::new().kernel(k).out_dir(&dir).write().unwrap_err().to_string();
    assert!(e.contains("kernel `twice`") && e.contains("parameter name"), "{e}");
    assert!(!dir.exists());
    assert!(!std::env::temp_dir().join("escaped").exists());
}

#[test]
fn an_output_path_that_is_a_file_is_an_error_naming_it() {
    let file = temp("file");
    std::fs::write(&file, b"not a directory").unwrap();
    let e = Builder::new().kernel(twice().unwrap()).out_dir(&file).write().unwrap_err().to_string();
    assert!(e.contains(&file.display().to_string()), "{e}");
    assert_eq!(std::fs::read(&file).unwrap(), b"not a directory");
    let _ = std::fs::remove_file(file);
}

#[test]
fn zero_threads_means_one_and_the_output_is_the_same() {
    let a = Builder::new().kernel(twice().unwrap()).threads(0).generate().unwrap();
    let b = Builder::new().kernel(twice().unwrap()).threads(3).generate().unwrap();
    assert_eq!(a, b);
}
