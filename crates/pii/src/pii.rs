//! PII masking of user messages (issue 6 §3, seed 003 §6): 氏名, 電話番号, メールアドレス, 住所,
//! 会社名 and 学校名 are found by rules (no model download) and replaced by `[氏名]`-style
//! tokens; only a keyed digest of the original text is kept (`digest`, `keyfile`). Card numbers
//! (`[カード番号]`, Luhn-checked) are a seventh kind (issue 16).
//!
//! Decisions (the submodules hold each kind's rules):
//! - Detection runs on a char-for-char folded copy (full-width ASCII → ASCII, U+3000 → space,
//!   dash look-alikes → `-`, ー between digits → `-`), so spans are char offsets `[s, e)` into
//!   the ORIGINAL text.
//! - 電話番号: 10–11 digits from a leading 0, or +81 and 9–10 digits; a number glued to
//!   letters or to a longer code (AB-…, SKU-090-…), dates, ISBNs and prices are left alone.
//! - 住所: a prefecture plus at least one 市区町村郡, then the town, block and a building glued
//!   to it (or after one space when it has a room number); 在住/出身/付近… are trimmed off.
//!   Without a prefecture, a 市区町村 chain is masked only when a block number follows
//!   (横浜市港北区日吉1-2-3); 〒 codes are masked. A prefecture or a city alone is not PII.
//! - 会社名 / 学校名: the name is the run of kanji, katakana and latin letters (digits and `&`
//!   too for companies) beside the legal form or school suffix; hiragana (particles),
//!   punctuation and spaces end it. A run made only of generic words (大手, 県立, 有名私立) is
//!   no name, leading time words (今年, 去年) are not part of it, and a suffix followed by 生
//!   is a student word (大学生, 高校生, 大学院生).
//! - 氏名: a surname from the list, optionally with a given name (up to three kanji, or two to
//!   four kana), next to a cue: an honorific after it (a space between is allowed), 〜と申します /
//!   〜といいます, 名前は〜, or 〜です after a speaker word (私は, 担当は) or at a sentence start.
//!   A full name (surname + a given name of two kanji ending like one) needs no cue. Romanised
//!   names after an English cue (My name is …, Mr. …) are found too (`latin`). Names keep their
//!   honorific: 田中さん → `[氏名]さん`.
//! - Overlaps: every char any candidate covers is masked. The longer span keeps its whole
//!   stretch (a company inside an address is one `[住所]`); on equal length カード > メール >
//!   電話 > 住所 > 会社 > 学校 > 氏名; a shorter one keeps the parts nothing else covers.
//! - Text already holding a token (`[氏名]`) is never re-masked there, so masking is idempotent.
//! - The skip message `[スキップ]` is not scanned.

mod address;
mod address_town;
mod card;
mod contact;
pub mod digest;
pub mod eval;
pub mod judge;
pub mod keyfile;
mod kind;
mod labels;
mod latin;
pub mod llm;
mod mynumber;
mod names;
mod names_context;
mod names_cue;
mod names_kana;
mod names_slot;
mod names_subject;
mod org_forms;
mod orgs;
mod proper;
mod resolve;
mod scan;
pub mod second;
pub mod tagger;
mod view;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_context;
#[cfg(test)]
mod tests_forms;
#[cfg(test)]
mod tests_kinds;
#[cfg(test)]
mod tests_labels;
#[cfg(test)]
mod tests_llm;
#[cfg(test)]
mod tests_props;
#[cfg(test)]
mod tests_reported;
#[cfg(test)]
mod tests_subject;
#[cfg(test)]
mod tests_words;

use std::sync::OnceLock;

use crate::text::analyzer::{Analyzer, AnalyzerKind, ProperKind, ProperNoun};
use serde::{Deserialize, Serialize};

pub use digest::{DigestKey, sha256_hex};
pub use keyfile::{KeyError, installation_key};
pub use kind::PiiKind;
pub use llm::{
    LLM_SYSTEM_PROMPT, PiiLlmMode, already_masked, llm_user_prompt, merge_llm, merge_reply,
};
pub use resolve::apply;
use resolve::{apply_tokens, resolve};

/// The message a user sends to skip a question (seed 003 §6); never scanned.
pub const SKIP_MESSAGE: &str = "[スキップ]";

/// One masked stretch: char offsets `[s, e)` into the original text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PiiItem {
    pub kind: PiiKind,
    pub span: [usize; 2],
}

/// The result of masking one message, in the `kakeai pii mask` JSON shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Masked {
    pub pii_detected: bool,
    pub masked_text: String,
    /// Sorted by start; never overlapping.
    pub items: Vec<PiiItem>,
    /// Plain SHA-256 of the original text: in memory only, never serialised. What is stored
    /// or shown is [`Masked::digest`], keyed (seed 003's `original_content_hash`, issue 16).
    #[serde(skip)]
    original_sha256: String,
}

impl Masked {
    /// The keyed digest of the original text: recognises a repeat, reveals nothing without
    /// the installation secret.
    pub fn digest(&self, key: &DigestKey) -> String {
        key.message_digest_of_sha256(&self.original_sha256)
    }
}

