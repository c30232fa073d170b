//! Table tests of each check at its threshold, folding and span mapping, exemptions, the
//! result mapping and the serialised shape. The world: two sisters, やな and あゆ.

use super::*;

pub(crate) const CAT: &str = "あゆは昔、姉に内緒で猫を拾って隠れて飼っていた";
pub(crate) const LETTER: &str = "やなは東京の音楽大学から届いた合格通知を机の引き出しに隠している";
pub(crate) const PIANO_SECRET: &str = "リビングのピアノは、亡くなった母がやなに遺したものだった";
pub(crate) const NOW: &str = "やなは最近、ピアノの前で長く黙り込むことがある。進路の話になると急に口数が減り、夜遅くまで部屋の明かりがついている。";

pub(crate) fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

pub(crate) fn secret(id: &str, entity: &str, content: &str, level: u8) -> LeakSecret {
    LeakSecret {
        id: id.into(),
        entity: entity.into(),
        content: content.into(),
        level,
        importance: Importance::Medium,
        forbidden_keywords: vec![],
        allowed_expressions: vec![],
        subtlety: 5,
    }
}

pub(crate) fn world() -> ReviewInput {
    let mut cat = secret("SEC-001", "あゆ", CAT, 2);
    cat.importance = Importance::Critical;
    cat.forbidden_keywords = v(&["子猫", "物置"]);
    cat.allowed_expressions = v(&[
        "猫の話になると、あゆは少しだけ目をそらした",
        "あゆは時々、窓の外の塀をじっと見つめる",
    ]);
    let mut letter = secret("SEC-002", "やな", LETTER, 2);
    letter.importance = Importance::High;
    letter.forbidden_keywords = v(&["合格通知", "音大"]);
    letter.allowed_expressions = v(&[
        "やなは郵便受けを気にしている",
        "やなは最近、ピアノの前で長く黙り込むことがある",
    ]);
    let mut piano = secret("SEC-003", "やな", PIANO_SECRET, 0);
    // Written half-width in the vault on purpose: both sides are folded.
    piano.forbidden_keywords = v(&["母の形見", "ﾋﾟｱﾉ"]);
    let mut spicy = secret(
        "SEC-004",
        "あゆ",
        "あゆは辛い食べ物が苦手で、カレーはいつも甘口を選ぶ",
        3,
    );
    spicy.forbidden_keywords = v(&["甘口"]);
    let setting = |key: &str, text: &str, level| SettingText {
        key: key.into(),
        text: text.into(),
        level,
    };
    ReviewInput {
        secrets: vec![cat, letter, piano, spicy],
        settings: vec![
            setting(
                "characters/やな/基本情報",
                "やなは十九歳の大学生で、妹のあゆと二人で古い一軒家に暮らしている。朝が弱く、コーヒーを三杯飲まないと目が覚めない。",
                3,
            ),
            setting(
                "characters/あゆ/基本情報",
                "あゆは十六歳の高校生。丁寧な言葉で話し、図書委員として放課後はいつも図書室にいる。",
                3,
            ),
            setting("characters/やな/現在の状態", NOW, 3),
            setting(
                "world/家/隠し設定",
                "物置の奥には、古い段ボール箱と毛布が今も置かれている。",
                0,
            ),
        ],
        ..Default::default()
    }
}

pub(crate) fn run(text: &str) -> Review {
    review(text, &world(), &ReviewConfig::default())
}

pub(crate) fn of(r: &Review, kind: IssueKind) -> Vec<&LeakIssue> {
    r.issues.iter().filter(|i| i.kind == kind).collect()
}

fn slice(text: &str, span: [usize; 2]) -> String {
    text.chars().skip(span[0]).take(span[1] - span[0]).collect()
}

