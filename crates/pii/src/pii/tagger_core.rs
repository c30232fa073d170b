//! A character-level sequence labeller for personal data that rules cannot list: names,
//! companies, schools and addresses. An averaged perceptron (Collins 2002) tags every char
//! B-/I-/O for four kinds, greedily left to right, from features of the chars around it (the
//! chars, their bigrams, their script classes and the run of one script they sit in), the name
//! and place lists it overlaps, the words beside that run (さん, 様, が, 氏名:), labels
//! before it, the two tags before it and, with the analyzer, the kind of the word each char is
//! in and the text of that word and of the words around it (…で働いてる, …のやつ). Training
//! sees each labelled text, its negative copy (every item replaced by an ordinary word) and its
//! swapped copy (every name replaced by one of the name lists'), so a cue alone makes no item
//! and a name is learned by where it stands.
//!
//! This file uses only `std`: `build.rs` includes it to train the model from the labelled
//! corpora listed in `assets/safety/pii_tagger/train.txt` at build time, and the crate
//! includes it to read and run that model — one feature function for both, so the features
//! trained on are the features seen.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Feature keys are FNV hashes already: the map uses them as they are.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A map keyed by feature hashes.
pub type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;

/// The kinds the tagger labels, in tag order (tag 0 is O, then B and I per kind).
pub const KINDS: [&str; 4] = ["氏名", "会社名", "学校名", "住所"];
pub const N_TAGS: usize = 1 + 2 * KINDS.len();

fn b_tag(kind: usize) -> u8 {
    (1 + 2 * kind) as u8
}

fn i_tag(kind: usize) -> u8 {
    (2 + 2 * kind) as u8
}

/// The kind of a B or I tag.
pub fn kind_of(tag: u8) -> Option<usize> {
    (tag > 0).then(|| (tag as usize - 1) / 2)
}

/// Folds a char for the features: full-width ASCII to ASCII, latin to lower case.
pub fn fold(c: char) -> char {
    let c = match c as u32 {
        0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
        0x3000 => ' ',
        _ => c,
    };
    c.to_ascii_lowercase()
}

/// Script class: k kanji, h hiragana, t katakana (ー too), a latin, d digit, s space, p other.
pub fn class(c: char) -> u8 {
    match c {
        '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}' | '々' | '〆' | 'ヶ' => b'k',
        '\u{3041}'..='\u{309F}' => b'h',
        '\u{30A0}'..='\u{30FF}' | '\u{FF66}'..='\u{FF9F}' => b't',
        'a'..='z' | 'A'..='Z' => b'a',
        '0'..='9' => b'd',
        c if c.is_whitespace() => b's',
        _ => b'p',
    }
}

/// Word lists the features look up, all in one map from the FNV hash of a folded word or
/// word prefix to the lists that hold it as a word and as a proper prefix (one bit per list):
/// a lookup hashes char by char as it goes and stops as soon as no word goes on, and reading
/// 250,000 names allocates no string per word.
#[derive(Default)]
pub struct Lists {
    entries: KeyMap<(u32, u32)>,
    /// Per list its three feature names (a word starts here, ends here, covers this char).
    marks: Vec<[String; 3]>,
    /// The longest word of any list, at most [`LONGEST`].
    longest: usize,
}

/// Words longer than this many chars are left out of the lists.
const LONGEST: usize = 12;

fn step(h: u64, c: char) -> u64 {
    (h ^ u64::from(c as u32)).wrapping_mul(0x0100_0000_01b3)
}

const FNV0: u64 = 0xcbf2_9ce4_8422_2325;

