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

/// No compile error a user sees names the runtime's `__private` module (what
/// the expansion calls, not public API): every snapshot, here and in the
/// outside crate's suite, speaks of the user's keys and public items only.
#[test]
fn no_snapshot_names_private_items() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut offenders = Vec::new();
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
                if line.contains("__private") {
                    let name = path.strip_prefix(root).unwrap_or(&path).display().to_string();
                    offenders.push(format!("{name}:{}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(read > 0, "no .stderr snapshot found");
    assert!(
        offenders.is_empty(),
        "{} snapshot line(s) name `__private`, the expansion's internals; give the bound a \
         public item or a message in the user's words:\n{}",
        offenders.len(),
        offenders.join("\n")
    );
}
