//! Candidates from the analyzer's proper nouns (issue 26 §1): IPADIC tags 人名,姓 / 人名,名 /
//! 組織 / 地域, and what it knows as a person is a name when it reads as one — a surname and
//! a given name together, or a person next to a cue (an honorific, と申します, 名前は, 俺、);
//! an organisation is a company (or a school, by its suffix) in a business context. The cue
//! rules stay in charge of everything the dictionary does not know; this only adds.

use crate::text::analyzer::{ProperKind, ProperNoun};

use crate::text::chars::{is_hiragana, is_kanji, is_katakana};

use super::names::Names;
use super::view::{View, is_edge};
use super::{Cand, PiiKind};

/// What may follow a person's name for it to be one (after an optional space).
const AFTER: [&str; 24] = [
    "さん",
    "くん",
    "ちゃん",
    "様",
    "さま",
    "君",
    "先生",
    "先輩",
    "氏",
    "部長",
    "課長",
    "社長",
    "殿",
    "教授",
    "と申",
    "といい",
    "と言い",
    "って言",
    "っていい",
    "って人",
    "っていう",
    "という人",
    "って子",
    "と呼んで",
];

/// What may stand right before a person's name for it to be one (a relation word with の
/// only before a token the dictionary reads as a person: 妹の碧が, not 妹の部屋が).
const BEFORE: [&str; 26] = [
    "名前は",
    "俺、",
    "僕、",
    "私、",
    "私は",
    "僕は",
    "俺は",
    "わたし、",
    "妹の",
    "弟の",
    "姉の",
    "兄の",
    "娘の",
    "息子の",
    "友達の",
    "友人の",
    "親友の",
    "彼氏の",
    "彼女の",
    "同僚の",
    "上司の",
    "先輩の",
    "後輩の",
    "夫の",
    "妻の",
    "旦那の",
];

/// What may follow an organisation for it to be a company (◯◯で働いています).
pub(super) const BUSINESS: [&str; 13] = [
    "に派遣",
    "で働",
    "に勤",
    "で勤務",
    "に就職",
    "に入社",
    "に転職",
    "の社員",
    "の社長",
    "の面接",
    "で営業",
    "でバイト",
    "に内定",
];

const SCHOOL_ENDS: [&str; 8] = [
    "大学",
    "高校",
    "学校",
    "学園",
    "幼稚園",
    "中学",
    "短大",
    "学院",
];

fn is_person(k: ProperKind) -> bool {
    matches!(
        k,
        ProperKind::Surname | ProperKind::GivenName | ProperKind::Person
    )
}

/// Adds the names and organisations the dictionary knows.
pub(super) fn find(v: &View, nouns: &[ProperNoun], names: &Names, out: &mut Vec<Cand>) {
    let mut i = 0;
    while i < nouns.len() {
        let n = nouns[i];
        if n.kind == ProperKind::Organization {
            organisation(v, n, out);
            i += 1;
            continue;
        }
        if !is_person(n.kind) || n.end > v.len() {
            i += 1;
            continue;
        }
        // A run of person tokens, glued or one space / ・ apart (山田 太郎, ヤマダ・タロウ).
        let (s, mut e) = (n.start, n.end);
        let (mut surname, mut given) = (false, false);
        let mut parts = Vec::new();
        let mut j = i;
        while j < nouns.len() && is_person(nouns[j].kind) {
            let m = nouns[j];
            let gap_ok =
                m.start == e || (m.start == e + 1 && matches!(v.at(e), Some(' ' | '・'))) || j == i;
            if !gap_ok || m.end > v.len() {
                break;
            }
            surname |= m.kind == ProperKind::Surname;
            given |= m.kind == ProperKind::GivenName;
            parts.push(m);
            e = m.end;
            j += 1;
        }
        let pair = surname && given && full_name(v, &parts, names);
        if pair || cue_after(v, e) || cue_before(v, s) {
            out.push(Cand::new(PiiKind::Name, s, e));
            // 蓼沼と|笹目と|鳰川で: the other names of a list it stands in.
            let mut list = vec![(s, e)];
            super::names_subject::siblings(v, names, &mut list);
            out.extend(
                list.into_iter()
                    .skip(1)
                    .map(|(a, b)| Cand::new(PiiKind::Name, a, b)),
            );
        }
        i = j.max(i + 1);
    }
}

/// A surname and a given name with no cue read as a full name only in one script, three
/// chars or more, with one of them a name kakeai's lists know: IPADIC also reads 室町|時代,
/// ツイ|てる and 鏡|公 as surname and given name.
fn full_name(v: &View, parts: &[ProperNoun], names: &Names) -> bool {
    let (Some(first), Some(last)) = (parts.first(), parts.last()) else {
        return false;
    };
    let text = v.slice(first.start, last.end);
    let script = |c: char| {
        if is_kanji(c) {
            0
        } else if is_katakana(c) {
            1
        } else if is_hiragana(c) {
            2
        } else {
            3
        }
    };
    let letters: Vec<u8> = text
        .chars()
        .filter(|c| !matches!(c, ' ' | '・'))
        .map(script)
        .collect();
    let one_script = letters.windows(2).all(|w| w[0] == w[1]) && letters.first() != Some(&3);
    let known = parts.iter().any(|p| {
        let w = v.slice(p.start, p.end);
        (p.kind == ProperKind::Surname && names.contains(w))
            || (p.kind == ProperKind::GivenName && names.given_contains(w))
    });
    one_script && letters.len() >= 3 && (known || letters[0] != 0)
}

fn cue_after(v: &View, e: usize) -> bool {
    let e = if v.at(e) == Some(' ') { e + 1 } else { e };
    let rest = v.slice(e, (e + 4).min(v.len()));
    AFTER.iter().any(|w| rest.starts_with(w))
        || (rest.starts_with("です") && v.at(e + 2).is_none_or(|c| is_edge(c) || c == '。'))
}

fn cue_before(v: &View, s: usize) -> bool {
    let before = v.slice(s.saturating_sub(4), s);
    BEFORE.iter().any(|w| before.ends_with(w))
}

fn organisation(v: &View, n: ProperNoun, out: &mut Vec<Cand>) {
    if n.end > v.len() {
        return;
    }
    let name = v.slice(n.start, n.end);
    if SCHOOL_ENDS.iter().any(|w| name.ends_with(w)) {
        out.push(Cand::new(PiiKind::School, n.start, n.end));
        return;
    }
    let rest = v.slice(n.end, (n.end + 4).min(v.len()));
    if BUSINESS.iter().any(|w| rest.starts_with(w)) {
        out.push(Cand::new(PiiKind::Company, n.start, n.end));
    }
}
