//! Precision and recall of PII masking per kind on the HELD-OUT evaluation of issue 26 §1
//! (tests/fixtures/pii_heldout/): messages generated from half B of every entity source in
//! sentence frames the detector was not tuned on, hand-written natural messages and
//! look-alikes that must stay unmasked — all written before the detector changed, by
//! gen_heldout.py, which never runs the detector. The dev set (half A, dev frames) is scored
//! too, but only the held-out figures are reported in README.
//!
//! Scoring (as tests/pii_labelled.rs): a labelled span is found when every char of it is
//! masked by an item of its kind; an item is correct when it overlaps a labelled span of its
//! kind. Every item in a look-alike is a false positive. `cargo test --test pii_heldout --
//! --nocapture` prints the tables.

use std::collections::BTreeMap;

use kakeai::safety::pii::{PiiItem, PiiMasker};
use kakeai::text::analyzer::lindera as ld;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/pii_heldout/");

struct Example {
    text: String,
    spans: Vec<(usize, usize, String)>,
}

fn load(name: &str) -> Vec<Example> {
    let path = match name.strip_prefix("../") {
        Some(other) => format!("{DIR}../{other}"),
        None => format!("{DIR}{name}"),
    };
    let text = std::fs::read_to_string(path).expect("held-out set");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("json line");
            let spans = v["spans"]
                .as_array()
                .expect("spans")
                .iter()
                .map(|s| {
                    (
                        s[0].as_u64().expect("start") as usize,
                        s[1].as_u64().expect("end") as usize,
                        s[2].as_str().expect("label").to_string(),
                    )
                })
                .collect();
            Example {
                text: v["text"].as_str().expect("text").to_string(),
                spans,
            }
        })
        .collect()
}

#[derive(Default, Debug, Clone, Copy)]
struct Count {
    gold: usize,
    found: usize,
    predicted: usize,
    correct: usize,
}

impl Count {
    fn precision(&self) -> f64 {
        if self.predicted == 0 {
            1.0
        } else {
            self.correct as f64 / self.predicted as f64
        }
    }
    fn recall(&self) -> f64 {
        if self.gold == 0 {
            1.0
        } else {
            self.found as f64 / self.gold as f64
        }
    }
}

type Counts = BTreeMap<String, Count>;

fn score(set: &[Example], mask: &dyn Fn(&str) -> Vec<PiiItem>, misses: &mut Vec<String>) -> Counts {
    let mut counts = Counts::new();
    for ex in set {
        let items = mask(&ex.text);
        for (s, e, k) in &ex.spans {
            let c = counts.entry(k.clone()).or_default();
            c.gold += 1;
            let covered = (*s..*e).all(|i| {
                items
                    .iter()
                    .any(|it| it.kind.label() == k && it.span[0] <= i && i < it.span[1])
            });
            if covered {
                c.found += 1;
            } else {
                misses.push(format!("miss {k} [{s},{e}) in {:?}", ex.text));
            }
        }
        for it in &items {
            let c = counts.entry(it.kind.label().to_string()).or_default();
            c.predicted += 1;
            let ok = ex
                .spans
                .iter()
                .any(|(s, e, k)| k == it.kind.label() && it.span[0] < *e && *s < it.span[1]);
            if ok {
                c.correct += 1;
            } else {
                misses.push(format!(
                    "false {} {:?} in {:?}",
                    it.kind.label(),
                    it.span,
                    ex.text
                ));
            }
        }
    }
    counts
}

fn add(into: &mut Counts, from: &Counts) {
    for (k, c) in from {
        let t = into.entry(k.clone()).or_default();
        t.gold += c.gold;
        t.found += c.found;
        t.predicted += c.predicted;
        t.correct += c.correct;
    }
}

fn table(title: &str, counts: &Counts) -> String {
    let mut out = format!("{title}\nkind | labelled | predicted | precision | recall\n");
    for (k, c) in counts {
        out.push_str(&format!(
            "{k} | {} | {} | {:.3} | {:.3}\n",
            c.gold,
            c.predicted,
            c.precision(),
            c.recall()
        ));
    }
    out
}

