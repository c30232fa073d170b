//! The optional LLM-assisted pass: a prompt, a tolerant parser for the seed's
//! `PII_DETECTED / MASKED_TEXT / DETECTED_ITEMS` reply (seed 003 §6), and `merge_llm`, which adds
//! what the model masked to the rule result. No network here: the caller sends the prompt.
//!
//! The model is shown the rule-masked text (what the rules caught never leaves), and its
//! masked text is aligned back onto it: every literal stretch must match, each new token marks
//! the stretch it replaced. The rules' items are never removed. A reply that cannot be aligned
//! counts as a failure.
//!
//! Modes: `FailClosed` (the default) keeps the rule result on a failure and returns a flag so the
//! message is reviewed; `FailOpen` keeps the rule result silently (survey_shark's behaviour);
//! `Off` ignores the reply.

use serde::{Deserialize, Serialize};

use super::{Masked, PiiItem, PiiKind, apply_tokens};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PiiLlmMode {
    Off,
    #[default]
    FailClosed,
    FailOpen,
}

pub const LLM_SYSTEM_PROMPT: &str = "\
あなたは投稿から個人を特定できる情報を探し、記号に置き換える係です。
置き換える対象と記号:
- 人の氏名（姓だけ、名だけも含む） → [氏名]
- 電話番号 → [電話番号]
- メールアドレス → [メールアドレス]
- 都道府県より細かい住所（市区町村、町名、番地、建物名） → [住所]
- 会社や団体の名前 → [会社名]
- 学校の名前 → [学校名]
- クレジットカードなどのカード番号 → [カード番号]
- マイナンバー（12桁の個人番号） → [マイナンバー]
置き換えないもの: 職業（医者、先生、エンジニアなど）、年齢、都道府県だけの地名、商品名、\
すでに [氏名] のように置き換えてある記号。
置き換えた部分のほかは一文字も変えずに書き写してください。
次の三行だけで答えてください:
PII_DETECTED: true または false
MASKED_TEXT: 置き換えた後の本文
DETECTED_ITEMS: 見つけた種類をカンマ区切りで（なければ なし）";

/// The user turn for the model: the rule-masked text of one message.
pub fn llm_user_prompt(masked_text: &str) -> String {
    format!("次の投稿を確認してください:\n{masked_text}")
}

/// A parsed reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmReply {
    pub detected: bool,
    pub masked_text: Option<String>,
    pub items: Vec<String>,
}

#[derive(Clone, Copy, PartialEq)]
enum Key {
    Detected,
    Text,
    Items,
}

/// `**PII_DETECTED**： true` → (Detected, "true"). Keys are matched case-insensitively, after
/// list bullets and markdown emphasis.
fn key_of(line: &str) -> Option<(Key, &str)> {
    let t = line
        .trim_start()
        .trim_start_matches(['-', '*', '#', '>', ' '])
        .trim_start();
    for (name, key) in [
        ("PII_DETECTED", Key::Detected),
        ("MASKED_TEXT", Key::Text),
        ("DETECTED_ITEMS", Key::Items),
    ] {
        if t.len() >= name.len()
            && t.is_char_boundary(name.len())
            && t[..name.len()].eq_ignore_ascii_case(name)
        {
            let rest = t[name.len()..].trim_start_matches(['*', ' ']);
            let rest = rest.strip_prefix([':', '：'])?;
            let rest = rest.strip_prefix("**").unwrap_or(rest);
            return Some((key, rest.strip_prefix(' ').unwrap_or(rest)));
        }
    }
    None
}

/// Parses the three-line reply; `Err` says what was wrong.
pub fn parse_reply(reply: &str) -> Result<LlmReply, String> {
    let mut detected: Option<bool> = None;
    let mut text: Option<Vec<&str>> = None;
    let mut items: Vec<String> = Vec::new();
    let mut in_text = false;
    for line in reply.lines() {
        if line.trim_start().starts_with("```") {
            continue;
        }
        match key_of(line) {
            Some((Key::Detected, v)) => {
                in_text = false;
                let v = v.trim().trim_matches('*').trim().to_lowercase();
                detected = match v.as_str() {
                    "true" | "yes" | "はい" | "あり" => Some(true),
                    "false" | "no" | "いいえ" | "なし" => Some(false),
                    _ => return Err(format!("PII_DETECTED の値「{v}」が true/false でない")),
                };
            }
            Some((Key::Text, v)) => {
                in_text = true;
                text = Some(if v.trim().is_empty() { vec![] } else { vec![v] });
            }
            Some((Key::Items, v)) => {
                in_text = false;
                let v = v.trim().trim_matches(['[', ']']);
                items = v
                    .split([',', '、', '，', '/'])
                    .map(|s| s.trim().trim_matches(['[', ']', '「', '」']).trim())
                    .filter(|s| !s.is_empty() && !matches!(*s, "なし" | "none" | "None"))
                    .map(str::to_string)
                    .collect();
            }
            None if in_text => {
                if let Some(t) = text.as_mut() {
                    t.push(line);
                }
            }
            None => {}
        }
    }
    let detected = detected.ok_or("PII_DETECTED の行がない")?;
    let masked_text = text.map(|lines| lines.join("\n").trim_end().to_string());
    if detected && masked_text.as_deref().is_none_or(str::is_empty) {
        return Err("PII_DETECTED: true なのに MASKED_TEXT がない".into());
    }
    Ok(LlmReply {
        detected,
        masked_text,
        items,
    })
}

