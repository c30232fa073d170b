#!/usr/bin/env python3
"""Writes surnames_enamdict.txt and given_enamdict.txt (kanji names only) from ENAMDICT, the
EDRDG's Japanese proper-name dictionary, as Debian's package `enamdict` installs it
(/usr/share/edict/enamdict, EUC-JP). Surnames: entries typed (s), 2-4 kanji. Given names:
entries typed (g), (f) or (m), 2-3 kanji. Deterministic (sorted). Run:
    apt-get install enamdict && python3 assets/safety/pii_tagger/from_enamdict.py
"""
import re
import sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/edict/enamdict"
HEAD = ("# Source: ENAMDICT {ver} (Debian package enamdict), Electronic Dictionary Research and\n"
        "# Development Group, Creative Commons Attribution-ShareAlike 3.0\n"
        "# (https://www.edrdg.org/edrdg/licence.html); this list is a derived work under the same\n"
        "# licence. {what}, written by assets/safety/pii_tagger/from_enamdict.py.\n")
KANJI = re.compile(r"^[\u4e00-\u9fff々ヶ]+$")
ENTRY = re.compile(r"^(\S+) (?:\[(\S+)\] )?/\(([a-z,]+)\)")


def main():
    sur, giv, ver = set(), set(), "?"
    for n, line in enumerate(open(SRC, encoding="euc_jp", errors="strict")):
        if n == 0:
            m = re.search(r"Created: (\S+?)/", line)
            ver = m.group(1) if m else "?"
            continue
        m = ENTRY.match(line)
        if not m or not KANJI.match(m.group(1)):
            continue
        word, types = m.group(1), m.group(3).split(",")
        if "s" in types and 2 <= len(word) <= 4:
            sur.add(word)
        if any(t in types for t in ("g", "f", "m")) and 2 <= len(word) <= 3:
            giv.add(word)
    here = __file__.rsplit("/", 1)[0]
    for name, words, what in [("surnames_enamdict.txt", sur, "Surnames, 2-4 kanji"),
                              ("given_enamdict.txt", giv, "Given names, 2-3 kanji")]:
        with open(f"{here}/{name}", "w", encoding="utf-8") as f:
            f.write(HEAD.format(ver=ver, what=what))
            f.write("\n".join(sorted(words)) + "\n")
        print(name, len(words))


if __name__ == "__main__":
    main()
