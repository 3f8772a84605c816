//! Compile-time behaviour: every rejected input is a clear error on the
//! offending token (tests/ui/*.rs with their .stderr snapshots), and the
//! accepted shapes compile and run (tests/ui/pass/*.rs).
//!
//! Regenerate snapshots with `TRYBUILD=overwrite cargo test --test ui`, then
//! read every diff: a snapshot that records a confusing message is a bug.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}

/// Every E0382 and E0507 the expansion causes (a body that moves what the
/// next attempt needs) shows the `#[retry]` line, says it comes from the
/// attribute, and has no help that points into the runtime's source files
/// (which, for a user, are under the cargo registry).
#[test]
fn each_moved_value_error_points_at_the_attribute() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui");
    let mut checked = 0;
    let mut offenders = Vec::new();
    for entry in std::fs::read_dir(&root).unwrap_or_else(|e| panic!("cannot read tests/ui: {e}")) {
        let path = entry.unwrap_or_else(|e| panic!("cannot list tests/ui: {e}")).path();
        if path.extension().is_none_or(|ext| ext != "stderr") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        for error in text
            .split("\nerror")
            .filter(|error| error.contains("[E0382]") || error.contains("[E0507]"))
        {
            checked += 1;
            if !error
                .lines()
                .any(|line| line.contains("| #[retry") || line.contains("|     #[retry"))
            {
                offenders.push(format!("{name}: the error does not show the `#[retry]` line"));
            }
            if !error.contains("originates in the attribute macro `retry`") {
                offenders.push(format!("{name}: the error does not say it comes from `#[retry]`"));
            }
            if error.contains("backoff-runtime/src") {
                offenders.push(format!("{name}: a help points into the runtime's source"));
            }
        }
    }
    assert!(checked >= 5, "only {checked} moved-value errors found");
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// What no compile error a user reads may name: the runtime's `__private`
/// module (what the expansion calls, not public API), the loop's internals
/// and the hook set of old (`Loop`, `HookSet`, `Slot`, `Unset`), and the
/// modules behind the public re-exports. `closures_not_written` adds a
/// closure type the user never wrote.
const FORBIDDEN: &[&str] = &[
    "__private",
    "HookSet",
    "Loop",
    "Slot",
    "Unset",
    "after_first_attempt",
    "backoff_runtime::builder::",
    // `backoff_runtime::limits` is public; the modules behind it are not.
    "backoff_runtime::limits::adaptive_rate::",
    "backoff_runtime::limits::adaptive_throttle::",
    "backoff_runtime::limits::admission::",
    "backoff_runtime::limits::admission_limit::",
    "backoff_runtime::limits::budget::",
    "backoff_runtime::limits::circuit_breaker::",
    "backoff_runtime::limits::cooldown::",
    "backoff_runtime::limits::keyed::",
    "backoff_runtime::limits::limit::",
    "backoff_runtime::limits::named::",
    "backoff_runtime::limits::throttle::",
    "backoff_runtime::observe::",
    "backoff_runtime::run::",
    "backoff_runtime::schedule::",
    "backoff_runtime::time::",
];

/// The snapshots allowed to name one of [`FORBIDDEN`]. Kept as a list so
/// that a snapshot rustc cannot be made to word better is named here, on
/// purpose, rather than slipping in.
///
/// - A builder passed where a `Future` is required: rustc prints the
///   builder's whole type, its keys' markers included. The fix is in the
///   words the user reads first (`CallIntoFuture`).
const STILL_NAMING_PRIVATE: &[&str] = &[
    "tests/ui/builder_passed_as_a_future.stderr",
    "tests/ui/hedged_passed_as_a_future.stderr",
];

