#!/usr/bin/env bash
# Start-up to the first frame: ROUNDS starts of `kakeai --exit-after-first-frame` in a
# pseudo-terminal (util-linux `script`), wall time per start (the process exits right after the
# frame is drawn), then the median and range; with `perf` installed, also its CPU (task-clock).
#
#   benches/startup.sh [ROUNDS] [KAKEAI ARGS...]     e.g. benches/startup.sh 20 --analyzer lindera --db runs.db
#
# Env: KAKEAI (default target/release/kakeai).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-20}
shift || true
kakeai=${KAKEAI:-$here/target/release/kakeai}
tmp=$(mktemp -d /tmp/kakeai-startup.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
args=$(printf ' %q' "$@")
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
script -qec "for i in \$(seq $rounds); do s=\$(date +%s%N); $(printf %q "$kakeai") --exit-after-first-frame$args; e=\$(date +%s%N); echo \$(( (e - s) / 1000 )) >> $tmp/us; done" /dev/null > /dev/null
python3 - "$tmp/us" <<'PY'
import statistics, sys
us = sorted(int(l) for l in open(sys.argv[1]))
print(f"wall to first frame over {len(us)} starts: median {statistics.median(us)/1000:.1f} ms, "
      f"range {us[0]/1000:.1f}–{us[-1]/1000:.1f} ms")
PY
if command -v perf > /dev/null; then
  script -qec "perf stat -r $rounds -o $tmp/perf $(printf %q "$kakeai") --exit-after-first-frame$args" /dev/null > /dev/null
  grep -E "task-clock|elapsed" "$tmp/perf" | sed 's/^ */perf: /'
fi
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