impl Lists {
    /// Adds a list from text: per line every tab-separated field (its first word), `#`
    /// comments and blank lines skipped. Words of one char are left out (too many hits). At
    /// most 32 lists.
    pub fn add(&mut self, name: &str, text: &str) {
        let Some(bit) = 1u32.checked_shl(self.marks.len() as u32) else {
            return;
        };
        for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
            // Every tab-separated field (a name and its readings), its first word only.
            for field in line.split('\t') {
                let w = field.split(' ').next().unwrap_or("").trim();
                let len = w.chars().count();
                if !(2..=LONGEST).contains(&len) {
                    continue;
                }
                self.longest = self.longest.max(len);
                let mut h = FNV0;
                for (k, c) in w.chars().map(fold).enumerate() {
                    h = step(h, c);
                    let e = self.entries.entry(h).or_default();
                    if k + 1 == len {
                        e.0 |= bit;
                    } else {
                        e.1 |= bit;
                    }
                }
            }
        }
        self.marks.push([
            format!("L{name}s"),
            format!("L{name}e"),
            format!("L{name}i"),
        ]);
    }

    /// The bit of the list added as `name` (0 when there is none).
    pub fn bit(&self, name: &str) -> u32 {
        let start = format!("L{name}s");
        self.marks
            .iter()
            .position(|m| m[0] == start)
            .map_or(0, |l| 1 << l)
    }

    /// Whether `word` (folded) is a whole word of any list.
    pub fn holds(&self, word: &str) -> bool {
        self.which(word) != 0
    }

    /// The lists (one bit each, in the order added) that hold `word` (folded) as a word.
    pub fn which(&self, word: &str) -> u32 {
        let mut h = FNV0;
        for c in word.chars().map(fold) {
            h = step(h, c);
        }
        if word.chars().count() < 2 {
            return 0;
        }
        self.entries.get(&h).map_or(0, |e| e.0)
    }

    /// Per char, per list: (a word starts here, a word covers this char, a word ends here),
    /// as feature names. The longest word of each list starting at each char is taken; a word
    /// in latin letters only where it stands as a whole word (ito in Ito, not in invoice).
    fn marks(&self, chars: &[char]) -> Vec<Vec<&str>> {
        let lists = self.marks.len();
        let mut out = vec![Vec::new(); chars.len()];
        let mut cover = vec![0u32; chars.len()];
        let mut best = vec![0usize; lists];
        let letter = |i: usize| chars.get(i).is_some_and(|c| c.is_ascii_alphabetic());
        for s in 0..chars.len() {
            best.iter_mut().for_each(|b| *b = 0);
            let latin = letter(s);
            if latin && s > 0 && letter(s - 1) {
                continue;
            }
            let mut h = FNV0;
            for (k, c) in chars[s..(s + self.longest).min(chars.len())]
                .iter()
                .enumerate()
            {
                h = step(h, *c);
                let Some(&(words, prefixes)) = self.entries.get(&h) else {
                    break;
                };
                let whole = !latin || !letter(s + k + 1);
                for (l, b) in best.iter_mut().enumerate() {
                    if k >= 1 && whole && words & (1 << l) != 0 {
                        *b = k + 1;
                    }
                }
                if prefixes == 0 {
                    break;
                }
            }
            for (l, &b) in best.iter().enumerate().filter(|(_, b)| **b > 0) {
                out[s].push(self.marks[l][0].as_str());
                out[s + b - 1].push(self.marks[l][1].as_str());
                for c in &mut cover[s..s + b] {
                    *c |= 1 << l;
                }
            }
        }
        for (i, c) in cover.iter().enumerate() {
            for l in (0..lists).filter(|l| c & (1 << l) != 0) {
                out[i].push(self.marks[l][2].as_str());
            }
        }
        out
    }
}

/// Words that label what follows (氏名: 山田太郎), as they are folded.
const LABELS: [&str; 16] = [
    "氏名",
    "名前",
    "お名前",
    "宛名",
    "住所",
    "ご住所",
    "お届け先",
    "送り先",
    "会社",
    "会社名",
    "勤務先",
    "学校",
    "学校名",
    "所属",
    "担当",
    "差出人",
];

fn hash(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0x1F)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The features of every char that do not depend on tags, without the analyzer's words.
pub fn features(text: &str, lists: &Lists) -> Vec<Vec<u64>> {
    features_with(text, lists, None)
}

/// What the analyzer read each char as ([`TOKEN_KINDS`]), one code char per char of the text:
/// upper case where a word starts, lower case inside it, `_` outside every word.
pub type Codes<'a> = Option<&'a str>;

