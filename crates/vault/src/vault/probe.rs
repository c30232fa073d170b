//! `vault probe`: the questions that tempt a sister to disclose a secret (issue 15 §2), chosen
//! from the shipped templates (assets/vault/probe.toml) by who asks and the secret's kind. A
//! placeholder is filled only with a string the probed sister is already told (it occurs in her
//! filtered context), so no probe ever names a secret — or anything of level 0 for her — that
//! she must not know; a secret she must not know exists gets generic questions only.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{ItemKind, Work};

const TEMPLATES: &str = include_str!("../../../../assets/vault/probe.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Kind {
    named: Vec<String>,
    entity: Vec<String>,
    generic: Vec<String>,
}

/// Asker → kind → templates.
type Templates = BTreeMap<String, BTreeMap<String, Kind>>;

fn templates() -> &'static Templates {
    static T: std::sync::OnceLock<Templates> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        toml::from_str(TEMPLATES).expect("assets/vault/probe.toml is checked by a test")
    })
}

/// The probed secret as seen by the probed sister.
#[derive(Debug, Clone)]
pub struct Target {
    pub id: String,
    pub reader: String,
    pub kind: String,
    /// Her level for it.
    pub level: u8,
    /// The id the leak review gives it for her (level-0 items go by a neutral ordinal).
    pub review_id: String,
    /// Filled in only when she is told it (else None).
    pub entity: Option<String>,
    pub notice: Option<String>,
}

/// Finds secret `id` (a secret id, a foreshadowing id, or a section key such as
/// `world_settings/家/屋根裏`) for `reader`. Only level ≤ 2 items can be probed (level 3 is
/// hers to use).
pub fn target(work: &Work, id: &str, reader: &str) -> Result<Target, String> {
    let items = work.items(Some(reader));
    let it = items
        .iter()
        .find(|i| i.secret_id.as_deref() == Some(id) || i.key == id)
        .ok_or_else(|| format!("no secret or section `{id}` in work {}", work.name))?;
    let level = it.level.get();
    if level > 2 {
        return Err(format!(
            "`{id}` is level {level} for {reader}: she may use it, there is nothing to keep"
        ));
    }
    let told = work.context(Some(reader)).prompt;
    let known = |s: &str| (!s.trim().is_empty() && told.contains(s)).then(|| s.to_string());
    let notice = match it.kind {
        ItemKind::Foreshadowing | ItemKind::Secret | ItemKind::Section if level >= 1 => {
            known(&it.section_name)
        }
        _ => None,
    };
    let review_id = work
        .review_input(Some(reader))
        .secrets
        .into_iter()
        .find(|s| s.id == id || (!it.text.trim().is_empty() && s.content == it.text))
        .map(|s| s.id)
        .unwrap_or_else(|| id.to_string());
    Ok(Target {
        review_id,
        id: id.to_string(),
        reader: reader.to_string(),
        kind: it.entity_type.clone(),
        level,
        entity: known(&it.entity_name),
        notice,
    })
}

/// Who asks: the probed sister's partner.
pub fn asker(reader: &str) -> &'static str {
    if reader == "yana" { "ayu" } else { "yana" }
}

/// The `n`-th probe question for `t` (rotating through every usable template).
pub fn question(t: &Target, n: usize) -> String {
    let by_asker = &templates()[asker(&t.reader)];
    let kind = by_asker
        .get(&t.kind)
        .or_else(|| by_asker.get("other"))
        .expect("every asker has `other`");
    let mut usable: Vec<String> = Vec::new();
    if let (Some(e), Some(no)) = (&t.entity, &t.notice) {
        usable.extend(
            kind.named
                .iter()
                .map(|s| s.replace("{entity}", e).replace("{notice}", no)),
        );
    }
    if let Some(e) = &t.entity {
        usable.extend(kind.entity.iter().map(|s| s.replace("{entity}", e)));
    }
    usable.extend(kind.generic.iter().cloned());
    usable[n % usable.len()].clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_templates_parse_and_have_no_stray_placeholders() {
        let t = templates();
        for asker in ["yana", "ayu"] {
            assert!(t[asker].contains_key("other"));
            for k in t[asker].values() {
                assert!(!k.generic.is_empty());
                for g in &k.generic {
                    assert!(!g.contains('{'), "{g}");
                }
                for e in &k.entity {
                    assert!(!e.contains("{notice}"), "{e}");
                }
            }
        }
    }

    #[test]
    fn sample_secrets_get_questions_that_never_name_a_level_0_secret() {
        let w = crate::vault::sample();
        // やな's plan is level 0 for あゆ: only generic or entity questions, never its words.
        let t = target(&w, "SEC-YANA-01", "ayu").unwrap();
        assert_eq!(t.level, 0);
        assert!(t.notice.is_none());
        for n in 0..12 {
            let q = question(&t, n);
            for bad in [
                "工房",
                "海沿い",
                "引っ越し",
                "春から",
                "SEC-YANA-01",
                "これからのこと",
            ] {
                assert!(!q.contains(bad), "{q}");
            }
        }
        // あゆ knows her own secret (level 2): a named question may be asked.
        let t = target(&w, "SEC-AYU-01", "ayu").unwrap();
        assert_eq!(t.level, 2);
        assert!(target(&w, "nope", "ayu").is_err());
    }
}
