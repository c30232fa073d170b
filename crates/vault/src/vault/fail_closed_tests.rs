//! Issue 16 §1, case by case: when the vault is ambiguous the reader sees less and the writer
//! is told (unknown reader keys, markers in other spellings, nested headings, names that differ
//! only in width, foreshadowing markers and titles, comments, the withheld counts).

use std::path::Path;

use super::load::from_files;
use super::*;

fn try_work(files: &[(&str, &str)]) -> Result<Work, crate::config::ConfigError> {
    let files = files
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    from_files("w", Path::new("vault/w"), true, files)
}

fn prompts(w: &Work) -> Vec<String> {
    [None, Some("yana"), Some("ayu")]
        .iter()
        .map(|r| w.context(*r).prompt)
        .collect()
}

const AYU: &str = "---\nname: あゆ\nai_visibility:\n  default: 3\n---\n## 基本情報\nやなの妹。\n\n## 隠し設定（ネタバレ）\n実は合唱部の部長に推薦されている。\n";

#[test]
fn an_unknown_reader_key_is_an_error_naming_the_place_and_the_readers() {
    for (bad, line, col) in [("あゆ", 5, 36), ("ayuu", 5, 36), ("Ayu", 5, 36)] {
        let vis = format!(
            "entities:\n  characters:\n    あゆ:\n      sections:\n        基本情報: {{level: 0, readers: {{{bad}: 3}}}}\n"
        );
        let err = try_work(&[
            ("_ai_control/visibility.yaml", &vis),
            ("characters/あゆ.md", AYU),
        ])
        .unwrap_err()
        .to_string();
        let want = format!("visibility.yaml:{line}:{col}:");
        assert!(err.contains(&want), "{bad}: {err}");
        assert!(
            err.contains(&format!("`{bad}`")) && err.contains("yana, ayu"),
            "{err}"
        );
    }
    // On the entity's own level: pointed at that line, not at the entity's name `あゆ:`.
    let vis =
        "entities:\n  characters:\n    あゆ:\n      visibility: {level: 0, readers: {あゆ: 3}}\n";
    let err = try_work(&[
        ("_ai_control/visibility.yaml", vis),
        ("characters/あゆ.md", AYU),
    ])
    .unwrap_err()
    .to_string();
    assert!(err.contains("visibility.yaml:4:40:"), "{err}");
    // In a secret's readers and in block style too.
    let vis = "entities:\n  characters:\n    あゆ:\n      secrets:\n        - id: S1\n          content: 部長に推薦\n          visibility: 0\n          readers:\n            やな: 2\n";
    let err = try_work(&[("_ai_control/visibility.yaml", vis)])
        .unwrap_err()
        .to_string();
    assert!(err.contains("visibility.yaml:9:13:"), "{err}");
}

#[test]
fn section_names_match_after_nfkc_and_a_name_matching_nothing_is_an_error() {
    let vis =
        "entities:\n  characters:\n    あゆ:\n      sections:\n        隠し設定(ネタバレ): 0\n";
    let w = try_work(&[
        ("_ai_control/visibility.yaml", vis),
        ("characters/あゆ.md", AYU),
    ])
    .unwrap();
    for p in prompts(&w) {
        assert!(!p.contains("合唱部"), "{p}");
        assert!(p.contains("やなの妹"), "{p}");
    }
    let vis = vis.replace("隠し設定(ネタバレ)", "隠し設定(ネタバレ注意)");
    let err = try_work(&[
        ("_ai_control/visibility.yaml", &vis),
        ("characters/あゆ.md", AYU),
    ])
    .unwrap_err()
    .to_string();
    assert!(err.contains("visibility.yaml:5:9:"), "{err}");
    assert!(
        err.contains("matches no heading") && err.contains("隠し設定（ネタバレ）"),
        "{err}"
    );
    // An entity name in another width still finds its file; an entity type typo is an error.
    let vis =
        "entities:\n  characters:\n    ｱﾕ:\n      sections:\n        隠し設定（ネタバレ）: 0\n";
    let file = AYU.replace("name: あゆ", "name: アユ");
    let w = try_work(&[
        ("_ai_control/visibility.yaml", vis),
        ("characters/ayu.md", &file),
    ])
    .unwrap();
    assert!(prompts(&w).iter().all(|p| !p.contains("合唱部")));
    let vis = "entities:\n  character:\n    あゆ:\n      sections:\n        基本情報: 0\n";
    let err = try_work(&[
        ("_ai_control/visibility.yaml", vis),
        ("characters/あゆ.md", AYU),
    ])
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("visibility.yaml:2:3:") && err.contains("`character`"),
        "{err}"
    );
}

