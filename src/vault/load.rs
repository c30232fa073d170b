//! Reading a work from a vault folder (or the sample embedded in the binary) and checking it:
//! YAML syntax errors as file:line:col, bad levels naming the entity and section.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::entity::{self, Entity};
use super::model::{ENTITY_TYPES, Level, VisibilityFile};
use super::template::{Origin, Template, Templates};
use super::{find_entry, find_key, yaml_error};
use crate::config::ConfigError;

pub const VISIBILITY: &str = "_ai_control/visibility.yaml";

/// One work: its visibility settings, entity files and templates.
#[derive(Debug, Clone)]
pub struct Work {
    pub name: String,
    /// The work folder; for the embedded sample, its path under assets/.
    pub root: PathBuf,
    /// False for the embedded sample: saving writes it out to a folder first.
    pub on_disk: bool,
    pub visibility: VisibilityFile,
    pub entities: Vec<Entity>,
    pub templates: Templates,
    /// Things the writer should know that do not stop the work from loading.
    pub warnings: Vec<String>,
}

const SAMPLE_ROOT: &str = "assets/vault/sisters";

macro_rules! sample_files {
    ($($p:literal),* $(,)?) => {
        [$(($p, include_str!(concat!("../../assets/vault/sisters/", $p)))),*]
    };
}

const SAMPLE: [(&str, &str); 9] = sample_files!(
    "_ai_control/visibility.yaml",
    "_ai_control/templates/level1_hint.yaml",
    "characters/やな.md",
    "characters/あゆ.md",
    "world_settings/町.md",
    "world_settings/家.md",
    "_foreshadowing/FS-001.md",
    "_foreshadowing/FS-002.md",
    "_ai_control/templates/custom/level2_sisters.yaml",
);

/// The sample vault for やな and あゆ that ships in the binary.
pub fn sample() -> Work {
    let files = SAMPLE
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect();
    // The sample is tested; failing to load it is a build defect, not a user error.
    from_files("sisters", Path::new(SAMPLE_ROOT), false, files)
        .unwrap_or_else(|e| panic!("bundled sample vault: {e}"))
}

/// The files of the sample, for writing it out to a folder the writer can edit.
pub fn sample_files() -> impl Iterator<Item = (&'static str, &'static str)> {
    SAMPLE.iter().copied()
}

/// The works of a vault root, sorted: folders with `_ai_control/` or an entity folder.
pub fn list_works(root: &Path) -> std::io::Result<Vec<String>> {
    let mut works: Vec<String> = Vec::new();
    for e in std::fs::read_dir(root)? {
        let e = e?;
        let p = e.path();
        if p.is_dir()
            && (p.join("_ai_control").is_dir()
                || ENTITY_TYPES.iter().any(|(_, f)| p.join(f).is_dir()))
        {
            works.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    works.sort();
    Ok(works)
}

/// The works beside `work` in its vault (itself included), for the writer's pane. The
/// embedded sample is alone.
pub fn sibling_works(work: &Work) -> Vec<String> {
    let listed = work
        .on_disk
        .then(|| work.root.parent())
        .flatten()
        .and_then(|root| list_works(root).ok())
        .filter(|w| w.iter().any(|n| n == &work.name));
    listed.unwrap_or_else(|| vec![work.name.clone()])
}

/// Opens `root`: a work folder itself (it has `_ai_control/`), or a vault holding works, of
/// which `work` picks one (optional when there is only one).
pub fn load_vault(root: &Path, work: Option<&str>) -> Result<Work, ConfigError> {
    let io = |path: &Path, e: std::io::Error| ConfigError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    if work.is_none() && root.join("_ai_control").is_dir() {
        return load_work_dir(root);
    }
    let works = list_works(root).map_err(|e| io(root, e))?;
    let pick = match (work, works.as_slice()) {
        (Some(w), _) if works.iter().any(|x| x == w) => w.to_string(),
        (None, [only]) => only.clone(),
        (Some(w), _) => {
            return Err(invalid(
                root,
                format!("no work `{w}` in this vault; works: {}", list(&works)),
            ));
        }
        (None, []) => {
            return Err(invalid(
                root,
                "no work here: a work is a folder with _ai_control/visibility.yaml".into(),
            ));
        }
        (None, _) => {
            return Err(invalid(
                root,
                format!("several works; pick one with --work: {}", list(&works)),
            ));
        }
    };
    load_work_dir(&root.join(pick))
}

fn list(works: &[String]) -> String {
    if works.is_empty() {
        "(none)".into()
    } else {
        works.join(", ")
    }
}

fn invalid(path: &Path, message: String) -> ConfigError {
    ConfigError::Invalid {
        path: path.to_path_buf(),
        at: None,
        key: None,
        message,
    }
}

/// Reads the files of one work folder.
pub fn load_work_dir(dir: &Path) -> Result<Work, ConfigError> {
    let mut files = Vec::new();
    let mut folders: Vec<&str> = ENTITY_TYPES.iter().map(|(_, f)| *f).collect();
    folders.extend([
        "_ai_control",
        "_ai_control/templates",
        "_ai_control/templates/custom",
    ]);
    for f in folders {
        let Ok(rd) = std::fs::read_dir(dir.join(f)) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
            if !p.is_file() || !matches!(ext, "md" | "yaml" | "yml") {
                continue;
            }
            // Size, UTF-8 (line:col), one document and nesting depth, before any parser.
            let text = crate::limits::read_yaml(&p)?;
            let name = e.file_name().to_string_lossy().into_owned();
            files.push((format!("{f}/{name}"), text));
        }
    }
    let name = dir
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "work".into());
    from_files(&name, dir, true, files)
}

