//! Levels, precedence, readers, templates and saving, over small works written in the tests
//! and over the bundled sample.

use std::path::Path;

use super::load::from_files;
use super::model::Level;
use super::*;

fn work(files: &[(&str, &str)]) -> Work {
    try_work(files).unwrap()
}

fn try_work(files: &[(&str, &str)]) -> Result<Work, crate::config::ConfigError> {
    let files = files
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    from_files("w", Path::new("vault/w"), true, files)
}

fn level_of(w: &Work, reader: Option<&str>, key: &str) -> (u8, LevelSource) {
    let i = w
        .items(reader)
        .into_iter()
        .find(|i| i.key == key)
        .unwrap_or_else(|| panic!("no {key}"));
    (i.level.get(), i.source)
}

const CHAR: &str = "---\nname: やな\nai_visibility:\n  default: 2\n  好物: 1\n---\n## 基本\n姉。\n\n## 好物\nコロッケ。\n\n## 過去\n<!-- ai_visibility: 1 -->\n昔の話。\n\n## 予定\n来週の予定。\n";

#[test]
fn precedence_yaml_section_over_marker_over_entity_over_front_matter_over_default() {
    let vis = "default_visibility: 3\nentities:\n  characters:\n    やな:\n      sections:\n        過去: 3\n";
    let w = work(&[
        ("_ai_control/visibility.yaml", vis),
        ("characters/yana.md", CHAR),
    ]);
    assert_eq!(
        level_of(&w, None, "characters/やな/過去"),
        (3, LevelSource::YamlSection)
    );
    assert_eq!(
        level_of(&w, None, "characters/やな/好物"),
        (1, LevelSource::FrontSection)
    );
    assert_eq!(
        level_of(&w, None, "characters/やな/基本"),
        (2, LevelSource::FrontDefault)
    );

    // Without the yaml entry the marker decides.
    let w = work(&[("characters/yana.md", CHAR)]);
    assert_eq!(
        level_of(&w, None, "characters/やな/過去"),
        (1, LevelSource::Marker)
    );

    // An entity level in visibility.yaml beats the front matter but not a marker.
    let vis = "entities:\n  characters:\n    やな:\n      visibility: 3\n";
    let w = work(&[
        ("_ai_control/visibility.yaml", vis),
        ("characters/yana.md", CHAR),
    ]);
    assert_eq!(
        level_of(&w, None, "characters/やな/好物"),
        (3, LevelSource::YamlEntity)
    );
    assert_eq!(
        level_of(&w, None, "characters/やな/過去"),
        (1, LevelSource::Marker)
    );
}

#[test]
fn a_section_nobody_set_is_hidden_and_default_visibility_applies_otherwise() {
    let plain = "## 予定\n来週の予定。\n";
    let w = work(&[("characters/yana.md", plain)]);
    assert_eq!(
        level_of(&w, None, "characters/yana/予定"),
        (0, LevelSource::WorkDefault)
    );
    let w = work(&[
        ("_ai_control/visibility.yaml", "default_visibility: 3\n"),
        ("characters/yana.md", plain),
    ]);
    assert_eq!(
        level_of(&w, None, "characters/yana/予定"),
        (3, LevelSource::WorkDefault)
    );
}

#[test]
fn reader_overrides_give_each_sister_her_own_view() {
    let vis = "entities:\n  characters:\n    やな:\n      sections:\n        予定: {level: 0, readers: {yana: 3}}\n      secrets:\n        - id: S1\n          content: やなは来月、髪を短く切るつもりでいる\n          visibility: 0\n          readers: {ayu: 2}\n          forbidden_keywords: [短く切る]\n";
    let w = work(&[
        ("_ai_control/visibility.yaml", vis),
        ("characters/yana.md", CHAR),
    ]);
    assert_eq!(
        level_of(&w, Some("yana"), "characters/やな/予定"),
        (3, LevelSource::ReaderOverride)
    );
    assert_eq!(
        level_of(&w, Some("ayu"), "characters/やな/予定"),
        (0, LevelSource::YamlSection)
    );
    let yana = w.context(Some("yana"));
    let ayu = w.context(Some("ayu"));
    assert!(yana.prompt.contains("来週の予定"));
    assert!(!ayu.prompt.contains("来週の予定"));
    assert!(ayu.prompt.contains("髪を短く切る"), "{}", ayu.prompt);
    assert_eq!(ayu.forbidden_keywords, ["短く切る"]);
    assert!(!yana.prompt.contains("髪"));
    assert!(yana.forbidden_keywords.is_empty());
}

