//! `Cooldown` in `admission = ...`: a server's hint on one call holds every
//! call that names the cooldown until the hint's instant, never less, and
//! refuses the ones that would wait past `max_wait`.

use backoff_runtime::limits::{Cooldown, Refused};
use backoff_runtime::{Policy, retry};
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

#[derive(Clone, Debug, PartialEq)]
enum ApiError {
    /// 429 with a `Retry-After` of this many milliseconds.
    TooMany(u64),
    Refused(Refused),
}

impl From<Refused> for ApiError {
    fn from(refused: Refused) -> Self {
        ApiError::Refused(refused)
    }
}

fn hint(error: &ApiError) -> Option<Duration> {
    match error {
        ApiError::TooMany(ms) => Some(Duration::from_millis(*ms)),
        ApiError::Refused(_) => None,
    }
}

mod attribute {
    use super::*;

    static HOST: Cooldown = Cooldown::new().name("api");
    /// When each attempt was sent, by which call.
    static SENT: Mutex<Vec<(&'static str, Instant)>> = Mutex::new(Vec::new());

    /// Sends `who`'s attempt; `answers` are its attempts' answers, in order
    /// (then `Ok(7)`).
    #[retry(max_retries = 1, retry_after = hint, admission = HOST)]
    async fn call(who: &'static str, answers: &Mutex<Vec<Result<u32, ApiError>>>) -> Result<u32, ApiError> {
        SENT.lock().unwrap().push((who, Instant::now()));
        answers.lock().unwrap().pop().unwrap_or(Ok(7))
    }

    #[tokio::test(start_paused = true)]
    async fn a_hint_on_one_call_holds_the_next_call_until_its_instant_never_less() {
        let start = Instant::now();
        let limited_answers = Mutex::new(vec![Err(ApiError::TooMany(1_500))]);
        let other_answers = Mutex::new(Vec::new());
        let (limited, held) = tokio::join!(call("limited", &limited_answers), async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            call("other", &other_answers).await
        });
        // The limited call's retry waits the hint too, then succeeds.
        assert_eq!((limited, held), (Ok(7), Ok(7)));
        let sent = SENT.lock().unwrap().clone();
        let other = sent
            .iter()
            .find(|(who, _)| *who == "other")
            .expect("the other call was sent")
            .1;
        let waited = other - start;
        assert!(
            waited >= Duration::from_millis(1_500) && waited < Duration::from_millis(1_502),
            "the other call went {waited:?} after the hint, which held until 1.5 s"
        );
    }
}

mod refusing {
    use super::*;

    static HOST: Cooldown = Cooldown::new().max_wait(Duration::from_secs(1)).name("strict");

    /// Never retried: its 429 only sets the hold.
    #[retry(max_retries = 1, retry_if = |_| false, retry_after = hint, admission = HOST)]
    async fn limited() -> Result<u32, ApiError> {
        Err(ApiError::TooMany(30_000))
    }

