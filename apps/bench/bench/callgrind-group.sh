#!/bin/sh
# Generator instructions per group delivery (see group-deliveries.ts), under callgrind: the measured
# phase's own dump (CALLGRIND_DUMP), divided by its deliveries. One output file per thread: the main
# thread's count is the figure; V8's compiler threads, still optimising during a run this short under
# callgrind, move the all-threads total from run to run.
# Usage: [NODE_EXTRA=--perf-basic-prof] bench/callgrind-group.sh PROTOCOL [MEMBERS] [N] [OUTDIR]
# (PROTOCOL: jsonrpc, wkproto, or mosquitto for the broker through the bench's MQTT client)
# (--perf-basic-prof writes /tmp/perf-PID.map: the names of the JIT code addresses in the profile)
set -e
cd "$(dirname "$0")/.."
proto=${1:-jsonrpc}; members=${2:-50}; n=${3:-400}; out=${4:-/tmp/callgrind-group}
mkdir -p "$out"
f="$out/$proto-$n.out"
rm -f "$f" "$f".*
CALLGRIND_DUMP=1 valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$f" \
  node $NODE_EXTRA --conditions=@parley/source --import tsx bench/group-deliveries.ts "$proto" "$members" "$n" >/dev/null 2>"$f.log"
# The second dump of thread 1 (the main thread): callgrind names it <file>.2-01.
main=$(sed -n 's/^summary: *//p' "$f.2-01" | head -1)
all=0
for t in "$f".2-*; do all=$((all + $(sed -n 's/^summary: *//p' "$t" | head -1))); done
echo "$proto members=$members N=$n: measured phase, main thread $main instructions, per delivery: $((main / (n * members))) (all threads $((all / (n * members))))"