/// A detection before overlaps are resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cand {
    kind: PiiKind,
    s: usize,
    e: usize,
    /// Which rule proposed it (`learned`: the labeller), and the cue word it followed: what
    /// the judge weighs.
    src: &'static str,
    cue: &'static str,
}

impl Cand {
    fn new(kind: PiiKind, s: usize, e: usize) -> Cand {
        Cand {
            kind,
            s,
            e,
            src: "rule",
            cue: "",
        }
    }

    fn from(mut self, src: &'static str) -> Cand {
        self.src = src;
        self
    }
}

/// Names the rule of every candidate from `from` on.
fn from_rule(cands: &mut [Cand], from: usize, src: &'static str) {
    for c in cands.iter_mut().skip(from) {
        c.src = src;
    }
}

#[derive(Debug, Clone, Copy)]
enum Marker {
    Honorific,
    StrongIntro,
    WeakIntro,
    NameIs,
    /// 俺、/僕、/私、: a name may follow (俺、伊藤大輔。).
    FirstPerson,
    /// I'm / I am: a name of any script may follow, up to a comma or the end.
    English,
    /// 妹の / 友達の: a full name or a romanised one may follow, then a particle.
    Relation,
    /// 鮫島と十文字が付き合ってる: two names before a relationship verb.
    Pair,
    /// 千種 陽向って知ってる？: a full name (two words) only — ポケモンって知ってる？ is none.
    KnowQuestion,
    /// from 栗林暖 at the end of a message: a signature.
    Signature,
    Token,
}

impl Marker {
    /// The marker's rule as the judge names it.
    fn name(self) -> &'static str {
        match self {
            Marker::Honorific => "honorific",
            Marker::StrongIntro => "strong_intro",
            Marker::WeakIntro => "weak_intro",
            Marker::NameIs => "name_is",
            Marker::FirstPerson => "first_person",
            Marker::English => "english",
            Marker::Relation => "relation",
            Marker::Pair => "pair",
            Marker::KnowQuestion => "know_question",
            Marker::Signature => "signature",
            Marker::Token => "token",
        }
    }
}

const MARKERS: &[(&str, Marker)] = &[
    ("さん", Marker::Honorific),
    ("様", Marker::Honorific),
    ("さま", Marker::Honorific),
    ("君", Marker::Honorific),
    ("くん", Marker::Honorific),
    ("氏", Marker::Honorific),
    ("ちゃん", Marker::Honorific),
    ("先生", Marker::Honorific),
    ("先輩", Marker::Honorific),
    ("殿", Marker::Honorific),
    ("教授", Marker::Honorific),
    ("社長", Marker::Honorific),
    ("部長", Marker::Honorific),
    ("課長", Marker::Honorific),
    ("と申します", Marker::StrongIntro),
    ("と申す", Marker::StrongIntro),
    ("といいます", Marker::StrongIntro),
    ("と言います", Marker::StrongIntro),
    ("っていいます", Marker::StrongIntro),
    ("って言います", Marker::StrongIntro),
    ("と呼んで", Marker::StrongIntro),
    ("って人", Marker::StrongIntro),
    ("っていう人", Marker::StrongIntro),
    ("という人", Marker::StrongIntro),
    ("って子", Marker::StrongIntro),
    ("っていう子", Marker::StrongIntro),
    ("という子", Marker::StrongIntro),
    ("って呼んで", Marker::StrongIntro),
    ("です", Marker::WeakIntro),
    ("って誰", Marker::StrongIntro),
    ("ってだれ", Marker::StrongIntro),
    ("って名字", Marker::StrongIntro),
    ("という名字", Marker::StrongIntro),
    ("って苗字", Marker::StrongIntro),
    ("という苗字", Marker::StrongIntro),
    ("って名前", Marker::StrongIntro),
    ("って珍しい名字", Marker::StrongIntro),
    ("って珍しい苗字", Marker::StrongIntro),
    ("って珍しい名前", Marker::StrongIntro),
    ("って知ってる", Marker::KnowQuestion),
    ("って知ってます", Marker::KnowQuestion),
    ("-kun", Marker::Honorific),
    ("-san", Marker::Honorific),
    ("-chan", Marker::Honorific),
    ("-sama", Marker::Honorific),
    ("-sensei", Marker::Honorific),
    ("-senpai", Marker::Honorific),
    ("という名前", Marker::StrongIntro),
    ("名前は", Marker::NameIs),
    ("名前、", Marker::NameIs),
    ("名前:", Marker::NameIs),
    ("名前が", Marker::NameIs),
    ("名字は", Marker::NameIs),
    ("苗字は", Marker::NameIs),
    ("氏名:", Marker::NameIs),
    ("氏名は", Marker::NameIs),
    ("連絡先:", Marker::NameIs),
    ("担当:", Marker::NameIs),
    ("宛名:", Marker::NameIs),
    ("I'm ", Marker::English),
    ("I am ", Marker::English),
    ("妹の", Marker::Relation),
    ("弟の", Marker::Relation),
    ("姉の", Marker::Relation),
    ("兄の", Marker::Relation),
    ("娘の", Marker::Relation),
    ("息子の", Marker::Relation),
    ("友達の", Marker::Relation),
    ("友だちの", Marker::Relation),
    ("友人の", Marker::Relation),
    ("親友の", Marker::Relation),
    ("彼氏の", Marker::Relation),
    ("彼女の", Marker::Relation),
    ("同僚の", Marker::Relation),
    ("上司の", Marker::Relation),
    ("先輩の", Marker::Relation),
    ("後輩の", Marker::Relation),
    ("夫の", Marker::Relation),
    ("妻の", Marker::Relation),
    ("旦那の", Marker::Relation),
    ("嫁の", Marker::Relation),
    ("いとこの", Marker::Relation),
    ("同級生の", Marker::Relation),
    ("幼なじみの", Marker::Relation),
    ("クラスの", Marker::Relation),
    ("俺、", Marker::FirstPerson),
    ("僕、", Marker::FirstPerson),
    ("私、", Marker::FirstPerson),
    ("わたし、", Marker::FirstPerson),
    ("あたし、", Marker::FirstPerson),
    ("from ", Marker::Signature),
    ("From ", Marker::Signature),
    ("FROM ", Marker::Signature),
    ("が付き合", Marker::Pair),
    ("がつきあ", Marker::Pair),
    ("が結婚", Marker::Pair),
    ("が離婚", Marker::Pair),
    ("が別れ", Marker::Pair),
    ("が交際", Marker::Pair),
    ("[氏名]", Marker::Token),
    ("[電話番号]", Marker::Token),
    ("[メールアドレス]", Marker::Token),
    ("[住所]", Marker::Token),
    ("[会社名]", Marker::Token),
    ("[学校名]", Marker::Token),
    ("[カード番号]", Marker::Token),
    ("[マイナンバー]", Marker::Token),
];

