//! Table tests for every Director rule at its boundaries (seed 001), with fixtures written for
//! kakeai. The fallback analyzer is used here; tests/lindera.rs repeats the analyzer-dependent
//! ones with IPADIC.

mod common;

use common::{judge, judge_v, judge_with, rule_status};
use kakeai::director::{RuleId, RuleSet, Status, ToneMode};
use kakeai::text::analyzer::fallback::FallbackAnalyzer;

use Status::{Info, Pass, Retry, Warn};

#[test]
fn lines_boundaries() {
    for (n, want) in [(5, Pass), (6, Warn), (7, Warn), (8, Retry), (10, Retry)] {
        let text = (1..=n)
            .map(|i| format!("{i}つめ"))
            .collect::<Vec<_>>()
            .join("\n");
        let v = judge("yana", &text);
        assert_eq!(rule_status(&v, RuleId::Lines), want, "{n} lines");
        assert_eq!(v.lines, n);
    }
    // Blank lines are not lines.
    let v = judge("yana", "一\n\n二\n\n\n三\n四\n\n五");
    assert_eq!(v.lines, 5);
    assert_eq!(rule_status(&v, RuleId::Lines), Pass);
}

#[test]
fn tone_scores_for_both_sisters() {
    let cases = [
        ("yana", "この建物は古いと思います。", 0, Retry),
        ("yana", "うーん", 1, Warn),
        ("yana", "雨が降るかな？", 2, Pass),
        ("yana", "ほんと？雨が降るかな？", 3, Pass),
        ("ayu", "それは灯台だ", 0, Retry),
        ("ayu", "目安。", 1, Warn),
        ("ayu", "あれは灯台です。夜に光ります。", 2, Pass),
        ("ayu", "つまり、あれは灯台ですね。夜に光ります。", 3, Pass),
    ];
    for (speaker, text, score, status) in cases {
        let v = judge(speaker, text);
        assert_eq!(v.tone.score, score, "{speaker} {text}: {:?}", v.tone);
        assert_eq!(rule_status(&v, RuleId::Tone), status, "{speaker} {text}");
    }
}

/// An all-です・ます あゆ line is never "no あゆ style" (tone RETRY): a one-sentence line that
/// ends politely has her style; two sentences still need both polite ends (seed 001 §4.4).
#[test]
fn one_polite_sentence_is_ayus_style() {
    let stems = [
        "今日は晴れてい",
        "坂の上まで歩き",
        "夕飯はカレーにし",
        "窓を開け",
        "明日は早起きし",
    ];
    let ends = ["ます。", "ますね。", "ました。", "ましたよ。"];
    for stem in stems {
        for end in ends {
            let text = format!("{stem}{end}");
            let v = judge("ayu", &text);
            assert_eq!(v.tone.style, 1, "{text}: {:?}", v.tone);
            assert_ne!(rule_status(&v, RuleId::Tone), Retry, "{text}");
            // A second sentence that is not polite takes the style away again.
            let two = format!("{text}{stem}た。");
            assert_eq!(judge("ayu", &two).tone.style, 0, "{two}");
        }
    }
    // Plain style in one sentence is still no style.
    assert_eq!(judge("ayu", "それは灯台だ").tone.style, 0);
}

#[test]
fn endings_only_count_at_sentence_end() {
    // かな inside 静かな is not the かな ending; だね is vocabulary.
    let v = judge("yana", "静かな町だね。");
    assert_eq!((v.tone.marker, v.tone.vocab), (0, 1));
    // ますます is not a polite ます ending.
    let v = judge("ayu", "ますます難しくなってきた。");
    assert_eq!(v.tone.style, 0);
    // With softeners after it, the ending still counts.
    let v = judge("yana", "それ、いいかもね〜");
    assert_eq!(v.tone.marker, 1);
}

