//! The learned half of the masker: the sequence labeller of [`tagger_core`] with the model
//! `build.rs` trained from the labelled corpora, proposing 氏名, 会社名, 学校名 and 住所 spans
//! beside the rules (the masker takes the union; overlaps are resolved as for any rule). A
//! span is proposed only when every char of it beat O by [`MIN_MARGIN`].

#[path = "tagger_core.rs"]
pub mod core;

use std::sync::OnceLock;
use unicode_normalization::UnicodeNormalization;

use super::PiiKind;
use crate::text::analyzer::{ProperKind, ProperNoun};

/// Least margin of a tagged char's score over O for its span to count.
pub const MIN_MARGIN: f32 = 0.0;

/// The margin per kind (氏名, 会社名, 学校名, 住所) the analyzer path uses by default: chosen on
/// the selection set (tests/fixtures/pii_independent/set_b_forms.jsonl) and the duo-talk
/// corpus's odd lines with `examples/curve.rs`, per kind a margin where precision on set B
/// holds at about 0.94 or more; sets A, C and D were measured once afterwards.
pub const DEFAULT_MARGIN: [f32; 4] = [96.0, 128.0, 64.0, 128.0];

static MODEL: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/pii_tagger.bin"));
static LISTS: &str = include_str!(concat!(env!("OUT_DIR"), "/pii_tagger_lists.txt"));
/// The analyzer's word codes of the training texts (`assets/safety/pii_tagger/tokens.tsv`).
static CODES: &str = include_str!(concat!(env!("OUT_DIR"), "/pii_tagger_codes.tsv"));
/// The names that stand in for labelled names in training's swapped copies (`swap` lines).
static SWAPS: &str = include_str!(concat!(env!("OUT_DIR"), "/pii_tagger_swaps.txt"));

/// The swaps and fillers `train.txt` names, as `build.rs` trained with them.
pub fn swaps() -> core::Swaps {
    let mut s = core::Swaps::default();
    for section in SWAPS.split('\u{1}').filter(|g| !g.is_empty()) {
        match section.split_once('\n') {
            Some(("fillers", body)) => s.add_fillers(body),
            Some(("swap", body)) => s.add(body),
            // build.rs writes only these two sections.
            _ => {}
        }
    }
    s
}

/// The model and its lists, read once.
pub struct Tagger {
    model: core::Model,
    lists: core::Lists,
}

