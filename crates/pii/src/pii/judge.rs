//! The learned judge of candidate spans: every 氏名, 会社名, 学校名 and 住所 span a rule or the
//! labeller proposes is scored by a logistic model over what is around it — which rule (and
//! cue) proposed it, whether the labeller agrees and how surely, the analyzer's words inside
//! (by kind, and the first and last by their text) and beside it, the chars beside it, its
//! shape, its own text when it is short enough to be one word (ただし, モーター温度) and the
//! name lists that hold it — and kept when the model's probability reaches the kind's
//! threshold. The labeller's own proposals (from a far lower margin than it keeps alone: 16
//! for names, none for schools) need the threshold (in the built-in model 0.65 for names, 0.85
//! for companies, 0.75 for schools and addresses); a rule's candidate goes only under the veto
//! (0.5 for names, 0.2 for companies: fragments such as いないとき or 勤務先 that a rule read
//! as a name; none for schools and addresses, whose rules are grammars: 〇〇大学, a prefecture
//! and a city). Two exceptions, both read from the name lists: a rule's name made of
//! listed names (鶉野, ふじもと + かずお) is never vetoed, so a kana full name the labeller
//! does not read stays masked; a rule's name on the list of public figures (大谷翔平) needs
//! the threshold like a labeller's proposal, and the names inside it go with it. Numbers with
//! exact grammars (phone, e-mail, card, My Number) are never judged.
//!
//! `examples/train_judge.rs` trains the model from the labelled corpora (the labeller
//! cross-fitted, so its scores are those of unseen text) and writes
//! `assets/safety/pii_tagger/judge.tsv`; the crate reads it at start. A missing or unreadable
//! model judges nothing: every candidate stays (masking more, never less).

use std::sync::OnceLock;

use super::PiiKind;
use super::tagger::core::{KeyMap, class, fold, shuffle};
use crate::text::analyzer::{ProperKind, ProperNoun};

/// The judged kinds, in the labeller's order (氏名, 会社名, 学校名, 住所).
pub const KINDS: usize = 4;

static BUILT_IN: &str = include_str!("../../../../assets/safety/pii_tagger/judge.tsv");

/// Weights by feature hash, and per kind the least probability kept.
#[derive(Debug, Default, Clone)]
pub struct Judge {
    w: KeyMap<f32>,
    /// Per kind the least probability for the labeller's own proposal to be added.
    pub threshold: [f32; KINDS],
    /// Per kind the probability under which a rule's candidate is turned down: lower than
    /// the threshold, since a rule that spoke is evidence and masking is the safe side.
    pub veto: [f32; KINDS],
    /// Per kind the least margin of a labeller span proposed to the judge (what it was
    /// trained with).
    pub floor: [f32; KINDS],
}

/// Whether the judge weighs candidates of `kind`.
pub fn judges(kind: PiiKind) -> bool {
    matches!(
        kind,
        PiiKind::Name | PiiKind::Company | PiiKind::School | PiiKind::Address
    )
}

/// One candidate for training: its kind index, features and whether it was right.
#[derive(Debug, Clone)]
pub struct Sample {
    pub kind: usize,
    pub feats: Vec<u64>,
    pub right: bool,
}

/// The L2 penalty per update the judge is trained with by default.
pub const L2: f32 = 1e-5;

