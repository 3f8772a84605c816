use super::*;
use backoff_tower::ReplayLimits;
use core::task::Waker;
use http_body::Body as _;

/// A call of a 7-byte body whose first attempt has sent it (its bytes kept):
/// the call's request, and that attempt's body.
fn sent_once(limits: &ReplayLimits) -> (KeptRequest<Body>, backoff_tower::ReplayBody<Body>) {
    let call = KeptRequest::new(Request::new(Body::new(String::from("message"))), limits);
    let mut attempt = kept(&call).attempt().expect("a first attempt");
    let mut cx = Context::from_waker(Waker::noop());
    assert!(matches!(
        Pin::new(&mut attempt).poll_frame(&mut cx),
        Poll::Ready(Some(Ok(_)))
    ));
    assert_eq!(limits.reserved(), 7);
    (call, attempt)
}

/// Another handle on the call's kept body.
fn kept(call: &KeptRequest<Body>) -> Replay<Body> {
    let (_, Ok(replay)) = call.again(http::HeaderMap::new()).into_parts() else {
        panic!("under the cap");
    };
    replay
}

#[allow(clippy::result_large_err, reason = "the attempt future's own output")]
fn answered(response: Response<Body>, call: &KeptRequest<Body>) -> Result<Response<Body>, Failure<FailureKind<()>>> {
    let future = AttemptFuture::Sent {
        response: core::future::ready(Ok::<_, ()>(response)),
        replay: Some(kept(call)),
        previous: 0,
    };
    let mut cx = Context::from_waker(Waker::noop());
    match core::pin::pin!(future).poll(&mut cx) {
        Poll::Ready(result) => result,
        Poll::Pending => panic!("the response is ready"),
    }
}

/// Each attempt's body may go to another task: tonic's connections
/// poll request bodies on their own tasks.
#[test]
fn a_replayed_tonic_body_can_cross_threads() {
    fn body<B: http_body::Body<Data = bytes::Bytes> + Send + 'static>() {}
    body::<backoff_tower::ReplayBody<Body>>();
}

#[test]
fn response_headers_commit_the_call_and_give_its_kept_bytes_back() {
    let limits = ReplayLimits::new();
    let (call, _body_still_sending) = sent_once(&limits);
    assert!(answered(Response::new(Body::empty()), &call).is_ok());
    assert!(!call.is_replayable(), "committed");
    assert_eq!(limits.reserved(), 0, "the kept bytes are given back at once");
}

#[test]
fn a_trailers_only_failure_keeps_the_body_for_the_retry() {
    let limits = ReplayLimits::new();
    let (call, _body) = sent_once(&limits);
    let Err(failure) = answered(Status::unavailable("down").into_http(), &call) else {
        panic!("a failure");
    };
    assert_eq!((failure.code(), failure.replayable), (Code::Unavailable, true));
    assert_eq!(limits.reserved(), 7);
}

#[test]
fn an_attempt_whose_body_is_no_longer_kept_is_a_failure_that_ends_the_call() {
    let future = AttemptFuture::<core::future::Ready<Result<Response<Body>, ()>>>::Lost {
        response: Some(not_kept()),
    };
    let mut cx = Context::from_waker(Waker::noop());
    let Poll::Ready(Err(failure)) = core::pin::pin!(future).poll(&mut cx) else {
        panic!("a failure at once");
    };
    assert_eq!((failure.code(), failure.replayable), (Code::Unavailable, false));
    // The caller is answered `UNAVAILABLE`, saying why.
    let FailureKind::Status { response, .. } = failure.kind else {
        panic!("a status, not a transport error");
    };
    let status = crate::wire::trailers_only_status(response.headers()).expect("a Trailers-Only status");
    assert_eq!(status.code(), Code::Unavailable);
    assert_eq!(status.message(), "the request body is no longer kept for a retry");
}
