#!/usr/bin/env bash
# Instructions per call on the happy path, counted by valgrind's callgrind.
#
#   bash scripts/callgrind.sh            # plain vs #[retry], sync and async
#   bash scripts/callgrind.sh --all      # every variant of benches/happy_path.rs (peers too)
#   K=200000 bash scripts/callgrind.sh   # iterations of the short run (default 100000)
#   METRICS=1 bash scripts/callgrind.sh  # with the runtime's `metrics` feature on
#   CHAOS=1 VARIANTS="chaos/sync_retry chaos/sync_rate_zero" bash scripts/callgrind.sh  # fault injection's variants (feature `chaos`)
#   VARIANTS="sync/policy_retry async/policy_retry" bash scripts/callgrind.sh  # these (and the plain ones) only
#
# Runs the happy_path bench binary (release, the `bench` profile) in its
# callgrind mode (HAPPY_PATH_CALLGRIND="<variant> <n>": n calls of one variant
# and nothing else) with K and 2K calls. Instructions per call are
# (total(2K) - total(K)) / K, so process start-up, the tokio runtime's
# construction and valgrind's own start cancel out. The calling loop's own
# cost (harness/empty: a function returning Ok(x)) is measured too and
# subtracted ("net"). Counts are deterministic: the same binary gives the
# same numbers on every run.
#
# Checks the performance targets of BENCHMARKS.md: a sync #[retry] call costs at
# most 2 instructions more than the plain call, an async one at most 2x.
# Exits 1 when a target is missed (after printing everything).
set -euo pipefail
cd "$(dirname "$0")/.."

K=${K:-100000}
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }

# The runtime's `metrics` feature is on by default in this workspace's tests;
# the figures are measured without it unless METRICS=1.
features=(--no-default-features)
[ "${METRICS:-0}" = 1 ] && features+=(--features metrics)
[ "${CHAOS:-0}" = 1 ] && features+=(--features chaos)

exe=$(cargo bench --bench happy_path --no-run "${features[@]}" --message-format=json 2>/dev/null |
    grep '"name":"happy_path"' | grep -o '"executable":"[^"]*"' | tail -1 | cut -d'"' -f4)
[ -x "$exe" ] || { echo "could not build the happy_path bench binary" >&2; exit 2; }

out_dir=${CARGO_TARGET_DIR:-target}/callgrind
mkdir -p "$out_dir"

# total instructions (Ir) of one run: <variant> <calls>
total() {
    local file="$out_dir/$(echo "$1" | tr / _).$2.out"
    HAPPY_PATH_CALLGRIND="$1 $2" valgrind --tool=callgrind --callgrind-out-file="$file" "$exe" >/dev/null 2>&1
    grep -E '^(summary|totals):' "$file" | head -1 | awk '{print $2}'
}

per_call() {
    local a b
    a=$(total "$1" "$K")
    b=$(total "$1" $((2 * K)))
    awk -v a="$a" -v b="$b" -v k="$K" 'BEGIN { printf "%.2f", (b - a) / k }'
}

if [ -n "${VARIANTS:-}" ]; then
    variants="sync/plain async/plain $VARIANTS"
elif [ "${1:-}" = "--all" ]; then
    variants=$(HAPPY_PATH_CALLGRIND=list "$exe" | grep -v '^harness/')
else
    variants="sync/plain sync/retry_literal sync/retry_policy_const async/plain async/retry_literal async/retry_policy_const"
fi

# The calling loop itself (a function returning Ok(x)): subtracted to get
# the cost of the call alone ("net").
harness=$(per_call harness/empty)

report="$out_dir/instructions.md"
{
    echo "# Instructions per happy-path call (callgrind, (Ir(2K) - Ir(K)) / K, K = $K, metrics feature: ${METRICS:-0})"
    echo
    echo "The calling loop with a function that returns \`Ok(x)\` costs $harness instructions per call; \"net\" subtracts it."
    echo
    echo "| variant | instructions/call | net | net vs plain of its group |"
    echo "|---|---:|---:|---:|"
} >"$report"

declare -A net
for v in $variants; do
    gross=$(per_call "$v")
    net[$v]=$(awk -v x="$gross" -v h="$harness" 'BEGIN { printf "%.2f", x - h }')
    group=${v%%/*}
    plain=${net[$group/plain]:-}
    if [ -n "$plain" ]; then
        cmp=$(awk -v x="${net[$v]}" -v p="$plain" 'BEGIN { printf "%+.2f instr, %.2fx", x - p, x / p }')
    else
        cmp="n/a"
    fi
    echo "| $v | $gross | ${net[$v]} | $cmp |" >>"$report"
done
cat "$report"
echo
echo "written to $report"

status=0
# The targets need the literal variants (not measured with VARIANTS unless named).
[ -n "${net[sync/retry_literal]:-}" ] && [ -n "${net[async/retry_literal]:-}" ] || exit 0
sync_delta=$(awk -v a="${net[sync/retry_literal]}" -v b="${net[sync/plain]}" 'BEGIN { printf "%.2f", a - b }')
async_ratio=$(awk -v a="${net[async/retry_literal]}" -v b="${net[async/plain]}" 'BEGIN { printf "%.2f", a / b }')
if awk -v d="$sync_delta" 'BEGIN { exit !(d <= 2) }'; then
    echo "sync:  #[retry] - plain = $sync_delta instructions per call (target <= 2): met"
else
    echo "sync:  #[retry] - plain = $sync_delta instructions per call (target <= 2): MISSED"
    status=1
fi
if awk -v r="$async_ratio" 'BEGIN { exit !(r <= 2) }'; then
    echo "async: #[retry] / plain = ${async_ratio}x, net of the loop (target <= 2x): met"
else
    echo "async: #[retry] / plain = ${async_ratio}x, net of the loop (target <= 2x): MISSED"
    status=1
fi
exit $status