#[test]
fn each_level_shapes_the_context() {
    let vis = "entities:\n  characters:\n    やな:\n      sections:\n        基本: 3\n        好物: 2\n        過去: 1\n        予定: 0\n";
    let w = work(&[
        ("_ai_control/visibility.yaml", vis),
        ("characters/yana.md", CHAR),
    ]);
    let c = w.context(None);
    assert_eq!(
        c.context,
        [ContextItem {
            key: "characters/やな/基本".into(),
            text: "姉。".into()
        }]
    );
    assert_eq!(c.hints.len(), 2);
    // Level 2: the text as reference material; level 1: only the section name.
    assert!(c.hints[0].contains("コロッケ"));
    assert!(c.hints[1].contains("過去") && !c.hints[1].contains("昔の話"));
    // Level 0: neither its text nor its name.
    assert!(
        !c.prompt.contains("来週") && !c.prompt.contains("予定"),
        "{}",
        c.prompt
    );
    assert!(
        c.prompt.starts_with("【設定資料】\n■ やな／基本\n姉。"),
        "{}",
        c.prompt
    );
    for h in &c.hints {
        assert!(c.prompt.contains(h.trim()));
    }
}

#[test]
fn malformed_yaml_reports_file_line_col() {
    let vis = "version: \"1.0\"\nentities:\n  characters:\n    やな:\n      sections: [基本: 3\n";
    let err = try_work(&[("_ai_control/visibility.yaml", vis)])
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("vault/w/_ai_control/visibility.yaml:"),
        "{err}"
    );
    let mut parts = err.split(':').skip(1);
    let line: usize = parts.next().unwrap().parse().unwrap();
    let col: usize = parts.next().unwrap().parse().unwrap();
    assert!(line >= 5 && col >= 1, "{err}");
}

