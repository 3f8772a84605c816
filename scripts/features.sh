#!/usr/bin/env bash
# Each published library (backoff-runtime, backoff-tower, backoff-grpc)
# builds without a warning under each of its features alone (every name of
# its [features] but `default`), under none and under the default set. The workspace's own builds always unify several features, so
# an item used by one feature only (and warned about as dead code without
# it) shows only here.
#
#   scripts/features.sh
#
# `cargo check` with the usual flags and target directory: each set's
# artifacts sit beside the others' (cargo hashes the features into their
# names), so nothing of the main build is invalidated, and a set already
# checked replays its warnings from cargo's cache. Any `warning:` in cargo's
# output fails the run, rustc's as well as cargo's own.
set -euo pipefail
cd "$(dirname "$0")/.."

failed=()
check() {
    local crate=$1 label=$2
    shift 2
    local output
    if ! output=$(cargo check -p "$crate" --message-format short "$@" 2>&1); then
        printf '%s\n' "$output"
        failed+=("$crate: $label (error)")
    elif grep -q 'warning:' <<<"$output"; then
        echo "warnings: $crate: $label"
        grep 'warning:' <<<"$output"
        failed+=("$crate: $label (warning)")
    else
        echo "ok: $crate: $label"
    fi
}

for crate in backoff-runtime backoff-tower backoff-grpc; do
    manifest=$crate/Cargo.toml
    # The feature names: `name = [...]` lines of the [features] table.
    features=$(awk '
        /^\[/ { in_features = ($0 == "[features]"); next }
        in_features && /^[a-z][a-z0-9_-]* *=/ { sub(/ *=.*/, ""); if ($0 != "default") print }
    ' "$manifest")
    [[ -n "$features" ]] || { echo "no features read from $manifest" >&2; exit 1; }
    check "$crate" "default features"
    check "$crate" "--no-default-features" --no-default-features
    for feature in $features; do
        check "$crate" "--features $feature" --no-default-features --features "$feature"
    done
done

if ((${#failed[@]})); then
    echo "a library warns or fails with:" >&2
    printf '  %s\n' "${failed[@]}" >&2
    exit 1
fi
