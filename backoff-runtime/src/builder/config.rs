//! The keys a `Retry` was given, as one type.
//!
//! The keys a [`Retry`](crate::Retry) was given so far, as one type
//! parameter, and the call's identity.

use core::marker::PhantomData;
use core::time::Duration;

use crate::builder::owned::{NoHooks, OwnedHooks};
use crate::limits::admission::RefusedResult;
use crate::run::hooks::Hooks;
use crate::time::sleep::DefaultSleep;

use super::action::NoAction;

/// The call's identity apart from its hooks: its name, and whether failures
/// a retried call below gave up on are retried.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Identity {
    pub(crate) name: &'static str,
    pub(crate) retries_nested: bool,
}

impl Identity {
    /// `owned` lent as [`Hooks`], with this identity.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn lend<'h, T, E, O, H: OwnedHooks<T, E, E, Out = O>>(&self, owned: &'h H) -> Hooks<'h, T, E, O> {
        owned
            .lend(Hooks::new())
            .name(self.name)
            .retry_nested(self.retries_nested)
    }
}

/// The result that stands for an attempt that timed out.
pub(crate) type StandIn<T, E> = fn() -> Result<T, E>;

/// The keys given to a [`Retry`](crate::Retry) so far: the kind of operation, its
/// result's types, the outcome its observers see (`O`: the error, or after
/// `retry_if_ok` the whole result), the hooks it owns, the sleep, the
/// action and the timeout. It appears as `Retry`'s last type parameter and
/// is never written in user code.
pub struct Config<K, T, E, O, H, S, A> {
    pub(crate) hooks: H,
    pub(crate) sleep: S,
    pub(crate) action: A,
    /// The keys whose types never change as keys are added.
    pub(crate) call: CallKeys<T, E>,
    pub(crate) _kind: PhantomData<fn() -> (K, O)>,
}

/// The keys of a [`Config`] that keep their types as hooks, a sleep or an
/// action are added: what names the call and what ends an attempt early.
pub(crate) struct CallKeys<T, E> {
    pub(crate) identity: Identity,
    /// Per-attempt limit (async) and the result of a timed-out attempt.
    pub(crate) timeout: Option<(Duration, StandIn<T, E>)>,
    /// With `admission`: the result of a refused attempt.
    pub(crate) refused: Option<RefusedResult<Result<T, E>>>,
}

impl<K, T, E, O, H, S: core::fmt::Debug, A> core::fmt::Debug for Config<K, T, E, O, H, S, A> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Config")
            .field("name", &self.call.identity.name)
            .field("sleep", &self.sleep)
            .field("timeout", &self.call.timeout.map(|(limit, _)| limit))
            .finish_non_exhaustive()
    }
}

/// The keys of a fresh [`Retry`].
pub(crate) type Fresh<K, T, E> = Config<K, T, E, E, NoHooks, DefaultSleep, NoAction>;

impl<K, T, E> Fresh<K, T, E> {
    pub(crate) fn new() -> Self {
        Config {
            hooks: NoHooks,
            sleep: DefaultSleep,
            action: NoAction,
            call: CallKeys {
                identity: Identity {
                    name: "retry",
                    retries_nested: false,
                },
                timeout: None,
                refused: None,
            },
            _kind: PhantomData,
        }
    }
}
