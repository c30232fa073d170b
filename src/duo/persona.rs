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
    let mut nots: Vec<&str> = c.must_not.iter().map(String::as_str).collect();
    nots.extend(c.forbidden_words.iter().map(|w| w.reason.as_str()));
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