/// No compile error a user sees names [`FORBIDDEN`] words: every snapshot,
/// here and in the outside crate's suite, speaks of the user's keys and
/// public items only, but for the ones [`STILL_NAMING_PRIVATE`] lists.
#[test]
fn no_snapshot_names_private_items() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = Vec::new();
    let mut still = Vec::new();
    let mut read = 0;
    for dir in ["tests/ui", "tests/outside/tests/ui"] {
        let entries = std::fs::read_dir(root.join(dir)).unwrap_or_else(|e| panic!("cannot read {dir}: {e}"));
        for entry in entries {
            let path = entry.unwrap_or_else(|e| panic!("cannot list {dir}: {e}")).path();
            if path.extension().is_none_or(|ext| ext != "stderr") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            read += 1;
            let case = std::fs::read_to_string(path.with_extension("rs")).unwrap_or_default();
            for (n, line) in text.lines().enumerate() {
                let name = path.strip_prefix(root).unwrap_or(&path).display().to_string();
                for closure in closures_not_written(line, &path, &case) {
                    offenders.push(format!("{name}:{}: a closure the user never wrote: {closure}", n + 1));
                }
                if FORBIDDEN.iter().any(|word| line.contains(word)) {
                    if STILL_NAMING_PRIVATE.contains(&name.as_str()) {
                        still.push(name);
                    } else {
                        offenders.push(format!("{name}:{}: {}", n + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(read > 0, "no .stderr snapshot found");
    let cleaned: Vec<&&str> = STILL_NAMING_PRIVATE
        .iter()
        .filter(|listed| !still.iter().any(|name| name == *listed))
        .collect();
    assert!(
        cleaned.is_empty(),
        "these snapshots no longer name any of {FORBIDDEN:?}: take them out of STILL_NAMING_PRIVATE: {cleaned:?}"
    );
    assert!(
        offenders.is_empty(),
        "{} snapshot line(s) name the expansion's internals ({FORBIDDEN:?}); give the bound a \
         public item or a message in the user's words:\n{}",
        offenders.len(),
        offenders.join("\n")
    );
}

/// The closure types `line` names (`{closure@$DIR/tests/ui/case.rs:4:20: 4:34}`)
/// that are not a closure the user wrote in the case itself: one of another
/// file (the runtime's, the expansion's), or one whose position in the case
/// holds no `|` (nor `move |`, `async |`).
fn closures_not_written(line: &str, snapshot: &std::path::Path, case: &str) -> Vec<String> {
    let own = snapshot
        .with_extension("rs")
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut found = Vec::new();
    for (start, _) in line.match_indices("{closure@") {
        let rest = &line[start + "{closure@".len()..];
        let end = rest.find('}').unwrap_or(rest.len());
        let location = &rest[..end];
        let mut parts = location.split(':');
        let file = parts.next().unwrap_or_default();
        let row: usize = parts.next().and_then(|n| n.trim().parse().ok()).unwrap_or(0);
        let column: usize = parts.next().and_then(|n| n.trim().parse().ok()).unwrap_or(0);
        let written = file.ends_with(&format!("/{own}"))
            && case
                .lines()
                .nth(row.wrapping_sub(1))
                .and_then(|text| text.get(column.saturating_sub(1)..))
                .is_some_and(|at| at.starts_with('|') || at.starts_with("move") || at.starts_with("async"));
        if !written {
            found.push(location.to_owned());
        }
    }
    found
}

/// The closure check accepts the user's closure and rejects one of the
/// runtime's.
#[test]
fn a_closure_is_checked_against_the_case() {
    let case = "#[retry(retry_if = |e: &u8| true)]\n";
    let snapshot = std::path::Path::new("tests/ui/example.stderr");
    let own = "required for the cast from `&{closure@$DIR/tests/ui/example.rs:1:20: 1:28}` to `&dyn Fn(&u8)`";
    assert!(closures_not_written(own, snapshot, case).is_empty());
    let runtime = "required for `{closure@backoff-runtime/src/lib.rs:10:5: 10:9}` to implement `Fn`";
    assert_eq!(closures_not_written(runtime, snapshot, case).len(), 1);
    let elsewhere = "`{closure@$DIR/tests/ui/example.rs:1:3: 1:8}`";
    assert_eq!(
        closures_not_written(elsewhere, snapshot, case).len(),
        1,
        "no closure at 1:3"
    );
}
