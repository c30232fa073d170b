//! A variant file (TOML): what differs from the baseline — persona fields (`[characters.<id>]`),
//! duo prompt parts (`[duo]`), rules (`[rules]`, a rules.toml table), model/endpoint/sampling
//! (`[llm]`), the vault work (`[vault]`), plus the gate's settings (`must_not_regress`,
//! `significance`). Everything not named is the baseline's. Unknown keys and bad values are
//! errors with file:line:col.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::config::{ConfigError, load_toml_table, locate_key, merge_tables};
use crate::director::{RuleId, RuleSet};
use crate::duo::DuoConfig;
use crate::llm::LlmConfig;

const TOP_KEYS: [&str; 9] = [
    "name",
    "description",
    "significance",
    "must_not_regress",
    "characters",
    "duo",
    "rules",
    "llm",
    "vault",
];

/// A parsed variant: the raw tables, applied to a baseline by [`Variant::apply`].
#[derive(Debug, Clone)]
pub struct Variant {
    pub path: PathBuf,
    pub text: String,
    /// Short sha256 of the file's text (stored with every comparison).
    pub hash: String,
    pub name: String,
    pub significance: f64,
    pub must_not_regress: Vec<RuleId>,
    characters: Option<toml::Table>,
    duo: Option<toml::Table>,
    rules: Option<toml::Table>,
    llm: Option<toml::Table>,
    /// `[vault] dir`, `work`, `none`.
    pub vault_dir: Option<PathBuf>,
    pub vault_work: Option<String>,
    pub no_vault: bool,
}

/// The variant applied to a baseline.
#[derive(Debug, Clone)]
pub struct Applied {
    pub rules: RuleSet,
    pub duo: DuoConfig,
    pub llm: LlmConfig,
    /// Whether the variant names rules or persona fields (then A is re-judged under them).
    pub changes_rules: bool,
}

impl Variant {
    pub fn load(path: &Path) -> Result<Variant, ConfigError> {
        let text = crate::limits::read_string(path).map_err(|e| ConfigError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Variant::parse(path, &text)
    }

    /// The baseline itself (no changes): used for side A of an unpaired comparison.
    pub fn baseline() -> Variant {
        Variant::parse(Path::new("<baseline>"), "name = \"baseline\"\n").expect("empty variant")
    }

    pub fn parse(path: &Path, text: &str) -> Result<Variant, ConfigError> {
        let mut t = load_toml_table(path, text)?;
        let bad = |key: &str, message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            at: locate_key(text, key),
            key: Some(key.to_string()),
            message,
        };
        if let Some(k) = t.keys().find(|k| !TOP_KEYS.contains(&k.as_str())) {
            return Err(bad(
                k,
                format!("unknown key (expected one of {})", TOP_KEYS.join(", ")),
            ));
        }
        let name = match t.remove("name") {
            None => path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            Some(toml::Value::String(s)) => s,
            Some(_) => return Err(bad("name", "must be a string".into())),
        };
        t.remove("description");
        let significance = match t.remove("significance") {
            None => 0.05,
            Some(toml::Value::Float(f)) if f > 0.0 && f < 1.0 => f,
            Some(_) => {
                return Err(bad(
                    "significance",
                    "must be a number between 0 and 1 (e.g. 0.05)".into(),
                ));
            }
        };
        let mut must_not_regress = Vec::new();
        match t.remove("must_not_regress") {
            None => {}
            Some(toml::Value::Array(a)) => {
                for v in a {
                    let id = v
                        .as_str()
                        .and_then(|s| RuleId::ALL.iter().copied().find(|r| r.as_str() == s));
                    match id {
                        Some(r) => must_not_regress.push(r),
                        None => {
                            let known: Vec<&str> = RuleId::ALL.iter().map(|r| r.as_str()).collect();
                            return Err(bad(
                                "must_not_regress",
                                format!("unknown rule {v} (known: {})", known.join(", ")),
                            ));
                        }
                    }
                }
            }
            Some(_) => return Err(bad("must_not_regress", "must be a list of rule ids".into())),
        }
        let mut table = |key: &str| -> Result<Option<toml::Table>, ConfigError> {
            match t.remove(key) {
                None => Ok(None),
                Some(toml::Value::Table(x)) => Ok(Some(x)),
                Some(_) => Err(bad(key, "must be a table".into())),
            }
        };
        let characters = table("characters")?;
        let duo = table("duo")?;
        let rules = table("rules")?;
        let llm = table("llm")?;
        let mut vault = table("vault")?.unwrap_or_default();
        let vault_dir = match vault.remove("dir") {
            None => None,
            Some(toml::Value::String(s)) => Some(resolve(path, &s)),
            Some(_) => return Err(bad("vault.dir", "must be a path".into())),
        };
        let vault_work = match vault.remove("work") {
            None => None,
            Some(toml::Value::String(s)) => Some(s),
            Some(_) => return Err(bad("vault.work", "must be a string".into())),
        };
        let no_vault = match vault.remove("none") {
            None => false,
            Some(toml::Value::Boolean(b)) => b,
            Some(_) => return Err(bad("vault.none", "must be true or false".into())),
        };
        if let Some(k) = vault.keys().next() {
            return Err(bad(
                &format!("vault.{k}"),
                "unknown key (expected dir, work, none)".into(),
            ));
        }
        // Unknown keys anywhere in the sections: checked against the baseline's own tables.
        let base_rules = RuleSet::builtin()?;
        let sections: [(&str, &Option<toml::Table>, toml::Table); 4] = [
            ("characters", &characters, {
                let mut t = to_table(&*base_rules.data, path)?;
                match t.remove("characters") {
                    Some(toml::Value::Table(c)) => c,
                    _ => toml::Table::new(),
                }
            }),
            ("duo", &duo, to_table(&DuoConfig::builtin()?, path)?),
            ("rules", &rules, {
                // `[severity]` is empty (so unwritten) in the built-in rules; its keys are
                // checked when the rules are built (rule names, protected rules).
                let mut t = to_table(&*base_rules.data, path)?;
                t.entry("severity")
                    .or_insert(toml::Value::Table(toml::Table::new()));
                t
            }),
            ("llm", &llm, {
                let mut t = to_table(&LlmConfig::default(), path)?;
                for k in ["api", "system_role", "embed_model"] {
                    t.entry(k).or_insert(toml::Value::String(String::new()));
                }
                t
            }),
        ];
        for (name, over, base) in sections {
            if let Some(over) = over
                && let Some(k) = unknown_key(over, &base, name)
            {
                return Err(bad(&k, "unknown key".into()));
            }
        }
        let hash = Sha256::digest(text.as_bytes())
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect();
        let v = Variant {
            path: path.to_path_buf(),
            text: text.to_string(),
            hash,
            name,
            significance,
            must_not_regress,
            characters,
            duo,
            rules,
            llm,
            vault_dir,
            vault_work,
            no_vault,
        };
        // Fail early: a variant that cannot be applied to the built-in baseline is bad input.
        let base = (
            RuleSet::builtin()?,
            DuoConfig::builtin()?,
            LlmConfig::default(),
        );
        v.apply(&base.0, &base.1, &base.2)?;
        Ok(v)
    }

