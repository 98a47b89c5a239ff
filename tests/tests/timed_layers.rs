//! A decode step's layers as one timed unit (`Backend::time` with
//! `BufferScope::PerLaunch`, which
//! `onekernel bench-kvquant` times per layer): the same kernel launched back to back,
//! each launch over buffers of its own although their names are the same, each launch's
//! results read back into its own arguments, on every backend present (the interpreter,
//! lavapipe in CI, CUDA on the GPU machine). The negative control is the decode step's
//! sequence, where one name is one buffer: the same arguments there give every launch
//! one result.

use onekernel_runtime::{Args, BufferScope, HostBuffer, Launch, TimedUnit, Work};
use onekernel_tests::harness::{all_backends, manifest, root};

#[test]
fn each_layer_reads_and_writes_buffers_of_its_own_on_every_backend() {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let k = m.kernel("copy_words").expect("copy_words in the manifest");
    let spec = k.variants.first().map(|v| v.spec.clone()).unwrap_or_default();
    let n = 3000usize;
    let words = |seed: u32| HostBuffer::from_u32(&(0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) ^ seed).collect::<Vec<_>>());
    let layer = |seed: u32| Args::new().buffer("src", words(seed)).buffer("dst", HostBuffer::from_u32(&vec![0; n])).scalar("n", n as u32);
    let launches = vec![Launch { kernel: k, artifacts: &artifacts, spec: &spec, groups: [(n as u32).div_ceil(1024), 1, 1] }; 3];
    let unit = |buffers, runs| TimedUnit { work: Work::Launches { launches: &launches, buffers }, runs, prelude: None };
    for mut be in all_backends() {
        let name = be.name();
        let mut layers = [layer(1), layer(2), layer(3)];
        let times = be.time(&unit(BufferScope::PerLaunch, 2), &mut layers).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(times.len(), 2, "{name}: one time per unit");
        if name != "cpu" {
            assert!(times.iter().all(|t| t.is_finite() && *t > 0.0), "{name}: device time of every unit: {times:?}");
        }
        for (i, a) in layers.iter().enumerate() {
            assert_eq!(a.get_buffer("dst"), Some(&words(i as u32 + 1)), "{name}: layer {i} copied its own source");
        }
        // Negative control: as a decode step's sequence the names are shared, so the
        // three launches write one `dst` and every launch reads the same result back.
        let mut shared = [layer(1), layer(2), layer(3)];
        be.time(&unit(BufferScope::Shared, 1), &mut shared).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(shared.iter().all(|a| a.get_buffer("dst") == shared[0].get_buffer("dst")), "{name}: a shared name is one buffer");
        // One argument set short is rejected before anything runs.
        let e = be.time(&unit(BufferScope::PerLaunch, 1), &mut layers[..2]).expect_err(name);
        assert!(e.to_string().contains("3 launches with 2 argument sets"), "{name}: {e}");
        println!("{name}: 3 layers, each with its own buffers; unit times {times:?} ns");
    }
}

/// `onekernel bench-kvquant`'s bound on any kernel that reads a cache: `read_words` over
/// the same bytes, once and as layers, through `Device::read_words`. It reads every word
/// it is given on every backend: a word set whose four words of one invocation XOR to
/// the tag is reported, in the last of the words too; the same words without it
/// (the negative control) are not.
#[test]
fn the_read_bound_reads_every_word_once_and_as_layers_on_every_backend() {
    use onekernel_ops::{Device, Timing};
    let (m, artifacts) = (manifest(), root().join("generated"));
    let n = 5000usize;
    let plain: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) & 0x7fff_ffff).collect();
    // Invocation 0 of the last workgroup reads words 4096, 4352, 4608 and 4864.
    let mut marked = plain.clone();
    marked[4864] = u32::MAX ^ marked[4096] ^ marked[4352] ^ marked[4608];
    for mut be in all_backends() {
        let name = be.name();
        let mut dev = Device::new(be.as_mut(), &m, &artifacts);
        assert!(dev.read_words(&marked).unwrap_or_else(|e| panic!("{name}: {e}")), "{name}: the marked word was read");
        assert!(!dev.read_words(&plain).unwrap_or_else(|e| panic!("{name}: {e}")), "{name}: no invocation meets the tag without it");
        dev.set_timing(Some(Timing { runs: 2, layers: 3, apart: false, prelude: None }));
        assert!(dev.read_words(&marked).unwrap_or_else(|e| panic!("{name}: {e}")), "{name}: the first layer read its words");
        let times = dev.last_times()[0].clone();
        dev.set_timing(None);
        assert_eq!(times.len(), 2, "{name}: one time per unit of layers");
        if name != "cpu" {
            assert!(times.iter().all(|t| t.is_finite() && *t > 0.0), "{name}: device time of every unit: {times:?}");
        }
        let e = dev.read_words(&[]).expect_err(name);
        assert!(e.to_string().contains("read_words") && e.to_string().contains("nothing to read"), "{name}: {e}");
        println!("{name}: read_words found the marked word once and as 3 layers; unit times {times:?} ns");
    }
}
