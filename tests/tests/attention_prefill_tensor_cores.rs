//! Prefill attention in its fast mode (`PrefillProblem::run_tensor_cores`,
//! `attn_prefill_mma`, class `fast`) against the independent float64 reference: f16 K/V,
//! D = 128, GQA 4 and 1, a varlen batch of 1–100 new tokens over caches of 1–150 (more
//! than one block of 64 queries, blocks of 32 and 64 tokens cut by the causal limit),
//! paged and contiguous, mask and sinks, padded query and output layouts. Queries and
//! numerators are rounded to f16 and tensor cores sum in their own order, so the bound is
//! the prefill fixtures' tolerance (NMSE ≤ 1e-6, cosine ≥ 0.99999), with negative controls;
//! each backend repeats its own bits and both block forms agree within the bound. Cache
//! rows past each sequence's length hold NaN, so a read past it would show. Backends
//! without register tiles (lavapipe) print SKIPPED.

use onekernel_ops::attention::batch::{pack, BatchShape, Sequence};
use onekernel_ops::attention::reference::{compare, reference};
use onekernel_ops::attention::{AttentionError, DecodeProblem, KvFormat, PrefillProblem, RowLayout, TiledBlocks};
use onekernel_ops::fixture::{cosine, run_prefill_tensor_cores, FastOutcome};
use onekernel_runtime::{Backend, BackendError};
use onekernel_tests::harness::{all_backends_and_msl_emu, fixture_files, manifest, root};
use onekernel_tests::{bits, uniform};

const NMSE_BOUND: f64 = 1e-6;
const COSINE_BOUND: f64 = 0.99999;

/// `p` in the fast mode with `blocks` (the device's form when `None`) on `backend`, or
/// `None` after a SKIPPED line where the backend cannot run the kernel.
fn run_or_skip(p: &PrefillProblem, blocks: Option<TiledBlocks>, backend: &mut dyn Backend, what: &str) -> Option<Vec<f32>> {
    let (m, generated) = (manifest(), root().join("generated"));
    let mut dev = onekernel_ops::Device::new(backend, &m, &generated);
    let blocks = blocks.unwrap_or_else(|| TiledBlocks::for_device(&dev));
    match p.run_tensor_cores(blocks, &mut dev) {
        Ok(out) => Some(out),
        Err(AttentionError::Backend(BackendError::Unsupported { reason, .. })) => {
            println!("SKIPPED {what} ({blocks:?}) on {}: {reason}", backend.name());
            None
        }
        Err(e) => panic!("{what} ({blocks:?}) on {}: {e}", backend.name()),
    }
}

/// A varlen step over `lens` cached tokens with `ts` new ones, GQA `hq / hkv`, optional
/// mask and sinks, pages of 16 in a shuffled table (or contiguous), queries and outputs
/// in padded layouts; cache rows past each length are NaN.
fn step(hq: u32, hkv: u32, lens: &[u32], ts: &[u32], options: bool, paged: bool, seed: u64) -> PrefillProblem {
    let mut sh = BatchShape::new(128, hq, hkv, KvFormat::F16, KvFormat::F16);
    sh.mask = options;
    sh.sinks = options.then(|| (0..hq).map(|h| h as f32 * 0.5 - 1.5).collect());
    let seqs: Vec<Sequence> = lens.iter().enumerate().map(|(i, &l)| Sequence::random(&sh, seed + i as u64, l)).collect();
    let mut cache = pack(&sh, &seqs.iter().collect::<Vec<_>>(), 16, paged.then_some(seed));
    nan_past_lengths(&mut cache);
    let n: u32 = ts.iter().sum();
    let q_layout = RowLayout { token_stride: (hq * 136 + 24) as usize, head_stride: 136 };
    let dense = uniform(seed + 77, (n * hq * 128) as usize, -1.0, 1.0);
    let mut q = vec![f32::NAN; q_layout.len(n as usize, hq, 128)];
    for i in 0..n as usize {
        for h in 0..hq as usize {
            q[i * q_layout.token_stride + h * q_layout.head_stride..][..128].copy_from_slice(&dense[(i * hq as usize + h) * 128..][..128]);
        }
    }
    PrefillProblem {
        head_dim: 128,
        n_heads: hq,
        n_kv_heads: hkv,
        page_size: 16,
        pages_per_seq: cache.pages_per_seq,
        kv_len: lens.to_vec(),
        q_tokens: ts.to_vec(),
        k_format: KvFormat::F16,
        v_format: KvFormat::F16,
        k: cache.k,
        v: cache.v,
        block_table: cache.block_table,
        q,
        q_layout,
        out_layout: RowLayout { token_stride: (hq * 128 + 8) as usize, head_stride: 128 },
        scale: 1.0 / 128f32.sqrt(),
        softcap: 0.0,
        max_bias: 0.0,
        mask: cache.mask,
        sinks: cache.sinks,
        v_head_dim: None,
    }
}