/// The held-out sets scored together, and the report with each set's own table.
fn evaluate(name: &str, mask: &dyn Fn(&str) -> Vec<PiiItem>) -> (Counts, String) {
    let mut all = Counts::new();
    let mut report = String::new();
    // Held-out misses are counted, never printed: the detector is tuned on the dev set only.
    let mut unseen = Vec::new();
    for set in ["generated.jsonl", "natural.jsonl", "lookalikes.jsonl"] {
        let c = score(&load(set), mask, &mut unseen);
        report.push_str(&table(&format!("[{name}] {set}"), &c));
        add(&mut all, &c);
    }
    report.push_str(&table(&format!("[{name}] held-out, all three"), &all));
    let mut misses = Vec::new();
    let dev = score(&load("dev.jsonl"), mask, &mut misses);
    report.push_str(&table(&format!("[{name}] dev (half A; tuning only)"), &dev));
    let dev2 = score(&load("../pii_dev2/dev2.jsonl"), mask, &mut misses);
    report.push_str(&table(
        &format!("[{name}] dev2 (unseen entities, own frames; tuning only)"),
        &dev2,
    ));
    let dev3 = score(&load("../pii_dev3/dev3.jsonl"), mask, &mut misses);
    report.push_str(&table(
        &format!("[{name}] dev3 (hand-written chat, unseen entities; tuning only)"),
        &dev3,
    ));
    let dev4 = score(&load("../pii_dev4/dev4.jsonl"), mask, &mut misses);
    report.push_str(&table(
        &format!("[{name}] dev4 (no-cue names and companies, look-alikes; tuning only)"),
        &dev4,
    ));
    report.push_str(&format!(
        "[{name}] held-out: {} misses/false positives (not shown); dev: {}:\n",
        unseen.len(),
        misses.len()
    ));
    for m in &misses {
        report.push_str(&format!("  {m}\n"));
    }
    (all, report)
}

/// What the README records for the fallback analyzer (rules only): (kind, precision, recall)
/// floors, a little under the measured figures so a regression fails and noise does not.
const FALLBACK_FLOORS: &[(&str, f64, f64)] = &[
    ("氏名", 0.99, 0.88),
    ("電話番号", 0.99, 0.99),
    ("メールアドレス", 0.99, 0.99),
    ("住所", 0.99, 0.99),
    // 0.955 measured after stop 37's company work (0.936 before).
    ("会社名", 0.99, 0.95),
    ("学校名", 0.99, 0.98),
    // 1.000 since the issuer check (0.950 before).
    ("カード番号", 0.99, 0.99),
    ("マイナンバー", 0.99, 0.99),
];

#[test]
fn heldout_sets_are_large_enough() {
    let gen_ = load("generated.jsonl");
    let nat = load("natural.jsonl");
    let look = load("lookalikes.jsonl");
    assert!(gen_.len() >= 500, "generated: {}", gen_.len());
    assert!(nat.len() >= 150, "natural: {}", nat.len());
    assert!(look.len() >= 150, "look-alikes: {}", look.len());
    assert!(look.iter().all(|e| e.spans.is_empty()));
    let frames: std::collections::BTreeSet<String> =
        std::fs::read_to_string(format!("{DIR}generated.jsonl"))
            .expect("generated")
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).expect("json")["frame"].to_string()
            })
            .collect();
    assert!(frames.len() >= 30, "{} frames", frames.len());
}

#[test]
fn fallback_rules_on_heldout() {
    let masker = PiiMasker::new();
    let (all, report) = evaluate("fallback", &|t| masker.mask(t).items);
    println!("{report}");
    for &(kind, p, r) in FALLBACK_FLOORS {
        let c = all.get(kind).copied().unwrap_or_default();
        assert!(
            c.precision() >= p && c.recall() >= r,
            "{kind} fell: {report}"
        );
    }
}

