//! The plain-Rust builder, the attribute's twin: `policy.retry(op)`.

pub(crate) mod retry;
