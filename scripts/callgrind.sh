#!/usr/bin/env bash
# Instructions per call on the happy path, counted by valgrind's callgrind.
#
#   bash scripts/callgrind.sh            # plain vs #[retry], sync and async
#   bash scripts/callgrind.sh --all      # every variant of benches/happy_path.rs (peers too)
#   K=200000 bash scripts/callgrind.sh   # iterations of the short run (default 100000)
#
# Runs the happy_path bench binary (release, the `bench` profile) in its
# callgrind mode (HAPPY_PATH_CALLGRIND="<variant> <n>": n calls of one variant
# and nothing else) with K and 2K calls. Instructions per call are
# (total(2K) - total(K)) / K, so process start-up, the tokio runtime's
# construction and valgrind's own start cancel out. Counts are deterministic:
# the same binary gives the same numbers on every run.
#
# Checks the performance contract of DESIGN.md: a sync #[retry] call costs at
# most 2 instructions more than the plain call, an async one at most 2x.
# Exits 1 when a target is missed (after printing everything).
set -euo pipefail
cd "$(dirname "$0")/.."

K=${K:-100000}
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }

exe=$(cargo bench --bench happy_path --no-run --message-format=json 2>/dev/null |
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

if [ "${1:-}" = "--all" ]; then
    variants=$(HAPPY_PATH_CALLGRIND=list "$exe")
else
    variants="sync/plain sync/retry_literal async/plain async/retry_literal"
fi

report="$out_dir/instructions.md"
{
    echo "# Instructions per happy-path call (callgrind, (Ir(2K) - Ir(K)) / K, K = $K)"
    echo
    echo "| variant | instructions/call | vs plain of its group |"
    echo "|---|---:|---:|"
} >"$report"

declare -A per
for v in $variants; do
    per[$v]=$(per_call "$v")
    group=${v%%/*}
    plain=${per[$group/plain]:-}
    if [ -n "$plain" ]; then
        cmp=$(awk -v x="${per[$v]}" -v p="$plain" 'BEGIN { printf "%+.2f instr, %.2fx", x - p, x / p }')
    else
        cmp="n/a"
    fi
    echo "| $v | ${per[$v]} | $cmp |" >>"$report"
done
cat "$report"
echo
echo "written to $report"

status=0
sync_delta=$(awk -v a="${per[sync/retry_literal]}" -v b="${per[sync/plain]}" 'BEGIN { printf "%.2f", a - b }')
async_ratio=$(awk -v a="${per[async/retry_literal]}" -v b="${per[async/plain]}" 'BEGIN { printf "%.2f", a / b }')
if awk -v d="$sync_delta" 'BEGIN { exit !(d <= 2) }'; then
    echo "sync:  #[retry] - plain = $sync_delta instructions per call (target <= 2): met"
else
    echo "sync:  #[retry] - plain = $sync_delta instructions per call (target <= 2): MISSED"
    status=1
fi
if awk -v r="$async_ratio" 'BEGIN { exit !(r <= 2) }'; then
    echo "async: #[retry] / plain = ${async_ratio}x (target <= 2x): met"
else
    echo "async: #[retry] / plain = ${async_ratio}x (target <= 2x): MISSED"
    status=1
fi
exit $status
