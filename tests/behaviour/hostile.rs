//! Hostile input: each run-time parser, and the gRPC layer's reading of an
//! answer, fed seeded generated input (a fuzz target each, bounded in
//! inputs and in time for CI) and the checked-in corpus of minimal inputs
//! that once panicked or parked a call (`tests/corpus/hostile/`). The
//! tests run with overflow checks on: a panic anywhere fails them.
//!
//! `HOSTILE_INPUTS=1000000 HOSTILE_SECONDS=600 cargo test --test behaviour hostile`
//! tries more; `HOSTILE_SEED` another seed. A failing input prints its seed.

pub mod config;
pub mod corpus;
pub mod generate;
pub mod grpc_answer;
pub mod grpc_minimal;
pub mod http_hints;
pub mod retry_info;
#[cfg(feature = "serde")]
pub mod settings;