#[test]
fn every_keyword_occurrence_is_reported_with_its_span_and_context() {
    let text = "音大、音大、また音大。";
    let r = run(text);
    let hits = of(&r, IssueKind::ForbiddenKeyword);
    let spans: Vec<_> = hits.iter().map(|i| i.span).collect();
    assert_eq!(spans, vec![[0, 2], [3, 5], [8, 10]]);
    assert!(hits.iter().all(|i| i.severity == Severity::Critical));
    assert_eq!(hits[0].secret_id.as_deref(), Some("SEC-002"));
    assert_eq!(
        hits[0].detail,
        "「音大」というキーワードが使われています（秘密SEC-002の禁止キーワード）"
    );
    assert!(
        hits[0]
            .suggestion
            .contains("「やなは郵便受けを気にしている」")
    );
    assert_eq!(r.result, ReviewResult::Rejected);

    // ±20 original chars of context, clipped at the ends.
    let pad = "あいうえおかきくけこさしすせそたちつてとなにぬねの";
    let text = format!("{pad}合格通知{pad}");
    let r = run(&text);
    let hit = of(&r, IssueKind::ForbiddenKeyword)[0];
    assert_eq!(hit.span, [25, 29]);
    let ctx = hit.context.as_deref().unwrap();
    assert_eq!(ctx.chars().count(), 44);
    assert_eq!(ctx, slice(&text, [5, 49]));
    let r = run("音大。");
    assert_eq!(
        of(&r, IssueKind::ForbiddenKeyword)[0].context.as_deref(),
        Some("音大。")
    );
}

#[test]
fn keywords_match_across_widths_and_spans_point_at_the_original() {
    // ＯＫ！ and ｷﾞﾀｰ fold to fewer or different chars; offsets stay original.
    let text = "ＯＫ！ｷﾞﾀｰより合格通知が先。";
    let r = run(text);
    let hit = of(&r, IssueKind::ForbiddenKeyword)[0];
    assert_eq!(hit.span, [9, 13]);
    assert_eq!(slice(text, hit.span), "合格通知");

    // Keyword written half-width in the vault, full-width in the text, and the reverse.
    for (text, want) in [("母のピアノを弾いた。", [2, 5]), ("ﾋﾟｱﾉ弾こうよ。", [0, 4])]
    {
        let r = run(text);
        let hit = of(&r, IssueKind::ForbiddenKeyword)[0];
        assert_eq!(hit.secret_id.as_deref(), Some("SEC-003"));
        assert_eq!(hit.span, want, "{text}");
        assert!(hit.detail.contains("「ﾋﾟｱﾉ」"), "{}", hit.detail);
    }
}

#[test]
fn only_secrets_up_to_level_two_are_checked() {
    // SEC-004 is level 3: its keyword and content are free to use.
    let r = run("あゆは辛い食べ物が苦手で、カレーはいつも甘口を選ぶよね。");
    // Only a direct quotation counts, as it does for any setting text.
    assert!(!r.issues.is_empty());
    assert!(
        r.issues
            .iter()
            .all(|i| i.kind == IssueKind::DirectQuotation)
    );
    // SEC-003 is level 0: still checked — the model may stumble on it.
    let r = run("母の形見なんだ。");
    assert_eq!(of(&r, IssueKind::ForbiddenKeyword).len(), 1);
}

#[test]
fn allowed_expressions_exempt_their_own_secret_only() {
    // ピアノ inside SEC-002's allowed expression: exempt for SEC-002 (not its keyword anyway)
    // but still SEC-003's keyword.
    let text = "やなは最近、ピアノの前で長く黙り込むことがある。";
    let r = run(text);
    let hits = of(&r, IssueKind::ForbiddenKeyword);
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].secret_id.as_deref(), Some("SEC-003"));

    let mut input = world();
    input.secrets[0].forbidden_keywords.push("猫".into());
    let cfg = ReviewConfig::default();
    let verbatim = review("猫の話になると、あゆは少しだけ目をそらした。", &input, &cfg);
    assert!(verbatim.issues.is_empty(), "{:#?}", verbatim.issues);
    let altered = review("猫の話になると、あゆは目をそらした。", &input, &cfg);
    assert_eq!(of(&altered, IssueKind::ForbiddenKeyword).len(), 1);
}

