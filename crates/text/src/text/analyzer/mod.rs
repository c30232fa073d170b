//! The morphological analyzer seam: one trait, a lindera/IPADIC implementation and a
//! dictionary-free fallback, and the choice between them at start-up.

pub mod fallback;
pub mod lindera;

use std::fmt;

use serde::{Deserialize, Serialize};

/// Which analyzer produced an analysis; printed in every output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AnalyzerKind {
    #[serde(rename = "lindera-ipadic")]
    LinderaIpadic,
    #[serde(rename = "fallback")]
    Fallback,
}

impl AnalyzerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AnalyzerKind::LinderaIpadic => "lindera-ipadic",
            AnalyzerKind::Fallback => "fallback",
        }
    }
}

impl fmt::Display for AnalyzerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Coarse noun subclasses (IPADIC 名詞 subcategory 1) that the rules care about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NounKind {
    General,
    Proper,
    Pronoun,
    Number,
    /// 非自立 (の, こと, もの …) and 接尾.
    Dependent,
    /// 形容動詞語幹 (綺麗, 好き …): behaves like a conjugating word after は.
    AdjectivalStem,
    /// サ変接続 (勉強, 散歩 …).
    Sahen,
    /// 副詞可能 (今日, 最近 …).
    Adverbial,
    Other,
}

/// Coarse part of speech. The fallback analyzer only ever produces `Noun`, `Conjugating`,
/// `Particle`, `Symbol` and `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pos {
    Noun(NounKind),
    Verb,
    Adjective,
    AuxVerb,
    /// A conjugating word whose exact class the fallback cannot tell (kanji stem + okurigana).
    Conjugating,
    Particle,
    Adverb,
    Adnominal,
    Conjunction,
    Interjection,
    Prefix,
    Symbol,
    Other,
}

impl Pos {
    /// 活用語: verbs, adjectives, auxiliaries and adjectival nouns.
    pub fn is_conjugating(self) -> bool {
        matches!(
            self,
            Pos::Verb
                | Pos::Adjective
                | Pos::AuxVerb
                | Pos::Conjugating
                | Pos::Noun(NounKind::AdjectivalStem)
        )
    }

    /// A noun that can head a topic or be a conversation keyword.
    pub fn is_content_noun(self) -> bool {
        matches!(
            self,
            Pos::Noun(
                NounKind::General
                    | NounKind::Proper
                    | NounKind::Sahen
                    | NounKind::AdjectivalStem
                    | NounKind::Other
            )
        )
    }
}

/// One morpheme; `start..end` are char offsets into the text given to `tokenize`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Morpheme {
    pub start: usize,
    pub end: usize,
    pub surface: String,
    pub pos: Pos,
    /// The dictionary form (IPADIC base_form) of a verb, adjective or auxiliary — 住む for
    /// 住んで. Only lindera knows it; the fallback leaves it `None`.
    pub lemma: Option<String>,
}

/// A morphological analyzer. Implementations must be cheap to share across threads.
pub trait Analyzer: Send + Sync {
    fn kind(&self) -> AnalyzerKind;
    /// Splits `text` into morphemes. Never fails: an internal error yields the fallback's
    /// character-class segmentation.
    fn tokenize(&self, text: &str) -> Vec<Morpheme>;
    /// The kana reading of `text` from the dictionary (katakana, as IPADIC gives it), when this
    /// analyzer has readings and knows every word of it; `None` otherwise (the fallback never
    /// has one). Used once per keyword list, so it need not be fast.
    fn reading(&self, _text: &str) -> Option<String> {
        None
    }
    /// Every token of `text` with IPADIC's proper-noun kind (人名,姓 / 人名,名 / 組織 / 地域), or
    /// `Unknown` (未知語), `Common` (another noun) or `NotNoun`, as char offsets. Empty for an analyzer without a dictionary (the fallback): the caller then
    /// relies on its own rules and says so.
    fn proper_nouns(&self, _text: &str) -> Vec<ProperNoun> {
        Vec::new()
    }
    /// Whether a kana word (hiragana or katakana, no space) is the reading of a surname or a
    /// given name the dictionary knows (IPADIC's 人名,姓 / 人名,名 entries): the signal for
    /// names written in kana (きりたに, シズク). Always "no" for an analyzer without readings.
    fn name_reading(&self, _kana: &str) -> NameReading {
        NameReading::default()
    }
    /// Whether the dictionary has a proper-noun entry (名詞,固有名詞,…) written exactly
    /// `surface`, whichever reading the tokenizer chose in context: 白樺 is 名詞,一般 and
    /// 固有名詞,地域, 冷凍 is only a common word. Always "no" without a dictionary.
    fn has_proper_entry(&self, _surface: &str) -> bool {
        false
    }
}

/// What [`Analyzer::name_reading`] found: the kana read as a surname, a given name, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NameReading {
    pub surname: bool,
    pub given: bool,
    /// Also the reading of a word that is no proper noun (ゆき: 雪, はやし: 林, まあ).
    pub word: bool,
    /// Also the name of an organisation the dictionary writes in kana (トヨタ, ホンダ).
    /// Places are not counted: most surnames are one (よしだ, ふじい).
    pub company: bool,
    /// Also a common word the dictionary writes in kana itself (まあ, ほら, ありがとう) — not
    /// only one whose kanji reads so (翼 ツバサ, 氷室 ヒムロ).
    pub kana_word: bool,
}

