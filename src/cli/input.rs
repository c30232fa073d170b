//! Reading `check`/`bench` input: JSON Lines records or plain text, with FILE:LINE errors.

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
pub struct ContextLine {
    pub speaker: String,
    pub text: String,
}

/// One `check` input record.
#[derive(Debug, Clone, Deserialize)]
pub struct Record {
    #[serde(default)]
    pub id: Option<serde_json::Value>,
    #[serde(default)]
    pub speaker: Option<String>,
    pub text: String,
    #[serde(default)]
    pub context: Vec<ContextLine>,
}

/// What is wrong with an input line; printed as `FILE:LINE[:COL]: message`.
#[derive(Debug, Clone, PartialEq)]
pub struct BadLine {
    pub col: Option<usize>,
    pub message: String,
}

impl BadLine {
    pub fn msg(m: impl Into<String>) -> Self {
        BadLine {
            col: None,
            message: m.into(),
        }
    }

    pub fn render(&self, file: &str, line: usize) -> String {
        match self.col {
            Some(c) => format!("{file}:{line}:{c}: {}", self.message),
            None => format!("{file}:{line}: {}", self.message),
        }
    }
}

/// serde_json's error column (1-based, counted in bytes) as a 1-based column in characters of
/// `line`, as every error of kakeai counts columns.
pub fn char_column(line: &str, byte_col: usize) -> usize {
    let mut end = byte_col.saturating_sub(1).min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    line[..end].chars().count() + 1
}

/// Parses one input line. `Ok(None)` for a blank line.
pub fn parse_line(line: &str, default_speaker: Option<&str>) -> Result<Option<Record>, BadLine> {
    let t = crate::limits::strip_bom(line).trim_end_matches(['\r', '\n']);
    if t.trim().is_empty() {
        return Ok(None);
    }
    if t.trim_start().starts_with('{') {
        let mut r: Record = serde_json::from_str(t).map_err(|e| {
            let what = e.to_string();
            let what = what.split(" at line ").next().unwrap_or(&what).to_string();
            BadLine {
                col: Some(char_column(t, e.column())),
                message: what,
            }
        })?;
        if r.speaker.is_none() {
            r.speaker = default_speaker.map(str::to_string);
        }
        if r.speaker.is_none() {
            return Err(BadLine::msg("missing field `speaker` (or pass --speaker)"));
        }
        return Ok(Some(r));
    }
    match default_speaker {
        Some(s) => Ok(Some(Record {
            id: None,
            speaker: Some(s.to_string()),
            text: t.to_string(),
            context: Vec::new(),
        })),
        None => Err(BadLine::msg(
            "expected a JSON object like {\"speaker\": \"yana\", \"text\": \"…\"} \
             (for plain text, one utterance per line, pass --speaker)",
        )),
    }
}

/// Opens `FILE`, or stdin when it is absent or `-`; returns the name used in error messages.
pub fn open(file: Option<&std::path::Path>) -> Result<(String, Box<dyn std::io::Read>), String> {
    match file {
        None => Ok(("<stdin>".into(), Box::new(std::io::stdin()))),
        Some(p) if p.as_os_str() == "-" => Ok(("<stdin>".into(), Box::new(std::io::stdin()))),
        Some(p) => {
            let f = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
            Ok((p.display().to_string(), Box::new(f)))
        }
    }
}
