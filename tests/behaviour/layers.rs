//! The runtime's layers, as ARCHITECTURE.md draws them, read from its
//! sources: each folder imports only from the layers below it, no two
//! modules import each other, and nothing but `lib.rs` names `__private`
//! (it only re-exports); the front-end crates reach the driver through
//! `__front_end` alone, never through `__private`. A `use` or a path in code that breaks a rule fails
//! here with the file and the line; comments and doc comments do not count.
//! The shape rules too: the hidden seams' names, the crate root's items,
//! the tower front end's file sizes and type parameters, no hidden method
//! on `Classify`, and module docs that open with one short sentence.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers from the bottom up: a folder may import from those before it.
/// `testing` (the `test-util` virtual clock and seedable generator) sits
/// with the clocks that read it, under everything but the schedule;
/// `bounds` (what compile errors name) re-exports from the layers below it
/// and is named by the builder, so nothing under it names it;
/// `settings` (feature `serde`: a policy and the limiters read from
/// configuration) on top, beside the classifiers users name.
const LAYERS: [&[&str]; 8] = [
    &["schedule"],
    &["time", "testing"],
    &["observe"],
    &["limits", "chaos"],
    &["run"],
    &["bounds"],
    &["builder"],
    &["classify", "settings"],
];

fn layer_of(folder: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&folder))
}

/// Every `.rs` file of the runtime's `src`, as (path below `src`, text).
fn sources() -> Vec<(String, String)> {
    sources_of("backoff-runtime")
}

/// Every `.rs` file of a crate's `src`, as (path below `src`, text).
fn sources_of(krate: &str) -> Vec<(String, String)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<PathBuf> = fs::read_dir(dir)
            .expect("the runtime's sources are readable")
            .map(|entry| entry.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let name = path
                    .strip_prefix(root)
                    .expect("below src")
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((name, fs::read_to_string(&path).expect("a source file")));
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(krate).join("src");
    let mut out = Vec::new();
    walk(&root, &root, &mut out);
    assert!(
        out.len() > 8,
        "{krate}'s sources were not found under {}",
        root.display()
    );
    out
}

/// The lines that are code: comments, doc comments and test-only property
/// modules left out.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line.trim_start()))
        .filter(|(_, line)| !line.starts_with("//"))
}

/// The module a source file is (`run/hooks.rs` -> `run::hooks`).
fn module_of(file: &str) -> String {
    file.trim_end_matches(".rs").trim_end_matches("/mod").replace('/', "::")
}

/// The modules a line names through `crate::` (`crate::run::hooks::X` ->
/// `run::hooks`, `crate::testing::f` -> `testing`).
fn named_modules(line: &str, known: &BTreeSet<String>) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("crate::") {
        let path: String = rest[at + "crate::".len()..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        let parts: Vec<&str> = path.split("::").filter(|part| !part.is_empty()).collect();
        // The longest prefix that is a module of the crate.
        if let Some(module) = (1..=parts.len().min(2))
            .rev()
            .map(|n| parts[..n].join("::"))
            .find(|module| known.contains(module))
        {
            found.push(module);
        }
        rest = &rest[at + "crate::".len()..];
    }
    found
}

#[test]
fn each_layer_imports_only_from_the_layers_below_it() {
    let sources = sources();
    let known: BTreeSet<String> = sources.iter().map(|(file, _)| module_of(file)).collect();
    let mut upward = Vec::new();
    for (file, text) in &sources {
        let folder = file.split('/').next().unwrap_or_default().trim_end_matches(".rs");
        let Some(own) = layer_of(folder) else { continue };
        if file.ends_with("props.rs") {
            continue; // a `#[cfg(test)]` module: the schedule's property tests drive the loops
        }
        for (number, line) in code_lines(text) {
            for module in named_modules(line, &known) {
                let target = module.split("::").next().unwrap_or_default();
                match layer_of(target) {
                    Some(layer) if layer > own => upward.push(format!("{file}:{number}: {folder} -> {module}")),
                    _ => {}
                }
            }
        }
    }
    assert!(upward.is_empty(), "imports from a layer above:\n{}", upward.join("\n"));
}