    /// Baseline ⊕ this variant.
    pub fn apply(
        &self,
        rules: &RuleSet,
        duo: &DuoConfig,
        llm: &LlmConfig,
    ) -> Result<Applied, ConfigError> {
        let changes_rules = self.rules.is_some() || self.characters.is_some();
        let rules = if changes_rules {
            let mut base = to_table(&*rules.data, &self.path)?;
            if let Some(r) = &self.rules {
                merge_tables(&mut base, r.clone());
            }
            if let Some(c) = &self.characters {
                let mut w = toml::Table::new();
                w.insert("characters".into(), toml::Value::Table(c.clone()));
                merge_tables(&mut base, w);
            }
            RuleSet::from_table(base).map_err(|e| self.relocate(e, &["rules.", ""]))?
        } else {
            rules.clone()
        };
        let duo = match &self.duo {
            Some(d) => {
                let mut base = to_table(duo, &self.path)?;
                merge_tables(&mut base, d.clone());
                crate::config::from_table::<DuoConfig>(base, &self.path)
                    .map_err(|e| self.relocate(e, &["duo."]))?
            }
            None => duo.clone(),
        };
        let llm = match &self.llm {
            Some(l) => {
                let mut base = to_table(llm, &self.path)?;
                merge_tables(&mut base, l.clone());
                crate::config::from_table::<LlmConfig>(base, &self.path)
                    .map_err(|e| self.relocate(e, &["llm."]))?
            }
            None => llm.clone(),
        };
        if duo.max_attempts == 0 || duo.max_turns == 0 {
            return Err(ConfigError::Invalid {
                path: self.path.clone(),
                at: locate_key(&self.text, "duo.max_attempts"),
                key: Some("duo".into()),
                message: "max_turns and max_attempts must be at least 1".into(),
            });
        }
        Ok(Applied {
            rules,
            duo,
            llm,
            changes_rules,
        })
    }

    /// An error from a merged table, pointed at the variant file (the key under its section).
    fn relocate(&self, e: ConfigError, prefixes: &[&str]) -> ConfigError {
        match e {
            ConfigError::Invalid {
                key, message, at, ..
            } => {
                let found = key.as_deref().and_then(|k| {
                    prefixes
                        .iter()
                        .find_map(|p| locate_key(&self.text, &format!("{p}{k}")))
                });
                ConfigError::Invalid {
                    path: self.path.clone(),
                    at: found.or(at).or(Some((1, 1))),
                    key,
                    message,
                }
            }
            e => e,
        }
    }
}

fn to_table<T: serde::Serialize>(v: &T, path: &Path) -> Result<toml::Table, ConfigError> {
    toml::Table::try_from(v).map_err(|e| ConfigError::Invalid {
        path: path.to_path_buf(),
        at: None,
        key: None,
        message: e.to_string(),
    })
}

/// The first key of `over` (dotted, under `prefix`) that `base` does not have; maps the
/// baseline holds empty (`llm.models`) take any key.
fn unknown_key(over: &toml::Table, base: &toml::Table, prefix: &str) -> Option<String> {
    for (k, v) in over {
        let key = format!("{prefix}.{k}");
        match (base.get(k), v) {
            (None, _) => return Some(key),
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) if !b.is_empty() => {
                if let Some(x) = unknown_key(o, b, &key) {
                    return Some(x);
                }
            }
            _ => {}
        }
    }
    None
}

/// A path in the variant file, relative to the file's folder.
fn resolve(file: &Path, p: &str) -> PathBuf {
    let p = PathBuf::from(p);
    if p.is_absolute() {
        return p;
    }
    file.parent().map(|d| d.join(&p)).unwrap_or(p)
}

#[cfg(test)]
#[path = "variant_tests.rs"]
mod tests;
