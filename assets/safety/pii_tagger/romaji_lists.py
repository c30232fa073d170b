#!/usr/bin/env python3
"""Writes the romaji name lists the PII labeller looks names up in:
- surnames_romaji.txt, given_romaji.txt: the hiragana readings of surnames_gimei.tsv and
  given_gimei.tsv (gimei 0.2.3, MIT) in Hepburn romaji, each with its long-vowel spellings
  (satou, sato, satoh);
- given_western.txt: the 2,000 most frequent US first names (female and male) of the 1990 US
  Census lists as the PyPI package `names` 0.3.0 ships them (MIT; the data is public domain),
  path given as the first argument (names/dist.*.first inside its sdist).
Deterministic (sorted). Run: python3 assets/safety/pii_tagger/romaji_lists.py <names/ dir>
"""
import sys

HERE = __file__.rsplit("/", 1)[0]
BASE = {
    "あ": "a", "い": "i", "う": "u", "え": "e", "お": "o", "か": "ka", "き": "ki", "く": "ku",
    "け": "ke", "こ": "ko", "さ": "sa", "し": "shi", "す": "su", "せ": "se", "そ": "so",
    "た": "ta", "ち": "chi", "つ": "tsu", "て": "te", "と": "to", "な": "na", "に": "ni",
    "ぬ": "nu", "ね": "ne", "の": "no", "は": "ha", "ひ": "hi", "ふ": "fu", "へ": "he",
    "ほ": "ho", "ま": "ma", "み": "mi", "む": "mu", "め": "me", "も": "mo", "や": "ya",
    "ゆ": "yu", "よ": "yo", "ら": "ra", "り": "ri", "る": "ru", "れ": "re", "ろ": "ro",
    "わ": "wa", "を": "o", "ん": "n", "が": "ga", "ぎ": "gi", "ぐ": "gu", "げ": "ge", "ご": "go",
    "ざ": "za", "じ": "ji", "ず": "zu", "ぜ": "ze", "ぞ": "zo", "だ": "da", "ぢ": "ji",
    "づ": "zu", "で": "de", "ど": "do", "ば": "ba", "び": "bi", "ぶ": "bu", "べ": "be",
    "ぼ": "bo", "ぱ": "pa", "ぴ": "pi", "ぷ": "pu", "ぺ": "pe", "ぽ": "po", "ゔ": "vu",
}
SMALL = {"ゃ": "ya", "ゅ": "yu", "ょ": "yo"}


def hepburn(kana):
    out, i = "", 0
    while i < len(kana):
        c = kana[i]
        nxt = kana[i + 1] if i + 1 < len(kana) else ""
        if c == "っ":
            i += 1
            if i < len(kana) and kana[i] in BASE:
                out += BASE[kana[i]][0]
            continue
        if c not in BASE:
            return None
        r = BASE[c]
        if nxt in SMALL:
            r = (r[:-1] if r.endswith("i") and r in ("shi", "chi", "ji") else r[:-1]) + (
                SMALL[nxt][1:] if r in ("shi", "chi", "ji") else SMALL[nxt])
            i += 1
        out += r
        i += 1
    return out


def spellings(kana):
    r = hepburn(kana)
    if not r:
        return set()
    forms = {r, r.replace("ou", "o").replace("uu", "u"), r.replace("ou", "oh")}
    return {f for f in forms if len(f) >= 2}


def tsv(name):
    words = set()
    for line in open(f"{HERE}/{name}", encoding="utf-8"):
        if line.startswith("#") or "\t" not in line:
            continue
        words |= spellings(line.split("\t")[1].strip())
    return words


def write(name, words, head):
    with open(f"{HERE}/{name}", "w", encoding="utf-8") as f:
        f.write(head)
        f.write("\n".join(sorted(words)) + "\n")
    print(name, len(words))


def main():
    gimei = ("# Source: the readings of {} (gimei 0.2.3, PyPI, MIT License, Copyright (c) 2015\n"
             "# nabetama) in Hepburn romaji with long-vowel spellings, by romaji_lists.py.\n")
    write("surnames_romaji.txt", tsv("surnames_gimei.tsv"), gimei.format("surnames_gimei.tsv"))
    write("given_romaji.txt", tsv("given_gimei.tsv"), gimei.format("given_gimei.tsv"))
    if len(sys.argv) > 1:
        ranked = []
        for f in ("dist.female.first", "dist.male.first"):
            for line in open(f"{sys.argv[1]}/{f}", encoding="ascii"):
                parts = line.split()
                ranked.append((-float(parts[1]), parts[0].lower()))
        top = {n for _, n in sorted(ranked)[:2000]}
        write("given_western.txt", top,
              "# Source: the 2,000 most frequent first names of the 1990 US Census (public domain)\n"
              "# as PyPI package `names` 0.3.0 ships them (MIT License), by romaji_lists.py.\n")


if __name__ == "__main__":
    main()
