//! Entity files (`characters/<name>.md`, `world_settings/<name>.md`, `_foreshadowing/<id>.md`):
//! YAML front matter and `## heading` sections, each of which may carry an
//! `<!-- ai_visibility: N -->` marker line (seed 004 §3.2).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::model::{FsStatus, Importance, Level};
use super::yaml_error;
use crate::config::ConfigError;

/// Front matter keys kakeai reads; anything else is the writer's and is left alone.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct FrontMatter {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub current_phase: Option<String>,
    /// `default` and optional per-section levels.
    #[serde(default)]
    pub ai_visibility: BTreeMap<String, i64>,
    /// Foreshadowing only.
    #[serde(default)]
    pub status: Option<FsStatus>,
    #[serde(default)]
    pub importance: Option<Importance>,
    #[serde(default)]
    pub subtlety: Option<i64>,
    #[serde(default)]
    pub forbidden_keywords: Vec<String>,
    #[serde(default)]
    pub allowed_expressions: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub name: String,
    /// The section body without its marker line, trimmed.
    pub text: String,
    /// Level from an inline `<!-- ai_visibility: N -->` marker.
    pub marker: Option<Level>,
    /// 1-based line of the heading in the file.
    pub line: usize,
}

#[derive(Debug, Clone)]
pub struct Entity {
    pub entity_type: String,
    pub name: String,
    /// File stem (the id for foreshadowing).
    pub stem: String,
    pub front: FrontMatter,
    pub sections: Vec<Section>,
}

/// Text before the first `##` heading becomes a section with this name.
pub const PREAMBLE: &str = "前文";

pub fn parse(entity_type: &str, path: &Path, text: &str) -> Result<Entity, ConfigError> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (front, body, body_line) = split_front(path, text)?;
    let name = front.name.clone().unwrap_or_else(|| stem.clone());
    let mut sections: Vec<Section> = Vec::new();
    let mut cur = Section {
        name: PREAMBLE.into(),
        text: String::new(),
        marker: None,
        line: body_line,
    };
    for (i, line) in body.lines().enumerate() {
        let lineno = body_line + i;
        if let Some(h) = line.strip_prefix("## ") {
            push_section(&mut sections, cur);
            cur = Section {
                name: h.trim().to_string(),
                text: String::new(),
                marker: None,
                line: lineno,
            };
        } else if line.starts_with("# ") && sections.is_empty() && cur.text.trim().is_empty() {
            // A document title, not content.
        } else if let Some(raw) = marker(line) {
            let level = raw.trim().parse::<i64>().ok().and_then(Level::new);
            let Some(level) = level else {
                return Err(ConfigError::Invalid {
                    path: path.to_path_buf(),
                    at: Some((lineno, line.find("ai_visibility").unwrap_or(0) + 1)),
                    key: Some(format!("{entity_type}/{name}/{}", cur.name)),
                    message: format!("ai_visibility must be 0, 1, 2 or 3, found `{}`", raw.trim()),
                });
            };
            cur.marker.get_or_insert(level);
        } else {
            cur.text.push_str(line);
            cur.text.push('\n');
        }
    }
    push_section(&mut sections, cur);
    Ok(Entity {
        entity_type: entity_type.into(),
        name,
        stem,
        front,
        sections,
    })
}

fn push_section(sections: &mut Vec<Section>, mut s: Section) {
    s.text = s.text.trim().to_string();
    if s.name == PREAMBLE && s.text.is_empty() && s.marker.is_none() {
        return;
    }
    sections.push(s);
}

/// `<!-- ai_visibility: N -->` → `N`.
fn marker(line: &str) -> Option<&str> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim();
    inner
        .strip_prefix("ai_visibility")?
        .trim_start()
        .strip_prefix(':')
}

/// Splits `---\nyaml\n---\n` from the body; returns the body's first line number (1-based).
fn split_front<'a>(
    path: &Path,
    text: &'a str,
) -> Result<(FrontMatter, &'a str, usize), ConfigError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Ok((FrontMatter::default(), text, 1));
    };
    let mut offset = 0;
    for (i, line) in rest.split_inclusive('\n').enumerate() {
        if line.trim_end() == "---" {
            let yaml = &rest[..offset];
            let body = &rest[offset + line.len()..];
            let front: FrontMatter = if yaml.trim().is_empty() {
                FrontMatter::default()
            } else {
                serde_norway::from_str(yaml).map_err(|e| yaml_error(path, &e, 1, yaml))?
            };
            return Ok((front, body, i + 3));
        }
        offset += line.len();
    }
    Err(ConfigError::Syntax {
        path: path.to_path_buf(),
        line: 1,
        col: 1,
        message: "front matter opened with `---` is never closed by a `---` line".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTITY: &str = "---\ntype: character\nname: あゆ\nai_visibility:\n  default: 3\n---\n# あゆ\n\n## 基本情報\nやなの妹。几帳面で、数字に強い。\n\n## 隠し設定\n<!-- ai_visibility: 0 -->\n実は商店街の福引きで一等を当てたことを誰にも言っていない。\n";

    #[test]
    fn sections_markers_and_front_matter() {
        let e = parse("characters", Path::new("characters/ayu.md"), ENTITY).unwrap();
        assert_eq!(e.name, "あゆ");
        assert_eq!(e.stem, "ayu");
        assert_eq!(e.front.ai_visibility.get("default"), Some(&3));
        let names: Vec<_> = e.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["基本情報", "隠し設定"]);
        assert_eq!(e.sections[0].marker, None);
        assert_eq!(e.sections[0].line, 9);
        assert_eq!(e.sections[1].marker, Some(Level::HIDDEN));
        assert!(!e.sections[1].text.contains("ai_visibility"));
        assert!(e.sections[1].text.starts_with("実は商店街"));
    }

    #[test]
    fn a_bad_marker_names_file_line_entity_and_section() {
        let text = ENTITY.replace("ai_visibility: 0 -->", "ai_visibility: 7 -->");
        let err = parse("characters", Path::new("characters/ayu.md"), &text).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("characters/ayu.md:13:"), "{msg}");
        assert!(msg.contains("characters/あゆ/隠し設定"), "{msg}");
        assert!(msg.contains("found `7`"), "{msg}");
    }

    #[test]
    fn malformed_front_matter_points_at_its_line() {
        let text = "---\nname: あゆ\nai_visibility: [1, \n---\n## a\nb\n";
        let err = parse("characters", Path::new("c/ayu.md"), text).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("c/ayu.md:"), "{msg}");
        let line: usize = msg.split(':').nth(1).unwrap().parse().unwrap();
        assert!((3..=4).contains(&line), "{msg}");
    }

    #[test]
    fn no_front_matter_and_preamble() {
        let e = parse(
            "world_settings",
            Path::new("w/町.md"),
            "坂の多い町。\n\n## 商店街\n古い。\n",
        )
        .unwrap();
        assert_eq!(e.name, "町");
        assert_eq!(e.sections[0].name, PREAMBLE);
        assert_eq!(e.sections[1].name, "商店街");
        assert_eq!(e.sections[1].line, 3);
    }

    #[test]
    fn unclosed_front_matter_is_an_error() {
        assert!(parse("characters", Path::new("x.md"), "---\nname: a\n## b\n").is_err());
    }
}
