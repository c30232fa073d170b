//! Issue 26 §4 and issue 27: what a review says about the checks it could not run, keyword
//! spellings a writer's readers actually type (kana, casual, mixed), writer-given readings, one
//! issue per occurrence, and level-0 labels that never renumber.

use std::path::Path;

use crate::safety::variants::Dict;
use crate::vault::leak::{
    IssueKind, READINGS_CHECK, ReadingsStatus, Review, ReviewConfig, ReviewResult, Reviewer,
    SEMANTIC_CHECK,
};
use crate::vault::load::{Work, from_files};

const SECRET: &str = "リナは滅びた王家の生き残りで、北の島で名前を変えて生きている";

fn vis(keywords: &str) -> String {
    format!(
        "default_visibility: 3\nentities:\n  characters:\n    リナ:\n      secrets:\n        - id: SEC-HEIR\n          content: {SECRET}\n          visibility: 2\n          importance: critical\n          forbidden_keywords: {keywords}\n"
    )
}

fn work_with(keywords: &str) -> Work {
    let files = vec![
        ("_ai_control/visibility.yaml".to_string(), vis(keywords)),
        (
            "characters/リナ.md".to_string(),
            "---\nname: リナ\n---\n## 基本情報\n旅の途中で姉妹と知り合った少女。\n".to_string(),
        ),
    ];
    from_files("w", Path::new("vault/w"), true, files).unwrap()
}

const PLAIN: &str = "[王家, 生き残り, 生きている, 北の島]";
const READ: &str =
    "[{word: 王家, reading: おうけ}, {word: 生き残り, reading: いきのこり}, 生きている, 北の島]";

fn reviewer(keywords: &str, dict: Dict) -> Reviewer {
    let w = work_with(keywords);
    Reviewer::with_dict(
        &w.review_input(Some("yana")),
        &ReviewConfig::default(),
        dict,
    )
}

fn ipadic() -> Option<Dict> {
    crate::text::testing::ipadic().map(Dict::from)
}

fn keyword_hits(r: &Review) -> usize {
    r.issues
        .iter()
        .filter(|i| i.kind == IssueKind::ForbiddenKeyword)
        .count()
}

/// Sentence frames around a keyword spelling, ordinary chat Japanese.
fn frames(word: &str) -> Vec<String> {
    [
        "{}の話、聞いたことある？",
        "ねえ、{}ってほんと？",
        "昨日から{}のことばかり考えてる。",
        "それって{}だよね。",
    ]
    .iter()
    .map(|f| f.replace("{}", word))
    .collect()
}

#[test]
fn kana_spellings_are_rejected_with_the_dictionary() {
    let Some(dict) = ipadic() else { return };
    let r = reviewer(PLAIN, dict);
    for spelled in [
        "おうけ",
        "オウケ",
        "ｵｳｹ",
        "ｲｷﾉｺﾘ",
        "いきのこり",
        "イキノコリ",
    ] {
        for text in frames(spelled) {
            let review = r.review(&text);
            assert_eq!(review.result, ReviewResult::Rejected, "{text}");
            assert_eq!(review.readings, ReadingsStatus::Checked);
        }
    }
}

#[test]
fn without_a_dictionary_a_line_is_never_approved_and_says_why() {
    let r = reviewer(PLAIN, Dict::none());
    for text in frames("おうけ").iter().chain(&frames("いい天気")) {
        let review = r.review(text);
        assert_eq!(review.readings, ReadingsStatus::NotChecked, "{text}");
        assert!(review.unchecked.contains(&READINGS_CHECK.to_string()));
        assert!(
            matches!(
                review.result,
                ReviewResult::Warning | ReviewResult::Rejected
            ),
            "{text}"
        );
        let f = crate::vault::review::coverage(&review);
        assert_eq!(f.status, crate::director::Status::Warn);
        assert!(f.message.contains("かな読み"), "{}", f.message);
    }
}

#[test]
fn writer_given_readings_catch_kana_without_a_dictionary() {
    let r = reviewer(READ, Dict::none());
    for spelled in ["おうけ", "オウケ", "ｵｳｹ", "ｲｷﾉｺﾘ", "いきのこり"] {
        for text in frames(spelled) {
            let review = r.review(&text);
            assert_eq!(review.result, ReviewResult::Rejected, "{text}");
            assert_eq!(keyword_hits(&review), 1, "{text}");
        }
    }
    // Every kanji keyword with a reading: nothing needed the dictionary.
    let all = "[{word: 王家, reading: おうけ}, {word: 北の島, reading: [きたのしま]}]";
    let review = reviewer(all, Dict::none()).review("いい天気だね。");
    assert_eq!(review.readings, ReadingsStatus::NotNeeded);
    assert_eq!(review.result, ReviewResult::ApprovedWithoutSemantic);
}

