//! Reads a duo-talk run log (JSON Lines) into per-run accumulations, without touching the
//! database: events are validated, legacy shapes counted, malformed lines reported with
//! line:col and what was expected.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Map, Value};

use super::fields::{Fields, char_col, content_key, kind};

pub use super::fields::{speaker_id, status_of};

/// A line that was skipped. `line` and `col` are 1-based; `col` counts chars.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

/// Older or auxiliary events that carry nothing the store keeps.
pub const LEGACY_EVENTS: &[&str] = &[
    "turn",
    "director_check",
    "validation",
    "run_start",
    "run_end",
    "narration",
    "prompt_update",
    "rag_select",
    "error",
];

#[derive(Debug, Default)]
pub struct Log {
    /// Runs in order of first appearance.
    pub runs: Vec<RunAcc>,
    index: HashMap<String, usize>,
    pub lines: usize,
    pub problems: Vec<Problem>,
    /// Recognised events that are not imported, by event name.
    pub ignored: BTreeMap<String, usize>,
    /// Events this importer does not know, by event name (ignored, not errors).
    pub unknown: BTreeMap<String, usize>,
    /// Repeated `speak`/`director` events for a turn that already had one (the first is kept).
    pub duplicates: usize,
}

#[derive(Debug, Default)]
pub struct RunAcc {
    pub run_id: String,
    pub topic: Option<String>,
    pub model: Option<String>,
    pub options: Map<String, Value>,
    pub started_at: Option<String>,
    pub first_ts: Option<String>,
    pub ended_at: Option<String>,
    /// 0-based duo-talk turn → what was logged for it.
    pub turns: BTreeMap<u32, TurnAcc>,
    pub feedback: Vec<Feedback>,
}

#[derive(Debug, Default)]
pub struct TurnAcc {
    pub attempts: BTreeMap<u32, AttemptAcc>,
    pub speak: Option<Speak>,
    /// The attempt the `speak` committed (the latest one logged before it).
    pub committed_attempt: Option<u32>,
    pub director: Option<Map<String, Value>>,
}

#[derive(Debug, Default)]
pub struct AttemptAcc {
    pub speaker: Option<&'static str>,
    pub phases: Vec<String>,
    pub first_ts: Option<String>,
    pub generating_at: Option<String>,
    pub reviewing_at: Option<String>,
    pub result: Option<String>,
    pub reason: Option<String>,
    pub retry_reason: Option<String>,
    pub suggestion: Option<String>,
    pub text: Option<String>,
    pub max_retry: Option<u64>,
}

#[derive(Debug)]
pub struct Speak {
    pub speaker: &'static str,
    pub text: String,
    pub beat: Option<String>,
    pub ts: Option<String>,
}

#[derive(Debug)]
pub struct Feedback {
    /// Content hash: the same event seen again (in either file) is the same action.
    pub key: String,
    pub turn: Option<u32>,
    pub payload: Value,
    pub ts: Option<String>,
}

impl Log {
    pub fn parse(bytes: &[u8]) -> Log {
        let mut log = Log::default();
        for (i, raw) in bytes.split(|b| *b == b'\n').enumerate() {
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            log.raw_line(i + 1, raw);
        }
        log
    }

    /// Like [`parse`](Self::parse), reading line by line: the file is never held whole, and a
    /// line longer than [`crate::limits::MAX_LINE_BYTES`] stops the reading
    /// (`Err(Ok(line))`: nothing is imported from the file, `/dev/zero` included).
    pub fn parse_reader(
        mut r: impl std::io::BufRead,
    ) -> Result<Log, Result<usize, std::io::Error>> {
        let mut log = Log::default();
        let mut buf = Vec::new();
        let mut line_no = 0;
        loop {
            line_no += 1;
            match crate::limits::read_line(&mut r, &mut buf).map_err(Err)? {
                Ok(false) => return Ok(log),
                Ok(true) => log.raw_line(line_no, &buf),
                Err(_) => return Err(Ok(line_no)),
            }
        }
    }

    fn raw_line(&mut self, line_no: usize, raw: &[u8]) {
        if raw.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        self.lines = line_no;
        let line = match std::str::from_utf8(raw) {
            Ok(l) => l,
            Err(e) => {
                let (_, col) = crate::limits::utf8_position(raw, e.valid_up_to());
                self.problem(line_no, col, "not valid UTF-8".into());
                return;
            }
        };
        if let Err((col, message)) = self.line(line) {
            self.problem(line_no, col, message);
        }
    }

    fn problem(&mut self, line: usize, col: usize, message: String) {
        self.problems.push(Problem { line, col, message });
    }

