//! `Keyed`: one admission limiter per key.
//!
//! One admission limiter per key (a host, a gRPC method), made
//! at the key's first use.

use core::fmt;
use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};

use crate::limits::admission_limit::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd};

/// One admission limiter per key, so that one bad backend does not shut
/// the calls to every other.
///
/// The front end says each call's key: the tower layer its request's host
/// (the URI's authority, else its `Host` header), the gRPC layer its method
/// (`/package.Service/Method`). The first time a key is seen, `make` builds
/// its limiter. The attribute and the builder give no key: their calls
/// share the limiter of the empty key.
///
/// Keys are kept for the life of the `Keyed`: a client that calls an
/// unbounded set of hosts should key by something bounded.
///
/// ```
/// use backoff_runtime::limits::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, CircuitBreaker, Keyed};
/// use std::time::{Duration, Instant};
///
/// static PER_HOST: Keyed<CircuitBreaker> = Keyed::new(|_host| CircuitBreaker::new().consecutive_failures(1));
///
/// let now = Instant::now();
/// let ask = |host| PER_HOST.admit(AdmissionRequest::new(now, 1, Duration::ZERO).with_key(Some(host)));
/// PER_HOST.observed(AttemptEnd::new(now, true).with_key(Some("down.example.com")));
/// assert!(matches!(ask("down.example.com"), Admission::Shut(_)));
/// assert_eq!(ask("up.example.com"), Admission::Go);
/// ```
pub struct Keyed<L, F = fn(&str) -> L> {
    /// What builds the limiter of a new key.
    make: F,
    limiters: RwLock<BTreeMap<Box<str>, Arc<L>>>,
    name: Option<&'static str>,
}

