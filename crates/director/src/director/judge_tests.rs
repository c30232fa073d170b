use super::*;

fn rule() -> JudgeRule {
    JudgeRule {
        retry_below: 3.5,
        pass_from: 4.0,
        examples: Vec::new(),
    }
}

#[test]
fn bare_json_is_read() {
    let s = parse(r#"{"frame":5,"roleplay":4,"connection":4,"density":3,"naturalness":4,"reason":"自然です","suggestion":""}"#).unwrap();
    assert_eq!(s.values(), [5.0, 4.0, 4.0, 3.0, 4.0]);
    assert_eq!(s.mean, 4.0);
    assert_eq!(s.reason, "自然です");
    assert_eq!(s.status(&rule()), Status::Pass);
}

#[test]
fn fenced_json_with_prose_is_read() {
    let reply = "採点しました。\n```json\n{\n  \"frame\": 3, \"roleplay\": 3, \"connection\": \"4\",\n  \"density\": 4, \"naturalness\": 3,\n  \"reason\": \"口調が{少し}硬い\"\n}\n```\n以上です。";
    let s = parse(reply).unwrap();
    assert_eq!(s.values(), [3.0, 3.0, 4.0, 4.0, 3.0]);
    assert_eq!(s.reason, "口調が{少し}硬い");
    assert_eq!(s.status(&rule()), Status::Retry, "mean 3.4 < 3.5");
}

#[test]
fn braces_in_prose_before_the_object_are_skipped() {
    let reply = "形式 {frame, roleplay} で答えます: {\"scores\": {\"frame\": 4, \"roleplay\": 4, \"connection\": 3, \"density\": 4, \"naturalness\": 3}}";
    let s = parse(reply).unwrap();
    assert_eq!(s.mean, 3.6);
    assert_eq!(s.status(&rule()), Status::Warn);
}

#[test]
fn scores_are_clamped_and_aliases_accepted() {
    let s = parse(r#"{"frame_consistency": 9, "roleplay": 0, "coherence": 5, "information_density": "2点", "naturalness": 4.5}"#).unwrap();
    assert_eq!(s.values(), [5.0, 1.0, 5.0, 2.0, 4.5]);
}

#[test]
fn unreadable_replies_are_errors_not_passes() {
    for reply in [
        "",
        "とても自然な発言だと思います。満点です。",
        r#"{"frame": 4, "roleplay": 4}"#,
        r#"{"frame": "よい", "roleplay": 4, "connection": 4, "density": 4, "naturalness": 4}"#,
        "```json\n{\"frame\": 4, \"roleplay\": \n```",
    ] {
        assert!(parse(reply).is_err(), "{reply:?} must not parse");
    }
}

#[test]
fn boundaries_of_the_mean() {
    let at = |m: f64| JudgeScores {
        frame: m,
        roleplay: m,
        connection: m,
        density: m,
        naturalness: m,
        mean: m,
        reason: String::new(),
        suggestion: String::new(),
    };
    assert_eq!(at(3.4).status(&rule()), Status::Retry);
    assert_eq!(at(3.5).status(&rule()), Status::Warn);
    assert_eq!(at(3.9).status(&rule()), Status::Warn);
    assert_eq!(at(4.0).status(&rule()), Status::Pass);
}

#[test]
fn unscored_outcome_keeps_raw_and_is_worse_than_pass() {
    let o = JudgeOutcome::unscored(
        "JSONオブジェクトが見つかりません".into(),
        vec!["満点です".into()],
    );
    assert_eq!(o.status, Status::Unscored);
    assert!(o.status > Status::Pass);
    let f = o.finding().unwrap();
    assert_eq!(f.rule, RuleId::Judge);
    assert_eq!(f.status, Status::Unscored);
    assert_eq!(f.evidence.as_deref(), Some("満点です"));
}

#[test]
fn low_aspects_are_named_in_the_finding() {
    let s = parse(r#"{"frame":4,"roleplay":2,"connection":4,"density":4,"naturalness":2,"suggestion":"姉様と呼んでください"}"#).unwrap();
    let o = JudgeOutcome::scored(s, &rule(), vec![]);
    assert_eq!(o.status, Status::Retry);
    let f = o.finding().unwrap();
    assert!(f.message.contains("ロールプレイ2"), "{}", f.message);
    assert!(f.message.contains("自然さ2"), "{}", f.message);
    assert_eq!(f.suggestion, "姉様と呼んでください");
}

#[test]
fn prompt_names_every_aspect_and_the_line() {
    let p = prompt(&JudgeInput {
        speaker_name: "あゆ",
        speaker_role: "妹",
        partner_name: "やな",
        topic: "商店街の福引",
        world: "夕方の商店街",
        partner_last: Some("あ、福引やってる！"),
        examples: &[],
        names: &[],
        text: "一等は温泉旅行のようですね。",
    });
    assert_eq!(p.len(), 1);
    for (key, _, _) in ASPECTS {
        assert!(p[0].content.contains(key));
    }
    assert!(p[0].content.contains("一等は温泉旅行のようですね。"));
    assert!(p[0].content.contains("あ、福引やってる！"));
    let schema = schema();
    assert_eq!(schema["required"].as_array().unwrap().len(), 5);
}

/// Issue 13 §4: what a small model sent back when the prompt had an all-4 example.
#[test]
fn replies_that_echo_the_template_are_unreadable() {
    let observed = r#"{"frame": 4, "roleplay": 4, "connection": 4, "density": 4, "naturalness": 4, "reason": "短い理由", "suggestion": "改善案（問題がなければ空文字）"}"#;
    assert!(parse(observed).is_err());
    let placeholders = [
        "短い理由",
        "「短い理由」",
        " 短い 理由。",
        "改善案（問題がなければ空文字）",
        "改善案(問題がなければ空文字)",
        "その点数にした根拠を、発言の中身に触れて一文で",
    ];
    // Generated: every score pattern (identical or not) with every copied reason or
    // suggestion is unreadable.
    // Seeded (fastrand): the same cases on every run.
    let mut rng = fastrand::Rng::with_seed(7u64);
    let mut seed: u64;
    for round in 0..200 {
        seed = rng.u64(..);
        let v: Vec<u64> = (0..5).map(|k| 1 + (seed >> (8 * k + 3)) % 5).collect();
        let p = placeholders[round % placeholders.len()];
        let (reason, suggestion) = if round % 2 == 0 {
            (p, "")
        } else {
            ("口調が硬い", p)
        };
        let reply = format!(
            r#"{{"frame": {}, "roleplay": {}, "connection": {}, "density": {}, "naturalness": {}, "reason": "{reason}", "suggestion": "{suggestion}"}}"#,
            v[0], v[1], v[2], v[3], v[4]
        );
        assert!(parse(&reply).is_err(), "{reply}");
    }
}

#[test]
fn identical_scores_need_a_reason() {
    for n in 1..=5 {
        let bare = format!(
            r#"{{"frame":{n},"roleplay":{n},"connection":{n},"density":{n},"naturalness":{n}}}"#
        );
        assert!(parse(&bare).is_err(), "{bare}");
        let empty = bare.replace('}', r#","reason":"","suggestion":""}"#);
        assert!(parse(&empty).is_err(), "{empty}");
        let reasoned = bare.replace('}', r#","reason":"相手の問いにそのまま答えていて自然"}"#);
        let s = parse(&reasoned).unwrap();
        assert_eq!(s.mean, n as f64);
    }
    // Differing scores without a reason are still a reading.
    assert!(
        parse(r#"{"frame":4,"roleplay":3,"connection":4,"density":4,"naturalness":4}"#).is_ok()
    );
}

#[test]
fn the_prompt_has_no_example_values() {
    let p = prompt(&JudgeInput {
        speaker_name: "やな",
        speaker_role: "姉",
        partner_name: "あゆ",
        topic: "雨",
        world: "駅",
        partner_last: None,
        examples: &[],
        names: &[],
        text: "モモモモモモ",
    });
    let c = &p[0].content;
    assert!(!c.contains('{'), "{c}");
    let re = regex::Regex::new(r#"":\s*[0-9]"#).unwrap();
    assert!(!re.is_match(c), "{c}");
    assert!(!c.contains("短い理由"));
}

#[test]
fn the_teams_examples_come_before_the_line_and_only_when_there_are_some() {
    let ex = vec![
        JudgeExample {
            speaker: "yana".into(),
            partner_last: Some("姉様、海です。".into()),
            text: "宇宙人の話しよ！".into(),
            usable: false,
            source: "run 3 turn 4".into(),
        },
        JudgeExample {
            speaker: "ayu".into(),
            partner_last: None,
            text: "灯台まで二十分です。".into(),
            usable: true,
            source: String::new(),
        },
    ];
    let input = |examples| JudgeInput {
        speaker_name: "あゆ",
        speaker_role: "妹",
        partner_name: "やな",
        topic: "散歩",
        world: "海辺",
        partner_last: None,
        text: "潮の香りがしますね。",
        examples,
        names: &[("yana", "やな"), ("ayu", "あゆ")],
    };
    let with = prompt(&input(&ex))[0].content.clone();
    let block = with.split("【評価する発言】").next().unwrap();
    assert!(block.contains("例1: やな「宇宙人の話しよ！」（直前の発言「姉様、海です。」を受けて） → 使えない（作り直し）"), "{with}");
    assert!(
        block.contains("例2: あゆ「灯台まで二十分です。」 → 使える（そのまま採用）"),
        "{with}"
    );
    assert!(
        !with.contains("run 3 turn 4"),
        "provenance is for the reader, not the model"
    );
    let without = prompt(&input(&[]))[0].content.clone();
    assert!(!without.contains("判定例"));
    assert!(with.len() > without.len());
    // A reason that copies the examples' heading is an echo, not an answer.
    let echo = r#"{"frame":4,"roleplay":4,"connection":3,"density":4,"naturalness":4,"reason":"採点の目安にしてください（例の発言そのものは評価しません）"}"#;
    assert!(parse(echo).is_err());
}
