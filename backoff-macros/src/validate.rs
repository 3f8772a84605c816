//! The rules between keys, and between keys and the function.
//!
//! Checked on the parsed arguments: one function per rule, each recording its
//! errors. Only values the user wrote are checked against each other; a default
//! never causes an error by itself.

use core::time::Duration;

use crate::args::Args;
use crate::errors::Errors;
use crate::grammar::{self, Syntax, format_duration as display};
use crate::item::FnFacts;
use crate::values::JitterArg;

/// Google Cloud's defaults, as documented on the attribute.
pub(crate) const DEFAULT_INITIAL_BACKOFF: Duration = Duration::from_secs(1);
pub(crate) const DEFAULT_MAX_BACKOFF: Duration = Duration::from_secs(32);

/// Applies every rule to `args`, recording each violation in `errors`.
/// `function` is `None` when the item is not a function: no rule about the
/// function applies then.
pub(crate) fn validate(args: &Args, function: Option<&FnFacts>, errors: &mut Errors) {
    initial_above_max(args, errors);
    jitter_above_max(args, errors);
    max_elapsed_below_first_wait(args, errors);
    value_hooks_without_retry_if_ok(args, errors);
    move_action(args, errors);
    unlimited_without_max_elapsed(args, errors);
    hint_rule_without_hint(args, errors);
    slow_down_if_without_admission(args, errors);
    hedging_without_a_pause(args, errors);
    if let Some(function) = function {
        timeout_on_sync_fn(args, function, errors);
        hedging_needs_attempts_side_by_side(args, function, errors);
        async_action_on_sync_fn(args, function, errors);
    }
    policy_with_schedule_keys(args, errors);
}

/// `initial_backoff` longer than `max_backoff`: the first wait is never reached.
fn initial_above_max(args: &Args, errors: &mut Errors) {
    let (Some(initial), Some(max)) = (&args.initial_backoff, &args.max_backoff) else {
        return;
    };
    if initial.value > max.value {
        errors.push(initial.span, grammar::initial_above_max(initial.value, max.value));
    }
}

/// An additive jitter amount above `max_backoff` (written or default): no
/// wait could ever hold it.
fn jitter_above_max(args: &Args, errors: &mut Errors) {
    let Some(jitter) = &args.jitter else { return };
    let JitterArg::AdditiveUpTo(amount) = jitter.value else {
        return;
    };
    let max_written = args.max_backoff.as_ref().map(|max| max.value);
    let cap = max_written.unwrap_or(DEFAULT_MAX_BACKOFF);
    if amount > cap {
        errors.push(
            jitter.span,
            grammar::jitter_above_max(amount, cap, max_written.is_some()),
        );
    }
}

/// `max_elapsed` shorter than the shortest first wait: no retry could start.
fn max_elapsed_below_first_wait(args: &Args, errors: &mut Errors) {
    let Some(max_elapsed) = &args.max_elapsed else {
        return;
    };
    if let Some(first) = shortest_first_wait(args) {
        if max_elapsed.value < first.wait {
            errors.push(
                max_elapsed.span,
                format!(
                    "`max_elapsed` ({}) is shorter than {}: no retry could ever start; raise `max_elapsed` or lower `initial_backoff`",
                    display(max_elapsed.value),
                    first.described
                ),
            );
        }
    }
}

/// `timeout` on a sync function, whose attempt cannot be interrupted.
fn timeout_on_sync_fn(args: &Args, function: &FnFacts, errors: &mut Errors) {
    if function.is_async {
        return;
    }
    if let Some(timeout) = &args.timeout {
        errors.push(
            timeout.key_span,
            "`timeout` applies only to `async fn`: a sync attempt cannot be interrupted; remove it, or bound the blocking call itself (e.g. a socket read timeout)",
        );
    }
}

