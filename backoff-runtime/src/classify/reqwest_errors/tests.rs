use super::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the loopback server does once it has read a request's head.
#[derive(Clone, Copy)]
enum Then {
    /// Close the connection without answering.
    Close,
    /// Reset the connection (`SO_LINGER` 0, then close).
    Reset,
    /// Write these bytes, then close.
    Answer(&'static str),
    /// Keep the connection open without answering.
    Hold,
}

/// A server on 127.0.0.1 doing `then` on every connection: its URL and
/// how many connections it accepted.
async fn serve(then: Then) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&accepted);
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(handle(stream, then));
        }
    });
    (url, accepted)
}

async fn handle(mut stream: TcpStream, then: Then) {
    let mut head = Vec::new();
    let mut buf = [0; 1024];
    while !head.ends_with(b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.unwrap();
        if n == 0 {
            return;
        }
        head.extend_from_slice(&buf[..n]);
    }
    match then {
        Then::Close => drop(stream),
        Then::Reset => {
            // A zero linger does not block: the close sends a reset at once.
            #[allow(deprecated)]
            stream.set_linger(Some(Duration::ZERO)).unwrap();
            drop(stream);
        }
        Then::Answer(bytes) => stream.write_all(bytes.as_bytes()).await.unwrap(),
        Then::Hold => {
            let _ = stream.read(&mut buf).await;
        }
    }
}

/// The error of one GET of `url`, its body read with `.bytes()`.
async fn get(client: &::reqwest::Client, url: &str) -> ::reqwest::Error {
    match client.get(url).send().await {
        Ok(response) => response.bytes().await.unwrap_err(),
        Err(error) => error,
    }
}

/// Retried for what happened after the connection was made: reqwest
/// calls it neither a connect error nor a timeout, and it has no status.
fn retried_in_transit(error: ::reqwest::Error) {
    assert!(
        !error.is_connect() && !error.is_timeout() && error.status().is_none(),
        "{error:?}"
    );
    assert!(is_retryable_reqwest_error(&error), "{error:?}");
    assert!(is_retryable_error(&Error::from(error)));
}

fn permanent(error: ::reqwest::Error) {
    assert!(!is_retryable_reqwest_error(&error), "{error:?}");
    assert!(!is_retryable_error(&Error::from(error)));
}

#[tokio::test]
async fn closed_before_the_response_is_retried() {
    let (url, accepted) = serve(Then::Close).await;
    retried_in_transit(get(&::reqwest::Client::new(), &url).await);
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn reset_before_the_response_is_retried() {
    let (url, _) = serve(Then::Reset).await;
    let error = get(&::reqwest::Client::new(), &url).await;
    let mut cause = error.source();
    let mut kinds = Vec::new();
    while let Some(error) = cause {
        kinds.extend(error.downcast_ref::<io::Error>().map(io::Error::kind));
        cause = error.source();
    }
    assert_eq!(kinds, [io::ErrorKind::ConnectionReset], "{error:?}");
    retried_in_transit(error);
}

#[tokio::test]
async fn a_body_cut_off_mid_transfer_is_retried() {
    let client = ::reqwest::Client::new();
    let (short, _) = serve(Then::Answer("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")).await;
    retried_in_transit(get(&client, &short).await);
    let mut response = client.get(&short).send().await.unwrap();
    assert_eq!(response.chunk().await.unwrap().as_deref(), Some(&b"0123456789"[..]));
    retried_in_transit(response.chunk().await.unwrap_err());
    // Chunked, the connection closed before the last chunk.
    let (unfinished, _) = serve(Then::Answer(
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n0123456789\r\n",
    ))
    .await;
    retried_in_transit(get(&client, &unfinished).await);
}

#[tokio::test]
async fn a_whole_body_is_no_error() {
    let (url, _) = serve(Then::Answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789")).await;
    let response = ::reqwest::Client::new().get(&url).send().await.unwrap();
    assert_eq!(&response.bytes().await.unwrap()[..], b"0123456789");
}

#[tokio::test]
async fn an_answer_that_is_not_http_is_permanent() {
    let (url, _) = serve(Then::Answer("HELLO\r\n\r\n")).await;
    permanent(get(&::reqwest::Client::new(), &url).await);
}

#[tokio::test]
async fn a_timeout_is_retried() {
    let (url, _) = serve(Then::Hold).await;
    let client = ::reqwest::Client::builder()
        .timeout(Duration::from_millis(50))
        .build()
        .unwrap();
    let error = get(&client, &url).await;
    assert!(error.is_timeout() && !error.is_connect(), "{error:?}");
    assert!(!failed_in_transit(&error), "{error:?}");
    assert!(is_retryable_reqwest_error(&error));
}

#[tokio::test]
async fn a_refused_connection_is_retried() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let error = get(&::reqwest::Client::new(), &format!("http://127.0.0.1:{port}/")).await;
    assert!(error.is_connect(), "{error:?}");
    assert!(is_retryable_reqwest_error(&error));
    assert!(is_retryable_error(&Error::from(error)));
}

#[tokio::test]
async fn a_bad_url_and_a_redirect_loop_are_permanent() {
    permanent(get(&::reqwest::Client::new(), "http://exa mple/").await);
    let (url, accepted) = serve(Then::Answer(
        "HTTP/1.1 302 Found\r\nLocation: /again\r\nContent-Length: 0\r\n\r\n",
    ))
    .await;
    let client = ::reqwest::Client::builder()
        .redirect(::reqwest::redirect::Policy::limited(2))
        .build()
        .unwrap();
    let error = get(&client, &url).await;
    assert!(error.is_redirect(), "{error:?}");
    permanent(error);
    assert_eq!(accepted.load(Ordering::SeqCst), 3);
}

/// A response with `status` and, if any, a `Retry-After` of `hint`.
async fn answered(status: u16, hint: Option<&'static str>) -> ::reqwest::Response {
    let answer: &'static str = match (status, hint) {
        (200, None) => "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        (404, None) => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
        (503, None) => "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n",
        (503, Some("7")) => "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n",
        _ => unreachable!(),
    };
    let (url, _) = serve(Then::Answer(answer)).await;
    ::reqwest::Client::new().get(&url).send().await.unwrap()
}

