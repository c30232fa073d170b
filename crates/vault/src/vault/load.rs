//! Reading a work from a vault folder (or the sample embedded in the binary): YAML syntax
//! errors as file:line:col; the checks themselves are in `validate`.

use std::path::{Path, PathBuf};

use super::entity::{self, Entity};
use super::model::{ENTITY_TYPES, VisibilityFile};
use super::template::{Origin, Template, Templates};
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
        [$(($p, include_str!(concat!("../../../../assets/vault/sisters/", $p)))),*]
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

fn io(path: &Path, e: std::io::Error) -> ConfigError {
    ConfigError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
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
        // A folder that is not there holds nothing; one that cannot be read is an error (what
        // it holds might be the level that hides a secret).
        let rd = match std::fs::read_dir(dir.join(f)) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io(&dir.join(f), e)),
        };
        for e in rd {
            let e = e.map_err(|e| io(&dir.join(f), e))?;
            let p = e.path();
            let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
            if !matches!(ext, "md" | "yaml" | "yml") {
                continue;
            }
            if !p.is_file() {
                return Err(invalid(
                    &p,
                    "cannot be read: not a file (a folder, or a link to nothing)".into(),
                ));
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
                super::parse_yaml(&path, text, 0)?
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
        let exact = self
            .entities
            .iter()
            .find(|e| e.entity_type == entity_type && (e.name == name || e.stem == name));
        exact.or_else(|| {
            let want = super::markup::norm_name(name);
            self.entities.iter().find(|e| {
                e.entity_type == entity_type
                    && (super::markup::norm_name(&e.name) == want
                        || super::markup::norm_name(&e.stem) == want)
            })
        })
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