impl Tagger {
    /// The model built into this binary.
    pub fn built_in() -> &'static Tagger {
        static T: OnceLock<Tagger> = OnceLock::new();
        T.get_or_init(|| Tagger {
            // build.rs wrote it in this format; an unreadable model proposes nothing.
            model: core::Model::from_bytes(MODEL).unwrap_or_default(),
            lists: lists(LISTS),
        })
    }

    /// A tagger trained here (for learning curves and tests), with the word codes the
    /// training texts have in `tokens.tsv`.
    pub fn trained(examples: &[core::Example], epochs: usize, seed: u64) -> Tagger {
        let lists = lists(LISTS);
        let codes = core::read_codes(CODES);
        let lookup = |t: &str| codes.get(&core::text_key(t)).cloned();
        let model = core::train_with(examples, &lists, &swaps(), epochs, seed, &lookup);
        Tagger { model, lists }
    }

    /// Number of weights (features × tags) kept.
    pub fn size(&self) -> usize {
        self.model.w.len()
    }

    /// Whether a learned name in latin letters holds a word of the name lists (Sato, kenta,
    /// Emma): an English word in a name's place (timeが楽しみ) is no name. A span without
    /// latin letters passes.
    pub fn latin_name_known(&self, span: &str) -> bool {
        let mut parts = span
            .split(|c: char| !core::fold(c).is_ascii_alphabetic())
            .filter(|p| !p.is_empty())
            .peekable();
        parts.peek().is_none() || parts.any(|p| self.lists.holds(p))
    }

    /// Whether `word` is on the list of public figures and fictional characters (`pub` in
    /// `train.txt`): a rule's name there is no evidence of a private person by itself.
    pub fn is_public(&self, word: &str) -> bool {
        self.lists.which(word) & self.lists.bit("pub") != 0
    }

    /// Whether `span` is made of listed names: one name of the surname or given-name lists
    /// (any script), or a surname and a given name one after the other, spaces aside
    /// (ふじもと + かずお). A rule's name made of names stays, whatever the judge thinks. Of
    /// ENAMDICT only the surnames count: its given names hold words (理想, 一歳).
    pub fn made_of_names(&self, span: &str) -> bool {
        let (sur, giv) = (
            self.lists.bit("sur") | self.lists.bit("esur") | self.lists.bit("rsur"),
            self.lists.bit("giv") | self.lists.bit("rgiv"),
        );
        let names = sur | giv;
        // NFKC: half-width katakana (ｲｼｶﾜｻﾄﾐ) reads as the lists' full-width.
        let word: String = span.nfkc().filter(|c| !c.is_whitespace()).collect();
        if self.lists.which(&word) & names != 0 {
            return true;
        }
        // Lists hold no word of one char, so every split is tried as it is.
        word.char_indices().skip(1).any(|(i, _)| {
            let (a, b) = word.split_at(i);
            self.lists.which(a) & sur != 0 && self.lists.which(b) & giv != 0
        })
    }

    /// The lists (one bit each) that hold `word` as a word.
    pub fn lists_holding(&self, word: &str) -> u32 {
        self.lists.which(word)
    }

    /// Spans `(kind, start, end)` in chars of `text`.
    pub fn spans(&self, text: &str) -> Vec<(PiiKind, usize, usize)> {
        self.spans_with(text, MIN_MARGIN)
    }

    /// Every span with the least margin over O of its chars.
    pub fn scored(&self, text: &str) -> Vec<(PiiKind, usize, usize, f32)> {
        self.scored_with(text, None)
    }

    /// [`Tagger::scored`] with the analyzer's words of `text` ([`codes`]).
    pub fn scored_with(
        &self,
        text: &str,
        codes: Option<&str>,
    ) -> Vec<(PiiKind, usize, usize, f32)> {
        let feats = core::features_with(text, &self.lists, codes);
        let tags = self.model.decode(&feats);
        core::spans(&tags)
            .into_iter()
            .map(|(s, e, k, m)| (kind(k), s, e, m))
            .collect()
    }

    /// Spans whose every char beat O by more than `margin`.
    pub fn spans_with(&self, text: &str, margin: f32) -> Vec<(PiiKind, usize, usize)> {
        let feats = core::features(text, &self.lists);
        let tags = self.model.decode(&feats);
        core::spans(&tags)
            .into_iter()
            .filter(|s| s.3 > margin)
            .map(|(s, e, k, _)| (kind(k), s, e))
            .collect()
    }
}

/// Legal forms: a company span that is nothing but these (株式会社に勤めています) or that goes
/// on with 化 (株式会社化: incorporation) names no company.
const LEGAL_FORMS: [&str; 8] = [
    "株式会社",
    "有限会社",
    "合同会社",
    "合資会社",
    "合名会社",
    "(株)",
    "（株）",
    "㈱",
];
/// Words any school's name may hold: a school span of nothing else (県立高校) names none.
const SCHOOL_WORDS: [&str; 18] = [
    "県立",
    "市立",
    "私立",
    "国立",
    "都立",
    "府立",
    "道立",
    "公立",
    "町立",
    "村立",
    "区立",
    "専門学校",
    "高等学校",
    "中学校",
    "小学校",
    "高校",
    "中学",
    "大学",
];

/// Whether a learned span can be of its kind at all: it holds a letter (kanji, kana or
/// latin), a name holds no digit, a company more than its legal form, a school more than
/// the words every school's name has. What a span of text can never be is no guess.
pub fn well_formed(kind: PiiKind, span: &str) -> bool {
    let letter = |c: char| c.is_alphabetic();
    if !span.chars().any(letter) {
        return false;
    }
    let strip = |words: &[&str]| {
        let mut rest = span.to_string();
        for w in words {
            rest = rest.replace(w, "");
        }
        rest.trim().to_string()
    };
    match kind {
        PiiKind::Name => !span.chars().any(|c| c.is_numeric()),
        PiiKind::Company => {
            let rest = strip(&LEGAL_FORMS);
            rest.chars().filter(|c| letter(*c)).count() >= 2 && !rest.starts_with('化')
        }
        PiiKind::School => strip(&SCHOOL_WORDS).chars().any(letter),
        _ => true,
    }
}

