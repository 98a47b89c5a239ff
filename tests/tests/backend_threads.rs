//! Backends opened, used and dropped in several threads at once, as a serving process
//! or a parallel `cargo test` does. On the H200 (driver 580.159.04) a Vulkan and a CUDA
//! backend opened and dropped in two threads crashed the process (SIGSEGV) until the
//! runtime kept the Vulkan loader and driver loaded for the process
//! (`runtime/src/vulkan/device.rs`, `process_loader`). In CI lavapipe runs the
//! Vulkan half; the GPU machine runs both.

use onekernel_ops::fixture::run_attention;
use onekernel_tests::harness::{gpu_backends, manifest, root};
use serde_json::Value;

#[test]
fn backends_open_run_and_drop_in_parallel_threads() {
    let p = root().join("tests/fixtures/attention/f16_contig_gqa4_d128.json");
    let fx: Value = serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap();
    let workers: Vec<_> = (0..4)
        .map(|t| {
            let fx = fx.clone();
            std::thread::spawn(move || {
                let m = manifest();
                let mut runs = 0;
                for round in 0..3 {
                    // Each round opens the backends afresh and drops them at its end.
                    for mut b in gpu_backends() {
                        let r = run_attention(&fx, &mut onekernel_ops::Device::new(b.as_mut(), &m, &root().join("generated")))
                            .unwrap_or_else(|e| panic!("thread {t}, round {round}, {}: {e}", b.name()));
                        assert!(r.passed, "thread {t}, round {round}: {r:?}");
                        runs += 1;
                    }
                }
                runs
            })
        })
        .collect();
    let runs: usize = workers.into_iter().map(|w| w.join().expect("a worker thread panicked")).sum();
    println!("{runs} fixture runs in 4 threads");
}
