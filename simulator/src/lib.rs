//! The retry-storm simulator of the backoff workspace lives in this
//! package's `examples/herd` (run it with
//! `cargo run --release -p backoff-simulator --example herd -- --out docs/img`)
//! and its check against a real PostgreSQL in `examples/pg_contention`
//! (`bash scripts/pg-contention.sh`). Its tests (`tests/herd.rs`,
//! `tests/pg_contention.rs`) run the simulator's own modules, included by
//! path. This library is empty: a package needs one target of its own.
#![forbid(unsafe_code)]
