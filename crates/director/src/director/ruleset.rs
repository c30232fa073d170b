//! The Director's rules as data: embedded defaults (assets/rules, assets/characters), merged
//! with the user's rules file, hashed into a version, and compiled into one matcher per speaker.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::lexicon::Lexicon;
pub use super::rules::living::{LivingRule, VerbStem};
use crate::config::{ConfigError, load_toml_table, merge_tables};

const DIRECTOR_TOML: &str = include_str!("../../../../assets/rules/director.toml");
const YANA_TOML: &str = include_str!("../../../../assets/characters/yana.toml");
const AYU_TOML: &str = include_str!("../../../../assets/characters/ayu.toml");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToneMode {
    Markers,
    Violations,
}

/// A rule's severity as the rules file's `[severity]` table sets it (what `kakeai tune`
/// proposes): `off` shows its findings as INFO (they ask for nothing), `warn` lowers its RETRY
/// to WARN, `retry` raises its WARN to RETRY. Rules that guard the never-leak promise may only
/// be raised (see [`PROTECTED`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Off,
    Warn,
    Retry,
}

impl Severity {
    /// The status a finding of a rule at this severity carries.
    pub fn apply(self, s: super::Status) -> super::Status {
        use super::Status;
        match (self, s) {
            (Severity::Off, Status::Warn | Status::Retry | Status::Modify) => Status::Info,
            (Severity::Warn, Status::Retry) => Status::Warn,
            (Severity::Retry, Status::Warn) => Status::Retry,
            (_, s) => s,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Off => "off",
            Severity::Warn => "warn",
            Severity::Retry => "retry",
        }
    }
}

