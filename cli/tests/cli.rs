//! The `onekernel` command as a user runs it: arguments, exit codes, what it prints.

use std::process::Command;

fn onekernel(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_onekernel")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn cli_reports_bad_input_clearly() {
    let (code, _, err) = onekernel(&["list", "--kernel", "no_such_kernel"]);
    assert_eq!(code, 2);
    assert!(err.contains("no kernel named `no_such_kernel`; known kernels:") && err.contains("softmax_rows"), "{err}");
    let (code, _, err) = onekernel(&["gen", "--out", "/proc/onekernel-cannot-write-here"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot create directory `/proc/onekernel-cannot-write-here`"), "{err}");
    let (code, _, err) = onekernel(&["frobnicate"]);
    assert_eq!(code, 2);
    assert!(err.contains("usage: onekernel"), "{err}");
}

#[test]
fn cli_gen_then_check_round_trips_and_check_catches_edits() {
    let dir = std::env::temp_dir().join(format!("onekernel-cli-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let (code, _, err) = onekernel(&["check", "--out", d]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("missing: manifest.json"), "{err}");
    let (code, _, err) = onekernel(&["gen", "--out", d]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("generated") && err.contains("[1/"), "{err}");
    let (code, _, err) = onekernel(&["check", "--out", d]);
    assert_eq!(code, 0, "{err}");
    // Edit a generated file and add a stray one: check lists both.
    let cu = dir.join("cuda/softmax_rows.cu");
    std::fs::write(&cu, "// edited\n").unwrap();
    std::fs::write(dir.join("cuda/stray.cu"), "").unwrap();
    let (code, _, err) = onekernel(&["check", "--out", d]);
    assert_eq!(code, 1);
    assert!(err.contains("differs: cuda/softmax_rows.cu") && err.contains("stale (not generated any more): cuda/stray.cu"), "{err}");
    // A partial regeneration restores the one kernel and keeps the manifest whole.
    let (code, _, err) = onekernel(&["gen", "--out", d, "--kernel", "softmax_rows"]);
    assert_eq!(code, 0, "{err}");
    std::fs::remove_file(dir.join("cuda/stray.cu")).unwrap();
    let (code, _, err) = onekernel(&["check", "--out", d]);
    assert_eq!(code, 0, "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn cli_fixture_runs_attention_and_eliza_fixtures_and_rejects_what_it_cannot_run() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/attention/");
    let gen = concat!(env!("CARGO_MANIFEST_DIR"), "/../generated");
    let (code, out, err) = onekernel(&["fixture", &format!("{dir}f16_paged16_b3_varlen.json"), "--backend", "cpu", "--out", gen]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("f16_paged16_b3_varlen.json") && out.contains(" ok"), "{out}");
    let (code, out, _) = onekernel(&["fixture", &format!("{dir}q8_0_paged32_d128.json"), "--backend", "cpu", "--out", gen]);
    assert_eq!(code, 0, "{out}");
    let bad = std::env::temp_dir().join(format!("onekernel-bad-fixture-{}.json", std::process::id()));
    std::fs::write(&bad, r#"{"kernel": "turbo5", "head_dim": 128}"#).unwrap();
    let (code, out, _) = onekernel(&["fixture", bad.to_str().unwrap(), "--backend", "cpu", "--out", gen]);
    assert_eq!(code, 1);
    assert!(out.contains("ERROR fixture kernel `turbo5` is not supported"), "{out}");
    // A known kernel with a layout the runner does not know is an error too, not a pass.
    std::fs::write(&bad, r#"{"kernel": "turbo4", "head_dim": 128, "block_bytes": 70, "n_kv": 1}"#).unwrap();
    let (code, out, _) = onekernel(&["fixture", bad.to_str().unwrap(), "--backend", "cpu", "--out", gen]);
    assert_eq!(code, 1);
    assert!(out.contains("ERROR turbo4 with 1 × 70-byte blocks"), "{out}");
    let _ = std::fs::remove_file(&bad);
    // A prefill fixture in the fast mode: within its bounds on the interpreter; lavapipe
    // has no register tiles and says so (not a pass, not a failure).
    let prefill = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/prefill/prefill_f16_t5_causal.json");
    let (code, out, err) = onekernel(&["fixture", prefill, "--backend", "cpu,vulkan", "--out", gen, "--prefill-fast"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.lines().any(|l| l.contains("prefill_f16_t5_causal.json") && l.contains("cpu") && l.ends_with(" ok")), "{out}");
    assert!(out.contains("SKIPPED (fast prefill)") || !out.contains("vulkan "), "{out}");
    // Every elizaOS fixture on the interpreter and Vulkan (lavapipe).
    let eliza = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/eliza"));
    let mut args: Vec<String> = vec!["fixture".into()];
    let mut files: Vec<String> = std::fs::read_dir(eliza)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    args.extend(files.iter().cloned());
    args.extend(["--backend".into(), "cpu,vulkan".into(), "--out".into(), gen.into()]);
    let (code, out, err) = onekernel(&args.iter().map(String::as_str).collect::<Vec<_>>());
    println!("{out}{err}");
    assert_eq!(code, 0, "{out}{err}");
    let ok_lines = out.lines().filter(|l| l.contains("max |Δ|") && l.ends_with(" ok")).count();
    let backends = if err.contains("vulkan: skipped") { 1 } else { 2 };
    assert_eq!(ok_lines, files.len() * backends, "{out}");
}

/// `onekernel bench --quick`: a smoke test of the benchmark program (not a measurement):
/// it runs chunk + combine repeatedly on Vulkan (lavapipe in CI), apart and as decode
/// steps, and prints its tables.
#[test]
fn cli_bench_quick_prints_the_table() {
    let gen = concat!(env!("CARGO_MANIFEST_DIR"), "/../generated");
    let (code, out, err) = onekernel(&["bench", "--backend", "vulkan", "--runs", "1", "--quick", "--out", gen]);
    if err.contains("`vulkan` was asked for and is not available") {
        assert_eq!(code, 2, "a backend asked for by name and absent is an error");
        assert!(std::env::var("CI").is_err(), "Vulkan (lavapipe) is required in CI: {err}");
        println!("SKIPPED (no Vulkan device)");
        return;
    }
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("| B × L | paged fast |") && out.contains("| 1 × 100 |"), "{out}");
    // Both times: the decode step (the two kernels back to back, timed as one unit on the
    // device) first, then the kernels timed apart; lavapipe has timestamps, so the
    // step's row holds a finite time.
    let (step, apart) = (out.find("decode step (chunk + combine back to back"), out.find("kernels timed apart"));
    assert!(step.zip(apart).is_some_and(|(s, a)| s < a), "{out}");
    let step_time = out[step.unwrap_or(0)..]
        .lines()
        .find(|l| l.starts_with("| 1 × 100 |"))
        .and_then(|l| l.split("| ").nth(2))
        .and_then(|c| c.split(" µs").next())
        .and_then(|v| v.parse::<f64>().ok());
    assert!(step_time.is_some_and(|t| t > 0.0), "{out}");
    // The driver's own copy is measured beside `copy_words` (a finite figure: lavapipe
    // has timestamps).
    let driver = out.split("driver copy ").nth(1).and_then(|t| t.split(" GB/s").next()).and_then(|v| v.parse::<f64>().ok());
    assert!(driver.is_some_and(|v| v > 0.0), "{out}");
}

/// `onekernel vk-stats`: the driver compiler's statistics where the driver offers
/// VK_KHR_pipeline_executable_properties (NVIDIA's driver does),
/// otherwise an error that says why (lavapipe of Mesa 22 lacks the extension).
#[test]
fn cli_vk_stats_reports_statistics_or_says_why_not() {
    let gen = concat!(env!("CARGO_MANIFEST_DIR"), "/../generated");
    let (code, _, err) = onekernel(&["vk-stats", "--kernel", "no_such_kernel", "--out", gen]);
    assert_eq!(code, 2);
    assert!(err.contains("no kernel named `no_such_kernel`"), "{err}");
    let (code, out, err) = onekernel(&["vk-stats", "--kernel", "copy_words", "--out", gen]);
    if code == 0 {
        assert!(out.contains("copy_words") && out.contains("defaults") && out.contains("(subgroup "), "{out}{err}");
    } else {
        assert_eq!(code, 2, "{out}{err}");
        if err.contains("needs a Vulkan device") {
            assert!(std::env::var("CI").is_err(), "Vulkan (lavapipe) is required in CI: {err}");
            println!("SKIPPED (no Vulkan device)");
            return;
        }
        assert!(err.contains("does not offer VK_KHR_pipeline_executable_properties"), "{err}");
    }
}

/// `bench FLAG v` fails with `message` for each `bad` value, and `bench-kvquant FLAG
/// good` fails because the option is decode attention's alone.
fn bench_option_is_checked_and_attention_only(flag: &str, bad: &[&str], message: &str, good: &str) {
    for v in bad {
        let (code, _, err) = onekernel(&["bench", flag, v]);
        assert_eq!(code, 2, "{flag} {v}");
        assert!(err.contains(message), "{flag} {v}: {err}");
    }
    let (code, _, err) = onekernel(&["bench-kvquant", flag, good]);
    assert_eq!(code, 2, "bench-kvquant {flag} {good}");
    assert!(
        err.contains(
            "--fast-chunk, --tc-chunk, --det-chunks, --det-long-after, --tensor-cores, --tensor-cores-only, --merge and --no-merge are options of `onekernel bench`"
        ),
        "{err}"
    );
}

#[test]
fn cli_bench_times_tensor_cores_alone_only_where_modes_are_named_and_only_for_attention() {
    let (code, _, err) = onekernel(&["bench", "--tensor-cores-only"]);
    assert_eq!(code, 2);
    assert!(err.contains("--tensor-cores-only times the --tensor-cores modes alone: name them"), "{err}");
    let (code, _, err) = onekernel(&["bench-kvquant", "--tensor-cores-only"]);
    assert_eq!(code, 2);
    assert!(err.contains("--tensor-cores, --tensor-cores-only, --merge and --no-merge are options of `onekernel bench`"), "{err}");
}

#[test]
fn cli_bench_merges_or_not_as_asked_only_for_attention() {
    let (code, _, err) = onekernel(&["bench", "--merge", "--no-merge"]);
    assert_eq!(code, 2);
    assert!(err.contains("--merge and --no-merge exclude each other"), "{err}");
    for flag in ["--merge", "--no-merge"] {
        let (code, _, err) = onekernel(&["bench-kvquant", flag]);
        assert_eq!(code, 2, "{flag}");
        assert!(err.contains("--merge and --no-merge are options of `onekernel bench`"), "{flag}: {err}");
    }
}

#[test]
fn cli_bench_takes_a_tensor_core_chunk_of_1_to_65536_tokens_and_only_for_attention() {
    bench_option_is_checked_and_attention_only("--tc-chunk", &["0", "65537", "x"], "--tc-chunk takes a chunk length of 1 … 65536 tokens", "1024");
}

#[test]
fn cli_bench_takes_a_fast_chunk_of_1_to_512_tokens_and_only_for_attention() {
    bench_option_is_checked_and_attention_only("--fast-chunk", &["0", "513"], "--fast-chunk takes a chunk length of 1 … 512 tokens", "64");
}

#[test]
fn cli_bench_takes_one_or_two_deterministic_chunks_per_workgroup() {
    bench_option_is_checked_and_attention_only(
        "--det-chunks",
        &["0", "3", "two"],
        "--det-chunks takes 1 or 2 deterministic chunks per workgroup",
        "1",
    );
}

#[test]
fn cli_bench_takes_a_positive_deterministic_threshold_and_only_for_attention() {
    bench_option_is_checked_and_attention_only(
        "--det-long-after",
        &["0", "-1", "long"],
        "--det-long-after takes a sequence length of at least 1 token",
        "2048",
    );
}

#[test]
fn cli_bench_takes_one_to_three_tensor_core_stages_and_only_for_attention() {
    bench_option_is_checked_and_attention_only(
        "--tensor-cores",
        &["0", "4", "2,4", "two"],
        "--tensor-cores takes 1, 2, 3 (pipeline stages) or det",
        "2",
    );
}

#[test]
fn cli_bench_rejects_a_malformed_shape() {
    let (code, _, err) = onekernel(&["bench", "--shape", "16by4096"]);
    assert_eq!(code, 2);
    assert!(err.contains("--shape takes BATCHxLENGTH"), "{err}");
    let (code, _, err) = onekernel(&["bench-kvquant", "--shape", "1x16384"]);
    assert_eq!(code, 2);
    assert!(err.contains("bench-kvquant has no --shape"), "{err}");
}

/// The command works from any directory of a machine: without `--out` it finds the
/// generated kernels it was built with, and its help names no internal documents.
#[test]
fn cli_runs_a_fixture_from_another_directory_and_says_where_the_kernels_are_missing() {
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/attention/f16_paged16_b3_varlen.json");
    let elsewhere = std::env::temp_dir();
    let out = Command::new(env!("CARGO_BIN_EXE_onekernel")).args(["fixture", fixture, "--backend", "cpu"]).current_dir(&elsewhere).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains(" ok"), "{text}");
    // An explicit --out that holds no manifest is an error naming the path and the fix.
    let (code, _, err) = onekernel(&["fixture", fixture, "--backend", "cpu", "--out", "/nonexistent-onekernel-dir"]);
    assert_ne!(code, 0);
    assert!(err.contains("/nonexistent-onekernel-dir/manifest.json") && err.contains("--out"), "{err}");
    let (_, _, help) = onekernel(&["--help"]);
    assert!(!help.to_lowercase().contains("issue") && !help.contains(".md"), "{help}");
}

/// The MSL emulator from the command line: `validate --backend msl-emu` on one kernel
/// family, and every shared fixture with `fixture --backend msl-emu` (the whole catalogue
/// runs on msl-emu in `tests/tests/msl_emu.rs`).
#[test]
fn cli_validates_and_runs_every_fixture_on_msl_emu() {
    let gen = concat!(env!("CARGO_MANIFEST_DIR"), "/../generated");
    let (code, out, err) = onekernel(&["validate", "--backend", "msl-emu", "--kernel", "ssm_conv", "--out", gen]);
    if err.contains("`msl-emu` was asked for and is not available") {
        assert!(std::env::var("CI").is_err(), "msl-emu (clang++) is required in CI: {err}");
        println!("SKIPPED on msl-emu: {err}");
        return;
    }
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.lines().filter(|l| l.starts_with("msl-emu") && l.contains(" ok ")).count(), 24 * 2, "{out}");
    let fixtures = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures"));
    let mut files: Vec<String> = Vec::new();
    for family in std::fs::read_dir(fixtures).unwrap() {
        let family = family.unwrap().path();
        if family.is_dir() {
            for f in std::fs::read_dir(&family).unwrap() {
                let p = f.unwrap().path();
                if p.extension().is_some_and(|e| e == "json") {
                    files.push(p.display().to_string());
                }
            }
        }
    }
    assert!(files.len() >= 14, "{files:?}");
    let mut args: Vec<&str> = vec!["fixture"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["--backend", "msl-emu", "--out", gen]);
    let (code, out, err) = onekernel(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.lines().filter(|l| l.contains(" msl-emu ") && l.ends_with(" ok")).count(), files.len(), "{out}");
}

/// Artifacts generated from an older source of a kernel are refused by every command
/// that runs them, with the `gen` command to run; `check` reports them; after `gen` the
/// same commands run.
#[test]
fn cli_refuses_stale_artifacts_with_the_gen_command() {
    let dir = std::env::temp_dir().join(format!("onekernel-stale-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let (code, _, err) = onekernel(&["gen", "--out", d, "--kernel", "rms_norm_f32", "--kernel", "read_words"]);
    assert_eq!(code, 0, "{err}");
    // The manifest as an earlier source of rms_norm_f32 would have left it.
    let path = dir.join("manifest.json");
    let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    for k in m["kernels"].as_array_mut().unwrap() {
        if k["name"] == "rms_norm_f32" {
            k["source"]["hash"] = serde_json::json!("0123456789abcdef");
        }
    }
    std::fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/gdn/conv4_c96_decode_b3.json");
    for args in [
        vec!["validate", "--backend", "cpu", "--kernel", "rms_norm_f32", "--out", d],
        vec!["fixture", fixture, "--backend", "cpu", "--out", d],
        vec!["list", "--out", d],
        vec!["bench-linear", "--backend", "cpu", "--quick", "--runs", "1", "--out", d],
    ] {
        let (code, out, err) = onekernel(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains("is out of date") && err.contains("`rms_norm_f32` (generated from source hash 0123456789abcdef"), "{args:?}: {err}");
        assert!(err.contains(&format!("Run `onekernel gen --out {d}`")), "{args:?}: {err}");
    }
    let (code, _, err) = onekernel(&["gen", "--out", d, "--kernel", "rms_norm_f32"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = onekernel(&["validate", "--backend", "cpu", "--kernel", "rms_norm_f32", "--out", d]);
    assert_eq!(code, 0, "{out}{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `bench-formats --smoke` and `bench-prefill --smoke` run every launch path once at a
/// small shape on lavapipe and print their tables.
#[test]
fn cli_format_and_prefill_benches_run_their_smoke_shapes() {
    let gen = concat!(env!("CARGO_MANIFEST_DIR"), "/../generated");
    for (cmd, rows) in [
        ("bench-formats", &["| vulkan | fp8_mixed | 1 × 300 | deterministic |", "| vulkan | 64 × 256 | nvfp4 |"][..]),
        ("bench-prefill", &["| vulkan | 2 × 40 | 80 |"][..]),
    ] {
        let (code, out, err) = onekernel(&[cmd, "--backend", "vulkan", "--runs", "1", "--smoke", "--out", gen]);
        if err.contains("`vulkan` was asked for and is not available") {
            assert!(std::env::var("CI").is_err(), "Vulkan (lavapipe) is required in CI: {err}");
            println!("SKIPPED (no Vulkan device)");
            return;
        }
        assert_eq!(code, 0, "{cmd}: {out}{err}");
        assert!(err.contains("not measurements") || err.contains("not a measurement"), "{cmd} says its figures are no measurement: {err}");
        for r in rows {
            assert!(out.contains(r), "{cmd}: no row `{r}` in {out}");
        }
    }
}

/// `bench-tiles` builds its probe kernel and, on a device without register tiles
/// (lavapipe), says so and exits cleanly instead of timing anything.
#[test]
fn cli_tile_bench_reports_a_device_without_tiles() {
    let (code, out, err) = onekernel(&["bench-tiles", "--backend", "vulkan", "--runs", "1"]);
    if err.contains("`vulkan` was asked for and is not available") {
        assert!(std::env::var("CI").is_err(), "Vulkan (lavapipe) is required in CI: {err}");
        println!("SKIPPED (no Vulkan device)");
        return;
    }
    assert_eq!(code, 0, "{out}{err}");
    if err.contains("llvmpipe") {
        assert!(err.contains("SKIPPED: it uses register tiles"), "{err}");
    }
    let (code, _, err) = onekernel(&["bench-tiles", "--shape", "1x4096"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--shape") && err.contains("bench-tiles"), "{err}");
}

/// One grammar for every subcommand: list flags take commas and repetition alike, a
/// family name selects its type instances, a one-value flag twice and an unknown flag
/// are errors that name the flag and the subcommand.
#[test]
fn cli_has_one_grammar_for_every_subcommand() {
    let gen = concat!(env!("CARGO_MANIFEST_DIR"), "/../generated");
    let verdicts = |out: &str, backend: &str| out.lines().filter(|l| l.starts_with(backend) && l.contains(" ok ")).count();
    // A comma list, and the same list by repetition.
    let (code, out, err) = onekernel(&["validate", "--backend", "cpu,msl-emu", "--kernel", "softmax_rows", "--out", gen]);
    if err.contains("`msl-emu` was asked for and is not available") {
        println!("SKIPPED (no clang++ for msl-emu): {err}");
        return;
    }
    assert_eq!(code, 0, "{out}{err}");
    let emu = 3;
    assert_eq!((verdicts(&out, "cpu"), verdicts(&out, "msl-emu")), (3, emu), "{out}");
    let (code, out2, err) = onekernel(&["validate", "--backend", "cpu", "--backend", "msl-emu", "--kernel", "softmax_rows", "--out", gen]);
    assert_eq!(code, 0, "{err}");
    assert_eq!((verdicts(&out2, "cpu"), verdicts(&out2, "msl-emu")), (3, emu), "{out2}");
    // A family name selects every type instance.
    let (code, out, err) = onekernel(&["validate", "--backend", "cpu", "--kernel", "rms_norm", "--out", gen]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("rms_norm_f32") && out.contains("rms_norm_f16"), "{out}");
    let (code, out, _) = onekernel(&["list", "--kernel=rms_norm,softmax_rows", "--out", gen]);
    assert_eq!(code, 0);
    assert!(out.contains("rms_norm_f32") && out.contains("rms_norm_f16") && out.contains("softmax_rows") && !out.contains("copy_words"), "{out}");
    // Errors: a one-value flag twice, an unknown flag, a missing value, for several subcommands.
    for (args, needle) in [
        (vec!["validate", "--out", gen, "--out", gen], "--out is given twice"),
        (vec!["fixture", "x.json", "--evidence", "a", "--evidence", "b"], "--evidence is given twice"),
        (vec!["bench-linear", "--runs", "1", "--runs", "2"], "--runs is given twice"),
        (vec!["bench", "--quick", "--quick"], "--quick is given twice"),
        (vec!["gen", "--backend", "cpu"], "`gen` has no option `--backend`"),
        (vec!["attention-grid", "--kernel", "x"], "`attention-grid` has no option `--kernel`"),
        (vec!["vk-stats", "--frobnicate"], "`vk-stats` has no option `--frobnicate`"),
        (vec!["validate", "--seed"], "--seed needs a value"),
        (vec!["validate", "--seed", "x"], "--seed takes a number (got `x`)"),
        (vec!["list", "stray"], "`list` takes no argument `stray`"),
    ] {
        let (code, out, err) = onekernel(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// A backend asked for by name that is not present is an error (exit 2, naming it and
/// why); `all`, and a command's default list, skip what is absent with a visible line.
#[test]
fn cli_fails_for_an_absent_backend_named_and_skips_it_under_all() {
    let gen = concat!(env!("CARGO_MANIFEST_DIR"), "/../generated");
    let (code, out, err) = onekernel(&["validate", "--backend", "cuda", "--kernel", "copy_words", "--out", gen]);
    if code == 0 {
        println!("CUDA is present here; the absent-backend error is not exercised: {out}");
        return;
    }
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("backend `cuda` was asked for and is not available") && err.contains("--backend all"), "{err}");
    let (code, out, err) = onekernel(&["validate", "--backend", "all", "--kernel", "copy_words", "--out", gen]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("cuda: skipped"), "{err}");
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/gdn/conv4_c96_decode_b3.json");
    let (code, _, err) = onekernel(&["fixture", fixture, "--out", gen]);
    assert_eq!(code, 0, "the default list skips what is absent: {err}");
    let (code, _, err) = onekernel(&["fixture", fixture, "--backend", "cpu,cuda", "--out", gen]);
    assert_eq!(code, 2, "{err}");
}

/// Hostile values for every kind of option: each is exit 2 with a message naming the
/// option, never a panic, and none allocates for the number it was given.
#[test]
fn cli_refuses_hostile_option_values_naming_the_option() {
    let gen = concat!(env!("CARGO_MANIFEST_DIR"), "/../generated");
    for (args, needle) in [
        (vec!["bench", "--shape", "4294967295x4294967295", "--backend", "cpu"], "more than the 4194304 a benchmark cache is built for"),
        (vec!["bench", "--shape", "0x5"], "--shape takes BATCHxLENGTH"),
        (vec!["bench", "--shape", "-1x5"], "--shape takes BATCHxLENGTH"),
        (vec!["bench", "--shape", "16x"], "--shape takes BATCHxLENGTH"),
        (vec!["bench-kvquant", "--runs", "0"], "--runs takes 1 … 100000"),
        (vec!["bench-linear", "--runs", "4294967295"], "--runs takes 1 … 100000"),
        (vec!["bench-linear", "--runs", "99999999999999999999"], "--runs takes a number"),
        (vec!["validate", "--cases", "0", "--out", gen], "--cases takes a number of cases ≥ 1"),
        (vec!["validate", "--cases", "-3", "--out", gen], "--cases takes a number of cases ≥ 1"),
        (vec!["validate", "--variants", "0", "--out", gen], "--variants takes a number of variants ≥ 1"),
        (vec!["gen", "--threads", "-1"], "--threads takes a number of threads"),
        (vec!["validate", "--seed", "99999999999999999999999", "--out", gen], "--seed takes a number"),
        (vec!["validate", "--kernel", "../etc/passwd", "--out", gen, "--backend", "cpu"], "no kernel named `../etc/passwd`"),
        (vec!["validate", "--backend", "vulkan;rm -rf /", "--out", gen], "vulkan;rm -rf /"),
        (vec!["validate", "--kernel", "softmax_rows", "--variant", "nope", "--backend", "cpu", "--out", gen], "has no variant `nope`"),
        (vec!["bench", "--fast-chunk", "100000"], "--fast-chunk takes a chunk length of 1 … 512"),
        (vec!["bench", "--tensor-cores", "9"], "--tensor-cores takes 1, 2, 3"),
    ] {
        let (code, out, err) = onekernel(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(needle), "{args:?}: expected `{needle}` in: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

/// `validate --variants N` runs each kernel's first N variants that the device runs; a
/// variant the device cannot run is reported and does not count.
#[test]
fn cli_validate_takes_the_first_variants_the_device_runs() {
    let gen = concat!(env!("CARGO_MANIFEST_DIR"), "/../generated");
    let verdicts = |out: &str| out.lines().filter(|l| l.contains(" ok ")).count();
    let (code, out, err) = onekernel(&["validate", "--backend", "cpu", "--kernel", "ssm_conv", "--cases", "1", "--variants", "2", "--out", gen]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(verdicts(&out), 2, "{out}");
    assert!(out.contains("gather = false") && out.contains("gather = true"), "the first two variants in manifest order: {out}");
    let (code, all, err) = onekernel(&["validate", "--backend", "cpu", "--kernel", "ssm_conv", "--cases", "1", "--out", gen]);
    assert_eq!(code, 0, "{all}{err}");
    assert!(verdicts(&all) > 2, "without --variants every variant runs: {all}");

    // lavapipe runs no variant of the tensor-core decode kernel: every one is reported
    // SKIPPED, none counts, so all of them are tried.
    let (code, out, err) =
        onekernel(&["validate", "--backend", "vulkan", "--kernel", "attn_decode_chunk_mma", "--cases", "1", "--variants", "1", "--out", gen]);
    if err.contains("llvmpipe") {
        assert_eq!(code, 0, "{out}{err}");
        assert_eq!(out.lines().filter(|l| l.contains(" SKIPPED ")).count(), 12, "{out}");
    } else {
        println!("SKIPPED: the skip-not-counted half needs lavapipe ({})", err.lines().next().unwrap_or(""));
    }
}