/// FNV-1a of a feature name.
pub fn hash(name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

impl Judge {
    /// The model in `assets/safety/pii_tagger/judge.tsv`, read once; `None` when it is
    /// missing or unreadable (then nothing is judged).
    pub fn built_in() -> Option<&'static Judge> {
        static J: OnceLock<Option<Judge>> = OnceLock::new();
        J.get_or_init(|| Judge::from_tsv(BUILT_IN).ok().filter(|j| !j.w.is_empty()))
            .as_ref()
    }

    /// Reads `threshold K P`, `veto K P`, `floor K M` and `HASH<TAB>WEIGHT` lines (hex hash); `#`
    /// comments.
    pub fn from_tsv(text: &str) -> Result<Judge, String> {
        let mut j = Judge {
            threshold: [0.5; KINDS],
            veto: [0.5; KINDS],
            ..Judge::default()
        };
        for (n, line) in text.lines().enumerate() {
            let bad = || format!("judge.tsv:{}: expected `HASH\\tWEIGHT`", n + 1);
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let parts: Vec<&str> = line.split('\t').collect();
            match parts.as_slice() {
                ["threshold", k, p] => {
                    let k: usize = k.parse().map_err(|_| bad())?;
                    let p: f32 = p.parse().map_err(|_| bad())?;
                    *j.threshold.get_mut(k).ok_or_else(bad)? = p;
                }
                ["veto", k, p] => {
                    let k: usize = k.parse().map_err(|_| bad())?;
                    let p: f32 = p.parse().map_err(|_| bad())?;
                    *j.veto.get_mut(k).ok_or_else(bad)? = p;
                }
                ["floor", k, m] => {
                    let k: usize = k.parse().map_err(|_| bad())?;
                    let m: f32 = m.parse().map_err(|_| bad())?;
                    *j.floor.get_mut(k).ok_or_else(bad)? = m;
                }
                [h, w] => {
                    let h = u64::from_str_radix(h, 16).map_err(|_| bad())?;
                    j.w.insert(h, w.parse().map_err(|_| bad())?);
                }
                _ => return Err(bad()),
            }
        }
        Ok(j)
    }

    /// The model as `from_tsv` reads it, weights sorted by hash (the same model, the same file).
    pub fn to_tsv(&self, header: &str) -> String {
        let mut out = String::new();
        for l in header.lines() {
            out.push_str(&format!("# {l}\n"));
        }
        for (k, p) in self.threshold.iter().enumerate() {
            out.push_str(&format!("threshold\t{k}\t{p}\n"));
        }
        for (k, p) in self.veto.iter().enumerate() {
            out.push_str(&format!("veto\t{k}\t{p}\n"));
        }
        for (k, m) in self.floor.iter().enumerate() {
            out.push_str(&format!("floor\t{k}\t{m}\n"));
        }
        let mut w: Vec<(&u64, &f32)> = self.w.iter().filter(|(_, w)| w.abs() >= 1e-4).collect();
        w.sort_by_key(|(h, _)| **h);
        for (h, w) in w {
            out.push_str(&format!("{h:016x}\t{w:.4}\n"));
        }
        out
    }

    /// The weight of the feature named `name` (0 when the model has none).
    pub fn weight(&self, name: &str) -> f32 {
        self.w.get(&hash(name)).copied().unwrap_or(0.0)
    }

    /// The probability that a candidate with `feats` is personal data of its kind.
    pub fn prob(&self, feats: &[u64]) -> f32 {
        sigmoid(feats.iter().filter_map(|f| self.w.get(f)).sum())
    }

    /// Whether a candidate of kind index `kind` with `feats` stays: a labeller's proposal
    /// (`learned`) at the threshold, a rule's unless it falls under the veto.
    pub fn keeps(&self, kind: usize, learned: bool, feats: &[u64]) -> bool {
        let limits = if learned { &self.threshold } else { &self.veto };
        self.prob(feats) >= limits.get(kind).copied().unwrap_or(0.5)
    }

    /// Logistic regression by stochastic gradient descent with L2, the samples in a fixed
    /// shuffled order per epoch (deterministic for one `seed`).
    pub fn train(samples: &[Sample], epochs: usize, seed: u64) -> Judge {
        Judge::train_with(samples, epochs, seed, L2)
    }

    /// [`Judge::train`] with its own L2 penalty per update.
    pub fn train_with(samples: &[Sample], epochs: usize, seed: u64, l2: f32) -> Judge {
        let mut j = Judge {
            threshold: [0.5; KINDS],
            veto: [0.5; KINDS],
            ..Judge::default()
        };
        let mut order: Vec<usize> = (0..samples.len()).collect();
        let mut rng = seed.max(1);
        let rate = 0.1f32;
        for epoch in 0..epochs {
            shuffle(&mut order, &mut rng);
            let lr = rate / (1.0 + epoch as f32);
            for &i in &order {
                let s = &samples[i];
                let y = if s.right { 1.0 } else { 0.0 };
                let g = j.prob(&s.feats) - y;
                for f in &s.feats {
                    let w = j.w.entry(*f).or_default();
                    *w -= lr * (g + l2 * *w);
                }
            }
        }
        j
    }
}

/// What the judge sees of one candidate.
pub struct Seen<'a> {
    /// Kind index (氏名 0, 会社名 1, 学校名 2, 住所 3).
    pub kind: usize,
    pub s: usize,
    pub e: usize,
    /// The rule that proposed it (`learned` for the labeller) and its cue word, if any.
    pub src: &'a str,
    pub cue: &'a str,
    /// The folded chars of the message.
    pub chars: &'a [char],
    /// The analyzer's words.
    pub toks: &'a [ProperNoun],
    /// The labeller's spans `(kind index, start, end, margin)`.
    pub learned: &'a [(usize, usize, usize, f32)],
    /// Other candidates `(kind index, start, end, src)`.
    pub others: &'a [(usize, usize, usize, &'a str)],
    /// The name lists (one bit each) that hold the span, its first and its last word.
    pub lists: [u32; 3],
}

