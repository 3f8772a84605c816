//! [`Keyed`]: one admission limiter per key (a host, a gRPC method), made
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
/// use backoff_runtime::{Admission, AdmissionLimit, AdmissionRequest, AttemptEnd, CircuitBreaker, Keyed};
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
pub struct Keyed<L> {
    make: fn(&str) -> L,
    limiters: RwLock<BTreeMap<Box<str>, Arc<L>>>,
    name: Option<&'static str>,
}

impl<L> fmt::Debug for Keyed<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyed")
            .field("keys", &self.len())
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<L> Keyed<L> {
    /// No key yet; `make` builds the limiter of each new key, given the
    /// key. `const`, so it lives in a `static`.
    ///
    /// ```
    /// use backoff_runtime::{Cooldown, Keyed};
    /// static PER_HOST: Keyed<Cooldown> = Keyed::new(|_| Cooldown::new());
    /// assert!(PER_HOST.is_empty());
    /// ```
    #[must_use]
    pub const fn new(make: fn(&str) -> L) -> Self {
        Keyed {
            make,
            limiters: RwLock::new(BTreeMap::new()),
            name: None,
        }
    }

    /// Names it: the name in its refusals ([`Refused::limiter`](crate::Refused::limiter)).
    /// The limiters it keeps are not asked for theirs.
    ///
    /// ```
    /// use backoff_runtime::{Cooldown, Keyed};
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
    /// use backoff_runtime::{Cooldown, Keyed};
    /// assert_eq!(Keyed::new(|_| Cooldown::new()).get_name(), None);
    /// ```
    #[must_use]
    pub const fn get_name(&self) -> Option<&'static str> {
        self.name
    }

    /// The limiter of `key`, made now if the key is new.
    ///
    /// ```
    /// use backoff_runtime::{CircuitBreaker, CircuitState, Keyed};
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
    /// use backoff_runtime::{Cooldown, Keyed};
    /// assert_eq!(Keyed::new(|_| Cooldown::new()).len(), 0);
    /// ```
    #[must_use]
    pub fn len(&self) -> usize {
        self.limiters.read().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether it has seen no key.
    ///
    /// ```
    /// use backoff_runtime::{Cooldown, Keyed};
    /// assert!(Keyed::new(|_| Cooldown::new()).is_empty());
    /// ```
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<L: AdmissionLimit + Send> AdmissionLimit for Keyed<L> {
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
    use crate::{CircuitBreaker, CircuitState};
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
}
