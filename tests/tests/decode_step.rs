//! The decode step as one timed unit (`DecodeProblem::run` under a `Timing`, built on
//! `Backend::time` with `Work::Launches`, which `onekernel bench` times): the chunk and the
//! combine kernel run back to back and share their partial-result buffers by name, so a
//! step's output is bitwise the output of `DecodeProblem::run` (each kernel launched on
//! its own) on every backend present — the interpreter, lavapipe in CI, CUDA on the GPU
//! machine, where from sm_90 the combine is a programmatic dependent launch of the chunk
//! kernel — in both modes, with the device timing every step, the first step on fresh
//! buffers checked on its own. A sequence whose launches
//! bind one buffer name to buffers of different sizes is rejected before anything runs.

use onekernel_ops::attention::batch::{pack, BatchShape, Sequence};
use onekernel_ops::attention::grid::fast_chunk;
use onekernel_ops::attention::{KvFormat, Split};
use onekernel_ops::{Device, Timing};
use onekernel_runtime::{Args, Backend, BackendError, BufferScope, HostBuffer, Launch, TimedUnit, Work};
use onekernel_tests::harness::{all_backends, manifest, root};

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// The decode step of `p` timed as one unit `runs` times: each run's time and the output.
fn time_step(
    p: &onekernel_ops::attention::DecodeProblem,
    split: Split,
    be: &mut dyn Backend,
    m: &onekernel_dsl::manifest::Manifest,
    artifacts: &std::path::Path,
    runs: u32,
) -> Result<(Vec<f64>, Vec<f32>), onekernel_ops::attention::AttentionError> {
    let mut dev = Device::new(be, m, artifacts);
    dev.set_timing(Some(Timing { runs, layers: 1, apart: false, prelude: None }));
    let out = p.run(split, &mut dev)?;
    assert_eq!(dev.last_times().len(), 1, "the step is one unit");
    Ok((dev.last_times()[0].clone(), out))
}

#[test]
fn a_timed_decode_step_gives_the_bits_of_a_run_on_every_backend() {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let sh = BatchShape {
        head_dim: 64,
        n_heads: 8,
        n_kv_heads: 2,
        k_format: KvFormat::F16,
        v_format: KvFormat::F16,
        scale: 0.125,
        softcap: 0.0,
        max_bias: 0.0,
        mask: false,
        sinks: None,
        v_head_dim: None,
    };
    let (a, b) = (Sequence::random(&sh, 11, 300), Sequence::random(&sh, 12, 77));
    let p = pack(&sh, &[&a, &b], 16, Some(5));
    for mut be in all_backends() {
        let name = be.name();
        let fast = Split::Fast { chunk_tokens: fast_chunk(&p, be.info().async_copies) };
        for split in [Split::Deterministic, fast] {
            let want = p.run(split, &mut onekernel_ops::Device::new(be.as_mut(), &m, &artifacts)).unwrap_or_else(|e| panic!("{name} {split:?}: {e}"));
            // One step on fresh buffers first: its partial results start as zeros, so a
            // combine that ran ahead of the chunk kernel's writes (CUDA lets it start
            // while the chunk kernel runs; its entry must wait) shows here, where later
            // steps would read the identical partials of the steps before.
            let (once, first) = time_step(&p, split, be.as_mut(), &m, &artifacts, 1).unwrap_or_else(|e| panic!("{name} {split:?} first step: {e}"));
            assert_eq!(once.len(), 1, "{name}: one time for one step");
            assert_eq!(bits(&first), bits(&want), "{name} {split:?}: the first step's output differs from the run's");
            let (times, got) = time_step(&p, split, be.as_mut(), &m, &artifacts, 3).unwrap_or_else(|e| panic!("{name} {split:?} step: {e}"));
            assert_eq!(times.len(), 3, "{name}: one time per step");
            assert_eq!(bits(&got), bits(&want), "{name} {split:?}: the step's output differs from the run's");
            // The output is the combine's: finite and not the zeros it starts from.
            assert!(got.iter().all(|x| x.is_finite()) && got.iter().any(|&x| x != 0.0), "{name} {split:?}");
            if name != "cpu" {
                assert!(times.iter().all(|t| t.is_finite() && *t > 0.0), "{name}: device time of every step: {times:?}");
            }
            println!("{name} {split:?}: step bitwise equal to the run, device times {times:?} ns");
        }
    }
}

#[test]
fn a_sequence_binding_one_name_to_buffers_of_two_sizes_is_rejected_before_launch() {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let k = m.kernel("copy_words").expect("copy_words in the manifest");
    let spec = k.variants.first().map(|v| v.spec.clone()).unwrap_or_default();
    let words = |n: usize| HostBuffer::from_u32(&(0..n as u32).collect::<Vec<_>>());
    let args = |n: usize| Args::new().buffer("src", words(n)).buffer("dst", words(n)).scalar("n", n as u32);
    let launch = |n: usize| Launch { kernel: k, artifacts: &artifacts, spec: &spec, groups: [(n as u32).div_ceil(1024), 1, 1] };
    let (pair, mismatched) = ([launch(256), launch(256)], [launch(256), launch(300)]);
    let unit = |launches, runs| TimedUnit { work: Work::Launches { launches, buffers: BufferScope::Shared }, runs, prelude: None };
    for mut be in all_backends() {
        let name = be.name();
        // Two copies of the same 256 words: one buffer each for `src` and `dst`, fine.
        let mut same = [args(256), args(256)];
        let t = be.time(&unit(&pair, 2), &mut same).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(t.len(), 2, "{name}");
        assert_eq!(same[1].get_buffer("dst"), Some(&words(256)), "{name}: the copy's result is read back into every launch's arguments");
        // 256 and 300 words under the same names cannot be one buffer.
        let mut mixed = [args(256), args(300)];
        let e = be.time(&unit(&mismatched, 1), &mut mixed).expect_err(name);
        println!("{name}: {e}");
        assert!(matches!(&e, BackendError::Arguments { .. }) && e.to_string().contains("one buffer across the sequence"), "{name}: {e}");
        // And one argument set short.
        let e = be.time(&unit(&pair, 1), &mut same[..1]).expect_err(name);
        assert!(e.to_string().contains("2 launches with 1 argument sets"), "{name}: {e}");
    }
}