/// The word codes `tokens.tsv` holds for every training text, as built into this binary.
pub fn stored_codes() -> std::collections::HashMap<u64, String> {
    core::read_codes(CODES)
}

/// The word codes ([`core::TOKEN_KINDS`]) of a text of `n` chars from the analyzer's words.
pub fn codes(toks: &[ProperNoun], n: usize) -> String {
    let mut out = vec!['_'; n];
    for t in toks.iter().filter(|t| t.start < t.end && t.end <= n) {
        let k = match t.kind {
            ProperKind::Surname => 'S',
            ProperKind::GivenName => 'G',
            ProperKind::Person => 'P',
            ProperKind::Organization => 'O',
            ProperKind::Place => 'L',
            ProperKind::Other => 'X',
            ProperKind::Unknown => 'U',
            ProperKind::Common => 'C',
            ProperKind::NotNoun => 'N',
        };
        out[t.start] = k;
        for c in &mut out[t.start + 1..t.end] {
            *c = k.to_ascii_lowercase();
        }
    }
    out.into_iter().collect()
}

/// The index of a kind the labeller proposes (氏名 0, 会社名 1, 学校名 2, 住所 3; others 3).
pub fn kind_index(k: PiiKind) -> usize {
    match k {
        PiiKind::Name => 0,
        PiiKind::Company => 1,
        PiiKind::School => 2,
        _ => 3,
    }
}

fn kind(k: usize) -> PiiKind {
    match k {
        0 => PiiKind::Name,
        1 => PiiKind::Company,
        2 => PiiKind::School,
        _ => PiiKind::Address,
    }
}

fn lists(text: &str) -> core::Lists {
    let mut l = core::Lists::default();
    for section in text.split('\u{1}').filter(|s| !s.is_empty()) {
        let (name, body) = section.split_once('\n').unwrap_or((section, ""));
        l.add(name, body);
    }
    l
}

#[cfg(test)]
mod tests {
    use super::core::{Example, Model, Swaps, gold, negative, spans, swapped};
    use super::*;

    const SURNAMES: [&str; 12] = [
        "山田", "佐藤", "鈴木", "高橋", "田中", "伊藤", "渡辺", "中村", "小林", "加藤", "吉田",
        "山本",
    ];
    const FRAMES: [&str; 6] = [
        "昨日{}さんと会った",
        "{}さんから電話があった",
        "担当の{}です",
        "{}くんが来るって",
        "さっき{}先生に聞いた",
        "明日{}さんの家に行く",
    ];

    fn example(frame: &str, name: &str) -> Example {
        let at = frame
            .find("{}")
            .map(|b| frame[..b].chars().count())
            .unwrap_or(0);
        Example {
            text: frame.replacen("{}", name, 1),
            spans: vec![(at, at + name.chars().count(), "氏名".into())],
        }
    }

    /// Trained on half the names in every frame, it finds the other half (names it never saw,
    /// in the lists), and a frame with an ordinary word where the name was stays clean.
    #[test]
    fn a_trained_tagger_finds_unseen_names_in_learned_frames() {
        let train: Vec<Example> = FRAMES
            .iter()
            .flat_map(|f| SURNAMES[..6].iter().map(move |n| example(f, n)))
            .collect();
        let t = Tagger::trained(&train, 5, 7);
        assert!(t.size() > 0);
        let mut found = 0;
        for f in FRAMES {
            for n in &SURNAMES[6..] {
                let e = example(f, n);
                let (s, en, _) = e.spans[0];
                if t.spans(&e.text)
                    .iter()
                    .any(|&(k, a, b)| k == PiiKind::Name && a <= s && en <= b)
                {
                    found += 1;
                }
            }
        }
        assert!(found >= 30, "{found} of 36 unseen names");
        for f in FRAMES {
            let text = f.replacen("{}", "駅", 1);
            assert!(t.spans(&text).is_empty(), "{text}: {:?}", t.spans(&text));
        }
    }

