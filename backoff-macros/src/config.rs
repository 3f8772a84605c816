//! Raw arguments -> validated configuration: defaults, ranges and cross-field
//! rules. Only values the user wrote are checked against each other; a
//! default never causes an error by itself.

use core::time::Duration;

use syn::Expr;

use crate::args::{JitterArg, RawArgs};
use crate::duration::display;
use crate::errors::Errors;

/// The seed's defaults, as documented on the attribute.
pub(crate) const DEFAULT_INITIAL_BACKOFF: Duration = Duration::from_secs(1);
pub(crate) const DEFAULT_MAX_BACKOFF: Duration = Duration::from_secs(32);

/// A value with the span of the key that set it.
pub(crate) struct KeySpanned<T> {
    pub(crate) value: T,
    pub(crate) span: proc_macro2::Span,
}

/// What validation needs to know about the annotated function.
pub(crate) struct FnFacts {
    pub(crate) is_async: bool,
}

/// The validated configuration. `None` means "the runtime's default".
pub(crate) struct Config {
    pub(crate) max_retries: Option<u32>,
    pub(crate) initial_backoff: Option<Duration>,
    pub(crate) max_backoff: Option<Duration>,
    pub(crate) multiplier: Option<f64>,
    pub(crate) jitter: Option<JitterArg>,
    pub(crate) max_elapsed: Option<Duration>,
    pub(crate) retry_if: Option<Expr>,
    pub(crate) retry_after: Option<Expr>,
    pub(crate) on_retry: Option<Expr>,
    pub(crate) on_give_up: Option<Expr>,
    pub(crate) sleep: Option<Expr>,
    pub(crate) budget: Option<Expr>,
    /// `policy = EXPR`, instead of the schedule keys.
    pub(crate) policy: Option<Expr>,
    /// Per-attempt time limit (async functions only), spanned on its key.
    pub(crate) timeout: Option<KeySpanned<Duration>>,
    /// The path to the runtime crate (`::backoff_runtime` unless `crate = "..."`).
    pub(crate) krate: syn::Path,
}

impl Config {
    /// Whether every hook, the sleep and the policy are plain paths, which
    /// cannot read the function's arguments (so the body's closure may own
    /// them).
    pub(crate) fn captures_nothing_besides_the_body(&self) -> bool {
        [
            &self.retry_if,
            &self.retry_after,
            &self.on_retry,
            &self.on_give_up,
            &self.sleep,
            &self.policy,
            &self.budget,
        ]
        .into_iter()
        .flatten()
        .all(|expr| matches!(expr, Expr::Path(_)))
    }

    /// Whether a hook needs the start instant read before the first attempt.
    pub(crate) fn needs_start(&self) -> bool {
        self.on_retry.is_some() || self.on_give_up.is_some()
    }

