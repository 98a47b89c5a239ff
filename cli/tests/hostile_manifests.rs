//! A corpus of malformed generated directories: every command that runs artifacts must
//! refuse each with exit code 2 and a message naming the file and field, without a
//! panic, and leave the directory as it was.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn onekernel(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_onekernel")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().display().to_string(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// `(what, edit of the manifest text, words the message must contain)`.
type Case = (&'static str, Box<dyn Fn(&str) -> String>, &'static [&'static str]);

fn edit_json(f: impl Fn(&mut Value) + 'static) -> Box<dyn Fn(&str) -> String> {
    Box::new(move |text| {
        let mut v: Value = serde_json::from_str(text).unwrap();
        f(&mut v);
        serde_json::to_string_pretty(&v).unwrap()
    })
}

fn kernel0(v: &mut Value) -> &mut Value {
    &mut v["kernels"][0]
}

#[test]
fn every_malformed_manifest_is_refused_naming_the_field_and_nothing_is_written() {
    let dir = std::env::temp_dir().join(format!("onekernel-hostile-manifest-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_str().unwrap().to_string();
    let (code, out) = onekernel(&["gen", "--out", &d, "--kernel", "softmax_rows"]);
    assert_eq!(code, 0, "{out}");
    let path = dir.join("manifest.json");
    let good = std::fs::read_to_string(&path).unwrap();

    let cases: Vec<Case> = vec![
        ("empty file", Box::new(|_| String::new()), &["cannot parse", "manifest.json"]),
        ("truncated", Box::new(|t| t[..t.len() / 2].to_string()), &["cannot parse", "EOF"]),
        ("not an object", Box::new(|_| "[1, 2, 3]".into()), &["cannot parse"]),
        ("NaN is not JSON", Box::new(|t| t.replacen("\"shared_bytes\": ", "\"shared_bytes\": NaN, \"x\": ", 1)), &["cannot parse"]),
        ("missing field", edit_json(|v| drop(kernel0(v).as_object_mut().unwrap().remove("workgroup"))), &["missing field `workgroup`"]),
        ("wrong type", edit_json(|v| kernel0(v)["workgroup"] = json!("256")), &["cannot parse", "invalid type"]),
        ("negative size", edit_json(|v| kernel0(v)["shared_bytes"] = json!(-4)), &["cannot parse", "-4"]),
        ("huge size", edit_json(|v| kernel0(v)["shared_bytes"] = json!(1e30)), &["cannot parse"]),
        ("size over u32", edit_json(|v| kernel0(v)["shared_bytes"] = json!(1u64 << 33)), &["cannot parse", "8589934592"]),
        ("schema", edit_json(|v| v["schema"] = json!(7)), &["schema", "version 7"]),
        ("zero workgroup", edit_json(|v| kernel0(v)["workgroup"] = json!([0, 1, 1])), &["kernel `softmax_rows`", "workgroup"]),
        ("huge workgroup", edit_json(|v| kernel0(v)["workgroup"] = json!([4294967295u32, 4294967295u32, 2])), &["workgroup"]),
        ("binding", edit_json(|v| kernel0(v)["buffers"][1]["binding"] = json!(5)), &["buffers[1].binding"]),
        ("push offset", edit_json(|v| kernel0(v)["push_constants"][0]["offset"] = json!(2)), &["push_constants[0].offset"]),
        ("push bytes", edit_json(|v| kernel0(v)["push_constant_bytes"] = json!(1 << 20)), &["push_constant_bytes"]),
        ("shared bytes", edit_json(|v| kernel0(v)["shared_bytes"] = json!(u32::MAX)), &["shared_bytes", "limit"]),
        ("no variants", edit_json(|v| kernel0(v)["variants"] = json!([])), &["variants"]),
        ("path traversal", edit_json(|v| kernel0(v)["vulkan"]["spirv"]["path"] = json!("../../etc/passwd")), &["vulkan.spirv", "leaves"]),
        ("absolute path", edit_json(|v| kernel0(v)["cuda"]["source"]["path"] = json!("/etc/passwd")), &["cuda.source", "leaves"]),
        ("bad hash", edit_json(|v| kernel0(v)["metal"]["source"]["sha256"] = json!("00")), &["metal.source", "sha256"]),
        (
            "hash of other bytes",
            edit_json(|v| kernel0(v)["vulkan"]["glsl"]["sha256"] = json!("0".repeat(64))),
            &["vulkan.glsl", "does not match the manifest's sha256", "onekernel gen"],
        ),
        (
            "missing artifact",
            edit_json(|v| kernel0(v)["metal"]["source"]["path"] = json!("metal/nothing.metal")),
            &["metal.source", "cannot be read"],
        ),
        (
            "duplicate kernel",
            edit_json(|v| {
                let k = v["kernels"][0].clone();
                v["kernels"].as_array_mut().unwrap().push(k);
            }),
            &["appears twice"],
        ),
        (
            "length parameter",
            edit_json(|v| kernel0(v)["buffers"][0]["len"] = json!({"kind": {"param": 4000000000u32}, "ty": "u32", "span": 0})),
            &["buffers[0].len", "does not exist"],
        ),
        ("param names", edit_json(|v| kernel0(v)["param_names"] = json!([])), &["param_names"]),
    ];

    let commands: Vec<Vec<&str>> = vec![vec!["validate", "--backend", "cpu", "--kernel", "softmax_rows", "--out", &d], vec!["list", "--out", &d]];
    for (what, edit, words) in &cases {
        std::fs::write(&path, edit(&good)).unwrap();
        let before = snapshot(&dir);
        for args in &commands {
            let (code, out) = onekernel(args);
            assert_eq!(code, 2, "{what}: {args:?}\n{out}");
            assert!(!out.contains("panicked"), "{what}: {out}");
            assert!(out.contains("manifest.json") || out.contains("onekernel gen"), "{what}: the message names neither the file nor the fix:\n{out}");
            for w in *words {
                assert!(out.contains(w), "{what}: expected `{w}` in:\n{out}");
            }
        }
        assert!(snapshot(&dir) == before, "{what}: the directory changed");
    }

    // A manifest larger than any real one is refused before it is read (a sparse file).
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(1 << 30).unwrap();
    let (code, out) = onekernel(&["list", "--out", &d]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("more than a manifest can be"), "{out}");

    // Control: the untouched manifest runs.
    std::fs::write(&path, &good).unwrap();
    let (code, out) = onekernel(&["validate", "--backend", "cpu", "--kernel", "softmax_rows", "--out", &d]);
    assert_eq!(code, 0, "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