#[test]
fn markers_in_other_spellings_hide_and_never_reach_the_prompt_or_a_name() {
    for m in [
        "<!-- ai_visibility：0 -->",
        "<!-- AI_VISIBILITY: 0 -->",
        "<!--  ai_visibility :  0  -->",
    ] {
        for body in [
            format!("## 隠し設定\n{m}\n合唱部の部長。\n"),
            format!("## 隠し設定 {m}\n合唱部の部長。\n"),
        ] {
            let file = format!("---\nai_visibility:\n  default: 3\n---\n## 基本\n妹。\n{body}");
            let w = try_work(&[("characters/あゆ.md", &file)]).unwrap();
            let items = w.items(None);
            assert!(items.iter().all(|i| !i.section_name.contains("<!--")));
            for p in prompts(&w) {
                assert!(!p.contains("合唱部") && !p.contains("visibility"), "{p}");
                assert!(p.contains("妹。"), "{p}");
            }
        }
    }
    let file = "## 基本\n妹。\n## 隠し設定\n<!-- ai_visibility: zero -->\n合唱部\n";
    let err = try_work(&[("characters/あゆ.md", file)])
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("vault/w/characters/あゆ.md:4:1:"), "{err}");
}

#[test]
fn a_subsection_takes_the_lowest_of_its_own_and_its_parents_levels() {
    let file = "---\nai_visibility:\n  default: 3\n---\n## 過去\n<!-- ai_visibility: 3 -->\n小学校は坂の下。\n### 本当のこと\n<!-- ai_visibility: 0 -->\n転校の理由は父の仕事。\n#### さらに奥\n<!-- ai_visibility: 3 -->\n手紙を隠している。\n## 今\n<!-- ai_visibility: 2 -->\n<!-- ai_visibility: 0 -->\n受験のこと。\n";
    let w = try_work(&[("characters/あゆ.md", file)]).unwrap();
    let lv = |k: &str| {
        w.items(None)
            .into_iter()
            .find(|i| i.key == k)
            .unwrap_or_else(|| panic!("{k}"))
            .level
            .get()
    };
    assert_eq!(lv("characters/あゆ/過去"), 3);
    assert_eq!(lv("characters/あゆ/過去/本当のこと"), 0);
    assert_eq!(lv("characters/あゆ/過去/本当のこと/さらに奥"), 0);
    assert_eq!(lv("characters/あゆ/今"), 0);
    for p in prompts(&w) {
        assert!(p.contains("坂の下"), "{p}");
        for s in ["父の仕事", "手紙", "受験"] {
            assert!(!p.contains(s), "{s} in {p}");
        }
    }
    // A yaml entry on the parent bounds the subsection too.
    let vis = "entities:\n  characters:\n    あゆ:\n      sections:\n        過去: 0\n        さらに奥: 3\n";
    let w = try_work(&[
        ("_ai_control/visibility.yaml", vis),
        ("characters/あゆ.md", file),
    ])
    .unwrap();
    assert!(
        prompts(&w)
            .iter()
            .all(|p| !p.contains("手紙") && !p.contains("坂の下"))
    );
}

const FS: &str = "---\nname: 料理帳\nstatus: planted\nforbidden_keywords: [料理帳]\n---\n## 内容\n祖母のレシピが屋根裏にある。\n## 回収\n<!-- ai_visibility: 0 -->\n最終回で姉妹が祖母のレシピを再現して、ふたりで台所に立つ。\n";