/// Schools commonly named without their suffix (東大, 早稲田): assets/safety/school_names.txt.
const SHORT_SCHOOLS: &str = include_str!("../../../assets/safety/school_names.txt");

fn short_schools() -> impl Iterator<Item = &'static str> {
    SHORT_SCHOOLS
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// The rule-based masker: build once (regexes, the marker automaton, the surname set), share
/// freely (`Send + Sync`).
pub struct PiiMasker {
    contact: contact::Contact,
    address: address::Address,
    latin: latin::Latin,
    /// Every word list below, searched in one pass (`scan`).
    lists: scan::Lists,
    markers: scan::ListId,
    schools: scan::ListId,
    /// A greeting after a call (、元気): any hit lets `vocative` look.
    greetings: scan::ListId,
    /// Words of a self-introduction (よろしく, 申します): any hit sets the view's `intro`.
    intro: scan::ListId,
    forms: org_forms::Forms,
    names: names::Names,
    subjects: names_subject::Subjects,
    slots: names_slot::Slots,
    kana: names_kana::KanaNames,
    /// The morphological analyzer whose proper nouns add names and organisations; `None` is
    /// the fallback (rules only, lower recall on names the lists do not hold).
    analyzer: Option<std::sync::Arc<dyn Analyzer>>,
    /// The learned sequence labeller (`tagger`): on the analyzer path by default at
    /// [`tagger::DEFAULT_MARGIN`] (where it adds names at the precision of the rules, measured
    /// on independent sets and natural chat); off on the rules-only path, which it would slow
    /// from ~145,000 to ~9,000 messages/s.
    learned: Option<&'static tagger::Tagger>,
    /// Whether the caller chose the labeller (`rules_only`, `with_learned…`): then
    /// `with_analyzer` leaves it as chosen.
    learned_chosen: bool,
    /// The least margin over O of every char of a learned span, per kind (氏名, 会社名, 学校名,
    /// 住所); `f32::INFINITY` keeps a kind to the rules.
    learned_margin: [f32; 4],
    /// The learned judge of candidate spans (`judge`): on the analyzer path by default (the
    /// built-in model), or as chosen with `with_judge`; it judges only where the analyzer read
    /// the message.
    judge: Option<&'static judge::Judge>,
    /// Whether the labeller's spans go to the judge even when they cut the analyzer's words
    /// (the judge weighs that): set with a judge, and for its samples.
    proposing: bool,
}

impl Default for PiiMasker {
    fn default() -> Self {
        PiiMasker::new()
    }
}

impl PiiMasker {
    pub fn new() -> PiiMasker {
        let mut lists = scan::Builder::default();
        let markers = lists.list(MARKERS.iter().map(|(p, _)| *p), scan::Pick::LeftmostLongest);
        // Apart from the markers: 京大 must not hide the 大学 of 東京大学.
        let schools = lists.list(short_schools(), scan::Pick::LeftmostLongest);
        let greetings = lists.list(names_cue::GREETINGS, scan::Pick::Standard);
        let intro = lists.list(names_cue::INTRO_WORDS, scan::Pick::Standard);
        let forms = org_forms::Forms::builtin(&mut lists);
        let subjects = names_subject::Subjects::new(&mut lists);
        PiiMasker {
            contact: contact::Contact::new(),
            address: address::Address::new(),
            latin: latin::Latin::new(),
            // Constant patterns: a failure here is a programming error.
            lists: lists.build().expect("the word lists' automaton builds"),
            markers,
            schools,
            greetings,
            intro,
            forms,
            names: names::Names::builtin(),
            subjects,
            slots: names_slot::Slots::new(),
            kana: names_kana::KanaNames::new(),
            analyzer: None,
            learned: None,
            learned_margin: [tagger::MIN_MARGIN; 4],
            learned_chosen: false,
            judge: None,
            proposing: false,
        }
    }

