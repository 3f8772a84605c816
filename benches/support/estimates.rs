//! What both benches share: where criterion writes its estimates, reading a
//! median of this run back, and writing a ratio table under `target/`.

use std::path::PathBuf;
use std::time::SystemTime;

/// The build's target directory.
pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// Where criterion keeps its estimates.
pub(crate) fn criterion_dir() -> PathBuf {
    std::env::var_os("CRITERION_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| target_dir().join("criterion"))
}

/// Criterion's median estimate (ns) of `group/bench`, if it was written by
/// this run (not left over from an earlier one).
pub(crate) fn median_ns(group: &str, bench: &str, since: SystemTime) -> Option<f64> {
    let path = criterion_dir()
        .join(group)
        .join(bench)
        .join("new")
        .join("estimates.json");
    let modified = std::fs::metadata(&path).ok()?.modified().ok()?;
    if modified < since {
        return None;
    }
    let json = std::fs::read_to_string(path).ok()?;
    let median = &json[json.find("\"median\"")?..];
    let value = &median[median.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
    let end = value.find([',', '}'])?;
    value[..end].trim().parse().ok()
}

/// Prints `table` and writes it to `target/bench-ratios/<file>`.
pub(crate) fn publish(table: &str, file: &str) {
    println!("\n{table}");
    let dir = target_dir().join("bench-ratios");
    if std::fs::create_dir_all(&dir).is_ok() && std::fs::write(dir.join(file), table).is_ok() {
        println!("written to {}", dir.join(file).display());
    }
}
