//! The lindera/IPADIC analyzer: finding MeCab IPADIC sources, building the lindera
//! dictionary from them at runtime, loading it (mmap) and mapping IPADIC parts of speech.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fs;
use std::io::{Read, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use ::lindera::dictionary::{
    DictionaryBuilder, Lattice, Metadata, Schema, WordId, load_fs_dictionary,
};
use ::lindera::mode::Mode;
use ::lindera::segmenter::Segmenter;
use serde::{Deserialize, Serialize};

use super::{Analyzer, AnalyzerKind, Morpheme, NameReading, NounKind, Pos, ProperKind, ProperNoun};

/// Written last by `build_dictionary`, so a directory without it is never a finished build.
const MARKER_FILE: &str = "kakeai-dict.json";
/// Bump when the way we build changes (metadata, char.def patch): older builds then read as
/// not installed and get rebuilt instead of silently differing.
const BUILD_RECIPE: u32 = 1;
/// Where MeCab IPADIC sources usually live (Debian/Ubuntu, source installs, Homebrew).
const SOURCE_DIRS: &[&str] = &[
    "/usr/share/mecab/dic/ipadic",
    "/usr/local/share/mecab/dic/ipadic",
    "/usr/lib/mecab/dic/ipadic",
    "/usr/local/lib/mecab/dic/ipadic",
    "/usr/share/mecab-ipadic",
    "/opt/homebrew/lib/mecab/dic/ipadic",
    "/opt/local/lib/mecab/dic/ipadic",
];
/// A thread-local lattice that grew past this many chars is shrunk back, so one huge
/// input does not pin its worst-case allocation for the life of the thread.
const LATTICE_KEEP_CHARS: usize = 4096;

#[derive(Debug, thiserror::Error)]
pub enum DictError {
    #[error(
        "no MeCab IPADIC sources found (looked in: {}). Install them with `apt-get install mecab-ipadic`, \
         or run `kakeai dict install --from DIR` (or set KAKEAI_IPADIC_SRC) with a directory \
         holding matrix.def, char.def, unk.def and the dictionary .csv files",
        display_paths(.searched)
    )]
    SourcesNotFound { searched: Vec<PathBuf> },
    #[error(
        "no IPADIC dictionary is installed at {}. Run `kakeai dict install` (needs \
         `apt-get install mecab-ipadic`) or `kakeai dict install --from DIR`",
        .0.display()
    )]
    NotInstalled(PathBuf),
    #[error(
        "building the IPADIC dictionary from {} failed: {message}. Check that the directory \
         holds intact MeCab IPADIC sources, or reinstall them (`apt-get install --reinstall mecab-ipadic`)",
        .dir.display()
    )]
    Build { dir: PathBuf, message: String },
    #[error(
        "loading the IPADIC dictionary at {} failed: {message}. It may be damaged or from an \
         incompatible version; rebuild it with `kakeai dict install`",
        .dir.display()
    )]
    Load { dir: PathBuf, message: String },
    #[error("file system error while handling the IPADIC dictionary: {0}")]
    Io(#[from] std::io::Error),
}

fn display_paths(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    shown.join(", ")
}

/// Where the built dictionary lives: `$KAKEAI_DATA_DIR/ipadic` if that variable is set,
/// else the platform data directory for kakeai plus `ipadic`. `None` if there is no home.
pub fn default_dict_dir() -> Option<PathBuf> {
    match std::env::var_os("KAKEAI_DATA_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir).join("ipadic")),
        _ => directories::ProjectDirs::from("", "", "kakeai")
            .map(|dirs| dirs.data_dir().join("ipadic")),
    }
}

/// The directories searched for MeCab IPADIC sources, in order.
pub fn candidate_source_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::with_capacity(SOURCE_DIRS.len() + 1);
    if let Some(dir) = std::env::var_os("KAKEAI_IPADIC_SRC").filter(|d| !d.is_empty()) {
        dirs.push(PathBuf::from(dir));
    }
    dirs.extend(SOURCE_DIRS.iter().map(PathBuf::from));
    dirs
}

