//! PII masking of user messages (issue 6 §3, seed 003 §6): 氏名, 電話番号, メールアドレス, 住所,
//! 会社名 and 学校名 are found by rules (no model download) and replaced by `[氏名]`-style
//! tokens; only the SHA-256 of the original text is meant to be kept.
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
//! - 氏名: a surname from the list, optionally with a given name of up to three kanji, next to
//!   a cue: an honorific after it, 〜と申します / 〜といいます, 名前は〜, or 〜です at a sentence
//!   start or after は/の. Names keep their honorific: 田中さん → `[氏名]さん`. Names written
//!   in kana are not found by rules (that is what the optional LLM pass is for).
//! - Overlaps: the longer span wins (a company or school written inside an address is one
//!   `[住所]`); on equal length, メール > 電話 > 住所 > 会社 > 学校 > 氏名.
//! - Text already holding a token (`[氏名]`) is never re-masked there, so masking is idempotent.
//! - The skip message `[スキップ]` is not scanned.

mod address;
mod contact;
pub mod llm;
mod names;
mod orgs;
mod view;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_kinds;
#[cfg(test)]
mod tests_llm;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, MatchKind};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use llm::{LLM_SYSTEM_PROMPT, PiiLlmMode, llm_user_prompt, merge_llm};

/// The message a user sends to skip a question (seed 003 §6); never scanned.
pub const SKIP_MESSAGE: &str = "[スキップ]";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PiiKind {
    #[serde(rename = "氏名")]
    Name,
    #[serde(rename = "電話番号")]
    Phone,
    #[serde(rename = "メールアドレス")]
    Email,
    #[serde(rename = "住所")]
    Address,
    #[serde(rename = "会社名")]
    Company,
    #[serde(rename = "学校名")]
    School,
}

impl PiiKind {
    pub const ALL: [PiiKind; 6] = [
        PiiKind::Name,
        PiiKind::Phone,
        PiiKind::Email,
        PiiKind::Address,
        PiiKind::Company,
        PiiKind::School,
    ];

    pub fn label(&self) -> &'static str {
        match self {
            PiiKind::Name => "氏名",
            PiiKind::Phone => "電話番号",
            PiiKind::Email => "メールアドレス",
            PiiKind::Address => "住所",
            PiiKind::Company => "会社名",
            PiiKind::School => "学校名",
        }
    }

    /// The replacement written into the masked text.
    pub fn token(&self) -> &'static str {
        match self {
            PiiKind::Name => "[氏名]",
            PiiKind::Phone => "[電話番号]",
            PiiKind::Email => "[メールアドレス]",
            PiiKind::Address => "[住所]",
            PiiKind::Company => "[会社名]",
            PiiKind::School => "[学校名]",
        }
    }

    /// The kind whose token is `token` (`"[住所]"` → Address).
    pub fn from_token(token: &str) -> Option<PiiKind> {
        PiiKind::ALL.into_iter().find(|k| k.token() == token)
    }

    /// The kind whose label is `label` (`"住所"` → Address).
    pub fn from_label(label: &str) -> Option<PiiKind> {
        PiiKind::ALL.into_iter().find(|k| k.label() == label)
    }

    /// Tie-break for equal-length overlaps: lower wins.
    fn rank(self) -> u8 {
        match self {
            PiiKind::Email => 0,
            PiiKind::Phone => 1,
            PiiKind::Address => 2,
            PiiKind::Company => 3,
            PiiKind::School => 4,
            PiiKind::Name => 5,
        }
    }
}

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
    /// Lowercase hex SHA-256 of the original text (seed 003: `original_content_hash`).
    pub original_sha256: String,
}

/// A detection before overlaps are resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cand {
    kind: PiiKind,
    s: usize,
    e: usize,
}

impl Cand {
    fn new(kind: PiiKind, s: usize, e: usize) -> Cand {
        Cand { kind, s, e }
    }
}

#[derive(Debug, Clone, Copy)]
enum Marker {
    Company,
    School,
    Honorific,
    StrongIntro,
    WeakIntro,
    NameIs,
    Token,
}

const MARKERS: &[(&str, Marker)] = &[
    ("株式会社", Marker::Company),
    ("有限会社", Marker::Company),
    ("合同会社", Marker::Company),
    ("合資会社", Marker::Company),
    ("合名会社", Marker::Company),
    ("(株)", Marker::Company),
    ("㈱", Marker::Company),
    ("(有)", Marker::Company),
    ("㈲", Marker::Company),
    ("大学院", Marker::School),
    ("大学", Marker::School),
    ("短期大学", Marker::School),
    ("短大", Marker::School),
    ("高等学校", Marker::School),
    ("高等専門学校", Marker::School),
    ("高専", Marker::School),
    ("高校", Marker::School),
    ("中等教育学校", Marker::School),
    ("中学校", Marker::School),
    ("中学", Marker::School),
    ("小学校", Marker::School),
    ("専門学校", Marker::School),
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
    ("って呼んで", Marker::StrongIntro),
    ("です", Marker::WeakIntro),
    ("名前は", Marker::NameIs),
    ("[氏名]", Marker::Token),
    ("[電話番号]", Marker::Token),
    ("[メールアドレス]", Marker::Token),
    ("[住所]", Marker::Token),
    ("[会社名]", Marker::Token),
    ("[学校名]", Marker::Token),
];