/// Builds a work from `(path relative to the work, text)` pairs.
pub fn from_files(
    name: &str,
    root: &Path,
    on_disk: bool,
    mut files: Vec<(String, String)>,
) -> Result<Work, ConfigError> {
    files.sort();
    let mut visibility = VisibilityFile::default();
    let mut vis_text = String::new();
    let mut entities = Vec::new();
    let mut templates = Vec::new();
    for (rel, text) in &files {
        let path = root.join(rel);
        if rel == VISIBILITY || rel == "_ai_control/visibility.yml" {
            visibility = if text.trim().is_empty() {
                VisibilityFile::default()
            } else {
                serde_norway::from_str(text).map_err(|e| yaml_error(&path, &e, 0, text))?
            };
            vis_text = text.clone();
        } else if let Some(rest) = rel.strip_prefix("_ai_control/templates/") {
            let origin = if rest.starts_with("custom/") {
                Origin::Custom
            } else if rest.starts_with("level1_") || rest.starts_with("level2_") {
                Origin::WorkDefault
            } else {
                continue;
            };
            templates.push(Template::parse(&path, text, origin)?);
        } else if let Some((ty, _)) = ENTITY_TYPES
            .iter()
            .find(|(_, f)| rel.starts_with(&format!("{f}/")))
            && rel.ends_with(".md")
        {
            entities.push(entity::parse(ty, &path, text)?);
        }
    }
    let mut work = Work {
        name: name.to_string(),
        root: root.to_path_buf(),
        on_disk,
        visibility,
        entities,
        templates: Templates::new(templates)?,
        warnings: Vec::new(),
    };
    work.validate(&vis_text)?;
    Ok(work)
}

impl Work {
    pub fn visibility_path(&self) -> PathBuf {
        self.root.join(VISIBILITY)
    }

    pub fn entity(&self, entity_type: &str, name: &str) -> Option<&Entity> {
        self.entities
            .iter()
            .find(|e| e.entity_type == entity_type && (e.name == name || e.stem == name))
    }

    /// Every level must be 0–3 and every subtlety 1–10; template ids must exist. Errors name
    /// the entity and section; section names that match nothing become warnings.
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
                warnings.push(format!(
                    "visibility.yaml: entity type `{ty}` is not one of characters, world_settings, foreshadowing"
                ));
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
                }
                for (section, spec) in &cfg.sections {
                    for (r, val) in spec.values() {
                        if Level::new(val).is_none() {
                            let at = find_key(vis_text, section, ent_line);
                            return Err(bad(
                                at,
                                format!("{ty}/{name}/{section}"),
                                level_msg(&format!("entity {name}, section {section}"), r, val),
                            ));
                        }
                    }
                    if let Some(f) = file
                        && !f.sections.iter().any(|s| &s.name == section)
                    {
                        warnings.push(format!(
                            "visibility.yaml: {ty}/{name} has no section `{section}` in its file; the entry does nothing"
                        ));
                    }
                }
                for s in &cfg.secrets {
                    let key = format!("{ty}/{name}/{}", s.id);
                    let at = find_entry(vis_text, "id", Some(&s.id), ent_line)
                        .or_else(|| find_key(vis_text, "id", ent_line));
                    for (r, val) in s.spec(v.default_visibility).values() {
                        if Level::new(val).is_none() {
                            return Err(bad(
                                at,
                                key,
                                level_msg(&format!("entity {name}, secret {}", s.id), r, val),
                            ));
                        }
                    }
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
                if file.is_none() && cfg.secrets.is_empty() && ty != "foreshadowing" {
                    warnings.push(format!(
                        "visibility.yaml: {ty}/{name} has no file and no secrets"
                    ));
                }
            }
        }
        for e in &self.entities {
            for (k, val) in &e.front.ai_visibility {
                if Level::new(*val).is_none() {
                    return Err(ConfigError::Invalid {
                        path: self
                            .root
                            .join(super::model::folder_of(&e.entity_type).unwrap_or(""))
                            .join(format!("{}.md", e.stem)),
                        at: None,
                        key: Some(format!("{}/{}/{k}", e.entity_type, e.name)),
                        message: format!("ai_visibility.{k}: level {val}; a level is 0, 1, 2 or 3"),
                    });
                }
            }
        }
        self.warnings = warnings;
        Ok(())
    }
}

/// Where a writer's own vault lives when no folder is given: $KAKEAI_VAULT, else
/// `<data dir>/vault`.
pub fn user_vault_dir() -> Option<PathBuf> {
    std::env::var_os("KAKEAI_VAULT")
        .map(PathBuf::from)
        .or_else(|| crate::config::data_dir().map(|d| d.join("vault")))
}

/// The vault to use: `dir` when given, else the writer's own vault when it exists, else the
/// bundled sample.
pub fn open(dir: Option<&Path>, work: Option<&str>) -> Result<Work, ConfigError> {
    match dir {
        Some(d) => load_vault(d, work),
        None => match user_vault_dir().filter(|d| d.is_dir()) {
            Some(d) => load_vault(&d, work),
            None => Ok(sample()),
        },
    }
}

/// Where the bundled sample is written out when the writer first saves an edit.
pub fn sample_save_dir() -> Option<PathBuf> {
    user_vault_dir().map(|d| d.join("sisters"))
}
