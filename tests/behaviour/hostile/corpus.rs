//! The checked-in corpus, `tests/corpus/hostile/<target>/`: one minimal
//! input a file, replayed by its target on every run.

use std::path::PathBuf;

/// The corpus of `target`: each file's name and text, sorted by name.
pub fn of(target: &str) -> Vec<(String, String)> {
    let dir: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "corpus", "hostile", target]
        .iter()
        .collect();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.expect("a corpus file").path())
        .collect();
    files.sort();
    let corpus: Vec<_> = files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            let name = path.file_name().map(|name| name.to_string_lossy().into_owned());
            (name.unwrap_or_default(), text)
        })
        .collect();
    assert!(!corpus.is_empty(), "no corpus in {}", dir.display());
    corpus
}

/// `name: value` lines as headers (blank lines and `#` comments skipped).
pub fn header_lines(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim_end)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (name, value) = line.split_once(':').unwrap_or((line, ""));
            (
                name.trim().to_owned(),
                value.strip_prefix(' ').unwrap_or(value).to_owned(),
            )
        })
        .collect()
}
