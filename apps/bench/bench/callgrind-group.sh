#!/bin/sh
# Generator instructions per group delivery (see group-deliveries.ts), under callgrind: the measured
# phase's own dump (CALLGRIND_DUMP), divided by its deliveries.
# Usage: [NODE_EXTRA=--perf-basic-prof] bench/callgrind-group.sh PROTOCOL [MEMBERS] [N] [OUTDIR]
# (--perf-basic-prof writes /tmp/perf-PID.map: the names of the JIT code addresses in the profile)
set -e
cd "$(dirname "$0")/.."
proto=${1:-jsonrpc}; members=${2:-50}; n=${3:-400}; out=${4:-/tmp/callgrind-group}
mkdir -p "$out"
f="$out/$proto-$n.out"
rm -f "$f" "$f".*
CALLGRIND_DUMP=1 valgrind --tool=callgrind --callgrind-out-file="$f" \
  node $NODE_EXTRA --conditions=@parley/source --import tsx bench/group-deliveries.ts "$proto" "$members" "$n" >/dev/null 2>"$f.log"
phase=$(sed -n 's/^summary: *//p' "$f.2" | head -1)
echo "$proto members=$members N=$n: measured phase $phase instructions, per delivery: $((phase / (n * members)))"