/// A step whose scores rise by 30 from token 100 on (the mask: −30 before, 0 after), so
/// every row's running maximum moves by more than the kernel's threshold of 8 in a later
/// block than the first, and O and the sums are rescaled.
fn late_jump() -> PrefillProblem {
    let mut p = step(4, 1, &[150, 140], &[100, 140], true, true, 21);
    let row = (p.pages_per_seq * p.page_size) as usize;
    p.mask = Some((0..2 * row).map(|i| if i % row < 100 { -30.0 } else { 0.0 }).collect());
    p
}

/// Writes NaN (0xff bytes) into every cache row past its sequence's length.
fn nan_past_lengths(c: &mut DecodeProblem) {
    let row = c.k_format.row_bytes(c.head_dim as usize);
    let pps = c.pages_per_seq as usize;
    for (s, &len) in c.kv_len.iter().enumerate() {
        for t in len..c.pages_per_seq * c.page_size {
            let page = match &c.block_table {
                Some(tab) if tab[s * pps + (t / c.page_size) as usize] >= 0 => tab[s * pps + (t / c.page_size) as usize] as u32,
                Some(_) => continue,
                None => (s * pps) as u32 + t / c.page_size,
            };
            for h in 0..c.n_kv_heads {
                let cell = ((page * c.page_size + t % c.page_size) * c.n_kv_heads + h) as usize;
                c.k[cell * row..][..row].fill(0xff);
                c.v[cell * row..][..row].fill(0xff);
            }
        }
    }
}

/// The float64 reference in the step's output layout (zeros between rows).
fn reference_rows(p: &PrefillProblem) -> Vec<f64> {
    p.scatter(&reference(&p.as_decode().unwrap()))
}

/// NMSE, max |err| and cosine of `out` against `want`, and whether they meet the bounds.
fn verdict(out: &[f32], want: &[f64]) -> (f64, f64, f64, bool) {
    let (nmse, max_abs) = compare(out, want);
    let cos = cosine(out, want);
    (nmse, max_abs, cos, nmse <= NMSE_BOUND && cos >= COSINE_BOUND && out.iter().all(|x| x.is_finite()))
}

