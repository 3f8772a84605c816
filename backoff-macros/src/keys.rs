//! The one table of `#[retry]`'s keys, in the order of the reference on
//! `backoff_runtime::retry`. Each row gives a key's name (its field), the
//! kind of value it takes (`values.rs`) and what it does; the row alone
//! makes the key parsed, checked for duplicates, suggested for a typo and
//! listed in error messages. What the key means is then read from its field
//! by `validate.rs` (rules between keys) and `expand.rs` (the code).

use crate::args::declare_keys;

declare_keys! {
    /// Retries after the first call.
    max_retries: RetryCount, schedule;
    /// Cap on every wait, jitter included.
    max_backoff: DurationString, schedule;
    /// The wait before the first retry, before jitter.
    initial_backoff: DurationString, schedule;
    /// Growth of the wait per retry.
    multiplier: Multiplier, schedule;
    /// How the waits are randomised.
    jitter: Jitter, schedule;
    /// Total time from the first call after which no wait is started.
    max_elapsed: DurationString, schedule;
    /// Which errors to retry.
    retry_if: Hook {
        signature: "fn(&E) -> bool",
        path_example: "is_transient",
        closure_example: "|e| e.is_transient()",
    };
    /// The server's hint for the next wait.
    retry_after: Hook {
        signature: "fn(&E) -> Option<Duration>",
        path_example: "server_hint",
        closure_example: "|e| e.retry_after()",
    };
    /// What a server hint above `max_backoff` does: stop (the default) or wait the cap.
    hint_above_cap: HintMode, schedule;
    /// Which `Ok` values are still pending: wait and run the body again.
    retry_if_ok: Hook {
        signature: "fn(&T) -> bool",
        path_example: "is_pending",
        closure_example: "|job| job.state == State::Running",
    };
    /// The server's hint for the next wait after a pending value.
    retry_after_ok: Hook {
        signature: "fn(&T) -> Option<Duration>",
        path_example: "poll_hint",
        closure_example: "|job| job.retry_after",
    };
    /// Called before each wait.
    on_retry: Hook {
        signature: "fn(&E, &RetryEvent)",
        path_example: "log_retry",
        closure_example: "|e, event| ...",
    };
    /// Called once when the final error is returned.
    on_give_up: Hook {
        signature: "fn(&E, &GiveUp)",
        path_example: "log_give_up",
        closure_example: "|e, event| ...",
    };
    /// Called once when the call succeeds.
    on_success: Hook {
        signature: "fn(&Success)",
        path_example: "log_success",
        closure_example: "|event| ...",
    };
    /// An action run after `on_retry`, before the wait (awaited in async functions).
    before_retry: Hook {
        signature: "async fn(&E, &RetryEvent) in async fns, fn(&E, &RetryEvent) in sync ones",
        path_example: "refresh_token",
        closure_example: "async |e, event| reconnect().await",
    };
    /// Another timer than tokio's or `std::thread::sleep`.
    sleep: Hook {
        signature: "fn(Duration) -> impl Future in async fns, fn(Duration) in sync ones",
        path_example: "async_io::Timer::after",
        closure_example: "|d| my_runtime::sleep(d)",
    };
    /// The name of a binding in the body holding the attempt's `Attempt`.
    context: Binding {
        holds: "the attempt's `backoff_runtime::Attempt` (number, retries left, time left, invocation id)",
        example: "attempt",
    };
    /// What to do with a failure a retried function below already gave up on.
    nested: NestedMode;
    /// The name metrics, tracing and events report for the function.
    name: NameString;
    /// A retry budget shared by every function naming it.
    budget: AnyExpr;
    /// A `Policy` giving the whole schedule instead of the schedule keys.
    policy: AnyExpr;
    /// Time limit of each attempt (async functions only).
    timeout: DurationString;
    /// The path to the runtime crate, when it is re-exported under another name.
    krate as "crate": PathString;
}

#[cfg(test)]
mod tests {
    use super::KEYS;

    /// The reference (the key table in the rustdoc of `backoff_runtime::retry`)
    /// lists exactly the keys of this table, in the same order.
    #[test]
    fn the_reference_lists_the_keys_of_the_table_in_order() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../backoff-runtime/src/lib.rs");
        let source = std::fs::read_to_string(path).unwrap();
        let mut lines = source.lines().map(str::trim_start);
        assert!(
            lines.any(|line| line.starts_with("/// | key | default |")),
            "no `/// | key | default | ...` table in {path}"
        );
        let documented: Vec<&str> = lines
            .skip(1) // `/// |---|---|...`
            .take_while(|line| line.starts_with("/// | "))
            .map(|line| {
                let cell = line.trim_start_matches("/// | ").split(" |").next().unwrap();
                cell.trim_matches('`')
            })
            .collect();
        let keys: Vec<&str> = KEYS.iter().map(|key| key.name).collect();
        assert_eq!(documented, keys, "the rows of the `retry` key table in {path}");
    }

    /// The plain builder is the attribute's twin: every key has a builder
    /// method (`Retry`'s, or `Policy`'s for the schedule, which the builder
    /// starts from), named as the key unless this table says otherwise. A
    /// key added without its builder method fails here.
    #[test]
    fn the_builder_takes_every_key() {
        // Keys whose builder form has another name, or none.
        const OTHER_NAMES: &[(&str, Option<&str>)] = &[
            // `policy.retry_with_attempt(|attempt| ...)`
            ("context", Some("retry_with_attempt")),
            ("nested", Some("nested_retry")),
            // `policy.retry(op)`: the builder starts from the policy.
            ("policy", Some("retry")),
            // Where the runtime crate is: the builder is the runtime.
            ("crate", None),
        ];
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../backoff-runtime/src");
        let sources: String = ["builder/retry.rs", "schedule/policy.rs"]
            .iter()
            .map(|file| std::fs::read_to_string(format!("{root}/{file}")).unwrap())
            .collect();
        let missing: Vec<String> = KEYS
            .iter()
            .filter_map(|key| {
                let method = match OTHER_NAMES.iter().find(|(name, _)| *name == key.name) {
                    Some((_, Some(method))) => *method,
                    Some((_, None)) => return None,
                    None => key.name,
                };
                let written_out = [
                    format!("pub fn {method}<"),
                    format!("pub fn {method}("),
                    format!("pub const fn {method}("),
                ]
                .iter()
                .any(|signature| sources.contains(signature.as_str()));
                // `Policy`'s checked pairs are written by `checked_builders!`
                // as `fn name(value: Type) sets field = value;`.
                let checked_pair = sources.lines().any(|line| {
                    let line = line.trim_start();
                    line.starts_with(&format!("fn {method}(")) && line.contains(") sets ")
                });
                let defined = written_out || checked_pair;
                (!defined).then(|| format!("{} (builder method `{method}`)", key.name))
            })
            .collect();
        assert!(missing.is_empty(), "keys the builder lacks: {missing:?}");
    }
}
