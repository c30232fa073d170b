//! Company and school forms as data (assets/safety/org_forms.toml, issue 26 §1): legal forms
//! on either side of a name (株式会社, (株), ㈱), forms after a name (ＫＫ, 出版社, 商事),
//! English forms after a latin name (Inc., Co., Ltd.), industry words that name a company only
//! in a business context (◯◯運輸で働いています), and school suffixes (大学, 学園, 幼稚園).

use serde::Deserialize;

use crate::text::analyzer::{Analyzer, ProperKind, ProperNoun};

use super::scan::{Builder, Hits, ListId, Pick};
use super::view::View;
use super::{Cand, PiiKind, orgs};

const FORMS_TOML: &str = include_str!("../../../../assets/safety/org_forms.toml");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum OrgKind {
    Company,
    School,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Side {
    Before,
    After,
    Either,
}

#[derive(Debug, Clone, Deserialize)]
pub(super) struct Form {
    pub kind: OrgKind,
    pub text: String,
    pub side: Side,
    #[serde(default)]
    pub latin: bool,
    #[serde(default)]
    pub cue: bool,
    /// Words ending in this form that are no company's name (会社, 神社 for 社).
    #[serde(default)]
    pub not: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Cues {
    after: Vec<String>,
    before: Vec<String>,
    #[serde(default)]
    named_before: Vec<String>,
    #[serde(default)]
    named_after: Vec<String>,
    #[serde(default)]
    bare_after: Vec<String>,
    /// After a school's short form (朝凪小の運動会): a school only before one of these.
    #[serde(default)]
    school_after: Vec<String>,
    /// Heads that say what kind of company, not which one (冷凍|食品, 中央|銀行): never a
    /// name before an industry word, whatever the context.
    #[serde(default)]
    generic_heads: Vec<String>,
    /// Words that make a whole message talk about work (上司, 面接, 取引): the context
    /// `named_head` needs, anywhere in the message.
    #[serde(default)]
    business_words: Vec<String>,
    /// Honorifics after a company (◯◯食品さん): a business cue in a message about work.
    #[serde(default)]
    addressed: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct File {
    cues: Cues,
    form: Vec<Form>,
}

/// The forms, their word lists in the masker's scan (longest match first) and the business
/// cues.
pub(super) struct Forms {
    pub forms: Vec<Form>,
    automaton: ListId,
    cues: Cues,
    /// `named_before` then `named_after`, one list.
    naming: ListId,
    bare: ListId,
}

impl Forms {
    /// The bundled forms, their lists added to `lists`. The file is part of the binary and
    /// covered by tests: a parse failure is a programming error.
    pub fn builtin(lists: &mut Builder) -> Forms {
        Forms::parse(FORMS_TOML, lists).expect("assets/safety/org_forms.toml parses")
    }

    pub fn parse(text: &str, lists: &mut Builder) -> Result<Forms, String> {
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        let automaton = lists.list(
            file.form.iter().map(|f| f.text.as_str()),
            Pick::LeftmostLongest,
        );
        let naming = lists.list(
            file.cues.named_before.iter().chain(&file.cues.named_after),
            Pick::LeftmostLongest,
        );
        let bare = lists.list(&file.cues.bare_after, Pick::Standard);
        Ok(Forms {
            forms: file.form,
            automaton,
            cues: file.cues,
            naming,
            bare,
        })
    }

    /// Every name beside a form. `toks` are the analyzer's tokens (empty without one): an
    /// industry word after a name the dictionary reads as a person, a place or an unknown word
    /// (蛭間工業, 粟飯原不動産), or knows as one (白樺|運輸), is a company with no business
    /// context.
    pub fn find(
        &self,
        v: &View,
        hits: &Hits,
        toks: &[ProperNoun],
        an: Option<&dyn Analyzer>,
        out: &mut Vec<Cand>,
    ) {
        for m in hits.of(self.automaton) {
            let (p, q) = (v.char_at(m.start), v.char_at(m.end));
            let f = &self.forms[m.pattern];
            match (f.kind, f.side) {
                (OrgKind::School, _) if f.cue => {
                    let mut found = Vec::new();
                    orgs::school(v, p, q, &mut found);
                    out.extend(found.into_iter().filter(|c| {
                        let word = v.slice(c.s, c.e);
                        let after = v.slice(c.e, (c.e + 8).min(v.len()));
                        c.e - c.s > f.text.chars().count() + 1
                            && self
                                .cues
                                .school_after
                                .iter()
                                .any(|w| after.starts_with(w.as_str()))
                            && !f.not.iter().any(|n| word.ends_with(n.as_str()))
                    }));
                }
                (OrgKind::School, _) => orgs::school(v, p, q, out),
                (OrgKind::Company, Side::Either) => orgs::company(v, p, q, out),
                (OrgKind::Company, Side::After) => orgs::company_after(v, p, q, out),
                (OrgKind::Company, Side::Before) if f.latin => latin_before(v, p, q, out),
                (OrgKind::Company, Side::Before) => {
                    // A katakana form inside a longer katakana word (ロジ|テック, エンジ|ニア).
                    let inside_word = f.text.ends_with(crate::text::chars::is_katakana)
                        && v.at(q).is_some_and(crate::text::chars::is_katakana);
                    if !ascii_edges_ok(v, f, p, q) || inside_word {
                        continue;
                    }
                    let mut found = Vec::new();
                    orgs::named_before_word(v, p, q, PiiKind::Company, f.cue, &mut found);
                    out.extend(found.into_iter().filter(|c| {
                        let word = v.slice(c.s, c.e);
                        (!f.cue || self.industry_name(v, toks, an, c.s, p, q))
                            && !f.not.iter().any(|n| word.ends_with(n.as_str()))
                    }));
                }
            }
        }
    }

    /// A company named by a phrase alone (シオサイって会社, 勤務先：ミナトテック).
    pub fn find_named(&self, v: &View, hits: &Hits, out: &mut Vec<Cand>) {
        for m in hits.of(self.naming) {
            let (p, q) = (v.char_at(m.start), v.char_at(m.end));
            if m.pattern < self.cues.named_before.len() {
                orgs::named_before(v, p, p, PiiKind::Company, out);
            } else {
                orgs::named_after(v, q, out);
            }
        }
        for m in hits.of(self.bare) {
            orgs::bare_before(v, v.char_at(m.start), out);
        }
    }

    /// `[s, p)` names a company before the industry word `[p, q)` (◯◯運輸): in a business
    /// context — a cue beside it, or a message about work for a head that looks like a name —
    /// unless the head is generic; or, whatever the context, when the analyzer reads the head
    /// as a name, or the whole `[s, q)` as one organisation.
    fn industry_name(
        &self,
        v: &View,
        toks: &[ProperNoun],
        an: Option<&dyn Analyzer>,
        s: usize,
        p: usize,
        q: usize,
    ) -> bool {
        let context = (self.in_business_context(v, s, q)
            || (named_like(v, toks, s, p) && self.about_work(v)))
            && !self.generic_head(v.slice(s, p));
        context
            || proper_head(v, toks, s, p)
            || kana_head(v, toks, s, p)
            || self.named_head(v, toks, an, s, p)
            || one_organisation(toks, s, q)
    }

    /// `[s, p)` is made of words the dictionary also files as a name — a place's, a person's,
    /// an organisation's — though it read them as common words here (白樺|運輸: 白樺 is
    /// 名詞,一般 and 固有名詞,地域; 丸|星|商事), or as proper or unknown words as
    /// `proper_head` takes them. Heads made only of common words so known need a message
    /// about work (a `business_words` word anywhere: 木造|建築 in a temple's description
    /// stays). A generic head has no such entry (冷凍|食品, 精密|機械, ペット|保険); listed
    /// generic heads (中央|銀行) and places (大阪|建設) stay.
    fn named_head(
        &self,
        v: &View,
        toks: &[ProperNoun],
        an: Option<&dyn Analyzer>,
        s: usize,
        p: usize,
    ) -> bool {
        let Some(an) = an else {
            return false;
        };
        let head = v.slice(s, p);
        if p - s < 2
            || head.chars().any(crate::text::chars::is_hiragana)
            || place_head(head)
            || self.generic_head(head)
            || orgs::specific_start(v, s, p) != Some(s)
        {
            return false;
        }
        let Some(inside) = covering(toks, s, p) else {
            return false;
        };
        let named = inside.iter().all(|t| match t.kind {
            ProperKind::Common => an.has_proper_entry(v.slice(t.start, t.end)),
            ProperKind::NotNoun => false,
            _ => proper_token(v, t),
        });
        // Read as a name in this very message (粟|飯原 不動産), or only known as one
        // elsewhere (白樺, 木造): then the message must be about work.
        let read_as_name = inside.iter().any(|t| t.kind != ProperKind::Common);
        named && (read_as_name || self.about_work(v))
    }

    /// A head that says what kind of company, not which (冷凍|食品, 国際|物流, 中央|銀行), or
    /// a pronoun or kana word that is no name (それ|食品).
    fn generic_head(&self, head: &str) -> bool {
        self.cues.generic_heads.iter().any(|g| g == head) || kana_word(head)
    }

    /// A message about work (a `business_words` word anywhere in it).
    fn about_work(&self, v: &View) -> bool {
        let text = v.slice(0, v.len());
        self.cues
            .business_words
            .iter()
            .any(|w| text.contains(w.as_str()))
    }

    fn in_business_context(&self, v: &View, s: usize, e: usize) -> bool {
        let after = v.slice(e, (e + 8).min(v.len()));
        if self
            .cues
            .addressed
            .iter()
            .any(|h| after.starts_with(h.as_str()))
            && self.about_work(v)
        {
            return true;
        }
        let before = v.slice(s.saturating_sub(8), s);
        self.cues
            .after
            .iter()
            .any(|c| after.starts_with(c.as_str()))
            || self
                .cues
                .before
                .iter()
                .any(|c| before.ends_with(c.as_str()))
    }
}

/// `[s, p)` is made of tokens the dictionary reads as a proper noun or an unknown word,
/// at least one of them two chars long, no prefecture or country (蛭間|工業; 日本|食品, 大阪|建設
/// and 冷凍|食品 stay).
fn proper_head(v: &View, toks: &[ProperNoun], s: usize, p: usize) -> bool {
    if place_head(v.slice(s, p)) {
        return false;
    }
    covering(toks, s, p).is_some_and(|inside| {
        inside.iter().any(|t| t.end - t.start >= 2) && inside.iter().all(|t| proper_token(v, t))
    })
}

/// A head that may be a name, for a message about work whose cue is not beside it (うちの
/// 会社、桐生|精機と合併, 兄は|つばめ|急便で): with the analyzer only, tokens that tile it with
/// no verb, adverb or particle among them, and either a hiragana word (no pronoun: それ|食品
/// stays) or at least one token read as a proper or unknown word — kanji or katakana common
/// words alone say what kind (待機|電力, ビジネス|ホテル, ウェブ|デザイン).
fn named_like(v: &View, toks: &[ProperNoun], s: usize, p: usize) -> bool {
    let Some(inside) = covering(toks, s, p) else {
        return false;
    };
    if inside.iter().any(|t| t.kind == ProperKind::NotNoun) {
        return false;
    }
    let head = v.slice(s, p);
    if head.chars().all(crate::text::chars::is_hiragana) {
        return p - s >= 2 && !kana_word(head);
    }
    inside.iter().any(|t| t.kind != ProperKind::Common)
}

/// A pronoun, adverb or other listed kana word that is never a name (それ, もう, この).
fn kana_word(head: &str) -> bool {
    super::names_subject::NOT_NAMES_HIRA.contains(&head)
        || super::names_cue::NOT_KANA_NAMES.contains(&head)
}

/// A country or a prefecture says where, not which company (日本|食品, 大阪|建設).
fn place_head(head: &str) -> bool {
    head == "日本" || super::address::place_like(head)
}

/// The tokens that tile `[s, p)` exactly, or `None`.
fn covering(toks: &[ProperNoun], s: usize, p: usize) -> Option<Vec<&ProperNoun>> {
    let inside: Vec<&ProperNoun> = toks.iter().filter(|t| t.start >= s && t.end <= p).collect();
    let covered = inside.first().is_some_and(|t| t.start == s)
        && inside.last().is_some_and(|t| t.end == p)
        && inside.windows(2).all(|w| w[0].end == w[1].start);
    covered.then_some(inside)
}

/// A token a company's name may be made of: a proper noun of any kind, an organisation's too
/// (オリオン|薬品, ミドリ|技研), or an unknown word that is no acronym (LINE|グループ stays).
fn proper_token(v: &View, t: &ProperNoun) -> bool {
    match t.kind {
        ProperKind::Surname
        | ProperKind::GivenName
        | ProperKind::Person
        | ProperKind::Place
        | ProperKind::Organization
        | ProperKind::Other => true,
        ProperKind::Unknown => !v
            .slice(t.start, t.end)
            .chars()
            .skip(1)
            .any(|c| c.is_ascii_uppercase()),
        _ => false,
    }
}

/// The dictionary reads the name and its industry word `[s, q)` as one organisation
/// (サンライズ工業 is one 名詞,固有名詞,組織 entry).
fn one_organisation(toks: &[ProperNoun], s: usize, q: usize) -> bool {
    toks.iter()
        .any(|t| t.start == s && t.end == q && t.kind == ProperKind::Organization)
}

/// `[s, p)` is a whole hiragana word of two kana or more, with no particle, adverb or
/// demonstrative among its tokens and no listed kana word (ひまわり|電機, さくら|建設): a
/// generic compound is written in kanji or katakana (冷凍食品, ペット保険), never with a
/// hiragana head, and この建設, もう印刷, それ食品 stay.
fn kana_head(v: &View, toks: &[ProperNoun], s: usize, p: usize) -> bool {
    // Without the analyzer there is no telling もう|印刷 from ひまわり|電機.
    if toks.is_empty() {
        return false;
    }
    let head = v.slice(s, p);
    let whole = s == 0 || !v.at(s - 1).is_some_and(crate::text::chars::is_hiragana);
    whole
        && !kana_word(head)
        && p - s >= 2
        && head.chars().all(crate::text::chars::is_hiragana)
        && !head.ends_with(['の', 'が', 'は', 'を', 'に', 'で', 'と', 'も', 'や', 'へ'])
        && !toks
            .iter()
            .any(|t| t.start < p && t.end > s && t.kind == ProperKind::NotNoun)
}

/// A form written in ASCII letters (KK) must not be the tail of a latin word (OKK, KKK).
fn ascii_edges_ok(v: &View, f: &Form, p: usize, q: usize) -> bool {
    if !f.text.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return true;
    }
    let before = v.at(p.wrapping_sub(1)).is_some_and(|c| !c.is_ascii());
    let after = v.at(q).is_none_or(|c| !c.is_ascii_alphanumeric());
    before && after
}

/// Latin words before an English legal form (Sakura Tech Inc.): up to four words, each
/// starting with a letter or digit, joined by single spaces.
fn latin_before(v: &View, p: usize, q: usize, out: &mut Vec<Cand>) {
    let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '&' | '\'' | '-' | '.');
    let mut s = p;
    for _ in 0..4 {
        let ws = v.run_before(s, 24, word);
        if ws == s {
            break;
        }
        s = ws;
        if !(s >= 2 && v.at(s - 1) == Some(' ') && v.at(s - 2).is_some_and(word)) {
            break;
        }
        s -= 1;
    }
    if v.at(s) == Some(' ') {
        s += 1;
    }
    let first_is_upper = v
        .at(s)
        .is_some_and(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    if s < p && first_is_upper && v.at(q).is_none_or(|c| !c.is_ascii_alphanumeric()) {
        out.push(Cand::new(PiiKind::Company, s, q));
    }
}
