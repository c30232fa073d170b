//! Level 1 / Level 2 prompt templates (seed 004 §2.2–§2.3): loading, the resolution order
//! entity-specific → work custom → work default → built-in, and rendering with a closed set of
//! variables. An unknown `{variable}` is an error naming the template file, found at load time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::ConfigError;

pub const VARIABLES: [&str; 10] = [
    "entity_type",
    "entity_name",
    "section_name",
    "hint_text",
    "secret_id",
    "secret_content",
    "forbidden_keywords",
    "allowed_expressions",
    "subtlety_level",
    "subtlety_guideline",
];

const BUILTIN: [(&str, &str); 2] = [
    (
        "assets/vault/templates/level1_default.yaml",
        include_str!("../../../../assets/vault/templates/level1_default.yaml"),
    ),
    (
        "assets/vault/templates/level2_default.yaml",
        include_str!("../../../../assets/vault/templates/level2_default.yaml"),
    ),
];

#[derive(Debug, Clone, Deserialize)]
pub struct Template {
    pub template_id: String,
    #[serde(default)]
    pub version: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    pub level: u8,
    pub prompt_template: String,
    #[serde(default)]
    pub metadata: BTreeMap<String, serde_norway::Value>,
    #[serde(skip)]
    pub path: PathBuf,
    #[serde(skip)]
    pub origin: Origin,
}

/// Where a template came from, in resolution order (seed §2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Origin {
    Custom,
    WorkDefault,
    #[default]
    Builtin,
}

impl Template {
    pub fn parse(path: &Path, text: &str, origin: Origin) -> Result<Template, ConfigError> {
        let mut t: Template = super::parse_yaml(path, text, 0)?;
        t.path = path.to_path_buf();
        t.origin = origin;
        if !(1..=2).contains(&t.level) {
            return Err(invalid(
                path,
                "level",
                "a template's level must be 1 or 2".into(),
            ));
        }
        check_variables(path, &t.prompt_template)?;
        Ok(t)
    }

    /// Fills the variables. Variables were checked at load time; `{{`/`}}` are literal braces.
    pub fn render(&self, vars: &Vars) -> String {
        let mut out = String::with_capacity(self.prompt_template.len() + 64);
        let mut rest = self.prompt_template.as_str();
        while let Some(i) = rest.find(['{', '}']) {
            out.push_str(&rest[..i]);
            let tail = &rest[i..];
            if tail.starts_with("{{") || tail.starts_with("}}") {
                out.push_str(&tail[..1]);
                rest = &tail[2..];
            } else if let Some((name, after)) =
                tail[1..].split_once('}').filter(|_| tail.starts_with('{'))
            {
                out.push_str(vars.get(name));
                rest = after;
            } else {
                out.push_str(&tail[..1]);
                rest = &tail[1..];
            }
        }
        out.push_str(rest);
        out.trim_end().to_string()
    }
}

fn invalid(path: &Path, key: &str, message: String) -> ConfigError {
    ConfigError::Invalid {
        path: path.to_path_buf(),
        at: None,
        key: Some(key.into()),
        message,
    }
}

fn check_variables(path: &Path, tpl: &str) -> Result<(), ConfigError> {
    let mut rest = tpl;
    while let Some(i) = rest.find('{') {
        let tail = &rest[i..];
        if let Some(after) = tail.strip_prefix("{{") {
            rest = after;
            continue;
        }
        let Some((name, after)) = tail[1..].split_once('}') else {
            return Err(invalid(
                path,
                "prompt_template",
                "a `{` is never closed (write `{{` for a literal brace)".into(),
            ));
        };
        if !VARIABLES.contains(&name) {
            return Err(invalid(
                path,
                "prompt_template",
                format!(
                    "unknown variable `{{{name}}}`; known: {}",
                    VARIABLES.join(", ")
                ),
            ));
        }
        rest = after;
    }
    Ok(())
}

/// Values for one rendering.
#[derive(Debug, Clone, Default)]
pub struct Vars {
    pub map: BTreeMap<&'static str, String>,
}

impl Vars {
    pub fn set(mut self, k: &'static str, v: impl Into<String>) -> Vars {
        self.map.insert(k, v.into());
        self
    }
    fn get(&self, k: &str) -> &str {
        self.map.get(k).map(String::as_str).unwrap_or("")
    }
}