/// The analyzer's word kinds as code letters: 姓 S, 名 G, 人名 P, 組織 O, 地域 L, another proper
/// noun X, unknown word U, common noun C, no noun N.
pub const TOKEN_KINDS: &str = "SGPOLXUCN";

/// The features of every char that do not depend on tags; with `codes` (as many as the text
/// has chars) also the analyzer's word around each char and the words beside it.
pub fn features_with(text: &str, lists: &Lists, codes: Codes) -> Vec<Vec<u64>> {
    // Folded once: the char features and the words' text read the same chars.
    let chars: Vec<char> = text.chars().map(fold).collect();
    let mut out = char_features(&chars, lists);
    if let Some(codes) = codes {
        let codes: Vec<char> = codes.chars().collect();
        if codes.len() == out.len() {
            let (words, at) = words_of(&codes);
            for (i, f) in out.iter_mut().enumerate() {
                f.extend(word_features(&codes, &words, &at, i));
                f.extend(word_surfaces(&words, &at, &chars, i));
            }
        }
    }
    out
}

/// The analyzer's word at `i`, whether it starts there, its script class, and the kinds of
/// the words before and after it.
fn word_features(codes: &[char], words: &[(usize, usize)], at: &[usize], i: usize) -> [u64; 5] {
    let kind = |c: char| c.to_ascii_uppercase().to_string();
    let (start, end) = words[at[i]];
    let before = start
        .checked_sub(1)
        .map_or("∅".to_string(), |j| kind(codes[j]));
    let after = codes.get(end).map_or("∅".to_string(), |c| kind(*c));
    let me = kind(codes[i]);
    let at_start = if codes[i].is_ascii_uppercase() {
        "b"
    } else {
        "i"
    };
    [
        hash(&["w", &me, at_start]),
        hash(&["w-1", &before, &me]),
        hash(&["w+1", &me, &after]),
        hash(&["w3", &before, &me, &after]),
        hash(&["w-end", &me, if i + 1 == end { "e" } else { "m" }]),
    ]
}

/// The analyzer's words as `(start, end)` char spans, and the index of the word each char is
/// in: one pass, so a message of one long word costs no more than any other.
fn words_of(codes: &[char]) -> (Vec<(usize, usize)>, Vec<usize>) {
    let mut words: Vec<(usize, usize)> = Vec::new();
    let mut at = Vec::with_capacity(codes.len());
    for (j, c) in codes.iter().enumerate() {
        if j == 0 || c.is_ascii_uppercase() || *c == '_' {
            words.push((j, j + 1));
        } else if let Some(w) = words.last_mut() {
            w.1 = j + 1;
        }
        at.push(words.len() - 1);
    }
    (words, at)
}

/// The words (as the analyzer cut them) before and after the word at `i`, by their text:
/// what stands beside a name a few chars away (…で働いてる, …のやつ). A word is seen by its
/// first six chars.
fn word_surfaces(words: &[(usize, usize)], at: &[usize], chars: &[char], i: usize) -> [u64; 5] {
    let text = |k: Option<usize>| -> String {
        k.and_then(|k| words.get(k)).map_or("∅".into(), |&(s, e)| {
            chars[s..e.min(s + 6)].iter().collect()
        })
    };
    let k = at[i];
    let (start, end) = words[k];
    let (prev, me, next) = (text(k.checked_sub(1)), text(Some(k)), text(Some(k + 1)));
    let pos = if i == start { "b" } else { "i" };
    [
        hash(&["ws-1", &prev, pos]),
        hash(&["ws+1", &next, if i + 1 == end { "e" } else { "m" }]),
        hash(&["ws", &me]),
        hash(&["ws+12", &next, &text(Some(k + 2))]),
        hash(&["ws-1,0", &prev, &me]),
    ]
}