    /// The rules alone, without the learned labeller (also on the analyzer path).
    pub fn rules_only(mut self) -> PiiMasker {
        self.learned = None;
        self.learned_chosen = true;
        self
    }

    /// The rules and the learned labeller built into this binary at every margin, their
    /// spans united (for measuring; it over-masks chat).
    pub fn with_learned(mut self) -> PiiMasker {
        self.learned = Some(tagger::Tagger::built_in());
        self.learned_chosen = true;
        self
    }

    /// The learned labeller with its own least margin per kind (氏名, 会社名, 学校名, 住所).
    pub fn with_learned_at(mut self, margin: [f32; 4]) -> PiiMasker {
        self.learned = Some(tagger::Tagger::built_in());
        self.learned_margin = margin;
        self.learned_chosen = true;
        self
    }

    /// Uses `t` as the learned labeller (a model trained elsewhere, e.g. a learning curve).
    pub fn with_tagger(mut self, t: &'static tagger::Tagger) -> PiiMasker {
        self.learned = Some(t);
        self.learned_chosen = true;
        self
    }

    /// Uses `t` as the learned labeller with its own least margin per kind.
    pub fn with_tagger_at(mut self, t: &'static tagger::Tagger, margin: [f32; 4]) -> PiiMasker {
        self.learned = Some(t);
        self.learned_margin = margin;
        self.learned_chosen = true;
        self
    }

    /// Adds an analyzer's proper nouns (人名/組織) to the rules. A fallback analyzer (no
    /// dictionary) adds nothing and is not kept.
    /// On the analyzer path the learned labeller joins at its default margin unless the
    /// caller chose otherwise.
    pub fn with_analyzer(mut self, analyzer: std::sync::Arc<dyn Analyzer>) -> PiiMasker {
        self.analyzer = (analyzer.kind() == AnalyzerKind::LinderaIpadic).then_some(analyzer);
        if self.analyzer.is_some() && !self.learned_chosen {
            self.learned = Some(tagger::Tagger::built_in());
            self.learned_margin = tagger::DEFAULT_MARGIN;
            if let Some(j) = judge::Judge::built_in() {
                self = self.with_judge(Some(j));
            }
        }
        self
    }

    /// Judges candidates with `j` (its own floor for the labeller's margins), or with none
    /// (the labeller at its default margins).
    pub fn with_judge(mut self, j: Option<&'static judge::Judge>) -> PiiMasker {
        self.learned_margin = j.map_or(tagger::DEFAULT_MARGIN, |j| j.floor);
        self.judge = j;
        self.proposing = j.is_some();
        self
    }

    /// Proposes the labeller's spans as the judge sees them (for training the judge), with no
    /// judge: every candidate stays.
    pub fn proposing(mut self) -> PiiMasker {
        self.proposing = true;
        self
    }

    /// Which analyzer backs the name rules: lindera-ipadic, or the fallback (rules only).
    pub fn analyzer_kind(&self) -> AnalyzerKind {
        self.analyzer
            .as_ref()
            .map_or(AnalyzerKind::Fallback, |a| a.kind())
    }

    /// Reads the dictionary's name readings now (a few hundred milliseconds, once per
    /// analyzer) so that the first message with a kana name does not wait for them.
    pub fn warm(&self) -> &PiiMasker {
        if let Some(an) = &self.analyzer {
            an.name_reading("ア");
        }
        self
    }