#[test]
fn allowed_expressions_themselves_are_never_flagged() {
    let input = world();
    let cfg = ReviewConfig::default();
    for s in input.secrets.iter().filter(|s| s.level <= 2) {
        for a in &s.allowed_expressions {
            for text in [a.clone(), format!("{a}。"), format!("その日、{a}。")] {
                let r = review(&text, &input, &cfg);
                let own: Vec<_> = r
                    .issues
                    .iter()
                    .filter(|i| i.secret_id.as_deref() == Some(&s.id))
                    .collect();
                assert!(own.is_empty(), "{text}: {own:#?}");
                assert!(of(&r, IssueKind::DirectQuotation).is_empty(), "{text}");
            }
        }
    }
}

#[test]
fn quotation_starts_at_twenty_chars() {
    let setting: Vec<char> = world().settings[0].text.chars().collect();
    // 朝が弱く、コーヒーを三杯…: in the setting 。 comes before it, in the text 、 and after it
    // って, so the run cannot grow past n.
    let start = setting.iter().position(|&c| c == '朝').unwrap();
    for (n, want) in [(19usize, 0usize), (20, 1), (24, 1)] {
        let quote: String = setting[start..start + n].iter().collect();
        let text = format!("ねえ、{quote}って本当？");
        let r = run(&text);
        let hits = of(&r, IssueKind::DirectQuotation);
        assert_eq!(hits.len(), want, "{n}: {text}");
        if let Some(hit) = hits.first() {
            assert_eq!(hit.span, [3, 3 + n]);
            assert_eq!(
                hit.detail,
                format!("設定「characters/やな/基本情報」の文を{n}文字そのまま引用しています")
            );
            assert_eq!(hit.secret_id, None);
            assert_eq!(hit.severity, Severity::High);
        }
    }
}

#[test]
fn quotation_ignores_width_and_spaces_and_merges_overlaps() {
    // The whole first setting, with a half-width copy of コーヒー and a space inside.
    let text = "やなは十九歳の大学生で、妹のあゆと二人で 古い一軒家に暮らしている。朝が弱く、ｺｰﾋｰを三杯飲まないと目が覚めない。";
    let r = run(text);
    let hits = of(&r, IssueKind::DirectQuotation);
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(hits[0].span, [0, text.chars().count()]);
    let n = world().settings[0].text.chars().count();
    assert!(
        hits[0].detail.contains(&format!("{n}文字")),
        "{}",
        hits[0].detail
    );
}

#[test]
fn quoting_a_secret_names_its_id_not_its_content() {
    let r = run(&format!("{PIANO_SECRET}。"));
    let hit = of(&r, IssueKind::DirectQuotation)[0];
    assert_eq!(hit.secret_id.as_deref(), Some("SEC-003"));
    assert!(!hit.detail.contains("母"), "{}", hit.detail);
}

#[test]
fn quotation_leaves_out_allowed_text() {
    // The allowed expression is also a setting's first sentence: using it is fine.
    let allowed = "やなは最近、ピアノの前で長く黙り込むことがある。";
    assert!(of(&run(allowed), IssueKind::DirectQuotation).is_empty());
    // Copying the rest of that setting is not; the span starts after the allowed part.
    let r = run(NOW);
    let hits = of(&r, IssueKind::DirectQuotation);
    assert_eq!(hits.len(), 1);
    let at = allowed.chars().count() - 1;
    assert_eq!(hits[0].span, [at, NOW.chars().count()]);
}

#[test]
fn no_secret_content_in_any_message() {
    let text = format!("{CAT}。\n{LETTER}。\n{PIANO_SECRET}。\n子猫と物置と音大と母の形見。");
    let r = run(&text);
    assert!(r.issues.len() >= 8, "{:#?}", r.issues);
    for s in &world().secrets {
        let content: Vec<char> = s.content.chars().filter(|c| c.is_alphanumeric()).collect();
        for i in &r.issues {
            for w in content.windows(6) {
                let w: String = w.iter().collect();
                assert!(
                    !i.detail.contains(&w) && !i.suggestion.contains(&w),
                    "{i:#?}"
                );
            }
        }
    }
}

#[test]
fn locations_count_non_empty_lines() {
    let text = "おはよう。\n\n今日は晴れ。\n　音大の話をしよう。";
    let r = run(text);
    let hit = of(&r, IssueKind::ForbiddenKeyword)[0];
    assert_eq!(hit.location, "第3段落");
    assert_eq!(slice(text, hit.span), "音大");
    let r = run("音大。");
    assert_eq!(r.issues[0].location, "第1段落");
}