#[test]
fn unknown_level_names_entity_and_section() {
    let vis = "entities:\n  world_settings:\n    町:\n      sections:\n        概要: 3\n        商店街: 4\n";
    let err = try_work(&[("_ai_control/visibility.yaml", vis)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("visibility.yaml:6:"), "{err}");
    assert!(err.contains("world_settings/町/商店街"), "{err}");
    assert!(err.contains("level 4"), "{err}");
    let vis = "entities:\n  characters:\n    やな:\n      sections:\n        基本: {level: 2, readers: {ayu: 9}}\n";
    let err = try_work(&[("_ai_control/visibility.yaml", vis)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("reader `ayu` has level 9"), "{err}");
    let vis = "entities:\n  characters:\n    やな:\n      sections:\n        基本: high\n";
    let err = try_work(&[("_ai_control/visibility.yaml", vis)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("visibility.yaml:5:"), "{err}");
    assert!(err.contains("characters/やな/基本"), "{err}");
    assert!(err.contains("expected a level 0–3"), "{err}");
    // A word where a secret's level belongs names the secret, not the first `id:` of the entity.
    let vis = "entities:\n  characters:\n    あゆ:\n      secrets:\n        - id: SEC-A\n          content: 内緒の話その一\n          visibility: 1\n        - id: SEC-B\n          content: 内緒の話その二\n          visibility: two\n";
    let err = try_work(&[("_ai_control/visibility.yaml", vis)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("visibility.yaml:10:"), "{err}");
    assert!(err.contains("characters/あゆ/SEC-B (visibility)"), "{err}");
    assert!(!err.contains("SEC-A"), "{err}");
}

#[test]
fn yaml_paths_follow_indentation_and_name_list_items() {
    use super::yaml_path_at;
    let text = "a:\n  b:\n    c: 1\n  list:\n  - name: 一\n    v: 2\n  - id: 二\n    sub:\n      w: 3\n# note\nz: 4\n";
    assert_eq!(yaml_path_at(text, 3), ["a", "b", "c"]);
    assert_eq!(yaml_path_at(text, 6), ["a", "list", "一", "v"]);
    assert_eq!(yaml_path_at(text, 9), ["a", "list", "二", "sub", "w"]);
    assert_eq!(yaml_path_at(text, 7), ["a", "list", "二", "id"]);
    assert_eq!(yaml_path_at(text, 11), ["z"]);
    assert!(yaml_path_at(text, 99).is_empty());
}

#[test]
fn a_work_template_wins_over_the_builtin_and_an_entity_template_wins_over_both() {
    let l1 = "template_id: mine\nlevel: 1\nprompt_template: \"{entity_name}の{section_name}は、まだ語られていない。\"\n";
    let l1b = "template_id: other\nlevel: 1\nprompt_template: \"別の文面：{section_name}\"\n";
    let vis = "entities:\n  characters:\n    やな:\n      sections:\n        過去: 1\n        基本: 0\n        好物: 0\n        予定: 0\n";
    let base = [
        ("_ai_control/visibility.yaml", vis),
        ("characters/yana.md", CHAR),
        ("_ai_control/templates/level1_mine.yaml", l1),
    ];
    let w = work(&base);
    assert_eq!(
        w.context(None).hints,
        ["やなの過去は、まだ語られていない。"]
    );
    let mut files = base.to_vec();
    files.push(("_ai_control/templates/custom/level1_other.yaml", l1b));
    let w = work(&files);
    assert_eq!(w.context(None).hints, ["別の文面：過去"]);
    let vis2 = vis.replace("やな:\n", "やな:\n      template_id: mine\n");
    files[0] = ("_ai_control/visibility.yaml", &vis2);
    let w = work(&files);
    assert_eq!(
        w.context(None).hints,
        ["やなの過去は、まだ語られていない。"]
    );
    // A template_id that exists nowhere is an error, not a silent fallback.
    let vis3 = vis2.replace("mine", "nothere");
    files[0] = ("_ai_control/visibility.yaml", &vis3);
    let files: Vec<(&str, &str)> = files.to_vec();
    assert!(try_work(&files).is_err());
}

#[test]
fn foreshadowing_status_disagreeing_with_its_level_is_warned() {
    let fs =
        |status: &str| format!("---\nname: 鍵\nstatus: {status}\n---\n## 内容\n古い鍵の持ち主。\n");
    for (status, level, warn) in [
        ("registered", 0, false),
        ("registered", 2, true),
        ("planted", 1, false),
        ("planted", 3, true),
        ("reinforced", 2, false),
        ("revealed", 2, true),
        ("revealed", 3, false),
    ] {
        let vis = format!("entities:\n  foreshadowing:\n    FS-9:\n      visibility: {level}\n");
        let text = fs(status);
        let w = work(&[
            ("_ai_control/visibility.yaml", &vis),
            ("_foreshadowing/FS-9.md", &text),
        ]);
        let ws = w.foreshadowing_warnings(None);
        assert_eq!(!ws.is_empty(), warn, "{status} at {level}: {ws:?}");
    }
}

#[test]
fn the_sample_vault_loads_and_hides_what_it_should() {
    let w = sample();
    assert!(w.warnings.is_empty(), "{:?}", w.warnings);
    assert!(w.foreshadowing_warnings(None).is_empty());
    let yana = w.context(Some("yana"));
    let ayu = w.context(Some("ayu"));
    // やな knows her plan at level 2; あゆ gets nothing of it.
    assert!(yana.prompt.contains("海沿いの町の工房"));
    assert!(yana.forbidden_keywords.contains(&"工房".to_string()));
    assert!(!ayu.prompt.contains("工房") && !ayu.prompt.contains("これからのこと"));
    // Level 0 everywhere: the attic and the grandmother's notebook.
    for c in [&yana, &ayu, &w.context(None)] {
        assert!(
            !c.prompt.contains("料理帳") && !c.prompt.contains("屋根裏"),
            "{}",
            c.prompt
        );
        assert!(!c.prompt.contains("駅のベンチ"));
    }
    // The work's own templates are used: custom level 2, work-default level 1.
    assert!(yana.prompt.contains("会話の下地 SEC-YANA-01"));
    assert!(
        ayu.prompt
            .contains("あゆの昔の話については、ここにない情報もあります。"),
        "{}",
        ayu.prompt
    );
}

#[test]
fn set_level_and_save_round_trip_with_a_backup() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = sample();
    let item = w
        .items(None)
        .into_iter()
        .find(|i| i.key == "world_settings/家/屋根裏")
        .unwrap();
    w.set_level(&item, None, Level::USE);
    let path = w.save(Some(&dir.path().join("sisters"))).unwrap();
    assert!(path.ends_with("_ai_control/visibility.yaml"));
    let reloaded = load_vault(&dir.path().join("sisters"), None).unwrap();
    assert_eq!(level_of(&reloaded, None, "world_settings/家/屋根裏").0, 3);
    // Other levels survive the rewrite.
    assert_eq!(
        level_of(&reloaded, Some("yana"), "characters/やな/SEC-YANA-01").0,
        2
    );
    assert_eq!(
        level_of(&reloaded, Some("ayu"), "characters/やな/SEC-YANA-01").0,
        0
    );
    // A second save keeps the first as .bak.
    let mut w = reloaded;
    let item = w
        .items(None)
        .into_iter()
        .find(|i| i.key == "characters/あゆ/SEC-AYU-01")
        .unwrap();
    w.set_level(&item, Some("yana"), Level::AWARE);
    w.save(None).unwrap();
    let bak = std::fs::read_to_string(dir.path().join("sisters/_ai_control/visibility.yaml.bak"))
        .unwrap();
    assert!(!bak.contains("yana: 1"));
    let w = load_vault(dir.path(), Some("sisters")).unwrap();
    assert_eq!(
        level_of(&w, Some("yana"), "characters/あゆ/SEC-AYU-01"),
        (1, LevelSource::ReaderOverride)
    );
    assert_eq!(level_of(&w, Some("ayu"), "characters/あゆ/SEC-AYU-01").0, 2);
}

#[test]
fn picking_a_work_in_a_vault_with_several() {
    let dir = tempfile::tempdir().unwrap();
    for w in ["a", "b"] {
        std::fs::create_dir_all(dir.path().join(w).join("_ai_control")).unwrap();
    }
    let err = load_vault(dir.path(), None).unwrap_err().to_string();
    assert!(
        err.contains("several works") && err.contains("a, b"),
        "{err}"
    );
    assert_eq!(load_vault(dir.path(), Some("b")).unwrap().name, "b");
    assert!(
        load_vault(dir.path(), Some("c"))
            .unwrap_err()
            .to_string()
            .contains("no work `c`")
    );
}

#[test]
fn leak_findings_name_the_keyword_only_to_a_sister_who_knows_the_secret() {
    use crate::director::{RuleId, Status};
    let w = sample();
    let text = "春から工房で働くって本当？";
    let found = |reader: &str| {
        let r = w.reviewer(Some(reader));
        review::findings(&r.review(text), r.input(), r.config())
    };
    let yana = found("yana");
    let ayu = found("ayu");
    assert!(
        yana.iter().any(|f| f.rule == RuleId::Leak
            && f.status == Status::Retry
            && f.message.contains("工房")),
        "{yana:?}"
    );
    // For あゆ the secret is level 0: still a RETRY at the same span, but the guidance that
    // goes into her next prompt must not tell her which word matters.
    assert!(!ayu.is_empty());
    for f in &ayu {
        assert_eq!(f.rule, RuleId::Leak);
        assert!(
            !f.message.contains("工房")
                && !f.suggestion.contains("工房")
                && !f.message.contains("春から"),
            "{f:?}"
        );
    }
    let spans = |v: &[crate::director::Finding]| {
        v.iter()
            .filter_map(|f| f.span)
            .collect::<std::collections::BTreeSet<_>>()
    };
    assert_eq!(spans(&yana), spans(&ayu));
}

#[test]
fn a_bad_secret_is_pointed_at_by_its_own_id_line() {
    let vis = "entities:\n  characters:\n    あゆ:\n      secrets:\n        - id: SEC-A\n          content: 内緒の話その一\n        - id: SEC-B\n          content: 内緒の話その二\n          subtlety: 11\n";
    let err = try_work(&[("_ai_control/visibility.yaml", vis)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("visibility.yaml:7:"), "{err}");
    assert!(err.contains("SEC-B"), "{err}");
}

/// YAML forbids a key twice in one mapping; a typed read would let the later value win (a
/// level-0 section printed at 3). Refused at the duplicate's own line and column, naming the
/// first — at every depth of visibility.yaml, generated over keys and positions.
#[test]
fn a_duplicate_key_is_refused_at_its_own_line() {
    let base = "version: \"1.0\"\ndefault_visibility: 0\nentities:\n  characters:\n    やな:\n      sections:\n        基本情報: 3\n        隠し設定: 0\n        好きなもの: 3\n";
    // (text to append, key, expected line of the duplicate, column)
    let cases = [
        ("        隠し設定: 3\n", "隠し設定", 10, 9),
        ("        基本情報: 0\n", "基本情報", 10, 9),
        ("entities:\n  characters: {}\n", "entities", 10, 1),
        ("default_visibility: 3\n", "default_visibility", 10, 1),
    ];
    for (extra, key, line, col) in cases {
        let dir = tempfile::tempdir().unwrap();
        let ctl = dir.path().join("w").join("_ai_control");
        std::fs::create_dir_all(&ctl).unwrap();
        std::fs::write(ctl.join("visibility.yaml"), format!("{base}{extra}")).unwrap();
        let e = crate::vault::load_vault(&dir.path().join("w"), None)
            .err()
            .unwrap_or_else(|| panic!("{key}: a duplicate key loaded"));
        let s = e.to_string();
        assert!(s.contains(&format!(":{line}:{col}")), "{key}: {s}");
        assert!(s.contains(key) && s.contains("twice"), "{s}");
    }
}

/// Editors' and IMEs' invisible mistakes: a full-width space as indentation is refused at its
/// line naming the cause; a zero-width space or soft hyphen inside a heading or key still
/// matches (the section keeps the level the writer set) — generated over positions.
#[test]
fn ime_and_editor_mistakes_are_named_or_harmless() {
    let sample =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/vault/sisters");
    let copy = |dir: &std::path::Path| {
        for e in walk(&sample) {
            let rel = e.strip_prefix(&sample).unwrap();
            let to = dir.join(rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&e, &to).unwrap();
        }
    };
    for wide in 1..=4 {
        let dir = tempfile::tempdir().unwrap();
        copy(dir.path());
        let vis = dir.path().join("_ai_control/visibility.yaml");
        let text = std::fs::read_to_string(&vis).unwrap();
        let text = text.replacen(
            "        隠し設定: 0",
            &format!("{}{}隠し設定: 0", "  ".repeat(4 - wide), "　".repeat(wide)),
            1,
        );
        std::fs::write(&vis, text).unwrap();
        let e = crate::vault::load_vault(dir.path(), None)
            .expect_err("refused")
            .to_string();
        assert!(e.contains("full-width space"), "{e}");
    }
    for invisible in ['\u{200B}', '\u{00AD}', '\u{2060}'] {
        let dir = tempfile::tempdir().unwrap();
        copy(dir.path());
        let md = dir.path().join("characters/やな.md");
        let text = std::fs::read_to_string(&md).unwrap();
        std::fs::write(
            &md,
            text.replacen("## 隠し設定", &format!("## 隠し{invisible}設定"), 1),
        )
        .unwrap();
        let w = crate::vault::load_vault(dir.path(), None).expect("loads");
        let ctx = serde_json::to_string(&w.context(Some("ayu"))).unwrap();
        assert!(
            !ctx.contains("工房"),
            "{invisible:?}: the hidden section reached あゆ"
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
