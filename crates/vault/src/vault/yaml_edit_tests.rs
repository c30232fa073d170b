//! Round trips of format-preserving saves on files with comments: every pane edit keeps the
//! comments, the key order and the untouched lines, and reads back as the work saved.

use super::super::model::{LevelSpec, VisibilityFile};
use super::super::save::keep_format;

const SAMPLE: &str = include_str!("../../../../assets/vault/sisters/_ai_control/visibility.yaml");

fn parse(t: &str) -> VisibilityFile {
    serde_norway::from_str(t).unwrap()
}

fn comments(t: &str) -> Vec<&str> {
    t.lines().filter(|l| l.contains('#')).collect()
}

/// The keys of the text, in order (the first word before `:` on each line).
fn keys(t: &str) -> Vec<String> {
    t.lines()
        .filter_map(|l| {
            l.split('#')
                .next()?
                .split_once(':')
                .map(|(k, _)| k.trim().to_string())
        })
        .collect()
}

fn check(original: &str, new: &VisibilityFile) -> String {
    let out = keep_format(original, new).unwrap_or_else(|| panic!("not kept:\n{original}"));
    assert_eq!(parse(&out), *new);
    for c in comments(original) {
        assert!(out.contains(c), "comment lost: {c}\n{out}");
    }
    out
}

#[test]
fn a_section_level_changes_one_line() {
    let mut v = parse(SAMPLE);
    v.entities
        .get_mut("characters")
        .unwrap()
        .get_mut("あゆ")
        .unwrap()
        .sections
        .insert(
            "昔の話".into(),
            LevelSpec {
                level: 2,
                readers: Default::default(),
            },
        );
    let out = check(SAMPLE, &v);
    let changed: Vec<(&str, &str)> = SAMPLE
        .lines()
        .zip(out.lines())
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(changed, [("        昔の話: 1", "        昔の話: 2")]);
    assert_eq!(keys(SAMPLE), keys(&out));
}

#[test]
fn reader_overrides_secrets_and_new_entries_keep_the_rest() {
    let mut v = parse(SAMPLE);
    let ents = v.entities.get_mut("characters").unwrap();
    // A section gains a reader override: scalar → {level, readers}.
    let s = ents
        .get_mut("やな")
        .unwrap()
        .sections
        .get_mut("隠し設定")
        .unwrap();
    s.readers.insert("yana".into(), 3);
    // A secret's flow-style readers and its level.
    let sec = &mut ents.get_mut("あゆ").unwrap().secrets[0];
    sec.readers.insert("yana".into(), 0);
    sec.visibility = Some(2);
    // A foreshadowing level and a new world setting.
    v.entities
        .get_mut("foreshadowing")
        .unwrap()
        .get_mut("FS-002")
        .unwrap()
        .visibility = Some(LevelSpec {
        level: 1,
        readers: Default::default(),
    });
    let mut town = v.entities["world_settings"]["町"].clone();
    town.sections.clear();
    town.sections.insert(
        "川".into(),
        LevelSpec {
            level: 3,
            readers: Default::default(),
        },
    );
    v.entities
        .get_mut("world_settings")
        .unwrap()
        .insert("川辺".into(), town);
    let out = check(SAMPLE, &v);
    assert!(out.contains("readers: {ayu: 2, yana: 0}"), "{out}");
    assert!(
        out.contains("隠し設定: {level: 0, readers: {yana: 3}}"),
        "{out}"
    );
    // Untouched lines stay byte for byte, in order.
    let kept: Vec<&str> = SAMPLE
        .lines()
        .filter(|l| out.lines().any(|o| o == *l))
        .collect();
    assert!(kept.len() + 5 >= SAMPLE.lines().count(), "{out}");
    // Removing the override again goes back to the plain value.
    let mut back = v.clone();
    back.entities
        .get_mut("characters")
        .unwrap()
        .get_mut("やな")
        .unwrap()
        .sections
        .get_mut("隠し設定")
        .unwrap()
        .readers
        .clear();
    let again = check(&out, &back);
    assert!(again.contains("        隠し設定: 0"), "{again}");
}

/// Files written in other layouts: 4-space indents, sequences at the key's indent, quoted keys,
/// comments everywhere. Every single-value edit round-trips or is refused (None), never wrong.
#[test]
fn other_layouts_round_trip_or_are_refused() {
    let files = [
        "# top\nversion: '1.0'   # quoted\ndefault_visibility: 0\nentities:\n    characters:\n        \"やな\":   # quoted key\n            sections:\n                基本情報: 3  # basic\n                隠し設定: {level: 0, readers: {yana: 2}}\n",
        "version: \"1.0\"\nentities:\n  characters:\n    あゆ:\n      secrets:\n      - id: S1\n        content: 猫の話  # same-indent sequence\n        visibility: 1\n        forbidden_keywords: [物置, 子猫]\n",
        SAMPLE,
    ];
    let mut refused = 0;
    for f in files {
        let base = parse(f);
        let mut variants = Vec::new();
        for (t, ents) in &base.entities {
            for (name, e) in ents {
                for (sec, spec) in &e.sections {
                    let mut v = base.clone();
                    let s = v.entities.get_mut(t).unwrap().get_mut(name).unwrap();
                    s.sections.get_mut(sec).unwrap().level = (spec.level + 1) % 4;
                    variants.push(v);
                }
                for (i, s) in e.secrets.iter().enumerate() {
                    let mut v = base.clone();
                    let x = &mut v
                        .entities
                        .get_mut(t)
                        .unwrap()
                        .get_mut(name)
                        .unwrap()
                        .secrets[i];
                    x.visibility = Some((s.visibility.unwrap_or(0) + 2) % 4);
                    x.readers.insert("ayu".into(), 1);
                    variants.push(v);
                }
            }
        }
        assert!(!variants.is_empty());
        for v in variants {
            match keep_format(f, &v) {
                Some(out) => {
                    assert_eq!(parse(&out), v, "{out}");
                    for c in comments(f) {
                        assert!(out.contains(c.split('#').nth(1).unwrap()), "{c}\n{out}");
                    }
                }
                None => refused += 1,
            }
        }
    }
    // The sample and the 4-space file are fully supported.
    assert!(refused <= 2, "{refused} edits refused");
}
