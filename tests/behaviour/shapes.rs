//! Every function shape `#[retry]` accepts: each test fails if the shape
//! stops compiling or stops retrying.

use std::cell::Cell;
use std::fmt::Display;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use backoff_runtime::retry;
use backoff_runtime::testing::VirtualClock;

#[derive(Debug, PartialEq)]
pub struct Flaky(u32);

/// Fails `failures` times, then returns the number of the attempt.
fn attempt(counter: &Cell<u32>, failures: u32) -> Result<u32, Flaky> {
    counter.set(counter.get() + 1);
    if counter.get() <= failures {
        Err(Flaky(counter.get()))
    } else {
        Ok(counter.get())
    }
}

fn attempt_atomic(counter: &AtomicU32, failures: u32) -> Result<u32, Flaky> {
    let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
    if n <= failures { Err(Flaky(n)) } else { Ok(n) }
}

// ---- free functions ----------------------------------------------------

#[retry(initial_backoff = "1ms")]
fn free_sync(counter: &Cell<u32>, failures: u32) -> Result<u32, Flaky> {
    attempt(counter, failures)
}

#[retry(initial_backoff = "1ms")]
async fn free_async(counter: &AtomicU32, failures: u32) -> Result<u32, Flaky> {
    attempt_atomic(counter, failures)
}

#[test]
fn sync_free_function_retries_until_success() {
    let _clock = VirtualClock::install();
    let counter = Cell::new(0);
    assert_eq!(free_sync(&counter, 2), Ok(3));
}

#[tokio::test(start_paused = true)]
async fn async_free_function_retries_until_success() {
    let counter = AtomicU32::new(0);
    assert_eq!(free_async(&counter, 2).await, Ok(3));
}

// ---- methods with every receiver ---------------------------------------

struct Client {
    name: String,
    calls: u32,
    failures: u32,
}

impl Client {
    fn new(failures: u32) -> Self {
        Client {
            name: "svc".into(),
            calls: 0,
            failures,
        }
    }

    /// One more call: fails until `failures` calls were made.
    fn count_call(&mut self) -> Result<u32, Flaky> {
        self.calls += 1;
        if self.calls <= self.failures {
            Err(Flaky(self.calls))
        } else {
            Ok(self.calls)
        }
    }

    #[retry(initial_backoff = "1ms")]
    fn by_mut_ref(&mut self) -> Result<u32, Flaky> {
        self.count_call()
    }

    #[retry(initial_backoff = "1ms")]
    async fn by_mut_ref_async(&mut self) -> Result<u32, Flaky> {
        let counted = self.count_call();
        tokio::task::yield_now().await;
        counted
    }

    #[retry(initial_backoff = "1ms")]
    fn by_ref(&self, counter: &Cell<u32>) -> Result<&str, Flaky> {
        attempt(counter, self.failures)?;
        // Coercion: `&String` into `&str`, as in the plain function.
        Ok(&self.name)
    }

    #[retry(initial_backoff = "1ms")]
    async fn by_ref_async(&self, counter: &AtomicU32) -> Result<&str, Flaky> {
        attempt_atomic(counter, self.failures)?;
        Ok(&self.name)
    }

    /// By value: the body uses `self` by reference, so it can run again.
    #[retry(initial_backoff = "1ms")]
    fn by_value(self, counter: &Cell<u32>) -> Result<usize, Flaky> {
        attempt(counter, self.failures)?;
        Ok(self.name.len())
    }

    #[retry(initial_backoff = "1ms")]
    async fn by_value_async(self, counter: &AtomicU32) -> Result<usize, Flaky> {
        attempt_atomic(counter, self.failures)?;
        Ok(self.name.len())
    }

    #[retry(initial_backoff = "1ms")]
    async fn by_arc(self: Arc<Self>, counter: &AtomicU32) -> Result<usize, Flaky> {
        attempt_atomic(counter, self.failures)?;
        Ok(self.name.len())
    }