/// The features of every folded char from the chars around it, their classes, runs, labels
/// and list words.
fn char_features(chars: &[char], lists: &Lists) -> Vec<Vec<u64>> {
    let n = chars.len();
    let cls: Vec<u8> = chars.iter().map(|c| class(*c)).collect();
    let strs: Vec<String> = chars.iter().map(|c| c.to_string()).collect();
    let at = |i: isize| -> &str {
        if i < 0 || i as usize >= n {
            "∅"
        } else {
            strs[i as usize].as_str()
        }
    };
    let cl = |i: isize| -> char {
        if i < 0 || i as usize >= n {
            '_'
        } else {
            cls[i as usize] as char
        }
    };
    // Runs of one class: start and end of the run each char is in.
    let mut run = vec![(0usize, 0usize); n];
    let mut s = 0;
    for i in 0..=n {
        if i == n || (i > s && cls[i] != cls[s]) {
            for r in &mut run[s..i] {
                *r = (s, i);
            }
            s = i;
        }
    }
    let marks = lists.marks(chars);
    let label_at: Vec<Option<&str>> = (0..n)
        .map(|i| {
            let before: String = chars[i.saturating_sub(8)..i].iter().collect();
            LABELS.iter().find(|l| before.contains(*l)).copied()
        })
        .collect();
    (0..n)
        .map(|i| {
            let k = i as isize;
            let (rs, re) = run[i];
            let after: String = chars[re..(re + 2).min(n)].iter().collect();
            let before: String = chars[rs.saturating_sub(2)..rs].iter().collect();
            let len = (re - rs).min(6).to_string();
            let pos = if i == rs {
                "b"
            } else if i + 1 == re {
                "e"
            } else {
                "m"
            };
            let window: String = (-2..=2).map(|d| cl(k + d)).collect();
            let mut f = vec![
                hash(&["bias"]),
                hash(&["c0", at(k)]),
                hash(&["c-1", at(k - 1)]),
                hash(&["c+1", at(k + 1)]),
                hash(&["c-2", at(k - 2)]),
                hash(&["c+2", at(k + 2)]),
                hash(&["b-", at(k - 1), at(k)]),
                hash(&["b+", at(k), at(k + 1)]),
                hash(&["t3", at(k - 1), at(k), at(k + 1)]),
                hash(&["cls", &window]),
                hash(&["run", &(cls[i] as char).to_string(), &len, pos]),
                hash(&["after", &(cls[i] as char).to_string(), &after]),
                hash(&["before", &(cls[i] as char).to_string(), &before]),
                hash(&[
                    "after1",
                    &after.chars().next().map(String::from).unwrap_or_default(),
                ]),
            ];
            let after3: String = chars[re..(re + 3).min(n)].iter().collect();
            f.push(hash(&["after3", &(cls[i] as char).to_string(), &after3]));
            if let Some(l) = label_at[i] {
                f.push(hash(&["label", l]));
                f.push(hash(&["label-cls", l, &(cls[i] as char).to_string()]));
            }
            for m in &marks[i] {
                f.push(hash(&["list", m]));
                f.push(hash(&["list-after", m, &after]));
            }
            f
        })
        .collect()
}

/// The key of a text in the word-code file (`assets/safety/pii_tagger/tokens.tsv`).
pub fn text_key(text: &str) -> u64 {
    hash(&[text])
}

/// Reads the word-code file: per line the text's key in hex, a tab, its codes.
pub fn read_codes(tsv: &str) -> HashMap<u64, String> {
    tsv.lines()
        .filter_map(|l| l.split_once('\t'))
        .filter_map(|(k, c)| Some((u64::from_str_radix(k, 16).ok()?, c.to_string())))
        .collect()
}

fn tag_features(prev: u8, prev2: u8) -> [u64; 2] {
    [
        hash(&["t-1", &prev.to_string()]),
        hash(&["t-2", &prev2.to_string(), &prev.to_string()]),
    ]
}

/// Can `tag` follow `prev`? (an I only continues its own kind)
fn allowed(prev: u8, tag: u8) -> bool {
    tag == 0 || tag % 2 == 1 || (prev != 0 && kind_of(prev) == kind_of(tag))
}

/// The trained weights.
#[derive(Default)]
pub struct Model {
    pub w: KeyMap<[f32; N_TAGS]>,
}

impl Model {
    fn scores(&self, f: &[u64], t: &[u64; 2]) -> [f32; N_TAGS] {
        let mut s = [0f32; N_TAGS];
        for k in f.iter().chain(t.iter()) {
            if let Some(w) = self.w.get(k) {
                for (a, b) in s.iter_mut().zip(w) {
                    *a += b;
                }
            }
        }
        s
    }