/// The rule-based masker: build once (regexes, the marker automaton, the surname set), share
/// freely (`Send + Sync`).
pub struct PiiMasker {
    contact: contact::Contact,
    address: address::Address,
    markers: AhoCorasick,
    names: names::Names,
}

impl Default for PiiMasker {
    fn default() -> Self {
        PiiMasker::new()
    }
}

impl PiiMasker {
    pub fn new() -> PiiMasker {
        let markers = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(MARKERS.iter().map(|(p, _)| p))
            // Constant patterns: a failure here is a programming error.
            .expect("marker automaton builds");
        PiiMasker {
            contact: contact::Contact::new(),
            address: address::Address::new(),
            markers,
            names: names::Names::builtin(),
        }
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
        let items = self.detect(text);
        Masked {
            pii_detected: !items.is_empty(),
            masked_text: apply(text, &items),
            items,
            original_sha256,
        }
    }

    /// The items `mask` would replace, sorted and non-overlapping.
    pub fn detect(&self, text: &str) -> Vec<PiiItem> {
        let v = view::View::new(text);
        let mut cands = Vec::new();
        let mut tokens: Vec<(usize, usize)> = Vec::new();
        self.contact.find(&v, &mut cands);
        self.address.find(&v, &mut cands);
        for m in self.markers.find_iter(&v.norm) {
            let (p, q) = (v.char_at(m.start()), v.char_at(m.end()));
            let name = |r: Option<(usize, usize)>| r.map(|(s, e)| Cand::new(PiiKind::Name, s, e));
            let found = match MARKERS[m.pattern().as_usize()].1 {
                Marker::Company => {
                    orgs::company(&v, p, q, &mut cands);
                    None
                }
                Marker::School => {
                    orgs::school(&v, p, q, &mut cands);
                    None
                }
                Marker::Honorific => name(self.names.honorific(&v, p, q)),
                Marker::StrongIntro => name(self.names.introduced(&v, p)),
                Marker::WeakIntro => name(self.names.self_intro(&v, p)),
                Marker::NameIs => name(self.names.after_name_is(&v, q)),
                Marker::Token => {
                    tokens.push((p, q));
                    None
                }
            };
            cands.extend(found);
        }
        debug_assert!(cands.iter().all(|c| c.s < c.e && c.e <= v.len()));
        resolve(cands, &tokens)
    }
}

/// One masker for the whole process, built on first use.
pub fn shared() -> &'static PiiMasker {
    static MASKER: OnceLock<PiiMasker> = OnceLock::new();
    MASKER.get_or_init(PiiMasker::new)
}

/// Keeps the longest of overlapping candidates (ties by kind rank), drops anything touching an
/// existing token, and sorts by start. O(n log n): a long pasted text may hold many candidates.
fn resolve(mut cands: Vec<Cand>, tokens: &[(usize, usize)]) -> Vec<PiiItem> {
    // Intervals keyed by start, disjoint: only the last one starting before `e` can overlap.
    fn overlaps<V>(sorted: &BTreeMap<usize, (usize, V)>, s: usize, e: usize) -> bool {
        sorted
            .range(..e)
            .next_back()
            .is_some_and(|(_, (end, _))| *end > s)
    }
    let tokens: BTreeMap<usize, (usize, ())> = tokens.iter().map(|&(s, e)| (s, (e, ()))).collect();
    cands.retain(|c| !overlaps(&tokens, c.s, c.e));
    cands.sort_by_key(|c| (std::cmp::Reverse(c.e - c.s), c.kind.rank(), c.s));
    let mut kept: BTreeMap<usize, (usize, PiiKind)> = BTreeMap::new();
    for c in cands {
        if !overlaps(&kept, c.s, c.e) {
            kept.insert(c.s, (c.e, c.kind));
        }
    }
    kept.into_iter()
        .map(|(s, (e, kind))| PiiItem { kind, span: [s, e] })
        .collect()
}

/// Replaces each item's chars of `text` by its token.
pub fn apply(text: &str, items: &[PiiItem]) -> String {
    let ranges: Vec<(usize, usize, PiiKind)> = items
        .iter()
        .map(|i| (i.span[0], i.span[1], i.kind))
        .collect();
    apply_tokens(text, &ranges)
}

/// Replaces chars `[s, e)` of `text` by `kind`'s token; ranges sorted, not overlapping.
fn apply_tokens(text: &str, ranges: &[(usize, usize, PiiKind)]) -> String {
    if ranges.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut next = ranges.iter().peekable();
    let mut skip_until = 0usize;
    for (i, c) in text.chars().enumerate() {
        if let Some(&&(s, e, kind)) = next.peek()
            && s == i
        {
            out.push_str(kind.token());
            skip_until = e;
            next.next();
        }
        if i >= skip_until {
            out.push(c);
        }
    }
    out
}

/// Lowercase hex SHA-256 of `text`'s UTF-8 bytes.
pub fn sha256_hex(text: &str) -> String {
    use std::fmt::Write;
    let digest = Sha256::digest(text.as_bytes());
    let mut hex = String::with_capacity(64);
    for b in digest {
        let _ = write!(hex, "{b:02x}");
    }
    hex
}
