//! The HTTP layer over streaming request bodies (`RetryLayer::streaming`):
//! a body that arrives in frames over time is retried up to the cap, and
//! the backend sees every byte on every attempt; a body that outgrows the
//! cap (or says up front that it will) is sent once; a `503` answered
//! before the body ends is retried, the next attempt sending the kept
//! frames and then the rest, never a byte twice. Tokio's clock is paused.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use backoff_runtime::Policy;
use backoff_tower::{ReplayBody, ReplayLimits, RetryLayer};
use bytes::Bytes;
use futures_util::Stream;
use http::{Request, Response};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full, StreamBody};
use tokio::sync::{mpsc, oneshot};
use tower::{Layer, ServiceExt, service_fn};

const POLICY: Policy = Policy::new()
    .max_retries(4)
    .initial_backoff(Duration::from_millis(100))
    .max_backoff(Duration::from_secs(1));

type Frames = Pin<Box<dyn Stream<Item = Result<Frame<Bytes>, std::io::Error>> + Send>>;
/// A request body that arrives frame by frame, as the test sends them.
type Streamed = StreamBody<Frames>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A streamed body (no size hint) and the sender of its frames: dropping
/// the sender ends the body.
fn streamed() -> (mpsc::UnboundedSender<&'static str>, Streamed) {
    let (sender, receiver) = mpsc::unbounded_channel::<&'static str>();
    let frames = futures_util::stream::unfold(receiver, |mut receiver| async move {
        let text = receiver.recv().await?;
        Some((Ok(Frame::data(Bytes::from_static(text.as_bytes()))), receiver))
    });
    (sender, StreamBody::new(Box::pin(frames) as Frames))
}

