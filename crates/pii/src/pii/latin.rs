//! Romanised names: capitalised words after an English self-introduction (My name is Kenichi
//! Sato, call me Ken), a title (Mr. Sato, Dr. Tanaka), or 名前は / と申します written around a
//! latin name (名前はKenichi Sato). A capitalised word with no cue is left alone (Tokyo, iPhone).

use regex::Regex;

use super::view::View;
use super::{Cand, PiiKind};

const CUE: &str = r"(?x)
    (?: (?i: my \s+ name \s+ is | my \s+ name's | call \s+ me | i \s+ am \s+ called | i'm \s+ called
             | i \s+ am | i'm ) \s+
      | \b (?: Mr | Mrs | Ms | Miss | Dr | Prof ) \.? \s+
      | 名前は \s* | 名前が \s* | 氏名 [:：]? \s* )
    ( [A-Z][a-z]+ (?: [\ ][A-Z][a-z]+ ){0,2} )
";

/// Capitalised words that follow `I am` without being a name.
const NOT_NAMES: [&str; 24] = [
    "Japanese", "Japan", "English", "Tokyo", "Osaka", "Kyoto", "Happy", "Sorry", "Fine", "Good",
    "Not", "So", "The", "A", "An", "It", "That", "Just", "Really", "Very", "From", "In", "At",
    "Here",
];

pub(super) struct Latin {
    re: Regex,
}

impl Latin {
    pub fn new() -> Latin {
        // A constant pattern covered by the tests: a failure is a programming error.
        Latin {
            re: Regex::new(CUE).expect("latin name pattern compiles"),
        }
    }

    pub fn find(&self, v: &View, out: &mut Vec<Cand>) {
        if !v.has_upper {
            return;
        }
        for c in self.re.captures_iter(&v.norm) {
            let (Some(all), Some(name)) = (c.get(0), c.get(1)) else {
                continue;
            };
            let first = name.as_str().split(' ').next().unwrap_or("");
            if NOT_NAMES.contains(&first) {
                continue;
            }
            let s = v.char_at(name.start());
            let e = v.char_at(name.end());
            // Preceded by a letter: part of a longer word (SMr. …).
            if v.at(v.char_at(all.start()).wrapping_sub(1))
                .is_some_and(|c| c.is_ascii_alphabetic())
            {
                continue;
            }
            out.push(Cand::new(PiiKind::Name, s, e));
        }
    }
}