/// Adds the model's findings to `masked`; the flag (fail-closed only) says why the message
/// needs a human look.
pub fn merge_llm(
    masked: Masked,
    llm_reply: Result<&str, String>,
    mode: PiiLlmMode,
) -> (Masked, Option<String>) {
    if mode == PiiLlmMode::Off {
        return (masked, None);
    }
    match merge_reply(masked, llm_reply) {
        (masked, Some(why)) if mode == PiiLlmMode::FailClosed => (
            masked,
            Some(format!(
                "個人情報の LLM 確認ができませんでした（{why}）。規則による検出結果のまま、要確認にします"
            )),
        ),
        (masked, _) => (masked, None),
    }
}

/// Adds the model's findings to `masked`, and says why when the reply could not be used
/// (`masked` is then returned unchanged), whatever a mode would make of that.
pub fn merge_reply(masked: Masked, llm_reply: Result<&str, String>) -> (Masked, Option<String>) {
    let fail = |masked: Masked, why: String| (masked, Some(why));
    let reply = match llm_reply.and_then(parse_reply) {
        Ok(r) => r,
        Err(e) => return fail(masked, e),
    };
    let llm_text = match (reply.detected, reply.masked_text) {
        (true, Some(t)) => t,
        _ => return (masked, None),
    };
    let ranges = match align_any(&masked.masked_text, &llm_text) {
        Ok(r) => r,
        Err(e) => return fail(masked, e),
    };
    if ranges.is_empty() {
        if masked.items.is_empty() {
            let what = reply.items.join("、");
            return fail(
                masked,
                format!("LLM は個人情報あり（{what}）としたが、どこかを示さなかった"),
            );
        }
        return (masked, None);
    }
    (add_ranges(masked, &ranges), None)
}

/// A text stored already masked (the bot keeps only that), read back as a [`Masked`] whose
/// items are its tokens, so [`merge_llm`] can add to it. Its original is the text itself.
pub fn already_masked(text: &str) -> Masked {
    let chars: Vec<char> = text.chars().collect();
    let mut items = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match PiiKind::from_token(&token_at(&chars[i..])) {
            Some(kind) => {
                let n = kind.token().chars().count();
                items.push(PiiItem {
                    kind,
                    span: [i, i + n],
                });
                i += n;
            }
            None => i += 1,
        }
    }
    Masked {
        pii_detected: !items.is_empty(),
        masked_text: text.to_string(),
        items,
        original_sha256: String::new(),
    }
}

/// The `[...]` starting `s`, or "".
fn token_at(s: &[char]) -> String {
    if s.first() != Some(&'[') {
        return String::new();
    }
    s.iter()
        .position(|&c| c == ']')
        .map(|close| s[..=close].iter().collect())
        .unwrap_or_default()
}

/// A token the model may write, with the aliases models tend to use.
fn token_kind(s: &[char]) -> Option<(PiiKind, usize)> {
    const ALIASES: [(&str, PiiKind); 6] = [
        ("[名前]", PiiKind::Name),
        ("[地名]", PiiKind::Address),
        ("[電話]", PiiKind::Phone),
        ("[メール]", PiiKind::Email),
        ("[会社]", PiiKind::Company),
        ("[学校]", PiiKind::School),
    ];
    if s.first() != Some(&'[') {
        return None;
    }
    let close = s.iter().position(|&c| c == ']')?;
    let tok: String = s[..=close].iter().collect();
    PiiKind::from_token(&tok)
        .or_else(|| ALIASES.iter().find(|(a, _)| *a == tok).map(|(_, k)| *k))
        .map(|k| (k, close + 1))
}

enum Seg {
    Lit(Vec<char>),
    Tok(PiiKind),
}

fn segments(l: &[char]) -> Vec<Seg> {
    let mut out = Vec::new();
    let mut lit = Vec::new();
    let mut i = 0;
    while i < l.len() {
        if let Some((k, n)) = token_kind(&l[i..]) {
            if !lit.is_empty() {
                out.push(Seg::Lit(std::mem::take(&mut lit)));
            }
            out.push(Seg::Tok(k));
            i += n;
        } else {
            lit.push(l[i]);
            i += 1;
        }
    }
    if !lit.is_empty() {
        out.push(Seg::Lit(lit));
    }
    out
}

/// Tries the reply as written, then without a wrapping `[...]`, `「…」` or quotes.
fn align_any(m: &str, l: &str) -> Result<Vec<(usize, usize, PiiKind)>, String> {
    let first = align(m, l);
    if first.is_ok() {
        return first;
    }
    let t = l.trim();
    for (open, close) in [('[', ']'), ('「', '」'), ('"', '"')] {
        if let Some(inner) = t.strip_prefix(open).and_then(|r| r.strip_suffix(close))
            && let Ok(r) = align(m, inner)
        {
            return Ok(r);
        }
    }
    first
}