    /// Adds surnames to the built-in list (e.g. from a user's file). Entries with anything but
    /// kanji are ignored.
    pub fn with_extra_surnames<I, S>(mut self, names: I) -> PiiMasker
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.names.extend(names);
        self
    }

    /// How many surnames the name rule knows.
    pub fn surname_count(&self) -> usize {
        self.names.len()
    }

    pub fn mask(&self, text: &str) -> Masked {
        let original_sha256 = sha256_hex(text);
        if text.trim() == SKIP_MESSAGE {
            return Masked {
                pii_detected: false,
                masked_text: text.to_string(),
                items: Vec::new(),
                original_sha256,
            };
        }
        let mut items = self.detect(text);
        let mut masked_text = apply(text, &items);
        // A mask can reveal more: a number rejected for the letter glued to it (…5678A株式会社)
        // stands free once that letter is inside [会社名]. Mask until nothing new appears, so
        // masking the result again changes nothing. New items lie between tokens and map back
        // to the original char for char.
        for _ in 0..3 {
            if items.is_empty() {
                break;
            }
            let more = self.detect(&masked_text);
            if more.is_empty() {
                break;
            }
            let back = resolve::original_offsets(&masked_text, &items);
            items.extend(more.iter().filter_map(|it| {
                let s = back.get(it.span[0]).copied().flatten()?;
                let e = back.get(it.span[1] - 1).copied().flatten()? + 1;
                Some(PiiItem {
                    kind: it.kind,
                    span: [s, e],
                })
            }));
            items.sort_by_key(|it| it.span[0]);
            masked_text = apply(text, &items);
        }
        Masked {
            pii_detected: !items.is_empty(),
            masked_text,
            items,
            original_sha256,
        }
    }

    /// The items `mask` would replace, sorted and non-overlapping.
    pub fn detect(&self, text: &str) -> Vec<PiiItem> {
        let (cands, tokens) = self.candidates(text);
        resolve(cands, &tokens)
    }

    /// Every detection before overlaps are resolved, and the existing tokens' spans: what the
    /// rules and the labeller propose, less what the judge (when there is one) turns down.
    fn candidates(&self, text: &str) -> (Vec<Cand>, Vec<(usize, usize)>) {
        let p = self.propose(text);
        let Some(j) = self.judge.filter(|_| !p.toks.is_empty()) else {
            return (p.cands, p.tokens);
        };
        // What the lists say of a name: a public figure's (大谷翔平) is judged as the labeller's
        // proposals are, since a rule that spoke on it is no evidence of a private person; one
        // made of listed names (鶉野, ふじもとかずお) is never vetoed.
        let name_in = |c: &Cand, on: fn(&tagger::Tagger, &str) -> bool| {
            c.kind == PiiKind::Name
                && self
                    .learned
                    .is_some_and(|t| on(t, p.v.slice(c.s, c.e).trim()))
        };
        let public = |c: &Cand| name_in(c, tagger::Tagger::is_public);
        // What the judge turns down goes; of what stays, overlaps resolve as for any rule.
        let mut drop: Vec<usize> = self
            .judged(&p)
            .into_iter()
            .filter(|(i, f)| {
                let c = &p.cands[*i];
                let learned = c.src == "learned" || public(c);
                if !learned && name_in(c, tagger::Tagger::made_of_names) {
                    return false;
                }
                let f: Vec<u64> = f.iter().map(|n| judge::hash(n)).collect();
                !j.keeps(tagger::kind_index(c.kind), learned, &f)
            })
            .map(|(i, _)| i)
            .collect();
        // With a public name turned down go the names inside it (大谷翔 of 大谷翔平).
        let gone: Vec<(usize, usize)> = drop
            .iter()
            .map(|&i| &p.cands[i])
            .filter(|c| public(c))
            .map(|c| (c.s, c.e))
            .collect();
        drop.extend(p.cands.iter().enumerate().filter_map(|(i, c)| {
            let inside = gone.iter().any(|&(s, e)| s <= c.s && c.e <= e);
            (c.kind == PiiKind::Name && inside).then_some(i)
        }));
        let cands = p
            .cands
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !drop.contains(i))
            .map(|(_, c)| c)
            .collect();
        (cands, p.tokens)
    }

    /// Every detection of the rules and the labeller, with what the judge needs to see.
    fn propose(&self, text: &str) -> Proposed {
        let v = view::View::new(text);
        let hits = self.lists.scan(&v.norm);
        // Set once here; the view was just made, so it cannot be set already.
        let _ = v.intro.set(!hits.of(self.intro).is_empty());
        let mut cands = Vec::new();
        let mut tokens: Vec<(usize, usize)> = Vec::new();
        self.contact.find(&v, &mut cands);
        card::find(&v, &mut cands);
        mynumber::find(&v, &mut cands);
        labels::retain_numbers(&v, &mut cands);
        let n = cands.len();
        self.address.find(&v, &mut cands);
        from_rule(&mut cands, n, "address");
        let n = cands.len();
        self.latin.find(&v, &mut cands);
        from_rule(&mut cands, n, "latin");
        let mut full = Vec::new();
        self.names.full_names(&v, &mut full);
        cands.extend(
            full.into_iter()
                .map(|(s, e)| Cand::new(PiiKind::Name, s, e).from("full")),
        );
        self.markers(&v, &hits, &mut cands, &mut tokens);
        let greeting = !hits.of(self.greetings).is_empty();
        // A call-out the dictionary reads only as a common word (ヒマワリ、久しぶりに見た) is
        // that word.
        let word = |s: usize, e: usize| {
            self.analyzer
                .as_ref()
                .is_some_and(|an| names_kana::is_word_not_name(v.slice(s, e), an.as_ref()))
        };
        cands.extend(
            names_cue::vocative(&v, greeting)
                .filter(|&(s, e)| !word(s, e))
                .map(|(s, e)| Cand::new(PiiKind::Name, s, e).from("vocative")),
        );
        let mut subjects = Vec::new();
        self.subjects.find(&v, &hits, &self.names, &mut subjects);
        cands.extend(
            subjects
                .into_iter()
                .map(|(s, e)| Cand::new(PiiKind::Name, s, e).from("subject")),
        );
        let mut romaji = Vec::new();
        self.slots.romaji_honorific(&v, &mut romaji);
        cands.extend(
            romaji
                .into_iter()
                .map(|(s, e)| Cand::new(PiiKind::Name, s, e).from("romaji")),
        );
        let toks = self
            .analyzer
            .as_ref()
            .map(|an| an.proper_nouns(text))
            .unwrap_or_default();
        let n = cands.len();
        self.forms
            .find(&v, &hits, &toks, self.analyzer.as_deref(), &mut cands);
        from_rule(&mut cands, n, "forms");
        let n = cands.len();
        self.forms.find_named(&v, &hits, &mut cands);
        from_rule(&mut cands, n, "named");
        if let Some(an) = &self.analyzer {
            self.dictionary_names(&v, &toks, an.as_ref(), &mut cands);
        }
        let n = cands.len();
        for m in hits.of(self.schools) {
            orgs::short_school(&v, v.char_at(m.start), v.char_at(m.end), &mut cands);
        }
        from_rule(&mut cands, n, "short_school");
        let scored = self.learn(text, &v, &toks, &mut cands);
        labels::retain_names(&v, &mut cands);
        cands.retain(|c| c.kind != PiiKind::Name || !is_character(v.slice(c.s, c.e)));
        debug_assert!(cands.iter().all(|c| c.s < c.e && c.e <= v.len()));
        Proposed {
            cands,
            tokens,
            v,
            toks,
            scored,
        }
    }

    /// The learned labeller's spans: every one scored (kind index, start, end, margin), and
    /// those over the kind's margin added to `cands`. It fills gaps only: where a rule spoke,
    /// the rule's span stands. Without the judge, a span that cuts a word of the analyzer's
    /// (研究開|発本部, My ca|rd) is a fragment, and a name made of common words or no noun
    /// (ひま|り) no person; with the judge both go to it, which reads the same words.
    fn learn(
        &self,
        text: &str,
        v: &view::View,
        toks: &[ProperNoun],
        cands: &mut Vec<Cand>,
    ) -> Vec<(usize, usize, usize, f32)> {
        let Some(t) = self.learned else {
            return Vec::new();
        };
        let whole = |s: usize, e: usize| {
            toks.is_empty()
                || (toks.iter().any(|t| t.start == s) && toks.iter().any(|t| t.end == e))
        };
        let codes = (!toks.is_empty()).then(|| tagger::codes(toks, v.len()));
        let scored = t.scored_with(text, codes.as_deref());
        let learned: Vec<Cand> = scored
            .iter()
            .copied()
            .filter(|(k, _, _, m)| *m > self.learned_margin[tagger::kind_index(*k)])
            .filter(|&(_, s, e, _)| self.proposing || whole(s, e))
            .filter(|&(k, s, e, _)| tagger::well_formed(k, v.slice(s, e)))
            .filter(|&(k, s, e, _)| {
                k != PiiKind::Name || self.proposing || !not_a_person(toks, v, s, e)
            })
            .filter(|&(k, s, e, _)| k != PiiKind::Name || t.latin_name_known(v.slice(s, e)))
            .filter(|(_, s, e, _)| !cands.iter().any(|o| o.s < *e && *s < o.e))
            .map(|(k, s, e, _)| Cand::new(k, s, e).from("learned"))
            .collect();
        cands.extend(learned);
        scored
            .into_iter()
            .map(|(k, s, e, m)| (tagger::kind_index(k), s, e, m))
            .collect()
    }

    /// Every judged candidate (氏名, 会社名, 学校名, 住所) with the names of what the judge
    /// sees of it.
    fn judged(&self, p: &Proposed) -> Vec<(usize, Vec<String>)> {
        let Some(t) = self.learned else {
            return Vec::new();
        };
        let others: Vec<(usize, usize, usize, &str)> = p
            .cands
            .iter()
            .map(|c| (tagger::kind_index(c.kind), c.s, c.e, c.src))
            .collect();
        let word = |s: usize, e: usize, first: bool| {
            let mut inside = p.toks.iter().filter(|w| s <= w.start && w.end <= e);
            let w = if first {
                inside.next()
            } else {
                inside.next_back()
            };
            w.map_or(0, |w| t.lists_holding(p.v.slice(w.start, w.end)))
        };
        p.cands
            .iter()
            .enumerate()
            .filter(|(_, c)| judge::judges(c.kind))
            .map(|(i, c)| {
                let seen = judge::Seen {
                    kind: tagger::kind_index(c.kind),
                    s: c.s,
                    e: c.e,
                    src: c.src,
                    cue: c.cue,
                    chars: &p.v.chars,
                    toks: &p.toks,
                    learned: &p.scored,
                    others: &others,
                    lists: [
                        t.lists_holding(p.v.slice(c.s, c.e).trim()),
                        word(c.s, c.e, true),
                        word(c.s, c.e, false),
                    ],
                };
                (i, judge::feature_names(&seen))
            })
            .collect()
    }

    /// Every candidate the judge sees in `text`, with its features (for training the judge).
    pub fn judge_samples(&self, text: &str) -> Vec<(PiiKind, usize, usize, Vec<u64>)> {
        self.judge_features(text)
            .into_iter()
            .map(|(k, s, e, f)| (k, s, e, f.iter().map(|n| judge::hash(n)).collect()))
            .collect()
    }

    /// [`PiiMasker::judge_samples`] with the features by name (for reading a decision).
    pub fn judge_features(&self, text: &str) -> Vec<(PiiKind, usize, usize, Vec<String>)> {
        let p = self.propose(text);
        self.judged(&p)
            .into_iter()
            .map(|(i, f)| (p.cands[i].kind, p.cands[i].s, p.cands[i].e, f))
            .collect()
    }
}

