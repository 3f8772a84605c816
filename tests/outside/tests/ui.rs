//! Compile errors that need backoff-runtime without its `tokio` feature.
#[test]
fn ui() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}
