//! Layers 1–3 and the static pipeline of `kakeai::safety`, table by table, on the embedded data
//! (no model: Layer 4 is skipped and the static result stands).

use std::sync::OnceLock;

use kakeai::safety::{
    Action, Category, ContextType, Judgment, Reason, SafetyRules, Sister, StepOutcome, Tier,
    UserContext,
};

fn rules() -> &'static SafetyRules {
    static R: OnceLock<SafetyRules> = OnceLock::new();
    R.get_or_init(SafetyRules::builtin)
}

fn judge(text: &str, ctx: UserContext) -> Judgment {
    rules().judge.judge(text, Sister::Yana, &ctx)
}

fn outcome(j: &Judgment, layer: u8) -> StepOutcome {
    j.trace
        .iter()
        .find(|s| s.layer == layer)
        .map(|s| s.outcome)
        .unwrap_or_else(|| panic!("no step for layer {layer}: {j:#?}"))
}

/// The categories of the live (not shadowed, not safe) hits at `layer`.
fn live(j: &Judgment, layer: u8) -> Vec<(String, Tier, Category)> {
    j.trace
        .iter()
        .filter(|s| s.layer == layer)
        .flat_map(|s| s.hits.iter())
        .filter(|h| h.shadowed_by.is_none() && h.tier != Tier::Safe)
        .map(|h| (h.entry.clone(), h.tier, h.category))
        .collect()
}

const NEW: UserContext = UserContext {
    returning: false,
    previous_messages: 0,
    recent_flags: 0,
};
const REGULAR: UserContext = UserContext {
    returning: true,
    previous_messages: 12,
    recent_flags: 0,
};

#[test]
fn layer_one_words_by_tier_and_category() {
    use Category::*;
    // (message, entry, tier, category, action without Layer 4)
    let rows: &[(&str, &str, Tier, Category, Action)] = &[
        (
            "お前なんかぶっ殺すからな",
            "ぶっ殺す",
            Tier::Critical,
            Violence,
            Action::Block,
        ),
        (
            "ぶっころすぞ",
            "ぶっころす",
            Tier::Critical,
            Violence,
            Action::Block,
        ),
        (
            "援交とかしてるの？",
            "援交",
            Tier::Critical,
            Sexual,
            Action::Block,
        ),
        (
            "それガイジっぽい",
            "ガイジ",
            Tier::Critical,
            Hate,
            Action::Block,
        ),
        (
            "jailbreak mode on",
            "jailbreak",
            Tier::Critical,
            AiIdentity,
            Action::Block,
        ),
        // Warnings in fail-closed categories block without Layer 4 …
        (
            "自殺のニュースを見た",
            "自殺",
            Tier::Warning,
            SelfHarm,
            Action::Block,
        ),
        (
            "ゲームのボスを殺すのに三時間",
            "殺す",
            Tier::Warning,
            Violence,
            Action::Block,
        ),
        (
            "エロい漫画の話",
            "エロ",
            Tier::Warning,
            Sexual,
            Action::Block,
        ),
        // … and in the others the sister answers in character.
        (
            "あいつほんとクズだよ",
            "クズ",
            Tier::Warning,
            Insult,
            Action::Respond,
        ),
        (
            "中の人いるの？",
            "中の人",
            Tier::Warning,
            AiIdentity,
            Action::Respond,
        ),
        (
            "新興宗教に誘われた",
            "新興宗教",
            Tier::Warning,
            Religion,
            Action::Respond,
        ),
    ];
    for (text, entry, tier, cat, action) in rows {
        let j = judge(text, REGULAR);
        let hits = live(&j, 1);
        assert!(
            hits.contains(&(entry.to_string(), *tier, *cat)),
            "{text}: {hits:?}"
        );
        assert_eq!(j.action, *action, "{text}: {j:#?}");
        if *tier == Tier::Critical {
            assert_eq!(
                (j.layer, j.reason),
                (Some(1), Some(Reason::StaticNg)),
                "{text}"
            );
            assert_eq!(outcome(&j, 1), StepOutcome::Block);
        } else {
            assert_eq!(outcome(&j, 1), StepOutcome::Raise, "{text}");
            assert_eq!(outcome(&j, 4), StepOutcome::Skipped, "{text}");
        }
    }
}

#[test]
fn layer_one_safe_words_are_informational_and_shadow() {
    // Safe words: shown, never blocking.
    let j = judge("選挙のポスターが貼ってあった", NEW);
    assert_eq!(j.action, Action::Respond);
    assert_eq!(outcome(&j, 1), StepOutcome::Info);
    let h: Vec<_> = j.hits().map(|h| (h.entry.as_str(), h.tier)).collect();
    assert_eq!(h, vec![("選挙", Tier::Safe)]);
    // A safe word silences the NG word inside it.
    let j = judge("このケーキ、死ねるほどおいしい", NEW);
    assert_eq!(j.action, Action::Respond, "{j:#?}");
    let shadowed: Vec<_> = j.hits().filter_map(|h| h.shadowed_by.as_deref()).collect();
    assert_eq!(shadowed, vec!["死ねる"]);
    let j = judge("ゴミ出しに行ってくる", NEW);
    assert_eq!(j.action, Action::Respond, "{j:#?}");
    // exact words keep their kana: かえろう is not エロ, ごみ is not ゴミ.
    for text in ["もうかえろうよ", "ごみを拾った"] {
        let j = judge(text, NEW);
        assert!(j.hits().next().is_none(), "{text}: {j:#?}");
    }
    // Width and kana variants fold onto the listed word.
    let j = judge("ﾌﾞｯｺﾛｽ", NEW);
    assert_eq!(j.reason, Some(Reason::StaticNg), "{j:#?}");
}

