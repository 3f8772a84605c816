#!/usr/bin/env bash
# The cost of the default dependency tree for a newcomer: a one-function
# binary that depends on backoff-runtime (default features; then without
# tokio) and one that depends on backon, each built cold in its own
# temporary project and target directory. Prints the crate count and the
# CPU time (user + sys, so other load on the machine counts little) and the
# wall time of each build. Needs crates.io (cargo fetch) the first time.
#
#   bash scripts/dep-tree-cost.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

project() { # name, dependency line, main.rs
    mkdir -p "$work/$1/src"
    printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n%s\n\n[workspace]\n' "$1" "$2" >"$work/$1/Cargo.toml"
    printf '%s\n' "$3" >"$work/$1/src/main.rs"
}

ours_main='use backoff_runtime::retry;
#[retry(max_retries = 2, initial_backoff = "1ms")]
fn f() -> Result<u32, ()> { Ok(1) }
fn main() { println!("{:?}", f()); }'
project ours "backoff-runtime = { path = \"$root/backoff-runtime\" }" "$ours_main"
project ours_sync "backoff-runtime = { path = \"$root/backoff-runtime\", default-features = false, features = [\"macros\"] }" "$ours_main"
project backon 'backon = "1.6"' 'use backon::{BlockingRetryable, ExponentialBuilder};
fn f() -> Result<u32, ()> { Ok(1) }
fn main() { println!("{:?}", f.retry(ExponentialBuilder::default()).call()); }'

for name in ours ours_sync backon; do
    (
        cd "$work/$name"
        cargo fetch -q
        crates=$(cargo tree -e normal --prefix none | sed 's/ (\*)//' | sort -u | wc -l)
        /usr/bin/time -f "%U %S %e" -o times cargo build -q
        read -r user sys wall <times
        printf '%-10s %3d crates  %6.2f s CPU (user+sys)  %6.2f s wall\n' "$name" "$crates" \
            "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" "$wall"
    )
done