/// What the rules and the labeller proposed in one message, before the judge.
struct Proposed {
    cands: Vec<Cand>,
    tokens: Vec<(usize, usize)>,
    v: view::View,
    toks: Vec<ProperNoun>,
    scored: Vec<(usize, usize, usize, f32)>,
}

impl PiiMasker {
    /// Names the dictionary's reading finds: its proper nouns, names in a name's slot, and
    /// names in kana (which end a cue rule's longer guess around them).
    fn dictionary_names(
        &self,
        v: &view::View,
        toks: &[ProperNoun],
        an: &dyn Analyzer,
        cands: &mut Vec<Cand>,
    ) {
        let n = cands.len();
        proper::find(v, toks, &self.names, cands);
        from_rule(cands, n, "proper");
        let mut slots = Vec::new();
        self.slots.find(v, toks, &self.names, &mut slots);
        cands.extend(
            slots
                .into_iter()
                .map(|(s, e)| Cand::new(PiiKind::Name, s, e).from("slot")),
        );
        let mut kana = Vec::new();
        self.kana.find(v, toks, an, &mut kana);
        self.kana
            .surname_then_given(v, toks, &self.names, an, &mut kana);
        // A name the dictionary read whole is where it ends: a cue rule's longer guess
        // around it (友達の|たかはし たけしから連絡あ, ねえ|いしかわ さとみ) gives way.
        cands.retain(|c| {
            c.kind != PiiKind::Name
                || !kana
                    .iter()
                    .any(|&(s, e)| c.s <= s && c.e >= e && (c.s, c.e) != (s, e))
        });
        cands.extend(
            kana.into_iter()
                .map(|(s, e)| Cand::new(PiiKind::Name, s, e).from("kana")),
        );
    }

