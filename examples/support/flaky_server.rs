//! A real HTTP server on 127.0.0.1 for the examples: it answers
//! `503 Service Unavailable` to the first `failures` requests, then `200 OK`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;

/// Binds a free port on 127.0.0.1, serves in the background on the current
/// tokio runtime, and returns the server's address.
pub(crate) async fn start(failures: u32) -> std::io::Result<SocketAddr> {
    let served = Arc::new(AtomicU32::new(0));
    let app = Router::new().route("/", get(answer)).with_state((served, failures));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            eprintln!("server stopped: {error}");
        }
    });
    Ok(addr)
}

async fn answer(State((served, failures)): State<(Arc<AtomicU32>, u32)>) -> (StatusCode, &'static str) {
    let n = served.fetch_add(1, Ordering::SeqCst) + 1;
    if n <= failures {
        (StatusCode::SERVICE_UNAVAILABLE, "busy, try again")
    } else {
        (StatusCode::OK, "hello from the server")
    }
}
