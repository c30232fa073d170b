//! Size, depth and encoding limits every file kakeai reads goes through, checked when the file
//! is read — before any parser sees it — so a huge, deeply nested or mis-encoded file is
//! rejected fast with an error naming the file, the position and the limit.

mod aliases;
mod depth;

use std::io::Read;
use std::path::{Path, PathBuf};

pub use aliases::yaml_aliases;
pub use depth::{toml_depth, yaml_check};

/// Largest configuration file (TOML rules, YAML/Markdown vault files, keymaps, themes).
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Deepest nesting of YAML or TOML values (block indentation levels plus flow brackets).
pub const MAX_DEPTH: usize = 64;
/// Longest line of a JSON Lines input (ingest, import, patterns import).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;
/// Largest whole input read from a file or stdin in one piece (`pii mask --format json`,
/// `vault review`), and largest input read line by line in total.
pub const MAX_INPUT_BYTES: u64 = 64 * 1024 * 1024;
/// Largest response body read from a model server (a whole reply, embeddings, /api/show,
/// /api/tags, /props, /tokenize, or a whole stream): past it the call fails with a named
/// error instead of growing without bound.
pub const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;
/// Largest error body read for its message (the status alone explains the failure).
pub const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LimitError {
    #[error("{}: cannot read: {message}", path.display())]
    Io { path: PathBuf, message: String },
    #[error("{}: the file is larger than the limit of {limit} bytes", path.display())]
    TooBig { path: PathBuf, limit: u64 },
    #[error("{}:{line}:{col}: nested deeper than the limit of {limit} levels", path.display())]
    TooDeep {
        path: PathBuf,
        line: usize,
        col: usize,
        limit: usize,
    },
    #[error("{}:{line}:{col}: not valid UTF-8{hint}", path.display())]
    NotUtf8 {
        path: PathBuf,
        line: usize,
        col: usize,
        /// What the bytes look like instead (` — the file looks like Shift_JIS …`), or empty.
        hint: String,
    },
    #[error("{}:{line}:{col}: a YAML alias (*name); kakeai's files refuse aliases (one can expand a small file into gigabytes): write the value out", path.display())]
    Alias {
        path: PathBuf,
        line: usize,
        col: usize,
    },
    #[error("{}:{line}:1: more than one YAML document (a second `---`); one document per file", path.display())]
    MultiDocument { path: PathBuf, line: usize },
}

/// Reads a text file of at most `limit` bytes, refusing invalid UTF-8 at its line:col.
pub fn read_text(path: &Path, limit: u64) -> Result<String, LimitError> {
    let io = |e: std::io::Error| LimitError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(LimitError::TooBig {
            path: path.to_path_buf(),
            limit,
        });
    }
    utf8(path, bytes)
}

/// The UTF-8 byte order mark some editors (Windows Notepad, Excel exports) write first.
pub const BOM: char = '\u{feff}';

/// `text` without a leading byte order mark: no parser sees it, so it is never "more than one
/// document", an unknown key or a bad first value (issue 26 §3).
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// `std::fs::read_to_string` without a leading byte order mark, for the files that are not
/// held to a size limit here (themes, server and interview settings, safety data, variants).
pub fn read_string(path: impl AsRef<Path>) -> std::io::Result<String> {
    let mut text = std::fs::read_to_string(path)?;
    if text.starts_with(BOM) {
        text.drain(..BOM.len_utf8());
    }
    Ok(text)
}

/// `bytes` as text without a leading byte order mark, or where the first invalid byte is
/// (1-based line, column in chars).
pub fn utf8(path: &Path, mut bytes: Vec<u8>) -> Result<String, LimitError> {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let (line, col) = utf8_position(e.as_bytes(), e.utf8_error().valid_up_to());
        let hint = match guess_encoding(e.as_bytes()) {
            Some(name) => format!(
                " — the file looks like {name}: save it as UTF-8 (most editors: \"Save with Encoding\" / 文字コード → UTF-8)"
            ),
            None => String::new(),
        };
        LimitError::NotUtf8 {
            path: path.to_path_buf(),
            line,
            col,
            hint,
        }
    })
}

/// The encoding a Japanese text that is not UTF-8 was most likely saved in: UTF-16 (a byte
/// order mark, or NULs between ASCII), else the first of EUC-JP and Shift_JIS (CP932) that
/// decodes every byte and yields Japanese. EUC-JP goes first: its kana decode as half-width
/// katakana in Shift_JIS, while Shift_JIS's lead bytes are invalid in EUC-JP.
pub fn guess_encoding(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Some("UTF-16");
    }
    let nuls = bytes.iter().take(4096).filter(|b| **b == 0).count();
    if nuls * 4 >= bytes.len().min(4096) && nuls > 0 {
        return Some("UTF-16");
    }
    let japanese = |s: &str| {
        s.chars()
            .any(|c| matches!(c, '\u{3040}'..='\u{30ff}' | '\u{4e00}'..='\u{9fff}'))
    };
    for (enc, name) in [
        (encoding_rs::EUC_JP, "EUC-JP"),
        (encoding_rs::SHIFT_JIS, "Shift_JIS (CP932)"),
    ] {
        let (text, had_errors) = enc.decode_without_bom_handling(bytes);
        if !had_errors && japanese(&text) {
            return Some(name);
        }
    }
    None
}

