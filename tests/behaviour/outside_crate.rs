//! Runs the tests of `tests/outside`, a crate outside the workspace that uses
//! backoff-runtime without its `tokio` feature and under another name, so
//! `cargo test --workspace` covers them too (inside the workspace, feature
//! unification would turn `tokio` back on).

use std::path::PathBuf;
use std::process::Command;

#[test]
fn crate_outside_the_workspace_passes_its_tests() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let manifest = root.join("tests/outside/Cargo.toml");
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .arg("test")
        .arg("--manifest-path")
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", target.join("outside"))
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "outside crate failed:\n{stdout}\n{stderr}");
    assert!(
        stdout.contains("sync_retries_work_without_tokio_and_through_a_renamed_crate ... ok"),
        "{stdout}"
    );
    assert!(stdout.contains("test ui ... ok"), "{stdout}");
}
