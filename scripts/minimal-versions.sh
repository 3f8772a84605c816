#!/usr/bin/env bash
# The declared floors of the published crates are the versions they build
# and pass their tests with (backoff-grpc's are "tonic 0.14 and what it
# needs": see below).
#
# In a scratch copy of the workspace (the crates only: the root package's
# dev-dependencies are not the users'), starting from the committed
# Cargo.lock, every direct [dependencies] entry of backoff-macros,
# backoff-runtime and backoff-tower (every feature) is pinned to the lowest
# version its requirement accepts; then the crates build with every feature
# and run their own tests (unit and doc). The repository's Cargo.lock and target/
# are untouched.
#
#   scripts/minimal-versions.sh                 check the declared floors
#   scripts/minimal-versions.sh syn=3.0.0 ...   try other versions instead
#                                               (how the floors were found)
#
# A dev-dependency on a crate that is also a normal dependency must not ask
# for more than the normal one (it would lift the tested version above the
# floor unseen): checked first.
#
# MINVER_RESOLVE_ONLY=1 stops after the resolution (no build).
# MINVER_TARGET_DIR (default target/minimal-versions/target) is the target
# directory of the scratch build.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
scratch=$root/target/minimal-versions
ws=$scratch/ws
export CARGO_TARGET_DIR=${MINVER_TARGET_DIR:-$scratch/target}
crates=(backoff-macros backoff-runtime backoff-tower)

declare -A override=()
for arg in "$@"; do
    [[ "$arg" == *=* ]] || { echo "usage: $0 [NAME=VERSION ...]" >&2; exit 2; }
    override[${arg%%=*}]=${arg#*=}
done

# The scratch workspace: a virtual workspace of the crates, with the
# root manifest's [workspace*] tables (everything before its [package]).
rm -rf "$ws"
mkdir -p "$ws"
cp -r "${crates[@]}" README.md "$ws/"
# Its members are these crates alone (the root's list also names the
# unpublished simulator and backoff-grpc, which the scratch copy does not
# hold).
members=$(printf '"%s", ' "${crates[@]}")
awk -v members="members = [${members%, }]" '/^\[package\]/ { exit } /^members = / { print members; next } { print }' \
    Cargo.toml >"$ws/Cargo.toml"
cp Cargo.lock "$ws/Cargo.lock"
# backoff-grpc is left out: tonic 0.14 needs Rust 1.88 and its own tree
# needs a far newer tokio than our floor (its tokio-stream calls tokio
# 1.3x's mpsc methods while declaring ^1.15), so its floor is "tonic 0.14
# and what it needs", checked by the workspace's own tests at the locked
# versions (and so are the floors of serde and serde_json, only it uses).
cargo=(cargo --quiet)
meta() { "${cargo[@]}" metadata --all-features --format-version 1 --manifest-path "$ws/Cargo.toml"; }

# NAME REQUIREMENT RESOLVED: each registry [dependencies] entry of the
# crates (every feature), with the version the resolution holds for it.
direct() {
    meta | jq -r --arg crates "${crates[*]}" '
        ($crates | split(" ")) as $ours
        | (.packages | map({key: .id, value: .}) | from_entries) as $pkg
        | .resolve.nodes[] as $node
        | $pkg[$node.id] | select(.name | IN($ours[])) as $p
        | $p.dependencies[] | select(.kind == null and .source != null) as $d
        | [$node.deps[] | select(any(.dep_kinds[]; .kind == null))
            | $pkg[.pkg] | select(.name == $d.name) | .version][0] as $resolved
        | "\($p.name) \($d.name) \($d.req) \($resolved)"' | sort -u
}

# A requirement's lowest version: ^1.47 -> 1.47.0.
floor_of() {
    local req=$1
    [[ "$req" =~ ^\^?([0-9]+)(\.([0-9]+))?(\.([0-9]+))?$ ]] || {
        echo "unsupported requirement '$req' (use a caret one)" >&2
        return 1
    }
    echo "${BASH_REMATCH[1]}.${BASH_REMATCH[3]:-0}.${BASH_REMATCH[5]:-0}"
}

# Dev-dependencies that would lift a normal dependency above its floor.
bad=$(meta | jq -r --arg crates "${crates[*]}" '
    ($crates | split(" ")) as $ours
    | .packages[] | select(.name | IN($ours[])) as $p
    | [$p.dependencies[] | select(.kind == null)] as $normal
    | $p.dependencies[] | select(.kind == "dev") as $d
    | $normal[] | select(.name == $d.name and .req != $d.req)
    | "\($p.name): dev-dependency \($d.name) = \"\($d.req)\" but [dependencies] \"\(.req)\""')
if [[ -n "$bad" ]]; then
    echo "$bad" >&2
    echo "FAIL: give the dev-dependency the normal one's requirement" >&2
    exit 1
fi

# Pin each to its floor: its requirement in the scratch manifest becomes
# `=FLOOR` (and a dev-dependency's on the same crate too) (as `cargo update -p NAME --precise FLOOR` would, but cargo may
# also move a package that is only locked, not required, out of the way:
# a newer url's quote ^1.0.44 does not lift quote's floor).
declare -A want=()
table=$(direct)
while read -r crate name req resolved; do
    want[$name]=${override[$name]:-$(floor_of "$req")}
    unset "override[$name]"
    awk -v name="$name" -v v="=${want[$name]}" '
        /^\[/ { deps = ($0 == "[dependencies]" || $0 == "[dev-dependencies]") }
        deps && $1 == name && $2 == "=" {
            if (!sub(/^[^=]*= "[^"]*"/, name " = \"" v "\"") &&
                !sub(/version = "[^"]*"/, "version = \"" v "\"")) exit 1
        }
        { print }' "$ws/$crate/Cargo.toml" >"$ws/$crate/Cargo.toml.new"
    mv "$ws/$crate/Cargo.toml.new" "$ws/$crate/Cargo.toml"
done <<<"$table"
((${#override[@]} == 0)) || { echo "not a direct dependency: ${!override[*]}" >&2; exit 2; }

# What is tested is what is declared.
table=$(direct)
while read -r crate name req resolved; do
    if [[ "$resolved" != "${want[$name]}" ]]; then
        echo "FAIL: $crate's $name is at $resolved, not its floor ${want[$name]}" >&2
        exit 1
    fi
done <<<"$table"
echo "floors (the versions tested):"
awk '{ printf "  %-16s %-18s %s\n", $1, $2, $4 }' <<<"$table"

[[ -z "${MINVER_RESOLVE_ONLY:-}" ]] || exit 0
cargo test --manifest-path "$ws/Cargo.toml" -p backoff-macros -p backoff-runtime -p backoff-tower --all-features
echo "ok: backoff-macros, backoff-runtime and backoff-tower build and pass their tests at their declared floors"
