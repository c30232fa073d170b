//! Checking a loaded work against its visibility.yaml, failing closed: levels 0–3, subtlety
//! 1–10, templates that exist, reader keys that are known readers, entity types that exist, and
//! names (entities, sections) that match a file and a heading after NFKC. Each error names
//! visibility.yaml:line:col and what it belongs to; the writer meant to hide something.

use std::collections::BTreeSet;

use super::load::Work;
use super::markup::norm_name;
use super::model::{ENTITY_TYPES, Level, LevelSpec};
use super::{find_entry, find_key};
use crate::config::ConfigError;
use crate::store::SPEAKERS;

/// 1-based (line, char col) of `reader` written as a key (`ayu:` or `{ayu: 2}`) at or after
/// `after_line`.
pub(crate) fn find_reader(text: &str, reader: &str, after_line: usize) -> Option<(usize, usize)> {
    text.lines()
        .enumerate()
        .skip(after_line.saturating_sub(1))
        .find_map(|(i, l)| {
            let mut from = 0;
            while let Some(j) = l[from..].find(reader).map(|j| j + from) {
                let before = l[..j].chars().last();
                let after = l[j + reader.len()..].trim_start_matches(['"', '\'', ' ']);
                let keyish = before.is_none_or(|c| matches!(c, ' ' | '{' | ',' | '"' | '\''));
                if keyish && after.starts_with(':') {
                    let col = l[..j].trim_end_matches(['"', '\'']).chars().count() + 1;
                    return Some((i + 1, col));
                }
                from = j + reader.len();
            }
            None
        })
}