/// The lindera analyzer built from MeCab IPADIC sources (shared with tests/lindera.rs's temp
/// dir). None when the sources are missing — a failure under CI=true.
fn lindera() -> Option<std::sync::Arc<dyn kakeai::text::Analyzer>> {
    let Some(src) = ld::find_ipadic_sources() else {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true but no MeCab IPADIC sources found");
        }
        eprintln!("note: MeCab IPADIC sources not found; skipping the lindera evaluation");
        return None;
    };
    let dir = std::env::temp_dir().join("kakeai-test-ipadic");
    if !ld::is_installed(&dir) {
        ld::build_dictionary(&src, &dir).expect("dictionary builds");
    }
    Some(std::sync::Arc::new(
        ld::LinderaAnalyzer::load(&dir).expect("dictionary loads"),
    ))
}

/// The lindera path's floors (README records the measured figures).
const LINDERA_FLOORS: &[(&str, f64, f64)] = &[
    // 0.964 measured after stop 36's kana readings (0.922 after dev5's name slots, 0.896
    // before).
    ("氏名", 0.99, 0.96),
    ("電話番号", 0.99, 0.99),
    ("メールアドレス", 0.99, 0.99),
    ("住所", 0.99, 0.99),
    // 0.964 measured after stop 37's company work (0.945 after dev5, 0.936 before).
    ("会社名", 0.99, 0.96),
    ("学校名", 0.99, 0.98),
    // 1.000 since the issuer check (0.950 before).
    ("カード番号", 0.99, 0.99),
    ("マイナンバー", 0.99, 0.99),
];

#[test]
fn lindera_on_heldout() {
    let Some(an) = lindera() else { return };
    let masker = PiiMasker::new().with_analyzer(an);
    assert_eq!(masker.analyzer_kind().as_str(), "lindera-ipadic");
    let (all, report) = evaluate("lindera", &|t| masker.mask(t).items);
    println!("{report}");
    for &(kind, p, r) in LINDERA_FLOORS {
        let c = all.get(kind).copied().unwrap_or_default();
        assert!(
            c.precision() >= p && c.recall() >= r,
            "{kind} fell: {report}"
        );
    }
}

/// The detector's data holds no half-B company, school, place or building name. (The surname
/// and given-name lists predate the split — issue 16 — and were not changed by issue 26; README
/// says how many half-B names they already held.)
/// dev2's and dev3's entities stand for names the detector has never seen: none may enter its
/// lists.
#[test]
fn detector_lists_hold_no_dev2_entity() {
    let mut own =
        std::fs::read_to_string(format!("{DIR}../pii_dev2/entities.txt")).expect("entities");
    for e in load("../pii_dev3/dev3.jsonl")
        .into_iter()
        .chain(load("../pii_dev4/dev4.jsonl"))
        .chain(load("../pii_dev4/dev4_gen.jsonl"))
        .chain(load("../pii_dev5/dev5.jsonl"))
        .chain(load("../pii_dev6/dev6.jsonl"))
    {
        for (s, t, kind) in &e.spans {
            let entry: String = e.text.chars().skip(*s).take(t - s).collect();
            own.push_str(&format!("\n{kind}\t{entry}"));
        }
    }
    assert!(own.lines().count() > 150);
    let assets = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/safety/");
    for f in std::fs::read_dir(assets).expect("assets") {
        let path = f.expect("entry").path();
        if path.is_dir() {
            // pii_tagger/: the learned labeller's lists, trained with dev2 and kin.
            continue;
        }
        let data = std::fs::read_to_string(&path).expect("asset");
        let words: std::collections::BTreeSet<&str> = data
            .split(|c: char| c.is_whitespace() || "\",[]=#".contains(c))
            .collect();
        for line in own.lines().filter(|l| !l.starts_with('#')) {
            let Some((kind, entry)) = line.split_once('\t') else {
                continue;
            };
            assert!(
                !words.contains(entry),
                "dev2 {kind} {entry} is in {}",
                path.display()
            );
        }
    }
}

