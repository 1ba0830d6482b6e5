#!/bin/sh
# Server instructions per connect (accept, upgrade or key exchange, token check, CONNECT's answer):
# the Parley server runs under callgrind (one output file per thread), connect-path.ts connects
# CONNECTS clients with the bench's own client and dumps the server's counts right before and
# right after, so each thread's second dump holds the connects alone. Prints every thread's
# total and the sum over all threads per connect (the JIT's compilation threads included).
# Usage: [CP_SERVER_NODE_FLAGS=--perf-basic-prof] bench/callgrind-connect-server.sh PROTOCOL [CONNECTS] [WARM] [OUTDIR]
set -e
cd "$(dirname "$0")/.."
proto=${1:-jsonrpc}; n=${2:-500}; warm=${3:-0}; out=${4:-/tmp/callgrind-connect-server}
mkdir -p "$out"
f="$out/$proto-$n-$warm.out"
rm -f "$f" "$f".*
PARLEY_BENCH_SERVER_WRAP="valgrind --tool=callgrind --trace-children=yes --separate-threads=yes --callgrind-out-file=$f" \
CALLGRIND_SERVER=1 node --conditions=@parley/source --import tsx bench/connect-path.ts "$proto" "$n" "$warm" >"$f.txt" 2>"$f.log"
total=0
for t in "$f".2-*; do
  c=$(sed -n 's/^summary: *//p' "$t" | head -1)
  total=$((total + c))
  echo "  $(basename "$t"): $c"
done
echo "$proto connects=$n warm=$warm: server, every thread, measured phase $total instructions, per connect: $((total / n))"
