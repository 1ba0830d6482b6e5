#!/bin/bash
# Instructions per call of crypto-calls.ts's operation under callgrind: the second dump holds the
# measured calls alone. V8 compiles synchronously (--no-concurrent-recompilation) so that two
# builds tier up at the same calls whatever valgrind's thread scheduling does.
# Usage: bench/crypto-calls.sh [PROTOCOL_DIST] [seal|decrypt|template] [CALLS] [OUTDIR]
set -e
cd "$(dirname "$0")/.."
dist=$(realpath "${1:-dist}"); op=${2:-seal}; n=${3:-20000}; out=${4:-/tmp/crypto-calls}
mkdir -p "$out"; rm -f "$out/$op.out"*
valgrind --tool=callgrind --callgrind-out-file="$out/$op.out" \
  node --perf-basic-prof --single-threaded-gc --no-concurrent-recompilation --import tsx bench/crypto-calls.ts "$dist" "$op" "$n" \
  >/dev/null 2>"$out/$op.log"
measured=$(sed -n 's/^summary: *//p' "$out/$op.out.2")
echo "$dist $op: $n calls, $measured instructions, per call: $((measured / n))"