/// Seed §2.2 `{subtlety_guideline}`: 1 = plain hints are fine … 10 = barely perceptible.
pub fn subtlety_guideline(level: i64) -> &'static str {
    match level {
        ..=2 => "読者が気づける程度のはっきりした暗示まで使えます。",
        3..=4 => "会話の流れで自然に出る、軽い暗示にとどめます。",
        5..=6 => "注意深い読者だけが後で思い当たる、さりげない描写にとどめます。",
        7..=8 => "表情や間合いなど、言葉にならない気配だけで表します。",
        _ => "ほとんど気づかれないほど淡く、雰囲気の端にだけにじませます。",
    }
}

/// Every template a work can use.
#[derive(Debug, Clone, Default)]
pub struct Templates {
    all: Vec<Template>,
}

impl Templates {
    /// The built-ins plus the work's own templates.
    pub fn new(work: Vec<Template>) -> Result<Templates, ConfigError> {
        let mut all = work;
        for (p, text) in BUILTIN {
            all.push(Template::parse(Path::new(p), text, Origin::Builtin)?);
        }
        // Stable order: origin, then file path.
        all.sort_by(|a, b| (a.origin, &a.path).cmp(&(b.origin, &b.path)));
        Ok(Templates { all })
    }

    pub fn by_id(&self, id: &str) -> Option<&Template> {
        self.all.iter().find(|t| t.template_id == id)
    }

    /// Seed §2.3: an entity-specific id, else the first custom, work default, built-in of the level.
    pub fn resolve(&self, level: u8, specific: Option<&str>) -> Option<&Template> {
        specific
            .and_then(|id| self.by_id(id).filter(|t| t.level == level))
            .or_else(|| self.all.iter().find(|t| t.level == level))
    }

    pub fn iter(&self) -> impl Iterator<Item = &Template> {
        self.all.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tpl(level: u8, id: &str, body: &str, origin: Origin) -> Template {
        let text = format!("template_id: {id}\nlevel: {level}\nprompt_template: |\n  {body}\n");
        Template::parse(Path::new(&format!("t/{id}.yaml")), &text, origin).unwrap()
    }

    #[test]
    fn render_fills_variables_and_keeps_literal_braces() {
        let t = tpl(
            1,
            "a",
            "{entity_name}の{section_name} {{注}}",
            Origin::Custom,
        );
        let v = Vars::default()
            .set("entity_name", "やな")
            .set("section_name", "過去");
        assert_eq!(t.render(&v), "やなの過去 {注}");
    }

    #[test]
    fn unknown_variable_names_the_file() {
        let text = "template_id: x\nlevel: 2\nprompt_template: \"{secret_contents}\"\n";
        let err = Template::parse(
            Path::new("vault/w/_ai_control/templates/level2_x.yaml"),
            text,
            Origin::WorkDefault,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("level2_x.yaml"), "{err}");
        assert!(err.contains("{secret_contents}"), "{err}");
    }

    #[test]
    fn resolution_order_is_specific_custom_work_builtin() {
        let work = vec![
            tpl(1, "work1", "w", Origin::WorkDefault),
            tpl(1, "custom1", "c", Origin::Custom),
            tpl(2, "work2", "w2", Origin::WorkDefault),
        ];
        let t = Templates::new(work).unwrap();
        assert_eq!(t.resolve(1, Some("work1")).unwrap().template_id, "work1");
        assert_eq!(t.resolve(1, None).unwrap().template_id, "custom1");
        assert_eq!(t.resolve(2, None).unwrap().template_id, "work2");
        // An id of the wrong level falls back to the order.
        assert_eq!(t.resolve(2, Some("work1")).unwrap().template_id, "work2");
        let builtin = Templates::new(Vec::new()).unwrap();
        assert_eq!(builtin.resolve(1, None).unwrap().origin, Origin::Builtin);
        assert_eq!(builtin.resolve(2, None).unwrap().origin, Origin::Builtin);
    }

    #[test]
    fn builtin_level1_states_absence_without_a_negative_command() {
        let t = Templates::new(Vec::new()).unwrap();
        let v = Vars::default()
            .set("entity_name", "あゆ")
            .set("section_name", "昔の話")
            .set("hint_text", "");
        let s = t.resolve(1, None).unwrap().render(&v);
        assert!(s.contains("あゆ") && s.contains("昔の話"), "{s}");
        for neg in ["ないで", "禁止", "触れない", "秘密"] {
            assert!(!s.contains(neg), "Pink Elephant: {neg} in {s}");
        }
    }
}
