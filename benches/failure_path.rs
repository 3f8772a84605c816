//! Placeholder: filled in by the benchmarks work.
fn main() {}
