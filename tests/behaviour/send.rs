//! Compile-time proof that annotated futures are `Send` whenever their body
//! is: `&self`, `&mut self`, generic and `impl Trait` functions, with hooks
//! and a budget. (The RNG is never held across an `.await`.) Each assertion
//! is a compile error if the property breaks.

use std::fmt::Display;
use std::future::Future;

use backoff_runtime::limits::RetryBudget;
use backoff_runtime::retry;

fn assert_send<F: Future + Send>(future: F) -> F {
    future
}

static BUDGET: RetryBudget = RetryBudget::new();

struct Service {
    name: String,
    hits: u32,
}

impl Service {
    #[retry(initial_backoff = "1ms", retry_if = |e| *e > 0, on_retry = |_, _| (), budget = BUDGET)]
    async fn by_ref(&self, x: u32) -> Result<usize, u32> {
        tokio::task::yield_now().await;
        if x > 100 { Err(x) } else { Ok(self.name.len()) }
    }

    #[retry(initial_backoff = "1ms", max_elapsed = "1s", jitter = decorrelated)]
    async fn by_mut(&mut self) -> Result<u32, String> {
        self.hits += 1;
        tokio::task::yield_now().await;
        Ok(self.hits)
    }
}

#[retry(initial_backoff = "1ms", timeout = "1s")]
async fn generic<T: Clone + Send + Sync>(value: &T) -> Result<T, backoff_runtime::Elapsed> {
    tokio::task::yield_now().await;
    Ok(value.clone())
}

#[retry(initial_backoff = "1ms")]
async fn impl_trait(label: impl Display + Send + Sync) -> Result<impl Display + Send, String> {
    tokio::task::yield_now().await;
    Ok(format!("<{label}>"))
}

impl Service {
    #[retry(
        initial_backoff = "1ms",
        context = attempt,
        retry_if_ok = |hits: &u32| *hits < 2,
        before_retry = async |_: &Result<u32, String>, _: &backoff_runtime::RetryEvent| {
            self.name.push('!');
            tokio::task::yield_now().await;
        },
    )]
    async fn with_every_new_key(&mut self) -> Result<u32, String> {
        self.hits += 1;
        tokio::task::yield_now().await;
        let _ = attempt.invocation_id();
        Ok(self.hits)
    }
}

/// A future with the attempt's context, polling and an async action that
/// borrows `&mut self` is `Send` too, and can be spawned.
#[tokio::test(start_paused = true)]
async fn futures_with_context_polling_and_actions_are_send() {
    let mut service = Service {
        name: "svc".to_string(),
        hits: 0,
    };
    assert_eq!(assert_send(service.with_every_new_key()).await, Ok(2));
    assert_eq!(service.name, "svc!");
    let spawned = tokio::spawn(async move { service.with_every_new_key().await });
    assert_eq!(spawned.await.unwrap(), Ok(3));
}

#[tokio::test(start_paused = true)]
async fn annotated_futures_are_send() {
    let mut service = Service {
        name: "svc".to_string(),
        hits: 0,
    };
    assert_eq!(assert_send(service.by_ref(1)).await, Ok(3));
    assert_eq!(assert_send(service.by_mut()).await, Ok(1));
    assert_eq!(assert_send(generic(&7u8)).await, Ok(7));
    assert_eq!(
        assert_send(impl_trait(5)).await.map(|v| v.to_string()),
        Ok("<5>".to_string())
    );
    // And they can be spawned on a multi-threaded runtime.
    let spawned = tokio::spawn(async { generic(&"x".to_string()).await }).await.unwrap();
    assert_eq!(spawned, Ok("x".to_string()));
}