#[test]
fn praise_retry_warn_and_quotes() {
    let v = judge("ayu", "あなたの意見は完璧です。");
    assert_eq!(rule_status(&v, RuleId::Praise), Retry);
    assert!(
        v.findings
            .iter()
            .any(|f| f.rule == RuleId::Praise && f.span == Some([0, 9])),
        "{:?}",
        v.findings
    );
    let v = judge("ayu", "天才的な発明ですね。");
    assert_eq!(rule_status(&v, RuleId::Praise), Warn);
    let v = judge("ayu", "その考えは正しいと思います。");
    assert_eq!(
        rule_status(&v, RuleId::Praise),
        Warn,
        "an affirmation of the partner without an evaluation word is not the seed's RETRY"
    );
    let v = judge("ayu", "正しい手順を調べました。");
    assert_eq!(
        rule_status(&v, RuleId::Praise),
        Pass,
        "an affirmation word alone is not praise"
    );
    let v = judge(
        "ayu",
        "看板に「すごい景色」と書いてありますね。展望台の案内です。",
    );
    assert_eq!(
        rule_status(&v, RuleId::Praise),
        Pass,
        "quoted praise is excluded"
    );
    // Praise in different sentences is only a WARN.
    let v = judge("ayu", "その答えは載っていません。すごい量の資料ですね。");
    assert_eq!(rule_status(&v, RuleId::Praise), Warn);
    // やな's persona allows praise.
    let v = judge("yana", "あゆ、天才じゃん！あなたすごい！");
    assert_eq!(rule_status(&v, RuleId::Praise), Pass);
}

#[test]
fn symbol_runs_collapse_and_spans_point_at_the_original() {
    let text = "ねぇ!!！　一人暮らしって大変？？";
    let v = judge("yana", text);
    assert_eq!(v.sentences, 2);
    let f = v
        .findings
        .iter()
        .find(|f| f.rule == RuleId::Setting)
        .expect("setting finding");
    let start = text.chars().position(|c| c == '一').unwrap();
    assert_eq!(f.span, Some([start, start + 5]));
}

#[test]
fn halfwidth_period_and_newlines_end_sentences() {
    assert_eq!(judge("yana", "そう｡わかった").sentences, 2);
    assert_eq!(judge("yana", "雨だ\n傘ある").sentences, 2);
    assert_eq!(judge("yana", "雨だ。\n\n傘ある").sentences, 2);
}

#[test]
fn scatter_retry_and_warn() {
    let v = judge(
        "ayu",
        "港についてです。灯台の話もしましょう。商店街は賑やかです。では帰ります。",
    );
    assert_eq!((v.sentences, v.topics), (4, 3));
    assert_eq!(rule_status(&v, RuleId::Scatter), Retry);
    // Three topics but three sentences: WARN, not RETRY.
    let v = judge(
        "ayu",
        "港についてです。灯台の話もしましょう。商店街は賑やかです。",
    );
    assert_eq!(rule_status(&v, RuleId::Scatter), Warn);
    // Four sentences, one topic: WARN (3+ sentences).
    let v = judge(
        "ayu",
        "港は広いです。船が見えます。白い船です。大きいです。",
    );
    assert_eq!(v.topics, 1);
    assert_eq!(rule_status(&v, RuleId::Scatter), Warn);
    // Two topics in two sentences: WARN.
    let v = judge("ayu", "港について話しましょう。灯台の話も。");
    assert_eq!((v.sentences, v.topics), (2, 2));
    assert_eq!(rule_status(&v, RuleId::Scatter), Warn);
    // Two sentences, one topic: fine.
    let v = judge("ayu", "港は広いです。船も見えます。");
    assert_eq!(rule_status(&v, RuleId::Scatter), Pass);
}

#[test]
fn contradiction_double_negation() {
    let v = judge("yana", "もう二十歳だし、まだ未成年じゃないもん！");
    assert_eq!(rule_status(&v, RuleId::Contradiction), Retry);
    for ok in [
        "あの子、まだ未成年じゃない？",
        "まだ完成ではないよ。",
        "まだ早いんじゃないかな。",
    ] {
        assert_eq!(
            rule_status(&judge("yana", ok), RuleId::Contradiction),
            Pass,
            "{ok}"
        );
    }
}

#[test]
fn setting_living_apart() {
    assert_eq!(
        rule_status(
            &judge("yana", "実家ではよく焼き芋を食べたよね。"),
            RuleId::Setting
        ),
        Retry
    );
    assert_eq!(
        rule_status(&judge("ayu", "また遊びに来てくださいね。"), RuleId::Setting),
        Retry
    );
    assert_eq!(
        rule_status(&judge("yana", "うちでのんびりしよ！"), RuleId::Setting),
        Pass
    );
}

