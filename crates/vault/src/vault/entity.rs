//! Entity files (`characters/<name>.md`, `world_settings/<name>.md`, `_foreshadowing/<id>.md`):
//! YAML front matter and `##` (and deeper) heading sections, each of which may carry
//! `<!-- ai_visibility: N -->` markers (seed 004 §3.2; the body is read by `markup`).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::markup::{norm_name, parse_body};
use super::model::{FsStatus, Importance, Level};
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
    #[serde(default, deserialize_with = "super::model::nfkc_int_map")]
    pub ai_visibility: BTreeMap<String, i64>,
    /// Foreshadowing only.
    #[serde(default)]
    pub status: Option<FsStatus>,
    #[serde(default)]
    pub importance: Option<Importance>,
    #[serde(default, deserialize_with = "super::model::nfkc_opt_int")]
    pub subtlety: Option<i64>,
    #[serde(default)]
    pub forbidden_keywords: Vec<super::model::Keyword>,
    #[serde(default)]
    pub allowed_expressions: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub name: String,
    /// The section's own body (not its subsections'), comments removed, trimmed.
    pub text: String,
    /// The lowest of its inline `<!-- ai_visibility: N -->` markers.
    pub marker: Option<Level>,
    /// 1-based line of the heading in the file.
    pub line: usize,
    /// 0 for the text before the first heading, else the heading's number of `#`s.
    pub depth: usize,
    /// Index (in `Entity::sections`) of the enclosing heading.
    pub parent: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct Entity {
    pub entity_type: String,
    pub name: String,
    /// File stem (the id for foreshadowing).
    pub stem: String,
    pub front: FrontMatter,
    pub sections: Vec<Section>,
    /// A marker on the `# title` line: no section of the file is above it.
    pub cap: Option<Level>,
}

pub use super::markup::PREAMBLE;

/// The seed's front-matter key for the `隠し設定` section (seed 004 §3.2).
pub const HIDDEN_SECTION_KEY: &str = "hidden_section";
const HIDDEN_SECTION: &str = "隠し設定";

impl Entity {
    /// `親/子` for a subsection: the headings from the top down to `i`.
    pub fn section_path(&self, i: usize) -> String {
        let mut names = vec![self.sections[i].name.as_str()];
        let mut at = self.sections[i].parent;
        while let Some(p) = at {
            names.push(self.sections[p].name.as_str());
            at = self.sections[p].parent;
        }
        names.reverse();
        names.join("/")
    }

    /// The front matter's level for a section (`ai_visibility.<name>`, matched after NFKC;
    /// when two keys name it, the lower level).
    pub fn front_level(&self, section: &str) -> Option<i64> {
        let want = norm_name(section);
        self.front
            .ai_visibility
            .iter()
            .filter_map(|(k, v)| {
                let k = if k == HIDDEN_SECTION_KEY {
                    HIDDEN_SECTION
                } else {
                    k
                };
                (k != "default" && norm_name(k) == want).then_some(*v)
            })
            .min()
    }
}

pub fn parse(entity_type: &str, path: &Path, text: &str) -> Result<Entity, ConfigError> {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (front, front_text, body, body_line) = split_front(path, text)?;
    let name = front.name.clone().unwrap_or_else(|| stem.clone());
    let parsed = parse_body(body, body_line).map_err(|e| ConfigError::Invalid {
        path: path.to_path_buf(),
        at: Some((e.line, e.col)),
        key: Some(format!("{entity_type}/{name}")),
        message: e.message,
    })?;
    let sections: Vec<Section> = parsed
        .blocks
        .into_iter()
        .map(|b| Section {
            name: b.name,
            text: b.text,
            marker: b.marker,
            line: b.line,
            depth: b.depth,
            parent: b.parent,
        })
        .collect();
    let e = Entity {
        entity_type: entity_type.into(),
        name,
        stem,
        front,
        sections,
        cap: parsed.title_marker,
    };
    check_front_levels(&e, path, front_text)?;
    Ok(e)
}