/// The first candidate directory that holds complete MeCab IPADIC sources.
pub fn find_ipadic_sources() -> Option<PathBuf> {
    candidate_source_dirs()
        .into_iter()
        .find(|dir| is_valid_source_dir(dir))
}

/// True when `dir` has matrix.def, char.def, unk.def and at least one .csv file.
pub fn is_valid_source_dir(dir: &Path) -> bool {
    ["matrix.def", "char.def", "unk.def"]
        .iter()
        .all(|f| dir.join(f).is_file())
        && first_csv(dir).is_some()
}

fn first_csv(dir: &Path) -> Option<PathBuf> {
    fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_file() && p.extension().is_some_and(|x| x.eq_ignore_ascii_case("csv")))
}

/// Debian ships EUC-JP sources, but re-encoded UTF-8 copies exist too (lindera's own
/// download, mecab-ipadic-utf8 source trees). EUC-JP kana/kanji are never valid UTF-8,
/// so a UTF-8 check on a sample of a csv tells them apart.
fn detect_encoding(dir: &Path) -> &'static str {
    let mut sample = Vec::new();
    if let Some(file) = first_csv(dir).and_then(|p| fs::File::open(p).ok()) {
        let _ = file.take(64 * 1024).read_to_end(&mut sample);
    }
    match std::str::from_utf8(&sample) {
        Ok(_) => "UTF-8",
        // `error_len() == None`: the sample merely cut a UTF-8 sequence short.
        Err(e) if e.error_len().is_none() => "UTF-8",
        Err(_) => "EUC-JP",
    }
}

/// lindera's IPADIC metadata with the encoding of the sources at hand.
fn ipadic_metadata(encoding: &str) -> Metadata {
    let fields = |csv: &str| Schema::new(csv.split(',').map(String::from).collect());
    Metadata::new(
        "ipadic".into(),
        encoding.into(),
        -10000,
        0,
        0,
        "*".into(),
        true,
        false,
        // No ―→— / ～→〜 folding: decoded EUC-JP keeps U+2015 and U+FF5E, which is what
        // Windows IMEs type (and macOS for ―); unmatched variants end up as Symbol anyway.
        false,
        fields(
            "surface,left_context_id,right_context_id,cost,part_of_speech,\
             part_of_speech_subcategory_1,part_of_speech_subcategory_2,\
             part_of_speech_subcategory_3,conjugation_type,conjugation_form,base_form,\
             reading,pronunciation",
        ),
        fields("surface,part_of_speech,reading"),
    )
}

/// The marker written last into a finished build.
#[derive(Serialize, Deserialize)]
struct Marker {
    recipe: u32,
    /// lindera's on-disk format version; a mismatch means "rebuild", not "load garbage".
    format_version: u32,
    lindera_version: String,
    source_dir: PathBuf,
    encoding: String,
}

/// True when `dir` holds a complete dictionary built in the current lindera format.
pub fn is_installed(dir: &Path) -> bool {
    let Ok(bytes) = fs::read(dir.join(MARKER_FILE)) else {
        return false;
    };
    serde_json::from_slice::<Marker>(&bytes).is_ok_and(|m| {
        m.recipe == BUILD_RECIPE && m.format_version == ipadic_metadata("UTF-8").format_version
    }) && dir.join("metadata.json").is_file()
}

pub struct BuildReport {
    pub out_dir: PathBuf,
    pub source_dir: PathBuf,
    pub seconds: f64,
    pub bytes_on_disk: u64,
}