#[test]
fn no_two_modules_import_each_other() {
    let sources = sources();
    let known: BTreeSet<String> = sources.iter().map(|(file, _)| module_of(file)).collect();
    let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, text) in &sources {
        let own = module_of(file);
        for (_, line) in code_lines(text) {
            for module in named_modules(line, &known) {
                if module != own && !own.starts_with(&format!("{module}::")) && !module.starts_with(&format!("{own}::"))
                {
                    imports.entry(own.clone()).or_default().insert(module);
                }
            }
        }
    }
    let mutual: Vec<String> = imports
        .iter()
        .flat_map(|(a, targets)| targets.iter().map(move |b| (a, b)))
        .filter(|(a, b)| a < b && imports.get(*b).is_some_and(|back| back.contains(*a)))
        .map(|(a, b)| format!("{a} <-> {b}"))
        .collect();
    assert!(
        mutual.is_empty(),
        "modules that import each other:\n{}",
        mutual.join("\n")
    );
}

/// The code lines of `krate`'s files but `allowed` that name `word`, as
/// `krate/src/file:line`.
fn lines_naming(krate: &str, word: &str, allowed: &[&str]) -> Vec<String> {
    sources_of(krate)
        .into_iter()
        .filter(|(file, _)| !allowed.contains(&file.as_str()))
        .flat_map(|(file, text)| {
            code_lines(&text)
                .filter(|(_, line)| line.contains(word))
                .map(|(number, _)| format!("{krate}/src/{file}:{number}"))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn only_lib_rs_names_the_private_facade() {
    let offenders = lines_naming("backoff-runtime", "__private", &["lib.rs"]);
    assert!(
        offenders.is_empty(),
        "code outside lib.rs naming `__private`:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn only_lib_rs_and_front_end_rs_name_the_front_ends_module() {
    let offenders = lines_naming("backoff-runtime", "__front_end", &["lib.rs", "front_end.rs"]);
    assert!(
        offenders.is_empty(),
        "runtime code naming `__front_end` (it only re-exports):\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_front_ends_reach_the_driver_through_its_module_alone() {
    let offenders: Vec<String> = ["backoff-tower", "backoff-grpc"]
        .into_iter()
        .flat_map(|krate| lines_naming(krate, "__private", &[]))
        .collect();
    assert!(
        offenders.is_empty(),
        "a front end naming the expansion's `__private`:\n{}",
        offenders.join("\n")
    );
}

#[test]
fn the_rules_catch_what_they_are_for() {
    let known: BTreeSet<String> = ["run::hooks", "run", "observe::trace", "observe"]
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(
        named_modules("use crate::run::hooks::DebugFmt;", &known),
        ["run::hooks"]
    );
    assert_eq!(
        named_modules("let x = crate::observe::trace::f(crate::run::g());", &known),
        ["observe::trace", "run"]
    );
    assert!(
        named_modules("/// see crate::run::hooks", &known).len() == 1,
        "the line filter, not this, skips comments"
    );
    assert_eq!(code_lines("// crate::run::x\ncode").count(), 1);
    assert!(layer_of("observe") > layer_of("time"));
    assert!(
        layer_of("bounds") > layer_of("run"),
        "bounds re-exports the run layer's `RetryResult`"
    );
    assert_eq!(module_of("run/mod.rs"), "run");
}

/// The crate doc's list of the public API names every item the crate root
/// re-exports (but the hidden ones), so a new public name cannot be left
/// out of it.
#[test]
fn the_crate_doc_lists_every_public_root_item() {
    let lib = sources_of("backoff-runtime")
        .into_iter()
        .find(|(file, _)| file == "lib.rs")
        .map(|(_, text)| text)
        .expect("lib.rs");
    let doc: String = lib
        .lines()
        .filter(|line| line.starts_with("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut hidden = false;
    let mut missing = Vec::new();
    for line in lib.lines() {
        let line = line.trim_end();
        if line == "#[doc(hidden)]" {
            hidden = true;
            continue;
        }
        if line.starts_with("#[") {
            continue;
        }
        if let Some(path) = line.strip_prefix("pub use ").and_then(|rest| rest.strip_suffix(';')) {
            let names = match path.split_once('{') {
                Some((_, list)) => list.trim_end_matches('}').split(',').map(str::trim).collect(),
                None => vec![path.rsplit("::").next().unwrap_or(path)],
            };
            for name in names.into_iter().filter(|name| !name.is_empty()) {
                if !hidden && !doc.contains(&format!("[`{name}`]")) {
                    missing.push(name.to_owned());
                }
            }
        }
        hidden = false;
    }
    assert!(
        missing.is_empty(),
        "public root items the crate doc does not list: {missing:?}"
    );
}

/// The names a hidden module's file makes public at its top level: each
/// name of a `pub use` (one per line or braced), and each `pub` item.
fn top_level_public_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines().filter(|line| line.starts_with("pub ")) {
        let line = line.trim_end();
        if let Some(path) = line.strip_prefix("pub use ").and_then(|rest| rest.strip_suffix(';')) {
            match path.split_once('{') {
                Some((_, list)) => names.extend(
                    list.trim_end_matches('}')
                        .split(',')
                        .map(str::trim)
                        .filter(|name| !name.is_empty())
                        .map(str::to_owned),
                ),
                None => names.push(path.rsplit("::").next().unwrap_or(path).to_owned()),
            }
        } else if let Some(item) = ["trait", "struct", "enum", "type", "fn", "const", "static", "mod"]
            .iter()
            .find_map(|kind| line.strip_prefix(&format!("pub {kind} ")))
        {
            let name: String = item.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            names.push(name);
        }
    }
    names
}

#[test]
fn the_front_ends_hidden_seams_hold_at_most_twenty_names() {
    let read = |path: &str| fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).expect("readable");
    let front_end = top_level_public_names(&read("backoff-runtime/src/front_end.rs"));
    let grpc = top_level_public_names(&read("backoff-tower/src/grpc.rs"));
    assert!(front_end.contains(&"Loop".to_owned()) && grpc.contains(&"RetriedCall".to_owned()));
    let total = front_end.len() + grpc.len();
    assert!(
        total <= 20,
        "`__front_end` ({}) and `__grpc` ({}) hold {total} names, more than 20:\n{front_end:?}\n{grpc:?}",
        front_end.len(),
        grpc.len()
    );
}

/// The names `lib.rs`'s `__private` module holds: each name of its
/// `pub use`s (braced lists may span lines), each `pub fn`, and each
/// module inside it as one name.
fn private_facade_names(lib: &str) -> Vec<String> {
    let start = lib.find("pub mod __private {").expect("lib.rs has `__private`");
    let body = &lib[start..];
    let end = body.find("\n}\n").expect("`__private` ends at column 0");
    let mut names = Vec::new();
    let mut nested_depth = 0;
    let mut statement = String::new();
    for line in body[..end].lines().skip(1).map(str::trim) {
        if line.starts_with("//") || line.starts_with("#[") {
            continue;
        }
        if let Some(module) = line.strip_prefix("pub mod ") {
            names.push(module.trim_end_matches(" {").to_owned());
            nested_depth += 1;
            continue;
        }
        if nested_depth > 0 {
            nested_depth -= usize::from(line == "}");
            continue;
        }
        if let Some(function) = line.strip_prefix("pub fn ") {
            names.push(
                function
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect(),
            );
            continue;
        }
        if line.starts_with("pub use ") || !statement.is_empty() {
            statement.push_str(line);
            if let Some(path) = statement
                .strip_prefix("pub use ")
                .and_then(|rest| rest.strip_suffix(';'))
            {
                names.extend(top_level_public_names(&format!("pub use {path};")));
                statement.clear();
            }
        }
    }
    names
}

#[test]
fn the_expansion_s_facade_holds_at_most_forty_five_names() {
    let lib =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("backoff-runtime/src/lib.rs")).expect("readable");
    let names = private_facade_names(&lib);
    for expected in ["Loop", "probe", "never", "retry_blocking_owned", "Ok"] {
        assert!(
            names.iter().any(|name| name == expected),
            "{expected} not read: {names:?}"
        );
    }
    assert!(
        names.len() <= 45,
        "`__private` holds {} names, more than 45:\n{names:?}",
        names.len()
    );
}

/// The crates whose sources the shape rules below read.
const PUBLISHED: [&str; 4] = ["backoff-runtime", "backoff-macros", "backoff-tower", "backoff-grpc"];

#[test]
fn the_tower_front_end_is_in_files_of_at_most_600_lines_its_future_under_500() {
    let lines = |text: &str| text.lines().count();
    let sources = sources_of("backoff-tower");
    let long: Vec<String> = sources
        .iter()
        .filter(|(_, text)| lines(text) > 600)
        .map(|(file, text)| format!("{file}: {}", lines(text)))
        .collect();
    assert!(long.is_empty(), "files over 600 lines: {long:?}");
    let future = sources.iter().find(|(file, _)| file == "future.rs").expect("future.rs");
    assert!(lines(&future.1) < 500, "future.rs has {} lines", lines(&future.1));
}

#[test]
fn the_tower_response_future_has_at_most_three_type_parameters() {
    let sources = sources_of("backoff-tower");
    let (_, future) = sources.iter().find(|(file, _)| file == "future.rs").expect("future.rs");
    let declaration = future
        .lines()
        .find_map(|line| line.trim_start().strip_prefix("pub struct ResponseFuture<"))
        .expect("`pub struct ResponseFuture<` in future.rs");
    let parameters = declaration.split('>').next().unwrap_or_default();
    let count = parameters.split(',').filter(|p| !p.trim().is_empty()).count();
    assert!(count <= 3, "ResponseFuture<{parameters}>: {count} type parameters");
}

#[test]
fn a_public_trait_users_implement_has_no_hidden_method() {
    let sources = sources_of("backoff-tower");
    let (_, classify) = sources
        .iter()
        .find(|(file, _)| file == "classify.rs")
        .expect("classify.rs");
    let start = classify.find("pub trait Classify<").expect("`Classify` in classify.rs");
    let body = &classify[start..];
    let end = body.find("\n}\n").expect("`Classify` ends at column 0");
    assert!(
        !body[..end].contains("#[doc(hidden)]"),
        "`Classify` has a hidden method"
    );
    assert!(body[..end].contains("fn may_retry"), "the trait's body was not read");
}

#[test]
fn the_runtime_s_crate_root_holds_at_most_24_items() {
    let lib =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("backoff-runtime/src/lib.rs")).expect("readable");
    // Every build's items: the feature-gated modules (and the attribute,
    // behind `macros`) apart, as hidden ones are.
    let mut left_out = false;
    let mut items = Vec::new();
    for line in lib.lines() {
        if line == "#[doc(hidden)]" || line.starts_with("#[cfg(") {
            left_out = true;
            continue;
        }
        if line.starts_with("#[") || line.starts_with("///") {
            continue;
        }
        if line.starts_with("pub ") && !left_out {
            items.extend(top_level_public_names(line));
        }
        left_out = false;
    }
    assert!(items.contains(&"Policy".to_owned()) && items.contains(&"limits".to_owned()));
    assert!(items.len() <= 24, "{} root items: {items:?}", items.len());
}

#[test]
fn each_module_doc_opens_with_one_sentence_of_at_most_12_words() {
    let mut long = Vec::new();
    for krate in PUBLISHED {
        for (file, text) in sources_of(krate) {
            let opening: Vec<&str> = text
                .lines()
                .map_while(|line| line.strip_prefix("//!"))
                .map(str::trim)
                .take_while(|line| !line.is_empty())
                .collect();
            if opening.is_empty() {
                continue;
            }
            let paragraph = opening.join(" ");
            let sentence = paragraph.split(". ").next().unwrap_or_default();
            let words = sentence.split_whitespace().count();
            if words > 12
                || !opening
                    .last()
                    .is_some_and(|line| line.ends_with('.') || line.ends_with(':'))
            {
                long.push(format!("{krate}/src/{file}: {paragraph}"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "module docs that do not open with one short sentence:\n{}",
        long.join("\n")
    );
}
