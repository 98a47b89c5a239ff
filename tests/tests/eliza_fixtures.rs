//! The elizaOS KV-cache quantization fixtures (tests/fixtures/eliza, produced by
//! that project's C references) on the interpreter and, where present, Vulkan (lavapipe
//! in CI): every expected score / output within the file's tolerance (1e-3). Negative
//! controls: a changed block byte or a changed expected value fails; malformed files
//! (truncated blocks, wrong counts, unknown kernels or layouts) are errors before launch.

use onekernel_ops::kvquant::fixture::run_eliza;
use onekernel_tests::harness::{all_backends_and_msl_emu, cpu, manifest, root};
use serde_json::{json, Value};

fn fixture(name: &str) -> Value {
    let p = root().join("tests/fixtures/eliza").join(name);
    serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
}

const FILES: [&str; 5] =
    ["turbo4@4bb0529.json", "turbo4@9cb4d7c.json", "qjl@4bb0529.json", "polar_preht@7d1bafd.json", "fused_attn_qjl_tbq@fc9a9ba.json"];

#[test]
fn every_eliza_fixture_passes_on_every_backend() {
    let m = manifest();
    for mut b in all_backends_and_msl_emu() {
        for name in FILES {
            let r = run_eliza(&fixture(name), &mut onekernel_ops::Device::new(b.as_mut(), &m, &root().join("generated")))
                .unwrap_or_else(|e| panic!("{name} on {}: {e}", b.name()));
            println!("{name} on {}: {} values, max |Δ| {:.2e} (≤ {:e})", r.backend, r.compared, r.max_abs, r.tolerance);
            assert!(r.passed, "{name}: {r:?}");
        }
    }
}

#[test]
fn a_changed_byte_or_expected_value_fails() {
    let m = manifest();
    let mut be = cpu();
    for name in FILES {
        let mut fx = fixture(name);
        // The first block's scale / norm byte of the first (or only) block set.
        let target = if fx["cases"].is_array() { &mut fx["cases"][0]["k_blocks"] } else { &mut fx["k_blocks"] };
        let at = if name.starts_with("qjl") || name.starts_with("fused") { 33 } else { 1 };
        let b = target[at].as_u64().unwrap();
        target[at] = json!(b ^ 0x08);
        let r = run_eliza(&fx, &mut onekernel_ops::Device::new(&mut be, &m, &root().join("generated"))).unwrap();
        assert!(!r.passed, "{name}: a changed block byte still passed (max |Δ| {})", r.max_abs);
        let mut fx = fixture(name);
        let target = if fx["cases"].is_array() { &mut fx["cases"][0]["expected_out"] } else { &mut fx["expected_scores"] };
        target[0] = json!(target[0].as_f64().unwrap() + 0.01);
        assert!(
            !run_eliza(&fx, &mut onekernel_ops::Device::new(&mut be, &m, &root().join("generated"))).unwrap().passed,
            "{name}: a changed expected value passed"
        );
    }
}

#[test]
fn malformed_fixtures_are_errors() {
    let m = manifest();
    let mut be = cpu();
    let mut cases: Vec<(&str, Value)> = Vec::new();
    let mut fx = fixture("turbo4@4bb0529.json");
    fx["k_blocks"].as_array_mut().unwrap().pop();
    cases.push(("truncated blocks", fx));
    let mut fx = fixture("qjl@4bb0529.json");
    fx["n_tokens"] = json!(9);
    cases.push(("token count larger than the blocks", fx));
    let mut fx = fixture("qjl@4bb0529.json");
    fx["n_kv_heads"] = json!(3);
    cases.push(("heads not a multiple", fx));
    let mut fx = fixture("turbo4@4bb0529.json");
    fx["block_bytes"] = json!(70);
    cases.push(("unknown turbo4 layout", fx));
    let mut fx = fixture("polar_preht@7d1bafd.json");
    fx["hq"].as_array_mut().unwrap().truncate(100);
    cases.push(("short query", fx));
    let mut fx = fixture("fused_attn_qjl_tbq@fc9a9ba.json");
    fx["cases"][1]["v_blocks"].as_array_mut().unwrap().truncate(1000);
    cases.push(("truncated V blocks", fx));
    let mut fx = fixture("turbo4@4bb0529.json");
    fx["k_blocks"][3] = json!(300);
    cases.push(("a byte out of range", fx));
    cases.push(("unknown kernel", json!({"kernel": "q5_polar", "head_dim": 128})));
    cases.push(("another head size", json!({"kernel": "qjl", "head_dim": 64})));
    for (what, fx) in cases {
        let e = run_eliza(&fx, &mut onekernel_ops::Device::new(&mut be, &m, &root().join("generated"))).expect_err(what);
        println!("{what}: {e}");
    }
}
