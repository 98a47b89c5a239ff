//! Compile-time diagnostics of `#[kernel]`: each rejected construct fails at its span
//! with a message that says what is allowed instead (snapshots in `ui/*.stderr`), and
//! a kernel that uses the whole DSL compiles.

#[test]
fn diagnostics() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
