//! Changing levels and writing visibility.yaml back: temp file + rename, the previous version
//! kept as visibility.yaml.bak. The embedded sample is first written out to a folder.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::load::{VISIBILITY, Work, sample_files};
use super::model::{EntityCfg, Level, LevelSpec};
use super::resolve::{Item, ItemKind};
use crate::config::ConfigError;

const HEADER: &str = "# AI情報制御設定 (seed 004). Written by kakeai; the previous version is kept as visibility.yaml.bak.\n# Levels: 0 完全秘匿 · 1 認識のみ · 2 内容認識 · 3 使用可能. Later saves edit only the values that change.\n";

/// The visibility.yaml key that names `section` (after NFKC), else the heading's own name.
fn section_key(cfg: &EntityCfg, section: &str) -> String {
    let want = super::markup::norm_name(section);
    cfg.sections
        .keys()
        .find(|k| super::markup::norm_name(k) == want)
        .cloned()
        .unwrap_or_else(|| section.to_string())
}

impl Work {
    fn cfg_mut(&mut self, item: &Item) -> &mut EntityCfg {
        let stem = self
            .entity(&item.entity_type, &item.entity_name)
            .map(|e| e.stem.clone());
        let ents = self
            .visibility
            .entities
            .entry(item.entity_type.clone())
            .or_default();
        let key = match stem {
            Some(s) if !ents.contains_key(&item.entity_name) && ents.contains_key(&s) => s,
            _ => {
                // An existing entry spelled differently (matched after NFKC), else a new one.
                let n = super::markup::norm_name(&item.entity_name);
                let st = stem.as_deref().map(super::markup::norm_name);
                ents.keys()
                    .find(|k| {
                        let k = super::markup::norm_name(k);
                        k == n || Some(&k) == st.as_ref()
                    })
                    .cloned()
                    .unwrap_or_else(|| item.entity_name.clone())
            }
        };
        ents.entry(key).or_default()
    }

    /// Sets `item`'s level, for one reader (an override) or for everyone.
    pub fn set_level(&mut self, item: &Item, reader: Option<&str>, level: Level) {
        let common = self
            .items(None)
            .into_iter()
            .find(|i| i.key == item.key)
            .map(|i| i.level)
            .unwrap_or(Level::HIDDEN);
        let apply = |spec: &mut LevelSpec| match reader {
            Some(r) => {
                spec.readers.insert(r.to_string(), level.get() as i64);
            }
            None => spec.level = level.get() as i64,
        };
        let base = LevelSpec::plain(common);
        let cfg = self.cfg_mut(item);
        match item.kind {
            ItemKind::Section => {
                // The entry the section already has (its name matched after NFKC), else a new one.
                let name = section_key(cfg, &item.section_name);
                apply(cfg.sections.entry(name).or_insert(base))
            }
            ItemKind::Foreshadowing => apply(cfg.visibility.get_or_insert(base)),
            ItemKind::Secret => {
                let id = item.secret_id.as_deref().unwrap_or_default();
                if let Some(s) = cfg.secrets.iter_mut().find(|s| s.id == id) {
                    match reader {
                        Some(r) => {
                            s.readers.insert(r.to_string(), level.get() as i64);
                        }
                        None => s.visibility = Some(level.get() as i64),
                    }
                }
            }
        }
    }

    /// Removes a reader override so the reader follows the common level again.
    pub fn clear_reader(&mut self, item: &Item, reader: &str) {
        let cfg = self.cfg_mut(item);
        match item.kind {
            ItemKind::Section => {
                let name = section_key(cfg, &item.section_name);
                if let Some(s) = cfg.sections.get_mut(&name) {
                    s.readers.remove(reader);
                }
            }
            ItemKind::Foreshadowing => {
                if let Some(s) = cfg.visibility.as_mut() {
                    s.readers.remove(reader);
                }
            }
            ItemKind::Secret => {
                let id = item.secret_id.as_deref().unwrap_or_default();
                if let Some(s) = cfg.secrets.iter_mut().find(|s| s.id == id) {
                    s.readers.remove(reader);
                }
            }
        }
    }

    /// Writes visibility.yaml atomically. A work that is not on disk (the embedded sample) is
    /// written out to `fallback_dir` first and continues from there.
    pub fn save(&mut self, fallback_dir: Option<&Path>) -> Result<PathBuf, ConfigError> {
        self.save_kept(fallback_dir).map(|(p, _)| p)
    }

    /// `save`, and whether the writer's file was edited in place (comments and key order
    /// kept, yaml_edit.rs) rather than written whole.
    pub fn save_kept(
        &mut self,
        fallback_dir: Option<&Path>,
    ) -> Result<(PathBuf, bool), ConfigError> {
        if !self.on_disk {
            let dir = fallback_dir.ok_or_else(|| ConfigError::Invalid {
                path: self.root.clone(),
                at: None,
                key: None,
                message:
                    "the bundled sample vault cannot be saved in place and no data folder is known"
                        .into(),
            })?;
            materialize(dir)?;
            self.root = dir.to_path_buf();
            self.on_disk = true;
        }
        let path = self.visibility_path();
        let yaml = serde_norway::to_string(&self.visibility).map_err(|e| ConfigError::Invalid {
            path: path.clone(),
            at: None,
            key: None,
            message: e.to_string(),
        })?;
        let kept = std::fs::read_to_string(&path)
            .ok()
            .and_then(|orig| keep_format(&orig, &self.visibility));
        let was_kept = kept.is_some();
        let text = kept.unwrap_or_else(|| format!("{HEADER}{yaml}"));
        write_atomic(&path, &text)?;
        Ok((path, was_kept))
    }
}

/// The writer's `original` text edited to hold `new`, checked by reading it back; None when the
/// edit cannot be placed (the file is then written whole).
pub fn keep_format(original: &str, new: &super::model::VisibilityFile) -> Option<String> {
    let old: super::model::VisibilityFile = serde_norway::from_str(original).ok()?;
    let (old_v, new_v) = (
        serde_norway::to_value(&old).ok()?,
        serde_norway::to_value(new).ok()?,
    );
    let edited = super::yaml_edit::edit(original, &old_v, &new_v)?;
    let back: super::model::VisibilityFile = serde_norway::from_str(&edited).ok()?;
    (back == *new).then_some(edited)
}

/// Writes the bundled sample into `dir`, leaving files that already exist alone.
pub fn materialize(dir: &Path) -> Result<(), ConfigError> {
    // The writer's secrets: a vault made here is private (0700), as the data dir is.
    crate::config::create_private_dirs(dir).map_err(|e| ConfigError::Io {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    for (rel, text) in sample_files() {
        let p = dir.join(rel);
        if p.exists() {
            continue;
        }
        let io = |e: std::io::Error| ConfigError::Io {
            path: p.clone(),
            message: e.to_string(),
        };
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(&p, text).map_err(io)?;
    }
    Ok(())
}

/// temp file in the same folder → fsync → keep the old file as .bak → rename over.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), ConfigError> {
    let io = |e: std::io::Error| ConfigError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| VISIBILITY.into());
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let mut f = std::fs::File::create(&tmp).map_err(io)?;
    f.write_all(text.as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)?;
    drop(f);
    if path.exists() {
        std::fs::copy(path, dir.join(format!("{name}.bak"))).map_err(io)?;
    }
    std::fs::rename(&tmp, path).map_err(io)?;
    Ok(())
}
