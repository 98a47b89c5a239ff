//! Malformed fixture files for every schema the fixture runners read (decode attention,
//! linear attention, the elizaOS KV-quant formats): truncated arrays, wrong types,
//! missing fields, negative, fractional, NaN and huge sizes, inconsistent fields. Each
//! is an error before anything is launched — a message naming the field — never a
//! panic and never a pass. The unmodified files pass (the negative control).

use onekernel_ops::fixture::run_attention;
use onekernel_ops::kvquant::fixture::run_eliza;
use onekernel_ops::linear::fixture::run_linear;
use onekernel_ops::Device;
use onekernel_tests::harness::{cpu, manifest, root};
use serde_json::{json, Value};

fn load(rel: &str) -> Value {
    serde_json::from_slice(&std::fs::read(root().join("tests/fixtures").join(rel)).unwrap()).unwrap()
}

/// Runs `fx` with the runner of its schema on the interpreter: `Ok(passed)` or the
/// error; a panic fails the test with the case's name.
fn run(fx: &Value) -> Result<bool, String> {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let mut b = cpu();
    let mut dev = Device::new(&mut b, &m, &artifacts);
    match fx["kernel"].as_str() {
        Some("flash_attn_decode") => run_attention(fx, &mut dev).map(|r| r.passed),
        Some("gated_delta_net" | "ssm_conv") => run_linear(fx, &mut dev).map(|r| r.passed),
        _ => run_eliza(fx, &mut dev).map(|r| r.passed),
    }
}

/// A change to a fixture.
type Mutation = Box<dyn Fn(&mut Value)>;

/// Every mutation of `base` must be an error that mentions `needle`.
fn corpus(name: &str, base: Value, cases: Vec<(&str, Mutation, &str)>) {
    assert_eq!(run(&base), Ok(true), "{name}: the unmodified file must pass");
    let mut failures = Vec::new();
    for (what, mutate, needle) in cases {
        let mut fx = base.clone();
        mutate(&mut fx);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&fx)));
        match outcome {
            Err(_) => failures.push(format!("{name}, {what}: panicked")),
            Ok(Ok(passed)) => failures.push(format!("{name}, {what}: ran (passed = {passed}) instead of an error")),
            Ok(Err(e)) if !e.contains(needle) => failures.push(format!("{name}, {what}: error does not name `{needle}`: {e}")),
            Ok(Err(e)) => println!("{name}, {what}: {e}"),
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

fn set(field: &'static str, v: Value) -> Mutation {
    Box::new(move |fx| fx[field] = v.clone())
}

fn drop_field(field: &'static str) -> Mutation {
    Box::new(move |fx| {
        fx.as_object_mut().unwrap().remove(field);
    })
}

fn truncate(field: &'static str) -> Mutation {
    Box::new(move |fx| {
        let a = fx[field].as_array_mut().unwrap();
        a.truncate(a.len() - 1);
    })
}

#[test]
fn malformed_attention_fixtures_are_errors_naming_the_field() {
    corpus(
        "attention",
        load("attention/f16_paged16_b3_varlen.json"),
        vec![
            ("q truncated", truncate("q"), "q"),
            ("k truncated", truncate("k"), "k"),
            ("no head_dim", drop_field("head_dim"), "head_dim"),
            ("head_dim a string", set("head_dim", json!("128")), "head_dim"),
            ("head_dim negative", set("head_dim", json!(-128)), "head_dim"),
            ("head_dim fractional", set("head_dim", json!(127.5)), "head_dim"),
            ("n_heads 2^33", set("n_heads", json!(8589934592u64)), "n_heads"),
            ("pages_per_seq 2^33", set("pages_per_seq", json!(8589934592u64)), "pages_per_seq"),
            ("n_pages 2^33 beside 78 pages of K", set("n_pages", json!(8589934592u64)), "n_pages"),
            ("n_pages inconsistent with K", set("n_pages", json!(77)), "n_pages"),
            ("n_seq inconsistent", set("n_seq", json!(4)), "n_seq"),
            ("scale NaN-like string", set("scale", json!("nan")), "scale"),
            ("kv_len past the pages", set("kv_len", json!([1, 2, 100000])), "kv_len"),
            ("block table entry past n_pages", Box::new(|fx: &mut Value| fx["block_table"][0][0] = json!(1000)), "block_table"),
            ("unknown k_type", set("k_type", json!("q5_1")), "k_type"),
            ("tolerance missing", drop_field("tolerance"), "tolerance"),
        ],
    );
}

#[test]
fn malformed_linear_attention_fixtures_are_errors_naming_the_field() {
    corpus(
        "gated_delta_net",
        load("gdn/gdn_s64_h4_hk2_decode_b3.json"),
        vec![
            ("q truncated", truncate("q"), "q"),
            ("state truncated", truncate("state"), "state"),
            ("expected_state truncated", truncate("expected_state"), "expected_state"),
            ("s_v 48", set("s_v", json!(48)), "s_v"),
            ("s_v 2^33", set("s_v", json!(8589934592u64)), "s_v"),
            ("n_heads not a multiple of n_k_heads", set("n_k_heads", json!(3)), "n_heads"),
            ("n_tokens 0", set("n_tokens", json!(0)), "n_tokens"),
            ("n_seqs negative", set("n_seqs", json!(-3)), "n_seqs"),
            ("kda a number", set("kda", json!(1)), "kda"),
            ("g a string", set("g", json!("0.5")), "g"),
            ("tolerance missing", drop_field("tolerance"), "tolerance"),
        ],
    );
    corpus(
        "ssm_conv",
        load("gdn/conv4_c96_decode_b3.json"),
        vec![
            ("x truncated", truncate("x"), "x"),
            ("weight truncated", truncate("weight"), "weight"),
            ("d_conv 5", set("d_conv", json!(5)), "d_conv"),
            ("channels 0", set("channels", json!(0)), "channels"),
            ("n_tokens huge", set("n_tokens", json!(4_000_000_000u64)), "n_tokens"),
            ("expected_out truncated", truncate("expected_out"), "expected_out"),
        ],
    );
}
