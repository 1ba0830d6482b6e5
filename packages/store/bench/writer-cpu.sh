#!/bin/sh
# Instructions per appended message by thread (callgrind), the measured phase of
# bench/writer-cpu.ts only: counters zeroed after its warm-up and dumped after its
# last batch, for `half` and `2 × half` messages; the difference per thread,
# divided by `half`, leaves out whatever a run costs whatever its length.
#
#   sh packages/store/bench/writer-cpu.sh OUT [half=2000] [batch=10] [prefill=50000] [channels=500]
#
# Run from the repository root after `npm run build -w @parley/store`; OUT receives the
# callgrind files (OUT/n<count>/cg.<pid>.<dump>-<thread>) and the store (OUT/store).
# WRITER_BENCH_WARMUP (messages before the measured ones, default 12,000) and
# WRITER_BENCH_MARK_APPLY_MS (the store's markApplyMs, wall time) are passed through.
set -eu
out=$1
half=${2:-2000}
batch=${3:-10}
prefill=${4:-50000}
channels=${5:-500}
mkdir -p "$out/store"
for n in $half $((half * 2)); do
  d=$out/n$n
  rm -rf "$d"
  mkdir -p "$d/sync"
  WRITER_BENCH_SYNC=$d/sync nice -n 19 valgrind --tool=callgrind --separate-threads=yes --smc-check=all-non-file \
    --collect-atstart=yes --callgrind-out-file="$d/cg.%p" \
    node --import tsx packages/store/bench/writer-cpu.ts "$prefill" "$n" "$batch" "$channels" "$out/store" >"$d/out.txt" 2>"$d/err.txt" &
  while [ ! -f "$d/sync/warm" ]; do sleep 0.5; done
  pid=$(cat "$d/sync/warm")
  callgrind_control --zero "$pid" >/dev/null
  touch "$d/sync/go"
  while [ ! -f "$d/sync/done" ]; do sleep 0.5; done
  callgrind_control --dump=measured "$pid" >/dev/null
  touch "$d/sync/end"
  wait
done
# The dump's files are the ones named <pid>.1-<thread>; threads by creation order.
for f in "$out/n$half"/cg.*.1-*; do
  t=${f##*-}
  a=$(grep -E '^(summary|totals):' "$f" | head -1 | awk '{print $2}')
  b=$(grep -E '^(summary|totals):' "$out/n$((half * 2))"/cg.*.1-"$t" | head -1 | awk '{print $2}')
  echo "thread $t: $a $b -> $(((b - a) / half)) per message"
done
