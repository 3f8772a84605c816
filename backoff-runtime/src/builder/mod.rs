//! The plain-Rust builder, the attribute's twin: `policy.retry(op)`.

pub(crate) mod future;
pub(crate) mod owned;
pub(crate) mod retry;
