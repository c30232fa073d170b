//! A sister's persona as the model sees it: built from the character data the Director also
//! uses (assets/characters/*.toml), so the prompt and the rules never disagree.

use sha2::{Digest, Sha256};

use crate::director::Character;

/// The 【キャラクター設定】 section for `c`, speaking to `partner`.
pub fn section(c: &Character, partner: &Character) -> String {
    let mut s = format!(
        "【キャラクター設定】\nあなたは「{}」です。{}\n",
        c.display_name, c.role
    );
    if !c.speech_style.is_empty() {
        s.push_str(&format!("話し方: {}\n", c.speech_style));
    }
    if !c.relationship.is_empty() {
        s.push_str(&format!("関係: {}\n", c.relationship));
    }
    if let Some(first) = c.address_partner.first() {
        s.push_str(&format!(
            "{}のことは「{}」と呼びます。\n",
            partner.display_name, first
        ));
    }
    let nots = prohibitions(c);
    if !nots.is_empty() {
        s.push_str("してはいけないこと:\n");
        for n in nots {
            s.push_str(&format!("- {n}\n"));
        }
    }
    if !c.examples.is_empty() {
        s.push_str("発言の例:\n");
        for e in &c.examples {
            s.push_str(&format!("- {e}\n"));
        }
    }
    s
}

/// The lines under してはいけないこと: `must_not` as written, then one line per distinct reason
/// naming every forbidden word that shares it — 「姉上」「お姉ちゃん」「やなちゃん」と言わない
/// （あゆはやなを「姉様」と呼びます） — so a reason, a positive statement, is never listed as a
/// prohibition of its own, and no line appears twice.
pub fn prohibitions(c: &Character) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |line: String| {
        if !line.trim().is_empty() && !out.contains(&line) {
            out.push(line);
        }
    };
    for n in &c.must_not {
        push(n.trim().to_string());
    }
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    for w in c
        .forbidden_words
        .iter()
        .filter(|w| !w.word.trim().is_empty())
    {
        let reason = w.reason.trim().trim_end_matches('。');
        match reasons.iter_mut().find(|(r, _)| *r == reason) {
            Some((_, words)) if !words.contains(&w.word.as_str()) => words.push(&w.word),
            Some(_) => {}
            None => reasons.push((reason, vec![&w.word])),
        }
    }
    for (reason, words) in reasons {
        let named: String = words.iter().map(|w| format!("「{w}」")).collect();
        push(if reason.is_empty() {
            format!("{named}と言わない。")
        } else {
            format!("{named}と言わない（{reason}）。")
        });
    }
    out
}

/// A short hash of everything persona-related the prompts use, stored with every run.
pub fn version(chars: &[&Character], world: &str) -> String {
    let mut h = Sha256::new();
    for c in chars {
        for part in [
            c.id.as_str(),
            &c.display_name,
            &c.role,
            &c.speech_style,
            &c.relationship,
        ] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        for list in [&c.address_partner, &c.examples, &c.must_not] {
            for item in list {
                h.update(item.as_bytes());
                h.update([1]);
            }
        }
    }
    h.update(world.as_bytes());
    h.finalize()
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}