    /// A `mut` pinned receiver, as `AsyncRead`-style types write it: the
    /// `mut` lets the body reborrow the pointer (`self.as_mut()`), and every
    /// attempt reaches the same value through it, as with `&mut self`.
    #[retry(initial_backoff = "1ms")]
    async fn by_pinned_mut(mut self: std::pin::Pin<&mut Self>) -> Result<u32, Flaky> {
        let this = self.as_mut().get_mut();
        this.calls += 1;
        if this.calls <= this.failures {
            Err(Flaky(this.calls))
        } else {
            Ok(this.calls)
        }
    }

    /// A `mut` binding of a `&mut Self` receiver, sync.
    #[retry(initial_backoff = "1ms")]
    fn by_mut_binding_of_mut_ref(mut self: &mut Self) -> Result<u32, Flaky> {
        let this = &mut self;
        this.calls += 1;
        if this.calls <= this.failures {
            Err(Flaky(this.calls))
        } else {
            Ok(this.calls)
        }
    }

    /// `Self` in the body.
    #[retry(initial_backoff = "1ms")]
    fn constructor(counter: &Cell<u32>) -> Result<Self, Flaky> {
        attempt(counter, 1)?;
        Ok(Self::new(0))
    }
}

#[test]
fn mut_self_keeps_state_across_attempts() {
    let _clock = VirtualClock::install();
    let mut client = Client::new(3);
    assert_eq!(client.by_mut_ref(), Ok(4));
    assert_eq!(client.calls, 4);
}

#[tokio::test(start_paused = true)]
async fn mut_self_async_keeps_state_across_attempts() {
    let mut client = Client::new(3);
    assert_eq!(client.by_mut_ref_async().await, Ok(4));
    assert_eq!(client.calls, 4);
}

#[tokio::test(start_paused = true)]
async fn mut_pinned_self_keeps_state_across_attempts() {
    let mut client = Client::new(2);
    assert_eq!(std::pin::Pin::new(&mut client).by_pinned_mut().await, Ok(3));
    assert_eq!(client.calls, 3);
}

#[test]
fn a_mut_binding_of_mut_self_keeps_state_across_attempts() {
    let _clock = VirtualClock::install();
    let mut client = Client::new(2);
    assert_eq!(client.by_mut_binding_of_mut_ref(), Ok(3));
    assert_eq!(client.calls, 3);
}

#[test]
fn ref_self_with_borrowed_result() {
    let _clock = VirtualClock::install();
    let client = Client::new(2);
    let counter = Cell::new(0);
    assert_eq!(client.by_ref(&counter), Ok("svc"));
    assert_eq!(counter.get(), 3);
}

#[tokio::test(start_paused = true)]
async fn ref_self_async_with_borrowed_result() {
    let client = Client::new(2);
    let counter = AtomicU32::new(0);
    assert_eq!(client.by_ref_async(&counter).await, Ok("svc"));
    assert_eq!(counter.load(Ordering::SeqCst), 3);
}

#[test]
fn self_by_value() {
    let _clock = VirtualClock::install();
    let counter = Cell::new(0);
    assert_eq!(Client::new(1).by_value(&counter), Ok(3));
    assert_eq!(counter.get(), 2);
}

#[tokio::test(start_paused = true)]
async fn self_by_value_async_and_arc() {
    let counter = AtomicU32::new(0);
    assert_eq!(Client::new(1).by_value_async(&counter).await, Ok(3));
    let counter = AtomicU32::new(0);
    assert_eq!(Arc::new(Client::new(2)).by_arc(&counter).await, Ok(3));
    assert_eq!(counter.load(Ordering::SeqCst), 3);
}

#[test]
fn self_type_in_body() {
    let _clock = VirtualClock::install();
    let counter = Cell::new(0);
    assert!(Client::constructor(&counter).is_ok());
    assert_eq!(counter.get(), 2);
}

// ---- traits --------------------------------------------------------------

trait Fetch {
    fn fetch(&self, counter: &Cell<u32>) -> Result<u32, Flaky>;
    async fn fetch_async(&self, counter: &AtomicU32) -> Result<u32, Flaky>;

    /// A default body in the trait itself.
    #[retry(initial_backoff = "1ms")]
    async fn fetch_default(&self, counter: &AtomicU32) -> Result<u32, Flaky> {
        attempt_atomic(counter, 2)
    }
}

struct Service;

