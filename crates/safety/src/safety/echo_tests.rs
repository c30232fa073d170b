//! Replies that copy the judges' prompts (the Director's 5-aspect judge and the context judge)
//! are echoes, never answers: `text::echo` against both prompts' text.

use crate::text::echo::*;

fn rng(seed: u64) -> impl FnMut(usize) -> usize {
    crate::test_rng::below(seed)
}

/// Any stretch of either judge prompt (≥ 10 folded chars), copied into a reason with or
/// without words around it, is an echo; and the parsers turn it into an unreadable reply.
#[test]
fn any_fragment_of_a_judge_prompt_copied_into_a_reason_is_an_echo() {
    let prompts = [
        crate::director::judge::prompt_text(),
        crate::safety::context_judge::prompt_text(),
    ];
    let leads = ["", "理由: ", "この発言は", "うーん、"];
    let tails = ["", "です。", "と思います", "！"];
    let mut checked = 0;
    for seed in 0..1200u64 {
        let mut pick = rng(seed);
        let which = pick(2);
        let chars: Vec<char> = prompts[which].chars().collect();
        let len = 10 + pick(30);
        let start = pick(chars.len() - len);
        let frag: String = chars[start..start + len].iter().collect();
        // Only fragments that still have 10 chars of wording after folding.
        if fold_for_echo(&frag).chars().count() < MIN_RUN_CHARS {
            continue;
        }
        let field = format!("{}{}{}", leads[pick(4)], frag.trim(), tails[pick(4)]);
        checked += 1;
        assert!(
            template_echo(&field, prompts[which]).is_some(),
            "seed {seed}: not caught: {field:?}"
        );
        let reason = serde_json::to_string(&field).unwrap();
        if which == 0 {
            let reply = format!(
                r#"{{"frame":1,"roleplay":1,"connection":1,"density":1,"naturalness":1,"reason":{reason},"suggestion":""}}"#
            );
            assert!(crate::director::judge::parse(&reply).is_err(), "{reply}");
        } else {
            let reply =
                format!(r#"{{"context_type":"じゃれ合い","confidence":1.0,"reason":{reason}}}"#);
            assert!(
                crate::safety::context_judge::parse(&reply).is_err(),
                "{reply}"
            );
        }
    }
    assert!(checked > 600, "only {checked} fragments were long enough");
}

/// The real model's copy (issue 13 §4), inside a longer reason.
#[test]
fn the_copied_score_template_is_caught_inside_a_reason() {
    let p = crate::director::judge::prompt_text();
    assert!(template_echo("それぞれ上の観点の点数、1〜5の整数", p).is_some());
    assert!(template_echo("評価: それぞれ上の観点の点数、1〜5の整数です", p).is_some());
}

/// Reasons that talk about the line in their own words are not echoes of either prompt.
#[test]
fn reasons_in_their_own_words_are_not_echoes() {
    let prompts = [
        crate::director::judge::prompt_text(),
        crate::safety::context_judge::prompt_text(),
    ];
    for r in [
        "紅葉の話を受けて、やならしく明るく返している",
        "語尾が硬く、あゆの丁寧さより事務的に聞こえる",
        "同じ「すごい」を三回くり返していて単調",
        "夕飯の話題から急に宇宙の話へ飛んでいる",
        "友だち同士のふざけた呼び方で、脅す意図は見えない",
        "住所を聞き出そうとしていて危ない",
        "天気を尋ねているだけ",
        "モモモモモモモモモモモモ",
    ] {
        for p in prompts {
            assert!(template_echo(r, p).is_none(), "{r}");
        }
    }
}