/// Rules whose RETRY keeps a secret, the prompt or a forbidden word from being said: a rules
/// file may raise them but never lower or switch them off.
pub const PROTECTED: [super::RuleId; 6] = [
    super::RuleId::Leak,
    super::RuleId::PromptLeak,
    super::RuleId::PromptEcho,
    super::RuleId::ForbiddenWord,
    super::RuleId::Empty,
    super::RuleId::TokenLimit,
];

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinesRule {
    pub warn: usize,
    pub retry: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScatterRule {
    pub retry_sentences: usize,
    pub retry_topics: usize,
    pub warn_sentences: usize,
    pub warn_topics: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PraiseRule {
    pub evaluation_words: Vec<String>,
    pub partner_refs: Vec<String>,
    pub affirmation_words: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingRule {
    pub phrases: Vec<String>,
    #[serde(default)]
    pub living: LivingRule,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContradictionRule {
    pub adverbs: Vec<String>,
    pub negating_prefixes: Vec<String>,
    pub negations: Vec<String>,
    pub within: usize,
    pub question_tails: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptLeakRule {
    pub markers: Vec<String>,
    pub speaker_labels: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopicLoopRule {
    pub repeat_in_line: usize,
    pub turns: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EarlyShiftRule {
    pub min_turns: usize,
}

/// What may follow a tone ending that is not at the sentence end (seed 001 §4.2: the body
/// *contains* the ending): 雨かなって思った. The follower must itself end a word.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToneEndingsRule {
    pub followers: Vec<String>,
    #[serde(default)]
    pub question_marks: Vec<String>,
}

/// `language`: a line that is not mostly Japanese → RETRY.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LanguageRule {
    /// Lines with fewer letters (kana, kanji, Latin …) outside quotes are not judged.
    pub min_letters: usize,
    /// Japanese letters (kana, kanji) as a share of all letters below this → RETRY.
    pub min_japanese_ratio: f64,
}

impl Default for LanguageRule {
    fn default() -> Self {
        LanguageRule {
            min_letters: 6,
            min_japanese_ratio: 0.5,
        }
    }
}

/// `prompt_echo`: a line that reads back the prompt that produced it → RETRY.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptEchoRule {
    /// Char n-gram size.
    pub ngram: usize,
    /// A run of at least this many chars found verbatim in the prompt's instructions → RETRY.
    pub min_run: usize,
    /// Or: at least this share of the line's n-grams found there (lines of ≥ `min_run` chars).
    pub min_coverage: f64,
}

impl Default for PromptEchoRule {
    fn default() -> Self {
        PromptEchoRule {
            ngram: 4,
            min_run: 10,
            min_coverage: 0.5,
        }
    }
}

/// The LLM judge's mean-score thresholds (seed 001 §7.1).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeRule {
    /// Mean below this → RETRY.
    pub retry_below: f64,
    /// Mean at or above this → PASS; between the two → WARN.
    pub pass_from: f64,
    /// Few-shot examples from the team's gold-labelled lines (`kakeai tune` proposes them);
    /// shown to the judge before the line it scores. Empty: left out of the version hash.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<JudgeExample>,
}

/// One line the team adjudicated, as the judge sees it in its prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgeExample {
    /// Character id of the speaker.
    pub speaker: String,
    /// The partner's line before it, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partner_last: Option<String>,
    /// The line (personal data masked).
    pub text: String,
    /// The gold label: usable as it is, or to be regenerated.
    pub usable: bool,
    /// Where it comes from (`run 12 turn 4`), for the reader of the rules file.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PraisePolicy {
    Allow,
    Forbid,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum StyleRule {
    /// At most `max_sentences` sentences and at least one ！ or ？ (やな).
    Exclaim { max_sentences: usize },
    /// At least `min_count` sentence-final polite endings (あゆ).
    Polite {
        min_count: usize,
        endings: Vec<String>,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Violations {
    pub endings: Vec<String>,
    pub words: Vec<String>,
    /// More ！ than this → WARN; 0 disables.
    pub max_exclamations: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToneRule {
    pub endings: Vec<String>,
    pub vocab: Vec<String>,
    pub style: StyleRule,
    pub hint: String,
    pub violations: Violations,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ForbiddenWord {
    pub word: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Character {
    pub id: String,
    pub display_name: String,
    pub aliases: Vec<String>,
    pub partner: String,
    #[serde(default)]
    pub role: String,
    #[serde(default)]
    pub speech_style: String,
    #[serde(default)]
    pub relationship: String,
    pub address_partner: Vec<String>,
    #[serde(default)]
    pub examples: Vec<String>,
    /// Things the persona must not do, told to the model in its prompt.
    #[serde(default)]
    pub must_not: Vec<String>,
    /// Her part at each hook depth (DISCOVER, SURFACE, WHY, EXPAND), told as topic guidance.
    #[serde(default)]
    pub depth_roles: Vec<String>,
    pub praise: PraisePolicy,
    pub tone: ToneRule,
    #[serde(default)]
    pub forbidden_words: Vec<ForbiddenWord>,
    /// Her line in a duo run in place of a committed line that must not travel on: a line the
    /// leak review rejected is committed as this (marked), and later prompts carry this instead
    /// of any RETRY line committed because the attempts ran out. Empty: nothing in its place.
    #[serde(default)]
    pub fallback: String,
}

/// The effective rules (what gets hashed into the version).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleData {
    pub tone_mode: ToneMode,
    pub lines: LinesRule,
    pub scatter: ScatterRule,
    pub praise: PraiseRule,
    pub setting: SettingRule,
    pub contradiction: ContradictionRule,
    pub prompt_leak: PromptLeakRule,
    pub topic_loop: TopicLoopRule,
    pub early_topic_shift: EarlyShiftRule,
    #[serde(default)]
    pub tone_endings: ToneEndingsRule,
    #[serde(default)]
    pub language: LanguageRule,
    #[serde(default)]
    pub prompt_echo: PromptEchoRule,
    pub judge: JudgeRule,
    /// Per-rule severity (`[severity] scatter = "warn"`); empty keeps every rule as written
    /// (and out of the version hash, so existing versions stay the same).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub severity: std::collections::BTreeMap<super::RuleId, Severity>,
    /// Keyed by character id; a BTreeMap keeps the hash stable.
    pub characters: std::collections::BTreeMap<String, Character>,
}

/// Rules plus their version and compiled matchers. Cheap to clone (Arc inside).
#[derive(Clone)]
pub struct RuleSet {
    pub data: Arc<RuleData>,
    pub version: String,
    /// One matcher per character id, compiled on first use (off the start-up path) and shared
    /// by every clone.
    lexicons: Arc<Vec<(String, OnceLock<Lexicon>)>>,
}

impl std::fmt::Debug for RuleSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuleSet")
            .field("version", &self.version)
            .finish()
    }
}

/// Where the user's rules override lives: $KAKEAI_CONFIG_DIR/rules.toml or the XDG config dir.
pub fn user_rules_path() -> Option<PathBuf> {
    crate::config::config_dir().map(|d| d.join("rules.toml"))
}

/// The overlay of proposals accepted in the workbench's tune section, loaded after
/// rules.toml: `rules.tune.toml` beside it.
pub fn tune_overlay_path() -> Option<PathBuf> {
    crate::config::config_dir().map(|d| d.join("rules.tune.toml"))
}

impl RuleSet {
    /// Embedded defaults only; parsed once per process, later calls share it.
    pub fn builtin() -> Result<RuleSet, ConfigError> {
        static BUILTIN: OnceLock<RuleSet> = OnceLock::new();
        if let Some(r) = BUILTIN.get() {
            return Ok(r.clone());
        }
        let r = RuleSet::from_table(default_table()?)?;
        Ok(BUILTIN.get_or_init(|| r).clone())
    }

    /// Defaults ⊕ the user's rules.toml ⊕ the accepted tune overlay (rules.tune.toml), each if
    /// present, ⊕ `extra` (e.g. `--rules PATH`).
    pub fn load(extra: Option<&Path>) -> Result<RuleSet, ConfigError> {
        let mut table = default_table()?;
        // ~/.config/kakeai/characters/<id>.toml overrides (or adds) one character.
        for (path, text) in user_character_files()? {
            let Some(id) = path
                .file_stem()
                .and_then(|s| s.to_str())
                .map(str::to_string)
            else {
                continue;
            };
            let user = load_toml_table(&path, &text)?;
            let mut wrapped = toml::Table::new();
            let mut chars = toml::Table::new();
            chars.insert(id, toml::Value::Table(user));
            wrapped.insert("characters".into(), toml::Value::Table(chars));
            merge_tables(&mut table, wrapped);
        }
        let mut sources: Vec<(PathBuf, String)> = Vec::new();
        if let Some(p) = user_rules_path().filter(|p| p.exists()) {
            sources.push(read(&p)?);
        }
        if let Some(p) = tune_overlay_path().filter(|p| p.exists()) {
            sources.push(read(&p)?);
        }
        if let Some(p) = extra {
            sources.push(read(p)?);
        }
        for (path, text) in &sources {
            let user = load_toml_table(path, text)?;
            merge_tables(&mut table, user);
        }
        RuleSet::from_table(table).map_err(|e| match sources.last() {
            Some((path, text)) => crate::config::relocate(e, path, text),
            None => e,
        })
    }

    pub fn from_table(table: toml::Table) -> Result<RuleSet, ConfigError> {
        let data: RuleData = crate::config::from_table(table, Path::new("<rules>"))?;
        RuleSet::from_data(data)
    }

    pub fn from_data(data: RuleData) -> Result<RuleSet, ConfigError> {
        super::words::check(&data)?;
        for (rule, sev) in &data.severity {
            if PROTECTED.contains(rule) && *sev != Severity::Retry {
                return Err(ConfigError::Invalid {
                    path: PathBuf::from("<rules>"),
                    at: None,
                    key: Some(format!("severity.{rule}")),
                    message: format!(
                        "`{rule}` guards what must never be said: it can be raised, never set to {}",
                        sev.as_str()
                    ),
                });
            }
        }
        for (id, c) in &data.characters {
            if !data.characters.contains_key(&c.partner) {
                return Err(ConfigError::Invalid {
                    path: PathBuf::from("<rules>"),
                    at: None,
                    key: Some(format!("characters.{id}.partner")),
                    message: format!("unknown partner `{}`", c.partner),
                });
            }
        }
        let canonical = serde_json::to_string(&data).unwrap_or_default();
        let digest = Sha256::digest(canonical.as_bytes());
        let version: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        let lexicons = data
            .characters
            .keys()
            .map(|id| (id.clone(), OnceLock::new()))
            .collect();
        Ok(RuleSet {
            data: Arc::new(data),
            version,
            lexicons: Arc::new(lexicons),
        })
    }

    /// A copy with a different tone mode (the `--tone-mode` flag).
    pub fn with_tone_mode(&self, mode: ToneMode) -> Result<RuleSet, ConfigError> {
        let mut data = (*self.data).clone();
        data.tone_mode = mode;
        RuleSet::from_data(data)
    }

    /// Finds a character by id, display name or alias.
    pub fn character(&self, speaker: &str) -> Option<&Character> {
        let s = speaker.trim();
        self.data
            .characters
            .values()
            .find(|c| c.id == s || c.display_name == s || c.aliases.iter().any(|a| a == s))
    }

    pub fn known_speakers(&self) -> String {
        self.data
            .characters
            .values()
            .map(|c| format!("{} ({})", c.id, c.display_name))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The character's matcher, compiled the first time it is asked for.
    pub fn lexicon(&self, id: &str) -> Option<&Lexicon> {
        let (_, cell) = self.lexicons.iter().find(|(i, _)| i == id)?;
        let c = self.data.characters.get(id)?;
        Some(
            cell.get_or_init(|| {
                Lexicon::compile(&self.data, c, self.data.characters.get(&c.partner))
            }),
        )
    }

    /// Compiles every character's matcher now (a background warm-up after the first frame).
    pub fn warm(&self) {
        for id in self.data.characters.keys() {
            self.lexicon(id);
        }
    }

    /// The effective rules as TOML (for `kakeai rules show` and the rules pane).
    pub fn to_toml(&self) -> String {
        toml::to_string(&*self.data).unwrap_or_default()
    }
}

fn user_character_files() -> Result<Vec<(PathBuf, String)>, ConfigError> {
    let Some(dir) = crate::config::config_dir().map(|d| d.join("characters")) else {
        return Ok(Vec::new());
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    paths.iter().map(|p| read(p)).collect()
}

fn read(path: &Path) -> Result<(PathBuf, String), ConfigError> {
    crate::limits::read_text(path, crate::limits::MAX_FILE_BYTES)
        .map(|t| (path.to_path_buf(), t))
        .map_err(ConfigError::from)
}

pub(crate) fn default_table() -> Result<toml::Table, ConfigError> {
    let mut table = load_toml_table(Path::new("assets/rules/director.toml"), DIRECTOR_TOML)?;
    let mut chars = toml::Table::new();
    for (name, text) in [("yana", YANA_TOML), ("ayu", AYU_TOML)] {
        let path = PathBuf::from(format!("assets/characters/{name}.toml"));
        chars.insert(
            name.to_string(),
            toml::Value::Table(load_toml_table(&path, text)?),
        );
    }
    table.insert("characters".into(), toml::Value::Table(chars));
    Ok(table)
}

#[cfg(test)]
#[path = "ruleset_tests.rs"]
mod tests;
