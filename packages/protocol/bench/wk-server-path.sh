#!/bin/bash
# Main-thread instructions per message of wk-server-path.ts under callgrind: dumps right before
# and right after the measured phase (the second dump of thread 1 holds that phase alone).
# Usage: bench/wk-server-path.sh [PROTOCOL_DIST] [MESSAGES] [WARMUP] [OUTDIR]
# (--perf-basic-prof: /tmp/perf-PID.map names the JIT code addresses; it is copied beside the dumps)
set -e
cd "$(dirname "$0")/.."
dist=$(realpath "${1:-dist}"); n=${2:-10000}; warm=${3:-5000}; out=${4:-/tmp/wk-server-path}
mkdir -p "$out"; rm -f "$out"/wk.out*
coproc WK { WK_PATH_DUMP=1 exec valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out/wk.out" \
  node --perf-basic-prof --single-threaded-gc --no-concurrent-recompilation --import tsx bench/wk-server-path.ts "$dist" "$n" "$warm" 2>"$out/wk.log"; }
pid=$WK_PID
for phase in warm done; do
  read -r line <&"${WK[0]}"
  [ "$line" = "$phase" ] || { echo "expected $phase, got '$line'" >&2; exit 1; }
  callgrind_control -d "$pid" >/dev/null
  echo go >&"${WK[1]}"
done
wait "$pid" || true
cp "/tmp/perf-$pid.map" "$out/wk.out.perf.map" 2>/dev/null || true
main=$(sed -n 's/^summary: *//p' "$out/wk.out.2-01")
echo "$dist: $n messages, main thread $main instructions, per message: $((main / n))"