/// `hedge_after` with a key that needs attempts one after another:
/// `before_retry` acts in the pause between two attempts, and hedges have
/// none; a pending value (`retry_if_ok` and its hooks) and the attempt's
/// context are not read in hedged calls.
fn hedging_without_a_pause(args: &Args, errors: &mut Errors) {
    if args.hedge_after.is_none() {
        return;
    }
    if let Some(action) = &args.before_retry {
        errors.push(
            action.key_span,
            "`before_retry` cannot be used with `hedge_after`: a hedge starts while the attempt before it still runs, so there is no pause to act in; remove one of them",
        );
    }
    let keys = [
        ("retry_if_ok", args.retry_if_ok.as_ref().map(|key| key.key_span)),
        ("retry_after_ok", args.retry_after_ok.as_ref().map(|key| key.key_span)),
        ("pending_error", args.pending_error.as_ref().map(|key| key.key_span)),
        ("context", args.context.as_ref().map(|key| key.key_span)),
    ];
    for (key, span) in keys {
        if let Some(span) = span {
            errors.push(
                span,
                format!(
                    "`{key}` is not supported with `hedge_after`: hedged attempts run side by side; remove one of them"
                ),
            );
        }
    }
}

/// `hedge_after` where attempts cannot run side by side: a sync function
/// runs one at a time, and `&mut self` or a `mut` argument cannot be
/// shared by two attempts at once.
fn hedging_needs_attempts_side_by_side(args: &Args, function: &FnFacts, errors: &mut Errors) {
    let Some(hedge_after) = &args.hedge_after else {
        return;
    };
    if !function.is_async {
        errors.push(
            hedge_after.key_span,
            "`hedge_after` applies only to `async fn`: a hedge runs beside the attempt before it, and a sync function runs one attempt at a time; remove it, or make the function async",
        );
        return;
    }
    if function.is_async_trait {
        errors.push(
            hedge_after.key_span,
            "`hedge_after` is not supported under `#[async_trait]` yet: use a native `async fn` in the trait, or the builder's `hedge_after` inside the method",
        );
        return;
    }
    if let Some((span, binding)) = &function.unshared {
        errors.push(
            *span,
            format!(
                "`hedge_after` runs attempts side by side, and they cannot share {binding}: each would change what the others read; take it by `&` (or by value without `mut`), or remove `hedge_after`"
            ),
        );
    }
}

/// `retry_after_ok` or `pending_error` without `retry_if_ok`: no value is
/// ever pending, so the hook would never be asked.
fn value_hooks_without_retry_if_ok(args: &Args, errors: &mut Errors) {
    if args.retry_if_ok.is_some() {
        return;
    }
    let rules = [
        (
            &args.retry_after_ok,
            "`retry_after_ok` needs `retry_if_ok`: without it no value is pending, so no hint is ever asked; add `retry_if_ok = |value| ...` or use `retry_after` for errors",
        ),
        (
            &args.pending_error,
            "`pending_error` needs `retry_if_ok`: without it no value is pending, so none is ever left when the retries end; add `retry_if_ok = |value| ...`, or remove `pending_error`",
        ),
    ];
    for (hook, message) in rules {
        if let Some(hook) = hook {
            errors.push(hook.key_span, message);
        }
    }
}

/// `slow_down_if` without `admission`: no limiter hears what it says.
fn slow_down_if_without_admission(args: &Args, errors: &mut Errors) {
    if let (Some(hook), None) = (&args.slow_down_if, &args.admission) {
        errors.push(
            hook.key_span,
            "`slow_down_if` needs `admission`: it tells the limiter named there which errors mean \"slow down\"; add `admission = LIMITER`, or remove `slow_down_if`",
        );
    }
}

/// An async `before_retry` (an `async` closure, or one returning an `async`
/// block) on a sync function, which could not await it.
fn async_action_on_sync_fn(args: &Args, function: &FnFacts, errors: &mut Errors) {
    if function.is_async {
        return;
    }
    let Some(action) = &args.before_retry else { return };
    let syn::Expr::Closure(closure) = &action.value else {
        return;
    };
    let returns_async_block = matches!(&*closure.body, syn::Expr::Async(_));
    if closure.asyncness.is_some() || returns_async_block {
        errors.push(
            action.span,
            "`before_retry` of a sync function is a plain closure: nothing would await an async action here; run the action to completion inside the closure, or make the function `async fn`",
        );
    }
}

