//! Against a real HTTP server on 127.0.0.1 (axum), through a real client
//! (reqwest): which statuses are retried, `Retry-After` honoured as the
//! server sees it, and a hint above the cap ending the retries.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header::RETRY_AFTER};
use axum::routing::get;
use backoff_runtime::http_errors::{is_retryable_status, retry_after_header};
use backoff_runtime::{GiveUp, StopReason, retry};

/// What the server answers on one path, in order (the last answer repeats),
/// and when each request arrived.
#[derive(Default)]
struct Plan {
    answers: Vec<(u16, Option<&'static str>)>,
    arrivals: Vec<Instant>,
}

#[derive(Clone, Default)]
struct Server {
    plans: Arc<Mutex<HashMap<String, Plan>>>,
}

impl Server {
    async fn start() -> (Server, String) {
        let server = Server::default();
        let app = Router::new().route("/{id}", get(answer)).with_state(server.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        (server, base)
    }

    fn plan(&self, id: &str, answers: &[(u16, Option<&'static str>)]) {
        let plan = Plan {
            answers: answers.to_vec(),
            arrivals: Vec::new(),
        };
        self.plans.lock().unwrap().insert(id.to_string(), plan);
    }

    fn arrivals(&self, id: &str) -> Vec<Instant> {
        self.plans.lock().unwrap()[id].arrivals.clone()
    }
}

async fn answer(State(server): State<Server>, Path(id): Path<String>) -> (StatusCode, HeaderMap, String) {
    let mut plans = server.plans.lock().unwrap();
    let plan = plans.get_mut(&id).expect("planned path");
    plan.arrivals.push(Instant::now());
    let n = plan.arrivals.len() - 1;
    let (status, hint) = plan.answers[n.min(plan.answers.len() - 1)];
    let mut headers = HeaderMap::new();
    if let Some(hint) = hint {
        headers.insert(RETRY_AFTER, HeaderValue::from_static(hint));
    }
    (
        StatusCode::from_u16(status).unwrap(),
        headers,
        format!("{id} #{}", n + 1),
    )
}

#[derive(Debug)]
enum HttpError {
    /// A non-success status, with the server's `Retry-After` hint.
    Status(StatusCode, Option<Duration>),
    Network(reqwest::Error),
}

impl From<reqwest::Error> for HttpError {
    fn from(error: reqwest::Error) -> Self {
        HttpError::Network(error)
    }
}

fn is_retryable(error: &HttpError) -> bool {
    match error {
        HttpError::Status(status, _) => is_retryable_status(*status),
        HttpError::Network(error) => error.is_connect() || error.is_timeout(),
    }
}

fn hint(error: &HttpError) -> Option<Duration> {
    match error {
        HttpError::Status(_, hint) => *hint,
        HttpError::Network(_) => None,
    }
}

#[retry(
    max_retries = 5,
    initial_backoff = "10ms",
    max_backoff = "2s",
    retry_if = is_retryable,
    retry_after = hint,
    on_give_up = |_, event| *gave_up.lock().unwrap() = Some(event.clone()),
)]
async fn fetch(client: &reqwest::Client, url: &str, gave_up: &Mutex<Option<GiveUp>>) -> Result<String, HttpError> {
    let response = client.get(url).send().await?;
    let status = response.status();
    if !status.is_success() {
        return Err(HttpError::Status(status, retry_after_header(response.headers())));
    }
    Ok(response.text().await?)
}

#[tokio::test]
async fn load_errors_are_retried_until_success() {
    let (server, base) = Server::start().await;
    let client = reqwest::Client::new();
    let gave_up = Mutex::new(None);
    server.plan("load", &[(500, None), (503, None), (429, None), (200, None)]);
    let body = fetch(&client, &format!("{base}/load"), &gave_up).await.unwrap();
    assert_eq!(body, "load #4");
    assert_eq!(server.arrivals("load").len(), 4);
    assert!(gave_up.lock().unwrap().is_none());
}

#[tokio::test]
async fn client_errors_are_answered_after_one_request() {
    let (server, base) = Server::start().await;
    let client = reqwest::Client::new();
    for code in [401, 403, 404] {
        let id = format!("client-{code}");
        server.plan(&id, &[(code, None), (200, None)]);
        let gave_up = Mutex::new(None);
        let error = fetch(&client, &format!("{base}/{id}"), &gave_up).await.unwrap_err();
        assert!(
            matches!(error, HttpError::Status(status, _) if status.as_u16() == code),
            "{error:?}"
        );
        assert_eq!(server.arrivals(&id).len(), 1, "{code} must not be retried");
        assert_eq!(
            gave_up.lock().unwrap().as_ref().map(GiveUp::reason),
            Some(StopReason::Permanent)
        );
    }
}

#[tokio::test]
async fn retry_after_is_honoured_as_the_server_sees_it() {
    let (server, base) = Server::start().await;
    let client = reqwest::Client::new();
    let gave_up = Mutex::new(None);
    server.plan("hint", &[(429, Some("1")), (200, None)]);
    assert_eq!(
        fetch(&client, &format!("{base}/hint"), &gave_up).await.unwrap(),
        "hint #2"
    );
    let arrivals = server.arrivals("hint");
    assert_eq!(arrivals.len(), 2);
    let gap = arrivals[1] - arrivals[0];
    assert!(
        gap >= Duration::from_secs(1),
        "retried after {gap:?}, before the server's 1 s"
    );
    assert!(
        gap < Duration::from_secs(2),
        "retried after {gap:?}: the hint, not the schedule, sets the wait"
    );
}

#[tokio::test]
async fn a_hint_above_max_backoff_gives_up_at_once() {
    let (server, base) = Server::start().await;
    let client = reqwest::Client::new();
    let gave_up = Mutex::new(None);
    server.plan("patience", &[(503, Some("120")), (200, None)]);
    let started = Instant::now();
    let error = fetch(&client, &format!("{base}/patience"), &gave_up).await.unwrap_err();
    assert!(matches!(error, HttpError::Status(_, Some(hint)) if hint == Duration::from_secs(120)));
    assert_eq!(server.arrivals("patience").len(), 1);
    assert!(started.elapsed() < Duration::from_secs(1));
    let event = gave_up.lock().unwrap().clone().unwrap();
    assert_eq!((event.reason(), event.attempts()), (StopReason::HintAboveCap, 1));
}

#[tokio::test]
async fn refused_connections_are_retried_then_reported() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = reqwest::Client::new();
    let gave_up = Mutex::new(None);
    let error = fetch(&client, &format!("http://127.0.0.1:{port}/x"), &gave_up)
        .await
        .unwrap_err();
    assert!(matches!(&error, HttpError::Network(e) if e.is_connect()), "{error:?}");
    let event = gave_up.lock().unwrap().clone().unwrap();
    assert_eq!((event.reason(), event.attempts()), (StopReason::Exhausted, 6));
}

// ---- the `reqwest` feature: the common client in one attribute ----------------

mod with_reqwest_feature {
    use super::*;
    use backoff_runtime::reqwest_errors::{Error, check_status, is_retryable_error, retry_after_hint};

