//! The request a call keeps, and a failed attempt.
//!
//! [`KeptRequest`] is the head, and the body kept for replay in a
//! [`Replay`]. [`Failure`] is an attempt that failed, with whether the call
//! may still be sent again.
//! The streaming HTTP service and the gRPC layer make each attempt from
//! them.

use http::{Extensions, HeaderMap, Method, Request, Uri, Version};
use http_body::Body;

use crate::replay::{Replay, ReplayLimits};

/// The request of a call, kept by its future: each attempt is made from it.
pub struct KeptRequest<B> {
    method: Method,
    uri: Uri,
    version: Version,
    headers: HeaderMap,
    extensions: Extensions,
    body: KeptBody<B>,
}

impl<B> core::fmt::Debug for KeptRequest<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("KeptRequest")
            .field("method", &self.method)
            .field("uri", &self.uri)
            .field("body", &self.body)
            .finish_non_exhaustive()
    }
}

/// A call's request body.
enum KeptBody<B> {
    /// Sent once: it could not be kept (its size hint is above the cap).
    Once(B),
    /// Kept for replay: each attempt reads it from its first byte.
    Kept(Replay<B>),
    /// A body sent once already, asked for again: no attempt is sent
    /// (a classification never retries a call whose body is not kept).
    Spent,
}

impl<B> core::fmt::Debug for KeptBody<B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            KeptBody::Once(_) => "Once",
            KeptBody::Kept(_) => "Kept",
            KeptBody::Spent => "Spent",
        })
    }
}

impl<B: Body + Unpin> KeptRequest<B> {
    /// The call of `request`: its body kept for replay within `limits`, or
    /// sent once when its size hint is already above the per-call cap.
    pub fn new(request: Request<B>, limits: &ReplayLimits) -> Self {
        let (parts, body) = request.into_parts();
        let body = match Replay::try_new(body, limits) {
            Ok(replay) => KeptBody::Kept(replay),
            Err(body) => KeptBody::Once(body),
        };
        KeptRequest {
            method: parts.method,
            uri: parts.uri,
            version: parts.version,
            headers: parts.headers,
            extensions: parts.extensions,
            body,
        }
    }
}

impl<B> KeptRequest<B> {
    /// The request's method.
    pub fn method(&self) -> &Method {
        &self.method
    }

    /// The request's URI.
    pub fn uri(&self) -> &Uri {
        &self.uri
    }

    /// The request's headers, as the caller gave them.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// Whether the body is kept for replay (not over the cap up front).
    pub fn is_kept(&self) -> bool {
        matches!(self.body, KeptBody::Kept(_))
    }

    /// Lets the call's attempts run side by side (hedges): each is fed the
    /// whole body, none superseded by the next.
    pub fn side_by_side(&self) {
        if let KeptBody::Kept(replay) = &self.body {
            replay.side_by_side();
        }
    }

    /// Whether the call may still be sent again: its body is kept, and has
    /// not outgrown the cap.
    pub fn is_replayable(&self) -> bool {
        match &self.body {
            KeptBody::Kept(replay) => replay.is_replayable(),
            KeptBody::Once(_) | KeptBody::Spent => false,
        }
    }

    /// The request of another attempt: the same head with `headers`, and a
    /// new handle on the kept body (or none, when it was sent once).
    pub fn again(&self, headers: HeaderMap) -> Self {
        let body = match &self.body {
            KeptBody::Kept(replay) => KeptBody::Kept(replay.handle()),
            KeptBody::Once(_) | KeptBody::Spent => KeptBody::Spent,
        };
        KeptRequest {
            method: self.method.clone(),
            uri: self.uri.clone(),
            version: self.version,
            headers,
            extensions: self.extensions.clone(),
            body,
        }
    }

    /// The head as a request without a body, and the body: `Ok` with the
    /// body kept for replay; else `Err` with the body to send once, or
    /// `None` when it was sent already. The attempt's service makes the
    /// body it sends from it. Inline: returned out of line, its parts are
    /// copied (a `memcpy` per attempt).
    ///
    /// ```
    /// use backoff_tower::ReplayLimits;
    /// use backoff_tower::__grpc::KeptRequest;
    /// use http_body_util::Full;
    ///
    /// let request = http::Request::new(Full::new(bytes::Bytes::from_static(b"ping")));
    /// let kept = KeptRequest::new(request, &ReplayLimits::default());
    /// let again = kept.again(http::HeaderMap::new());
    /// let (head, body) = kept.into_parts();
    /// assert_eq!(head.uri(), "/");
    /// assert!(body.is_ok(), "a small body is kept for replay");
    /// assert!(again.into_parts().1.is_ok(), "another attempt reads the same body");
    /// ```
    #[inline]
    pub fn into_parts(self) -> (Request<()>, Result<Replay<B>, Option<B>>) {
        let mut head = Request::new(());
        *head.method_mut() = self.method;
        *head.uri_mut() = self.uri;
        *head.version_mut() = self.version;
        *head.headers_mut() = self.headers;
        *head.extensions_mut() = self.extensions;
        let body = match self.body {
            KeptBody::Kept(replay) => Ok(replay),
            KeptBody::Once(body) => Err(Some(body)),
            KeptBody::Spent => Err(None),
        };
        (head, body)
    }
}

/// An attempt that failed: what it ended with (`kind`: the inner service's
/// error, or a response that is a failure), and whether the call may still
/// be sent again (its body is kept: not past the cap, not committed).
pub struct Failure<K> {
    /// What the attempt ended with.
    pub kind: K,
    /// Whether the call may still be sent again.
    pub replayable: bool,
}

/// A refused attempt is a failure of its own kind, never sent again.
impl<K: From<backoff_runtime::limits::Refused>> From<backoff_runtime::limits::Refused> for Failure<K> {
    fn from(refused: backoff_runtime::limits::Refused) -> Self {
        Failure {
            kind: K::from(refused),
            replayable: false,
        }
    }
}

impl<K> core::fmt::Debug for Failure<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Failure")
            .field("replayable", &self.replayable)
            .finish_non_exhaustive()
    }
}

/// Whether the attempt's body, `replay`, may still be sent again.
pub(crate) fn still_replayable<B>(replay: Option<&Replay<B>>) -> bool {
    replay.is_some_and(Replay::is_replayable)
}