impl Work {
    /// Runs every check; names that match nothing stop the load (not a warning), so a level
    /// the writer set cannot silently fall back to a higher one.
    pub fn validate(&mut self, vis_text: &str) -> Result<(), ConfigError> {
        let path = self.visibility_path();
        let bad = |at: Option<(usize, usize)>, key: String, message: String| ConfigError::Invalid {
            path: path.clone(),
            at,
            key: Some(key),
            message,
        };
        let level_msg = |what: &str, reader: Option<&str>, v: i64| match reader {
            Some(r) => format!("{what}: reader `{r}` has level {v}; a level is 0, 1, 2 or 3"),
            None => format!("{what}: level {v}; a level is 0, 1, 2 or 3"),
        };
        let readers_ok = |spec: &LevelSpec, after: usize, key: &str| {
            for r in spec.readers.keys() {
                if !SPEAKERS.contains(&r.as_str()) {
                    return Err(bad(
                        find_reader(vis_text, r, after),
                        key.to_string(),
                        format!(
                            "`{r}` is not a reader; readers are {} (the sisters' ids, not their names)",
                            SPEAKERS.join(", ")
                        ),
                    ));
                }
            }
            Ok(())
        };
        let v = &self.visibility;
        if Level::new(v.default_visibility).is_none() {
            return Err(bad(
                find_key(vis_text, "default_visibility", 1),
                "default_visibility".into(),
                level_msg("default_visibility", None, v.default_visibility),
            ));
        }
        let mut warnings = Vec::new();
        let mut ids = BTreeSet::new();
        for (ty, ents) in &v.entities {
            if super::model::folder_of(ty).is_none() {
                let known: Vec<&str> = ENTITY_TYPES.iter().map(|(t, _)| *t).collect();
                return Err(bad(
                    find_key(vis_text, ty, 1),
                    ty.clone(),
                    format!(
                        "entity type `{ty}` is not one of {}; nothing under it would apply",
                        known.join(", ")
                    ),
                ));
            }
            let mut seen = BTreeSet::new();
            for name in ents.keys() {
                if !seen.insert(norm_name(name)) {
                    return Err(bad(
                        find_key(vis_text, name, 1),
                        format!("{ty}/{name}"),
                        format!("`{name}` names the same entity as another entry (after NFKC)"),
                    ));
                }
            }
            for (name, cfg) in ents {
                let ent_line = find_key(vis_text, name, 1).map(|p| p.0).unwrap_or(1);
                let file = self.entity(ty, name);
                if let Some(t) = &cfg.template_id
                    && self.templates.by_id(t).is_none()
                {
                    let at = find_key(vis_text, "template_id", ent_line);
                    return Err(bad(
                        at,
                        format!("{ty}/{name}"),
                        format!("template_id `{t}` matches no template"),
                    ));
                }
                if let Some(spec) = &cfg.visibility {
                    for (r, val) in spec.values() {
                        if Level::new(val).is_none() {
                            let at = find_key(vis_text, "visibility", ent_line);
                            return Err(bad(
                                at,
                                format!("{ty}/{name}"),
                                level_msg(&format!("entity {name}"), r, val),
                            ));
                        }
                    }
                    let from = find_key(vis_text, "visibility", ent_line).map_or(ent_line, |a| a.0);
                    readers_ok(spec, from, &format!("{ty}/{name}"))?;
                }
                for (section, spec) in &cfg.sections {
                    let at = find_key(vis_text, section, ent_line);
                    let key = format!("{ty}/{name}/{section}");
                    for (r, val) in spec.values() {
                        if Level::new(val).is_none() {
                            return Err(bad(
                                at,
                                key,
                                level_msg(&format!("entity {name}, section {section}"), r, val),
                            ));
                        }
                    }
                    readers_ok(spec, at.map_or(ent_line, |a| a.0), &key)?;
                }
                if !cfg.sections.is_empty() && file.is_none() {
                    let at = find_key(vis_text, name, 1);
                    let folder = super::model::folder_of(ty).unwrap_or(ty);
                    return Err(bad(
                        at,
                        format!("{ty}/{name}"),
                        format!(
                            "sections are set for `{name}`, but no file {folder}/*.md has that name or stem (compared after NFKC)"
                        ),
                    ));
                }
                let mut seen = BTreeSet::new();
                for section in cfg.sections.keys() {
                    let at = find_key(vis_text, section, ent_line);
                    let key = format!("{ty}/{name}/{section}");
                    if !seen.insert(norm_name(section)) {
                        return Err(bad(
                            at,
                            key,
                            format!("section `{section}` is listed twice (after NFKC)"),
                        ));
                    }
                    if let Some(f) = file
                        && !f
                            .sections
                            .iter()
                            .any(|s| norm_name(&s.name) == norm_name(section))
                    {
                        let names: Vec<&str> = f.sections.iter().map(|s| s.name.as_str()).collect();
                        return Err(bad(
                            at,
                            key,
                            format!(
                                "section `{section}` matches no heading of {ty}/{name} (compared after NFKC); headings: {}",
                                if names.is_empty() {
                                    "none".into()
                                } else {
                                    names.join(", ")
                                }
                            ),
                        ));
                    }
                }
                for s in &cfg.secrets {
                    let key = format!("{ty}/{name}/{}", s.id);
                    let at = find_entry(vis_text, "id", Some(&s.id), ent_line)
                        .or_else(|| find_key(vis_text, "id", ent_line));
                    let spec = s.spec(v.default_visibility);
                    for (r, val) in spec.values() {
                        if Level::new(val).is_none() {
                            return Err(bad(
                                at,
                                key,
                                level_msg(&format!("entity {name}, secret {}", s.id), r, val),
                            ));
                        }
                    }
                    readers_ok(&spec, at.map_or(ent_line, |a| a.0), &key)?;
                    if !(1..=10).contains(&s.subtlety) {
                        return Err(bad(
                            at,
                            key,
                            format!("secret {}: subtlety {} is not 1–10", s.id, s.subtlety),
                        ));
                    }
                    if s.content.trim().is_empty() {
                        return Err(bad(at, key, format!("secret {} has no content", s.id)));
                    }
                    if let Some(sec) = &s.section {
                        let sat = find_key(vis_text, "section", at.map_or(ent_line, |a| a.0));
                        if sec.trim().is_empty() {
                            return Err(bad(
                                sat,
                                key,
                                format!("secret {}: `section:` is empty", s.id),
                            ));
                        }
                        // A Level 1 notice names `section:`; naming a heading would reveal it
                        // (and its level is set under `sections:`, not here).
                        if let Some(f) = file
                            && f.sections
                                .iter()
                                .any(|h| norm_name(&h.name) == norm_name(sec))
                        {
                            return Err(bad(
                                sat,
                                key,
                                format!(
                                    "secret {}: `section: {sec}` is a heading of {ty}/{name}; a secret's section is the label its Level 1 notice uses — choose a name that is not a heading (set the heading's level under `sections:`)",
                                    s.id
                                ),
                            ));
                        }
                    }
                    if !ids.insert(s.id.clone()) {
                        return Err(bad(at, key, format!("secret id {} is used twice", s.id)));
                    }
                    if let Some(t) = &s.template_id
                        && self.templates.by_id(t).is_none()
                    {
                        return Err(bad(
                            at,
                            key,
                            format!("template_id `{t}` matches no template"),
                        ));
                    }
                }
                if file.is_none() && cfg.secrets.is_empty() {
                    warnings.push(format!(
                        "visibility.yaml: {ty}/{name} has no file and no secrets; the entry does nothing"
                    ));
                }
            }
        }
        self.warnings = warnings;
        Ok(())
    }
}
