//! The reviewed text prepared once per review: NFKC-folded with its map back to original char
//! offsets, its sentences and its paragraphs.

use crate::text::sentences;

use crate::vault::similarity::Folded;

/// One sentence: original char range (whitespace trimmed), folded char range, paragraph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Sent {
    pub orig: (usize, usize),
    pub norm: (usize, usize),
    pub paragraph: usize,
}

pub(super) struct Prepared {
    pub fold: Folded,
    /// `fold.chars` as a string, for the Aho-Corasick automata.
    pub string: String,
    /// Byte offset of each folded char in `string`, plus `string.len()`.
    char_bytes: Vec<u32>,
    /// For each original char offset (and the end), the first folded char at or after it.
    norm_at: Vec<u32>,
    pub sentences: Vec<Sent>,
    /// Original char offset where each non-empty line starts.
    paragraph_starts: Vec<usize>,
    pub original: Vec<char>,
    /// Keyword-variant views of `fold`, built on first use.
    loose: std::sync::OnceLock<crate::safety::variants::LooseText>,
}

/// Sentence terminators unified the way `text::normalize` does, one char for one char, so the
/// splitter's offsets stay original offsets.
fn unify(c: char) -> char {
    match c {
        '!' => '！',
        '?' => '？',
        '｡' => '。',
        c => c,
    }
}

impl Prepared {
    pub fn new(text: &str) -> Prepared {
        let original: Vec<char> = text.chars().collect();
        let fold = Folded::new(text);
        let mut string = String::with_capacity(text.len());
        let mut char_bytes = Vec::with_capacity(fold.chars.len() + 1);
        for &c in &fold.chars {
            char_bytes.push(string.len() as u32);
            string.push(c);
        }
        char_bytes.push(string.len() as u32);

        let n = fold.chars.len() as u32;
        let mut norm_at = vec![n; original.len() + 1];
        for (k, r) in fold.from.iter().enumerate().rev() {
            norm_at[r.0 as usize] = k as u32;
        }
        for i in (0..original.len()).rev() {
            norm_at[i] = norm_at[i].min(norm_at[i + 1]);
        }

        let mut paragraph_starts = Vec::new();
        let mut line_start = 0usize;
        for (i, &c) in original.iter().chain(std::iter::once(&'\n')).enumerate() {
            if c == '\n' {
                if let Some(off) = original[line_start..i]
                    .iter()
                    .position(|c| !c.is_whitespace())
                {
                    paragraph_starts.push(line_start + off);
                }
                line_start = i + 1;
            }
        }

        let mut p = Prepared {
            fold,
            string,
            char_bytes,
            norm_at,
            sentences: Vec::new(),
            paragraph_starts,
            original,
            loose: std::sync::OnceLock::new(),
        };
        let unified: Vec<char> = p.original.iter().map(|&c| unify(c)).collect();
        let (split, _) = sentences::split(&unified);
        p.sentences = split
            .iter()
            .filter_map(|s| {
                let body = &p.original[s.start..s.end];
                let lead = body.iter().position(|c| !c.is_whitespace())?;
                let trail = body.iter().rev().position(|c| !c.is_whitespace())?;
                let orig = (s.start + lead, s.end - trail);
                Some(Sent {
                    orig,
                    norm: (p.norm_of(orig.0), p.norm_of(orig.1)),
                    paragraph: p.paragraph(orig.0),
                })
            })
            .collect();
        p
    }

    /// The keyword-variant views (folded chars), built once per text.
    pub fn loose(&self) -> &crate::safety::variants::LooseText {
        self.loose.get_or_init(|| {
            crate::safety::variants::LooseText::new(self.fold.chars.iter().copied())
        })
    }

    /// First folded char at or after original char offset `i`.
    pub fn norm_of(&self, i: usize) -> usize {
        self.norm_at
            .get(i)
            .map_or(self.fold.chars.len(), |&k| k as usize)
    }

    /// Folded char index of a byte offset into `string` (a char boundary).
    pub fn char_at_byte(&self, byte: usize) -> usize {
        match self.char_bytes.binary_search(&(byte as u32)) {
            Ok(i) | Err(i) => i,
        }
    }

    /// Original char range of a folded char range.
    pub fn to_original(&self, start: usize, end: usize) -> (usize, usize) {
        self.fold.to_original(start, end)
    }

    /// 1-based paragraph of an original char offset. Paragraphs are non-empty lines: every
    /// line break starts a new one and blank lines only separate. Japanese prose starts each
    /// paragraph on a new line (often indented with 　) and dialogue puts each line on its own,
    /// so a line is the unit a writer means by 段落 — and a text that separates paragraphs with
    /// blank lines numbers the same way as long as each paragraph is one line.
    pub fn paragraph(&self, orig: usize) -> usize {
        self.paragraph_starts.partition_point(|&s| s <= orig).max(1)
    }

    /// Index of the sentence holding folded char `k`, if any.
    pub fn sentence_of(&self, k: usize) -> Option<usize> {
        let i = self.sentences.partition_point(|s| s.norm.0 <= k);
        let i = i.checked_sub(1)?;
        (k < self.sentences[i].norm.1).then_some(i)
    }

    /// Original text of `start..end` (char offsets).
    pub fn original_text(&self, start: usize, end: usize) -> String {
        let end = end.min(self.original.len());
        self.original[start.min(end)..end].iter().collect()
    }
}