#[test]
fn detector_data_holds_no_held_out_entity() {
    let b = std::fs::read_to_string(format!("{DIR}split_b.txt")).expect("split_b.txt");
    let assets = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/safety/");
    let data: String = ["org_forms.toml", "school_names.txt"]
        .iter()
        .map(|f| std::fs::read_to_string(format!("{assets}{f}")).expect("asset"))
        .collect();
    for line in b.lines().filter(|l| !l.starts_with('#')) {
        let Some((kind, entry)) = line.split_once('\t') else {
            continue;
        };
        if ["company", "school", "town", "city", "street", "building"].contains(&kind) {
            assert!(
                !data.contains(entry),
                "held-out {kind} {entry} is in the detector's data"
            );
        }
    }
}

/// dev4 alone (tuning only, never reported): its table and every miss, for both analyzers —
/// `cargo test --test pii_heldout dev4 -- --nocapture` reads no held-out message.
#[test]
fn dev4_tuning_set() {
    let set = load("../pii_dev4/dev4.jsonl");
    let gen_ = load("../pii_dev4/dev4_gen.jsonl");
    assert!(
        set.len() >= 200 && gen_.len() >= 180,
        "dev4: {} + {}",
        set.len(),
        gen_.len()
    );
    let report = |name: &str, mask: &dyn Fn(&str) -> Vec<PiiItem>| {
        let mut out = String::new();
        for (title, set) in [("dev4", &set), ("dev4_gen", &gen_)] {
            let mut misses = Vec::new();
            let c = score(set, mask, &mut misses);
            out.push_str(&table(&format!("[{name}] {title} (tuning only)"), &c));
            for m in &misses {
                out.push_str(&format!("  {m}\n"));
            }
        }
        println!("{out}");
    };
    on_both(&report);
}

/// A masker as the tuning reports take it.
type Mask<'a> = &'a dyn Fn(&str) -> Vec<PiiItem>;

/// Runs `report` with the rules alone, then with lindera when its dictionary is there.
fn on_both(report: &dyn Fn(&str, Mask)) {
    let masker = PiiMasker::new();
    report("fallback", &|t| masker.mask(t).items);
    if let Some(an) = lindera() {
        let masker = PiiMasker::new().with_analyzer(an);
        report("lindera", &|t| masker.mask(t).items);
    }
}

/// A hand-written tuning set alone (tuning only, never reported): at least 200 messages with
/// PII and 100 look-alikes; its table and every miss, for both analyzers — `cargo test --test
/// pii_heldout devN -- --nocapture` reads no held-out message. Its look-alikes hold the
/// precision floor.
fn tuning_set(name: &str, path: &str) {
    let set = load(path);
    let look = set.iter().filter(|e| e.spans.is_empty()).count();
    assert!(
        set.len() - look >= 200 && look >= 100,
        "{name}: {} + {look}",
        set.len() - look
    );
    let report = |analyzer: &str, mask: &dyn Fn(&str) -> Vec<PiiItem>| {
        let mut misses = Vec::new();
        let c = score(&set, mask, &mut misses);
        let mut out = table(&format!("[{analyzer}] {name} (tuning only)"), &c);
        for m in &misses {
            out.push_str(&format!("  {m}\n"));
        }
        println!("{out}");
        c
    };
    let masker = PiiMasker::new();
    let mut all = vec![report("fallback", &|t| masker.mask(t).items)];
    if let Some(an) = lindera() {
        let masker = PiiMasker::new().with_analyzer(an);
        all.push(report("lindera", &|t| masker.mask(t).items));
    }
    for c in all.iter().flat_map(|c| c.values()) {
        assert!(c.precision() >= 0.98, "{name} precision fell: {c:?}");
    }
}