    fn line(&mut self, line: &str) -> Result<(), (usize, String)> {
        let value: Value = serde_json::from_str(line).map_err(|e| {
            let col = char_col(line, e.column().saturating_sub(1));
            (col, format!("expected a JSON object: {e}"))
        })?;
        let Value::Object(obj) = value else {
            return Err((1, format!("expected a JSON object, found {}", kind(&value))));
        };
        let f = Fields { obj: &obj, line };
        let event = match obj.get("event") {
            Some(Value::String(s)) => s.as_str(),
            Some(_) => return Err(f.at("event", "expected \"event\" to be a string")),
            None => return Err((1, "expected an \"event\" field".into())),
        };
        match event {
            "narration_start" => {
                let run = self.run(f.run_id()?);
                let ts = f.ts();
                if run.started_at.is_none() {
                    run.topic = f.opt_str("topic");
                    run.model = f.opt_str("model");
                    run.started_at = ts.clone();
                    for (from, to) in [
                        ("maxTurns", "max_turns"),
                        ("seed", "seed"),
                        ("noRag", "no_rag"),
                        ("imagePath", "image_path"),
                    ] {
                        if let Some(v) = obj.get(from).filter(|v| !v.is_null()) {
                            run.options.insert(to.into(), v.clone());
                        }
                    }
                }
                run.see(ts);
            }
            "narration_complete" => {
                let run = self.run(f.run_id()?);
                if let Some(s) = f.opt_str("status") {
                    run.options.insert("completion".into(), Value::String(s));
                }
                if let Some(n) = obj.get("total_turns").filter(|v| !v.is_null()) {
                    run.options.insert("total_turns".into(), n.clone());
                }
                run.ended_at = f.ts().or(run.ended_at.take());
            }
            "thought" => self.thought(&f)?,
            "speak" => {
                let run_id = f.run_id()?;
                let turn = f.turn()?;
                let speaker = f.speaker()?;
                let text = f.req_str("text")?;
                let ts = f.ts();
                let run = self.run(run_id);
                run.see(ts.clone());
                let t = run.turns.entry(turn).or_default();
                let duplicate = t.speak.is_some();
                if !duplicate {
                    t.committed_attempt = t.attempts.keys().next_back().copied();
                    t.speak = Some(Speak {
                        speaker,
                        text,
                        beat: f.opt_str("beat"),
                        ts,
                    });
                }
                self.duplicates += usize::from(duplicate);
            }
            "director" => {
                let run_id = f.run_id()?;
                let turn = f.turn()?;
                let mut kept = obj.clone();
                for k in ["event", "run_id", "turn"] {
                    kept.remove(k);
                }
                let run = self.run(run_id);
                run.see(f.ts());
                let t = run.turns.entry(turn).or_default();
                let duplicate = t.director.is_some();
                if !duplicate {
                    t.director = Some(kept);
                }
                self.duplicates += usize::from(duplicate);
            }
            "feedback" => self.feedback(&f)?,
            e if LEGACY_EVENTS.contains(&e) => *self.ignored.entry(e.to_string()).or_default() += 1,
            e => *self.unknown.entry(e.to_string()).or_default() += 1,
        }
        Ok(())
    }

    fn thought(&mut self, f: &Fields) -> Result<(), (usize, String)> {
        let run_id = f.run_id()?;
        let turn = f.turn()?;
        let attempt = f.uint("attempt")?;
        if attempt == 0 {
            return Err(f.at("attempt", "expected \"attempt\" to start at 1"));
        }
        let phase = f.req_str("status")?;
        let speaker = match (f.obj.get("speaker"), f.obj.get("speaker_name")) {
            (None, None) => None,
            _ => Some(f.speaker()?),
        };
        let ts = f.ts();
        let run = self.run(run_id);
        run.see(ts.clone());
        if let Some(m) = f.obj.get("max_retry").and_then(Value::as_u64) {
            run.options
                .entry("max_attempts")
                .or_insert_with(|| Value::from(m + 1));
        }
        let a = run
            .turns
            .entry(turn)
            .or_default()
            .attempts
            .entry(attempt)
            .or_default();
        a.speaker = a.speaker.or(speaker);
        a.first_ts = a.first_ts.take().or(ts.clone());
        a.max_retry = a
            .max_retry
            .or(f.obj.get("max_retry").and_then(Value::as_u64));
        if let Some(t) = f.opt_str("text") {
            a.text = Some(t);
        }
        match phase.as_str() {
            "generating" => a.generating_at = a.generating_at.take().or(ts),
            "reviewing" => a.reviewing_at = a.reviewing_at.take().or(ts),
            "reviewed" => {
                a.result = f.opt_str("result");
                a.reason = f.opt_str("reason");
            }
            "retrying" => {
                a.retry_reason = f.opt_str("reason");
                a.suggestion = f.opt_str("suggestion");
            }
            _ => {}
        }
        a.phases.push(phase);
        Ok(())
    }

    fn feedback(&mut self, f: &Fields) -> Result<(), (usize, String)> {
        let run_id = f.run_id()?;
        let issue_type = f.req_str("issue_type")?;
        let source_turn = match f.obj.get("turn") {
            None | Some(Value::Null) => None,
            Some(_) => Some(f.uint("turn")?),
        };
        let speaker = f.opt_str("speaker");
        let payload = serde_json::json!({
            "issue_type": issue_type,
            "description": f.opt_str("description"),
            "suggested_fix": f.opt_str("suggested_fix"),
            "speaker": speaker.as_deref().and_then(speaker_id).map(str::to_string).or(speaker),
            "source_turn": source_turn,
        });
        let key = content_key(f.obj);
        let ts = f.ts();
        let run = self.run(run_id);
        run.see(ts.clone());
        run.feedback.push(Feedback {
            key,
            turn: source_turn.map(|t| t + 1),
            payload,
            ts,
        });
        Ok(())
    }

    fn run(&mut self, run_id: String) -> &mut RunAcc {
        let i = *self.index.entry(run_id.clone()).or_insert_with(|| {
            self.runs.push(RunAcc {
                run_id,
                ..RunAcc::default()
            });
            self.runs.len() - 1
        });
        &mut self.runs[i]
    }
}

impl RunAcc {
    fn see(&mut self, ts: Option<String>) {
        if self.first_ts.is_none() {
            self.first_ts = ts;
        }
    }
}