#[test]
fn violations_mode_edge_cases() {
    // ジェーン is not じゃん, and じゃんけん does not end a sentence with じゃん.
    for ok in [
        "ジェーンさんという方が来ています。",
        "じゃんけんで決めましょう。",
    ] {
        assert_eq!(rule_status(&judge_v("ayu", ok), RuleId::Tone), Pass, "{ok}");
    }
    assert_eq!(
        rule_status(&judge_v("ayu", "それ、いいじゃん。"), RuleId::Tone),
        Retry
    );
    assert_eq!(
        rule_status(&judge_v("ayu", "明日は晴れるでしょう。"), RuleId::Tone),
        Pass
    );
    // ますます is not a polite ending for やな.
    assert_eq!(
        rule_status(&judge_v("yana", "ますます楽しくなってきた！"), RuleId::Tone),
        Pass
    );
    assert_eq!(
        rule_status(&judge_v("yana", "楽しくなってきました。"), RuleId::Tone),
        Retry
    );
    // ございます is reported once, not also as ます.
    let v = judge_v("yana", "ありがとうございます。");
    assert_eq!(
        v.findings.iter().filter(|f| f.rule == RuleId::Tone).count(),
        1
    );
    // A natural casual line that positive scoring rejects passes here.
    let natural = "こんにちは、あゆ！ねえねえ、今日の雲、なんか低くない？山も近く見える。";
    assert_eq!(rule_status(&judge("yana", natural), RuleId::Tone), Retry);
    assert_eq!(rule_status(&judge_v("yana", natural), RuleId::Tone), Pass);
    // Too many exclamations for やな.
    assert_eq!(
        rule_status(&judge_v("yana", "わ！え！ほら！見て！"), RuleId::Tone),
        Warn
    );
}

#[test]
fn forbidden_words_and_prompt_leaks() {
    assert_eq!(
        rule_status(
            &judge("yana", "姉様って呼ばないでよ！"),
            RuleId::ForbiddenWord
        ),
        Retry
    );
    assert_eq!(
        rule_status(
            &judge("ayu", "お姉ちゃん、待ってください。"),
            RuleId::ForbiddenWord
        ),
        Retry
    );
    assert_eq!(
        rule_status(
            &judge("ayu", "姉様、待ってください。"),
            RuleId::ForbiddenWord
        ),
        Pass
    );
    assert_eq!(
        rule_status(
            &judge("ayu", "そうですね。<end_of_turn>"),
            RuleId::PromptLeak
        ),
        Retry
    );
    assert_eq!(
        rule_status(
            &judge("yana", "いいね！\nあゆ：そうですね。"),
            RuleId::PromptLeak
        ),
        Retry
    );
    assert_eq!(
        rule_status(&judge("yana", "ねえ、あゆ：これ見て！"), RuleId::PromptLeak),
        Pass
    );
}

#[test]
fn empty_and_script_format() {
    let v = judge("ayu", "  \n ");
    assert_eq!(v.status, Retry);
    assert_eq!(rule_status(&v, RuleId::Empty), Retry);
    let v = judge(
        "ayu",
        "「つまり、今日は休館日です。明日なら開いています。」",
    );
    assert_eq!(rule_status(&v, RuleId::ScriptFormat), Info);
    assert_eq!(
        v.status, Pass,
        "「」 alone never causes RETRY: {:?}",
        v.findings
    );
    assert_eq!(
        (v.tone.vocab, v.tone.style),
        (1, 1),
        "judged on the quote's content"
    );
}

#[test]
fn verdict_is_the_worst_finding() {
    let v = judge("yana", "姉様、実家では静かだった。");
    assert_eq!(v.status, Retry);
    assert!(v.findings.iter().all(|f| f.status != Pass));
    for f in &v.findings {
        assert!(!f.message.is_empty() && !f.suggestion.is_empty(), "{f:?}");
    }
}

