//! A real HTTP server on 127.0.0.1 for the examples: it answers
//! `503 Service Unavailable` to the first `failures` requests (the last of
//! them with `Retry-After: 1`), then `200 OK`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header::RETRY_AFTER};
use axum::routing::any;

/// Binds a free port on 127.0.0.1, serves in the background on the current
/// tokio runtime, and returns the server's address.
pub(crate) async fn start(failures: u32) -> std::io::Result<SocketAddr> {
    let served = Arc::new(AtomicU32::new(0));
    let app = Router::new().route("/", any(answer)).with_state((served, failures));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            eprintln!("server stopped: {error}");
        }
    });
    Ok(addr)
}

async fn answer(State((served, failures)): State<(Arc<AtomicU32>, u32)>) -> (StatusCode, HeaderMap, &'static str) {
    let n = served.fetch_add(1, Ordering::SeqCst) + 1;
    let mut headers = HeaderMap::new();
    if n < failures {
        (StatusCode::SERVICE_UNAVAILABLE, headers, "busy, try again")
    } else if n == failures {
        headers.insert(RETRY_AFTER, HeaderValue::from_static("1"));
        (StatusCode::SERVICE_UNAVAILABLE, headers, "busy, come back in a second")
    } else {
        (StatusCode::OK, headers, "hello from the server")
    }
}
