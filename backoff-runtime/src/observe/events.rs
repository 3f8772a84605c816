//! What `on_retry`, `on_give_up` and `on_success` are told.

use core::time::Duration;

use crate::observe::stop::StopReason;

/// Writes an event: the struct, its fields `pub(crate)`, and for each field
/// a `#[must_use]` getter of the same name with the field's doc and a doc
/// example that calls it (and checks the type it returns).
macro_rules! event_struct {
    (
        $(#[$attr:meta])*
        pub struct $event:ident {
            $( $(#[doc = $doc:literal])* $field:ident: $type:ty, )*
        }
    ) => {
        $(#[$attr])*
        #[derive(Clone, Debug, PartialEq, Eq)]
        #[non_exhaustive]
        pub struct $event {
            $( pub(crate) $field: $type, )*
        }

        impl $event {
            $(
                $(#[doc = $doc])*
                #[doc = ""]
                #[doc = " ```"]
                #[doc = " # use backoff_runtime::StopReason; use std::time::Duration;"]
                #[doc = concat!(" # fn f(e: &backoff_runtime::", stringify!($event), ") -> ", stringify!($type), " {")]
                #[doc = concat!(" e.", stringify!($field), "()")]
                #[doc = " # }"]
                #[doc = " ```"]
                #[must_use]
                pub fn $field(&self) -> $type {
                    self.$field
                }
            )*
        }
    };
}

event_struct! {
    /// A retry about to happen: passed to `on_retry` before each wait.
    ///
    /// ```
    /// use backoff_runtime::{Jitter, Policy, RetryEvent};
    /// use std::time::Duration;
    ///
    /// let seen = std::cell::RefCell::new(Vec::new());
    /// let policy = Policy::new().max_retries(2).jitter(Jitter::None);
    /// let _ = policy
    ///     .retry(|| Err::<(), _>("down"))
    ///     .on_retry(|_, event: &RetryEvent| seen.borrow_mut().push((event.attempt(), event.wait(), event.retries_left())))
    ///     .sleep(|_| {})
    ///     .call();
    /// assert_eq!(seen.into_inner(), [(1, Duration::from_secs(1), 1), (2, Duration::from_secs(2), 0)]);
    /// ```
    pub struct RetryEvent {
        /// The name of the retried function.
        function: &'static str,
        /// The 1-based number of the attempt that failed.
        attempt: u32,
        /// The wait chosen before the next attempt.
        wait: Duration,
        /// Time since the first call began (monotonic).
        elapsed: Duration,
        /// Retries still allowed after this one.
        retries_left: u32,
        /// Whether the wait came from the server's hint (`retry_after`).
        hinted: bool,
        /// The failed attempt's gRPC status code (`tonic::Code as i32`):
        /// set for a `tonic::Status` error and in `backoff-grpc`'s layer,
        /// `None` for every other error.
        grpc_status: Option<i32>,
    }
}

event_struct! {
    /// The end of the retries: passed to `on_give_up` once, with the error the
    /// caller gets.
    ///
    /// ```
    /// use backoff_runtime::{GiveUp, Policy, StopReason};
    ///
    /// let reasons = std::cell::RefCell::new(Vec::new());
    /// let _ = Policy::new()
    ///     .max_retries(1)
    ///     .retry(|| Err::<(), _>("down"))
    ///     .on_give_up(|_, event: &GiveUp| reasons.borrow_mut().push((event.reason(), event.attempts())))
    ///     .sleep(|_| {})
    ///     .call();
    /// assert_eq!(reasons.into_inner(), [(StopReason::Exhausted, 2)]);
    /// ```
    pub struct GiveUp {
        /// The name of the retried function.
        function: &'static str,
        /// How many attempts were made (the first call included).
        attempts: u32,
        /// Time since the first call began (monotonic).
        elapsed: Duration,
        /// Retries that were still allowed when the loop stopped.
        retries_left: u32,
        /// Why the loop stopped.
        reason: StopReason,
        /// The last attempt's gRPC status code (`tonic::Code as i32`): set
        /// for a `tonic::Status` error and in `backoff-grpc`'s layer, `None`
        /// for every other error.
        grpc_status: Option<i32>,
        /// In a hedged call, its attempts after the first, whether the
        /// hedge delay or a failure started them: `attempts - 1` (0 for a
        /// call that does not hedge).
        hedges: u32,
    }
}

event_struct! {
    /// A call that succeeded: passed to `on_success` once, when the function
    /// returns its `Ok` value (never when it gives up).
    ///
    /// ```
    /// use backoff_runtime::{Policy, Success};
    ///
    /// let seen = std::cell::Cell::new(0);
    /// let mut calls = 0;
    /// let _ = Policy::new()
    ///     .retry(|| { calls += 1; if calls < 3 { Err("busy") } else { Ok(()) } })
    ///     .on_success(|event: &Success| seen.set(event.attempts()))
    ///     .sleep(|_| {})
    ///     .call();
    /// assert_eq!(seen.get(), 3);
    /// ```
    pub struct Success {
        /// The name of the retried function.
        function: &'static str,
        /// How many attempts the call took (1: it succeeded at once).
        attempts: u32,
        /// Time the call took, from its start to the end of the successful
        /// attempt (monotonic).
        elapsed: Duration,
        /// In a hedged call, its attempts after the first, whether the
        /// hedge delay or a failure started them: `attempts - 1` (0 for a
        /// call that does not hedge).
        hedges: u32,
    }
}

impl Success {
    /// Whether the call needed at least one retry.
    ///
    /// ```
    /// # fn f(e: &backoff_runtime::Success) -> bool {
    /// e.retried()
    /// # }
    /// ```
    #[must_use]
    pub fn retried(&self) -> bool {
        self.attempts > 1
    }
}
