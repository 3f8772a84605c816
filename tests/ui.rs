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

/// What no compile error a user reads may name: the runtime's `__private`
/// module (what the expansion calls, not public API), the loop's internals
/// and the hook set, and the modules behind the public re-exports.
const FORBIDDEN: &[&str] = &[
    "__private",
    "HookSet",
    "Loop::step",
    "after_first_attempt",
    "::run::",
    "::time::sleep::",
];

/// The snapshots allowed to name one of [`FORBIDDEN`]: none. Kept as a
/// list so that a snapshot rustc cannot be made to word better is named
/// here, on purpose, rather than slipping in.
const STILL_NAMING_PRIVATE: &[&str] = &[];

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
            for (n, line) in text.lines().enumerate() {
                let name = path.strip_prefix(root).unwrap_or(&path).display().to_string();
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
