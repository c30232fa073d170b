#!/usr/bin/env python3
"""Figures and a prompt read-out for scripts/real_model_run.sh: time to first token, tokens/s,
judge scored ratio, attempts per turn, and per request who spoke, which roles were sent, the
Director guidance and the world/vault section each sister got."""
import json, re, sys, statistics, pathlib

out = pathlib.Path(sys.argv[1])
events = [json.loads(l) for l in (out / "events.jsonl").read_text().splitlines() if l.strip()]
reqs = [json.loads(l) for l in (out / "requests.jsonl").read_text().splitlines() if l.strip()]

done = [e for e in events if e["event"] == "attempt_done"]
end = next((e for e in events if e["event"] == "run_done"), None)
ttft = [e["first_token_ms"] for e in done if e.get("first_token_ms") is not None]
rates = [e["tokens"] / ((e["latency_ms"] - e["first_token_ms"]) / 1000)
         for e in done if e.get("first_token_ms") is not None and e["latency_ms"] > e["first_token_ms"] and e["tokens"]]
judged = [e for e in done if e.get("judge_status") is not None]
scored = [e for e in judged if e.get("judge") is not None]
print(f"run: {end['status'] if end else 'NO run_done'}; turns {end and end['turns']}; attempts {len(done)}")
if ttft:
    print(f"time to first token: median {statistics.median(ttft)/1000:.1f} s (min {min(ttft)/1000:.1f}, max {max(ttft)/1000:.1f})")
if rates:
    print(f"generation: median {statistics.median(rates):.1f} tokens/s (min {min(rates):.1f}, max {max(rates):.1f})")
print(f"judge: {len(scored)}/{len(judged)} replies scored, {len(judged)-len(scored)} UNSCORED")
print(f"fell back: {sum(1 for e in done if e.get('fell_back'))}; cut by the token limit: "
      f"{sum(1 for e in done if e.get('length_cut'))}; prompt tokens: "
      f"{[e.get('prompt_tokens') for e in done]}")
per_turn = {}
for e in done:
    per_turn.setdefault(e["turn"], []).append(e["verdict"])
print("verdicts per turn:", {t: v for t, v in sorted(per_turn.items())})

print("\nrequests:")
for i, r in enumerate(reqs):
    b = r.get("body") or {}
    msgs = b.get("messages") or []
    if not msgs:
        print(f"{i:3} {r['url']}")
        continue
    roles = "".join(m["role"][0] for m in msgs)
    last = msgs[-1]["content"]
    kind = "judge" if "response_format" in b else ("line" if b.get("stream") else "line(non-stream)")
    who = re.search(r"次の(\S+?)の発言", last)
    guide = re.search(r"【ディレクターからの指示】\n(.*?)(?:\n\n|$)", last, re.S)
    world = re.search(r"【世界設定】\n(.*?)\n\n【話題】", msgs[0]["content"], re.S)
    print(f"{i:3} {kind:5} {who.group(1) if who else '-':3} roles={roles} "
          f"system_role={'yes' if msgs[0]['role'] == 'system' else 'no'}")
    if guide:
        for g in guide.group(1).strip().splitlines():
            print(f"      guidance {g}")
    if world and kind == "line":
        print(f"      world ({len(world.group(1))} chars): {world.group(1)[:120]}…")
