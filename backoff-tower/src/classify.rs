//! [`Classify`]: how a [`RetryLayer`](crate::RetryLayer) judges a
//! request, a response and an error.

use core::time::Duration;

use crate::Pushback;
use crate::http::HttpRetry;
use backoff_runtime::__front_end::SemanticConventions;
use backoff_runtime::Attempt;

/// How a [`RetryLayer`](crate::RetryLayer) treats a request, its response and its error: the
/// layer's `retry_if`, `retry_if_ok`, `retry_after` and `retry_after_ok`,
/// plus the one question only a request can answer (may it be sent twice?)
/// and how to send it again.
///
/// [`HttpRetry`](crate::HttpRetry) is the one for HTTP; implement it for another protocol.
///
/// ```
/// use backoff_tower::Classify;
/// use std::time::Duration;
///
/// /// A service of `u32` requests whose errors are status codes.
/// #[derive(Clone)]
/// struct Codes;
///
/// impl Classify<u32, String, u16> for Codes {
///     fn may_retry(&self, _request: &u32) -> bool {
///         true
///     }
///     fn replay(&self, request: &u32, _attempt: &backoff_runtime::Attempt) -> u32 {
///         *request
///     }
///     fn retry_error(&self, error: &u16) -> bool {
///         *error >= 500
///     }
/// }
/// # let _ = Codes;
/// ```
pub trait Classify<Req, Res, E>: Clone + Send + Sync + 'static {
    /// Whether [`replay`](Classify::replay) reads the attempt's
    /// [`elapsed`](backoff_runtime::Attempt::elapsed). When `false`, the layer reads
    /// no clock for the attempts (the call's start is read only when a key
    /// needs it: `max_elapsed`, a limit or a hook), and `elapsed` is zero.
    /// The deadline (`deadline`, `time_left`) is whole either way. Default:
    /// `true`; [`HttpRetry`](crate::HttpRetry) says `false`.
    ///
    /// ```
    /// use backoff_tower::Classify;
    ///
    /// /// Requests replayed as they are: no time read.
    /// #[derive(Clone)]
    /// struct Same;
    /// impl Classify<u8, u8, ()> for Same {
    ///     const READS_ATTEMPT_TIME: bool = false;
    ///     fn may_retry(&self, _: &u8) -> bool {
    ///         true
    ///     }
    ///     fn replay(&self, request: &u8, _: &backoff_runtime::Attempt) -> u8 {
    ///         *request
    ///     }
    /// }
    /// # let _ = Same;
    /// ```
    const READS_ATTEMPT_TIME: bool = true;

    /// Whether `request` may be sent more than once. A request that may not
    /// gets its one attempt, unretried.
    fn may_retry(&self, request: &Req) -> bool;

    /// The request to send as `attempt` (the first included), made from the
    /// caller's request: a clone, with whatever the attempt adds (an
    /// idempotency key, an attempt count, a deadline header).
    fn replay(&self, request: &Req, attempt: &Attempt) -> Req;

    /// Whether `request` may still be sent again now, while its call runs
    /// (a hedge asks before it starts): a body past its replay cap may
    /// not. Default: [`may_retry`](Classify::may_retry).
    fn may_resend(&self, request: &Req) -> bool {
        self.may_retry(request)
    }

    /// The key a [`Keyed`](backoff_runtime::limits::Keyed) admission limiter files
    /// the call of `request` under: [`HttpRetry`](crate::HttpRetry) gives
    /// the request's host, gRPC's rules its method. Default: none (one
    /// limiter for every call).
    fn admission_key<'r>(&self, _request: &'r Req) -> Option<&'r str> {
        None
    }

    /// Whether an error of the inner service is worth retrying (the layer's
    /// `retry_if`). Default: every error.
    fn retry_error(&self, _error: &E) -> bool {
        true
    }

    /// The server's suggested wait after an error (`retry_after`). Default:
    /// none.
    fn error_hint(&self, _error: &E) -> Option<Duration> {
        None
    }

    /// Whether a response is a failure worth retrying (`retry_if_ok`: a
    /// 503 is an `Ok` of the inner service). Default: no response is.
    fn retry_response(&self, _response: &Res) -> bool {
        false
    }

    /// The server's suggested wait after a response that is retried
    /// (`retry_after_ok`: its `Retry-After`). Default: none.
    fn response_hint(&self, _response: &Res) -> Option<Duration> {
        None
    }

    /// The server's instruction after an error that overrides the schedule
    /// (gRPC's `grpc-retry-pushback-ms`): an exact wait, not capped by
    /// `max_backoff`, after which the schedule restarts; or a refusal,
    /// which ends the call once the limit has counted the failure (so
    /// [`retry_error`](Classify::retry_error) should accept the error).
    /// Default: none.
    ///
    /// ```
    /// use backoff_tower::{Classify, Pushback};
    /// use std::time::Duration;
    ///
    /// /// Errors that carry the server's "retry in n ms" (negative: never).
    /// #[derive(Clone)]
    /// struct Told;
    /// impl Classify<u8, u8, i64> for Told {
    ///     fn may_retry(&self, _: &u8) -> bool {
    ///         true
    ///     }
    ///     fn replay(&self, request: &u8, _: &backoff_runtime::Attempt) -> u8 {
    ///         *request
    ///     }
    ///     fn pushback(&self, millis: &i64) -> Option<Pushback> {
    ///         Some(u64::try_from(*millis).map_or(Pushback::Stop, |ms| Pushback::After(Duration::from_millis(ms))))
    ///     }
    /// }
    /// assert_eq!(Classify::<u8, u8, i64>::pushback(&Told, &-1), Some(Pushback::Stop));
    /// ```
    fn pushback(&self, _error: &E) -> Option<Pushback> {
        None
    }

    /// A limit on the time all the attempts and waits of the call of
    /// `request` take together, besides `max_elapsed` (the shorter holds):
    /// a gRPC call's deadline. Each [`Attempt`]'s
    /// [`time_left`](Attempt::time_left) counts down to it. Default: none.
    fn deadline(&self, _request: &Req) -> Option<Duration> {
        None
    }
}

