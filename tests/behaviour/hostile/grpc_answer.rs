//! The gRPC layer's reading of an answer: a channel that answers each
//! attempt as a hostile server may (`grpc-status`, `grpc-message`,
//! `grpc-retry-pushback-ms` and `grpc-status-details-bin` with a
//! `RetryInfo`, in a Trailers-Only answer or in the trailers of a
//! committed one, or a transport error), under a service config and a
//! caller's `grpc-timeout` that may be hostile too. Never a panic; no call
//! sends more than `maxAttempts`, waits past its deadline, or waits longer
//! between attempts than `maxBackoff` or the pushback ceiling (120 s).
//! Tokio's clock is paused: the waits are measured on it.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use backoff_grpc::{GrpcRetryLayer, ServiceConfig};
use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};
use http_body::Frame;
use http_body_util::{BodyExt, Full, StreamBody};
use tokio::time::Instant;
use tonic::body::Body;
use tower::{Layer, Service, ServiceExt};

use super::corpus;
use super::generate::{Bound, OnPanic, Rng};
use super::retry_info;

/// The method every case calls.
const PATH: &str = "/a.B/C";
/// The longest pushback the layer waits (`backoff-grpc`'s ceiling).
const MAX_PUSHBACK: Duration = Duration::from_secs(120);
/// Tokio's timer counts whole milliseconds: a wait ends up to 1 ms late.
const TIMER_SLACK: Duration = Duration::from_millis(1);

/// What the channel does with one attempt.
#[derive(Clone, Debug)]
pub enum Answer {
    /// A response with these headers and no body: Trailers-Only when they
    /// hold a `grpc-status`, else they commit the call.
    Headers(Vec<(String, String)>),
    /// Response headers, then these trailers: a committed call.
    Trailers(Vec<(String, String)>),
    /// The transport failed before any response.
    Transport,
}

/// One call: the service config, the caller's headers, and the answer to
/// each attempt (after them, `OK`).
#[derive(Clone, Debug, Default)]
pub struct Case {
    pub config: String,
    pub request: Vec<(String, String)>,
    pub answers: Vec<Answer>,
}

impl Case {
    /// A case written as the corpus writes it: `config <json>`, `request
    /// <name>: <value>`, and `answer` (`answer trailers`, `answer
    /// transport`) followed by that answer's `<name>: <value>` lines.
    pub fn parse(text: &str) -> Case {
        let mut case = Case::default();
        for line in text.lines().map(str::trim_end) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(json) = line.strip_prefix("config ") {
                case.config = json.to_owned();
            } else if let Some(header) = line.strip_prefix("request ") {
                case.request.extend(corpus::header_lines(header));
            } else if line == "answer" {
                case.answers.push(Answer::Headers(Vec::new()));
            } else if line == "answer trailers" {
                case.answers.push(Answer::Trailers(Vec::new()));
            } else if line == "answer transport" {
                case.answers.push(Answer::Transport);
            } else {
                match case.answers.last_mut() {
                    Some(Answer::Headers(headers) | Answer::Trailers(headers)) => {
                        headers.extend(corpus::header_lines(line));
                    }
                    _ => panic!("a header line outside an answer: {line}"),
                }
            }
        }
        case
    }
}

fn header_map(pairs: &[(String, String)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        if let (Ok(name), Ok(value)) = (HeaderName::try_from(name.as_str()), HeaderValue::from_str(value)) {
            map.append(name, value);
        }
    }
    map
}

/// The channel: each attempt takes the next planned answer and is counted.
#[derive(Clone, Default)]
struct Channel {
    answers: Arc<Mutex<VecDeque<Answer>>>,
    sent: Arc<Mutex<u32>>,
}

impl Service<http::Request<Body>> for Channel {
    type Response = http::Response<Body>;
    type Error = std::io::Error;
    type Future = std::future::Ready<Result<http::Response<Body>, std::io::Error>>;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), std::io::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, _request: http::Request<Body>) -> Self::Future {
        *self.sent.lock().unwrap() += 1;
        let answer = self.answers.lock().unwrap().pop_front();
        let answer = answer.unwrap_or_else(|| Answer::Headers(vec![("grpc-status".into(), "0".into())]));
        std::future::ready(match answer {
            Answer::Transport => Err(std::io::Error::other("connection reset")),
            Answer::Headers(headers) => {
                let mut response = http::Response::new(Body::empty());
                *response.headers_mut() = header_map(&headers);
                Ok(response)
            }
            Answer::Trailers(trailers) => {
                let frames = [
                    Ok::<_, Infallible>(Frame::data(Bytes::from_static(b"\0\0\0\0\0"))),
                    Ok(Frame::trailers(header_map(&trailers))),
                ];
                let body = StreamBody::new(futures_util::stream::iter(frames));
                let mut response = http::Response::new(Body::new(body));
                response
                    .headers_mut()
                    .insert("content-type", HeaderValue::from_static("application/grpc"));
                Ok(response)
            }
        })
    }
}