    /// What each marker (an honorific, a self-introduction, 名前は, a signature …) says
    /// stands beside it: names as candidates named by the marker's rule and cue word, and
    /// existing tokens (`[氏名]`) as spans masking leaves alone.
    fn markers(
        &self,
        v: &view::View,
        hits: &scan::Hits,
        cands: &mut Vec<Cand>,
        tokens: &mut Vec<(usize, usize)>,
    ) {
        for m in hits.of(self.markers) {
            let n = cands.len();
            let (p, q) = (v.char_at(m.start), v.char_at(m.end));
            let name = |r: Option<(usize, usize)>| r.map(|(s, e)| Cand::new(PiiKind::Name, s, e));
            let (cue_text, marker) = MARKERS[m.pattern];
            // 鮫島いおり（刑部）です / 「イッシキ」って名字: a reading in brackets or quotes
            // between a name and its cue is a name too, and the name stands before it.
            let p = match marker {
                Marker::Honorific | Marker::StrongIntro | Marker::WeakIntro => {
                    match names_cue::bracketed_before(v, p) {
                        Some((open, inner)) => {
                            cands.extend(name(Some(inner)));
                            open
                        }
                        None => p,
                    }
                }
                _ => p,
            };
            let found = match marker {
                Marker::Honorific => {
                    let glued_kanji = v.at(q).is_some_and(crate::text::chars::is_kanji);
                    let word = matches!(v.slice(p, q), "様" | "君" | "氏" | "殿") && glued_kanji;
                    let cue = || (!word).then(|| names_cue::before_strong(v, p)).flatten();
                    let found = match self.names.honorific(v, p, q) {
                        // 鮫島くん: the list knows 島, the kanji run before it is longer.
                        Some((s, e))
                            if s > 0 && v.at(s - 1).is_some_and(crate::text::chars::is_kanji) =>
                        {
                            cue().filter(|&(cs, _)| cs < s).or(Some((s, e)))
                        }
                        Some(found) => Some(found),
                        None => cue(),
                    };
                    name(found.filter(|&(s, e)| {
                        let listed = self.names.contains(v.slice(s, e).trim());
                        !names_cue::honorific_word(v, s, e, cue_text, listed)
                    }))
                }
                // 祈って名前を: one unlisted kanji before って is a verb's stem, not a name.
                Marker::StrongIntro => {
                    let strong = || {
                        names_cue::before_strong(v, p).filter(|&(s, e)| {
                            !(cue_text.starts_with("って")
                                && e - s == 1
                                && v.at(s).is_some_and(crate::text::chars::is_kanji))
                        })
                    };
                    name(match self.names.introduced(v, p) {
                        // 鴫原ゆうりと申します: the list knows 原, the kanji run is longer.
                        Some((s, e))
                            if s > 0 && v.at(s - 1).is_some_and(crate::text::chars::is_kanji) =>
                        {
                            strong().filter(|&(cs, _)| cs < s).or(Some((s, e)))
                        }
                        Some(found) => Some(found),
                        None => strong(),
                    })
                }
                Marker::WeakIntro => name(
                    self.names
                        .self_intro(v, p)
                        .or_else(|| names_cue::before_desu(v, p, q))
                        .or_else(|| self.one_kanji_intro(v, p, q)),
                ),
                Marker::NameIs => name(
                    self.names
                        .after_name_is(v, q)
                        .or_else(|| names_cue::after_name_is(v, q)),
                ),
                Marker::FirstPerson => name(names_cue::after_first_person(v, q)),
                Marker::English => name(names_cue::after_english(v, q)),
                Marker::Relation => name(names_cue::after_relation(v, q)),
                Marker::KnowQuestion => name(
                    names_cue::before_strong(v, p)
                        .filter(|&(s, e)| v.slice(s, e).trim().contains([' ', '・'])),
                ),
                Marker::Signature => name(names_context::signature(v, p, q)),
                Marker::Pair => {
                    cands.extend(
                        names_context::pair(v, p)
                            .into_iter()
                            .map(|(s, e)| Cand::new(PiiKind::Name, s, e)),
                    );
                    None
                }
                Marker::Token => {
                    tokens.push((p, q));
                    None
                }
            };
            cands.extend(found);
            for c in cands.iter_mut().skip(n) {
                (c.src, c.cue) = (marker.name(), cue_text);
            }
        }
    }

