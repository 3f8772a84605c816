//! Compile-time behaviour: every rejected input is a clear error on the
//! offending token (tests/ui/*.rs with their .stderr snapshots), and the
//! accepted shapes compile and run (tests/ui/pass/*.rs).
//!
//! Regenerate snapshots with `TRYBUILD=overwrite cargo test --test ui`, then
//! read every diff: a snapshot that records a confusing message is a bug.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