impl NameReading {
    pub fn any(self) -> bool {
        self.surname || self.given
    }
}

/// What IPADIC says a proper noun names (名詞,固有名詞,<sub2>,<sub3>).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProperKind {
    /// 人名,姓
    Surname,
    /// 人名,名
    GivenName,
    /// 人名,一般
    Person,
    /// 組織
    Organization,
    /// 地域 (any subcategory)
    Place,
    /// 固有名詞,一般 and the rest
    Other,
    /// 未知語: a word the dictionary does not know (a katakana or latin run, a rare kanji).
    Unknown,
    /// A known noun that is no proper noun (会社, 天気, 今日).
    Common,
    /// A known word that is no noun (a particle, a verb, an adverb, a symbol).
    NotNoun,
}

/// One token of [`Analyzer::proper_nouns`]: char offsets `[start, end)` and its kind — a
/// proper noun's, or `Unknown` / `Common` / `NotNoun` for the other tokens, so a rule can tell
/// what stands beside a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProperNoun {
    pub start: usize,
    pub end: usize,
    pub kind: ProperKind,
}

impl ProperNoun {
    pub fn new(start: usize, end: usize, kind: ProperKind) -> ProperNoun {
        ProperNoun { start, end, kind }
    }
}

/// Which analyzer the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum AnalyzerChoice {
    /// lindera-ipadic when the dictionary is installed or can be built, else the fallback.
    #[default]
    Auto,
    /// lindera-ipadic or an error.
    Lindera,
    /// The dictionary-free fallback.
    Fallback,
}

/// Opens the analyzer. In `Auto`, a missing dictionary is built from MeCab IPADIC sources when
/// they are found (announced through `notify`, which goes to stderr); without sources the
/// fallback is used. `Lindera` turns every such problem into an error.
pub fn open(
    choice: AnalyzerChoice,
    notify: &mut dyn FnMut(&str),
) -> Result<std::sync::Arc<dyn Analyzer>, lindera::DictError> {
    use std::sync::Arc;
    if choice == AnalyzerChoice::Fallback {
        // Keyword readings still use the dictionary when there is one (`dictionary()`
        // honours KAKEAI_ANALYZER=fallback): the text rules' analyzer is a separate choice.
        return Ok(Arc::new(fallback::FallbackAnalyzer));
    }
    if let Some(Some(a)) = OPENED.get() {
        return Ok(a.clone());
    }
    let mut attempt = || -> Result<lindera::LinderaAnalyzer, lindera::DictError> {
        let dir =
            lindera::default_dict_dir().ok_or_else(|| lindera::DictError::SourcesNotFound {
                searched: lindera::candidate_source_dirs(),
            })?;
        if !lindera::is_installed(&dir) {
            let Some(src) = lindera::find_ipadic_sources() else {
                return Err(lindera::DictError::SourcesNotFound {
                    searched: lindera::candidate_source_dirs(),
                });
            };
            notify(&format!(
                "kakeai: building the IPADIC dictionary from {} into {} (one time, a few seconds)…",
                src.display(),
                dir.display()
            ));
            let report = lindera::build_dictionary(&src, &dir)?;
            notify(&format!(
                "kakeai: dictionary ready in {:.1} s ({} MB)",
                report.seconds,
                report.bytes_on_disk / 1_000_000
            ));
        }
        lindera::LinderaAnalyzer::load(&dir)
    };
    let opened: Result<Arc<dyn Analyzer>, _> = match attempt() {
        Ok(a) => Ok(Arc::new(a)),
        Err(e) if choice == AnalyzerChoice::Auto => {
            if !matches!(e, lindera::DictError::SourcesNotFound { .. }) {
                notify(&format!("kakeai: {e}; using the fallback analyzer"));
            }
            Ok(Arc::new(fallback::FallbackAnalyzer))
        }
        Err(e) => Err(e),
    };
    if let Ok(a) = &opened {
        // The first analyzer a command opens is the one keyword readings use too.
        let _ = OPENED.set((a.kind() == AnalyzerKind::LinderaIpadic).then(|| a.clone()));
    }
    opened
}

/// The analyzer the process opened first, when it has the IPADIC dictionary.
static OPENED: std::sync::OnceLock<Option<std::sync::Arc<dyn Analyzer>>> =
    std::sync::OnceLock::new();

/// The IPADIC analyzer for keyword readings, through the same path as every command's
/// analyzer ([`open`]): the one the command opened, else opened now — building the dictionary
/// from MeCab sources on first use exactly as `check` does (`KAKEAI_ANALYZER` is honoured;
/// progress goes to stderr). `None` when there is no dictionary and no sources, or the
/// fallback was chosen: readings then go unchecked and every review says so.
pub fn dictionary() -> Option<std::sync::Arc<dyn Analyzer>> {
    if let Some(a) = OPENED.get() {
        return a.clone();
    }
    let choice = match std::env::var("KAKEAI_ANALYZER").ok().as_deref() {
        Some("fallback") => AnalyzerChoice::Fallback,
        Some("lindera") => AnalyzerChoice::Lindera,
        _ => AnalyzerChoice::Auto,
    };
    // A failed (or declined) open leaves nothing to read from: remember that.
    if choice == AnalyzerChoice::Fallback || open(choice, &mut |m| crate::say!("{m}")).is_err() {
        let _ = OPENED.set(None);
    }
    OPENED.get().cloned().flatten()
}
