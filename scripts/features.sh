#!/usr/bin/env bash
# backoff-runtime builds without a warning under each of its features alone
# (every name of its [features] but `default`), under none and under the
# default set. The workspace's own builds always unify several features, so
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

manifest=backoff-runtime/Cargo.toml
# The feature names: `name = [...]` lines of the [features] table.
features=$(awk '
    /^\[/ { in_features = ($0 == "[features]"); next }
    in_features && /^[a-z][a-z0-9_-]* *=/ { sub(/ *=.*/, ""); if ($0 != "default") print }
' "$manifest")
[[ -n "$features" ]] || { echo "no features read from $manifest" >&2; exit 1; }

failed=()
check() {
    local label=$1
    shift
    local output
    if ! output=$(cargo check -p backoff-runtime --message-format short "$@" 2>&1); then
        printf '%s\n' "$output"
        failed+=("$label (error)")
    elif grep -q 'warning:' <<<"$output"; then
        echo "warnings: $label"
        grep 'warning:' <<<"$output"
        failed+=("$label (warning)")
    else
        echo "ok: $label"
    fi
}

check "default features"
check "--no-default-features" --no-default-features
for feature in $features; do
    check "--features $feature" --no-default-features --features "$feature"
done

if ((${#failed[@]})); then
    echo "backoff-runtime warns or fails with:" >&2
    printf '  %s\n' "${failed[@]}" >&2
    exit 1
fi
