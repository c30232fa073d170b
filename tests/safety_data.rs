//! The safety data files: the embedded defaults load, users extend and override them from
//! `<config_dir>/safety/*.toml`, and every mistake in a user's file is reported as
//! path:line:col (or path:line) — never ignored.

use kakeai::safety::{Action, L4Mode, Reason, SafetyRules, Sister, UserContext};

fn with_files(files: &[(&str, &str)]) -> (tempfile::TempDir, Result<SafetyRules, String>) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let r = SafetyRules::load_from(Some(dir.path())).map_err(|e| e.to_string());
    (dir, r)
}

fn judge(r: &SafetyRules, text: &str) -> (Action, Option<u8>, Option<Reason>) {
    let j = r
        .judge
        .judge(text, Sister::Yana, &UserContext::returning(10));
    (j.action, j.layer, j.reason)
}

#[test]
fn builtin_data_loads_and_a_missing_dir_is_fine() {
    let r = SafetyRules::builtin();
    let (words, patterns) = r.judge.sizes();
    assert!(words > 30 && patterns > 10, "{words} {patterns}");
    assert_eq!(r.judge.policy().l4, L4Mode::OnRaise);
    assert!((r.judge.policy().temperature - 0.1).abs() < 1e-6);
    let missing = std::path::Path::new("/nonexistent/kakeai/safety");
    assert!(SafetyRules::load_from(Some(missing)).is_ok());
}

#[test]
fn user_files_add_and_replace_entries() {
    let (_d, r) = with_files(&[
        (
            "10-words.toml",
            r#"
[[word]]
text = "ヘタレ"
tier = "critical"
category = "insult"

# Silence a built-in word by listing it again as safe.
[[word]]
text = "クズ"
tier = "safe"
category = "insult"
"#,
        ),
        (
            "20-patterns.toml",
            r#"
[placeholders]
target = ["ヤナっち"]

[[pattern]]
id = "nickname_threat"
tier = "critical"
category = "violence"
all = ['{target}', 'ぼこぼこ']

[[pattern]]
id = "age_question"
tier = "critical"
category = "age_question"
all = ['何歳']

[contextual]
returning_after = 50
laughter = ["ﾜﾗ"]

[policy]
l4 = "always"
fail_closed = ["insult"]
"#,
        ),
        ("notes.txt", "not toml at all ["),
    ]);
    let r = r.unwrap();
    assert_eq!(
        judge(&r, "ほんとヘタレだな"),
        (Action::Block, Some(1), Some(Reason::StaticNg))
    );
    assert_eq!(judge(&r, "あいつクズだよ").0, Action::Respond);
    // A new placeholder name reaches the patterns, and a pattern id replaces the built-in one.
    assert_eq!(judge(&r, "ヤナっちをぼこぼこにする").1, Some(3));
    assert_eq!(
        judge(&r, "何歳？"),
        (Action::Block, Some(3), Some(Reason::PatternNg))
    );
    // Policy: insults now fail closed.
    assert_eq!(r.judge.policy().l4, L4Mode::Always);
    assert_eq!(judge(&r, "うざい").0, Action::Block);
    // Contextual numbers override, cue lists are merged: 10 previous messages are no longer
    // "returning" unless the caller says so; the added laugh counts.
    let j = r.judge.judge(
        "バカだなぁﾜﾗ",
        Sister::Yana,
        &UserContext {
            previous_messages: 10,
            ..UserContext::default()
        },
    );
    assert_eq!(j.reason, Some(Reason::ContextualNg), "{j:#?}");
    let j = r
        .judge
        .judge("バカﾜﾗ", Sister::Yana, &UserContext::returning(0));
    assert_eq!(j.action, Action::Respond, "{j:#?}");
}

#[test]
fn user_worldview_terms_and_corrections() {
    let (_d, r) = with_files(&[(
        "wv.toml",
        r#"
[worldview]
safe = ["ロボット掃除機"]

[[worldview.term]]
text = "ロボット"
kind = "ai"
status = "warn"

[worldview.character.ayu]
name = "あゆ"
correction = "ふふ、何のことでしょう。"
"#,
    )]);
    let r = r.unwrap();
    let f = r.worldview.check("ロボットだもん", Sister::Ayu);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].status, kakeai::director::Status::Warn);
    assert!(f[0].suggestion.contains("ふふ、何のことでしょう。"));
    assert!(
        r.worldview
            .check("ロボット掃除機を買った", Sister::Ayu)
            .is_empty()
    );
}

#[test]
fn mistakes_in_user_files_are_located() {
    let cases: &[(&str, &str)] = &[
        // TOML syntax.
        ("[[word]]\ntext = \"ヘタレ\nitier = 1\n", ":2:"),
        // A wrong type / unknown value / unknown key, located by serde's span.
        (
            "[[word]]\ntext = \"ヘタレ\"\ntier = \"severe\"\ncategory = \"insult\"\n",
            ":3:",
        ),
        (
            "[[word]]\ntext = \"ヘタレ\"\ntier = \"safe\"\ncategory = \"insult\"\ncolour = 1\n",
            ":5:",
        ),
        // A regex that does not compile.
        (
            "[[pattern]]\nid = \"x\"\ntier = \"warning\"\ncategory = \"insult\"\nall = ['(ab']\n",
            ":5:",
        ),
        // An unknown placeholder.
        (
            "[[pattern]]\nid = \"x\"\ntier = \"warning\"\ncategory = \"insult\"\nall = ['{enemy}']\n",
            ":5:",
        ),
        // A full-width character that folds into regex syntax.
        (
            "[[pattern]]\nid = \"x\"\ntier = \"warning\"\ncategory = \"insult\"\n\nall = ['（笑）']\n",
            ":6:",
        ),
        // An empty word.
        (
            "[[word]]\ntext = \" \"\ntier = \"safe\"\ncategory = \"insult\"\n",
            ":2:",
        ),
        // An out-of-range policy value.
        ("[policy]\nmin_confidence = 3.0\n", ":2:"),
    ];
    for (text, at) in cases {
        let (d, r) = with_files(&[("mine.toml", text)]);
        let e = r.expect_err(text);
        let path = d.path().join("mine.toml").display().to_string();
        assert!(
            e.starts_with(&format!("{path}{at}")),
            "{text:?}\n→ {e}\n(want {path}{at})"
        );
    }
}

/// The workbench chat's PII second opinion (`[pii]` in policy.toml): fail-closed by default, a
/// user's file may change it, and a bad value is reported at its place.
#[test]
fn the_pii_second_opinion_is_configured_and_checked() {
    use kakeai::safety::pii::PiiLlmMode;
    let (_d, r) = with_files(&[]);
    let p = r.unwrap().pii;
    assert_eq!((p.mode, p.seconds), (PiiLlmMode::FailClosed, 5.0));
    let (_d, r) = with_files(&[("mine.toml", "[pii]\nllm = \"off\"\nllm_seconds = 2\n")]);
    let p = r.unwrap().pii;
    assert_eq!((p.mode, p.seconds), (PiiLlmMode::Off, 2.0));
    for bad in ["[pii]\nllm_seconds = 0\n", "[pii]\nllm_seconds = 601\n"] {
        let (_d, r) = with_files(&[("mine.toml", bad)]);
        let e = r.unwrap_err();
        assert!(
            e.contains("mine.toml:2") && e.contains("llm_seconds"),
            "{e}"
        );
    }
    let (_d, r) = with_files(&[("mine.toml", "[pii]\nllm = \"sometimes\"\n")]);
    assert!(r.unwrap_err().contains("mine.toml:2"));
}