#[test]
fn topic_loop_and_early_shift_need_context() {
    let an = &FallbackAnalyzer;
    let ctx = common::FERRIS_WHEEL_TURNS;
    let v = judge_with(
        an,
        ToneMode::Markers,
        "ayu",
        common::FERRIS_WHEEL_AGAIN,
        &ctx,
    );
    assert_eq!(rule_status(&v, RuleId::TopicLoop), Warn);
    let v = judge_with(
        an,
        ToneMode::Markers,
        "ayu",
        common::FERRIS_WHEEL_AGAIN,
        &[],
    );
    assert_eq!(
        rule_status(&v, RuleId::TopicLoop),
        Pass,
        "no context, no loop check"
    );
    // やな just raised the ferris wheel; あゆ jumps to the aquarium.
    let ctx = [
        ("ayu", "売店でパンを買いました。"),
        ("yana", "観覧車、乗りたいな！"),
    ];
    let v = judge_with(
        an,
        ToneMode::Markers,
        "ayu",
        "水族館の開館時間を調べました。",
        &ctx,
    );
    assert_eq!(rule_status(&v, RuleId::EarlyTopicShift), Warn);
    // Answering the partner's topic is not a shift.
    let v = judge_with(
        an,
        ToneMode::Markers,
        "ayu",
        "観覧車は夕方が空いています。",
        &ctx,
    );
    assert_eq!(rule_status(&v, RuleId::EarlyTopicShift), Pass);
}

/// The sisters calling each other by name is no topic: 「あゆ」→「姉様」 is not a shift, for
/// every form of address either sister uses in the character files.
#[test]
fn early_shift_does_not_read_names_as_topics() {
    let rules = RuleSet::builtin().unwrap();
    let an = &FallbackAnalyzer;
    for (me, partner) in [("ayu", "yana"), ("yana", "ayu")] {
        let mine = &rules.data.characters[me];
        let theirs = &rules.data.characters[partner];
        for call_me in theirs.address_partner.iter().chain([&mine.display_name]) {
            for call_them in mine.address_partner.iter().chain([&theirs.display_name]) {
                let said = format!("{call_me}！");
                let ctx = [(me, "売店でパンを買いました。"), (partner, said.as_str())];
                // A line of hers whose only keyword-like word is a name is no topic to leave.
                let reply = format!("{call_them}、水族館の時間です。");
                let v = judge_with(an, ToneMode::Markers, me, &reply, &ctx);
                assert_eq!(
                    rule_status(&v, RuleId::EarlyTopicShift),
                    Pass,
                    "{said} → {reply}: {:?}",
                    v.findings
                );
            }
        }
    }
}

#[test]
fn ruleset_version_follows_the_rules() {
    let a = common::rules(ToneMode::Markers);
    let b = common::rules(ToneMode::Violations);
    assert_ne!(a.version, b.version);
    assert_eq!(a.version, common::rules(ToneMode::Markers).version);
    assert_eq!(judge("yana", "うん").ruleset, a.version);
}

/// Counts tokenize calls, to prove re-judging reuses the cached analysis.
struct Counting(std::sync::atomic::AtomicUsize);

impl kakeai::text::Analyzer for Counting {
    fn kind(&self) -> kakeai::text::AnalyzerKind {
        kakeai::text::AnalyzerKind::Fallback
    }
    fn tokenize(&self, text: &str) -> Vec<kakeai::text::analyzer::Morpheme> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        FallbackAnalyzer.tokenize(text)
    }
}

#[test]
fn rejudging_after_a_rule_change_never_retokenises() {
    use kakeai::director::judge;
    use kakeai::text::AnalysisCache;
    let an = Counting(Default::default());
    let mut cache = AnalysisCache::new();
    let text = "港についてです。灯台の話もしましょう。商店街は賑やかです。では帰ります。";
    let strict = RuleSet::builtin().unwrap();
    let mut data = (*strict.data).clone();
    data.scatter.retry_topics = 5;
    let lenient = RuleSet::from_data(data).unwrap();
    let ayu = strict.character("ayu").unwrap().clone();
    let a = cache.get_or_analyze(text);
    assert_eq!(judge(&strict, &an, &ayu, &a, &[]).status, Retry);
    let after_first = an.0.load(std::sync::atomic::Ordering::SeqCst);
    assert!(after_first > 0);
    let b = cache.get_or_analyze(text);
    let v = judge(&lenient, &an, &ayu, &b, &[]);
    assert_eq!(
        rule_status(&v, RuleId::Scatter),
        Warn,
        "the edited threshold applies"
    );
    assert_ne!(v.ruleset, strict.version);
    assert_eq!(
        an.0.load(std::sync::atomic::Ordering::SeqCst),
        after_first,
        "no re-tokenisation"
    );
}