/// The older tuning sets (half A's frames, dev2's unseen entities, dev3's chat) alone, with every
/// miss, for both analyzers — `cargo test --test pii_heldout older_dev -- --nocapture` reads no
/// held-out message.
#[test]
fn older_dev_tuning_sets() {
    let sets = [
        ("dev", load("dev.jsonl")),
        ("dev2", load("../pii_dev2/dev2.jsonl")),
        ("dev3", load("../pii_dev3/dev3.jsonl")),
    ];
    let report = |analyzer: &str, mask: &dyn Fn(&str) -> Vec<PiiItem>| {
        let mut out = String::new();
        for (name, set) in &sets {
            let mut misses = Vec::new();
            let c = score(set, mask, &mut misses);
            out.push_str(&table(&format!("[{analyzer}] {name} (tuning only)"), &c));
            for m in &misses {
                out.push_str(&format!("  {m}\n"));
            }
            for c in c.values() {
                assert!(c.precision() >= 0.98, "{name} precision fell: {c:?}");
            }
        }
        println!("{out}");
    };
    on_both(&report);
}

/// dev5: names in a name slot, romaji, call-outs.
#[test]
fn dev5_tuning_set() {
    tuning_set("dev5", "../pii_dev5/dev5.jsonl");
}

/// dev6: written before reading the detector, in the registers the masker meets (friends'
/// chat, a parent, a part-time job, a club, job hunting, an office, a form, gossip, a customer).
#[test]
fn dev6_tuning_set() {
    tuning_set("dev6", "../pii_dev6/dev6.jsonl");
}

/// A person the dictionary knows, right after a relation word with の, is a name (妹の花子が);
/// a thing there is not (妹の部屋が).
#[test]
fn lindera_people_after_relation_words() {
    let Some(an) = lindera() else { return };
    let masker = PiiMasker::new().with_analyzer(an);
    for (text, name) in [
        ("妹の花子が熱を出した", "花子"),
        ("友達の健太と遊んだ", "健太"),
        ("同僚の美咲が辞めるらしい", "美咲"),
    ] {
        let m = masker.mask(text);
        assert!(
            !m.masked_text.contains(name) && m.masked_text.contains("[氏名]"),
            "{text} → {}",
            m.masked_text
        );
    }
    for text in [
        "妹の部屋が散らかってる",
        "友達の家に行った",
        "彼氏の車で帰った",
    ] {
        assert!(masker.mask(text).items.is_empty(), "{text}");
    }
}

/// A name in a name's slot, read with the dictionary (crates/pii/src/pii/names_slot.rs): a word
/// IPADIC tags as a person or a small place, or does not know, at the start of a phrase before
/// a particle — in frames with no cue and no listed predicate. Common words, places, loanwords
/// and things in the same frames stay.
#[test]
fn lindera_names_in_a_name_slot() {
    let Some(an) = lindera() else { return };
    let masker = PiiMasker::new().with_analyzer(an);
    let frames = [
        "{}が髪切ってた",
        "{}は来週から出張",
        "{}を空港まで送ってきた",
        "{}、今日来れないって",
        "昨日{}と飲んだ",
        "{}に傘貸したままだ",
        "{}からお菓子もらった",
    ];
    // A name IPADIC reads as a place (鶉野, 樋爪) is taken only where a place is not: never
    // before に or から (京都から来た).
    let place_frames = &frames[..5];
    for (name, place) in [
        ("鶉野", true),
        ("樋爪", true),
        ("檜山", false),
        ("蜂須賀", false),
        ("シズクイシ", false),
        ("クツワダ", false),
        ("sakuya", false),
        ("nagisa", false),
    ] {
        for frame in if place { place_frames } else { &frames[..] } {
            // An unknown katakana word as an object is taken for a thing (クミンを少し).
            if frame.contains("{}を") && name.starts_with(|c: char| ('ァ'..='ヺ').contains(&c)) {
                continue;
            }
            let text = frame.replace("{}", name);
            let m = masker.mask(&text);
            assert!(!m.masked_text.contains(name), "{text} → {}", m.masked_text);
        }
    }
    for word in [
        "会社",
        "明日",
        "天気",
        "東京",
        "大阪",
        "ストロングゼロ",
        "シナモンロール",
        "time",
    ] {
        // Frames a thing stands in too (a person predicate takes any word of a name's shape:
        // names_subject's rule, whatever the script).
        for frame in [
            "{}が楽しみ",
            "{}は来週から",
            "{}、いいね",
            "昨日{}を買った",
            "{}に行った",
            "{}から始まる",
        ] {
            let text = frame.replace("{}", word);
            assert!(masker.mask(&text).items.is_empty(), "{text}");
        }
    }
    for text in [
        "ポケモンが好き",
        "甘口、辛口、それとも純米",
        "白猫と黒鳥が違う方向見てる",
        // Not 水梨と書かれている (a sake): 水梨 is a surname (ENAMDICT), and a name written on
        // something is a name as likely; masking is the safe side of that doubt.
        "テニムっていうんだ",
        "その時、クミンを少し",
        "音羽の滝の近く",
    ] {
        assert!(masker.mask(text).items.is_empty(), "{text}");
    }
}

