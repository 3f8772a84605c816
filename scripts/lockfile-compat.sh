#!/usr/bin/env bash
# Adding backoff-runtime to an existing project leaves its lockfile's
# versions alone: base64 0.23.1, as published with its
# Cargo.lock (syn 3.0.3 under clap_derive 4.6.4, rand 0.10.2,
# pin-project-lite 0.2.17), gets `backoff-runtime = { path = ... }` with
# every feature; cargo must resolve it by adding packages only, never by
# moving one that was locked.
#
#   scripts/lockfile-compat.sh           resolution only (cargo tree): seconds
#   scripts/lockfile-compat.sh --build   also builds base64 + backoff-runtime
#                                        against that lockfile (--locked)
#
# base64's source comes from crates.io through cargo itself: a throwaway
# project depending on `base64 = "=0.23.1"` and `cargo fetch` unpack it
# into ~/.cargo/registry/src. Scratch files live in
# target/lockfile-compat; nothing of the repository changes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
crate=base64
version=0.23.1
build=0
[[ "${1:-}" == "--build" ]] && build=1

scratch=$root/target/lockfile-compat
rm -rf "$scratch"
mkdir -p "$scratch/fetch/src"
# 1. The published crate, unpacked by cargo.
cat >"$scratch/fetch/Cargo.toml" <<EOF
[package]
name = "fetch-$crate"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]

[dependencies]
$crate = "=$version"
EOF
echo 'fn main() {}' >"$scratch/fetch/src/main.rs"
cargo fetch --quiet --manifest-path "$scratch/fetch/Cargo.toml"
src=$(cargo metadata --quiet --format-version 1 --manifest-path "$scratch/fetch/Cargo.toml" |
    jq -r --arg n "$crate" --arg v "$version" \
        '.packages[] | select(.name == $n and .version == $v) | .manifest_path' |
    xargs dirname)
[[ -f "$src/Cargo.lock" ]] || { echo "no Cargo.lock published in $src" >&2; exit 1; }

# 2. A copy of it, its own workspace root (it sits under ours), with
#    backoff-runtime added and its published Cargo.lock.
proj=$scratch/$crate
cp -r "$src" "$proj"
chmod -R u+w "$proj"
cp "$proj/Cargo.lock" "$scratch/Cargo.lock.published"
cat >>"$proj/Cargo.toml" <<EOF

[workspace]

[dependencies.backoff-runtime]
path = "$root/backoff-runtime"
features = ["tracing", "http", "reqwest", "metrics"]
EOF

# 3. Resolve against the published lockfile (cargo adds what is missing and
#    keeps what is locked, or fails as it did before the floors were set).
locked() { grep -A1 '^name = ' "$1" | paste - - - 2>/dev/null | sed -E 's/name = "([^"]*)".*version = "([^"]*)".*/\1 \2/' | sort; }
if ! cargo tree --quiet --manifest-path "$proj/Cargo.toml" --edges normal >"$scratch/tree.txt" 2>"$scratch/resolve.err"; then
    cat "$scratch/resolve.err" >&2
    echo "FAIL: $crate $version's lockfile does not take backoff-runtime" >&2
    exit 1
fi
moved=$(comm -23 <(locked "$scratch/Cargo.lock.published") <(locked "$proj/Cargo.lock"))
if [[ -n "$moved" ]]; then
    echo "FAIL: adding backoff-runtime moved packages locked by $crate $version:" >&2
    echo "$moved" >&2
    exit 1
fi
added=$(comm -13 <(locked "$scratch/Cargo.lock.published") <(locked "$proj/Cargo.lock") | wc -l)
echo "ok: $crate $version's Cargo.lock takes backoff-runtime (every feature): $added packages added, none of its $(locked "$scratch/Cargo.lock.published" | wc -l) locked ones moved"
grep -E '^[│├└ ]*[├└]── (backoff-runtime|backoff-macros|syn|quote|proc-macro2|rand|pin-project-lite) ' "$scratch/tree.txt" | sed -e "s/^[│├└─ ]*/  /" -e "s/ (\*)$//" | sort -u

if ((build)); then
    cargo build --locked --manifest-path "$proj/Cargo.toml" --target-dir "$scratch/target"
    echo "ok: $crate $version builds with backoff-runtime against that lockfile (--locked)"
fi