    #[retry(max_retries = 1, retry_after = hint, admission = HOST)]
    async fn call(answer: Result<u32, ApiError>) -> Result<u32, ApiError> {
        answer.clone()
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_that_would_wait_past_max_wait_is_refused_with_the_time_left() {
        assert_eq!(limited().await, Err(ApiError::TooMany(30_000)));
        // 30 s is past the one second allowed: refused at once.
        let first = call(Ok(1)).await;
        let Err(ApiError::Refused(refused)) = first else {
            panic!("expected a refusal, got {first:?}");
        };
        assert_eq!(refused.limiter(), Some("strict"));
        assert!(!refused.is_circuit_open());
        assert_eq!(refused.retry_after(), Some(Duration::from_secs(30)));
        assert!(refused.to_string().contains("cooldown \"strict\""), "{refused}");
        tokio::time::advance(Duration::from_secs(10)).await;
        let Err(ApiError::Refused(refused)) = call(Ok(1)).await else {
            panic!("a new call is refused while the hold lasts");
        };
        assert_eq!(refused.retry_after(), Some(Duration::from_secs(20)));
        tokio::time::advance(Duration::from_secs(20)).await;
        assert_eq!(call(Ok(1)).await, Ok(1));
    }
}

mod builder {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_builder_holds_its_calls_on_the_same_cooldown() {
        let host = Cooldown::new();
        let policy = Policy::new().max_retries(1);
        let start = Instant::now();
        let limited = || async { Err::<u32, _>(ApiError::TooMany(800)) };
        let result = policy.retry(limited).retry_after(hint).admission(&host).await;
        assert_eq!(result, Err(ApiError::TooMany(800)));
        // The retry waited the hint, and the hold from the retry's own hint
        // keeps a new call waiting 800 ms more.
        let retried_at = start.elapsed();
        let ok = || async { Ok::<_, ApiError>(1) };
        assert_eq!(policy.retry(ok).admission(&host).await, Ok(1));
        assert_eq!(start.elapsed() - retried_at, Duration::from_millis(800));
    }
}

/// The tower layer with one cooldown per host: a 429's `Retry-After` on one
/// host holds that host's next call until the hint's instant, never less,
/// and no other host's.
mod per_host {
    use backoff_runtime::Policy;
    use backoff_runtime::limits::{Cooldown, Keyed};
    use backoff_tower::RetryLayer;
    use http::Request;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use tokio::time::Instant;
    use tower::{Layer, ServiceExt};

    fn get(url: &str) -> Request<String> {
        Request::get(url).body(String::new()).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_after_on_one_host_holds_that_host_s_next_call_and_no_other() {
        let hosts: Arc<Keyed<Cooldown>> = Arc::new(Keyed::new(|_| Cooldown::new()));
        let sent: Arc<Mutex<Vec<(String, Instant)>>> = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&sent);
        let service = tower::service_fn(move |request: Request<String>| {
            let host = request.uri().host().unwrap_or_default().to_string();
            let mut log = log.lock().unwrap();
            // busy.example's first answer is a 429 with a 2 s Retry-After.
            let first_to_busy = host == "busy.example" && log.iter().all(|(sent_to, _)| sent_to != &host);
            log.push((host, Instant::now()));
            let response = if first_to_busy {
                http::Response::builder()
                    .status(429)
                    .header("retry-after", "2")
                    .body(String::new())
            } else {
                http::Response::builder().status(200).body(String::new())
            };
            std::future::ready(Ok::<_, tower::BoxError>(response.unwrap()))
        });
        let service = RetryLayer::new(Policy::new().max_retries(1))
            .admission(Arc::clone(&hosts))
            .layer(service);
        let start = Instant::now();
        // The first call's 429 comes back at once; its retry waits the hint.
        let first = tokio::spawn(service.clone().oneshot(get("http://busy.example/a")));
        tokio::time::sleep(Duration::from_millis(1)).await;
        // Another host goes at once; the busy host's next call is held.
        let other = service.clone().oneshot(get("http://idle.example/b")).await.unwrap();
        assert_eq!(other.status(), 200);
        let held = service.oneshot(get("http://busy.example/c")).await.unwrap();
        assert_eq!(held.status(), 200);
        assert_eq!(first.await.unwrap().unwrap().status(), 200, "the retry after the 429");
        let sent = sent.lock().unwrap();
        let hosts: Vec<&str> = sent.iter().map(|(host, _)| host.as_str()).collect();
        assert_eq!(hosts, ["busy.example", "idle.example", "busy.example", "busy.example"]);
        let at = |index: usize| sent[index].1 - start;
        assert_eq!(at(1), Duration::from_millis(1), "another host is not held");
        for held in [2, 3] {
            assert!(
                at(held) >= Duration::from_secs(2) && at(held) < Duration::from_millis(2002),
                "a call to the busy host went at {:?}, before the hint's instant or late",
                at(held)
            );
        }
    }
}