impl Fetch for Service {
    #[retry(initial_backoff = "1ms")]
    fn fetch(&self, counter: &Cell<u32>) -> Result<u32, Flaky> {
        attempt(counter, 2)
    }

    #[retry(initial_backoff = "1ms")]
    async fn fetch_async(&self, counter: &AtomicU32) -> Result<u32, Flaky> {
        attempt_atomic(counter, 2)
    }
}

#[test]
fn trait_impl_method() {
    let _clock = VirtualClock::install();
    let counter = Cell::new(0);
    assert_eq!(Service.fetch(&counter), Ok(3));
}

#[tokio::test(start_paused = true)]
async fn async_fn_in_trait_impl_and_default() {
    let counter = AtomicU32::new(0);
    assert_eq!(Service.fetch_async(&counter).await, Ok(3));
    let counter = AtomicU32::new(0);
    assert_eq!(Service.fetch_default(&counter).await, Ok(3));
}

// ---- generics, lifetimes, where clauses, impl Trait ------------------------

#[retry(initial_backoff = "1ms")]
fn generic<'a, T, F>(items: &'a [T], counter: &Cell<u32>, pick: F) -> Result<&'a T, Flaky>
where
    T: PartialEq,
    F: Fn(&T) -> bool,
{
    attempt(counter, 1)?;
    items.iter().find(|item| pick(item)).ok_or(Flaky(0))
}

#[retry(initial_backoff = "1ms")]
fn impl_trait_arg(label: impl Display, counter: &Cell<u32>) -> Result<String, Flaky> {
    attempt(counter, 1)?;
    Ok(format!("<{label}>"))
}

#[retry(initial_backoff = "1ms")]
fn impl_trait_ok(counter: &Cell<u32>) -> Result<impl Display, Flaky> {
    let n = attempt(counter, 1)?;
    Ok(n * 10)
}

#[retry(initial_backoff = "1ms")]
async fn impl_trait_ok_async(counter: &AtomicU32) -> Result<impl Display, Flaky> {
    let n = attempt_atomic(counter, 1)?;
    Ok(format!("#{n}"))
}

#[retry(initial_backoff = "1ms")]
async fn generic_async<T: Clone + Send + Sync>(value: &T, counter: &AtomicU32) -> Result<T, Flaky> {
    attempt_atomic(counter, 1)?;
    Ok(value.clone())
}

#[test]
fn generics_lifetimes_where_clauses() {
    let _clock = VirtualClock::install();
    let counter = Cell::new(0);
    let items = [1, 2, 3];
    assert_eq!(generic(&items, &counter, |x| *x == 2), Ok(&2));
    assert_eq!(counter.get(), 2);
}

#[test]
fn impl_trait_in_argument_and_ok_type() {
    let _clock = VirtualClock::install();
    let counter = Cell::new(0);
    assert_eq!(impl_trait_arg(7, &counter), Ok("<7>".to_string()));
    let counter = Cell::new(0);
    assert_eq!(impl_trait_ok(&counter).map(|v| v.to_string()), Ok("20".to_string()));
}

#[tokio::test(start_paused = true)]
async fn impl_trait_and_generics_async() {
    let counter = AtomicU32::new(0);
    assert_eq!(
        impl_trait_ok_async(&counter).await.map(|v| v.to_string()),
        Ok("#2".to_string())
    );
    let counter = AtomicU32::new(0);
    assert_eq!(generic_async(&"v".to_string(), &counter).await, Ok("v".to_string()));
}

// ---- `?`, `return`, closures and nested async blocks ----------------------

#[derive(Debug, PartialEq)]
enum AppError {
    Parse,
    Flaky(u32),
}

impl From<Flaky> for AppError {
    fn from(f: Flaky) -> Self {
        AppError::Flaky(f.0)
    }
}

impl From<std::num::ParseIntError> for AppError {
    fn from(_: std::num::ParseIntError) -> Self {
        AppError::Parse
    }
}

/// `?` converts with `From` and ends the attempt; it never escapes the loop.
#[retry(initial_backoff = "1ms", max_retries = 4)]
fn question_mark(counter: &Cell<u32>) -> Result<u32, AppError> {
    let n = attempt(counter, 2)?;
    let parsed: u32 = "40".parse()?;
    Ok(parsed + n)
}