#[test]
fn casual_te_iru_is_caught_without_a_dictionary() {
    let r = reviewer("[生きている, 住んでいる, 隠れていた]", Dict::none());
    for casual in ["生きてる", "住んでる", "隠れてた", "いきてる"] {
        let dict_needed = casual == "いきてる";
        for text in frames(casual) {
            let review = r.review(&text);
            if dict_needed {
                continue;
            }
            assert_eq!(review.result, ReviewResult::Rejected, "{text}");
        }
    }
    // Not every てい is ている.
    let review = r.review("丁寧にていねいに書いてね。");
    assert_eq!(keyword_hits(&review), 0);
}

#[test]
fn mixed_kanji_and_kana_spellings_are_caught_with_the_dictionary() {
    let Some(dict) = ipadic() else { return };
    let r = reviewer(PLAIN, dict);
    for mixed in ["きたの島", "北のしま", "きたのしま", "いきてる"] {
        for text in frames(mixed) {
            // An all-kana reading counts on token boundaries only: in 「きたのしまってほんと」
            // IPADIC reads しまっ|て (仕舞う), so it is not claimed (a known limit).
            if mixed == "きたのしま" && text.contains("しまって") {
                continue;
            }
            let review = r.review(&text);
            assert_eq!(review.result, ReviewResult::Rejected, "{text}");
        }
    }
}

#[test]
fn one_occurrence_is_one_issue() {
    let r = reviewer("[母の形見, 形見]", Dict::none());
    let review = r.review("それは母の形見なの。");
    assert_eq!(keyword_hits(&review), 1);
    let hit = review
        .issues
        .iter()
        .find(|i| i.kind == IssueKind::ForbiddenKeyword)
        .unwrap();
    assert_eq!(hit.span, [3, 7]);
    assert!(hit.detail.contains("母の形見"), "{}", hit.detail);
    // Two separate occurrences stay two.
    assert_eq!(keyword_hits(&r.review("形見と、母の形見。")), 2);
}

#[test]
fn a_static_review_is_never_plain_approved() {
    let r = reviewer(READ, Dict::none());
    let review = r.review("今日はいい天気だね。");
    assert!(review.unchecked.contains(&SEMANTIC_CHECK.to_string()));
    assert_ne!(review.result, ReviewResult::Approved);
    assert_eq!(
        serde_json::to_value(&review).unwrap()["result"],
        if review.result == ReviewResult::Warning {
            "warning"
        } else {
            "approved_without_semantic_check"
        }
    );
    let f = crate::vault::review::coverage(&review);
    assert!(f.message.contains("意味的類似度"), "{}", f.message);
    assert!(crate::vault::review::is_coverage(&f));
}

const HIDDEN: &str = "default_visibility: 0\nentities:\n  characters:\n    リナ:\n      sections:\n        基本情報: 3\n";

fn hidden_work(extra_section: bool) -> Work {
    let mut file = String::from("---\nname: リナ\n---\n");
    if extra_section {
        file.push_str("## 最初の秘密\n新しく書き足した秘密。\n");
    }
    file.push_str(
        "## 基本情報\n少女。\n## 隠し設定\n実は王家の生き残り。\n## 過去\n北の島で育った。\n",
    );
    let files = vec![
        (
            "_ai_control/visibility.yaml".to_string(),
            HIDDEN.to_string(),
        ),
        ("characters/リナ.md".to_string(), file),
    ];
    from_files("w", Path::new("vault/w"), true, files).unwrap()
}

fn hidden_ids(w: &Work) -> Vec<(String, String)> {
    w.review_input(Some("ayu"))
        .secrets
        .iter()
        .filter(|s| s.level == 0)
        .map(|s| (s.id.clone(), s.content.clone()))
        .collect()
}