/// Sends `parts` one by one, 10 ms apart, then ends the body.
fn send_slowly(sender: mpsc::UnboundedSender<&'static str>, parts: &'static [&'static str]) {
    tokio::spawn(async move {
        for part in parts {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let _ = sender.send(part);
        }
    });
}

/// What the backend read of each attempt's body.
type Seen = Arc<Mutex<Vec<String>>>;

/// A backend that reads each attempt's whole body, then answers the next
/// planned status (the last one once the plan is used up).
fn reading_backend<B>(
    plan: &'static [u16],
    seen: &Seen,
) -> impl tower::Service<Request<B>, Response = Response<String>, Error = BoxError, Future: Send> + Clone + use<B>
where
    B: Body<Data = Bytes, Error: Into<BoxError>> + Send + 'static,
{
    let seen = Arc::clone(seen);
    service_fn(move |request: Request<B>| {
        let seen = Arc::clone(&seen);
        async move {
            let body = request.into_body().collect().await.map_err(Into::into)?.to_bytes();
            let attempt = {
                let mut seen = seen.lock().unwrap();
                seen.push(String::from_utf8_lossy(&body).into_owned());
                seen.len()
            };
            let status = plan[(attempt - 1).min(plan.len() - 1)];
            Ok(Response::builder().status(status).body(String::new())?)
        }
    })
}

#[tokio::test(start_paused = true)]
async fn a_streamed_body_under_the_cap_is_retried_and_the_server_sees_every_byte_each_time() {
    let seen = Seen::default();
    let backend = reading_backend::<ReplayBody<Streamed>>(&[503, 503, 200], &seen);
    let client = RetryLayer::new(POLICY).streaming().layer(backend);
    let (sender, body) = streamed();
    send_slowly(sender, &["order ", "#17 ", "for 3 items"]);
    let request = Request::put("http://backend/orders/17").body(body).unwrap();
    let response = client.oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(*seen.lock().unwrap(), ["order #17 for 3 items"; 3]);
}

#[tokio::test(start_paused = true)]
async fn a_streamed_body_that_outgrows_the_cap_is_sent_once_and_its_answer_comes_back() {
    let seen = Seen::default();
    let backend = reading_backend::<ReplayBody<Streamed>>(&[503, 200], &seen);
    let limits = ReplayLimits::new().per_call(8);
    let client = RetryLayer::new(POLICY)
        .streaming()
        .replay_limits(limits.clone())
        .layer(backend);
    let (sender, body) = streamed();
    send_slowly(sender, &["12345", "67890", "abcde"]);
    let request = Request::put("http://backend/uploads/1").body(body).unwrap();
    let response = client.oneshot(request).await.unwrap();
    assert_eq!(response.status(), 503, "the attempt past the cap is the last");
    assert_eq!(*seen.lock().unwrap(), ["1234567890abcde"], "sent whole, once");
    assert_eq!(limits.reserved(), 0, "nothing is kept past the cap");
}

#[tokio::test(start_paused = true)]
async fn a_body_whose_size_hint_is_over_the_cap_is_sent_once() {
    let seen = Seen::default();
    let backend = reading_backend::<ReplayBody<Full<Bytes>>>(&[503, 200], &seen);
    let client = RetryLayer::new(POLICY)
        .streaming()
        .replay_limits(ReplayLimits::new().per_call(8))
        .layer(backend);
    let request = Request::put("http://backend/uploads/2")
        .body(Full::new(Bytes::from_static(b"sixteen bytes...")))
        .unwrap();
    let response = client.oneshot(request).await.unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(*seen.lock().unwrap(), ["sixteen bytes..."]);
}

#[tokio::test(start_paused = true)]
async fn a_body_under_the_cap_is_retried_and_the_reservation_is_given_back() {
    let seen = Seen::default();
    let backend = reading_backend::<ReplayBody<Full<Bytes>>>(&[503, 200], &seen);
    let limits = ReplayLimits::new();
    let client = RetryLayer::new(POLICY)
        .streaming()
        .replay_limits(limits.clone())
        .layer(backend);
    let request = Request::put("http://backend/uploads/3")
        .body(Full::new(Bytes::from_static(b"small")))
        .unwrap();
    let response = client.oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(*seen.lock().unwrap(), ["small", "small"]);
    assert_eq!(limits.reserved(), 0, "given back when the call ends");
}

#[tokio::test(start_paused = true)]
async fn a_post_without_a_key_is_sent_once_even_with_a_body_that_fits() {
    let seen = Seen::default();
    let backend = reading_backend::<ReplayBody<Full<Bytes>>>(&[503, 200], &seen);
    let client = RetryLayer::new(POLICY).streaming().layer(backend);
    let request = Request::post("http://backend/pay")
        .body(Full::new(Bytes::from_static(b"pay 5")))
        .unwrap();
    let response = client.oneshot(request).await.unwrap();
    assert_eq!((response.status().as_u16(), seen.lock().unwrap().len()), (503, 1));
}

#[tokio::test(start_paused = true)]
async fn a_503_answered_before_the_body_ends_is_retried_and_no_byte_is_sent_twice() {
    // The first attempt reads one frame and answers 503 at once, then goes
    // on reading its body in the background (as a transport still sending
    // would): it is superseded by the retry, which sends the kept frame and
    // then the rest.
    let first_read = Arc::new(Mutex::new(Vec::<String>::new()));
    let (answered, answered_rx) = oneshot::channel::<()>();
    let answered = Arc::new(Mutex::new(Some(answered)));
    let seen = Seen::default();
    let backend = {
        let first_read = Arc::clone(&first_read);
        let seen = Arc::clone(&seen);
        service_fn(move |request: Request<ReplayBody<Streamed>>| {
            let first_read = Arc::clone(&first_read);
            let seen = Arc::clone(&seen);
            let answered = answered.lock().unwrap().take();
            async move {
                let mut body = request.into_body();
                if let Some(answered) = answered {
                    let frame = body.frame().await.unwrap()?.into_data().unwrap();
                    first_read
                        .lock()
                        .unwrap()
                        .push(String::from_utf8_lossy(&frame).into_owned());
                    tokio::spawn(async move {
                        while let Some(Ok(frame)) = body.frame().await {
                            let data = frame.into_data().unwrap();
                            first_read
                                .lock()
                                .unwrap()
                                .push(String::from_utf8_lossy(&data).into_owned());
                        }
                    });
                    let _ = answered.send(());
                    return Ok::<_, BoxError>(Response::builder().status(503).body(String::new())?);
                }
                let whole = body.collect().await?.to_bytes();
                seen.lock().unwrap().push(String::from_utf8_lossy(&whole).into_owned());
                Ok(Response::builder().status(200).body(String::new())?)
            }
        })
    };
    let client = RetryLayer::new(POLICY).streaming().layer(backend);
    let (sender, body) = streamed();
    sender.send("head;").unwrap();
    tokio::spawn(async move {
        // The rest comes only after the server has answered the first
        // attempt, and after the retry has started (the wait is at most 1 s).
        let _ = answered_rx.await;
        tokio::time::sleep(Duration::from_secs(2)).await;
        for part in ["middle;", "tail"] {
            tokio::time::sleep(Duration::from_millis(10)).await;
            let _ = sender.send(part);
        }
    });
    let request = Request::put("http://backend/stream").body(body).unwrap();
    let response = client.oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        *seen.lock().unwrap(),
        ["head;middle;tail"],
        "the retry sent the whole body once"
    );
    assert_eq!(
        *first_read.lock().unwrap(),
        ["head;"],
        "the first attempt was superseded: the rest was the retry's to send"
    );
}