/// Front-matter levels are 0–3 and name a section of the file (after NFKC): a key that names
/// nothing is an error, because the writer meant to set something.
fn check_front_levels(e: &Entity, path: &Path, front_text: &str) -> Result<(), ConfigError> {
    for (k, v) in &e.front.ai_visibility {
        let at = super::find_key(front_text, k, 1).map(|(l, c)| (l + 1, c));
        let err = |message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            at,
            key: Some(format!("{}/{}/{k}", e.entity_type, e.name)),
            message,
        };
        if Level::new(*v).is_none() {
            return Err(err(format!(
                "ai_visibility.{k}: level {v}; a level is 0, 1, 2 or 3"
            )));
        }
        let target = if k == HIDDEN_SECTION_KEY {
            HIDDEN_SECTION
        } else {
            k.as_str()
        };
        if k != "default"
            && !e
                .sections
                .iter()
                .any(|s| norm_name(&s.name) == norm_name(target))
        {
            let names: Vec<&str> = e.sections.iter().map(|s| s.name.as_str()).collect();
            return Err(err(format!(
                "ai_visibility.{k} names no heading of this file (headings: {})",
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            )));
        }
    }
    Ok(())
}

/// Splits `---\nyaml\n---\n` from the body; returns the body's first line number (1-based).
fn split_front<'a>(
    path: &Path,
    text: &'a str,
) -> Result<(FrontMatter, &'a str, &'a str, usize), ConfigError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Ok((FrontMatter::default(), "", text, 1));
    };
    let mut offset = 0;
    for (i, line) in rest.split_inclusive('\n').enumerate() {
        if line.trim_end() == "---" {
            let yaml = &rest[..offset];
            let body = &rest[offset + line.len()..];
            let front: FrontMatter = if yaml.trim().is_empty() {
                FrontMatter::default()
            } else {
                super::parse_yaml(path, yaml, 1)?
            };
            return Ok((front, yaml, body, i + 3));
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
        assert!(msg.contains("characters/あゆ"), "{msg}");
        assert!(msg.contains("ai_visibility: 7"), "{msg}");
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
    fn front_matter_levels_must_name_a_heading() {
        let text = ENTITY.replace(
            "  default: 3\n",
            "  default: 3\n  隠し設定（ネタバレ）: 0\n",
        );
        let err = parse("characters", Path::new("c/ayu.md"), &text).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("c/ayu.md:6:3:"), "{msg}");
        assert!(msg.contains("基本情報, 隠し設定"), "{msg}");
        let text = ENTITY.replace("## 隠し設定", "## 隠し設定(ネタバレ)");
        let text = text.replace(
            "  default: 3\n",
            "  default: 3\n  隠し設定（ネタバレ）: 0\n",
        );
        let e = parse("characters", Path::new("c/ayu.md"), &text).unwrap();
        assert_eq!(e.front_level("隠し設定(ネタバレ)"), Some(0));
        // The seed's `hidden_section` key means the 隠し設定 section.
        let text = ENTITY.replace("  default: 3\n", "  default: 3\n  hidden_section: 0\n");
        let e = parse("characters", Path::new("c/ayu.md"), &text).unwrap();
        assert_eq!(e.front_level("隠し設定"), Some(0));
        let text = ENTITY.replace(
            "  default: 3\n",
            "  default: 3\n  hidden_section: 2\n  隠し設定: 1\n",
        );
        let e = parse("characters", Path::new("c/ayu.md"), &text).unwrap();
        assert_eq!(e.front_level("隠し設定"), Some(1), "two keys: the lower");
        let text = ENTITY.replace("  default: 3\n", "  default: 9\n");
        let msg = parse("characters", Path::new("c/ayu.md"), &text)
            .unwrap_err()
            .to_string();
        assert!(
            msg.starts_with("c/ayu.md:5:3:") && msg.contains("level 9"),
            "{msg}"
        );
    }

    #[test]
    fn unclosed_front_matter_is_an_error() {
        assert!(parse("characters", Path::new("x.md"), "---\nname: a\n## b\n").is_err());
    }
}