#[test]
fn tiled_prefill_is_within_the_fixture_tolerance_of_the_f64_reference() {
    let cases = [
        ("GQA 4, varlen, paged, mask and sinks", step(8, 2, &[150, 41, 1], &[100, 40, 1], true, true, 5)),
        ("MQA 4/1, contiguous, no options", step(4, 1, &[70, 130], &[70, 3], false, false, 9)),
        // An odd group: each workgroup pairs two query blocks of one head, the later
        // one past the last query in sequence 0's second workgroup.
        ("MHA 3/3, two query blocks per workgroup, paged, mask and sinks", step(3, 3, &[200, 90], &[150, 70], true, true, 11)),
        ("the running maximum jumps by 30 after 100 tokens", late_jump()),
    ];
    let mut backends = all_backends_and_msl_emu();
    let mut ran = 0;
    for (what, p) in &cases {
        let want = reference_rows(p);
        for backend in backends.iter_mut() {
            let name = backend.name().to_string();
            // The interpreter runs both forms; a device the form it is given.
            let forms: &[Option<TiledBlocks>] = if name == "cpu" { &[Some(TiledBlocks::Kv64), Some(TiledBlocks::Kv32)] } else { &[None] };
            let mut first: Option<Vec<f32>> = None;
            for &form in forms {
                let Some(out) = run_or_skip(p, form, backend.as_mut(), what) else { continue };
                let (nmse, max_abs, cos, ok) = verdict(&out, &want);
                println!("{what} on {name} ({form:?}): NMSE {nmse:.2e}, max |err| {max_abs:.2e}, cosine {cos:.8}");
                assert!(ok, "{what} on {name} ({form:?}): NMSE {nmse}, cosine {cos}");
                let again = run_or_skip(p, form, backend.as_mut(), what).unwrap();
                assert_eq!(bits(&out), bits(&again), "{what} on {name}: two runs differ");
                // Rows between the layout's rows stay zero.
                assert!(out.iter().zip(&want).all(|(o, w)| *w != 0.0 || *o == 0.0), "{what} on {name}: a write outside the rows");
                if let Some(f) = &first {
                    let (nmse, ..) = compare(&out, &f.iter().map(|&x| x as f64).collect::<Vec<_>>());
                    assert!(nmse <= NMSE_BOUND, "{what} on {name}: the two block forms differ by NMSE {nmse}");
                }
                first = Some(out);
                ran += 1;
            }
        }
    }
    assert!(ran >= 8, "the interpreter runs both forms of every case");
    // The fast path at full speed: ptxas kept every product of the 64-token form
    // asynchronous (on CUDA with `wgmma`; panels.rs has the negative control).
    for b in &backends {
        let warned = b.compiler_warnings();
        assert!(warned.is_empty(), "{}: {warned:?}", b.name());
    }
}

/// Negative controls: the comparison sees the mask, the sinks and the causal limit.
#[test]
fn the_tolerance_rejects_a_missing_mask_sink_or_causal_limit() {
    let p = step(8, 2, &[150, 41, 1], &[100, 40, 1], true, true, 5);
    let out = run_or_skip(&p, Some(TiledBlocks::Kv32), &mut onekernel_tests::harness::cpu(), "control").unwrap();
    assert!(verdict(&out, &reference_rows(&p)).3, "the step itself passes");
    let without_mask = PrefillProblem { mask: None, ..p.clone() };
    let without_sinks = PrefillProblem { sinks: None, ..p.clone() };
    for (what, other) in [("no mask", &without_mask), ("no sinks", &without_sinks)] {
        let (nmse, _, cos, ok) = verdict(&out, &reference_rows(other));
        println!("control {what}: NMSE {nmse:.2e}, cosine {cos:.8}");
        assert!(!ok, "the reference with {what} must not match");
    }
    // Every query one position earlier (it would not see its own token).
    let earlier = PrefillProblem { kv_len: vec![149, 40, 1], ..p.clone() };
    let (nmse, _, cos, ok) = verdict(&out, &reference_rows(&earlier));
    println!("control: positions one earlier: NMSE {nmse:.2e}, cosine {cos:.8}");
    assert!(!ok, "positions one token earlier must not match");
}

/// Every `flash_attn_prefill` fixture of the repository in the fast mode, within the
/// file's own bounds, where the backend has register tiles.
#[test]
fn the_prefill_fixtures_pass_in_the_fast_mode() {
    let (m, generated) = (manifest(), root().join("generated"));
    for (f, fx) in fixture_files("prefill") {
        for mut b in all_backends_and_msl_emu() {
            let name = b.name();
            match run_prefill_tensor_cores(&fx, &mut onekernel_ops::Device::new(b.as_mut(), &m, &generated)) {
                Ok(FastOutcome::Ran(r)) => {
                    println!("{} on {name}: NMSE {:.3e}, max |err| {:.3e}, cosine {:.8}", f.display(), r.nmse, r.max_abs, r.cosine.unwrap());
                    assert!(r.passed, "{} on {name}: {r:?}", f.display());
                }
                Ok(FastOutcome::Unsupported(why)) => println!("SKIPPED {} on {name}: {why}", f.display()),
                Err(e) => panic!("{} on {name}: {e}", f.display()),
            }
        }
    }
}

