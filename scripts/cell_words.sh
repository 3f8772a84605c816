#!/usr/bin/env bash
# Words per Markdown file, and its largest table cell: for BENCHMARKS.md and
# RELIABILITY.md, whose cells hold a figure, its target and its command
# (at most 40 words each). Usage: scripts/cell_words.sh [FILE...]
# (default: BENCHMARKS.md RELIABILITY.md CHANGELOG.md). Exits 1 when a
# cell has more than MAX_CELL_WORDS words (default 40).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- BENCHMARKS.md RELIABILITY.md CHANGELOG.md
python3 - "${MAX_CELL_WORDS:-40}" "$@" <<'PY'
import sys

limit = int(sys.argv[1])
failed = False


def cells(line):
    """The cells of a table row: split on `|` outside code spans."""
    out, cur, code, i = [], "", False, 0
    while i < len(line):
        c = line[i]
        if c == "\\" and i + 1 < len(line):
            cur += line[i : i + 2]
            i += 2
            continue
        if c == "`":
            code = not code
        if c == "|" and not code:
            out.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    out.append(cur)
    return out[1:-1]


for path in sys.argv[2:]:
    text = open(path, encoding="utf-8").read()
    largest, where = 0, ""
    fence = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
        if fence or not line.lstrip().startswith("|"):
            continue
        for cell in cells(line.strip()):
            words = len(cell.split())
            if words > largest:
                largest, where = words, f"line {number}"
    print(f"{path}: {len(text.split())} words, largest cell {largest} words ({where or 'no table'})")
    failed |= largest > limit
sys.exit(1 if failed else 0)
PY
