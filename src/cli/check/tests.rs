//! The parallel pipeline against the plain one-line-at-a-time loop, on generated inputs.

use super::*;

/// Seeded, so failures reproduce.
use crate::test_rng::Rng;

const PIECES: &[&str] = &[
    "わ！",
    "へ？",
    "坂の上から海が見えるじゃん",
    "灯台は白いですね",
    "港の話をしましょう",
    "姉様の考えは正しいです",
    "まだ子どもじゃないから",
    "一人暮らしの部屋は",
    "「それは秘密」って言ってた",
    "うーん",
    "商店街の福引について",
    "雨かなって思ったら晴れた",
    "",
];
const ENDS: &[&str] = &["。", "！", "？", "ね。", "です。", "", "\\n"];
const SPEAKERS: &[&str] = &["yana", "ayu", "やな", "あゆ", "A", "B", "nobody"];

fn utterance(r: &mut Rng) -> String {
    let n = 1 + r.below(4);
    (0..n)
        .map(|_| format!("{}{}", r.pick(PIECES), r.pick(ENDS)))
        .collect()
}

/// One input line: mostly good records, some blank, malformed or with an unknown speaker.
fn line(r: &mut Rng, i: usize) -> String {
    match r.below(20) {
        0 => String::new(),
        1 => "{\"speaker\": \"yana\", \"text\": ".into(),
        2 => format!("{} (plain text)", utterance(r)),
        3 => "   ".into(),
        _ => {
            let id = match r.below(3) {
                0 => format!("\"id\": \"L{i}\", "),
                1 => format!("\"id\": {i}, "),
                _ => String::new(),
            };
            let speaker = match r.below(8) {
                0 => String::new(),
                _ => format!("\"speaker\": \"{}\", ", r.pick(SPEAKERS)),
            };
            let context = match r.below(3) {
                0 => format!(
                    ", \"context\": [{{\"speaker\": \"{}\", \"text\": \"{}\"}}]",
                    r.pick(&SPEAKERS[..6]),
                    utterance(r)
                ),
                _ => String::new(),
            };
            format!("{{{id}{speaker}\"text\": \"{}\"{context}}}", utterance(r))
        }
    }
}

fn corpus(seed: u64, lines: usize) -> String {
    let mut r = Rng::new(seed | 1);
    let mut s: String = (0..lines).map(|i| line(&mut r, i) + "\n").collect();
    if r.below(2) == 0 {
        s.pop(); // no final line break
    }
    s
}

fn args(format: Format, speaker: Option<&str>, threads: usize) -> CheckArgs {
    CheckArgs {
        file: None,
        speaker: speaker.map(str::to_string),
        format,
        fail_on: FailOn::Retry,
        rules: None,
        tone_mode: None,
        analyzer: AnalyzerChoice::Fallback,
        threads: Some(threads),
        progress: Default::default(),
    }
}

/// (exit code, stdout, stderr lines) of the pipeline.
fn piped(input: &[u8], a: &CheckArgs) -> (i32, String, Vec<String>) {
    let mut out = Vec::new();
    let mut errs = Vec::new();
    let rules = RuleSet::builtin().expect("builtin rules");
    let analyzer = analyzer::open(a.analyzer, &mut |_| {}).expect("fallback analyzer");
    let cache = SharedCache::new(CACHE_CAPACITY);
    let judge = Judge {
        rules: &rules,
        analyzer: analyzer.as_ref(),
        cache: &cache,
        name: "<stdin>",
        speaker: a.speaker.as_deref(),
        format: a.format,
        reuse: true,
    };
    let tally = pipeline::run(
        &mut &input[..],
        "<stdin>",
        a.threads.unwrap_or(1),
        |l, n, b| judge.line(l, n, b),
        &mut out,
        &mut |m| errs.push(m.to_string()),
    )
    .expect("in-memory I/O");
    let code = if tally.bad_input {
        2
    } else if tally.worst.is_some_and(|w| w >= Status::Retry) {
        1
    } else {
        0
    };
    (code, String::from_utf8(out).expect("UTF-8 output"), errs)
}

/// The reference: each line on its own, in order, every verdict judged and written afresh.
fn one_by_one(input: &str, a: &CheckArgs) -> (i32, String, Vec<String>) {
    let rules = RuleSet::builtin().expect("builtin rules");
    let analyzer = analyzer::open(a.analyzer, &mut |_| {}).expect("fallback analyzer");
    let cache = SharedCache::new(CACHE_CAPACITY);
    let judge = Judge {
        rules: &rules,
        analyzer: analyzer.as_ref(),
        cache: &cache,
        name: "<stdin>",
        speaker: a.speaker.as_deref(),
        format: a.format,
        reuse: false,
    };
    let (mut out, mut errs, mut code) = (Vec::new(), Vec::new(), 0);
    for (i, l) in input.lines().enumerate() {
        match judge.line(l, i + 1, &mut out) {
            Ok(Some(s)) if s >= Status::Retry => code = code.max(1),
            Ok(_) => {}
            Err(e) => {
                errs.push(e);
                code = 2;
            }
        }
    }
    (code, String::from_utf8(out).expect("UTF-8 output"), errs)
}