/// What the fast mode cannot take is an error naming the kernel and the reason.
#[test]
fn the_fast_mode_names_what_it_cannot_take() {
    let p = step(4, 1, &[20], &[5], false, true, 3);
    let mut cpu = onekernel_tests::harness::cpu();
    let (m, generated) = (manifest(), root().join("generated"));
    let mut dev = onekernel_ops::Device::new(&mut cpu, &m, &generated);
    let cases = [
        ("softcap", PrefillProblem { softcap: 30.0, ..p.clone() }),
        ("ALiBi", PrefillProblem { max_bias: 8.0, ..p.clone() }),
        ("q8_0 K", PrefillProblem { k_format: KvFormat::Q8_0, ..p.clone() }),
        ("D = 128", PrefillProblem { head_dim: 64, ..p.clone() }),
        ("positive, finite scale", PrefillProblem { scale: -0.5, ..p.clone() }),
        ("positive, finite scale", PrefillProblem { scale: 0.0, ..p.clone() }),
        ("odd stride", PrefillProblem { q_layout: RowLayout { head_stride: p.q_layout.head_stride - 1, ..p.q_layout }, ..p.clone() }),
        ("odd stride", PrefillProblem { out_layout: RowLayout { head_stride: p.out_layout.head_stride + 1, ..p.out_layout }, ..p.clone() }),
    ];
    for (what, bad) in cases {
        let err = bad.run_tensor_cores(TiledBlocks::Kv32, &mut dev).expect_err(what).to_string();
        println!("{what}: {err}");
        assert!(err.contains(what) && err.contains("attn_prefill_mma"), "{what}: {err}");
    }
}

/// The form Vulkan runs (`kv64 = false`) fits the 48 KiB of shared memory NVIDIA's Vulkan
/// driver offers a workgroup (the GPU run would only report it skipped); the CUDA form
/// does not, so the check sees the manifest's sizes.
#[test]
fn the_vulkan_form_fits_48_kib_of_shared_memory() {
    let m = manifest();
    let k = m.kernel("attn_prefill_mma").expect("attn_prefill_mma in the manifest");
    assert_eq!(k.variants.len(), 4);
    for v in &k.variants {
        let kv64 = v.spec.iter().any(|(n, val)| n == "kv64" && *val == onekernel_dsl::types::Literal::Bool(true));
        println!("{:?}: {} bytes", v.spec, v.shared_bytes);
        assert_eq!(v.shared_bytes <= 48 * 1024, !kv64, "{:?}: {} bytes", v.spec, v.shared_bytes);
    }
}

/// The page size is a spec constant of `attn_prefill_mma` (one compiled instance per
/// page size): a scalar argument of that name that disagrees with the launch's value is
/// an error before anything runs, naming both values; one that agrees is accepted (the
/// negative control), as the decode step's shared arguments pass it.
#[test]
fn a_page_size_argument_must_match_the_spec_constant_it_names() {
    let m = manifest();
    let k = m.kernel("attn_prefill_mma").expect("attn_prefill_mma in the manifest");
    let case = &onekernel_kernels::cases::validation_cases("attn_prefill_mma").unwrap()[0];
    let v = &k.variants[0];
    assert!(v.spec.iter().any(|(n, val)| n == "page_size" && *val == onekernel_dsl::types::Literal::U32(16)), "{:?}", v.spec);
    let generated = root().join("generated");
    let launch = onekernel_runtime::Launch { kernel: k, artifacts: &generated, spec: &v.spec, groups: case.groups };
    let args = onekernel_runtime::validate::inputs(k, case, 1).unwrap();
    onekernel_runtime::backend::check_args("cpu", &launch, &args).expect("the case's arguments");
    let agreeing = args.clone().scalar("page_size", 16u32);
    onekernel_runtime::backend::check_args("cpu", &launch, &agreeing).expect("a page size equal to the spec value");
    let other = args.clone().scalar("page_size", 32u32);
    let e = onekernel_runtime::backend::check_args("cpu", &launch, &other).unwrap_err().to_string();
    assert_eq!(e, "kernel `attn_prefill_mma` (cpu): `page_size` (u32) is a spec constant, 16 in this launch; the arguments give 32");
    // Another type: the values keep their suffixes, which tell them apart.
    let typed = args.scalar("page_size", 16i32);
    let e = onekernel_runtime::backend::check_args("cpu", &launch, &typed).unwrap_err().to_string();
    assert_eq!(e, "kernel `attn_prefill_mma` (cpu): `page_size` (u32) is a spec constant, 16u32 in this launch; the arguments give 16i32");
}