/// A classification of one's own, as [`RetryLayer::classify`](crate::RetryLayer::classify)
/// keeps it: it reads the inner service's errors, and the layered service
/// answers them unchanged (with a timeout or an admission limiter, they
/// must then be `From<Elapsed>` or `From<Refused>`). HTTP's rules, the
/// default, answer tower's `BoxError` there instead.
///
/// ```
/// use backoff_runtime::Policy;
/// use backoff_tower::{Classified, Classify, RetryLayer};
///
/// #[derive(Clone)]
/// struct Always;
/// impl Classify<u8, u8, ()> for Always {
///     fn may_retry(&self, _: &u8) -> bool {
///         true
///     }
///     fn replay(&self, request: &u8, _: &backoff_runtime::Attempt) -> u8 {
///         *request
///     }
/// }
/// let layer: RetryLayer<Classified<Always>> = RetryLayer::new(Policy::new()).classify(Always);
/// # let _ = layer;
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Classified<C>(pub C);

impl<Req, Res, E, C: Classify<Req, Res, E>> Classify<Req, Res, E> for Classified<C> {
    const READS_ATTEMPT_TIME: bool = C::READS_ATTEMPT_TIME;

    #[inline]
    fn may_retry(&self, request: &Req) -> bool {
        self.0.may_retry(request)
    }

    #[inline]
    fn replay(&self, request: &Req, attempt: &Attempt) -> Req {
        self.0.replay(request, attempt)
    }

    #[inline]
    fn may_resend(&self, request: &Req) -> bool {
        self.0.may_resend(request)
    }

    #[inline]
    fn admission_key<'r>(&self, request: &'r Req) -> Option<&'r str> {
        self.0.admission_key(request)
    }

    #[inline]
    fn retry_error(&self, error: &E) -> bool {
        self.0.retry_error(error)
    }

    #[inline]
    fn error_hint(&self, error: &E) -> Option<Duration> {
        self.0.error_hint(error)
    }

    #[inline]
    fn retry_response(&self, response: &Res) -> bool {
        self.0.retry_response(response)
    }

    #[inline]
    fn response_hint(&self, response: &Res) -> Option<Duration> {
        self.0.response_hint(response)
    }

    #[inline]
    fn pushback(&self, error: &E) -> Option<Pushback> {
        self.0.pushback(error)
    }

    #[inline]
    fn deadline(&self, request: &Req) -> Option<Duration> {
        self.0.deadline(request)
    }
}

/// A classification as the layer's future uses it: [`Classify`], and two
/// answers only gRPC's rules give. Not public API: `backoff-grpc`
/// implements it for its rules, through `__grpc`; [`HttpRetry`] and every
/// [`Classified`] keep the defaults, so a classification of one's own
/// needs nothing of it.
pub trait LayerClassify<Req, Res, E>: Classify<Req, Res, E> {
    /// Whether a call's end comes after its accepted answer (a gRPC
    /// response's status is in its trailers): the layer then leaves the
    /// limit, the success report and `on_success` to whoever reads the body
    /// to its end, through the call's `CommittedCall`. Default: no.
    const ENDS_LATER: bool = false;

    /// OpenTelemetry's attributes of an error, which the retry and
    /// give-up events carry (gRPC's rules: its status code). Default: none.
    ///
    /// ```
    /// use backoff_runtime::__front_end::SemanticConventions;
    /// use backoff_tower::Classify;
    /// use backoff_tower::__grpc::LayerClassify;
    ///
    /// /// An error that is a gRPC status code.
    /// struct Code(i32);
    /// impl SemanticConventions for Code {
    ///     fn grpc_status_code(&self) -> Option<i32> {
    ///         Some(self.0)
    ///     }
    /// }
    ///
    /// #[derive(Clone)]
    /// struct Codes;
    /// impl Classify<u8, u8, Code> for Codes {
    ///     fn may_retry(&self, _: &u8) -> bool {
    ///         true
    ///     }
    ///     fn replay(&self, request: &u8, _: &backoff_runtime::Attempt) -> u8 {
    ///         *request
    ///     }
    /// }
    /// impl LayerClassify<u8, u8, Code> for Codes {
    ///     fn error_conventions(error: &Code) -> Option<&dyn SemanticConventions> {
    ///         Some(error)
    ///     }
    /// }
    ///
    /// let conventions = <Codes as LayerClassify<u8, u8, Code>>::error_conventions(&Code(14));
    /// assert_eq!(conventions.and_then(|code| code.grpc_status_code()), Some(14));
    /// ```
    fn error_conventions(_error: &E) -> Option<&dyn SemanticConventions> {
        None
    }
}

impl<Req, Res, E> LayerClassify<Req, Res, E> for HttpRetry where HttpRetry: Classify<Req, Res, E> {}

impl<Req, Res, E, C: Classify<Req, Res, E>> LayerClassify<Req, Res, E> for Classified<C> {}