/// A `grpc-timeout` as gRPC defines it (up to 8 digits and a unit): the
/// test's own reading, to know the call's deadline.
fn grpc_timeout(value: &str) -> Option<Duration> {
    let unit = value.chars().last()?;
    let digits = value.get(..value.len() - unit.len_utf8())?;
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    let count: u64 = digits.parse().ok()?;
    Some(match unit {
        'H' => Duration::from_secs(count * 3600),
        'M' => Duration::from_secs(count * 60),
        'S' => Duration::from_secs(count),
        'm' => Duration::from_millis(count),
        'u' => Duration::from_micros(count),
        'n' => Duration::from_nanos(count),
        _ => return None,
    })
}

/// What one call did.
#[derive(Debug)]
pub struct Outcome {
    pub sent: u32,
    pub elapsed: Duration,
    /// The response's status (`grpc-status` in its headers), or `None`
    /// for a transport error or a committed response.
    pub status: Option<String>,
}

/// Runs `case` (on a paused clock): `None` when its config is refused.
pub async fn run(case: &Case) -> Option<Outcome> {
    let config = ServiceConfig::from_json(&case.config).ok()?;
    let channel = Channel::default();
    channel.answers.lock().unwrap().extend(case.answers.iter().cloned());
    let mut service = GrpcRetryLayer::new(config.clone()).layer(channel.clone());
    let mut request = http::Request::post(PATH)
        .body(Body::new(Full::new(Bytes::from_static(b"\0\0\0\0\0"))))
        .unwrap();
    request.headers_mut().extend(header_map(&case.request));
    let asked = request
        .headers()
        .get("grpc-timeout")
        .and_then(|value| value.to_str().ok())
        .and_then(grpc_timeout);
    let start = Instant::now();
    let response = service.ready().await.expect("always ready").call(request).await;
    let elapsed = start.elapsed();
    let status = response.as_ref().ok().and_then(|response| {
        let status = response.headers().get("grpc-status")?;
        Some(status.to_str().unwrap_or_default().to_owned())
    });
    if let Ok(response) = response {
        // The committed call's body, to its trailers (the layer reads them).
        let _ = response.into_body().collect().await;
    }
    let outcome = Outcome {
        sent: *channel.sent.lock().unwrap(),
        elapsed,
        status,
    };
    check(&config, asked, &outcome);
    Some(outcome)
}

/// The promises: at most `maxAttempts`; a zero deadline sends nothing
/// and ends `DEADLINE_EXCEEDED`; no call past its deadline; no wait
/// longer than `maxBackoff` (or `hedgingDelay`) or the pushback ceiling.
fn check(config: &ServiceConfig, asked: Option<Duration>, outcome: &Outcome) {
    let entry = config.method_config(PATH);
    let timeout = entry.and_then(|entry| entry.timeout());
    let deadline = match (asked, timeout) {
        (Some(asked), Some(timeout)) => Some(asked.min(timeout)),
        (asked, timeout) => asked.or(timeout),
    };
    let (attempts, longest_wait) = match (
        entry.and_then(|entry| entry.retry_policy()),
        entry.and_then(|entry| entry.hedging_policy()),
    ) {
        (Some(retry), _) => (retry.max_attempts(), retry.policy().get_max_backoff()),
        (None, Some(hedging)) => (hedging.max_attempts(), hedging.hedging_delay()),
        (None, None) => (1, Duration::ZERO),
    };
    if deadline == Some(Duration::ZERO) {
        assert_eq!(outcome.sent, 0, "a zero deadline sends nothing");
        assert_eq!(outcome.status.as_deref(), Some("4"), "DEADLINE_EXCEEDED");
        return;
    }
    assert!(outcome.sent <= attempts, "{} attempts of {attempts}", outcome.sent);
    if let Some(deadline) = deadline {
        assert!(
            outcome.elapsed <= deadline + TIMER_SLACK,
            "{outcome:?} past {deadline:?}"
        );
    }
    let waits = attempts.saturating_sub(1);
    let most = (longest_wait.max(MAX_PUSHBACK) + TIMER_SLACK) * waits;
    assert!(outcome.elapsed <= most, "{outcome:?}: more than {most:?}");
}

/// base64, standard alphabet, padded: the server's encoding of details.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut text = String::new();
    for chunk in bytes.chunks(3) {
        let word = chunk
            .iter()
            .enumerate()
            .fold(0u32, |word, (i, byte)| word | u32::from(*byte) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                text.push(char::from(ALPHABET[(word >> (18 - 6 * i)) as usize & 63]));
            } else {
                text.push('=');
            }
        }
    }
    text
}

