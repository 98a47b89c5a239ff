//! The validator on a `fast` kernel (`attn_decode_chunk_mma`): its verdicts are by NMSE,
//! and outputs that are equal on both sides — including the −∞ maxima of chunks past a
//! sequence's end — count as no error (they once made NMSE NaN, so every such verdict
//! failed). The interpreter is checked against itself; the negative control changes one
//! query value of the checked run: the comparison must see it (mismatches, a finite
//! NMSE above zero). That one value moves this case's NMSE to 4.4e-4, inside the `fast`
//! bound of 5e-4, which is what a tolerance class allows; the decode kernel's own
//! test holds it to 2e-6 against the float64 reference.

use onekernel_dsl::ir::Determinism;
use onekernel_runtime::validate::{validate, ValidateOptions, FAST_NMSE};
use onekernel_tests::harness;

#[test]
fn equal_infinities_pass_and_a_changed_query_is_seen() {
    let dir = harness::root().join("generated");
    let m = harness::manifest();
    let k = m.kernel("attn_decode_chunk_mma").unwrap();
    assert_eq!(k.class, Determinism::Fast);
    // Sequences of 1 … 300 tokens in 64-token chunks: most rows' chunks past the end.
    let case = &onekernel_kernels::cases::validation_cases("attn_decode_chunk_mma").unwrap()[0];
    let (mut backend, mut reference) = (harness::cpu(), harness::cpu());
    let v = validate(&mut backend, &mut reference, k, &dir, &k.variants[0], case, 1, ValidateOptions::default()).unwrap();
    assert!(v.passed && v.mismatches == 0 && v.nmse == 0.0, "{v:#?}");
    let bad = validate(&mut backend, &mut reference, k, &dir, &k.variants[0], case, 1, ValidateOptions { perturb_input: true }).unwrap();
    assert!(bad.mismatches > 0 && bad.nmse.is_finite() && bad.nmse > 1e-6, "a changed query is not seen: {bad:#?}");
    assert_eq!(bad.passed, bad.nmse <= FAST_NMSE, "{bad:#?}");
}