    /// Tags and the margin of each chosen tag over O (0 for O itself).
    pub fn decode(&self, feats: &[Vec<u64>]) -> Vec<(u8, f32)> {
        let mut out: Vec<(u8, f32)> = Vec::with_capacity(feats.len());
        for f in feats {
            let prev = out.last().map_or(0, |t| t.0);
            let prev2 = out.len().checked_sub(2).map_or(0, |i| out[i].0);
            let s = self.scores(f, &tag_features(prev, prev2));
            let best = (0..N_TAGS as u8)
                .filter(|&t| allowed(prev, t))
                .max_by(|&a, &b| s[a as usize].total_cmp(&s[b as usize]))
                .unwrap_or(0);
            out.push((best, s[best as usize] - s[0]));
        }
        out
    }

    /// Little-endian: count, then per feature its key and N_TAGS weights.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut keys: Vec<&u64> = self.w.keys().collect();
        keys.sort();
        let mut out = Vec::with_capacity(8 + keys.len() * (8 + 4 * N_TAGS));
        out.extend((keys.len() as u64).to_le_bytes());
        for k in keys {
            out.extend(k.to_le_bytes());
            for x in &self.w[k] {
                out.extend(x.to_le_bytes());
            }
        }
        out
    }

    pub fn from_bytes(b: &[u8]) -> Option<Model> {
        let n = u64::from_le_bytes(b.get(..8)?.try_into().ok()?) as usize;
        let rec = 8 + 4 * N_TAGS;
        if b.len() != 8 + n * rec {
            return None;
        }
        let mut w = KeyMap::with_capacity_and_hasher(n, Default::default());
        for r in b[8..].chunks_exact(rec) {
            let k = u64::from_le_bytes(r[..8].try_into().ok()?);
            let mut v = [0f32; N_TAGS];
            for (j, x) in v.iter_mut().enumerate() {
                *x = f32::from_le_bytes(r[8 + 4 * j..12 + 4 * j].try_into().ok()?);
            }
            w.insert(k, v);
        }
        Some(Model { w })
    }
}

/// A labelled message: its text and spans `(start, end, kind label)` in chars.
#[derive(Debug, Clone)]
pub struct Example {
    pub text: String,
    pub spans: Vec<(usize, usize, String)>,
}

/// The gold tags of an example (spans of other kinds are O).
pub fn gold(e: &Example) -> Vec<u8> {
    let n = e.text.chars().count();
    let mut tags = vec![0u8; n];
    for (s, en, kind) in &e.spans {
        let Some(k) = KINDS.iter().position(|x| x == kind) else {
            continue;
        };
        for (i, t) in tags.iter_mut().enumerate().take((*en).min(n)).skip(*s) {
            *t = if i == *s { b_tag(k) } else { i_tag(k) };
        }
    }
    tags
}

/// Ordinary words that stand where a removed item was, for the negative copies.
const FILLERS: [&str; 12] = [
    "それ",
    "あれ",
    "駅",
    "家",
    "お店",
    "会議",
    "映画",
    "ランチ",
    "天気",
    "宿題",
    "みんな",
    "あの人",
];

/// A copy of `e` with every labelled item replaced by an ordinary word (of `swaps`' fillers,
/// or [`FILLERS`] when it has none) and no spans: the same frame with nothing personal in it,
/// so a cue alone (さん, 氏名:) never makes a name.
pub fn negative(e: &Example, k: usize, swaps: &Swaps) -> Example {
    let chars: Vec<char> = e.text.chars().collect();
    let mut spans: Vec<&(usize, usize, String)> = e.spans.iter().collect();
    spans.sort();
    let mut out = String::new();
    let mut at = 0;
    for (j, (s, en, _)) in spans.into_iter().enumerate() {
        if *s < at || *en > chars.len() {
            continue;
        }
        out.extend(&chars[at..*s]);
        if swaps.fillers.is_empty() {
            out.push_str(FILLERS[(k + j) % FILLERS.len()]);
        } else {
            // A stride prime to most list lengths spreads neighbours over the list.
            out.push_str(&swaps.fillers[(k * 7 + j) % swaps.fillers.len()]);
        }
        at = *en;
    }
    out.extend(&chars[at..]);
    Example {
        text: out,
        spans: Vec::new(),
    }
}

