//! `#[retry]`'s key table (`backoff-macros/src/keys.rs`) against the two
//! places that must follow it in the runtime: the reference (the key table
//! in the rustdoc of `backoff_runtime::retry`) and the plain builder. Both
//! crates' sources are read from the workspace root, so the published macro
//! crate's tests do not need its sibling folder.

use std::fs;
use std::path::Path;

/// A workspace file's text, with its path for the messages.
fn read(file: &str) -> (String, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let text = fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    (path.display().to_string(), text)
}

/// The keys of the table, in its order, read as text from the
/// `declare_keys! { ... }` block: each row is a line indented by four spaces
/// that starts with the key's field (`max_retries: RetryCount, schedule;`),
/// renamed by `as "name"` when the key is not the field
/// (`krate as "crate": PathString;`). Each row has exactly one doc comment
/// line (the macro takes one), which checks that no row was missed.
fn table_keys() -> Vec<String> {
    let (path, source) = read("backoff-macros/src/keys.rs");
    let block: Vec<&str> = source
        .lines()
        .skip_while(|line| !line.starts_with("declare_keys! {"))
        .skip(1)
        .take_while(|line| *line != "}")
        .collect();
    let keys: Vec<String> = block
        .iter()
        .filter_map(|line| line.strip_prefix("    "))
        .filter(|row| row.starts_with(|c: char| c.is_ascii_lowercase()))
        .map(|row| {
            let head = row.split(':').next().unwrap_or_default();
            match head.split_once(" as ") {
                Some((_, name)) => name.trim().trim_matches('"').to_owned(),
                None => head.trim().to_owned(),
            }
        })
        .collect();
    let doc_lines = block.iter().filter(|line| line.starts_with("    /// ")).count();
    assert!(
        keys.len() > 20 && keys.len() == doc_lines,
        "read {} keys and {doc_lines} doc comments from the `declare_keys!` block of {path}: {keys:?}",
        keys.len()
    );
    keys
}

/// The reference (the key table in the rustdoc of `backoff_runtime::retry`)
/// lists exactly the keys of the table, in the same order.
#[test]
fn the_reference_lists_the_keys_of_the_table_in_order() {
    let (path, source) = read("backoff-runtime/docs/retry.md");
    let mut lines = source.lines().map(str::trim_start);
    assert!(
        lines.any(|line| line.starts_with("| key | default |")),
        "no `| key | default | ...` table in {path}"
    );
    let documented: Vec<&str> = lines
        .skip(1) // `|---|---|...`
        .take_while(|line| line.starts_with("| "))
        .map(|line| {
            let cell = line.trim_start_matches("| ").split(" |").next().unwrap_or_default();
            cell.trim_matches('`')
        })
        .collect();
    assert_eq!(documented, table_keys(), "the rows of the `retry` key table in {path}");
}

/// The plain builder is the attribute's twin: every key has a builder
/// method (`Retry`'s, or `Policy`'s for the schedule, which the builder
/// starts from), named as the key unless `OTHER_NAMES` says otherwise. A
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
    let sources: String = [
        "backoff-runtime/src/builder/retry.rs",
        "backoff-runtime/src/builder/hedge.rs",
        "backoff-runtime/src/builder/chaos.rs",
        "backoff-runtime/src/schedule/policy.rs",
    ]
    .into_iter()
    .map(|file| read(file).1)
    .collect();
    let missing: Vec<String> = table_keys()
        .into_iter()
        .filter_map(|key| {
            let method = match OTHER_NAMES.iter().find(|(name, _)| *name == key) {
                Some((_, Some(method))) => (*method).to_owned(),
                Some((_, None)) => return None,
                None => key.clone(),
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
            (!defined).then(|| format!("{key} (builder method `{method}`)"))
        })
        .collect();
    assert!(missing.is_empty(), "keys the builder lacks: {missing:?}");
}