fn tok_kind(k: ProperKind) -> &'static str {
    match k {
        ProperKind::Surname => "S",
        ProperKind::GivenName => "G",
        ProperKind::Person => "P",
        ProperKind::Organization => "O",
        ProperKind::Place => "L",
        ProperKind::Other => "X",
        ProperKind::Unknown => "U",
        ProperKind::Common => "C",
        ProperKind::NotNoun => "N",
    }
}

/// The script classes of `chars`, runs of one class written once (山田たろう → kh).
fn shape(chars: &[char]) -> String {
    let mut out = String::new();
    for c in chars {
        let k = class(fold(*c)) as char;
        if !out.ends_with(k) {
            out.push(k);
        }
    }
    out
}

/// A margin's bucket: 0, then powers of two up to 256.
fn bucket(m: f32) -> u32 {
    if m <= 0.0 {
        0
    } else {
        (m.log2().floor().clamp(0.0, 8.0) as u32) + 1
    }
}

/// The features of one candidate, each prefixed by its kind.
pub fn features(c: &Seen) -> Vec<u64> {
    feature_names(c).iter().map(|f| hash(f)).collect()
}

/// The names of [`features`], each prefixed by the kind index (for reading a decision).
pub fn feature_names(c: &Seen) -> Vec<String> {
    let mut names: Vec<String> = vec!["bias".into(), format!("src={}", c.src)];
    if !c.cue.is_empty() {
        names.push(format!("cue={}", c.cue));
    }
    learned_features(c, &mut names);
    word_features(c, &mut names);
    let n = c.chars.len();
    let at = |i: usize| c.chars.get(i).map_or('∅', |ch| fold(*ch));
    let before: String = (c.s.saturating_sub(2)..c.s).map(at).collect();
    let after: String = (c.e..(c.e + 2).min(n)).map(at).collect();
    names.push(format!("p1={}", before.chars().last().unwrap_or('^')));
    names.push(format!("p2={before}"));
    names.push(format!("n1={}", after.chars().next().unwrap_or('$')));
    names.push(format!("n2={after}"));
    // The span's own ends: 運輸, 工業, 小, 号室 say a kind whatever the rule thought.
    let span: Vec<char> = c.chars[c.s..c.e].iter().map(|ch| fold(*ch)).collect();
    let tail = |k: usize| {
        span[span.len().saturating_sub(k)..]
            .iter()
            .collect::<String>()
    };
    names.push(format!("tail2={}", tail(2)));
    // What the span is, when it is short enough to be one word (ただし, モーター温度): an
    // ordinary word that the training text shows as no item is learned as such.
    if span.len() <= 10 {
        names.push(format!("surf={}", span.iter().collect::<String>()));
    }
    names.push(format!("head2={}", span.iter().take(2).collect::<String>()));
    let form = shape(&c.chars[c.s..c.e]);
    // Whether the script runs on past each edge (マイ|ナンバー, 旅行|行く): a piece of a
    // longer word, whatever the word.
    let runs_on = |out: Option<usize>, edge: usize| {
        out.and_then(|i| c.chars.get(i))
            .is_some_and(|a| class(fold(*a)) == class(fold(c.chars[edge])))
    };
    let edges = format!(
        "{}{}",
        u8::from(runs_on(c.s.checked_sub(1), c.s)),
        u8::from(runs_on(Some(c.e), c.e - 1))
    );
    names.push(format!("edge={edges}"));
    names.push(format!("edge={edges},shape={form}"));
    names.push(format!("shape={form}"));
    names.push(format!("len={}", (c.e - c.s).min(10)));
    for (i, bits) in c.lists.iter().enumerate() {
        for l in (0..32).filter(|l| bits & (1 << l) != 0) {
            names.push(format!("list{i}={l}"));
        }
    }
    let agree = c
        .others
        .iter()
        .filter(|o| o.0 == c.kind && o.1 < c.e && c.s < o.2 && o.3 != c.src)
        .map(|o| o.3);
    for src in agree {
        names.push(format!("with={src}"));
    }
    for o in c
        .others
        .iter()
        .filter(|o| o.0 != c.kind && o.1 < c.e && c.s < o.2)
    {
        names.push(format!("vs={}", o.0));
    }
    let k = c.kind;
    names.iter().map(|f| format!("{k}|{f}")).collect()
}

