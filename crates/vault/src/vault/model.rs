//! The visibility model as written in `_ai_control/visibility.yaml` (seed 004 §3.1): levels,
//! per-reader overrides, sections and secrets. Levels are read as plain integers and checked
//! afterwards, so a bad value is reported with the entity and section it belongs to.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

pub use super::leak::Importance;

/// Seed 004 §2.1: 0 完全秘匿, 1 認識のみ, 2 内容認識, 3 使用可能.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Level(u8);

impl Level {
    pub const HIDDEN: Level = Level(0);
    pub const AWARE: Level = Level(1);
    pub const KNOW: Level = Level(2);
    pub const USE: Level = Level(3);

    pub fn new(n: i64) -> Option<Level> {
        (0..=3).contains(&n).then_some(Level(n as u8))
    }
    pub fn get(self) -> u8 {
        self.0
    }
    pub fn name_ja(self) -> &'static str {
        match self.0 {
            0 => "完全秘匿",
            1 => "認識のみ",
            2 => "内容認識",
            _ => "使用可能",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A level as written: `2`, or `{level: 2, readers: {ayu: 2, yana: 0}}` so one sister may know
/// what the other does not. Values stay raw integers until `Vault::validate` names bad ones.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LevelSpec {
    pub level: i64,
    pub readers: BTreeMap<String, i64>,
}

impl LevelSpec {
    pub fn plain(level: Level) -> LevelSpec {
        LevelSpec {
            level: level.0 as i64,
            readers: BTreeMap::new(),
        }
    }

    /// The raw level this reader gets (its override, else the common level).
    pub fn raw_for(&self, reader: Option<&str>) -> i64 {
        reader
            .and_then(|r| self.readers.get(r))
            .copied()
            .unwrap_or(self.level)
    }

    /// Every raw value with a label for error messages.
    pub fn values(&self) -> impl Iterator<Item = (Option<&str>, i64)> {
        std::iter::once((None, self.level))
            .chain(self.readers.iter().map(|(r, v)| (Some(r.as_str()), *v)))
    }
}

/// The message of a value that is not a level; `yaml_error` finds its line by it.
pub(crate) const LEVEL_EXPECTED: &str =
    "expected a level 0–3, or {level: N, readers: {yana: N, ayu: N}}";

/// A level number as typed: `2`, or text that reads as one after NFKC — `０` or `"２"` typed
/// with the IME on (issue 26 §3).
#[derive(Deserialize)]
#[serde(untagged)]
enum RawNum {
    Num(i64),
    Text(String),
}

impl RawNum {
    fn get(self) -> Option<i64> {
        match self {
            RawNum::Num(n) => Some(n),
            RawNum::Text(t) => {
                use unicode_normalization::UnicodeNormalization;
                let n: String = t.nfkc().collect();
                n.trim().parse().ok()
            }
        }
    }
}

/// The message of a number field that holds no number; `yaml_error` finds its line by it.
pub(crate) const NUMBER_EXPECTED: &str = "expected a whole number (full-width digits are fine)";

fn not_a_number<E: de::Error>() -> E {
    E::custom(NUMBER_EXPECTED)
}

/// An integer field that also takes text reading as one after NFKC (`０`, `"３"`).
fn nfkc_int<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    RawNum::deserialize(d)?.get().ok_or_else(not_a_number)
}

pub(crate) fn nfkc_opt_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    match Option::<RawNum>::deserialize(d)? {
        Some(n) => n.get().map(Some).ok_or_else(not_a_number),
        None => Ok(None),
    }
}

pub(crate) fn nfkc_int_map<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, i64>, D::Error> {
    let raw = BTreeMap::<String, RawNum>::deserialize(d)?;
    raw.into_iter()
        .map(|(k, v)| v.get().map(|v| (k, v)).ok_or_else(not_a_number))
        .collect()
}

impl<'de> Deserialize<'de> for LevelSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Num(RawNum),
            Map {
                level: RawNum,
                #[serde(default)]
                readers: BTreeMap<String, RawNum>,
            },
        }
        let bad = || de::Error::custom(LEVEL_EXPECTED);
        match Raw::deserialize(d) {
            Ok(Raw::Num(n)) => Ok(LevelSpec {
                level: n.get().ok_or_else(bad)?,
                readers: BTreeMap::new(),
            }),
            Ok(Raw::Map { level, readers }) => {
                let mut out = BTreeMap::new();
                for (r, v) in readers {
                    out.insert(r, v.get().ok_or_else(bad)?);
                }
                Ok(LevelSpec {
                    level: level.get().ok_or_else(bad)?,
                    readers: out,
                })
            }
            Err(_) => Err(bad()),
        }
    }
}

impl Serialize for LevelSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.readers.is_empty() {
            return s.serialize_i64(self.level);
        }
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("level", &self.level)?;
        m.serialize_entry("readers", &self.readers)?;
        m.end()
    }
}

/// A forbidden keyword as written: `王家`, or `{word: 王家, reading: おうけ}` (a reading may be
/// a list) so its kana spellings (おうけ, オウケ, ｵｳｹ) are caught without a dictionary.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Keyword {
    pub word: String,
    pub readings: Vec<String>,
}

impl Keyword {
    pub fn plain(word: &str) -> Keyword {
        Keyword {
            word: word.into(),
            readings: Vec::new(),
        }
    }
}

