//! The workspace's behaviour tests in one binary: each module was a test
//! binary of its own, and each binary linked the whole dev tree (on two
//! cores that was most of a cold `cargo test --workspace`). Four stay
//! binaries of their own because they depend on the whole process:
//! `tests/alloc.rs` (a counting global allocator), `tests/metrics.rs` (the
//! global recorder), `tests/telemetry/` (what tracing records: its callsite
//! interest is process-wide) and `tests/ui.rs` (trybuild's compile-fail
//! cases). No test here reads tracing's output.
//!
//! Run one module: `cargo test --test behaviour hooks::`.

pub mod adaptive;
pub mod adaptive_burst;
pub mod attempt_context;
pub mod before_retry;
pub mod breaker;
pub mod budget;
pub mod budget_per_host;
pub mod cancellation;
#[cfg(feature = "chaos")]
pub mod chaos;
pub mod concurrency;
pub mod cooldown;
pub mod edges;
pub mod executors;
pub mod future_size;
pub mod grpc;
pub mod grpc_channel;
pub mod hedging;
pub mod hooks;
pub mod hostile;
pub mod http;
pub mod integrations;
pub mod keys;
pub mod layers;
pub mod lint_clean;
pub mod load;
pub mod nested;
pub mod outside_crate;
pub mod plain;
pub mod policy;
pub mod polling;
pub mod reqwest_network;
pub mod schedule;
pub mod send;
#[cfg(feature = "serde")]
pub mod settings;
pub mod shapes;
pub mod stopping;
pub mod throttle;
pub mod timeout;
pub mod tower;
pub mod tower_streaming;