fn duration(rng: &mut Rng) -> &'static str {
    let picked: &&'static str = rng.pick(&["0s", "-0s", "0.000000001s", "0.001s", "0.1s", "1s", "30s", "300s"]);
    picked
}

fn config(rng: &mut Rng) -> String {
    if rng.one_in(8) {
        return super::config::document(rng);
    }
    let codes = *rng.pick(&[
        r#"["UNAVAILABLE"]"#,
        r#"["UNAVAILABLE", "RESOURCE_EXHAUSTED"]"#,
        r#"[14, 8, 2, 13]"#,
    ]);
    let attempts = *rng.pick(&["2", "3", "5", "2147483647", "9223372036854775808"]);
    let policy = match rng.below(3) {
        0 => format!(
            r#", "retryPolicy": {{"maxAttempts": {attempts}, "initialBackoff": "{}", "maxBackoff": "{}",
            "backoffMultiplier": {}, "retryableStatusCodes": {codes}}}"#,
            rng.pick(&["0.001s", "0.1s", "1s"]),
            duration(rng),
            rng.pick(&["1", "2", "10"]),
        ),
        1 => format!(
            r#", "hedgingPolicy": {{"maxAttempts": {attempts}, "hedgingDelay": "{}", "nonFatalStatusCodes": {codes}}}"#,
            duration(rng),
        ),
        _ => String::new(),
    };
    let timeout = match rng.below(3) {
        0 => String::new(),
        _ => format!(r#", "timeout": "{}""#, duration(rng)),
    };
    let throttling = if rng.one_in(3) {
        r#", "retryThrottling": {"maxTokens": 3, "tokenRatio": 0.5}"#
    } else {
        ""
    };
    format!(r#"{{"methodConfig": [{{"name": [{{"service": "a.B"}}]{timeout}{policy}}}]{throttling}}}"#)
}

fn status_headers(rng: &mut Rng) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    let status = match rng.below(4) {
        0 => rng.number(),
        _ => (*rng.pick(&["14", "14", "8", "2", "0", "4", "13"])).to_owned(),
    };
    headers.push(("grpc-status".to_owned(), status));
    if rng.one_in(2) {
        headers.push(("grpc-message".to_owned(), rng.text(b"abc %20%ff%zz\xc3", 12)));
    }
    for _ in 0..rng.below(3) {
        headers.push(("grpc-retry-pushback-ms".to_owned(), rng.number()));
    }
    let details = match rng.below(5) {
        0 => None,
        1 => Some(rng.text(b"ABCabc019+/=-_ !", 12)),
        _ => Some(base64(&retry_info::details(rng))),
    };
    headers.extend(details.map(|details| ("grpc-status-details-bin".to_owned(), details)));
    headers
}

fn answer(rng: &mut Rng) -> Answer {
    match rng.below(10) {
        0 => Answer::Transport,
        1 => Answer::Trailers(status_headers(rng)),
        2 => Answer::Headers(vec![("content-type".to_owned(), "application/grpc".to_owned())]),
        _ => Answer::Headers(status_headers(rng)),
    }
}

/// A generated case.
pub fn case(rng: &mut Rng) -> Case {
    let mut request = Vec::new();
    if rng.below(3) != 0 {
        let timeout = match rng.below(3) {
            0 => format!("{}{}", rng.number(), rng.pick(&["H", "M", "S", "m", "u", "n", "s", ""])),
            _ => (*rng.pick(&[
                "0n",
                "0m",
                "0S",
                "0H",
                "00000000S",
                "1n",
                "1m",
                "100m",
                "5S",
                "99999999H",
                "-1S",
            ]))
            .to_owned(),
        };
        request.push(("grpc-timeout".to_owned(), timeout));
    }
    Case {
        config: config(rng),
        request,
        answers: (0..rng.below(7)).map(|_| answer(rng)).collect(),
    }
}

#[tokio::test(start_paused = true)]
async fn the_corpus_is_answered_without_a_panic() {
    for (name, text) in corpus::of("grpc_answer") {
        let _told = OnPanic(name.clone());
        let case = Case::parse(&text);
        assert!(run(&case).await.is_some(), "{name}: its config is refused");
    }
}

#[tokio::test(start_paused = true)]
async fn generated_answers_are_read_without_a_panic() {
    let mut bound = Bound::new(20_000);
    while let Some(mut rng) = bound.input() {
        let case = case(&mut rng);
        let _told = OnPanic(format!("{}: {case:?}", bound.input_seed()));
        run(&case).await;
    }
    bound.report("gRPC answers");
}
