//! Decode attention against the external fixtures (`tests/fixtures/attention`,
//! float64 numpy references) through the shared fixture runner, on the interpreter and,
//! where present, Vulkan (lavapipe in CI), within each file's tolerance.

use onekernel_ops::fixture::run_attention;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_tests::harness::{check_attention_fixture, fixture_json, manifest, root};
use serde_json::Value;

fn fixture(name: &str) -> Value {
    fixture_json("attention", name)
}

fn check(name: &str) {
    check_attention_fixture("attention", name);
}

#[test]
fn contiguous_gqa4_d128_matches_the_f64_reference() {
    check("f16_contig_gqa4_d128.json");
}

#[test]
fn paged_variable_length_batch_matches_the_f64_reference() {
    check("f16_paged16_b3_varlen.json");
}

#[test]
fn sinks_and_softcap_match_the_f64_reference() {
    check("f16_sinks_softcap.json");
}

#[test]
fn quantized_q8_0_paged_cache_matches_the_f64_reference() {
    check("q8_0_paged32_d128.json");
}

#[test]
fn an_unsupported_cache_format_is_reported_not_passed() {
    let mut fx = fixture("q8_0_paged32_d128.json");
    fx["k_type"] = serde_json::json!("q5_1");
    let mut cpu = CpuBackend::new(onekernel_kernels::all().iter().map(|e| e.load().unwrap()));
    let e =
        run_attention(&fx, &mut onekernel_ops::Device::new(&mut cpu, &manifest(), &root().join("generated"))).expect_err("q5_1 is not implemented");
    assert!(e.contains("`q5_1` is not supported"), "{e}");
}

#[test]
fn a_fixture_of_another_kind_is_an_error() {
    let mut cpu = CpuBackend::new(onekernel_kernels::all().iter().map(|e| e.load().unwrap()));
    let e =
        run_attention(&serde_json::json!({"kernel": "turbo4"}), &mut onekernel_ops::Device::new(&mut cpu, &manifest(), &root().join("generated")))
            .unwrap_err();
    assert!(e.contains("`turbo4` is not supported"), "{e}");
}
