//! Classification of common errors.
//!
//! HTTP status codes and I/O errors, reqwest's errors, gRPC statuses.

#[cfg(feature = "http")]
pub mod http_errors;
#[cfg(feature = "reqwest")]
pub mod reqwest_errors;