/// Names that stand in for the labelled names of a training text in its swapped copy
/// ([`swapped`]): groups of rows (surnames, given names), each row one name in its forms
/// (kanji, hiragana, katakana). Mention replacement (Dai and Adel 2020): the frame stays, the
/// name changes, so the labeller learns where a name stands and not only which names it saw.
/// Also the ordinary words that stand where the items were in the negative copies
/// ([`negative`]).
#[derive(Default, Clone)]
pub struct Swaps {
    groups: Vec<Vec<Vec<String>>>,
    fillers: Vec<String>,
}

impl Swaps {
    /// Adds one group from tab-separated rows (`#` lines and blank lines skipped).
    pub fn add(&mut self, tsv: &str) {
        let rows: Vec<Vec<String>> = tsv
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(|l| {
                l.split('\t')
                    .map(|f| f.trim().to_string())
                    .filter(|f| !f.is_empty())
                    .collect::<Vec<_>>()
            })
            .filter(|r| !r.is_empty())
            .collect();
        if !rows.is_empty() {
            self.groups.push(rows);
        }
    }

    /// Adds ordinary words for the negative copies, one per line (`#` lines skipped).
    pub fn add_fillers(&mut self, text: &str) {
        self.fillers.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(String::from),
        );
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The name for draw `key`: a form of a row of one group, or, as often as any one group
    /// is drawn, a full name: a form from the first group (surnames) and one from the second
    /// (given names), sometimes with a space between.
    fn pick(&self, mut key: u64) -> Option<String> {
        fn next(key: &mut u64, n: usize) -> usize {
            (xorshift(key) % n.max(1) as u64) as usize
        }
        fn form(g: &[Vec<String>], key: &mut u64) -> String {
            let row = &g[next(key, g.len())];
            row[next(key, row.len())].clone()
        }
        let n = self.groups.len();
        let full = n >= 2;
        let g = next(&mut key, n + usize::from(full));
        if g < n {
            return Some(form(self.groups.get(g)?, &mut key));
        }
        let sur = form(&self.groups[0], &mut key);
        let given = form(&self.groups[1], &mut key);
        let space = if next(&mut key, 3) == 0 { " " } else { "" };
        Some(format!("{sur}{space}{given}"))
    }
}

/// A copy of `e` with each 氏名 span replaced by a name of `swaps`, the other spans moved with
/// the text; `None` when `e` labels no name. The same example and swaps give the same copy,
/// so its word codes can be written once (`examples/annotate.rs`).
pub fn swapped(e: &Example, swaps: &Swaps) -> Option<Example> {
    let chars: Vec<char> = e.text.chars().collect();
    let mut spans: Vec<&(usize, usize, String)> = e.spans.iter().collect();
    spans.sort();
    if swaps.is_empty() || !spans.iter().any(|s| s.2 == KINDS[0]) {
        return None;
    }
    let (mut text, mut out, mut at) = (String::new(), Vec::new(), 0);
    // The copy's length in chars so far (its spans are in chars).
    let mut len = 0;
    let mut key = text_key(&e.text) | 1;
    for (s, en, kind) in spans {
        if *s < at || *en > chars.len() {
            return None;
        }
        text.extend(&chars[at..*s]);
        let start = len + (*s - at);
        key = key.wrapping_mul(0x0100_0000_01b3) | 1;
        let span = match swaps.pick(key).filter(|_| kind == KINDS[0]) {
            Some(name) => name,
            None => chars[*s..*en].iter().collect(),
        };
        text.push_str(&span);
        len = start + span.chars().count();
        out.push((start, len, kind.clone()));
        at = *en;
    }
    text.extend(&chars[at..]);
    Some(Example { text, spans: out })
}