#[test]
fn foreshadowing_obeys_markers_and_its_notice_names_no_title() {
    for level in [1, 2, 3] {
        let vis = format!("entities:\n  foreshadowing:\n    FS-1:\n      visibility: {level}\n");
        let w = try_work(&[
            ("_ai_control/visibility.yaml", &vis),
            ("_foreshadowing/FS-1.md", FS),
        ])
        .unwrap();
        let c = w.context(Some("ayu"));
        assert!(!c.prompt.contains("再現"), "{level}: {}", c.prompt);
        assert!(!c.prompt.contains("<!--"), "{}", c.prompt);
        assert_eq!(c.withheld.level0, 1, "the marked section is counted");
        // Left out of the prompt, but leak review still checks it, unnamed.
        let r = w.reviewer(Some("ayu"));
        let rev = r.review("最終回で姉妹が祖母のレシピを再現して、ふたりで台所に立つ。");
        assert!(!rev.issues.is_empty(), "{level}: {rev:?}");
        let json = serde_json::to_string(&rev).unwrap();
        assert!(!json.contains("回収"), "{json}");
        // The marked section's text is named only by its neutral label.
        assert!(
            rev.issues
                .iter()
                .filter(|i| i.kind == crate::vault::leak::IssueKind::DirectQuotation)
                .all(|i| i.detail.contains("非公開の設定#")),
            "{json}"
        );
        if level == 1 {
            assert!(
                !c.prompt.contains("料理帳") && !c.prompt.contains("FS-1"),
                "{}",
                c.prompt
            );
            assert!(c.prompt.contains("伏線1"), "{}", c.prompt);
            assert!(c.forbidden_keywords.is_empty());
        } else {
            assert!(c.prompt.contains("屋根裏"), "{}", c.prompt);
        }
    }
    // A marker on the title line bounds the whole file.
    let vis = "entities:\n  foreshadowing:\n    FS-1:\n      visibility: 3\n";
    let file = "---\nname: x\n---\n# 題 <!-- ai_visibility: 0 -->\n## 内容\n屋根裏のレシピ\n";
    let w = try_work(&[
        ("_ai_control/visibility.yaml", vis),
        ("_foreshadowing/FS-1.md", file),
    ])
    .unwrap();
    assert!(prompts(&w).iter().all(|p| !p.contains("屋根裏")));
}

#[test]
fn comments_of_any_kind_never_reach_a_prompt() {
    let file = "---\nai_visibility:\n  default: 3\n---\n前置き<!-- 作者メモ：前置き -->。\n## 基本\n妹。<!-- TODO 誕生日\n決める -->好きな色は青。\n";
    let vis = "entities:\n  characters:\n    あゆ:\n      secrets:\n        - id: S1\n          content: 部長に推薦<!-- 内緒のメモ -->されている\n          visibility: 2\n";
    let w = try_work(&[
        ("_ai_control/visibility.yaml", vis),
        ("characters/あゆ.md", file),
    ])
    .unwrap();
    for p in prompts(&w) {
        assert!(
            p.contains("好きな色は青") && p.contains("部長に推薦"),
            "{p}"
        );
        for s in ["<!--", "-->", "作者メモ", "誕生日", "内緒のメモ"] {
            assert!(!p.contains(s), "{s} in {p}");
        }
    }
    assert_eq!(context::strip_comments("a<!--b-->c<!--d"), "ac");
}

#[test]
fn the_withheld_report_counts_by_level_for_each_reader() {
    let w = sample();
    let yana = w.context(Some("yana")).withheld;
    let ayu = w.context(Some("ayu")).withheld;
    let items = |r| w.items(Some(r));
    for (r, wh) in [("yana", yana), ("ayu", ayu)] {
        // Sections cut from a foreshadowing (its payoff plan) are withheld at level 0 too.
        let cut: usize = items(r).iter().map(|i| i.cut.len()).sum();
        let n = |l: u8| {
            items(r).iter().filter(|i| i.level.get() == l).count() + if l == 0 { cut } else { 0 }
        };
        assert_eq!(
            (wh.level0, wh.level1, wh.level2, wh.given),
            (n(0), n(1), n(2), n(3))
        );
        let s = wh.summary(r);
        assert!(s.contains(&format!("{} hidden", wh.level0)), "{s}");
    }
    // やな knows her own plan (level 2), あゆ does not even sense it.
    assert!(ayu.level0 > yana.level0);
}

/// Issue 22: complex keys (`? ? ?`) nest like dashes for the depth limit, and a parser error
/// about a 400 KB key quotes at most a short excerpt of it.
#[test]
fn complex_key_errors_quote_a_short_excerpt() {
    let deep = format!("{}x\n", "? ".repeat(200));
    let e = crate::limits::yaml_check(Path::new("v.yaml"), &deep, false).unwrap_err();
    assert!(e.to_string().contains("v.yaml:1:1: nested deeper"), "{e}");
    for bad in [
        format!("? {}\n: 1\n", "鍵".repeat(140_000)),
        format!("? ? ? {}\n", "x".repeat(400_000)),
        format!("secrets:\n  ? [{}]\n  : 1\n", "a, ".repeat(130_000)),
    ] {
        let e = try_work(&[(super::load::VISIBILITY, &bad)])
            .unwrap_err()
            .to_string();
        assert!(
            e.chars().count() < 400,
            "a {}-character error",
            e.chars().count()
        );
        assert!(e.contains("visibility.yaml:"), "{e}");
    }
}