#[test]
fn level_0_labels_do_not_renumber_and_the_owner_can_map_them_back() {
    let before = hidden_ids(&hidden_work(false));
    let after = hidden_ids(&hidden_work(true));
    assert_eq!(after.len(), before.len() + 1);
    for (id, content) in &before {
        assert!(
            after.iter().any(|(i, c)| i == id && c == content),
            "{id} changed when a level-0 item was added: {after:?}"
        );
        assert!(!id.contains("隠し設定") && !id.contains("過去"), "{id}");
    }
    let w = hidden_work(true);
    let (label, _) = &after[0];
    let owner = w.hidden_owner(label).unwrap();
    assert!(owner.starts_with("characters/リナ/"), "{owner}");
    assert_eq!(w.hidden_owner("非公開の設定#000000"), None);
}

const FS: &str = "---\nname: 風鈴\nstatus: planted\nforbidden_keywords: [形見]\n---\n## 内容\n風鈴は母の形見。\n\n## 回収予定\n最終回で、あゆが風鈴を直して鳴らす。\n";
const FS_VIS: &str =
    "default_visibility: 0\nentities:\n  foreshadowing:\n    FS-001:\n      visibility: 2\n";

fn fs_work(fs: &str, builtin_template: bool) -> Work {
    let mut files = vec![
        (
            "_ai_control/visibility.yaml".to_string(),
            FS_VIS.to_string(),
        ),
        ("_foreshadowing/FS-001.md".to_string(), fs.to_string()),
    ];
    if !builtin_template {
        files.push((
            "_ai_control/templates/level2_x.yaml".to_string(),
            "template_id: x\nversion: \"1\"\ndescription: x\nlevel: 2\nprompt_template: |\n  {secret_content}\n".to_string(),
        ));
    }
    from_files("w", Path::new("vault/w"), true, files).unwrap()
}

#[test]
fn the_payoff_plan_is_withheld_unless_marked_and_the_writer_is_told() {
    let w = fs_work(FS, true);
    let prompt = w.context(Some("yana")).prompt;
    assert!(prompt.contains("風鈴は母の形見。"), "{prompt}");
    assert!(!prompt.contains("最終回"), "{prompt}");
    assert!(!prompt.contains("内容: 内容:"), "{prompt}");
    let warned = w.foreshadowing_warnings(None);
    assert!(warned.iter().any(|m| m.contains("回収予定")), "{warned:?}");
    // Still checked by the leak review, as a level-0 text.
    let review = Reviewer::with_dict(
        &w.review_input(Some("yana")),
        &ReviewConfig::default(),
        Dict::none(),
    )
    .review("最終回で、あゆが風鈴を直して鳴らすんだよね。");
    assert_eq!(review.result, ReviewResult::Rejected, "{review:?}");
    // Marked by the writer: sent, and no warning.
    let marked = FS.replace("## 回収予定\n", "## 回収予定\n<!-- ai_visibility: 2 -->\n");
    let w = fs_work(&marked, true);
    assert!(w.context(Some("yana")).prompt.contains("最終回"));
    assert!(
        w.foreshadowing_warnings(None)
            .iter()
            .all(|m| !m.contains("回収予定"))
    );
}

#[test]
fn no_label_is_doubled_in_any_prompt() {
    for builtin in [true, false] {
        let w = fs_work(FS, builtin);
        for reader in ["yana", "ayu"] {
            let prompt = w.context(Some(reader)).prompt;
            for label in ["内容", "回収予定", "参考情報"] {
                let twice = format!("{label}: {label}:");
                assert!(!prompt.contains(&twice), "{twice} in {prompt}");
            }
        }
    }
}

#[test]
fn a_secret_section_naming_a_heading_is_refused_at_its_line() {
    let vis = "default_visibility: 0\nentities:\n  characters:\n    リナ:\n      secrets:\n        - id: S1\n          content: 秘密の内容\n          visibility: 1\n          section: 隠し設定\n";
    let files = vec![
        ("_ai_control/visibility.yaml".to_string(), vis.to_string()),
        (
            "characters/リナ.md".to_string(),
            "---\nname: リナ\n---\n## 隠し設定\n実は王家。\n".to_string(),
        ),
    ];
    let Err(e) = from_files("w", Path::new("vault/w"), true, files) else {
        panic!("refused")
    };
    let m = e.to_string();
    assert!(m.contains(":9:"), "{m}");
    assert!(m.contains("section: 隠し設定"), "{m}");
    let blank = vis.replace("section: 隠し設定", "section: \" \"");
    let files = vec![("_ai_control/visibility.yaml".to_string(), blank)];
    assert!(from_files("w", Path::new("vault/w"), true, files).is_err());
}