/// The words of a keyword list.
pub fn words(list: &[Keyword]) -> Vec<String> {
    list.iter().map(|k| k.word.clone()).collect()
}

impl<'de> Deserialize<'de> for Keyword {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Reading {
            One(String),
            Many(Vec<String>),
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Word(String),
            Map {
                word: String,
                #[serde(default)]
                reading: Option<Reading>,
            },
        }
        match Raw::deserialize(d) {
            Ok(Raw::Word(word)) => Ok(Keyword::plain(&word)),
            Ok(Raw::Map { word, reading }) => Ok(Keyword {
                word,
                readings: match reading {
                    None => Vec::new(),
                    Some(Reading::One(r)) => vec![r],
                    Some(Reading::Many(v)) => v,
                }
                .into_iter()
                .filter(|r| !r.trim().is_empty())
                .collect(),
            }),
            Err(_) => Err(de::Error::custom(
                "expected a keyword, or {word: 王家, reading: おうけ}",
            )),
        }
    }
}

impl Serialize for Keyword {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.readings.as_slice() {
            [] => s.serialize_str(&self.word),
            [one] => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("word", &self.word)?;
                m.serialize_entry("reading", one)?;
                m.end()
            }
            many => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("word", &self.word)?;
                m.serialize_entry("reading", many)?;
                m.end()
            }
        }
    }
}

/// `_ai_control/visibility.yaml`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VisibilityFile {
    #[serde(default = "default_version")]
    pub version: String,
    /// Secure by default (seed §3.0): absent means 0.
    #[serde(default, deserialize_with = "nfkc_int")]
    pub default_visibility: i64,
    /// Entity type (`characters`, `world_settings`, `foreshadowing`) → entity name → settings.
    #[serde(default)]
    pub entities: BTreeMap<String, BTreeMap<String, EntityCfg>>,
    /// Leak review settings for this work (thresholds, result mapping); absent → defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<super::leak::ReviewConfig>,
    /// Words no text of the work may use, whoever the reader (seed 004 §6.2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden_keywords_global: Vec<Keyword>,
}

fn default_version() -> String {
    "1.0".into()
}

/// One entity's entry in visibility.yaml.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityCfg {
    /// A level for the whole entity (foreshadowing uses this; seed §3.1 `FS-001: visibility: 2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visibility: Option<LevelSpec>,
    /// Entity-specific template (seed §2.3 resolution step 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_id: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sections: BTreeMap<String, LevelSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<SecretCfg>,
}

/// A secret (seed §3.1 `secrets:`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretCfg {
    pub id: String,
    pub content: String,
    /// Absent: the work's default_visibility (secure by default).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "nfkc_opt_int"
    )]
    pub visibility: Option<i64>,
    /// Per-reader levels, e.g. `{ayu: 2, yana: 0}`.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        deserialize_with = "nfkc_int_map"
    )]
    pub readers: BTreeMap<String, i64>,
    #[serde(default)]
    pub importance: Importance,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forbidden_keywords: Vec<Keyword>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_expressions: Vec<String>,
    /// 1 (plain hints) – 10 (barely perceptible). Seed: 微細度.
    #[serde(default = "default_subtlety", deserialize_with = "nfkc_int")]
    pub subtlety: i64,
    /// What the Level 1 notice calls this secret (its {section_name}); default 一部の設定.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// The Level 1 {hint_text}, when the writer wants their own wording.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_id: Option<String>,
}

pub fn default_subtlety() -> i64 {
    5
}

impl SecretCfg {
    pub fn spec(&self, default: i64) -> LevelSpec {
        LevelSpec {
            level: self.visibility.unwrap_or(default),
            readers: self.readers.clone(),
        }
    }
}

/// The entity types of seed §3 and the folder each lives in.
pub const ENTITY_TYPES: [(&str, &str); 3] = [
    ("characters", "characters"),
    ("world_settings", "world_settings"),
    ("foreshadowing", "_foreshadowing"),
];

pub fn folder_of(entity_type: &str) -> Option<&'static str> {
    ENTITY_TYPES
        .iter()
        .find(|(t, _)| *t == entity_type)
        .map(|(_, f)| *f)
}

/// Foreshadowing lifecycle (seed §7.1) and the level each status recommends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsStatus {
    Registered,
    Planted,
    Reinforced,
    Revealed,
    Abandoned,
}

impl FsStatus {
    /// Inclusive range of recommended levels; None for abandoned (anything goes).
    pub fn recommended(self) -> Option<(u8, u8)> {
        match self {
            FsStatus::Registered => Some((0, 0)),
            FsStatus::Planted => Some((1, 2)),
            FsStatus::Reinforced => Some((2, 2)),
            FsStatus::Revealed => Some((3, 3)),
            FsStatus::Abandoned => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            FsStatus::Registered => "registered",
            FsStatus::Planted => "planted",
            FsStatus::Reinforced => "reinforced",
            FsStatus::Revealed => "revealed",
            FsStatus::Abandoned => "abandoned",
        }
    }
    pub const ALL: [FsStatus; 5] = [
        FsStatus::Registered,
        FsStatus::Planted,
        FsStatus::Reinforced,
        FsStatus::Revealed,
        FsStatus::Abandoned,
    ];
}
