//! The plain-Rust builder, the attribute's twin: `policy.retry(op)`.

pub(crate) mod action;
pub(crate) mod awaited;
pub(crate) mod call;
#[cfg(feature = "chaos")]
pub(crate) mod chaos;
pub(crate) mod config;
pub(crate) mod flag;
pub(crate) mod future;
pub(crate) mod hedge;
pub(crate) mod operation;
pub(crate) mod owned;
pub(crate) mod retry;