/// Hiragana names IPADIC reads as pieces or a person, in a name's slot; common kana phrases
/// of the same shape stay.
#[test]
fn lindera_hiragana_names_in_a_name_slot() {
    let Some(an) = lindera() else { return };
    let masker = PiiMasker::new().with_analyzer(an);
    for (text, name) in [
        ("ひづめと帰った", "ひづめ"),
        ("ともえに渡しといて", "ともえ"),
        ("しずくいしが手伝ってくれた", "しずくいし"),
        ("こずえから返事きた", "こずえ"),
    ] {
        let m = masker.mask(text);
        assert!(!m.masked_text.contains(name), "{text} → {}", m.masked_text);
    }
    for text in [
        "おかあさんが言ってた",
        "ともだちと遊んだ",
        "これどこから来た肉なんだろう",
        "なんか、今日は綺麗だね",
        "ふふ、そうだね",
        "おいしいものが食べたい",
        "みんなのうたが好き",
    ] {
        assert!(masker.mask(text).items.is_empty(), "{text}");
    }
}

/// An industry word after a name the dictionary reads as a person, a place or an unknown word
/// is a company with no business context (蛭間工業で溶接); common words, countries,
/// prefectures and acronyms before one are not.
#[test]
fn lindera_companies_with_a_proper_head() {
    let Some(an) = lindera() else { return };
    let masker = PiiMasker::new().with_analyzer(an);
    for (text, name) in [
        ("蛭間工業で溶接やってる", "蛭間工業"),
        ("鰐淵物流のトラック", "鰐淵物流"),
    ] {
        let m = masker.mask(text);
        assert!(
            m.masked_text.contains("[会社名]") && !m.masked_text.contains(name),
            "{text} → {}",
            m.masked_text
        );
    }
    for text in [
        "冷凍食品が安い",
        "日本食品の話",
        "大阪建設の話",
        "LINEグループ作ってくれた",
        "重工業の歴史",
    ] {
        assert!(
            masker
                .mask(text)
                .items
                .iter()
                .all(|i| i.kind.label() != "会社名"),
            "{text}"
        );
    }
}

/// IPADIC reads some common words as a surname and a given name (室町|時代, ツイ|てる, 鏡|公):
/// with no cue, a pair is a name only in one script, three chars or more, with one part in
/// kakeai's lists — full names the lists know still are.
#[test]
fn lindera_pairs_that_are_words() {
    let Some(an) = lindera() else { return };
    let masker = PiiMasker::new().with_analyzer(an);
    for word in ["室町時代", "ツイてる", "鏡公"] {
        for frame in ["え、{}！？", "今日は{}かも。", "{}…ロマンチック"] {
            let text = frame.replace("{}", word);
            assert!(masker.mask(&text).items.is_empty(), "{text}");
        }
    }
    for (text, name) in [
        ("山田太郎が来た", "山田太郎"),
        ("昨日佐藤健太と会った", "佐藤健太"),
    ] {
        let m = masker.mask(text);
        assert!(!m.masked_text.contains(name), "{text} → {}", m.masked_text);
    }
}