/// Trains an averaged perceptron for `epochs` passes, examples shuffled by `seed`. Every
/// example with items also gives its negative copy ([`negative`]).
pub fn train(examples: &[Example], lists: &Lists, epochs: usize, seed: u64) -> Model {
    train_with(examples, lists, &Swaps::default(), epochs, seed, &|_| None)
}

/// The texts training sees: every example, the negative copy ([`negative`]) of each with items,
/// and the swapped copy ([`swapped`]) of each with names.
pub fn training_texts(examples: &[Example], swaps: &Swaps) -> Vec<Example> {
    let negatives = examples
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.spans.is_empty())
        .map(|(k, e)| negative(e, k, swaps));
    let copies = examples.iter().filter_map(|e| swapped(e, swaps));
    examples
        .iter()
        .cloned()
        .chain(negatives)
        .chain(copies)
        .collect()
}

/// [`train`] with swapped copies from `swaps` and the analyzer's word codes of each text,
/// where `codes` knows them.
pub fn train_with(
    examples: &[Example],
    lists: &Lists,
    swaps: &Swaps,
    epochs: usize,
    seed: u64,
    codes: &dyn Fn(&str) -> Option<String>,
) -> Model {
    let data: Vec<(Vec<Vec<u64>>, Vec<u8>)> = training_texts(examples, swaps)
        .iter()
        .map(|e| {
            let c = codes(&e.text);
            (features_with(&e.text, lists, c.as_deref()), gold(e))
        })
        .collect();
    let mut w: KeyMap<[f32; N_TAGS]> = KeyMap::default();
    // Sum of each weight over time, kept lazily: (total, last step it changed).
    let mut acc: KeyMap<([f32; N_TAGS], [u32; N_TAGS])> = KeyMap::default();
    let mut step: u32 = 1;
    let mut order: Vec<usize> = (0..data.len()).collect();
    let mut rng = seed | 1;
    for _ in 0..epochs {
        shuffle(&mut order, &mut rng);
        for &d in &order {
            let (feats, gold) = &data[d];
            let model = Model {
                w: std::mem::take(&mut w),
            };
            let guess = model.decode(feats);
            w = model.w;
            let mut prev = (0u8, 0u8);
            let mut gprev = (0u8, 0u8);
            for (i, f) in feats.iter().enumerate() {
                let (g, p) = (gold[i], guess[i].0);
                let gt = tag_features(gprev.0, gprev.1);
                let pt = tag_features(prev.0, prev.1);
                if g != p {
                    for k in f.iter().chain(gt.iter()) {
                        update(&mut w, &mut acc, *k, g as usize, 1.0, step);
                    }
                    for k in f.iter().chain(pt.iter()) {
                        update(&mut w, &mut acc, *k, p as usize, -1.0, step);
                    }
                }
                prev = (p, prev.0);
                gprev = (g, gprev.0);
            }
            step += 1;
        }
    }
    // Averages, with small weights dropped.
    let mut avg = KeyMap::default();
    for (k, v) in &w {
        let (total, last) = acc.get(k).copied().unwrap_or(([0.0; N_TAGS], [0; N_TAGS]));
        let mut a = [0f32; N_TAGS];
        for j in 0..N_TAGS {
            let t = total[j] + v[j] * (step - last[j]) as f32;
            a[j] = t / step as f32;
        }
        if a.iter().any(|x| x.abs() > 1e-3) {
            avg.insert(*k, a);
        }
    }
    Model { w: avg }
}

fn update(
    w: &mut KeyMap<[f32; N_TAGS]>,
    acc: &mut KeyMap<([f32; N_TAGS], [u32; N_TAGS])>,
    k: u64,
    tag: usize,
    delta: f32,
    step: u32,
) {
    let wv = w.entry(k).or_insert([0.0; N_TAGS]);
    let (total, last) = acc.entry(k).or_insert(([0.0; N_TAGS], [0; N_TAGS]));
    total[tag] += wv[tag] * (step - last[tag]) as f32;
    last[tag] = step;
    wv[tag] += delta;
}

/// Fisher–Yates with xorshift64 from `rng` (never 0): the same `rng` gives the same order,
/// so training is deterministic for one seed.
pub fn shuffle(order: &mut [usize], rng: &mut u64) {
    for i in (1..order.len()).rev() {
        order.swap(i, (xorshift(rng) % (i as u64 + 1)) as usize);
    }
}

