//! The LLM-assisted pass: reply parsing, alignment onto the rule result, and the fail modes.

use super::llm::{LlmReply, parse_reply};
use super::{PiiItem, PiiKind, PiiLlmMode, merge_llm, shared};

fn reply(detected: &str, text: &str, items: &str) -> String {
    format!("PII_DETECTED: {detected}\nMASKED_TEXT: {text}\nDETECTED_ITEMS: {items}\n")
}

#[test]
fn parses_the_three_line_reply_and_its_variants() {
    assert_eq!(
        parse_reply(&reply("true", "[氏名]さんと会った", "氏名")).unwrap(),
        LlmReply {
            detected: true,
            masked_text: Some("[氏名]さんと会った".into()),
            items: vec!["氏名".into()],
        }
    );
    // The no-PII reply of survey_shark's fake client: the masked text is a placeholder.
    let none = parse_reply(&reply("false", "[元のテキストをそのまま]", "なし")).unwrap();
    assert!(!none.detected);
    assert!(none.items.is_empty());
    // Markdown, a code fence, a full-width colon, upper-case values, list items in brackets.
    let fancy = "```\n**PII_DETECTED**： TRUE\n- MASKED_TEXT: 一行目\n二行目[住所]\nDETECTED_ITEMS: [住所, 氏名]\n```";
    let r = parse_reply(fancy).unwrap();
    assert!(r.detected);
    assert_eq!(r.masked_text.as_deref(), Some("一行目\n二行目[住所]"));
    assert_eq!(r.items, vec!["住所", "氏名"]);
}

#[test]
fn rejects_replies_without_a_verdict_or_text() {
    assert!(parse_reply("個人情報はありません").is_err());
    assert!(parse_reply("PII_DETECTED: maybe").is_err());
    assert!(parse_reply("PII_DETECTED: true\nDETECTED_ITEMS: 氏名").is_err());
}

#[test]
fn the_model_adds_what_the_rules_missed() {
    // A bare name with no cue: the rules leave it, the model does not.
    let text = "ジョンに090-1234-5678で連絡";
    let rules = shared().mask(text);
    assert_eq!(rules.masked_text, "ジョンに[電話番号]で連絡");
    let llm = reply("true", "[氏名]に[電話番号]で連絡", "氏名, 電話番号");
    let (m, flag) = merge_llm(rules.clone(), Ok(&llm), PiiLlmMode::FailClosed);
    assert_eq!(flag, None);
    assert_eq!(m.masked_text, "[氏名]に[電話番号]で連絡");
    assert_eq!(
        m.items,
        vec![
            PiiItem {
                kind: PiiKind::Name,
                span: [0, 3]
            },
            PiiItem {
                kind: PiiKind::Phone,
                span: [4, 17]
            },
        ]
    );
    assert_eq!(m.original_sha256, rules.original_sha256);
}

#[test]
fn a_range_that_covers_a_rule_token_swallows_it() {
    let text = "青葉台高校の090-1234-5678番";
    let rules = shared().mask(text);
    assert_eq!(rules.masked_text, "[学校名]の[電話番号]番");
    // The model calls the whole "school + の + phone" one address: its range is widened to
    // whole tokens and mapped back to the original chars.
    let llm = reply("true", "[住所]番", "住所");
    let (m, flag) = merge_llm(rules, Ok(&llm), PiiLlmMode::FailClosed);
    assert_eq!(flag, None);
    assert_eq!(m.masked_text, "[住所]番");
    assert_eq!(
        m.items,
        vec![PiiItem {
            kind: PiiKind::Address,
            span: [0, 19]
        }]
    );
}

#[test]
fn wrapped_text_and_re_marked_tokens_are_understood() {
    let rules = shared().mask("田中さんとマイクに");
    assert_eq!(rules.masked_text, "[氏名]さんとマイクに");
    // The model wrapped its text in [...] and re-marked the rules' token as another kind.
    let llm = reply("true", "[[会社名]さんと[名前]に]", "氏名");
    let (m, flag) = merge_llm(rules, Ok(&llm), PiiLlmMode::FailClosed);
    assert_eq!(flag, None);
    assert_eq!(m.masked_text, "[氏名]さんと[氏名]に");
    assert_eq!(m.items[0].kind, PiiKind::Name, "the rules' kind stands");
    assert_eq!(m.items[1].span, [5, 8]);
}

#[test]
fn failures_follow_the_mode() {
    let rules = shared().mask("ジョンさんと話した");
    let rewritten = reply("true", "[氏名]と話しました", "氏名");
    let bad_inputs: [Result<&str, String>; 3] = [
        Err("timeout".into()),
        Ok("よく分かりません"),
        Ok(&rewritten),
    ];
    for input in bad_inputs {
        let (m, flag) = merge_llm(rules.clone(), input.clone(), PiiLlmMode::FailClosed);
        assert_eq!(m, rules, "fail-closed keeps the rule result");
        assert!(flag.is_some_and(|f| f.contains("要確認")), "{input:?}");
        let (m, flag) = merge_llm(rules.clone(), input.clone(), PiiLlmMode::FailOpen);
        assert_eq!((m, flag), (rules.clone(), None), "fail-open is silent");
        let (m, flag) = merge_llm(rules.clone(), input, PiiLlmMode::Off);
        assert_eq!((m, flag), (rules.clone(), None));
    }
    assert_eq!(PiiLlmMode::default(), PiiLlmMode::FailClosed);
}

#[test]
fn a_claim_without_a_position_is_flagged_only_when_the_rules_found_nothing() {
    // ジョンと話した is found by the rules since names_subject: a name they cannot place.
    let claim = reply("true", "ジョンのことを考えてた", "氏名");
    let nothing = shared().mask("ジョンのことを考えてた");
    let (m, flag) = merge_llm(nothing.clone(), Ok(&claim), PiiLlmMode::FailClosed);
    assert_eq!(m, nothing);
    assert!(flag.is_some_and(|f| f.contains("氏名")));
    let some = shared().mask("田中さんと話した");
    let agree = reply("true", "[氏名]さんと話した", "氏名");
    assert_eq!(
        merge_llm(some.clone(), Ok(&agree), PiiLlmMode::FailClosed),
        (some, None)
    );
}

#[test]
fn a_no_pii_reply_keeps_the_rule_result() {
    let rules = shared().mask("田中さんと話した");
    let no = reply("false", "[元のテキストをそのまま]", "なし");
    assert_eq!(
        merge_llm(rules.clone(), Ok(&no), PiiLlmMode::FailClosed),
        (rules, None)
    );
}

#[test]
fn the_prompt_names_every_token_and_the_reply_keys() {
    for k in PiiKind::ALL {
        assert!(super::LLM_SYSTEM_PROMPT.contains(k.token()), "{k:?}");
    }
    for key in ["PII_DETECTED", "MASKED_TEXT", "DETECTED_ITEMS"] {
        assert!(super::LLM_SYSTEM_PROMPT.contains(key));
    }
    assert!(super::llm_user_prompt("[氏名]さん").ends_with("[氏名]さん"));
}