/// Precision on real lines nobody here wrote: the duo-talk corpus's 1,972 spoken and thought
/// lines (`../shared/corpora/duo-talk/`, read in place, never copied) hold almost no personal
/// data — a few historical figures, a painter, a cat's name, two breweries — so nearly every
/// span the masker finds there is a false positive of a chat word (猫ちゃん, 行くんだ,
/// 私、なんか、). Half A (odd lines) shaped the word rules in `tests_words`; half B (even lines)
/// only measures: its count is printed and held under a ceiling, its lines never read.
/// Skipped when the corpus is absent; required under CI=true.
fn duo_talk_lines() -> Option<Vec<String>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpora/duo-talk/commentary_runs.jsonl"
    );
    let Ok(text) = std::fs::read_to_string(path) else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but {path} is missing"
        );
        eprintln!("note: duo-talk corpus not found; skipping");
        return None;
    };
    let mut out = Vec::new();
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap_or_default();
        if matches!(v["event"].as_str(), Some("speak" | "thought"))
            && let Some(t) = v["text"].as_str().filter(|t| !t.trim().is_empty())
        {
            out.push(t.replace('\n', " "));
        }
    }
    Some(out)
}

/// Spans found on half B (even lines), and how many lines it holds.
fn half_b(masker: &PiiMasker) -> Option<(usize, usize)> {
    let all = duo_talk_lines()?;
    let b: Vec<&String> = all.iter().skip(1).step_by(2).collect();
    let spans = b.iter().map(|l| masker.mask(l).items.len()).sum();
    Some((spans, b.len()))
}

/// Measured at 15 spans on 986 lines (83 before the word rules); the ceiling leaves room for
/// noise, not for a rule that fires on chat words again.
#[test]
fn few_spans_on_unseen_duo_talk_lines() {
    let Some((spans, n)) = half_b(&PiiMasker::new()) else {
        return;
    };
    println!("duo-talk half B: {spans} spans masked on {n} lines (fallback)");
    assert!(n > 900, "{n} lines");
    assert!(spans <= 24, "{spans} spans masked on {n} unseen lines");
}

/// The same on the lindera path (measured at 16 spans, 83 before; 25 after dev5's name slots;
/// 26 after dev6; 27 after the kana readings of names_kana.rs — one more span on these unseen
/// lines, not read; half A gained none; 33 since the learned labeller joined at its lower
/// margins: six more spans on these 986 lines, while the names it finds on the selection set
/// went from 0.55 to 0.78).
#[test]
fn few_spans_on_unseen_duo_talk_lines_lindera() {
    let Some(an) = lindera() else { return };
    let Some((spans, n)) = half_b(&PiiMasker::new().with_analyzer(an)) else {
        return;
    };
    println!("duo-talk half B: {spans} spans masked on {n} lines (lindera)");
    assert!(spans <= 33, "{spans} spans masked on {n} unseen lines");
}

/// Half A of duo-talk (odd lines; may shape rules): every span masked, printed for tuning.
#[test]
fn duo_talk_half_a_spans_printed() {
    let Some(all) = duo_talk_lines() else { return };
    let masker = PiiMasker::new();
    let mut n = 0;
    for l in all.iter().step_by(2) {
        for it in masker.mask(l).items {
            let s: String = l
                .chars()
                .skip(it.span[0])
                .take(it.span[1] - it.span[0])
                .collect();
            println!("half A: {} {s:?} in {l:?}", it.kind.label());
            n += 1;
        }
    }
    println!("half A: {n} spans");
    // 14 before names_subject, 11 after (the rules' own span on 教えて dropped there).
    assert!(n <= 16, "{n} spans on half A");
}