/// Builds the dictionary from `src` into a temporary sibling of `out`, then moves it into
/// place, replacing an old build. A crash mid-build leaves `out` untouched.
pub fn build_dictionary(src: &Path, out: &Path) -> Result<BuildReport, DictError> {
    if !is_valid_source_dir(src) {
        return Err(DictError::SourcesNotFound {
            searched: vec![src.to_path_buf()],
        });
    }
    let started = Instant::now();
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // The data dir on first use: private (0700), as every dir kakeai creates there.
    crate::config::create_private_dirs(&parent)?;
    let name = out
        .file_name()
        .map_or_else(|| "ipadic".into(), |n| n.to_string_lossy().into_owned());
    // pid + time keep concurrent builders (two processes, parallel tests) apart.
    let nonce = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let tag = format!("{}-{nonce}", std::process::id());
    let tmp = parent.join(format!(".{name}.building-{tag}"));
    let old = parent.join(format!(".{name}.old-{tag}"));
    let stage = parent.join(format!(".{name}.sources-{tag}"));

    let built = build_into(src, &stage, &tmp)
        .and_then(|()| swap_into_place(&tmp, out, &old).map_err(DictError::from));
    let _ = fs::remove_dir_all(&stage);
    if built.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    built?;
    Ok(BuildReport {
        out_dir: out.to_path_buf(),
        source_dir: src.to_path_buf(),
        seconds: started.elapsed().as_secs_f64(),
        bytes_on_disk: dir_size(out)?,
    })
}

/// Not atomic as a whole (a non-empty directory cannot be renamed over), but `out` is only
/// ever absent between two renames, and never half-written.
fn swap_into_place(tmp: &Path, out: &Path, old: &Path) -> std::io::Result<()> {
    let had_old = out.exists();
    if had_old {
        fs::rename(out, old)?;
    }
    if let Err(e) = fs::rename(tmp, out) {
        if had_old {
            let _ = fs::rename(old, out);
        }
        return Err(e);
    }
    // Readers that mmapped the old files keep them alive, so unlinking them is safe.
    let _ = fs::remove_dir_all(old);
    Ok(())
}

/// Copies the sources to `stage` with char.def fixed (see `patch_char_def`).
fn stage_sources(src: &Path, stage: &Path) -> std::io::Result<()> {
    fs::create_dir_all(stage)?;
    for entry in fs::read_dir(src)? {
        let path = entry?.path();
        let (Some(name), Some(ext)) = (path.file_name(), path.extension()) else {
            continue;
        };
        if !path.is_file() || !(ext == "csv" || ext == "def") {
            continue;
        }
        let dest = stage.join(name);
        if name == "char.def" {
            fs::write(&dest, patch_char_def(&fs::read(&path)?))?;
        } else if fs::hard_link(&path, &dest).is_err() {
            // Different file system (the usual case for /usr/share → home): copy.
            fs::copy(&path, &dest)?;
        }
    }
    Ok(())
}

/// IPADIC classes U+3000 as SYMBOL and relies on a "　" 記号,空白 word, which lindera's
/// builder drops (it trims surfaces), so "　「" became one 名詞,サ変接続 token. Making U+3000
/// its own SPACE class lets lindera skip it like an ASCII space. Also fixes IPADIC's
/// well-known typo 0x00D0 (Ð) for 0x00A0 (no-break space). The lines are ASCII, so a byte
/// replace works for EUC-JP and UTF-8 alike; lindera unions overlapping ranges.
fn patch_char_def(def: &[u8]) -> Vec<u8> {
    let mut out = def.to_vec();
    for (from, to) in [
        (&b"0x3000..0x303F"[..], &b"0x3001..0x303F"[..]),
        (b"0x00D0 SPACE", b"0x00A0 SPACE"),
    ] {
        if let Some(i) = out.windows(from.len()).position(|w| w == from) {
            out.splice(i..i + from.len(), to.iter().copied());
        }
    }
    out.extend_from_slice(b"\n0x3000 SPACE\n");
    out
}

fn build_into(src: &Path, stage: &Path, tmp: &Path) -> Result<(), DictError> {
    stage_sources(src, stage)?;
    let encoding = detect_encoding(src);
    let metadata = ipadic_metadata(encoding);
    let format_version = metadata.format_version;
    let build_err = |message: String| DictError::Build {
        dir: src.to_path_buf(),
        message,
    };
    // The builder may panic on malformed input; report that like any other build failure.
    match catch_unwind(|| DictionaryBuilder::new(metadata).build_dictionary(stage, tmp)) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(build_err(e.to_string())),
        Err(_) => return Err(build_err("the dictionary builder crashed".into())),
    }
    let marker = Marker {
        recipe: BUILD_RECIPE,
        format_version,
        lindera_version: ::lindera::get_version().to_string(),
        source_dir: src.to_path_buf(),
        encoding: encoding.to_string(),
    };
    let json = serde_json::to_vec_pretty(&marker).map_err(|e| build_err(e.to_string()))?;
    let mut file = fs::File::create(tmp.join(MARKER_FILE))?;
    file.write_all(&json)?;
    file.sync_all()?;
    Ok(())
}

