//! What one call holds of its admission limiter.
//!
//! What one call through the layer holds of its admission limiter between
//! polls ([`AdmissionHold`]), and the slot that says whether a layer has a
//! limiter at all ([`AdmissionSlot`]). A call gives back what it holds
//! exactly once: when the limiter hears each attempt's end, or when the
//! call's future (or its gRPC body) is dropped.

use std::sync::Arc;

use backoff_runtime::__front_end::{AdmissionProgress, Admitting, DefaultWait};
use backoff_runtime::limits::AdmissionLimit;

use crate::layer::{NoAdmission, RetryLayer, WithAdmission};

/// What a call holds of its admission limiter between polls: the attempts
/// it admitted whose end the limiter has not heard, a place in its line,
/// and the call's admission key.
///
/// A call that is dropped gives it back: each open attempt is told as
/// [`Ending::Abandoned`](backoff_runtime::limits::Ending::Abandoned) (or
/// `Panicked` while a panic unwinds), a place in the line with
/// [`AdmissionLimit::withdrawn`].
///
/// ```
/// use backoff_tower::AdmissionHold;
/// assert!(!AdmissionHold::default().holds());
/// ```
#[derive(Default)]
pub struct AdmissionHold {
    /// The limiter, from the call's first question on: the hold gives back
    /// what it holds by itself when it is dropped.
    limit: Option<Arc<dyn AdmissionLimit + Send>>,
    progress: AdmissionProgress,
    /// The attempts the call made, as of the last question.
    attempts: u32,
    /// The call's key, kept from its first question (the drop has no
    /// classification to ask).
    key: Option<Box<str>>,
}

impl core::fmt::Debug for AdmissionHold {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("AdmissionHold")
            .field("progress", &self.progress)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl Drop for AdmissionHold {
    fn drop(&mut self) {
        if let Some(limit) = self.limit.take() {
            if self.progress.holds() {
                let progress = core::mem::take(&mut self.progress);
                drop(
                    Admitting::of_dyn(&*limit, DefaultWait::CLOCK)
                        .after(self.attempts)
                        .resuming(progress)
                        .keyed(self.key.as_deref()),
                );
            }
        }
    }
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

    /// Runs `ask` with the call's view of `slot`'s limiter (its key read by
    /// `key` the first time), after `attempts` attempts, and keeps what it
    /// then holds.
    pub(crate) fn with<'k, R>(
        &mut self,
        slot: &WithAdmission,
        attempts: u32,
        key: impl FnOnce() -> Option<&'k str>,
        ask: impl FnOnce(&mut Admitting<'_>) -> R,
    ) -> R {
        let limit = self.limit.get_or_insert_with(|| slot.shared());
        if self.key.is_none() {
            self.key = key().map(Box::from);
        }
        let mut admitting = Admitting::of_dyn(&**limit, DefaultWait::CLOCK)
            .after(attempts)
            .resuming(self.progress)
            .keyed(self.key.as_deref());
        let out = ask(&mut admitting);
        self.progress = admitting.hand_over();
        self.attempts = attempts;
        out
    }
}

/// Whether a layer has an admission limiter, and what each of its calls
/// then holds of it: nothing for [`NoAdmission`] (its checks compile
/// away), an [`AdmissionHold`] for [`WithAdmission`], and for a
/// [`RetryLayer`] what its admission key's slot holds.
///
/// ```
/// use backoff_tower::{AdmissionSlot, NoAdmission};
/// fn takes<A: AdmissionSlot>(_: A) {}
/// takes(NoAdmission);
/// ```
pub trait AdmissionSlot: Clone + Send + Sync + 'static {
    /// What one call holds of the limiter between polls.
    type Held: Default + Send + Sync + 'static;

    /// The slot and the call's hold, when the layer has a limiter.
    fn hold<'h>(&'h self, held: &'h mut Self::Held) -> Option<(&'h WithAdmission, &'h mut AdmissionHold)>;
}

impl AdmissionSlot for NoAdmission {
    type Held = ();

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn hold<'h>(&'h self, _: &'h mut ()) -> Option<(&'h WithAdmission, &'h mut AdmissionHold)> {
        None
    }
}

impl AdmissionSlot for WithAdmission {
    type Held = AdmissionHold;

    #[inline]
    fn hold<'h>(&'h self, held: &'h mut AdmissionHold) -> Option<(&'h WithAdmission, &'h mut AdmissionHold)> {
        Some((self, held))
    }
}

impl<C, T, A> AdmissionSlot for RetryLayer<C, T, A>
where
    C: Clone + Send + Sync + 'static,
    T: Clone + Send + Sync + 'static,
    A: AdmissionSlot,
{
    type Held = A::Held;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn hold<'h>(&'h self, held: &'h mut A::Held) -> Option<(&'h WithAdmission, &'h mut AdmissionHold)> {
        self.admission.hold(held)
    }
}
