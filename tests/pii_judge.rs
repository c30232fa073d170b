//! The learned judge of candidate spans (`crates/pii/src/pii/judge.rs`, on the dictionary
//! path by default) where it was chosen:
//! on the selection set (B, forms) and the development set (E, messages to a bot), both
//! written by helpers who had not seen the masker, the dictionary path with the judge finds
//! more than the same path without it (the rules and the labeller at its default margins) and
//! is more right overall (F1). The judge gates the labeller's proposals, and turns down a
//! rule's candidate only under its veto (never a rule's name made of listed names). Numbers
//! with exact grammars are never judged: whatever the
//! judge decides about names, every phone number, e-mail and card number the rules find
//! stays masked. `-- --nocapture` prints both tables.

mod common;

use kakeai::safety::pii::eval::{self, Tally, table};
use kakeai::safety::pii::judge::Judge;
use kakeai::safety::pii::tagger::DEFAULT_MARGIN;
use kakeai::safety::pii::{PiiItem, PiiKind, PiiMasker};

fn set(name: &str) -> Vec<kakeai::safety::pii::tagger::core::Example> {
    let path = format!(
        "{}/tests/fixtures/pii_independent/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    eval::read_set(&std::fs::read_to_string(&path).expect("the set")).expect("a labelled set")
}

fn f1(t: &Tally) -> f64 {
    let (r, p) = (t.recall(), t.precision());
    2.0 * r * p / (r + p).max(1e-9)
}

#[test]
fn the_judge_finds_more_and_is_more_right_on_the_sets_it_was_chosen_on() {
    let Some(an) = common::lindera_arc() else {
        return; // no dictionary here: the judge reads the analyzer's words (required in CI)
    };
    let judged = PiiMasker::new().with_analyzer(an.clone());
    assert!(Judge::built_in().is_some(), "the judge is built in");
    let before = PiiMasker::new()
        .with_learned_at(DEFAULT_MARGIN)
        .with_analyzer(an);
    for name in ["set_b_forms.jsonl", "set_e_dev.jsonl"] {
        let set = set(name);
        let (j, b) = (eval::measure(&judged, &set), eval::measure(&before, &set));
        println!("{}", table(&format!("{name} · judged"), &j));
        println!("{}", table(&format!("{name} · no judge"), &b));
        let (j, b) = (j["all"], b["all"]);
        assert!(
            j.found > b.found,
            "{name}: recall {:.3} judged, {:.3} before",
            j.recall(),
            b.recall()
        );
        assert!(
            f1(&j) > f1(&b),
            "{name}: F1 {:.3} judged, {:.3} before",
            f1(&j),
            f1(&b)
        );
    }
}

/// Messages built from numbers with exact grammars in contexts full of name-like words.
fn number_messages() -> Vec<String> {
    let numbers = [
        "090-1234-5678",
        "03-6458-2217",
        "０８０－３３７８－９０１５",
        "tanaka.k@example.co.jp",
        "hana_77@mail.example.com",
        "4111 1111 1111 1111",
    ];
    let frames = [
        "林さんの連絡先は{}です",
        "{}　森（経理）まで",
        "佐藤にこれ送っといて→{}",
        "桜台小の保護者会、連絡は{}へ",
        "はなまる運輸 川越営業所 {}",
        "東さんって苗字？番号は{}",
    ];
    frames
        .iter()
        .flat_map(|f| numbers.iter().map(move |n| f.replace("{}", n)))
        .collect()
}

#[test]
fn numbers_with_exact_grammars_are_never_judged() {
    let Some(an) = common::lindera_arc() else {
        return;
    };
    let judged = PiiMasker::new().with_analyzer(an);
    let rules = PiiMasker::new().rules_only();
    let exact = [
        PiiKind::Phone,
        PiiKind::Email,
        PiiKind::Card,
        PiiKind::MyNumber,
    ];
    for text in number_messages() {
        let found = |m: &PiiMasker| -> Vec<[usize; 2]> {
            m.mask(&text)
                .items
                .iter()
                .filter(|i| exact.contains(&i.kind))
                .map(|i| i.span)
                .collect()
        };
        let want = found(&rules);
        assert!(!want.is_empty(), "the rules find the number in {text}");
        assert_eq!(found(&judged), want, "{text}");
    }
}

#[test]
fn kakeai_s_own_characters_are_never_masked_as_people() {
    let Some(an) = common::lindera_arc() else {
        return;
    };
    let masker = PiiMasker::new().with_analyzer(an);
    let frames = [
        "{}の2番の3回目の台詞",
        "{}が言ってたやつ",
        "{}と話してて思ったんだけど",
        "今日の{}、ちょっと元気ないね",
        "{}: わかりました",
    ];
    for name in ["やな", "あゆ", "ヤナ", "アユ", "yana", "ayu", "Yana", "Ayu"] {
        for f in frames {
            let text = f.replace("{}", name);
            let names: Vec<[usize; 2]> = masker
                .mask(&text)
                .items
                .iter()
                .filter(|i| i.kind == PiiKind::Name)
                .map(|i| i.span)
                .collect();
            assert!(names.is_empty(), "{text}: {names:?}");
        }
    }
}

/// Names of a list in `assets/safety/pii_tagger/`: field `field` of every line, in order.
fn listed(file: &str, field: usize) -> Vec<String> {
    let path = format!(
        "{}/assets/safety/pii_tagger/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path)
        .expect("the list")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split('\t').nth(field).map(str::to_string))
        .collect()
}

/// The share of messages, each frame with each name put in its `{}`, where `found` holds of
/// what the masker detects and the name's char span.
fn share(
    m: &PiiMasker,
    names: &[String],
    frames: &[&str],
    found: impl Fn(&[PiiItem], usize, usize) -> bool,
) -> f64 {
    let (mut hit, mut all) = (0, 0);
    for n in names {
        for f in frames {
            let s = f[..f.find("{}").unwrap_or(0)].chars().count();
            let items = m.detect(&f.replace("{}", n));
            all += 1;
            hit += usize::from(found(&items, s, s + n.chars().count()));
        }
    }
    hit as f64 / all.max(1) as f64
}

/// Public figures and characters talked about (every 23rd name of the list, in frames people
/// use for them) are mostly left alone: a rule's name on that list is judged as the labeller's
/// own proposals are, and the pieces of a name turned down go with it. Private full names made
/// of the name lists, in the same frames, are masked at least as often as before the list: a
/// rule's name made of listed names is never vetoed.
#[test]
fn public_figures_are_judged_and_private_names_in_their_place_stay_masked() {
    let Some(an) = common::lindera_arc() else {
        return; // the judge reads the analyzer's words (required in CI)
    };
    let m = PiiMasker::new().with_analyzer(an);
    let frames = [
        "{}の新曲聴いた？",
        "昨日のテレビに{}が出てた",
        "{}ってほんとすごいよね",
    ];
    let every = |v: Vec<String>, step: usize| v.into_iter().step_by(step).collect::<Vec<_>>();
    let public = every(listed("public_figures.txt", 0), 23);
    let surnames = every(listed("surnames_gimei.tsv", 0), 9);
    let given = every(listed("given_gimei.tsv", 0), 41);
    let private: Vec<String> = surnames
        .iter()
        .zip(given.iter().cycle())
        .map(|(s, g)| format!("{s}{g}"))
        .filter(|n| !public.contains(n))
        .collect();
    assert!(public.len() > 150 && private.len() > 40);
    let any_name =
        |items: &[PiiItem], _: usize, _: usize| items.iter().any(|i| i.kind == PiiKind::Name);
    let (p, q) = (
        share(&m, &public, &frames, any_name),
        share(&m, &private, &frames, any_name),
    );
    println!("public figures masked as names: {p:.3}; private full names: {q:.3}");
    // Before the list: 0.443 of the public names masked, 0.804 of the private ones. Many
    // private names here are the labeller's alone and need its threshold in these frames,
    // which the training text (celebrities no list holds, in these very frames) makes the
    // hardest place for a private name: 0.851 with the list; 0.786 with 11,600 more
    // hand-written lines, whose celebrities in these frames the labeller learned from (a
    // private name elsewhere gained: set E's names 0.839 → 0.877).
    assert!(p < 0.1, "public figures masked as names: {p:.3}");
    assert!(q > 0.75, "private full names masked: {q:.3}");
}

/// Bare given names in hiragana, where the analyzer reads a common word or a verb (ひまり as
/// ひま + り, かなえ as 叶え): the labeller's proposal goes to the judge, which reads the
/// analyzer's words among its features, instead of being dropped before it. Every 13th
/// hiragana given name of the gimei list, in frames of family chat.
#[test]
fn bare_hiragana_given_names_reach_the_judge() {
    let Some(an) = common::lindera_arc() else {
        return; // the judge reads the analyzer's words (required in CI)
    };
    let m = PiiMasker::new().with_analyzer(an);
    let mut names = listed("given_gimei.tsv", 1);
    names.dedup();
    let names: Vec<String> = names.into_iter().step_by(13).collect();
    let frames = [
        "{}の慣らし保育、今日は泣かずにバイバイできた",
        "{}からの返信きた！大丈夫だった",
        "{}がまた寝坊して遅刻しそう",
        "今度の日曜{}んちでたこパする",
    ];
    let at_the_name = |items: &[PiiItem], s: usize, e: usize| {
        items
            .iter()
            .any(|i| i.kind == PiiKind::Name && i.span[0] < e && s < i.span[1])
    };
    let share = share(&m, &names, &frames, at_the_name);
    let all = names.len() * frames.len();
    println!("{all} messages, bare hiragana given names masked: {share:.3}");
    assert!(all > 100);
    // 0.435 when the labeller's name made of common words was dropped before the judge.
    assert!(share > 0.48, "{share:.3}");
}
