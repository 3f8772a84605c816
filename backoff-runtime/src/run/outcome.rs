//! What the decision sees of a failed attempt.
//!
//! What the decision and the observers see of an attempt that did not
//! succeed ([`Outcome`]), and a result judged by `retry_if_ok` where the
//! expansion does it ([`Judged`]).

use core::fmt::{self, Debug};

/// What the decision and the observers see of an attempt that did not
/// succeed: the error `E` (the default), or with `retry_if_ok` the whole
/// `Result<T, E>`, whose value may be pending.
pub trait Outcome<T, E>: Sized {
    /// `Ok` with the value to return, or `Err` with the outcome to decide
    /// on (`retry_if_ok`, when set, says which values are pending).
    fn judge(result: Result<T, E>, retry_if_ok: Option<&dyn Fn(&T) -> bool>) -> Result<T, Self>;
    /// The outcome seen as a pending value or an error.
    fn view(&self) -> Result<&T, &E>;
    /// The outcome returned as the call's result.
    fn into_result(self) -> Result<T, E>;
}

impl<T, E> Outcome<T, E> for E {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn judge(result: Result<T, E>, _retry_if_ok: Option<&dyn Fn(&T) -> bool>) -> Result<T, E> {
        result
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn view(&self) -> Result<&T, &E> {
        Err(self)
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn into_result(self) -> Result<T, E> {
        Err(self)
    }
}

impl<T, E> Outcome<T, E> for Result<T, E> {
    #[inline]
    fn judge(result: Result<T, E>, retry_if_ok: Option<&dyn Fn(&T) -> bool>) -> Result<T, Self> {
        match result {
            Ok(value) if !retry_if_ok.is_some_and(|pending| pending(&value)) => Ok(value),
            other => Err(other),
        }
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn view(&self) -> Result<&T, &E> {
        self.as_ref()
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn into_result(self) -> Result<T, E> {
        self
    }
}

/// A result that `retry_if_ok` judged where the expansion does it, on its
/// success path: a value that is not pending, or what the loop decides on,
/// with the predicate that judged it (lent to the loop, so it is written,
/// checked and evaluated once).
pub enum Judged<'h, T, E> {
    /// Not pending: the call's value.
    Done(T),
    /// A pending value or an error, and the `retry_if_ok` that judged it.
    Again(Result<T, E>, &'h dyn Fn(&T) -> bool),
}

impl<T, E> Debug for Judged<'_, T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Judged::Done(_) => "Judged::Done(..)",
            Judged::Again(..) => "Judged::Again(..)",
        })
    }
}

/// Judges `result` by `retry_if_ok`: [`Judged::Done`] for a value that is
/// not pending.
///
/// ```
/// use backoff_runtime::__private::{Judged, judged};
///
/// let running = |state: &&str| *state == "running";
/// assert!(matches!(judged(Ok::<_, ()>("done"), &running), Judged::Done("done")));
/// assert!(matches!(judged(Ok::<_, ()>("running"), &running), Judged::Again(Ok("running"), _)));
/// ```
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn judged<'h, T, E>(result: Result<T, E>, retry_if_ok: &'h dyn Fn(&T) -> bool) -> Judged<'h, T, E> {
    match result {
        Ok(value) if !retry_if_ok(&value) => Judged::Done(value),
        other => Judged::Again(other, retry_if_ok),
    }
}
