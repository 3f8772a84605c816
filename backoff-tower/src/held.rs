//! What one call through the layer holds of its admission limiter between
//! polls ([`AdmissionHold`]), and the slot that says whether a layer has a
//! limiter at all ([`AdmissionSlot`]). A call gives back what it holds
//! exactly once: when the limiter hears each attempt's end, or when the
//! call's future (or its gRPC body) is dropped.

use backoff_runtime::__front_end::{ASYNC_CLOCK, AdmissionProgress, Admitting};
use backoff_runtime::AdmissionLimit;

use crate::layer::{NoAdmission, WithAdmission};

/// What a call holds of its admission limiter between polls: the attempts
/// it admitted whose end the limiter has not heard, a place in its line,
/// and the call's admission key.
///
/// A call that is dropped gives it back: each open attempt is told as
/// [`Ending::Abandoned`](backoff_runtime::Ending::Abandoned) (or
/// `Panicked` while a panic unwinds), a place in the line with
/// [`AdmissionLimit::withdrawn`].
///
/// ```
/// use backoff_tower::AdmissionHold;
/// assert!(!AdmissionHold::default().holds());
/// ```
#[derive(Debug, Default)]
pub struct AdmissionHold {
    progress: AdmissionProgress,
    /// The call's key, kept from its first question (the drop has no
    /// classification to ask).
    key: Option<Box<str>>,
}

impl AdmissionHold {
    /// Whether the call owes its limiter a word: an admitted attempt whose
    /// end it has not heard, or a place in its line.
    ///
    /// ```
    /// assert!(!backoff_tower::AdmissionHold::default().holds());
    /// ```
    #[must_use]
    pub fn holds(&self) -> bool {
        self.progress.holds()
    }

    /// Runs `ask` with the call's view of `limit` (its key read by `key`
    /// the first time), after `attempts` attempts, and keeps what it then
    /// holds.
    pub(crate) fn with<'k, R>(
        &mut self,
        limit: &dyn AdmissionLimit,
        attempts: u32,
        key: impl FnOnce() -> Option<&'k str>,
        ask: impl FnOnce(&mut Admitting<'_>) -> R,
    ) -> R {
        if self.key.is_none() {
            self.key = key().map(Box::from);
        }
        let mut admitting = Admitting::of_dyn(limit, ASYNC_CLOCK)
            .after(attempts)
            .resuming(self.progress)
            .keyed(self.key.as_deref());
        let out = ask(&mut admitting);
        self.progress = admitting.hand_over();
        out
    }

    /// Gives back what the call holds to `limit`, after `attempts`
    /// attempts: the call is dropped.
    fn give_back(&mut self, limit: &dyn AdmissionLimit, attempts: u32) {
        let progress = core::mem::take(&mut self.progress);
        drop(
            Admitting::of_dyn(limit, ASYNC_CLOCK)
                .after(attempts)
                .resuming(progress)
                .keyed(self.key.as_deref()),
        );
    }
}

/// Whether a layer has an admission limiter, and what each of its calls
/// then holds of it: nothing for [`NoAdmission`] (its checks compile
/// away), an [`AdmissionHold`] for [`WithAdmission`].
///
/// ```
/// use backoff_tower::{AdmissionSlot, NoAdmission};
/// assert!(NoAdmission.limiter().is_none());
/// ```
pub trait AdmissionSlot: Clone + Send + Sync + 'static {
    /// What one call holds of the limiter between polls.
    type Held: Default + Send + Sync + 'static;

    /// The limiter, when the layer has one.
    fn limiter(&self) -> Option<&dyn AdmissionLimit>;

    /// The call's hold, when the layer has a limiter.
    fn hold(held: &mut Self::Held) -> Option<&mut AdmissionHold>;
}

impl AdmissionSlot for NoAdmission {
    type Held = ();

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn limiter(&self) -> Option<&dyn AdmissionLimit> {
        None
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn hold(_: &mut ()) -> Option<&mut AdmissionHold> {
        None
    }
}

impl AdmissionSlot for WithAdmission {
    type Held = AdmissionHold;

    #[inline]
    fn limiter(&self) -> Option<&dyn AdmissionLimit> {
        Some(self.limit())
    }

    #[inline]
    fn hold(held: &mut AdmissionHold) -> Option<&mut AdmissionHold> {
        Some(held)
    }
}

/// Gives back what a call of `slot`'s layer holds in `held`, after
/// `attempts` attempts: the call (or its body) was dropped. Nothing to do
/// without a limiter, or when the limiter heard every end.
#[cfg_attr(not(debug_assertions), inline(always))]
pub(crate) fn give_back<A: AdmissionSlot>(slot: &A, held: &mut A::Held, attempts: u32) {
    if let (Some(limit), Some(hold)) = (slot.limiter(), A::hold(held)) {
        if hold.holds() {
            hold.give_back(limit, attempts);
        }
    }
}
