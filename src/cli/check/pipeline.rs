//! The `check` pipeline: the input is read in chunks of whole lines, judged on worker threads,
//! and written back in input order. At most a fixed number of chunks is in flight, so memory
//! stays constant whatever the input's size; output leaves in large writes, never per line.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

use crate::director::Status;

/// Bytes of input per chunk (a chunk always ends at a line break, or at the end of input).
pub(super) const CHUNK: usize = 64 * 1024;
/// Chunks in flight per worker thread.
const WINDOW_PER_THREAD: usize = 4;

/// What one input line gave: `Ok(None)` for a skipped (blank) line, the verdict's status when
/// judged (its output already appended), or the error line to report on stderr.
pub type LineResult = Result<Option<Status>, String>;

/// Totals over the whole input.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tally {
    /// Verdicts per status (indexed by `Status as usize`).
    pub by_status: [usize; 6],
    /// The worst verdict seen.
    pub worst: Option<Status>,
    /// A line was reported as bad input (or the input could not be read).
    pub bad_input: bool,
}

impl Tally {
    pub fn count(&self, s: Status) -> usize {
        self.by_status[s as usize]
    }

    fn add(&mut self, s: Status) {
        self.by_status[s as usize] += 1;
        self.worst = self.worst.max(Some(s));
    }

    fn merge(&mut self, o: &Tally) {
        for (a, b) in self.by_status.iter_mut().zip(o.by_status) {
            *a += b;
        }
        self.worst = self.worst.max(o.worst);
        self.bad_input |= o.bad_input;
    }
}

/// Lines of input, starting at line number `first`.
struct Chunk {
    seq: u64,
    first: usize,
    bytes: Vec<u8>,
}

/// A judged chunk: its output, the errors with the output offset they come after, and whether
/// reading must stop after it.
struct Done {
    seq: u64,
    out: Vec<u8>,
    errors: Vec<(usize, String)>,
    tally: Tally,
    stop: bool,
}

/// Judges every line of a chunk with `judge(line, line_number, out)`.
fn judge_chunk<F>(c: Chunk, name: &str, judge: &F) -> Done
where
    F: Fn(&str, usize, &mut Vec<u8>) -> LineResult,
{
    let mut d = Done {
        seq: c.seq,
        out: Vec::with_capacity(c.bytes.len() * 2),
        errors: Vec::new(),
        tally: Tally::default(),
        stop: false,
    };
    let body = c.bytes.strip_suffix(b"\n").unwrap_or(&c.bytes);
    for (i, raw) in memchr::Memchr::new(b'\n', body)
        .chain([body.len()])
        .scan(0, |start, end| {
            let line = &body[*start..end];
            *start = end + 1;
            Some(line)
        })
        .enumerate()
    {
        let lineno = c.first + i;
        // A line that is not UTF-8 is reported at its own line; every other line is judged.
        let line = match std::str::from_utf8(raw) {
            Ok(line) => line,
            Err(e) => {
                let at = e.valid_up_to() + 1;
                d.errors.push((
                    d.out.len(),
                    format!("{name}:{lineno}: not valid UTF-8 (byte {at})"),
                ));
                d.tally.bad_input = true;
                continue;
            }
        };
        match judge(line, lineno, &mut d.out) {
            Ok(Some(s)) => d.tally.add(s),
            Ok(None) => {}
            Err(e) => {
                d.errors.push((d.out.len(), e));
                d.tally.bad_input = true;
            }
        }
    }
    d
}

/// The input, cut into chunks of whole lines.
struct Lines<'a> {
    input: &'a mut dyn Read,
    /// Bytes read but not yet handed out (ends with a started line).
    carry: Vec<u8>,
    /// A read error, returned once the complete lines read before it are out.
    failed: Option<std::io::Error>,
}

impl Lines<'_> {
    /// The next whole lines, about `CHUNK` bytes (or the rest of the input); `Ok(None)` at the
    /// end. After a read error the started line is dropped: it is the line reported.
    fn next_chunk(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let mut buf = [0u8; 16 * 1024];
        // Where the last line break in `carry` is, found scanning only what was added.
        let mut last_break = memchr::memrchr(b'\n', &self.carry);
        loop {
            if self.carry.len() >= CHUNK
                && let Some(cut) = last_break
            {
                return Ok(Some(self.cut(cut)));
            }
            let n = match self.input.read(&mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let Some(cut) = last_break else {
                        self.carry.clear();
                        return Err(e);
                    };
                    self.failed = Some(e);
                    let lines = self.cut(cut);
                    self.carry.clear();
                    return Ok(Some(lines));
                }
            };
            if n == 0 {
                return Ok((!self.carry.is_empty()).then(|| std::mem::take(&mut self.carry)));
            }
            if let Some(p) = memchr::memrchr(b'\n', &buf[..n]) {
                last_break = Some(self.carry.len() + p);
            }
            self.carry.extend_from_slice(&buf[..n]);
            // A line past the limit is refused, never held whole (`/dev/zero` has no end).
            let started = self.carry.len() - last_break.map_or(0, |b| b + 1);
            if started > crate::limits::MAX_LINE_BYTES {
                let e = std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "line longer than the limit of {} bytes",
                        crate::limits::MAX_LINE_BYTES
                    ),
                );
                let Some(cut) = last_break else {
                    self.carry.clear();
                    return Err(e);
                };
                self.failed = Some(e);
                let lines = self.cut(cut);
                self.carry.clear();
                return Ok(Some(lines));
            }
        }
    }

    /// Hands out `carry` up to and including byte `cut`.
    fn cut(&mut self, cut: usize) -> Vec<u8> {
        let rest = self.carry.split_off(cut + 1);
        std::mem::replace(&mut self.carry, rest)
    }
}