/// A `move` closure (or `async move`) for `before_retry`: the action is
/// built again for each retry, and a `move` closure would move what it
/// captures (`self`, a `&mut` argument) once per retry. Reported on `move`.
fn move_action(args: &Args, errors: &mut Errors) {
    let Some(action) = &args.before_retry else { return };
    let syn::Expr::Closure(closure) = &action.value else {
        return;
    };
    if let Some(capture) = &closure.capture {
        errors.push(
            capture.span,
            "`before_retry` is built again for each retry, so it cannot be a `move` closure (it would move what it captures, such as `self`, on every retry): write it without `move`, as `async |e, event| ...` or `|e, event| ...`; it borrows what the body borrows",
        );
    }
}

/// `max_retries = unlimited` without `max_elapsed`: nothing would ever end
/// the retries of an error that keeps coming.
fn unlimited_without_max_elapsed(args: &Args, errors: &mut Errors) {
    let Some(max_retries) = &args.max_retries else { return };
    if max_retries.value == u32::MAX && args.max_elapsed.is_none() && args.policy.is_none() {
        errors.push(
            max_retries.span,
            grammar::unlimited_without_max_elapsed(Syntax::Attribute),
        );
    }
}

/// `hint_above_cap` without `retry_after` or `retry_after_ok`: no hint to
/// compare with the cap.
fn hint_rule_without_hint(args: &Args, errors: &mut Errors) {
    let Some(rule) = &args.hint_above_cap else { return };
    if args.retry_after.is_none() && args.retry_after_ok.is_none() {
        errors.push(
            rule.key_span,
            "`hint_above_cap` has no effect without a server hint: add `retry_after = ...` (or `retry_after_ok = ...`), or remove it",
        );
    }
}

/// `policy` together with a schedule key: the policy already sets the whole
/// schedule. One error on each schedule key written.
fn policy_with_schedule_keys(args: &Args, errors: &mut Errors) {
    if args.policy.is_none() {
        return;
    }
    for (key, key_span) in args.written().filter(|(key, _)| key.in_schedule) {
        let name = key.name;
        errors.push(
            key_span,
            format!(
                "`{name}` and `policy` cannot both be given: `policy` already sets the whole schedule; set `{name}` on the `Policy` (`.{name}(...)`) or drop `policy`"
            ),
        );
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
fn shortest_first_wait(args: &Args) -> Option<ShortestFirstWait> {
    if args.retry_after.is_some() || args.retry_after_ok.is_some() || args.policy.is_some() {
        return None;
    }
    let initial_written = args.initial_backoff.as_ref().map(|initial| initial.value);
    let max_written = args.max_backoff.as_ref().map(|max| max.value);
    // base(0) = min(initial_backoff, max_backoff), from written values only.
    let base = match (initial_written, max_written) {
        (Some(initial), Some(cap)) => initial.min(cap),
        (Some(initial), None) => initial.min(DEFAULT_MAX_BACKOFF),
        (None, Some(cap)) if cap < DEFAULT_INITIAL_BACKOFF => cap,
        _ => return None,
    };
    let first = match args.jitter.as_ref().map(|jitter| jitter.value) {
        Some(JitterArg::Full) => return None,
        Some(JitterArg::Equal) => ShortestFirstWait {
            wait: base / 2,
            described: format!(
                "the shortest first wait ({}: `jitter = equal` waits at least half of {})",
                display(base / 2),
                display(base)
            ),
        },
        // Rounded down: the rule errs only when no retry can ever happen.
        Some(JitterArg::Grpc) => ShortestFirstWait {
            wait: base * 4 / 5,
            described: format!(
                "the shortest first wait ({}: `jitter = grpc` waits at least 0.8 x {})",
                display(base * 4 / 5),
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
