//! How the events see what failed.
//!
//! The expansion's autoref probe of the error's type for its `Debug` form and
//! OpenTelemetry's attributes.

use core::fmt::{self, Debug};
use core::marker::PhantomData;

#[cfg(feature = "tracing")]
use crate::observe::conventions::{Conventions, SemanticConventions};
use crate::observe::trace::ReportFn;

/// How the events see what failed, found by autoref specialisation on its
/// concrete type where the expansion knows it, with no bound on it:
/// `(&&&&Probe::of(&error)).report()` is the report function that shows its
/// `Debug` form and OpenTelemetry's attributes when the type has them, and
/// leaves out what it lacks.
///
/// ```
/// use backoff_runtime::__private::probe::Probe;
/// use backoff_runtime::__private::probe::{ProbeBoth as _, ProbeConventions as _, ProbeDebug as _, ProbeNeither as _};
///
/// let error = String::from("busy");
/// let report = (&&&&Probe::of(&error)).report();
/// let mut reported = false;
/// report(&error, &mut |_debug, _conventions| reported = true);
/// assert!(reported, "the events are given what the type shows (with `tracing`: its Debug form)");
/// ```
pub struct Probe<D>(PhantomData<fn(&D)>);

impl<D> Debug for Probe<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Probe")
    }
}

impl<D> Probe<D> {
    /// The probe of `value`'s type.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn of(_value: &D) -> Self {
        Probe(PhantomData)
    }

    /// Without the `tracing` feature no event shows what failed: the
    /// report is empty, and this inherent method answers the lookup before
    /// any of the probe's traits is asked (they have no impls then).
    #[cfg(not(feature = "tracing"))]
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub fn report(&self) -> ReportFn<D> {
        |_, sink| sink(None, None)
    }
}

// The probe's answers, most specific first: the expansion brings them
// into scope (anonymously, from `__private::probe`) and calls `report` on
// `&&&&Probe`; the method lookup tries `&&&Probe` (both), `&&Probe`
// (`Debug`), `&Probe` (attributes) and `Probe` (neither) in that order and
// takes the first whose bounds hold.

/// `Debug` and attributes. `P` is the protocol parameter of
/// [`SemanticConventions`], inferred from the one impl the type has.
pub trait ProbeBoth<D, P> {
    /// The report function.
    fn report(&self) -> ReportFn<D>;
}

#[cfg(feature = "tracing")]
impl<D: Debug + SemanticConventions<P>, P> ProbeBoth<D, P> for &&&Probe<D> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn report(&self) -> ReportFn<D> {
        |error, sink| sink(Some(error), Some(&Conventions::of::<P, D>(error)))
    }
}

/// `Debug` only.
pub trait ProbeDebug<D> {
    /// The report function.
    fn report(&self) -> ReportFn<D>;
}

#[cfg(feature = "tracing")]
impl<D: Debug> ProbeDebug<D> for &&Probe<D> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn report(&self) -> ReportFn<D> {
        |error, sink| sink(Some(error), None)
    }
}

/// Attributes only (`P` as in [`ProbeBoth`]).
pub trait ProbeConventions<D, P> {
    /// The report function.
    fn report(&self) -> ReportFn<D>;
}

#[cfg(feature = "tracing")]
impl<D: SemanticConventions<P>, P> ProbeConventions<D, P> for &Probe<D> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn report(&self) -> ReportFn<D> {
        |error, sink| sink(None, Some(&Conventions::of::<P, D>(error)))
    }
}

/// Neither.
pub trait ProbeNeither<D> {
    /// The report function.
    fn report(&self) -> ReportFn<D>;
}

#[cfg(feature = "tracing")]
impl<D> ProbeNeither<D> for Probe<D> {
    #[cfg_attr(not(debug_assertions), inline(always))]
    fn report(&self) -> ReportFn<D> {
        |_, sink| sink(None, None)
    }
}