/// The labeller's view: whether a span of the same kind matches, lies inside, covers or
/// crosses the candidate, with its margin's bucket; and other kinds it proposes there.
fn learned_features(c: &Seen, names: &mut Vec<String>) {
    let mut found = false;
    for &(k, s, e, m) in c.learned.iter().filter(|l| l.1 < c.e && c.s < l.2) {
        if k != c.kind {
            names.push(format!("lab_other={k}"));
            continue;
        }
        found = true;
        let how = match (s.cmp(&c.s), e.cmp(&c.e)) {
            (std::cmp::Ordering::Equal, std::cmp::Ordering::Equal) => "exact",
            (a, b) if a.is_ge() && b.is_le() => "inside",
            (a, b) if a.is_le() && b.is_ge() => "covers",
            _ => "crosses",
        };
        names.push(format!("lab={how}"));
        names.push(format!("lab={how},m={}", bucket(m)));
        names.push(format!("src={},lab={how}", c.src));
    }
    if !found {
        // How far a rule is trusted where the labeller is silent is the rule's own.
        names.push("lab=none".into());
        names.push(format!("src={},lab=none", c.src));
    }
}

/// The analyzer's words: the kinds inside, whether the span starts and ends on word
/// boundaries, and the words before and after it (kind and surface).
fn word_features(c: &Seen, names: &mut Vec<String>) {
    if c.toks.is_empty() {
        names.push("notoks".into());
        return;
    }
    let surface = |t: &ProperNoun| -> String { c.chars[t.start..t.end].iter().collect() };
    let mut inside = String::new();
    for t in c.toks.iter().filter(|t| t.start < c.e && c.s < t.end) {
        inside.push_str(tok_kind(t.kind));
    }
    names.push(format!("toks={inside}"));
    let starts = c.toks.iter().any(|t| t.start == c.s);
    let ends = c.toks.iter().any(|t| t.end == c.e);
    names.push(format!("whole={}{}", u8::from(starts), u8::from(ends)));
    let mut before = c.toks.iter().rev().filter(|t| t.end <= c.s);
    if let Some(t) = before.next() {
        names.push(format!("wb={}", tok_kind(t.kind)));
        names.push(format!("wbs={}", surface(t)));
        // Two words back (最寄り|は, 出身|は): what the place or the person is to the writer.
        if let Some(u) = before.next() {
            names.push(format!("wbs2={}{}", surface(u), surface(t)));
        }
    }
    let mut after = c.toks.iter().filter(|t| t.start >= c.e);
    if let Some(t) = after.next() {
        names.push(format!("wa={}", tok_kind(t.kind)));
        names.push(format!("was={}", surface(t)));
        if let Some(u) = after.next() {
            names.push(format!("was2={}{}", surface(t), surface(u)));
        }
    }
    // Whether the span is the analyzer's one place, or nothing but common words.
    let inside: Vec<&ProperNoun> = c
        .toks
        .iter()
        .filter(|t| c.s <= t.start && t.end <= c.e)
        .collect();
    if let [t] = inside.as_slice() {
        names.push(format!("one={}", tok_kind(t.kind)));
    }
    // The first and last word inside (温度 ends no company, 商事 ends many).
    if let (Some(f), Some(l)) = (inside.first(), inside.last()) {
        names.push(format!("tfirst={}", surface(f)));
        names.push(format!("tlast={}", surface(l)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(kind: usize, feats: &[&str], right: bool) -> Sample {
        Sample {
            kind,
            feats: feats.iter().map(|f| hash(f)).collect(),
            right,
        }
    }

    #[test]
    fn learns_which_feature_marks_a_right_candidate_and_reads_back_what_it_wrote() {
        // Generated: "good" goes with right candidates, "bad" with wrong ones, noise both.
        let samples: Vec<Sample> = (0..400)
            .map(|i| {
                let right = i % 3 != 0;
                let noise = format!("n{}", i % 7);
                let cue = if right { "good" } else { "bad" };
                sample(0, &["bias", cue, &noise], right)
            })
            .collect();
        let j = Judge::train(&samples, 5, 7);
        assert!(j.prob(&[hash("bias"), hash("good")]) > 0.8);
        assert!(j.prob(&[hash("bias"), hash("bad")]) < 0.2);
        let again = Judge::from_tsv(&j.to_tsv("test")).unwrap();
        for s in &samples {
            for learned in [true, false] {
                assert_eq!(
                    j.keeps(0, learned, &s.feats),
                    again.keeps(0, learned, &s.feats)
                );
            }
        }
    }

    #[test]
    fn a_malformed_line_is_named() {
        let e = Judge::from_tsv("threshold\t0\t0.5\nzz\t1.0\n").unwrap_err();
        assert!(e.starts_with("judge.tsv:2:"), "{e}");
    }
}