#[tokio::test]
async fn status_errors_are_classified_by_status() {
    let unavailable = answered(503, None).await.error_for_status().unwrap_err();
    assert!(!unavailable.is_timeout() && !unavailable.is_connect() && !failed_in_transit(&unavailable));
    assert!(is_retryable_reqwest_error(&unavailable));
    permanent(answered(404, None).await.error_for_status().unwrap_err());
}

#[tokio::test]
async fn check_status_keeps_the_status_and_the_hint() {
    let Err(error) = check_status(answered(503, Some("7")).await) else {
        panic!("503 passed");
    };
    assert!(matches!(
        error,
        Error::Status { status: StatusCode::SERVICE_UNAVAILABLE, retry_after: Some(hint) } if hint == Duration::from_secs(7)
    ));
    assert_eq!(retry_after_hint(&error), Some(Duration::from_secs(7)));
    assert!(is_retryable_error(&error));
    assert_eq!(error.to_string(), "server answered 503 Service Unavailable");
    assert!(error.source().is_none());
    let Err(error) = check_status(answered(404, None).await) else {
        panic!("404 passed");
    };
    assert!(matches!(
        error,
        Error::Status {
            status: StatusCode::NOT_FOUND,
            retry_after: None
        }
    ));
    assert!(!is_retryable_error(&error));
    assert_eq!(
        check_status(answered(200, None).await).unwrap().status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn transport_errors_and_cut_attempts() {
    let error = Error::from(get(&::reqwest::Client::new(), "http://exa mple/").await);
    assert!(
        error.to_string().starts_with("request failed: builder error"),
        "{error}"
    );
    assert!(error.source().is_some_and(|source| source.is::<::reqwest::Error>()));
    assert_eq!(retry_after_hint(&error), None);
    let cut = Error::from(Elapsed::new());
    assert!(matches!(cut, Error::TimedOut));
    assert_eq!(cut.to_string(), "attempt timed out");
    assert!(cut.source().is_none());
    assert!(is_retryable_error(&cut));
    assert_eq!(retry_after_hint(&cut), None);
}

/// reqwest's HTTP/1 engine, its connection task gone: the next request
/// finds the connection closed, and one sent anyway is canceled. Both
/// were never answered, as no connection carried them.
#[tokio::test]
async fn hyper_closed_and_canceled_are_retried() {
    let (io, _peer) = tokio::io::duplex(64);
    let (mut sender, connection) =
        ::hyper::client::conn::http1::handshake::<_, String>(hyper_util::rt::TokioIo::new(io))
            .await
            .unwrap();
    drop(connection);
    let closed = sender.ready().await.unwrap_err();
    assert!(closed.is_closed(), "{closed:?}");
    assert!(failed_in_transit(&closed));
    let canceled = sender
        .send_request(http::Request::new(String::new()))
        .await
        .unwrap_err();
    assert!(canceled.is_canceled(), "{canceled:?}");
    assert!(failed_in_transit(&canceled));
}
