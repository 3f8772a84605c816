//! OpenTelemetry's attributes of a retry event.
//!
//! OpenTelemetry's attributes that a retry event carries for an error of a
//! protocol it knows: `rpc.grpc.status_code` for a `tonic::Status` (its impl
//! is `backoff-grpc`'s),
//! `http.request.resend_count` for reqwest's errors. The expansion finds
//! them with an autoref probe, so an error type without them costs nothing
//! and needs no bound. Not public: the front ends reach it through
//! `__front_end`.

/// An error whose retry events carry OpenTelemetry's attributes.
///
/// Each method answers one attribute; its default leaves it out.
/// `Protocol` lets a front-end crate implement it for a type of another
/// crate: `backoff-grpc` implements `SemanticConventions<its own marker>`
/// for `tonic::Status`, which the orphan rule allows. The probe infers it
/// from the one impl a type has.
///
/// ```
/// use backoff_runtime::__front_end::SemanticConventions;
///
/// /// A failure that carries a gRPC status code.
/// struct Unavailable;
/// impl SemanticConventions for Unavailable {
///     fn grpc_status_code(&self) -> Option<i32> {
///         Some(14)
///     }
/// }
/// assert_eq!(Unavailable.grpc_status_code(), Some(14));
/// assert!(!Unavailable.is_http_request());
/// ```
pub trait SemanticConventions<Protocol = ()> {
    /// The gRPC status code (`tonic::Code as i32`): the events'
    /// `rpc.grpc.status_code`. Default: none.
    fn grpc_status_code(&self) -> Option<i32> {
        None
    }

    /// Whether the failure is an HTTP request's: its retry is a resend, and
    /// the retry event carries `http.request.resend_count`. Default: no.
    fn is_http_request(&self) -> bool {
        false
    }
}

/// The attributes of one failure, as the events record them: what its
/// [`SemanticConventions`] answered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Conventions {
    /// The gRPC status code (`tonic::Code as i32`).
    pub(crate) grpc_status: Option<i32>,
    /// Whether the failure is an HTTP request's: its retry is a resend.
    pub(crate) http: bool,
}

impl Conventions {
    /// What `failure`'s [`SemanticConventions`] answer.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn of<P, C: SemanticConventions<P> + ?Sized>(failure: &C) -> Self {
        Conventions {
            grpc_status: failure.grpc_status_code(),
            http: failure.is_http_request(),
        }
    }
}

/// The record answers as the failure it was made of did.
impl SemanticConventions for Conventions {
    fn grpc_status_code(&self) -> Option<i32> {
        self.grpc_status
    }

    fn is_http_request(&self) -> bool {
        self.http
    }
}