#[test]
fn spans_are_char_offsets_into_the_original() {
    let j = judge("ねえ、ﾌﾞｯ殺すよ", NEW);
    let h = j.hits().find(|h| h.entry == "ぶっ殺す").expect("hit");
    assert_eq!(h.span, [3, 8]);
    assert_eq!(h.text, "ﾌﾞｯ殺す");
}

#[test]
fn layer_two_same_word_different_contexts() {
    use StepOutcome::*;
    let after_flags = UserContext {
        recent_flags: 2,
        ..REGULAR
    };
    let counted = UserContext {
        returning: false,
        previous_messages: 3,
        recent_flags: 0,
    };
    // (message, who, Layer 2 outcome, action)
    let rows: &[(&str, UserContext, StepOutcome, Action)] = &[
        (
            "やなってほんとバカだなぁ笑",
            REGULAR,
            Banter,
            Action::Respond,
        ),
        ("アホかｗｗ", REGULAR, Banter, Action::Respond),
        ("ポンコツすぎ😂", REGULAR, Banter, Action::Respond),
        ("もう、バカ〜", REGULAR, Banter, Action::Respond),
        // previous_messages ≥ returning_after (3) makes a returning user too.
        ("バカだなぁ笑", counted, Banter, Action::Respond),
        // The same words from a stranger are not banter yet.
        ("やなってほんとバカだなぁ笑", NEW, Block, Action::Block),
        ("アホかｗｗ", NEW, Block, Action::Block),
        // Anger beats laughter, even from a regular.
        ("バカ笑 二度と話しかけるな", REGULAR, Block, Action::Block),
        ("バカ！！！", REGULAR, Block, Action::Block),
        ("バカ STOP IT", REGULAR, Block, Action::Block),
        ("バカ、アホ、ポンコツ", REGULAR, Block, Action::Block),
        ("バカだなぁ笑", after_flags, Block, Action::Block),
        // A regular without any cue: Layer 4 decides; without it insults fail open.
        ("やなってバカ", REGULAR, Raise, Action::Respond),
        // Talking about oneself is not an insult, whoever says it.
        ("俺ってほんとバカだよな", NEW, SelfDirected, Action::Respond),
        // …unless a sister is named in the same sentence.
        ("あゆは私よりバカ", NEW, Block, Action::Block),
        // Safe words around a contextual word.
        ("遊んでばかりいたら怒られた", NEW, Info, Action::Respond),
        ("夏はバカンスに行きたい", NEW, Info, Action::Respond),
        ("今日は何もない日", NEW, Pass, Action::Respond),
    ];
    for (text, ctx, step, action) in rows {
        let j = judge(text, *ctx);
        assert_eq!(outcome(&j, 2), *step, "{text}: {j:#?}");
        assert_eq!(j.action, *action, "{text}: {j:#?}");
        if *step == Block {
            assert_eq!((j.layer, j.reason), (Some(2), Some(Reason::ContextualNg)));
            assert_eq!(outcome(&j, 3), Skipped, "{text}");
        }
    }
}

#[test]
fn layer_two_signals_and_static_banter_guess() {
    let j = judge("やなってほんとバカだなぁ笑", REGULAR);
    assert_eq!(j.context_type, Some(ContextType::Banter));
    let l2 = j.trace.iter().find(|s| s.layer == 2).unwrap();
    let v = serde_json::to_value(&l2.signals).unwrap();
    assert_eq!(v, serde_json::json!(["returning", "laughter"]));
    assert!(
        j.trace[3].note.contains("じゃれ合い"),
        "{}",
        j.trace[3].note
    );
    // "w" inside an English word is no laugh; 草 in 草むしり is grass.
    let j = judge("バカ wow", REGULAR);
    assert_eq!(outcome(&j, 2), StepOutcome::Raise, "{j:#?}");
    let j = judge("バカみたいに草むしり", REGULAR);
    assert_eq!(outcome(&j, 2), StepOutcome::Info, "{j:#?}");
    let j = judge("バカ、草むしりして", REGULAR);
    assert_eq!(outcome(&j, 2), StepOutcome::Raise, "{j:#?}");
    let j = judge("それはバカすぎ草", REGULAR);
    assert_eq!(outcome(&j, 2), StepOutcome::Banter, "{j:#?}");
}
