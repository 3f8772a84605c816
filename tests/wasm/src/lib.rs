//! The wasm32 tests of the backoff workspace live in `tests/node.rs`. The
//! library holds what must not compile there: a sync `#[retry]`, behind the
//! `sync-fixture` feature.

#[cfg(feature = "sync-fixture")]
pub mod sync_fixture;