#[test]
fn results_map_by_severity_and_are_configurable() {
    let cfg = ReviewConfig::default();
    let approved = run("おはよう、お姉ちゃん。今日もいい天気ですね。");
    // Static checks only: never plain "approved" (issue 27); without a dictionary the kana
    // readings of 音大 went unchecked, which is a warning (issue 26 §4).
    let expected = if approved.readings == ReadingsStatus::NotChecked {
        ReviewResult::Warning
    } else {
        ReviewResult::ApprovedWithoutSemantic
    };
    assert_eq!((approved.result, approved.issues.len()), (expected, 0));
    assert!(approved.unchecked.contains(&SEMANTIC_CHECK.to_string()));
    assert_eq!(
        run("やなは机の引き出しに何かを隠している。").result,
        ReviewResult::Warning
    );
    assert_eq!(run("音大に行くの？").result, ReviewResult::Rejected);
    // A similarity issue (high) rejects by default, warns when only critical rejects.
    let line = "あゆは昔、姉に内緒で拾った猫を飼っていた。";
    assert_eq!(run(line).result, ReviewResult::Rejected);
    let lenient = ReviewConfig {
        reject_at: Severity::Critical,
        ..cfg.clone()
    };
    assert_eq!(
        review(line, &world(), &lenient).result,
        ReviewResult::Warning
    );
    let quiet = ReviewConfig {
        warn_at: Severity::High,
        ..cfg
    };
    let hint = "やなは机の引き出しに何かを隠している。";
    assert_eq!(review(hint, &world(), &quiet).result, expected);
}

#[test]
fn issues_sort_by_start_then_severity() {
    let r = run("物置にいた子猫のこと、覚えてる？\n音大。");
    let keys: Vec<_> = r.issues.iter().map(|i| (i.span[0], i.severity)).collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    assert_eq!(keys, sorted);
    assert!(keys.len() >= 3);
}

#[test]
fn review_serialises_in_the_seed_shape() {
    let r = run("音大に行くの？");
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["result"], "rejected");
    assert_eq!(
        json["embeddings"],
        serde_json::json!({"status": "disabled"})
    );
    let issue = &json["issues"][0];
    for key in [
        "type",
        "severity",
        "location",
        "detail",
        "suggestion",
        "secret_id",
        "span",
    ] {
        assert!(issue.get(key).is_some(), "{key} missing: {issue}");
    }
    assert_eq!(issue["type"], "forbidden_keyword");
    assert_eq!(issue["severity"], "critical");
    assert_eq!(issue["span"], serde_json::json!([0, 2]));
    assert!(issue.get("score").is_none());
    let skipped = EmbedStatus::Skipped {
        reason: "connection refused".into(),
    };
    assert_eq!(
        serde_json::to_value(skipped).unwrap(),
        serde_json::json!({"status": "skipped", "reason": "connection refused"})
    );
    let back: Review = serde_json::from_value(json).unwrap();
    assert_eq!(back, r);
}

#[test]
fn config_overrides_from_toml_keep_the_other_defaults() {
    let cfg: ReviewConfig = toml::from_str(
        "quote_min_chars = 25\nreject_at = \"critical\"\n[thresholds]\ncritical = 0.5\n",
    )
    .unwrap();
    assert_eq!(cfg.quote_min_chars, 25);
    assert_eq!(cfg.reject_at, Severity::Critical);
    assert_eq!(cfg.thresholds.critical, 0.5);
    assert_eq!(cfg.thresholds.high, 0.60);
    assert_eq!(cfg.embed_threshold, 0.75);
    assert!(toml::from_str::<ReviewConfig>("quote_min = 25").is_err());
}

#[test]
fn a_reviewer_reviews_many_texts_and_an_empty_text_is_approved() {
    let reviewer = Reviewer::new(&world(), &ReviewConfig::default());
    assert_eq!(reviewer.review("").result, ReviewResult::Approved);
    assert_eq!(reviewer.review("音大。"), run("音大。"));
    assert_eq!(reviewer.review("\n\n").issues.len(), 0);
}