#[retry(initial_backoff = "1ms", max_retries = 4)]
async fn question_mark_async(counter: &AtomicU32) -> Result<u32, AppError> {
    let n = attempt_atomic(counter, 2)?;
    let parsed: u32 = "40".parse()?;
    Ok(parsed + n)
}

/// `return` ends the attempt, not the function.
#[retry(initial_backoff = "1ms")]
fn early_return(counter: &Cell<u32>) -> Result<u32, Flaky> {
    counter.set(counter.get() + 1);
    if counter.get() < 3 {
        return Err(Flaky(counter.get()));
    }
    Ok(counter.get())
}

#[retry(initial_backoff = "1ms")]
async fn early_return_async(counter: &AtomicU32) -> Result<u32, Flaky> {
    if counter.fetch_add(1, Ordering::SeqCst) < 2 {
        return Err(Flaky(0));
    }
    Ok(counter.load(Ordering::SeqCst))
}

/// A closure's own `?` and `return` keep their meaning.
#[retry(initial_backoff = "1ms")]
fn inner_closure(counter: &Cell<u32>) -> Result<Vec<u32>, AppError> {
    let parse = |s: &str| -> Result<u32, std::num::ParseIntError> {
        if s.is_empty() {
            return Ok(0);
        }
        let v: u32 = s.parse()?;
        Ok(v)
    };
    // The closure's error is a value here, not an early exit of the attempt.
    let bad = parse("x");
    assert!(bad.is_err());
    attempt(counter, 1)?;
    Ok(vec![parse("")?, parse("5")?])
}

/// A nested async block's own `?` and `return` keep their meaning.
#[retry(initial_backoff = "1ms")]
async fn inner_async_block(counter: &AtomicU32) -> Result<u32, AppError> {
    let inner = async {
        if counter.load(Ordering::SeqCst) == 100 {
            return Ok::<u32, std::num::ParseIntError>(0);
        }
        let v: u32 = "x".parse()?;
        Ok(v)
    };
    assert!(inner.await.is_err());
    attempt_atomic(counter, 1)?;
    Ok(1)
}

#[test]
fn question_mark_is_retried_and_converts() {
    let _clock = VirtualClock::install();
    let counter = Cell::new(0);
    assert_eq!(question_mark(&counter), Ok(43));
    assert_eq!(counter.get(), 3);
}

#[tokio::test(start_paused = true)]
async fn question_mark_async_is_retried_and_converts() {
    let counter = AtomicU32::new(0);
    assert_eq!(question_mark_async(&counter).await, Ok(43));
}

#[test]
fn return_ends_the_attempt() {
    let _clock = VirtualClock::install();
    let counter = Cell::new(0);
    assert_eq!(early_return(&counter), Ok(3));
}

#[tokio::test(start_paused = true)]
async fn return_ends_the_attempt_async() {
    let counter = AtomicU32::new(0);
    assert_eq!(early_return_async(&counter).await, Ok(3));
}

#[test]
fn closures_in_the_body_keep_their_question_mark() {
    let _clock = VirtualClock::install();
    let counter = Cell::new(0);
    assert_eq!(inner_closure(&counter), Ok(vec![0, 5]));
    assert_eq!(counter.get(), 2);
}

#[tokio::test(start_paused = true)]
async fn async_blocks_in_the_body_keep_their_question_mark() {
    let counter = AtomicU32::new(0);
    assert_eq!(inner_async_block(&counter).await, Ok(1));
    assert_eq!(counter.load(Ordering::SeqCst), 2);
}

// ---- coercions, aliases, attributes ----------------------------------------

trait Shape {
    fn sides(&self) -> u32;
}

struct Square;

impl Shape for Square {
    fn sides(&self) -> u32 {
        4
    }
}

/// `Ok(Box::new(x))` coerces into `Box<dyn Trait>`, as in the plain function.
#[retry(initial_backoff = "1ms")]
fn boxed(counter: &Cell<u32>) -> Result<Box<dyn Shape>, Flaky> {
    attempt(counter, 1)?;
    Ok(Box::new(Square))
}