fn dir_size(dir: &Path) -> std::io::Result<u64> {
    let mut total = 0;
    for entry in fs::read_dir(dir)? {
        let meta = entry?.metadata()?;
        total += if meta.is_dir() { 0 } else { meta.len() };
    }
    Ok(total)
}

thread_local! {
    /// One lattice per thread: `segment()` would allocate a fresh one on every call.
    static LATTICE: RefCell<Lattice> = RefCell::new(Lattice::default());
}

pub struct LinderaAnalyzer {
    segmenter: Segmenter,
    /// Each known word's kind for `proper_nouns`, read from its details once (0 = not yet):
    /// decoding the details' fields for every token of every message was a sixth of the PII
    /// masker's lindera path. One byte per word id, shared by every thread.
    kinds: Vec<AtomicU8>,
    /// Every person entry's reading (katakana) → bit 1 surname, bit 2 given name, bit 4 also
    /// a common word's, bit 16 a common word written in kana, bit 8 an organisation written
    /// in kana; read from the dictionary on first use (`name_reading`).
    name_readings: OnceLock<rustc_hash::FxHashMap<Box<str>, u8>>,
}

/// A proper-noun kind as stored in [`LinderaAnalyzer::kinds`] (never 0).
fn kind_code(k: ProperKind) -> u8 {
    match k {
        ProperKind::Surname => 1,
        ProperKind::GivenName => 2,
        ProperKind::Person => 3,
        ProperKind::Organization => 4,
        ProperKind::Place => 5,
        ProperKind::Other => 6,
        ProperKind::Unknown => 7,
        ProperKind::Common => 8,
        ProperKind::NotNoun => 9,
    }
}

fn kind_of_code(c: u8) -> Option<ProperKind> {
    Some(match c {
        1 => ProperKind::Surname,
        2 => ProperKind::GivenName,
        3 => ProperKind::Person,
        4 => ProperKind::Organization,
        5 => ProperKind::Place,
        6 => ProperKind::Other,
        7 => ProperKind::Unknown,
        8 => ProperKind::Common,
        9 => ProperKind::NotNoun,
        _ => return None,
    })
}

impl LinderaAnalyzer {
    /// Loads a built dictionary (memory-mapped). Fails cleanly on a missing, unfinished or
    /// damaged directory.
    pub fn load(dir: &Path) -> Result<Self, DictError> {
        if !is_installed(dir) {
            return Err(DictError::NotInstalled(dir.to_path_buf()));
        }
        let load_err = |message: String| DictError::Load {
            dir: dir.to_path_buf(),
            message,
        };
        // Damaged files should give lindera errors, but a panicking deserializer must not
        // take the program down with it.
        let dictionary = match catch_unwind(|| load_fs_dictionary(dir)) {
            Ok(Ok(d)) => d,
            Ok(Err(e)) => return Err(load_err(e.to_string())),
            Err(_) => return Err(load_err("the dictionary files are damaged".into())),
        };
        let words = dictionary.prefix_dictionary.words_idx_data.len() / 4;
        Ok(Self {
            segmenter: Segmenter::new(Mode::Normal, dictionary, None),
            kinds: (0..words).map(|_| AtomicU8::new(0)).collect(),
            name_readings: OnceLock::new(),
        })
    }

