#!/bin/sh
# Context switches and CPU time per appended message by thread, the measured phase of
# bench/writer-cpu.ts only (no valgrind: the real timing): voluntary and involuntary switches
# and the time on CPU of every thread (/proc/<pid>/task/*/status and schedstat, nanoseconds),
# read after its warm-up and after its last batch, divided by the measured messages. Time on
# CPU counts what instructions do not (cache misses, the kernel's work); on a shared machine
# compare variants in alternated runs. The process is pinned to one core (`CPU`, default 1),
# as the bench pins the server, so every hand-off between two threads is a switch.
#
#   sh packages/store/bench/writer-switches.sh OUT [messages=4000] [batch=10] [prefill=50000] [channels=500]
#
# Run from the repository root after `npm run build -w @parley/store`; OUT receives the store
# (OUT/store, its base kept for later runs). WRITER_BENCH_WARMUP is passed through.
set -eu
out=$1
n=${2:-4000}
batch=${3:-10}
prefill=${4:-50000}
channels=${5:-500}
cpu=${CPU:-1}
mkdir -p "$out/store"
sync=$out/sync
rm -rf "$sync"
mkdir -p "$sync"
snap() {
  for t in /proc/"$1"/task/*; do
    printf '%s %s %s\n' "${t##*/}" \
      "$(awk '/^voluntary_ctxt_switches/ { v = $2 } /^nonvoluntary_ctxt_switches/ { i = $2 } END { print v, i }' "$t/status")" \
      "$(cut -d' ' -f1 "$t/schedstat")"
  done | sort
}
WRITER_BENCH_SYNC=$sync nice -n 19 taskset -c "$cpu" node --import tsx packages/store/bench/writer-cpu.ts \
  "$prefill" "$n" "$batch" "$channels" "$out/store" >"$out/out.txt" 2>"$out/err.txt" &
while [ ! -f "$sync/warm" ]; do sleep 0.1; done
pid=$(cat "$sync/warm")
snap "$pid" >"$out/before"
touch "$sync/go"
while [ ! -f "$sync/done" ]; do sleep 0.05; done
snap "$pid" >"$out/after"
touch "$sync/end"
wait
# Threads by id (the main thread's id is the process id); only those that switched or ran.
join "$out/before" "$out/after" | awk -v n="$n" -v pid="$pid" '{
  v = $5 - $2; i = $6 - $3; c = ($7 - $4) / 1000 / n
  if (v + i > 0 || c >= 0.05) printf "thread %s%s: voluntary %.3f, involuntary %.3f, CPU %.2f µs per message\n", $1, ($1 == pid ? " (main)" : ""), v / n, i / n, c
  tv += v; ti += i; tc += c
} END { printf "all threads: voluntary %.3f, involuntary %.3f, CPU %.2f µs per message\n", tv / n, ti / n, tc }'
tail -1 "$out/out.txt"