#[retry(initial_backoff = "1ms")]
async fn boxed_async(counter: &AtomicU32) -> Result<Box<dyn Shape + Send>, Flaky> {
    attempt_atomic(counter, 1)?;
    Ok(Box::new(Square))
}

/// A `Result` alias.
#[retry(initial_backoff = "1ms")]
fn io_alias(counter: &Cell<u32>) -> std::io::Result<u32> {
    attempt(counter, 1).map_err(|_| std::io::Error::other("flaky"))
}

/// Inner attributes at the top of the body, docs and visibility.
#[retry(initial_backoff = "1ms")]
#[must_use = "keep the answer"]
pub fn documented(counter: &Cell<u32>) -> Result<u32, Flaky> {
    #![allow(clippy::needless_return)]
    return attempt(counter, 1);
}

mod private_module {
    use super::*;

    #[retry(initial_backoff = "1ms")]
    pub(crate) fn crate_visible(counter: &Cell<u32>) -> Result<u32, Flaky> {
        attempt(counter, 0)
    }
}

#[test]
fn coercions_in_sync_bodies() {
    let _clock = VirtualClock::install();
    let counter = Cell::new(0);
    assert_eq!(boxed(&counter).map(|s| s.sides()), Ok(4));
}

#[tokio::test(start_paused = true)]
async fn coercions_in_async_bodies() {
    let counter = AtomicU32::new(0);
    assert_eq!(boxed_async(&counter).await.map(|s| s.sides()), Ok(4));
}

#[test]
fn result_alias_inner_attributes_and_visibility() {
    let _clock = VirtualClock::install();
    let counter = Cell::new(0);
    assert_eq!(io_alias(&counter).ok(), Some(2));
    let counter = Cell::new(0);
    assert_eq!(documented(&counter), Ok(2));
    let counter = Cell::new(0);
    assert_eq!(private_module::crate_visible(&counter), Ok(1));
}

// ---- Send --------------------------------------------------------------

fn assert_send<T: Send>(value: T) -> T {
    value
}

#[tokio::test(start_paused = true)]
async fn futures_stay_send_when_the_body_is() {
    let counter = AtomicU32::new(0);
    let mut client = Client::new(0);
    assert_send(free_async(&counter, 0)).await.ok();
    assert_send(client.by_mut_ref_async()).await.ok();
    assert_send(client.by_ref_async(&counter)).await.ok();
    assert_send(generic_async(&1u8, &counter)).await.ok();
    assert_send(impl_trait_ok_async(&counter)).await.ok();
    // Spawning requires Send + 'static.
    let handle = tokio::spawn(async {
        let counter = AtomicU32::new(0);
        free_async(&counter, 1).await
    });
    assert_eq!(handle.await.ok(), Some(Ok(2)));
}

#[test]
fn waits_stay_short_in_these_tests() {
    // The shapes above use a 1 ms first wait; the virtual clock records them.
    let clock = VirtualClock::install();
    let counter = Cell::new(0);
    assert_eq!(free_sync(&counter, 1), Ok(2));
    let waits = clock.waits();
    assert_eq!(waits.len(), 1);
    assert!(waits[0] >= Duration::from_millis(1) && waits[0] <= Duration::from_millis(2));
}

// ---- borrowed and generic error types ----------------------------------------

/// An error that borrows from an argument (not `'static`).
#[retry(initial_backoff = "1ms")]
fn borrowed_error<'a>(message: &'a str, counter: &Cell<u32>) -> Result<u32, &'a str> {
    attempt(counter, 1).map_err(|_| message)
}

/// A generic error type with no bounds at all.
#[retry(initial_backoff = "1ms")]
async fn generic_error<E>(make: impl Fn() -> E, counter: &AtomicU32) -> Result<u32, E> {
    attempt_atomic(counter, 1).map_err(|_| make())
}

#[tokio::test(start_paused = true)]
async fn borrowed_and_generic_error_types() {
    let _clock = VirtualClock::install();
    let message = String::from("busy");
    let counter = Cell::new(0);
    assert_eq!(borrowed_error(&message, &counter), Ok(2));
    let counter = AtomicU32::new(0);
    assert_eq!(generic_error(|| "x", &counter).await.ok(), Some(2));
}
