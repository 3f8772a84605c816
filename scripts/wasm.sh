#!/usr/bin/env bash
# The wasm32 steps of CI:
# - the targets, Node, and wasm-bindgen-test-runner at the lockfile's
#   wasm-bindgen version;
# - clippy for wasm32-unknown-unknown;
# - a sync `#[retry]` for wasm32-unknown-unknown is a compile error that
#   names the attribute;
# - the wasm tests (tests/wasm) in Node;
# - two Node processes draw different jitter;
# - the runtime's default features compile for wasm32-wasip2.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf -- '--> %s\n' "$*"; }

step "targets"
rustup target add wasm32-unknown-unknown wasm32-wasip2

step "wasm-bindgen-test-runner at the lockfile's wasm-bindgen"
version=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ -z "$version" ]; then
    echo "no wasm-bindgen in Cargo.lock" >&2
    exit 1
fi
if [ "$(wasm-bindgen-test-runner --version 2>/dev/null || true)" != "wasm-bindgen-test-runner $version" ]; then
    # No default features: the runner's TLS (rustls, for downloading
    # browser drivers) is not needed for Node, and leaving it out saves
    # building ring. Not `--locked`: the crate's own lockfile names a
    # webpki-roots release the registry here does not carry.
    # Only the runner: the crate's other binaries are not used here.
    cargo install wasm-bindgen-cli --version "$version" --no-default-features --bin wasm-bindgen-test-runner
fi

step "Node"
if ! command -v node >/dev/null; then
    apt-get update
    apt-get install -y --no-install-recommends nodejs
fi
# getrandom's `wasm_js` backend reads the global `crypto`: built in from
# Node 19, behind a flag in Node 18 (Debian 12's).
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 19 ]; then
    export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--experimental-global-webcrypto"
fi
node --version

export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner

step "clippy for wasm32-unknown-unknown: the runtime and the wasm tests"
cargo clippy --quiet -p backoff-runtime --lib --target wasm32-unknown-unknown -- -D warnings
cargo clippy --quiet -p backoff-wasm-tests --tests --target wasm32-unknown-unknown -- -D warnings

step "a sync #[retry] does not compile for wasm32-unknown-unknown"
if out=$(cargo check --quiet -p backoff-wasm-tests --features sync-fixture --target wasm32-unknown-unknown 2>&1); then
    echo "a sync #[retry] compiled for wasm32-unknown-unknown" >&2
    exit 1
fi
expected='`#[retry]` on a sync function cannot wait on wasm32-unknown-unknown: there is no thread to sleep on'
if ! grep -qF -- "$expected" <<<"$out"; then
    printf 'the error does not say %s:\n%s\n' "$expected" "$out" >&2
    exit 1
fi
# The fixture itself is sound: natively it builds and passes its doctest.
cargo test --quiet -p backoff-wasm-tests --features sync-fixture --doc

step "the wasm tests in Node"
cargo test -p backoff-wasm-tests --target wasm32-unknown-unknown

step "two Node processes draw different jitter"
draws() {
    # Not `--quiet`: cargo would pass it to the runner, which refuses it.
    cargo test -p backoff-wasm-tests --target wasm32-unknown-unknown --test node \
        -- two_runs_draw_different_jitter --nocapture 2>&1 | grep 'first draws of this process'
}
first=$(draws)
second=$(draws)
printf '%s\n%s\n' "$first" "$second"
if [ "$first" = "$second" ]; then
    echo "two processes drew the same jitter: the seed is not random" >&2
    exit 1
fi

step "wasm32-wasip2: the runtime's default features compile"
# `check`, not `build`: nothing runs it here, and codegen would add a minute.
cargo check --quiet -p backoff-runtime --target wasm32-wasip2
