#!/bin/sh
# Server main-thread instructions per group delivery (send, fan-out, RECV write, recvack): the
# Parley server runs under callgrind (one output file per thread), group-deliveries.ts drives it
# with real clients over real sockets and dumps the server's counts right before and right after
# the measured phase, so each thread's second dump holds that phase alone. Prints the main
# thread's total over the deliveries (N messages x MEMBERS receivers).
# Usage: [GD_SERVER_NODE_FLAGS=--perf-basic-prof] bench/callgrind-group-server.sh PROTOCOL [MEMBERS] [N] [OUTDIR]
# (--perf-basic-prof writes /tmp/perf-PID.map: the names of the JIT code addresses in the profile)
set -e
cd "$(dirname "$0")/.."
proto=${1:-jsonrpc}; members=${2:-100}; n=${3:-200}; out=${4:-/tmp/callgrind-group-server}
mkdir -p "$out"
f="$out/$proto-$members-$n.out"
rm -f "$f" "$f".*
PARLEY_BENCH_SERVER_WRAP="valgrind --tool=callgrind --trace-children=yes --separate-threads=yes --callgrind-out-file=$f" \
CALLGRIND_SERVER=1 node --conditions=@parley/source --import tsx bench/group-deliveries.ts "$proto" "$members" "$n" >/dev/null 2>"$f.log"
# The main thread's file of the second dump: callgrind names it <file>.2-01 (dump 2, thread 1).
main=$(ls "$f".2-01 2>/dev/null || ls "$f"*.2-01 | head -1)
phase=$(sed -n 's/^summary: *//p' "$main" | head -1)
echo "$proto members=$members N=$n: server main thread, measured phase $phase instructions, per delivery: $((phase / (n * members)))"
for t in "$f".2-*; do echo "  $(basename "$t"): $(sed -n 's/^summary: *//p' "$t" | head -1)"; done
