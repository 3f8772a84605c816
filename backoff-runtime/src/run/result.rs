//! [`RetryResult`]: what `#[retry]` requires of a function's return type.

/// Implemented by `Result<T, E>` (and so by every alias of it, such as
/// `std::io::Result<T>` or `anyhow::Result<T>`): the return type `#[retry]`
/// needs, since it must tell success from failure.
///
/// ```
/// use backoff_runtime::bounds::RetryResult;
///
/// let r: std::io::Result<u8> = Ok(1);
/// assert_eq!(r.into_result().ok(), Some(1));
/// ```
#[diagnostic::on_unimplemented(
    message = "`#[retry]` needs a function that returns a `Result`, but it returns `{Self}`",
    label = "this is not a `Result`",
    note = "retrying needs to tell success from failure: return `Result<T, E>` or an alias of it such as `std::io::Result<T>`"
)]
pub trait RetryResult: Sized {
    /// The success type.
    type Ok;
    /// The error type: what `retry_if` and the hooks look at.
    type Err;
    /// Converts into a plain `Result`.
    fn into_result(self) -> Result<Self::Ok, Self::Err>;
    /// Converts back from a plain `Result`.
    fn from_result(result: Result<Self::Ok, Self::Err>) -> Self;
}

impl<T, E> RetryResult for Result<T, E> {
    type Ok = T;
    type Err = E;

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn into_result(self) -> Result<T, E> {
        self
    }

    #[cfg_attr(not(debug_assertions), inline(always))]
    fn from_result(result: Result<T, E>) -> Self {
        result
    }
}

/// The result standing for a timed-out attempt, as a function pointer: the
/// `From<Elapsed>` bound is checked here, once, so a missing impl is one
/// error on the `timeout` key.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn timed_out_result<R>() -> fn() -> R
where
    R: RetryResult,
    R::Err: crate::time::timeout::FromElapsed,
{
    || R::from_result(Err(<R::Err as crate::time::timeout::FromElapsed>::from_elapsed()))
}

/// The result standing for an attempt the `admission` limit refused, as a
/// function pointer: the `From<Refused>` bound is checked here, once, so a
/// missing impl is one error on the `admission` key.
#[cfg_attr(not(debug_assertions), inline(always))]
pub fn refused_result<R>() -> crate::limits::admission::RefusedResult<R>
where
    R: RetryResult,
    R::Err: crate::limits::admission::FromRefused,
{
    |refused| {
        R::from_result(Err(<R::Err as crate::limits::admission::FromRefused>::from_refused(
            refused,
        )))
    }
}