    /// 東です、よろしく: a one-kanji listed surname that opens the message, then です and a
    /// pause (、。！) — a self-introduction; 森です alone or mid-sentence may be a word.
    fn one_kanji_intro(&self, v: &view::View, p: usize, q: usize) -> Option<(usize, usize)> {
        let pause = v
            .at(q)
            .is_some_and(|c| matches!(c, '、' | '。' | '！' | '!' | ','));
        (p == 1 && pause && self.names.contains(v.slice(0, 1))).then_some((0, 1))
    }
}

/// kakeai's own characters (seed 000) in every script: やな and あゆ are not people.
const CHARACTERS: [&str; 6] = ["やな", "あゆ", "ヤナ", "アユ", "yana", "ayu"];

/// Whether a name span is one of kakeai's own characters (whatever rule or guess found it).
fn is_character(span: &str) -> bool {
    CHARACTERS.contains(&span.trim().to_lowercase().as_str())
}

/// Honorifics after a word that make it a person whatever the dictionary reads it as.
const HONORIFICS: [&str; 8] = ["さん", "様", "さま", "くん", "君", "ちゃん", "先生", "氏"];

/// A learned name that the dictionary reads, in context, as one place (出身は金沢です,
/// 最寄りは中野です) or as nothing but known common words (分析, 慎重, 内側), with no
/// honorific after it: a place or a word, no person.
fn not_a_person(toks: &[ProperNoun], v: &view::View, s: usize, e: usize) -> bool {
    let inside: Vec<&ProperNoun> = toks.iter().filter(|t| s <= t.start && t.end <= e).collect();
    let place = matches!(inside.as_slice(), [t] if t.kind == ProperKind::Place);
    let words = !inside.is_empty()
        && inside
            .iter()
            .all(|t| matches!(t.kind, ProperKind::Common | ProperKind::NotNoun));
    let after = v.slice(e, (e + 3).min(v.len()));
    (place || words) && !HONORIFICS.iter().any(|h| after.starts_with(h))
}

/// Shown beside output masked without a dictionary (issue 26 §1).
pub const FALLBACK_NOTE: &str = "fallback analyzer: rules only — names, companies and schools \
     outside kakeai's lists and cue forms are found less often (lower recall); run \
     `kakeai dict install` to use lindera-ipadic";

impl PiiMasker {
    /// The rules plus the lindera/IPADIC analyzer, through the one path every command opens
    /// its dictionary by ([`crate::text::analyzer::dictionary`]): the analyzer the command
    /// already opened, else the installed dictionary, else built from MeCab's IPADIC sources
    /// on first use as `check` does (progress on stderr). The rules alone when there are no
    /// sources or `KAKEAI_ANALYZER=fallback`; `KAKEAI_PII_ANALYZER=fallback` forces the rules
    /// alone for masking only.
    pub fn with_dictionary() -> PiiMasker {
        let masker = PiiMasker::new();
        if std::env::var("KAKEAI_PII_ANALYZER").as_deref() == Ok("fallback") {
            return masker;
        }
        match crate::text::analyzer::dictionary() {
            Some(an) => masker.with_analyzer(an),
            None => masker,
        }
    }
}

/// One masker for the whole process, built on first use: [`PiiMasker::with_dictionary`]
/// (unit tests pin the rules alone; tests/pii_heldout.rs measures both paths).
pub fn shared() -> &'static PiiMasker {
    static MASKER: OnceLock<PiiMasker> = OnceLock::new();
    MASKER.get_or_init(|| {
        if cfg!(test) {
            PiiMasker::new()
        } else {
            PiiMasker::with_dictionary()
        }
    })
}

/// An identifier as stored or shown (a user id, a conversation id): unchanged, unless it looks
/// like personal data (an e-mail address, a phone number, a name), in which case its keyed
/// pseudonym (`id-` + 16 hex digits) stands in. A pseudonym is returned as it is.
pub fn pseudonym(id: &str) -> Result<String, KeyError> {
    if digest::is_pseudonym(id) || !shared().mask(id).pii_detected {
        return Ok(id.to_string());
    }
    Ok(installation_key()?.pseudonym(id))
}
