//! The effective level of every section, secret and foreshadowing of a work for one reader,
//! with the precedence step it came from (see the module docs of `vault`).

use super::entity::{Entity, PREAMBLE};
use super::load::Work;
use super::markup::norm_name;
use super::model::{
    EntityCfg, FsStatus, Importance, Level, LevelSpec, SecretCfg, default_subtlety,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Section,
    Secret,
    Foreshadowing,
}

/// Which rule decided a level (shown in the writer's pane).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LevelSource {
    ReaderOverride,
    YamlSection,
    Marker,
    YamlEntity,
    FrontSection,
    FrontDefault,
    Secret,
    WorkDefault,
}

impl LevelSource {
    pub fn label(self) -> &'static str {
        match self {
            LevelSource::ReaderOverride => "reader",
            LevelSource::YamlSection => "yaml",
            LevelSource::Marker => "marker",
            LevelSource::YamlEntity => "entity",
            LevelSource::FrontSection => "front",
            LevelSource::FrontDefault => "front",
            LevelSource::Secret => "secret",
            LevelSource::WorkDefault => "default",
        }
    }
}

/// One thing a level applies to.
#[derive(Debug, Clone)]
pub struct Item {
    pub kind: ItemKind,
    /// `characters/<name>/<section>`, `characters/<name>/<secret id>` or `foreshadowing/<id>`.
    pub key: String,
    pub entity_type: String,
    pub entity_name: String,
    /// Section name, or what a Level 1 notice calls a secret.
    pub section_name: String,
    pub secret_id: Option<String>,
    pub level: Level,
    pub source: LevelSource,
    pub text: String,
    pub importance: Importance,
    pub forbidden_keywords: Vec<String>,
    /// Kana readings the writer gave, by keyword.
    pub keyword_readings: Vec<(String, Vec<String>)>,
    pub allowed_expressions: Vec<String>,
    pub subtlety: i64,
    pub hint: Option<String>,
    pub template_id: Option<String>,
    pub status: Option<FsStatus>,
    /// Foreshadowing only: (section path, text) of sections marked below its level, left out
    /// of `text` (never sent; leak review still checks them as level 0).
    pub cut: Vec<(String, String)>,
}

/// Foreshadowing sections that hold the payoff plan (how it is revealed): withheld from every
/// prompt unless the section has its own level (a marker or a `sections:` entry), since a model
/// that knows the payoff tends to say it, and planting the hint needs only the content.
pub const PAYOFF: [&str; 4] = ["回収予定", "回収", "回収方法", "回収計画"];

/// A foreshadowing's content section; its text goes to the model without a label.
const CONTENT: &str = "内容";

/// Is section `i` of foreshadowing `e` a payoff plan with no level of its own?
fn is_unmarked_payoff(e: &Entity, i: usize, cfg: Option<&EntityCfg>) -> bool {
    let s = &e.sections[i];
    let name = norm_name(&s.name);
    PAYOFF.iter().any(|p| norm_name(p) == name)
        && s.marker.is_none()
        && section_spec(cfg, &s.name).is_none()
        && e.front_level(&s.name).is_none()
}

/// The writer-given readings of a keyword list.
pub(crate) fn readings(list: &[super::model::Keyword]) -> Vec<(String, Vec<String>)> {
    list.iter()
        .filter(|k| !k.readings.is_empty())
        .map(|k| (k.word.trim().to_string(), k.readings.clone()))
        .collect()
}

fn lvl(v: i64) -> Level {
    // validate() has rejected anything outside 0–3; stay on the secret side regardless.
    Level::new(v).unwrap_or(Level::HIDDEN)
}

fn from_spec(spec: &LevelSpec, reader: Option<&str>, plain: LevelSource) -> (Level, LevelSource) {
    match reader.and_then(|r| spec.readers.get(r)) {
        Some(v) => (lvl(*v), LevelSource::ReaderOverride),
        None => (lvl(spec.level), plain),
    }
}

/// The spec visibility.yaml gives a section, its name matched after NFKC.
pub(crate) fn section_spec<'a>(cfg: Option<&'a EntityCfg>, name: &str) -> Option<&'a LevelSpec> {
    let cfg = cfg?;
    cfg.sections.get(name).or_else(|| {
        let want = norm_name(name);
        cfg.sections
            .iter()
            .find_map(|(k, v)| (norm_name(k) == want).then_some(v))
    })
}

fn lower(a: (Level, LevelSource), b: (Level, LevelSource)) -> (Level, LevelSource) {
    if b.0 < a.0 { b } else { a }
}

