"""Runs duo-talk-director's DirectorMinimal over a `kakeai check` JSONL input, one JSON verdict
per line on stdout — the other half of benches/check_vs_minimal.sh.

Usage: python3 benches/minimal_runner.py DUO_TALK_DIRECTOR_DIR INPUT.jsonl [--bare]

DUO_TALK_DIRECTOR_DIR is a checkout of github.com/kumaxxp/duo-talk-director (MIT), kept outside
this repository. Each line is given as duo-talk's generator produced it, "Thought: …\\nOutput: …",
so all six static checks run; --bare passes the text alone (the Thought check then stops every
line at once with RETRY).
"""

import json
import sys

SPEAKERS = {"A": "やな", "B": "あゆ", "yana": "やな", "ayu": "あゆ", "やな": "やな", "あゆ": "あゆ"}


def main() -> int:
    root, path = sys.argv[1], sys.argv[2]
    bare = "--bare" in sys.argv[3:]
    sys.path.insert(0, root + "/src")
    from duo_talk_director import DirectorMinimal  # noqa: E402

    director = DirectorMinimal()
    out = sys.stdout
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            r = json.loads(line)
            speaker = SPEAKERS.get(r.get("speaker", ""), r.get("speaker", ""))
            text = r["text"]
            response = text if bare else f"Thought: ({speaker}として自然に返す)\nOutput: {text}"
            e = director.evaluate_response(speaker, response, "", [], n)
            out.write(
                json.dumps(
                    {"id": r.get("id", str(n)), "verdict": e.status.value, "reason": e.reason},
                    ensure_ascii=False,
                )
                + "\n"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
