#!/usr/bin/env bash
# `kakeai check` against duo-talk-director's DirectorMinimal, side by side, whole processes
# (start-up included), on the duo-talk corpus ×20 (its `speak` lines repeated 20 times).
#
#   benches/check_vs_minimal.sh DUO_TALK_DIRECTOR_DIR [ROUNDS]
#
# DUO_TALK_DIRECTOR_DIR: a checkout of github.com/kumaxxp/duo-talk-director, outside this repo
# (it is run with the machine's python3; it needs no packages beyond the standard library).
# Env: KAKEAI (default target/release/kakeai), CORPUS (default
# ../shared/corpora/duo-talk/commentary_runs.jsonl), ANALYZER (default auto), TIMES (default 20).
# Prints lines/s per round and program, the ratios, and the medians over ROUNDS (default 5).
# DirectorMinimal gets each line as duo-talk produced it ("Thought: …\nOutput: …", all six
# checks run) and, as "minimal-bare", the text alone (its Thought check then stops at once).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dtd=${1:?usage: $0 DUO_TALK_DIRECTOR_DIR [ROUNDS]}
rounds=${2:-5}
kakeai=${KAKEAI:-$here/target/release/kakeai}
corpus=${CORPUS:-$here/../shared/corpora/duo-talk/commentary_runs.jsonl}
analyzer=${ANALYZER:-auto}
times=${TIMES:-20}
tmp=$(mktemp -d /tmp/check-vs-minimal.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
input=$tmp/corpus.jsonl

python3 - "$corpus" "$input" "$times" <<'PY'
import json, sys
src, dst, times = sys.argv[1], sys.argv[2], int(sys.argv[3])
keep = []
with open(src, encoding="utf-8") as f:
    for line in f:
        try:
            v = json.loads(line)
        except ValueError:
            continue
        if v.get("event") == "speak" and isinstance(v.get("text"), str) and isinstance(v.get("speaker"), str):
            keep.append(line if line.endswith("\n") else line + "\n")
with open(dst, "w", encoding="utf-8") as f:
    f.write("".join(keep) * times)
PY
lines=$(wc -l < "$input")
"$kakeai" check "$input" --analyzer "$analyzer" --fail-on never --threads 1 > "$tmp/out"
used=$(head -1 "$tmp/out" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["analyzer"])')
echo "corpus: $lines lines ($times × the duo-talk speak lines), analyzer $used, $(nproc) cores"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# Seconds (wall) of one command, output to /dev/null.
wall() {
  local s e
  s=$(date +%s%N)
  "$@" > /dev/null
  e=$(date +%s%N)
  echo "$(( (e - s) / 1000 ))"
}

results=$tmp/results
for r in $(seq 1 "$rounds"); do
  m=$(wall python3 "$here/benches/minimal_runner.py" "$dtd" "$input")
  b=$(wall python3 "$here/benches/minimal_runner.py" "$dtd" "$input" --bare)
  k1=$(wall "$kakeai" check "$input" --analyzer "$analyzer" --fail-on never --threads 1)
  k2=$(wall "$kakeai" check "$input" --analyzer "$analyzer" --fail-on never --threads 2)
  echo "$m $b $k1 $k2" >> "$results"
  awk -v n="$lines" -v r="$r" '{printf "round %d: minimal %7.0f  minimal-bare %7.0f  kakeai(1 thread) %8.0f  kakeai(2 threads) %8.0f lines/s   ratios 1t %.1f× 2t %.1f× (bare: %.1f× / %.1f×)\n", r, n/$1*1e6, n/$2*1e6, n/$3*1e6, n/$4*1e6, $1/$3, $1/$4, $2/$3, $2/$4}' <<< "$m $b $k1 $k2"
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$results" "$lines" <<'PY'
import statistics, sys
rows = [list(map(int, l.split())) for l in open(sys.argv[1])]
n = int(sys.argv[2])
med = lambda xs: statistics.median(xs)
m, b, k1, k2 = (med([r[i] for r in rows]) for i in range(4))
print(f"median lines/s: minimal {n/m*1e6:,.0f} · minimal-bare {n/b*1e6:,.0f} · "
      f"kakeai 1 thread {n/k1*1e6:,.0f} · kakeai 2 threads {n/k2*1e6:,.0f}")
r1 = med([r[0] / r[2] for r in rows]); r2 = med([r[0] / r[3] for r in rows])
b1 = med([r[1] / r[2] for r in rows]); b2 = med([r[1] / r[3] for r in rows])
print(f"median ratio vs minimal: {r1:.1f}× (1 thread), {r2:.1f}× (2 threads); "
      f"vs minimal-bare: {b1:.1f}× / {b2:.1f}×")
PY
