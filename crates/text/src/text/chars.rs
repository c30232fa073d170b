//! Character classes used by the pipeline (kana, kanji, brackets, sentence terminators).

pub fn is_hiragana(c: char) -> bool {
    ('\u{3041}'..='\u{309F}').contains(&c)
}

/// Hiragana → katakana (ぁ..ゖ → ァ..ヶ); everything else unchanged. The other way is
/// `safety::fold::kana_fold`.
pub fn to_katakana(c: char) -> char {
    match c {
        '\u{3041}'..='\u{3096}' => char::from_u32(c as u32 + 0x60).unwrap_or(c),
        _ => c,
    }
}

pub fn is_katakana(c: char) -> bool {
    ('\u{30A0}'..='\u{30FF}').contains(&c)
        || ('\u{31F0}'..='\u{31FF}').contains(&c)
        || ('\u{FF66}'..='\u{FF9F}').contains(&c)
}

pub fn is_kanji(c: char) -> bool {
    ('\u{4E00}'..='\u{9FFF}').contains(&c)
        || ('\u{3400}'..='\u{4DBF}').contains(&c)
        || ('\u{F900}'..='\u{FAFF}').contains(&c)
        || c == '々'
        || c == '〆'
        || c == 'ヶ'
}

pub fn is_alnum(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || ('０'..='９').contains(&c)
        || ('Ａ'..='Ｚ').contains(&c)
        || ('ａ'..='ｚ').contains(&c)
}

/// Sentence terminators after normalisation (seed 001 §6.1).
pub fn is_terminator(c: char) -> bool {
    matches!(c, '。' | '！' | '？')
}

/// Horizontal whitespace, including the ideographic space U+3000.
pub fn is_hspace(c: char) -> bool {
    c != '\n' && c != '\r' && c.is_whitespace()
}

/// Opening bracket → its closing partner, for the quote/parenthesis mask (seed 001 §2.1).
pub fn closing_of(c: char) -> Option<char> {
    match c {
        '「' => Some('」'),
        '『' => Some('』'),
        '（' => Some('）'),
        '(' => Some(')'),
        _ => None,
    }
}

pub fn is_closing(c: char) -> bool {
    matches!(c, '」' | '』' | '）' | ')')
}

/// Symbols whose runs collapse to one (seed 001 §2.2). Letters such as the long-vowel mark ー
/// are deliberately not here: すごーーい is speech, not punctuation.
pub fn is_collapsible_symbol(c: char) -> bool {
    matches!(
        c,
        '！' | '？'
            | '。'
            | '、'
            | '，'
            | '．'
            | '…'
            | '‥'
            | '・'
            | '〜'
            | '～'
            | '♪'
            | '☆'
            | '★'
            | '♡'
            | '♥'
            | '※'
            | '＊'
            | '*'
            | '~'
            | '.'
            | ','
            | '-'
            | '＝'
            | '='
    )
}