impl Work {
    /// The entity's entry in visibility.yaml: by name, else file stem, matched after NFKC.
    pub(crate) fn cfg(&self, entity_type: &str, e: &Entity) -> Option<&EntityCfg> {
        let ents = self.visibility.entities.get(entity_type)?;
        ents.get(&e.name).or_else(|| ents.get(&e.stem)).or_else(|| {
            let (n, s) = (norm_name(&e.name), norm_name(&e.stem));
            ents.iter().find_map(|(k, v)| {
                let k = norm_name(k);
                (k == n || k == s).then_some(v)
            })
        })
    }

    /// A section's level: its own (visibility.yaml entry, else the lowest of its markers),
    /// else its parent's, else the entity's; never above any enclosing heading's level nor the
    /// title line's marker.
    pub(crate) fn section_level(
        &self,
        e: &Entity,
        i: usize,
        cfg: Option<&EntityCfg>,
        reader: Option<&str>,
    ) -> (Level, LevelSource) {
        let section = &e.sections[i];
        let own = match section_spec(cfg, &section.name) {
            Some(spec) => Some(from_spec(spec, reader, LevelSource::YamlSection)),
            None => section.marker.map(|m| (m, LevelSource::Marker)),
        };
        let parent = section
            .parent
            .map(|p| self.section_level(e, p, cfg, reader));
        let mut level = match (own, parent) {
            (Some(o), Some(p)) => lower(o, p),
            (Some(o), None) => o,
            (None, Some(p)) => p,
            (None, None) => self.entity_level(e, cfg, reader, Some(&section.name)),
        };
        if let Some(cap) = e.cap {
            level = lower(level, (cap, LevelSource::Marker));
        }
        level
    }

    fn entity_level(
        &self,
        e: &Entity,
        cfg: Option<&EntityCfg>,
        reader: Option<&str>,
        section: Option<&str>,
    ) -> (Level, LevelSource) {
        if let Some(spec) = cfg.and_then(|c| c.visibility.as_ref()) {
            return from_spec(spec, reader, LevelSource::YamlEntity);
        }
        if let Some(v) = section.and_then(|s| e.front_level(s)) {
            return (lvl(v), LevelSource::FrontSection);
        }
        if let Some(v) = e.front.ai_visibility.get("default") {
            return (lvl(*v), LevelSource::FrontDefault);
        }
        (
            lvl(self.visibility.default_visibility),
            LevelSource::WorkDefault,
        )
    }

    /// A foreshadowing's text: the sections whose own level is at least the foreshadowing's;
    /// a section marked lower is left out (never raised), and counted.
    fn foreshadowing_text(
        &self,
        e: &Entity,
        cfg: Option<&EntityCfg>,
        reader: Option<&str>,
        level: Level,
    ) -> (String, Vec<(String, String)>) {
        let mut parts = Vec::new();
        let mut cut = Vec::new();
        for (i, s) in e.sections.iter().enumerate() {
            let own = if is_unmarked_payoff(e, i, cfg) {
                // The payoff plan is withheld unless the writer marked it (see `PAYOFF`).
                Level::HIDDEN
            } else {
                self.section_level(e, i, cfg, reader).0
            };
            if own < level {
                if !s.text.is_empty() || s.marker.is_some() {
                    cut.push((e.section_path(i), s.text.clone()));
                }
                continue;
            }
            if s.text.is_empty() {
                continue;
            }
            // The content section is the content: no 「内容:」 label for templates that add one.
            parts.push(
                if s.name == PREAMBLE || norm_name(&s.name) == norm_name(CONTENT) {
                    s.text.clone()
                } else {
                    format!("{}: {}", e.section_path(i), s.text)
                },
            );
        }
        (parts.join("\n"), cut)
    }

    fn secret_item(
        &self,
        ty: &str,
        entity: &str,
        cfg: &EntityCfg,
        s: &SecretCfg,
        reader: Option<&str>,
    ) -> Item {
        let spec = s.spec(self.visibility.default_visibility);
        let src = if s.visibility.is_some() {
            LevelSource::Secret
        } else {
            LevelSource::WorkDefault
        };
        let (level, source) = from_spec(&spec, reader, src);
        Item {
            kind: ItemKind::Secret,
            key: format!("{ty}/{entity}/{}", s.id),
            entity_type: ty.into(),
            entity_name: entity.into(),
            section_name: s.section.clone().unwrap_or_else(|| "一部の設定".into()),
            secret_id: Some(s.id.clone()),
            level,
            source,
            text: s.content.clone(),
            importance: s.importance,
            forbidden_keywords: super::model::words(&s.forbidden_keywords),
            keyword_readings: readings(&s.forbidden_keywords),
            allowed_expressions: s.allowed_expressions.clone(),
            subtlety: s.subtlety,
            hint: s.hint.clone(),
            template_id: s.template_id.clone().or_else(|| cfg.template_id.clone()),
            status: None,
            cut: Vec::new(),
        }
    }

