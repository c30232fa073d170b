#!/usr/bin/env bash
# A 6-turn headless duo run with the LLM judge on, against a REAL instruct model
# (SmolLM2-135M-Instruct served by llama.cpp's llama-server; see
# ../shared/tools/llm-server/README.md). Every request body is logged
# (KAKEAI_REQUEST_LOG) so the prompts can be read; the figures are printed at the end.
#
#   scripts/real_model_run.sh [PORT] [KAKEAI_BINARY]
#
# Needs ../shared/tools/llm-server/setup.sh to have been run once. Starts the server, runs,
# summarises, stops the server (only the one it started). Output stays in $OUT (default
# a fresh temp dir): events.jsonl, requests.jsonl, kakeai.db, summary.txt.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${LLM_SERVER_TOOLS:-/work/shared/tools/llm-server}"
PORT="${1:-18190}"
BIN="${2:-$HERE/target/release/kakeai}"
OUT="${OUT:-$(mktemp -d /tmp/kakeai-real.XXXXXX)}"
mkdir -p "$OUT/config"

eval "$("$TOOLS/start.sh" "$PORT" --smol)"
trap '"$TOOLS/stop.sh" "$PORT" >/dev/null 2>&1 || true' EXIT

# The small model runs to max_tokens easily: bound the reply so a run takes minutes, not hours.
cat > "$OUT/config/llm.toml" <<TOML
endpoint = "$BASE_URL"
model = "$MODEL"
max_tokens = ${MAX_TOKENS:-160}
TOML

START=$(date +%s)
set +e
KAKEAI_CONFIG_DIR="$OUT/config" KAKEAI_REQUEST_LOG="$OUT/requests.jsonl" \
  "$BIN" run --headless --topic "${TOPIC:-商店街の夏祭り}" --turns 6 --tokens \
  --db "$OUT/kakeai.db" --out "$OUT/events.jsonl"
CODE=$?
set -e
END=$(date +%s)
echo "exit $CODE after $((END - START)) s; output in $OUT" | tee "$OUT/summary.txt"
python3 "$HERE/scripts/real_model_summary.py" "$OUT" | tee -a "$OUT/summary.txt"
exit $CODE