impl<L, F: Fn(&str) -> L> fmt::Debug for Keyed<L, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyed")
            .field("keys", &self.len())
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<L, F: Fn(&str) -> L> Keyed<L, F> {
    /// No key yet; `make` builds the limiter of each new key, given the
    /// key.
    ///
    /// `make` is any closure: it may capture what it builds from, such as
    /// a threshold read at start-up. The method is `const`, so a `Keyed`
    /// lives in a `static`. A `static`'s type, `Keyed<L>`, holds a `fn`: a
    /// function, or a closure that captures nothing.
    ///
    /// ```
    /// use backoff_runtime::limits::{Cooldown, Keyed};
    /// static PER_HOST: Keyed<Cooldown> = Keyed::new(|_| Cooldown::new());
    /// assert!(PER_HOST.is_empty());
    /// ```
    ///
    /// A closure that captures makes a `Keyed` of its own type:
    ///
    /// ```
    /// use backoff_runtime::limits::{CircuitBreaker, Keyed};
    ///
    /// let failures: u32 = "5".parse().unwrap_or(3); // read from configuration
    /// let per_host = Keyed::new(move |_host: &str| CircuitBreaker::new().consecutive_failures(failures));
    /// assert_eq!(per_host.get("api.example.com").get_consecutive_failures(), Some(5));
    /// ```
    #[must_use]
    pub const fn new(make: F) -> Self {
        Keyed {
            make,
            limiters: RwLock::new(BTreeMap::new()),
            name: None,
        }
    }

    /// Names it: the name in its refusals ([`Refused::limiter`](crate::limits::Refused::limiter)).
    /// The limiters it keeps are not asked for theirs.
    ///
    /// ```
    /// use backoff_runtime::limits::{Cooldown, Keyed};
    /// let keyed = Keyed::new(|_| Cooldown::new()).name("hosts");
    /// assert_eq!(keyed.get_name(), Some("hosts"));
    /// ```
    #[must_use]
    pub const fn name(mut self, name: &'static str) -> Self {
        self.name = Some(name);
        self
    }

    /// Its name, if it has one.
    ///
    /// ```
    /// use backoff_runtime::limits::{Cooldown, Keyed};
    /// assert_eq!(Keyed::new(|_| Cooldown::new()).get_name(), None);
    /// ```
    #[must_use]
    pub const fn get_name(&self) -> Option<&'static str> {
        self.name
    }

    /// The limiter of `key`, made now if the key is new.
    ///
    /// ```
    /// use backoff_runtime::limits::{CircuitBreaker, CircuitState, Keyed};
    /// let keyed = Keyed::new(|_| CircuitBreaker::new());
    /// assert_eq!(keyed.get("api.example.com").state(), CircuitState::Closed);
    /// assert_eq!(keyed.len(), 1);
    /// ```
    pub fn get(&self, key: &str) -> Arc<L> {
        if let Some(limiter) = self.limiters.read().unwrap_or_else(PoisonError::into_inner).get(key) {
            return Arc::clone(limiter);
        }
        let mut limiters = self.limiters.write().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(limiters.entry(key.into()).or_insert_with(|| Arc::new((self.make)(key))))
    }

    /// How many keys it has seen.
    ///
    /// ```
    /// use backoff_runtime::limits::{Cooldown, Keyed};
    /// assert_eq!(Keyed::new(|_| Cooldown::new()).len(), 0);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.limiters.read().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether it has seen no key.
    ///
    /// ```
    /// use backoff_runtime::limits::{Cooldown, Keyed};
    /// assert!(Keyed::new(|_| Cooldown::new()).is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<L: AdmissionLimit + Send, F: Fn(&str) -> L + Sync> AdmissionLimit for Keyed<L, F> {
    fn admit(&self, request: AdmissionRequest<'_>) -> Admission {
        self.get(request.key().unwrap_or_default()).admit(request)
    }

    fn observed(&self, end: AttemptEnd<'_>) {
        self.get(end.key().unwrap_or_default()).observed(end);
    }

    fn withdrawn(&self, waiter: AdmissionRequest<'_>) {
        self.get(waiter.key().unwrap_or_default()).withdrawn(waiter);
    }

    fn name(&self) -> Option<&'static str> {
        self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{CircuitBreaker, CircuitState};
    use std::time::{Duration, Instant};

    #[test]
    fn each_key_has_its_own_limiter_made_once() {
        let keyed = Keyed::new(|_| CircuitBreaker::new().consecutive_failures(2));
        let now = Instant::now();
        let fail = |key| keyed.observed(AttemptEnd::new(now, true).with_key(key));
        fail(Some("a"));
        fail(Some("b"));
        assert_eq!(keyed.get("a").state(), CircuitState::Closed);
        fail(Some("a"));
        assert_eq!(keyed.get("a").state(), CircuitState::Open);
        assert_eq!(keyed.get("b").state(), CircuitState::Closed);
        let ask = |key| keyed.admit(AdmissionRequest::new(now, 1, Duration::ZERO).with_key(key));
        assert!(matches!(ask(Some("a")), Admission::Shut(_)));
        assert_eq!(ask(Some("b")), Admission::Go);
        // No key: the empty key's limiter.
        assert_eq!(ask(None), Admission::Go);
        assert_eq!(keyed.len(), 3);
        assert!(Arc::ptr_eq(&keyed.get("a"), &keyed.get("a")));
    }

    #[test]
    fn a_capturing_closure_builds_each_key_s_limiter_from_what_it_captured() {
        // A threshold read at run time, and the keys each closure saw.
        let threshold: u32 = std::hint::black_box("3").parse().unwrap();
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        let keyed = Keyed::new(move |key: &str| {
            record.lock().unwrap().push(key.to_owned());
            CircuitBreaker::new().consecutive_failures(threshold)
        })
        .name("hosts");
        let now = Instant::now();
        for _ in 0..3 {
            keyed.observed(AttemptEnd::new(now, true).with_key(Some("down")));
        }
        keyed.observed(AttemptEnd::new(now, true).with_key(Some("up")));
        assert_eq!(
            keyed.get("down").state(),
            CircuitState::Open,
            "3 in a row, as configured"
        );
        assert_eq!(keyed.get("up").state(), CircuitState::Closed);
        assert_eq!(keyed.get("up").get_consecutive_failures(), Some(3));
        assert_eq!(*seen.lock().unwrap(), ["down", "up"], "made once per key");
        assert_eq!(format!("{keyed:?}"), r#"Keyed { keys: 2, name: Some("hosts"), .. }"#);
    }

    #[test]
    fn a_waiter_that_leaves_is_told_to_its_key_s_limiter() {
        use std::sync::atomic::{AtomicU32, Ordering};
        /// Counts the waiters that left.
        #[derive(Default)]
        struct Left(AtomicU32);
        impl AdmissionLimit for Left {
            fn admit(&self, _: AdmissionRequest<'_>) -> Admission {
                Admission::Go
            }
            fn withdrawn(&self, _: AdmissionRequest<'_>) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        let keyed: Keyed<Left> = Keyed::new(|_| Left::default());
        let waiter = AdmissionRequest::new(Instant::now(), 1, Duration::ZERO);
        keyed.withdrawn(waiter.with_key(Some("a")));
        assert_eq!(keyed.get("a").0.load(Ordering::Relaxed), 1);
        assert_eq!(keyed.get("b").0.load(Ordering::Relaxed), 0);
        assert_eq!((keyed.get_name(), AdmissionLimit::name(&keyed)), (None, None));
        assert!(!keyed.is_empty());
    }
}
