//! The tests that read what tracing records, in a process of their own:
//! tracing keeps its callsites' interest process-wide, so a test on another
//! thread without a subscriber (any test of `tests/behaviour/`) can change
//! what a subscriber set with `set_default` sees (`one_subscriber` shows
//! the case the runtime guards against). Every test here sets its own
//! subscriber before it reaches the runtime.
//!
//! Run one module: `cargo test --test telemetry events::`.

pub mod events;
pub mod grpc_channel;
pub mod grpc_status;
pub mod instrument;
pub mod layer_spans;
pub mod one_subscriber;