    #[retry(initial_backoff = "10ms", max_backoff = "2s", retry_if = is_retryable_error, retry_after = retry_after_hint)]
    async fn get(client: &reqwest::Client, url: &str) -> Result<String, Error> {
        Ok(check_status(client.get(url).send().await?)?.text().await?)
    }

    #[tokio::test]
    async fn statuses_hints_and_permanent_errors() {
        let (server, base) = Server::start().await;
        let client = reqwest::Client::new();
        server.plan("r-load", &[(503, None), (429, Some("0")), (408, None), (200, None)]);
        assert_eq!(get(&client, &format!("{base}/r-load")).await.unwrap(), "r-load #4");
        server.plan("r-missing", &[(404, None), (200, None)]);
        let error = get(&client, &format!("{base}/r-missing")).await.unwrap_err();
        assert!(matches!(error, Error::Status { status, .. } if status.as_u16() == 404));
        assert_eq!(server.arrivals("r-missing").len(), 1);
        server.plan("r-hint", &[(429, Some("1")), (200, None)]);
        assert_eq!(get(&client, &format!("{base}/r-hint")).await.unwrap(), "r-hint #2");
        let arrivals = server.arrivals("r-hint");
        assert!(arrivals[1] - arrivals[0] >= Duration::from_secs(1));
    }

    #[tokio::test]
    async fn reqwest_errors_are_classified() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let client = reqwest::Client::new();
        let connect = client
            .get(format!("http://127.0.0.1:{port}/"))
            .send()
            .await
            .unwrap_err();
        assert!(
            backoff_runtime::reqwest_errors::is_retryable_reqwest_error(&connect),
            "connect errors are retryable"
        );
        let (server, base) = Server::start().await;
        for (code, retryable) in [(500, true), (429, true), (408, true), (401, false), (404, false)] {
            let id = format!("e-{code}");
            server.plan(&id, &[(code, None)]);
            let error = client
                .get(format!("{base}/{id}"))
                .send()
                .await
                .unwrap()
                .error_for_status()
                .unwrap_err();
            assert_eq!(
                backoff_runtime::reqwest_errors::is_retryable_reqwest_error(&error),
                retryable,
                "{code}"
            );
        }
        let bad_url = client.get("not a url").send().await.unwrap_err();
        assert!(!backoff_runtime::reqwest_errors::is_retryable_reqwest_error(&bad_url));
    }
}
