//! The benchmarks' L2 flush (`onekernel_runtime::L2Flush`): the catalogue's `read_words`
//! kernel reads every word it is given and writes only where an invocation's four words
//! XOR to the tag, checked against values computed here on every backend present; a
//! backend with a flush set times repeated launches with the results of a single one;
//! a flush by any other kernel, or of a size that is not whole words, is rejected before
//! anything is prepared.

use onekernel_runtime::l2_flush::READER;
use onekernel_runtime::{Args, HostBuffer, L2Flush, Launch};
use onekernel_tests::harness::{all_backends, gpu_backends, manifest, root};

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
            let mut a = Args::new().buffer("words", HostBuffer::from_u32(&w)).buffer("hits", HostBuffer::from_u32(&[7])).scalar("n", 5000u32).scalar("tag", tag);
            be.launch(&launch, &mut a).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(a.get_buffer("hits"), Some(&HostBuffer::from_u32(&[want])), "{name}: tag {tag:#x}");
        }
        println!("{name}: read_words wrote tag {met:#x} and left hits alone for {unmet:#x}");
    }
}

#[test]
fn a_flush_before_each_timed_launch_keeps_the_single_launch_results() {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let reader = m.kernel(READER).unwrap();
    let copy = m.kernel("copy_words").unwrap();
    let spec = copy.variants.first().map(|v| v.spec.clone()).unwrap_or_default();
    let w = words();
    let launch = Launch { kernel: copy, artifacts: &artifacts, spec: &spec, groups: [5, 1, 1] };
    for mut be in all_backends() {
        let name = be.name();
        be.set_l2_flush(Some(L2Flush { reader, artifacts: &artifacts, bytes: 1 << 20 })).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut a = Args::new().buffer("src", HostBuffer::from_u32(&w)).buffer("dst", HostBuffer::from_u32(&[0; 5000])).scalar("n", 5000u32);
        let times = be.launch_repeated(&launch, &mut a, 4).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(times.len(), 4, "{name}");
        assert_eq!(a.get_buffer("dst"), Some(&HostBuffer::from_u32(&w)), "{name}: the copy under a flush");
        let t = be.time_driver_copy(1 << 16, 2).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(t.is_none_or(|t| t.len() == 2), "{name}");
        be.set_l2_flush(None).unwrap();
        println!("{name}: four timed copies after a 1 MiB flush each: {times:?} ns");
    }
}

#[test]
fn a_flush_by_another_kernel_or_of_part_of_a_word_is_rejected() {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let reader = m.kernel(READER).unwrap();
    let copy = m.kernel("copy_words").unwrap();
    for mut be in gpu_backends() {
        let name = be.name();
        for (f, says) in [
            (L2Flush { reader: copy, artifacts: &artifacts, bytes: 1 << 20 }, "an L2 flush runs `read_words`"),
            (L2Flush { reader, artifacts: &artifacts, bytes: (1 << 20) + 2 }, "whole number of 4-byte words"),
            (L2Flush { reader, artifacts: &artifacts, bytes: 0 }, "got 0"),
        ] {
            let e = be.set_l2_flush(Some(f)).expect_err(name).to_string();
            assert!(e.contains(says) && e.contains(&format!("({name})")), "{name}: {e}");
        }
        println!("{name}: flushes by copy_words, of 1 MiB + 2 bytes and of 0 bytes rejected");
    }
}