/// 1-based line and column (in chars) of byte `at`, everything before it being valid UTF-8.
pub fn utf8_position(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = bytes.get(..at).unwrap_or(bytes);
    let line_start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let col = std::str::from_utf8(&before[line_start..])
        .map(|s| s.chars().count())
        .unwrap_or(0)
        + 1;
    (line, col)
}

/// A YAML (or Markdown with front matter) file: size, UTF-8, one document, nesting depth.
pub fn read_yaml(path: &Path) -> Result<String, LimitError> {
    let text = read_text(path, MAX_FILE_BYTES)?;
    let is_md = path.extension().is_some_and(|x| x == "md");
    yaml_check(path, &text, is_md)?;
    yaml_aliases(path, &text, is_md)?;
    Ok(text)
}

/// A TOML file: size, UTF-8 and nesting depth.
pub fn read_toml(path: &Path) -> Result<String, LimitError> {
    let text = read_text(path, MAX_FILE_BYTES)?;
    toml_depth(path, &text)?;
    Ok(text)
}

/// Reads a whole input (a file or stdin) of at most [`MAX_INPUT_BYTES`], as UTF-8: an
/// endless one (`/dev/zero`) stops at the limit with an error naming `name`, never more read.
pub fn read_input(name: &str, reader: impl Read) -> Result<String, String> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{name}: cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(format!(
            "{name}: the input is larger than the limit of {MAX_INPUT_BYTES} bytes; nothing read"
        ));
    }
    utf8(Path::new(name), bytes).map_err(|e| e.to_string())
}

/// An input's lines (`\r\n` trimmed, a leading byte order mark dropped) through the line limit
/// and [`MAX_INPUT_BYTES`] in total: a longer line, a longer input or invalid UTF-8 stops the
/// reading with `name:line[:col]: …`, the rest never read (the input may never end).
pub fn read_input_lines(name: &str, reader: impl Read) -> Result<Vec<String>, String> {
    let mut r = std::io::BufReader::new(reader);
    let (mut out, mut buf, mut total) = (Vec::new(), Vec::new(), 0u64);
    loop {
        let n = out.len() + 1;
        match read_line(&mut r, &mut buf).map_err(|e| format!("{name}:{n}: cannot read: {e}"))? {
            Ok(false) => return Ok(out),
            Err(_) => {
                return Err(format!(
                    "{name}:{n}: line longer than the limit of {MAX_LINE_BYTES} bytes; nothing read"
                ));
            }
            Ok(true) => {
                total += buf.len() as u64 + 1;
                if total > MAX_INPUT_BYTES {
                    return Err(format!(
                        "{name}:{n}: the input is larger than the limit of {MAX_INPUT_BYTES} \
                         bytes; nothing read"
                    ));
                }
                match String::from_utf8(std::mem::take(&mut buf)) {
                    Ok(l) => out.push(l),
                    Err(e) => {
                        let at = e.utf8_error().valid_up_to();
                        let col = String::from_utf8_lossy(&e.as_bytes()[..at]).chars().count() + 1;
                        return Err(format!("{name}:{n}:{col}: not valid UTF-8"));
                    }
                }
            }
        }
    }
}

/// Reads one line (up to and without `\n`, `\r\n` trimmed, a leading byte order mark dropped)
/// into `buf`; a line longer than [`MAX_LINE_BYTES`] is reported as `Err(true)` as soon as the
/// limit is passed — the rest of it is not read (the input may never end: `/dev/zero`), so the
/// caller stops there. `Ok(false)` at the end.
pub fn read_line(
    r: &mut impl std::io::BufRead,
    buf: &mut Vec<u8>,
) -> std::io::Result<Result<bool, bool>> {
    buf.clear();
    loop {
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            if buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
                buf.drain(..3);
            }
            return Ok(Ok(!buf.is_empty()));
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if buf.len() + take > MAX_LINE_BYTES + 1 {
            buf.clear();
            return Ok(Err(true));
        }
        buf.extend_from_slice(&chunk[..take]);
        r.consume(take);
        if done {
            if buf.last() == Some(&b'\n') {
                buf.pop();
            }
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            if buf.starts_with(&[0xEF, 0xBB, 0xBF]) {
                buf.drain(..3);
            }
            return Ok(Ok(true));
        }
    }
}

#[cfg(test)]
mod tests;
