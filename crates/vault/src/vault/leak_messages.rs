//! The Japanese texts of leak-review issues, kept together. They may be stored and exported,
//! so they name keywords, secret ids and setting keys — never a secret's content.

use super::LeakSecret;

type Message = (String, String);

pub(super) fn location(paragraph: usize) -> String {
    format!("第{paragraph}段落")
}

/// The secret's first allowed expression, if it has one: the writer's own vetted hint.
fn allowed(secret: &LeakSecret) -> Option<&str> {
    secret
        .allowed_expressions
        .iter()
        .map(|a| a.trim())
        .find(|a| !a.is_empty())
}

fn hint_instead(secret: &LeakSecret, otherwise: &str) -> String {
    match allowed(secret) {
        Some(a) => format!("「{a}」のような許可された表現でほのめかす程度にしてください"),
        None => otherwise.to_string(),
    }
}

pub(super) fn forbidden_keyword(keyword: &str, id: &str, secret: &LeakSecret) -> Message {
    let suggestion = match allowed(secret) {
        Some(a) => format!(
            "「{keyword}」を使わず、「{a}」のような許可された表現か、曖昧な表現に言い換えてください"
        ),
        None => format!("「{keyword}」を使わず、曖昧な表現に言い換えてください"),
    };
    (
        format!("「{keyword}」というキーワードが使われています（秘密{id}の禁止キーワード）"),
        suggestion,
    )
}

pub(super) fn similarity(id: &str, score: f64, threshold: f64, secret: &LeakSecret) -> Message {
    (
        format!("秘密{id}との類似度が{score:.2}です（閾値{threshold:.2}）"),
        hint_instead(
            secret,
            "秘密の内容を言い換えて述べています。具体的な事実は書かず、雰囲気だけを伝える表現にしてください",
        ),
    )
}

pub(super) fn hint_score(id: &str, score: f64, secret: &LeakSecret) -> Message {
    (
        format!("秘密{id}の暗示が明確すぎます（類似度{score:.2}）"),
        hint_instead(
            secret,
            "秘密に近い語句を減らし、読者が推測できない程度のほのめかしにとどめてください",
        ),
    )
}

pub(super) fn hint_words(id: &str, words: usize, secret: &LeakSecret) -> Message {
    (
        format!("秘密{id}の内容を構成する語が一文に{words}つ含まれ、暗示が明確すぎます"),
        hint_instead(
            secret,
            "秘密に関わる語を同じ文に並べず、ほのめかす程度の表現にしてください",
        ),
    )
}

pub(super) fn latent_score(id: &str, score: f64, secret: &LeakSecret) -> Message {
    (
        format!("初見の読者が秘密{id}を推測できる描写です（潜在的暗示、類似度{score:.2}）"),
        hint_instead(
            secret,
            "この秘密はまだ読者に気づかせない段階です。秘密に近い語句や状況を外してください",
        ),
    )
}

pub(super) fn latent_words(id: &str, words: usize, secret: &LeakSecret) -> Message {
    (
        format!(
            "秘密{id}の内容を構成する語が一文に{words}つ含まれ、初見の読者が推測できます（潜在的暗示）"
        ),
        hint_instead(
            secret,
            "この秘密はまだ読者に気づかせない段階です。秘密に関わる語を同じ文に並べないでください",
        ),
    )
}

pub(super) fn split_words(id: &str, words: usize, secret: &LeakSecret) -> Message {
    (
        format!(
            "秘密{id}の内容を構成する語が隣り合う二文に分けて{words}つ含まれ、続けて読むと推測できます（分割された暗示）"
        ),
        hint_instead(secret, "秘密に関わる語を続く文に分けて並べないでください"),
    )
}

pub(super) fn partial_words(id: &str, words: usize, secret: &LeakSecret) -> Message {
    (
        format!(
            "秘密{id}の禁止キーワードが分けて書かれています（{words}語の一部、続けて読むと推測できます）"
        ),
        hint_instead(
            secret,
            "禁止キーワードを字に分けたり一部だけ示したりしないでください",
        ),
    )
}

pub(super) fn emoji(id: &str, score: u32, secret: &LeakSecret) -> Message {
    (
        format!("絵文字が秘密{id}の禁止キーワードを表しています（一致度{score}）"),
        hint_instead(
            secret,
            "秘密に関わる語を絵文字に置き換えて示さないでください",
        ),
    )
}

pub(super) fn global_keyword(keyword: &str) -> Message {
    (
        format!("「{keyword}」というキーワードが使われています（作品全体の禁止キーワード）"),
        format!("「{keyword}」を使わず、曖昧な表現に言い換えてください"),
    )
}

pub(super) fn semantic(id: &str, score: f64, threshold: f64, secret: &LeakSecret) -> Message {
    (
        format!(
            "秘密{id}と意味が近い文です（埋め込み類似度{score:.2}、閾値{threshold:.2}）。言い換えまたは婉曲表現による潜在的な情報漏洩"
        ),
        hint_instead(
            secret,
            "秘密の内容を別の言葉で述べていないか見直し、暗示にとどめてください",
        ),
    )
}

pub(super) fn quote_setting(key: &str, chars: usize) -> Message {
    (
        format!("設定「{key}」の文を{chars}文字そのまま引用しています"),
        "設定文を写さず、場面に合わせて自分の言葉で書き直してください".to_string(),
    )
}

pub(super) fn quote_secret(id: &str, chars: usize) -> Message {
    (
        format!("秘密{id}の内容を{chars}文字そのまま引用しています"),
        "秘密の文面をそのまま使わず、書き直すか削除してください".to_string(),
    )
}

/// For a speaker who may not know the secret: says something is off without naming it.
pub(super) fn neutral() -> Message {
    (
        "この部分は、いまの文脈にない設定に踏み込んでいる可能性があります。".into(),
        "この部分は使わず、いま話している話題と目の前のことだけで言い直してください。".into(),
    )
}