    /// Every section, secret and foreshadowing with its level for `reader` (None: the common
    /// level, ignoring reader overrides), in a stable order.
    pub fn items(&self, reader: Option<&str>) -> Vec<Item> {
        let mut out = Vec::new();
        for e in &self.entities {
            let cfg = self.cfg(&e.entity_type, e);
            if e.entity_type == "foreshadowing" {
                let (mut level, mut source) = self.entity_level(e, cfg, reader, None);
                if let Some(cap) = e.cap
                    && cap < level
                {
                    (level, source) = (cap, LevelSource::Marker);
                }
                let (text, cut) = self.foreshadowing_text(e, cfg, reader, level);
                out.push(Item {
                    kind: ItemKind::Foreshadowing,
                    key: format!("foreshadowing/{}", e.stem),
                    entity_type: e.entity_type.clone(),
                    entity_name: e.name.clone(),
                    section_name: "伏線".into(),
                    secret_id: Some(e.stem.clone()),
                    level,
                    source,
                    text,
                    importance: e.front.importance.unwrap_or_default(),
                    forbidden_keywords: super::model::words(&e.front.forbidden_keywords),
                    keyword_readings: readings(&e.front.forbidden_keywords),
                    allowed_expressions: e.front.allowed_expressions.clone(),
                    subtlety: e.front.subtlety.unwrap_or_else(default_subtlety),
                    hint: None,
                    template_id: cfg.and_then(|c| c.template_id.clone()),
                    status: e.front.status,
                    cut,
                });
                continue;
            }
            for (i, s) in e.sections.iter().enumerate() {
                let (level, source) = self.section_level(e, i, cfg, reader);
                out.push(Item {
                    kind: ItemKind::Section,
                    key: format!("{}/{}/{}", e.entity_type, e.name, e.section_path(i)),
                    entity_type: e.entity_type.clone(),
                    entity_name: e.name.clone(),
                    section_name: s.name.clone(),
                    secret_id: None,
                    level,
                    source,
                    text: s.text.clone(),
                    importance: Importance::Medium,
                    forbidden_keywords: Vec::new(),
                    keyword_readings: Vec::new(),
                    allowed_expressions: Vec::new(),
                    subtlety: default_subtlety(),
                    hint: None,
                    template_id: cfg.and_then(|c| c.template_id.clone()),
                    status: None,
                    cut: Vec::new(),
                });
            }
        }
        // Secrets, including those of entities that have no file.
        for (ty, ents) in &self.visibility.entities {
            for (name, cfg) in ents {
                let display = self
                    .entity(ty, name)
                    .map(|e| e.name.clone())
                    .unwrap_or_else(|| name.clone());
                for s in &cfg.secrets {
                    out.push(self.secret_item(ty, &display, cfg, s, reader));
                }
            }
        }
        out
    }

    /// Foreshadowing whose level disagrees with its status (seed §7.1), and payoff plans
    /// withheld by default, as writer warnings.
    pub fn foreshadowing_warnings(&self, reader: Option<&str>) -> Vec<String> {
        let mut out = Vec::new();
        for e in self
            .entities
            .iter()
            .filter(|e| e.entity_type == "foreshadowing")
        {
            let cfg = self.cfg(&e.entity_type, e);
            for (i, s) in e.sections.iter().enumerate() {
                if is_unmarked_payoff(e, i, cfg) && !s.text.trim().is_empty() {
                    out.push(format!(
                        "foreshadowing/{}: `## {}` (the payoff plan) is not sent to the model; mark it `<!-- ai_visibility: 2 -->` to send it",
                        e.stem, s.name
                    ));
                }
            }
        }
        out.extend(self.items(reader).iter().filter_map(|i| {
            let st = i.status?;
            let (lo, hi) = st.recommended()?;
            let l = i.level.get();
            (l < lo || l > hi).then(|| {
                let rec = if lo == hi {
                    format!("{lo}")
                } else {
                    format!("{lo}–{hi}")
                };
                format!(
                    "{}: status {} recommends level {rec}, but it is set to {l}",
                    i.key,
                    st.as_str()
                )
            })
        }));
        out
    }
}