    /// Applies the cross-field rules to `raw`, recording violations in `errors`.
    pub(crate) fn build(raw: RawArgs, function: &FnFacts, errors: &mut Errors) -> Config {
        let initial_written = raw.initial_backoff.get().map(|s| s.value);
        let max_written = raw.max_backoff.get().map(|s| s.value);
        let cap = max_written.unwrap_or(DEFAULT_MAX_BACKOFF);

        if let (Some(i), Some(m)) = (raw.initial_backoff.get(), max_written) {
            if i.value > m {
                errors.push(
                    i.span,
                    format!(
                        "`initial_backoff` ({}) is longer than `max_backoff` ({}): the first wait could never be reached; lower `initial_backoff` or raise `max_backoff`",
                        display(i.value),
                        display(m)
                    ),
                );
            }
        }

        if let Some(j) = raw.jitter.get() {
            if let JitterArg::AdditiveUpTo(amount) = j.value {
                if amount > cap {
                    let cap_text = match max_written {
                        Some(m) => format!("`max_backoff` ({})", display(m)),
                        None => format!("`max_backoff` (default {})", display(cap)),
                    };
                    errors.push(
                        j.span,
                        format!(
                            "`jitter = \"{}\"` is larger than {cap_text}: every wait is capped at `max_backoff`, so such jitter could never be applied; lower it or raise `max_backoff`",
                            display(amount)
                        ),
                    );
                }
            }
        }

        if let Some(e) = raw.max_elapsed.get() {
            if let Some(first) = shortest_first_wait(&raw, initial_written, max_written) {
                if e.value < first.wait {
                    errors.push(
                        e.span,
                        format!(
                            "`max_elapsed` ({}) is shorter than {}: no retry could ever start; raise `max_elapsed` or lower `initial_backoff`",
                            display(e.value),
                            first.described
                        ),
                    );
                }
            }
        }

        if !function.is_async {
            if let Some(t) = raw.timeout.get() {
                errors.push(
                    t.key_span,
                    "`timeout` applies only to `async fn`: a sync attempt cannot be interrupted; remove it, or bound the blocking call itself (e.g. a socket read timeout)",
                );
            }
        }

        if let Some(policy) = raw.policy.get() {
            let written: Vec<(&str, proc_macro2::Span)> = [
                ("max_retries", raw.max_retries.get().map(|s| s.key_span)),
                ("max_backoff", raw.max_backoff.get().map(|s| s.key_span)),
                ("initial_backoff", raw.initial_backoff.get().map(|s| s.key_span)),
                ("multiplier", raw.multiplier.get().map(|s| s.key_span)),
                ("jitter", raw.jitter.get().map(|s| s.key_span)),
                ("max_elapsed", raw.max_elapsed.get().map(|s| s.key_span)),
            ]
            .into_iter()
            .filter_map(|(name, span)| span.map(|span| (name, span)))
            .collect();
            for (name, span) in written {
                errors.push(
                    span,
                    format!(
                        "`{name}` and `policy` cannot both be given: `policy` already sets the whole schedule; set `{name}` on the `Policy` (`.{name}(...)`) or drop `policy`"
                    ),
                );
            }
            let _ = policy;
        }

        let default_crate: syn::Path = syn::parse_quote!(::backoff_runtime);
        Config {
            max_retries: raw.max_retries.take().map(|s| s.value),
            initial_backoff: initial_written,
            max_backoff: max_written,
            multiplier: raw.multiplier.take().map(|s| s.value),
            jitter: raw.jitter.take().map(|s| s.value),
            max_elapsed: raw.max_elapsed.take().map(|s| s.value),
            retry_if: raw.retry_if.take().map(|s| s.value),
            retry_after: raw.retry_after.take().map(|s| s.value),
            on_retry: raw.on_retry.take().map(|s| s.value),
            on_give_up: raw.on_give_up.take().map(|s| s.value),
            sleep: raw.sleep.take().map(|s| s.value),
            budget: raw.budget.take().map(|s| s.value),
            policy: raw.policy.take().map(|s| s.value),
            timeout: raw.timeout.take().map(|s| KeySpanned {
                value: s.value,
                span: s.key_span,
            }),
            krate: raw.krate.take().map_or(default_crate, |s| s.value),
        }
    }
}

/// The shortest first wait the written values allow, and how to say it.
struct ShortestFirstWait {
    wait: Duration,
    described: String,
}

/// The shortest first wait the attribute can take, when values the user
/// wrote fix it; `None` when a first wait could be as short as anything
/// (a `retry_after` hint can be 0, full jitter can draw 0, a `policy` is
/// not known here) or when only defaults would decide it (a default never
/// causes an error).
fn shortest_first_wait(
    raw: &RawArgs,
    initial_written: Option<Duration>,
    max_written: Option<Duration>,
) -> Option<ShortestFirstWait> {
    if raw.retry_after.get().is_some() || raw.policy.get().is_some() {
        return None;
    }
    // base(0) = min(initial_backoff, max_backoff), from written values only.
    let base = match (initial_written, max_written) {
        (Some(initial), Some(cap)) => initial.min(cap),
        (Some(initial), None) => initial.min(DEFAULT_MAX_BACKOFF),
        (None, Some(cap)) if cap < DEFAULT_INITIAL_BACKOFF => cap,
        _ => return None,
    };
    let mode = raw.jitter.get().map(|j| j.value);
    let first = match mode {
        Some(JitterArg::Full) => return None,
        Some(JitterArg::Equal) => ShortestFirstWait {
            wait: base / 2,
            described: format!(
                "the shortest first wait ({}: `jitter = equal` waits at least half of {})",
                display(base / 2),
                display(base)
            ),
        },
        _ => ShortestFirstWait {
            wait: base,
            described: format!("the first wait ({})", display(base)),
        },
    };
    Some(first)
}