    #[test]
    fn spans_that_cannot_be_of_their_kind_are_no_guess() {
        for (k, span) in [
            (PiiKind::Company, "株式会社"),
            (PiiKind::Company, "株式会社化"),
            (PiiKind::Company, "㈱化"),
            (PiiKind::School, "県立高校"),
            (PiiKind::School, "私立中学校"),
            (PiiKind::Name, "3"),
            (PiiKind::Name, "佐藤3"),
            (PiiKind::Address, "--"),
        ] {
            assert!(!well_formed(k, span), "{span}");
        }
        for (k, span) in [
            (PiiKind::Company, "株式会社みらい"),
            (PiiKind::Company, "ABC合同会社"),
            (PiiKind::School, "県立北高校"),
            (PiiKind::School, "ひかり小"),
            (PiiKind::Name, "佐藤"),
            (PiiKind::Name, "Ken"),
            (PiiKind::Address, "渋谷2-21-1"),
        ] {
            assert!(well_formed(k, span), "{span}");
        }
    }

    #[test]
    fn a_latin_name_must_hold_a_listed_name() {
        let t = Tagger::built_in();
        for span in [
            "Sato",
            "kenta",
            "Emma Watanabe",
            "ＳＡＴＯ",
            "田中",
            "ken-ichi sato",
        ] {
            assert!(t.latin_name_known(span), "{span}");
        }
        for span in ["time", "Good job", "update"] {
            assert!(!t.latin_name_known(span), "{span}");
        }
    }

    #[test]
    fn negatives_keep_the_frame_and_drop_every_item() {
        let e = example("昨日{}さんと会った", "山田");
        let n = negative(&e, 0, &Swaps::default());
        assert!(n.spans.is_empty());
        assert!(!n.text.contains("山田"));
        assert!(n.text.starts_with("昨日") && n.text.ends_with("さんと会った"));
        assert_eq!(gold(&n), vec![0; n.text.chars().count()]);
    }

    /// Trained on frames whose names are all kanji surnames, a labeller with the built-in
    /// swaps finds more hiragana and katakana given names in those frames than one without:
    /// the swapped copies showed it names in forms its corpus lacks. Frames with an ordinary
    /// word where the name was stay clean with swaps too.
    #[test]
    fn swapped_copies_teach_names_in_forms_the_corpus_lacks() {
        let train: Vec<Example> = FRAMES
            .iter()
            .flat_map(|f| SURNAMES.iter().map(move |n| example(f, n)))
            .collect();
        let l = lists(LISTS);
        let with = Tagger {
            model: core::train_with(&train, &l, &swaps(), 5, 7, &|_| None),
            lists: lists(LISTS),
        };
        let without = Tagger {
            model: core::train_with(&train, &l, &Swaps::default(), 5, 7, &|_| None),
            lists: lists(LISTS),
        };
        let kana = [
            "ゆうき",
            "ひまり",
            "さくら",
            "はると",
            "みお",
            "そうた",
            "ユウキ",
            "ヒマリ",
            "ハルト",
            "ミオ",
            "ソウタ",
            "リン",
        ];
        let found = |t: &Tagger| {
            let mut n = 0;
            for f in FRAMES {
                for name in kana {
                    let e = example(f, name);
                    let (s, en, _) = e.spans[0];
                    n += usize::from(
                        t.spans(&e.text)
                            .iter()
                            .any(|&(k, a, b)| k == PiiKind::Name && a <= s && en <= b),
                    );
                }
            }
            n
        };
        let (a, b) = (found(&with), found(&without));
        assert!(
            a > b,
            "with swaps {a}, without {b} of {}",
            FRAMES.len() * kana.len()
        );
        for f in FRAMES {
            let text = f.replacen("{}", "駅", 1);
            assert!(
                with.spans(&text).is_empty(),
                "{text}: {:?}",
                with.spans(&text)
            );
        }
    }