/// One step of xorshift64 on `rng` (never 0), returning the new state.
fn xorshift(rng: &mut u64) -> u64 {
    *rng ^= *rng << 13;
    *rng ^= *rng >> 7;
    *rng ^= *rng << 17;
    *rng
}

/// Spans `(start, end, kind index, least margin)` of a tag sequence.
pub fn spans(tags: &[(u8, f32)]) -> Vec<(usize, usize, usize, f32)> {
    let mut out: Vec<(usize, usize, usize, f32)> = Vec::new();
    for (i, &(t, m)) in tags.iter().enumerate() {
        let Some(k) = kind_of(t) else {
            continue;
        };
        match out.last_mut() {
            Some(last) if t % 2 == 0 && last.1 == i && last.2 == k => {
                last.1 = i + 1;
                last.3 = last.3.min(m);
            }
            _ => out.push((i, i + 1, k, m)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which chars a list word starts at, in `text` (folded as the features fold it).
    fn starts(lists: &Lists, text: &str) -> Vec<usize> {
        let chars: Vec<char> = text.chars().map(fold).collect();
        lists
            .marks(&chars)
            .iter()
            .enumerate()
            .filter(|(_, m)| m.contains(&"Lrsurs"))
            .map(|(i, _)| i)
            .collect()
    }

    /// A romaji name is marked where it stands as a word, in any case and width, and never
    /// inside a longer latin word; kana and kanji words are marked wherever they stand.
    #[test]
    fn latin_list_words_are_marked_only_as_whole_words() {
        let mut lists = Lists::default();
        lists.add("rsur", "ito\nmori\nsato\n");
        lists.add("sur", "伊藤\n");
        for (text, want) in [
            ("Ito", vec![0]),
            ("pls ask ito now", vec![8]),
            ("ＩＴＯ様", vec![0]),
            ("Mori-san and SATO", vec![0, 13]),
            ("the invoice", vec![]),
            ("memories, moritz, satori", vec![]),
            // A digit or a mark ends a word (handles like ito2).
            ("kito ito2 itoh", vec![5]),
        ] {
            assert_eq!(starts(&lists, text), want, "{text}");
        }
        let chars: Vec<char> = "元伊藤さん".chars().collect();
        assert!(
            lists.marks(&chars)[1].contains(&"Lsurs"),
            "kanji inside a run"
        );
    }

    /// Every char sees the text of its own word and of the words before and after it, as
    /// the analyzer cut them (whatever the cut), and sees none without the analyzer.
    #[test]
    fn each_char_sees_the_words_around_its_own() {
        let text = "しんじのやつがきた";
        let lists = Lists::default();
        let plain = features(text, &lists);
        // Every way of cutting the text into three words.
        for a in 1..8 {
            for b in a + 1..9 {
                let codes: String = text
                    .chars()
                    .enumerate()
                    .map(|(i, _)| if i == 0 || i == a || i == b { 'N' } else { 'n' })
                    .collect();
                let f = features_with(text, &lists, Some(&codes));
                // A word is seen by its first six chars.
                let word = |s: usize, e: usize| -> String {
                    text.chars().skip(s).take((e - s).min(6)).collect()
                };
                let (w0, w1, w2) = (word(0, a), word(a, b), word(b, 9));
                let mid = a + (b - a) / 2;
                assert!(f[mid].contains(&hash(&["ws", &w1])), "{w0}|{w1}|{w2}");
                assert!(f[a].contains(&hash(&["ws-1", &w0, "b"])), "{w0}|{w1}|{w2}");
                assert!(
                    f[b - 1].contains(&hash(&["ws+1", &w2, "e"])),
                    "{w0}|{w1}|{w2}"
                );
                assert!(!f[0].contains(&hash(&["ws-1", &w0, "b"])));
                assert_eq!(f.len(), plain.len());
            }
        }
        assert!(
            plain
                .iter()
                .flatten()
                .all(|h| *h != hash(&["ws", "しんじ"]))
        );
    }
}
