//! A timed unit's prelude (`onekernel_runtime::Prelude`, what the benchmarks' L2 flush
//! is): the catalogue's `read_words` kernel it runs reads every word it is given and
//! writes only where an invocation's four words XOR to the tag, checked against values
//! computed here on every backend present; repeated timed runs after a prelude give the
//! results of a single launch; a prelude whose arguments do not fit is rejected.

use onekernel_cli::harness::l2_flush;
use onekernel_runtime::{Args, BackendError, BufferScope, HostBuffer, Launch, Prelude, TimedUnit, Work};
use onekernel_tests::harness::{all_backends, gpu_backends, manifest, root};

const READER: &str = "read_words";

/// 5000 words `i · 2654435761`: invocation `g · 256 + t` reads words `g · 1024 + t + 256 k`.
fn words() -> Vec<u32> {
    (0..5000u32).map(|i| i.wrapping_mul(2_654_435_761)).collect()
}

/// What invocation `(group, lane)` XORs (the words past the end count as absent).
fn xor_of(words: &[u32], group: usize, lane: usize) -> u32 {
    (0..4).map(|k| group * 1024 + lane + 256 * k).filter(|&i| i < words.len()).fold(0, |x, i| x ^ words[i])
}

#[test]
fn read_words_writes_the_tag_exactly_where_an_invocations_words_xor_to_it() {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let k = m.kernel(READER).expect("read_words in the manifest");
    let spec = k.variants.first().map(|v| v.spec.clone()).unwrap_or_default();
    let w = words();
    let launch = Launch { kernel: k, artifacts: &artifacts, spec: &spec, groups: [5, 1, 1] };
    // Invocation (4, 100) reads the 5000 words' partial last workgroup: only its words
    // below 5000 count. A tag no invocation meets leaves `hits` as it was.
    let met = xor_of(&w, 4, 100);
    let unmet = (0..u32::MAX).find(|t| (0..5).all(|g| (0..256).all(|l| xor_of(&w, g, l) != *t))).unwrap();
    for mut be in all_backends() {
        let name = be.name();
        for (tag, want) in [(met, met), (unmet, 7)] {
            let mut a = Args::new()
                .buffer("words", HostBuffer::from_u32(&w))
                .buffer("hits", HostBuffer::from_u32(&[7]))
                .scalar("n", 5000u32)
                .scalar("tag", tag);
            be.launch(&launch, &mut a).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(a.get_buffer("hits"), Some(&HostBuffer::from_u32(&[want])), "{name}: tag {tag:#x}");
        }
        println!("{name}: read_words wrote tag {met:#x} and left hits alone for {unmet:#x}");
    }
}

#[test]
fn a_prelude_before_each_timed_run_keeps_the_single_launch_results() {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let copy = m.kernel("copy_words").unwrap();
    let spec = copy.variants.first().map(|v| v.spec.clone()).unwrap_or_default();
    let w = words();
    let launch = [Launch { kernel: copy, artifacts: &artifacts, spec: &spec, groups: [5, 1, 1] }];
    let flush = l2_flush(&m, &artifacts, 1 << 20).unwrap();
    for mut be in all_backends() {
        let name = be.name();
        let mut a = [Args::new().buffer("src", HostBuffer::from_u32(&w)).buffer("dst", HostBuffer::from_u32(&[0; 5000])).scalar("n", 5000u32)];
        let unit = TimedUnit { work: Work::Launches { launches: &launch, buffers: BufferScope::Shared }, runs: 4, prelude: Some(&flush) };
        let times = be.time(&unit, &mut a).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(times.len(), 4, "{name}");
        assert_eq!(a[0].get_buffer("dst"), Some(&HostBuffer::from_u32(&w)), "{name}: the copy under a prelude");
        // The same prelude again (kept on the device), before the driver's copy.
        let copy = TimedUnit { work: Work::DriverCopy { bytes: 1 << 16 }, runs: 2, prelude: Some(&flush) };
        match be.time(&copy, &mut []) {
            Ok(t) => assert_eq!(t.len(), 2, "{name}"),
            Err(e) => assert!(name == "cpu" && matches!(e, BackendError::Unsupported { .. }), "{name}: {e}"),
        }
        println!("{name}: four timed copies after a 1 MiB read_words prelude each: {times:?} ns");
    }
}

/// A prelude whose arguments do not fit its kernel is rejected before anything runs,
/// naming the kernel and the backend.
#[test]
fn a_prelude_with_wrong_arguments_is_rejected() {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let reader = m.kernel("read_words").unwrap();
    let bad = Prelude::new(Launch { kernel: reader, artifacts: &artifacts, spec: &[], groups: [1, 1, 1] }, Args::new().scalar("n", 4u32));
    let copy = TimedUnit { work: Work::DriverCopy { bytes: 1 << 16 }, runs: 1, prelude: Some(&bad) };
    for mut be in gpu_backends() {
        let name = be.name();
        let e = be.time(&copy, &mut []).expect_err(name).to_string();
        assert!(e.contains("read_words") && e.contains(&format!("({name})")) && e.contains("missing buffer `words`"), "{name}: {e}");
    }
}
