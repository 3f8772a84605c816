//! `backoff_runtime::reqwest_errors` against a loopback server that misbehaves at
//! the socket: what the network breaks after the connection is made (closed
//! or reset before the response, a body cut off mid-transfer) is retried,
//! what retrying cannot mend (invalid JSON in a whole body, a bad URL, a
//! redirect loop) is tried once. Each case checks the classification of the
//! real error and how many times the server was reached.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use backoff_runtime::reqwest_errors::{Error, check_status, is_retryable_error, is_retryable_reqwest_error};
use backoff_runtime::retry;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The attribute's `max_retries` below: a retried failure reaches the
/// server this many times plus one.
const MAX_RETRIES: usize = 3;

/// What the server does once it has read a request's head.
#[derive(Clone, Copy)]
enum Then {
    /// Close the connection without answering.
    Close,
    /// Reset the connection: `SO_LINGER` 0, then close.
    Reset,
    /// Write these bytes, then close.
    Answer(&'static str),
}

/// A server on 127.0.0.1 doing `then` with every connection; its URL and the
/// count of connections it accepted.
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
            // A zero linger does not block the thread: the close resets.
            #[allow(deprecated)]
            stream.set_linger(Some(Duration::ZERO)).unwrap();
            drop(stream);
        }
        Then::Answer(bytes) => stream.write_all(bytes.as_bytes()).await.unwrap(),
    }
}

#[retry(max_retries = 3, initial_backoff = "1ms", max_backoff = "2ms", retry_if = is_retryable_error)]
async fn text(client: &reqwest::Client, url: &str, attempts: &AtomicUsize) -> Result<String, Error> {
    attempts.fetch_add(1, Ordering::SeqCst);
    Ok(check_status(client.get(url).send().await?)?.text().await?)
}

#[retry(max_retries = 3, initial_backoff = "1ms", max_backoff = "2ms", retry_if = is_retryable_error)]
async fn numbers(client: &reqwest::Client, url: &str, attempts: &AtomicUsize) -> Result<Vec<u32>, Error> {
    attempts.fetch_add(1, Ordering::SeqCst);
    Ok(check_status(client.get(url).send().await?)?.json::<Vec<u32>>().await?)
}

/// The reqwest error inside a transport failure.
fn transport(error: Error) -> reqwest::Error {
    match error {
        Error::Transport(error) => error,
        other => panic!("not a transport error: {other:?}"),
    }
}

/// A failure after the connection was made: retried until the retries ran
/// out, each attempt a new connection; neither a connect error nor a timeout.
async fn assert_retried(then: Then) -> reqwest::Error {
    let (url, accepted) = serve(then).await;
    let attempts = AtomicUsize::new(0);
    let error = transport(text(&reqwest::Client::new(), &url, &attempts).await.unwrap_err());
    assert!(!error.is_connect() && !error.is_timeout(), "{error:?}");
    assert!(is_retryable_reqwest_error(&error), "{error:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), MAX_RETRIES + 1, "{error:?}");
    assert_eq!(accepted.load(Ordering::SeqCst), MAX_RETRIES + 1, "{error:?}");
    error
}

#[tokio::test]
async fn closed_without_an_answer_is_retried() {
    let error = assert_retried(Then::Close).await;
    assert!(error.is_request(), "{error:?}");
}

#[tokio::test]
async fn reset_before_the_answer_is_retried() {
    let error = assert_retried(Then::Reset).await;
    assert!(error.is_request(), "{error:?}");
}

#[tokio::test]
async fn a_body_cut_off_mid_transfer_is_retried() {
    // Headers promise 100 bytes; 10 arrive, then the connection closes.
    let error = assert_retried(Then::Answer("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")).await;
    assert!(error.is_decode() || error.is_body(), "{error:?}");
}

#[tokio::test]
async fn invalid_json_in_a_whole_body_is_tried_once() {
    let (url, accepted) = serve(Then::Answer(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{not json",
    ))
    .await;
    let attempts = AtomicUsize::new(0);
    let error = transport(numbers(&reqwest::Client::new(), &url, &attempts).await.unwrap_err());
    assert!(error.is_decode(), "{error:?}");
    assert!(!is_retryable_reqwest_error(&error), "{error:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
    // The same server with a valid body: the failure was the JSON, not the transfer.
    let (url, _) = serve(Then::Answer("HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n[1, 2]")).await;
    assert_eq!(numbers(&reqwest::Client::new(), &url, &attempts).await.unwrap(), [1, 2]);
}

#[tokio::test]
async fn a_bad_url_is_tried_once() {
    let attempts = AtomicUsize::new(0);
    let error = transport(
        text(&reqwest::Client::new(), "http://exa mple/", &attempts)
            .await
            .unwrap_err(),
    );
    assert!(error.is_builder(), "{error:?}");
    assert!(!is_retryable_reqwest_error(&error), "{error:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_redirect_loop_is_tried_once() {
    // Every answer sends the client back to the same server.
    let (url, accepted) = serve(Then::Answer(
        "HTTP/1.1 302 Found\r\nLocation: /again\r\nContent-Length: 0\r\n\r\n",
    ))
    .await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::limited(2))
        .build()
        .unwrap();
    let attempts = AtomicUsize::new(0);
    let error = transport(text(&client, &url, &attempts).await.unwrap_err());
    assert!(error.is_redirect(), "{error:?}");
    assert!(!is_retryable_reqwest_error(&error), "{error:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 1);
    // One attempt: the first request and the two redirects the policy allows.
    assert_eq!(accepted.load(Ordering::SeqCst), 3);
}

#[retry(max_retries = 3, initial_backoff = "1ms", max_backoff = "2ms", retry_if = is_retryable_error)]
fn blocking_text(client: &reqwest::blocking::Client, url: &str, attempts: &AtomicUsize) -> Result<String, Error> {
    attempts.fetch_add(1, Ordering::SeqCst);
    let response = client.get(url).send()?;
    let status = response.status();
    if !status.is_success() {
        return Err(Error::Status {
            status,
            retry_after: None,
        });
    }
    Ok(response.text()?)
}

#[test]
fn a_body_cut_off_mid_transfer_is_retried_by_the_blocking_client_too() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&accepted);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let mut stream = stream.unwrap();
            count.fetch_add(1, Ordering::SeqCst);
            let mut head = Vec::new();
            let mut buf = [0; 1024];
            while !head.ends_with(b"\r\n\r\n") {
                let n = stream.read(&mut buf).unwrap();
                assert!(n > 0, "the client closed mid-request");
                head.extend_from_slice(&buf[..n]);
            }
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789")
                .unwrap();
        }
    });
    let attempts = AtomicUsize::new(0);
    let error = transport(blocking_text(&reqwest::blocking::Client::new(), &url, &attempts).unwrap_err());
    assert!(is_retryable_reqwest_error(&error), "{error:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), MAX_RETRIES + 1);
    assert_eq!(accepted.load(Ordering::SeqCst), MAX_RETRIES + 1);
}