    /// Every frame × name × company: the swapped copy keeps the text around the spans, puts
    /// one of the swaps' names in the name's span, moves the company's span with the text and
    /// leaves it as it was; the same example gives the same copy.
    #[test]
    fn swapped_copies_replace_names_and_move_the_other_spans() {
        let mut swaps = Swaps::default();
        swaps.add("# a comment\n佐々木\tささき\tササキ\n\n林\tはやし\tハヤシ\n");
        swaps.add("陽菜\tひな\tヒナ\n");
        let forms = [
            "佐々木",
            "ささき",
            "ササキ",
            "林",
            "はやし",
            "ハヤシ",
            "陽菜",
            "ひな",
            "ヒナ",
        ];
        let mut seen = std::collections::HashSet::new();
        for f in FRAMES {
            for n in SURNAMES {
                for co in ["株式会社あおば", "ABC Holdings", "ﾊﾔｼ商店"] {
                    let mut e = example(&format!("{f}、{{co}}勤務"), n);
                    let c = e.text.replace("{co}", co);
                    let at = c.chars().count() - co.chars().count() - "勤務".chars().count();
                    e.text = c;
                    e.spans.push((at, at + co.chars().count(), "会社名".into()));
                    let s = swapped(&e, &swaps).expect("a copy of an example with a name");
                    assert_eq!(swapped(&e, &swaps).unwrap().text, s.text, "deterministic");
                    let chars: Vec<char> = s.text.chars().collect();
                    let cut = |k: usize| -> String {
                        let (a, b, _) = &s.spans[k];
                        chars[*a..*b].iter().collect()
                    };
                    assert_eq!(s.spans.len(), 2, "{}", s.text);
                    let name = cut(0);
                    let one = |w: &str| forms.contains(&w);
                    let full = (1..name.chars().count()).any(|k| {
                        let b = name.char_indices().nth(k).map_or(name.len(), |(b, _)| b);
                        let (a, z) = name.split_at(b);
                        one(a) && one(z.trim_start())
                    });
                    assert!(one(&name) || full, "{}", s.text);
                    assert_eq!((cut(1).as_str(), s.spans[1].2.as_str()), (co, "会社名"));
                    assert_eq!(s.text.replacen(&cut(0), n, 1), e.text);
                    seen.insert(cut(0));
                }
            }
        }
        assert!(seen.len() >= 6, "draws spread over the swaps: {seen:?}");
        let company = Example {
            text: "株式会社あおばに勤務".into(),
            spans: vec![(0, 7, "会社名".into())],
        };
        assert!(swapped(&company, &swaps).is_none(), "no name, no copy");
        let e = example(FRAMES[0], "山田");
        assert!(
            swapped(&e, &Swaps::default()).is_none(),
            "no swaps, no copy"
        );
    }

    #[test]
    fn gold_tags_make_spans_again() {
        let e = Example {
            text: "山田太郎、株式会社あおば".into(),
            spans: vec![(0, 4, "氏名".into()), (5, 12, "会社名".into())],
        };
        let tags: Vec<(u8, f32)> = gold(&e).into_iter().map(|t| (t, 1.0)).collect();
        let s: Vec<(usize, usize, usize)> =
            spans(&tags).into_iter().map(|x| (x.0, x.1, x.2)).collect();
        assert_eq!(s, vec![(0, 4, 0), (5, 12, 1)]);
    }

    /// What the judge reads from the lists: names made of listed names, and public names.
    #[test]
    fn names_made_of_listed_names_and_public_names_are_told_from_words() {
        let t = Tagger::built_in();
        // Every pair of a listed surname and given name, in kana and kanji, with or without a
        // space, is made of names; the same pieces with a word between are not.
        let sur = ["ふじもと", "鈴木", "タナカ", "いしかわ", "鶉野", "ｲｼｶﾜ"];
        let giv = ["かずお", "花子", "タケシ", "ゆうと", "ｻﾄﾐ"];
        for s in sur {
            assert!(t.made_of_names(s), "{s}");
            for g in giv {
                for name in [format!("{s}{g}"), format!("{s} {g}"), format!("{s}　{g}")] {
                    assert!(t.made_of_names(&name), "{name}");
                }
                assert!(!t.made_of_names(&format!("{s}の{g}")), "{s}の{g}");
            }
        }
        let words = [
            "いないとき",
            "勤務先",
            "われたのに",
            "旅行行",
            "あいさつ",
            "理想",
            "一歳",
        ];
        for word in words {
            assert!(!t.made_of_names(word), "{word}");
        }
        for name in ["大谷翔平", "イチロー", "竈門炭治郎"] {
            assert!(t.is_public(name), "{name}");
        }
        for name in ["大谷", "翔平", "鈴木花子", "ふじもとかずお"] {
            assert!(!t.is_public(name), "{name}");
        }
    }

    /// The model built into the binary reads back, and writing it gives the same bytes.
    #[test]
    fn the_built_in_model_round_trips() {
        let m = Model::from_bytes(MODEL).expect("the built-in model reads");
        assert!(m.w.len() > 1000, "{}", m.w.len());
        assert_eq!(m.to_bytes(), MODEL);
        assert!(Model::from_bytes(&MODEL[..MODEL.len() - 1]).is_none());
    }
}