#[test]
fn parallel_output_equals_the_line_by_line_loop() {
    for seed in 1..=4u64 {
        // Enough lines to span several 64 KiB chunks.
        let input = corpus(seed * 7919, 1_500 + 400 * seed as usize);
        assert!(input.len() > 2 * pipeline::CHUNK, "{}", input.len());
        let speaker = (seed % 2 == 0).then_some("ayu");
        let format = if seed % 3 == 0 {
            Format::Table
        } else {
            Format::Jsonl
        };
        let want = one_by_one(&input, &args(format, speaker, 1));
        assert!(want.1.lines().count() > 1_000);
        assert!(!want.2.is_empty(), "the corpus has bad lines");
        for threads in [1, 2, 7] {
            let got = piped(input.as_bytes(), &args(format, speaker, threads));
            assert_eq!(got.0, want.0, "seed {seed}, {threads} threads: exit code");
            assert_eq!(got.2, want.2, "seed {seed}, {threads} threads: stderr");
            if got.1 != want.1 {
                let at = got.1.lines().zip(want.1.lines()).position(|(a, b)| a != b);
                panic!("seed {seed}, {threads} threads: stdout differs at output line {at:?}");
            }
        }
    }
}

#[test]
fn invalid_utf8_is_reported_at_its_line_and_the_rest_judged_in_every_mode() {
    let good = corpus(42, 3_000);
    let lines: Vec<&str> = good.lines().collect();
    let bad = b"{\"speaker\": \"yana\", \"text\": \"\xff\xfe\"}";
    let at = bad.iter().position(|&b| b == 0xff).expect("bad byte") + 1;
    for bad_at in [0usize, 17, 1_234, 2_999] {
        let mut input = Vec::new();
        // The same input with a blank line in the bad line's place: what every other line gives.
        let mut blanked = String::new();
        for (i, l) in lines.iter().enumerate() {
            if i == bad_at {
                input.extend_from_slice(bad);
                input.push(b'\n');
                blanked.push('\n');
            }
            input.extend_from_slice(l.as_bytes());
            input.push(b'\n');
            blanked.push_str(l);
            blanked.push('\n');
        }
        let want = one_by_one(&blanked, &args(Format::Jsonl, None, 1));
        let line_of = |e: &str| -> usize {
            e.split(':')
                .nth(1)
                .and_then(|n| n.parse().ok())
                .expect("FILE:LINE")
        };
        let mut want_errs = want.2.clone();
        let pos = want_errs
            .iter()
            .take_while(|e| line_of(e) < bad_at + 1)
            .count();
        want_errs.insert(
            pos,
            format!("<stdin>:{}: not valid UTF-8 (byte {at})", bad_at + 1),
        );
        for threads in [1, 2, 5] {
            let (code, out, errs) = piped(&input, &args(Format::Jsonl, None, threads));
            assert_eq!(code, 2);
            assert_eq!(out, want.1, "{threads} threads, bad line {}", bad_at + 1);
            assert_eq!(errs, want_errs);
        }
    }
}

/// Yields its data in pieces of varying size, then fails.
struct Flaky<'a> {
    data: &'a [u8],
    rng: Rng,
}

impl std::io::Read for Flaky<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.data.is_empty() {
            return Err(std::io::Error::other("disk gone"));
        }
        let n = (1 + self.rng.below(3_000))
            .min(buf.len())
            .min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn uneven_reads_and_a_read_error_keep_order() {
    // A judge that echoes line numbers shows every line exactly once, in order.
    let echo = |l: &str, n: usize, out: &mut Vec<u8>| -> LineResult {
        if l.is_empty() {
            return Ok(None);
        }
        out.extend_from_slice(format!("{n}:{}\n", l.len()).as_bytes());
        Ok(Some(Status::Pass))
    };
    for seed in 1..=5u64 {
        let input = corpus(seed, 4_000) + "\n";
        let want: String = input
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.is_empty())
            .map(|(i, l)| format!("{}:{}\n", i + 1, l.len()))
            .collect();
        for threads in [1, 2, 4] {
            let mut src = Flaky {
                data: input.as_bytes(),
                rng: Rng::new(seed),
            };
            let (mut out, mut errs) = (Vec::new(), Vec::new());
            let t = pipeline::run(&mut src, "f", threads, echo, &mut out, &mut |m| {
                errs.push(m.to_string())
            })
            .expect("writes to memory");
            assert_eq!(String::from_utf8(out).unwrap(), want, "{threads} threads");
            let last = input.lines().count() + 1;
            assert_eq!(errs, vec![format!("f:{last}: cannot read: disk gone")]);
            assert!(t.bad_input);
            assert_eq!(t.count(Status::Pass), want.lines().count());
        }
    }
}