    fn tokenize_with(&self, text: &str, lattice: &mut Lattice) -> Vec<Morpheme> {
        let Ok(tokens) = self
            .segmenter
            .segment_with_lattice(Cow::Borrowed(text), lattice)
        else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(tokens.len());
        // Tokens come in order, so one forward walk turns byte offsets into char offsets;
        // skipped whitespace is counted through the gap between tokens.
        let (mut byte_at, mut char_at) = (0, 0);
        for token in &tokens {
            let (Some(gap), Some(surface)) = (
                text.get(byte_at..token.byte_start),
                text.get(token.byte_start..token.byte_end),
            ) else {
                return Vec::new();
            };
            // lindera drops only char.def SPACE; keep "\r", U+2028 … out too, for one rule.
            // Leaving `byte_at` alone folds the token into the next gap.
            if surface.chars().all(char::is_whitespace) {
                continue;
            }
            let start = char_at + gap.chars().count();
            char_at = start + surface.chars().count();
            byte_at = token.byte_end;
            let pos = self.pos_of(token.word_id, surface);
            out.push(Morpheme {
                start,
                end: char_at,
                surface: surface.to_owned(),
                lemma: self.lemma_of(token.word_id, pos),
                pos,
            });
        }
        out
    }

    /// The dictionary reading of every token, joined; `None` when a token is unknown to the
    /// dictionary and is not kana itself.
    fn reading_of(&self, text: &str) -> Option<String> {
        let mut lattice = Lattice::default();
        let tokens = self
            .segmenter
            .segment_with_lattice(Cow::Borrowed(text), &mut lattice)
            .ok()?;
        let dict = &self.segmenter.dictionary;
        let mut out = String::new();
        for token in &tokens {
            let surface = text.get(token.byte_start..token.byte_end)?;
            if surface.chars().all(char::is_whitespace) {
                continue;
            }
            let is_kana = |s: &str| {
                s.chars()
                    .all(|c| matches!(c, '\u{3041}'..='\u{309F}' | '\u{30A0}'..='\u{30FF}'))
            };
            let reading = if token.word_id.is_system() && !token.word_id.is_unknown() {
                dict.word_details_iter(token.word_id.id() as usize)
                    .nth(7)
                    .filter(|r| *r != "*" && !r.is_empty())
                    .map(str::to_string)
            } else {
                None
            };
            match reading {
                Some(r) => out.push_str(&r),
                None if is_kana(surface) => out.push_str(surface),
                None => return None,
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// Every known proper noun with IPADIC's subcategories 2 and 3 (issue 26 §1).
    fn proper_nouns_of(&self, text: &str, lattice: &mut Lattice) -> Vec<ProperNoun> {
        let Ok(tokens) = self
            .segmenter
            .segment_with_lattice(Cow::Borrowed(text), lattice)
        else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(tokens.len());
        let (mut byte_at, mut char_at) = (0, 0);
        for token in &tokens {
            let (Some(gap), Some(surface)) = (
                text.get(byte_at..token.byte_start),
                text.get(token.byte_start..token.byte_end),
            ) else {
                return Vec::new();
            };
            let start = char_at + gap.chars().count();
            char_at = start + surface.chars().count();
            byte_at = token.byte_end;
            // 未知語: a word the dictionary does not know, kept with its flag (a name's
            // signal in a name's slot); punctuation is no word.
            if token.word_id.is_unknown() {
                if surface.chars().any(char::is_alphanumeric) {
                    out.push(ProperNoun::new(start, char_at, ProperKind::Unknown));
                }
                continue;
            }
            if !token.word_id.is_system() {
                continue;
            }
            let kind = self.kind_of_word(token.word_id.id() as usize);
            out.push(ProperNoun::new(start, char_at, kind));
        }
        out
    }

    /// The readings of every 人名,姓 / 人名,名 entry, of every word that is no proper noun and
    /// of every organisation (one pass over the word list; its kinds land in the kind cache on the way).
    fn person_readings(&self) -> rustc_hash::FxHashMap<Box<str>, u8> {
        let mut out = rustc_hash::FxHashMap::default();
        use crate::text::chars::{is_hiragana, is_katakana};
        let kana = |s: &str| s.chars().all(|c| is_hiragana(c) || is_katakana(c));
        for id in 0..self.kinds.len() {
            let kind = self.kind_of_word(id);
            if !matches!(
                kind,
                ProperKind::Surname
                    | ProperKind::GivenName
                    | ProperKind::Common
                    | ProperKind::NotNoun
                    | ProperKind::Organization
            ) {
                continue;
            }
            let dict = &self.segmenter.dictionary;
            let mut fields = dict.word_details_iter(id).skip(6);
            let (Some(base), Some(reading)) = (fields.next(), fields.next()) else {
                continue;
            };
            if reading == "*" {
                continue;
            }
            // Written in kana in the dictionary itself (base form = surface for nouns).
            let in_kana = kana(base);
            let bit = match kind {
                ProperKind::Surname => 1,
                ProperKind::GivenName => 2,
                ProperKind::Organization if in_kana => 8,
                ProperKind::Organization => continue,
                _ if in_kana => 4 | 16,
                _ => 4,
            };
            *out.entry(Box::from(reading)).or_insert(0) |= bit;
        }
        out
    }

    /// A known word's kind: cached, else read from its details (名詞,固有名詞,<sub2>,<sub3>).
    fn kind_of_word(&self, id: usize) -> ProperKind {
        let cell = self.kinds.get(id);
        if let Some(k) = cell.and_then(|c| kind_of_code(c.load(Ordering::Relaxed))) {
            return k;
        }
        let mut f = self.segmenter.dictionary.word_details_iter(id);
        let kind = match (f.next(), f.next()) {
            (Some("名詞"), Some("固有名詞")) => match (f.next(), f.next()) {
                (Some("人名"), Some("姓")) => ProperKind::Surname,
                (Some("人名"), Some("名")) => ProperKind::GivenName,
                (Some("人名"), _) => ProperKind::Person,
                (Some("組織"), _) => ProperKind::Organization,
                (Some("地域"), _) => ProperKind::Place,
                _ => ProperKind::Other,
            },
            // A common word: what a name's slot holds when it is no name.
            (Some("名詞"), _) => ProperKind::Common,
            _ => ProperKind::NotNoun,
        };
        if let Some(c) = cell {
            c.store(kind_code(kind), Ordering::Relaxed);
        }
        kind
    }

    /// The base form of a known verb, adjective or auxiliary (details[6]); other words need
    /// none, so most tokens allocate nothing here.
    fn lemma_of(&self, word_id: WordId, pos: Pos) -> Option<String> {
        if !matches!(pos, Pos::Verb | Pos::Adjective | Pos::AuxVerb)
            || !word_id.is_system()
            || word_id.is_unknown()
        {
            return None;
        }
        let dict = &self.segmenter.dictionary;
        dict.word_details_iter(word_id.id() as usize)
            .nth(6)
            .filter(|b| *b != "*" && !b.is_empty())
            .map(str::to_string)
    }

    /// Reads only the first two detail fields, borrowed: no per-token allocation.
    fn pos_of(&self, word_id: WordId, surface: &str) -> Pos {
        let dict = &self.segmenter.dictionary;
        let id = word_id.id() as usize;
        let mut fields = if word_id.is_unknown() {
            // unk.def files SYMBOL-class unknowns ("!", "〜" …) as 名詞,サ変接続, which would
            // make punctuation look like content nouns to the rules.
            if !surface.chars().any(char::is_alphanumeric) {
                return Pos::Symbol;
            }
            dict.unknown_word_details_iter(id)
        } else if word_id.is_system() {
            dict.word_details_iter(id)
        } else {
            return Pos::Other;
        };
        let pos = fields.next().unwrap_or("");
        map_pos(pos, fields.next().unwrap_or(""))
    }
}

impl Analyzer for LinderaAnalyzer {
    fn kind(&self) -> AnalyzerKind {
        AnalyzerKind::LinderaIpadic
    }

    fn reading(&self, text: &str) -> Option<String> {
        catch_unwind(AssertUnwindSafe(|| self.reading_of(text))).ok()?
    }

    fn name_reading(&self, kana: &str) -> NameReading {
        let readings = self.name_readings.get_or_init(|| self.person_readings());
        // Katakana as it is (no allocation); hiragana converted.
        let bits = if kana.chars().any(crate::text::chars::is_hiragana) {
            let key: String = kana.chars().map(crate::text::chars::to_katakana).collect();
            readings.get(key.as_str()).copied()
        } else {
            readings.get(kana).copied()
        }
        .unwrap_or(0);
        NameReading {
            surname: bits & 1 != 0,
            given: bits & 2 != 0,
            word: bits & 4 != 0,
            company: bits & 8 != 0,
            kana_word: bits & 16 != 0,
        }
    }

    fn has_proper_entry(&self, surface: &str) -> bool {
        let look = || {
            let dict = &self.segmenter.dictionary;
            dict.prefix_dictionary
                .find_surface_iter(surface)
                .filter(|e| e.word_id().is_system() && !e.word_id().is_unknown())
                .any(|e| {
                    matches!(
                        self.kind_of_word(e.word_id().id() as usize),
                        ProperKind::Surname
                            | ProperKind::GivenName
                            | ProperKind::Person
                            | ProperKind::Organization
                            | ProperKind::Place
                            | ProperKind::Other
                    )
                })
        };
        !surface.is_empty() && catch_unwind(AssertUnwindSafe(look)).unwrap_or(false)
    }

    fn proper_nouns(&self, text: &str) -> Vec<ProperNoun> {
        if text.is_empty() {
            return Vec::new();
        }
        // The thread's lattice, as in `tokenize`; a private one when it is in use.
        let run = || {
            let reused = LATTICE.try_with(|cell| {
                let mut lattice = cell.try_borrow_mut().ok()?;
                Some(self.proper_nouns_of(text, &mut lattice))
            });
            match reused {
                Ok(Some(out)) => out,
                _ => self.proper_nouns_of(text, &mut Lattice::default()),
            }
        };
        catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|_| {
            let _ = LATTICE.try_with(|cell| {
                if let Ok(mut lattice) = cell.try_borrow_mut() {
                    *lattice = Lattice::default();
                }
            });
            Vec::new()
        })
    }

    fn tokenize(&self, text: &str) -> Vec<Morpheme> {
        if text.is_empty() {
            return Vec::new();
        }
        let run = || {
            let reused = LATTICE.try_with(|cell| {
                let mut lattice = cell.try_borrow_mut().ok()?;
                let out = self.tokenize_with(text, &mut lattice);
                if lattice.capacity() > LATTICE_KEEP_CHARS {
                    lattice.shrink_to(LATTICE_KEEP_CHARS / 4);
                }
                Some(out)
            });
            // Re-entrant use or thread teardown: fall back to a private lattice.
            match reused {
                Ok(Some(out)) => out,
                _ => self.tokenize_with(text, &mut Lattice::default()),
            }
        };
        let out = catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|_| {
            // A panic may have left the shared lattice inconsistent; start it afresh.
            let _ = LATTICE.try_with(|cell| {
                if let Ok(mut lattice) = cell.try_borrow_mut() {
                    *lattice = Lattice::default();
                }
            });
            Vec::new()
        });
        // The trait promises a segmentation: on a segmenter failure, use the fallback's.
        if out.is_empty() && !text.trim().is_empty() {
            return super::fallback::FallbackAnalyzer.tokenize(text);
        }
        out
    }
}

/// IPADIC part of speech (details[0]) and subcategory 1 (details[1]) to `Pos`.
fn map_pos(pos: &str, sub1: &str) -> Pos {
    match pos {
        "名詞" => Pos::Noun(match sub1 {
            "一般" => NounKind::General,
            "固有名詞" => NounKind::Proper,
            "代名詞" => NounKind::Pronoun,
            "数" => NounKind::Number,
            "非自立" | "接尾" => NounKind::Dependent,
            "形容動詞語幹" => NounKind::AdjectivalStem,
            "サ変接続" => NounKind::Sahen,
            "副詞可能" => NounKind::Adverbial,
            _ => NounKind::Other,
        }),
        "動詞" => Pos::Verb,
        "形容詞" => Pos::Adjective,
        "助動詞" => Pos::AuxVerb,
        "助詞" => Pos::Particle,
        "副詞" => Pos::Adverb,
        "連体詞" => Pos::Adnominal,
        "接続詞" => Pos::Conjunction,
        "感動詞" => Pos::Interjection,
        "接頭詞" => Pos::Prefix,
        "記号" => Pos::Symbol,
        _ => Pos::Other,
    }
}

#[cfg(test)]
#[path = "lindera_tests.rs"]
mod tests;