/// Runs the pipeline on `threads` worker threads (1: on this thread, in order). Output and
/// errors come out in input order; `err` gets each error line.
pub fn run<F>(
    input: &mut dyn Read,
    name: &str,
    threads: usize,
    judge: F,
    out: &mut dyn Write,
    err: &mut dyn FnMut(&str),
) -> std::io::Result<Tally>
where
    F: Fn(&str, usize, &mut Vec<u8>) -> LineResult + Sync,
{
    let mut writer = Writer {
        out,
        err,
        tally: Tally::default(),
        next: 0,
        pending: BTreeMap::new(),
        stopped: false,
    };
    let mut lines = Lines {
        input,
        carry: Vec::new(),
        failed: None,
    };
    let mut line = 1usize;
    let mut seq = 0u64;
    // Reads the next chunk, numbering it. A read error becomes a judged "chunk" of its own,
    // reported at the line it stopped on, in order, after everything read before it.
    let mut read = || -> Option<Result<Chunk, Done>> {
        let item = match lines.next_chunk() {
            Ok(Some(bytes)) => {
                let c = Chunk {
                    seq,
                    first: line,
                    bytes,
                };
                line += memchr::memchr_iter(b'\n', &c.bytes).count();
                Ok(c)
            }
            Ok(None) => return None,
            Err(e) => Err(Done {
                seq,
                out: Vec::new(),
                errors: vec![(0, format!("{name}:{line}: cannot read: {e}"))],
                tally: Tally {
                    bad_input: true,
                    ..Tally::default()
                },
                stop: true,
            }),
        };
        seq += 1;
        Some(item)
    };
    if threads <= 1 {
        while !writer.stopped {
            match read() {
                Some(Ok(c)) => writer.accept(judge_chunk(c, name, &judge))?,
                Some(Err(failed)) => writer.accept(failed)?,
                None => break,
            }
        }
        writer.out.flush()?;
        return Ok(writer.tally);
    }
    let (work_tx, work_rx) = channel::<Chunk>();
    let work_rx = Arc::new(Mutex::new(work_rx));
    let (done_tx, done_rx) = channel::<Done>();
    let window = threads * WINDOW_PER_THREAD;
    std::thread::scope(|s| -> std::io::Result<()> {
        for _ in 0..threads {
            let (rx, tx, judge) = (Arc::clone(&work_rx), done_tx.clone(), &judge);
            s.spawn(move || worker(&rx, &tx, name, judge));
        }
        drop(done_tx);
        let result = feed(&mut read, &mut writer, work_tx, &done_rx, window);
        // Workers end when the work channel closes (dropped by `feed`); drain what they send.
        while done_rx.recv().is_ok() {}
        result
    })?;
    writer.out.flush()?;
    Ok(writer.tally)
}

/// Keeps up to `window` chunks in flight and writes results in order.
fn feed(
    read: &mut dyn FnMut() -> Option<Result<Chunk, Done>>,
    w: &mut Writer,
    work: Sender<Chunk>,
    done: &Receiver<Done>,
    window: usize,
) -> std::io::Result<()> {
    let mut in_flight = 0usize;
    let mut eof = false;
    loop {
        while !eof && !w.stopped && in_flight < window {
            match read() {
                Some(Ok(c)) => {
                    if work.send(c).is_err() {
                        return Err(std::io::Error::other("a judging thread stopped"));
                    }
                    in_flight += 1;
                }
                Some(Err(failed)) => {
                    w.accept(failed)?;
                    eof = true;
                }
                None => eof = true,
            }
        }
        if in_flight == 0 {
            return Ok(());
        }
        let d = done
            .recv()
            .map_err(|_| std::io::Error::other("a judging thread stopped"))?;
        in_flight -= 1;
        w.accept(d)?;
    }
}

fn worker<F>(rx: &Mutex<Receiver<Chunk>>, tx: &Sender<Done>, name: &str, judge: &F)
where
    F: Fn(&str, usize, &mut Vec<u8>) -> LineResult,
{
    loop {
        let next = rx.lock().unwrap_or_else(|p| p.into_inner()).recv();
        let Ok(c) = next else { return };
        if tx.send(judge_chunk(c, name, judge)).is_err() {
            return;
        }
    }
}

/// Puts judged chunks back in input order.
struct Writer<'a> {
    out: &'a mut dyn Write,
    err: &'a mut dyn FnMut(&str),
    tally: Tally,
    next: u64,
    pending: BTreeMap<u64, Done>,
    /// A line that stops the input was written: everything after it is dropped.
    stopped: bool,
}

impl Writer<'_> {
    fn accept(&mut self, d: Done) -> std::io::Result<()> {
        self.pending.insert(d.seq, d);
        while let Some(d) = self.pending.remove(&self.next) {
            self.next += 1;
            if self.stopped {
                continue;
            }
            self.emit(d)?;
        }
        Ok(())
    }

    fn emit(&mut self, d: Done) -> std::io::Result<()> {
        let mut at = 0;
        for (offset, e) in &d.errors {
            if *offset > at {
                self.out.write_all(&d.out[at..*offset])?;
                at = *offset;
            }
            // Keep stdout and stderr in step for a reader watching both.
            self.out.flush()?;
            (self.err)(e);
        }
        self.out.write_all(&d.out[at..])?;
        self.tally.merge(&d.tally);
        self.stopped = d.stop;
        Ok(())
    }
}