/// New token ranges `(start, end, kind)` in chars of `m` (the rule-masked text).
fn align(m: &str, l: &str) -> Result<Vec<(usize, usize, PiiKind)>, String> {
    let m: Vec<char> = m.chars().collect();
    let l: Vec<char> = l.trim().chars().collect();
    let mut p = m.iter().take_while(|c| c.is_whitespace()).count();
    let mut pending: Option<(PiiKind, usize)> = None;
    let mut out = Vec::new();
    // A literal never matches inside one of the rules' tokens ("番" in [電話番号]).
    let tokens: Vec<(usize, usize)> = (0..m.len())
        .filter_map(|i| token_kind(&m[i..]).map(|(_, n)| (i, i + n)))
        .collect();
    let starts_at = |lit: &[char], at: usize| {
        m.get(at..at + lit.len()) == Some(lit)
            && !tokens.iter().any(|&(s, e)| at < e && s < at + lit.len())
    };
    for seg in segments(&l) {
        match seg {
            Seg::Tok(k) => {
                let tok: Vec<char> = k.token().chars().collect();
                if pending.is_none() && starts_at(&tok, p) {
                    p += tok.len();
                } else if pending.is_none() {
                    pending = Some((k, p));
                } else {
                    return Err("隣り合う記号の境目が分からない".into());
                }
            }
            Seg::Lit(lit) => match pending.take() {
                Some((k, a)) => {
                    let q = (a + 1..=m.len().saturating_sub(lit.len()))
                        .find(|&q| starts_at(&lit, q))
                        .ok_or("MASKED_TEXT が元の文と一致しない")?;
                    out.push((a, q, k));
                    p = q + lit.len();
                }
                None if starts_at(&lit, p) => p += lit.len(),
                None => return Err("MASKED_TEXT が元の文と一致しない".into()),
            },
        }
    }
    if let Some((k, a)) = pending {
        let end = m.len() - m.iter().rev().take_while(|c| c.is_whitespace()).count();
        if a >= end {
            return Err("MASKED_TEXT の記号が何も置き換えていない".into());
        }
        out.push((a, end, k));
    } else if m[p.min(m.len())..].iter().any(|c| !c.is_whitespace()) {
        return Err("MASKED_TEXT が元の文より短い".into());
    }
    Ok(out)
}

/// Applies ranges of the masked text to `masked`: ranges are widened to whole tokens, map back
/// to the original through the existing items, and swallow the items they cover.
fn add_ranges(masked: Masked, ranges: &[(usize, usize, PiiKind)]) -> Masked {
    // Segments of the masked text: (m_start, m_end, o_start, o_end, is_token).
    let m_len = masked.masked_text.chars().count();
    let mut segs: Vec<(usize, usize, usize, usize, bool)> = Vec::new();
    let (mut m, mut o) = (0usize, 0usize);
    for it in &masked.items {
        if it.span[0] > o {
            let n = it.span[0] - o;
            segs.push((m, m + n, o, it.span[0], false));
            m += n;
        }
        let n = it.kind.token().chars().count();
        segs.push((m, m + n, it.span[0], it.span[1], true));
        m += n;
        o = it.span[1];
    }
    if m < m_len {
        segs.push((m, m_len, o, o + (m_len - m), false));
    }
    let seg_of = |x: usize| segs.iter().find(|s| s.0 <= x && x < s.1).copied();
    let mut new_items: Vec<PiiItem> = Vec::new();
    let mut m_ranges: Vec<(usize, usize, PiiKind)> = Vec::new();
    for &(a, b, kind) in ranges {
        let (Some(sa), Some(sb)) = (seg_of(a), seg_of(b - 1)) else {
            continue;
        };
        let (a, os) = if sa.4 {
            (sa.0, sa.2)
        } else {
            (a, sa.2 + a - sa.0)
        };
        let (b, oe) = if sb.4 {
            (sb.1, sb.3)
        } else {
            (b, sb.2 + b - sb.0)
        };
        // Only an existing token re-marked: the rules' kind stands.
        if sa.4 && sa == sb {
            continue;
        }
        m_ranges.push((a, b, kind));
        new_items.push(PiiItem {
            kind,
            span: [os, oe],
        });
    }
    let mut items: Vec<PiiItem> = masked
        .items
        .into_iter()
        .filter(|it| {
            !new_items
                .iter()
                .any(|n| n.span[0] <= it.span[0] && it.span[1] <= n.span[1])
        })
        .collect();
    items.extend(new_items);
    items.sort_by_key(|it| it.span[0]);
    Masked {
        pii_detected: !items.is_empty(),
        masked_text: apply_tokens(&masked.masked_text, &m_ranges),
        items,
        original_sha256: masked.original_sha256,
    }
}
