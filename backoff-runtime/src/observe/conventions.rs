//! OpenTelemetry's attributes of a retry event.
//!
//! OpenTelemetry's attributes that a retry event carries for an error of a
//! protocol it knows: `rpc.grpc.status_code` for a `tonic::Status` (its impl
//! is `backoff-grpc`'s),
//! `http.request.resend_count` for reqwest's errors. The expansion finds
//! them with an autoref probe, so an error type without them costs nothing
//! and needs no bound. Not public: the front ends reach it through
//! `__front_end`.

/// The attributes of one failure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conventions {
    /// The gRPC status code (`tonic::Code as i32`).
    pub(crate) grpc_status: Option<i32>,
    /// Whether the failure is an HTTP request's: its retry is a resend.
    pub(crate) http: bool,
}

impl Conventions {
    /// A gRPC failure with this status code (`tonic::Status`'s, from
    /// `backoff-grpc`).
    pub const fn grpc(code: i32) -> Self {
        Conventions {
            grpc_status: Some(code),
            http: false,
        }
    }

    /// An HTTP request's failure (reqwest's errors).
    #[cfg(feature = "reqwest")]
    pub(crate) const fn http() -> Self {
        Conventions {
            grpc_status: None,
            http: true,
        }
    }
}

/// An error whose retry events carry OpenTelemetry's attributes.
///
/// `Protocol` lets a front-end crate implement it for a type of another
/// crate: `backoff-grpc` implements `SemanticConventions<its own marker>`
/// for `tonic::Status`, which the orphan rule allows. The probe infers it
/// from the one impl a type has.
///
/// ```
/// use backoff_runtime::__front_end::SemanticConventions;
/// // reqwest's errors (feature `reqwest`) implement it, and
/// // `tonic::Status` (crate `backoff-grpc`).
/// fn carries<E: SemanticConventions>(_: &E) {}
/// ```
pub trait SemanticConventions<Protocol = ()> {
    /// The attributes of this failure.
    fn conventions(&self) -> Conventions;
}
