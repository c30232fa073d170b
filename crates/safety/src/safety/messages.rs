//! Every Japanese note the safety layers write into a trace or a finding, in one place.

use super::context_judge::LlmVerdict;
use super::contextual::Signal;
use super::data::MetaKind;
use super::layers::Hit;
use super::types::Category;

fn words(hits: &[&Hit]) -> String {
    let mut v: Vec<String> = hits.iter().map(|h| format!("「{}」", h.text)).collect();
    v.dedup();
    v.join("")
}

pub fn l1_block(hits: &[&Hit]) -> String {
    format!(
        "NGワード{}（critical）を検出したため遮断しました。",
        words(hits)
    )
}

pub fn l1_raise(hits: &[&Hit]) -> String {
    format!(
        "要注意の語{}（warning）を検出しました。文脈判定（L4）に回します。",
        words(hits)
    )
}

pub fn info_only(hits: &[&Hit]) -> String {
    if hits.is_empty() {
        "該当なし。".into()
    } else {
        format!("参考情報の語{}のみ（safe）。", words(hits))
    }
}

pub fn skipped_after_block(layer: u8) -> String {
    format!("L{layer}で遮断したため実行していません。")
}

pub fn l2_none() -> String {
    "文脈で判断する語はありません。".into()
}

pub fn l2_ng(hits: &[&Hit], signals: &str) -> String {
    format!(
        "{}を、文脈（{signals}）から悪意のある発言と判断し遮断しました。",
        words(hits)
    )
}

pub fn l2_banter(hits: &[&Hit], signals: &str) -> String {
    format!(
        "{}は、常連ユーザーの軽口（{signals}）なので、じゃれ合いと判断しました。",
        words(hits)
    )
}

pub fn l2_self(hits: &[&Hit]) -> String {
    format!(
        "{}は自分自身に向けた言葉なので問題ありません。",
        words(hits)
    )
}

pub fn l2_ambiguous(hits: &[&Hit], signals: &str) -> String {
    format!(
        "{}は文脈（{signals}）だけでは判断できません。文脈判定（L4）に回します。",
        words(hits)
    )
}

pub fn l3_block(hits: &[&Hit]) -> String {
    let ids: Vec<String> = hits.iter().map(|h| h.entry.clone()).collect();
    format!(
        "危険なパターン（{}）に一致したため遮断しました。",
        ids.join("、")
    )
}

pub fn l3_raise(hits: &[&Hit]) -> String {
    let ids: Vec<String> = hits.iter().map(|h| h.entry.clone()).collect();
    format!(
        "要注意のパターン（{}）に一致しました。文脈判定（L4）に回します。",
        ids.join("、")
    )
}

pub fn l4_disabled() -> String {
    "設定（policy.l4 = \"off\"）により実行していません。".into()
}

pub fn l4_no_llm() -> String {
    "LLMが指定されていない（--no-llm）ため実行していません。".into()
}

pub fn l4_nothing_raised() -> String {
    "L1〜L3で何も検出されなかったため実行していません。".into()
}

pub fn l4_endpoint_down(why: &str) -> String {
    format!("LLMに接続できない状態のため実行していません（{why}）。")
}

pub fn l4_failed(why: &str) -> String {
    format!("LLMの判定に失敗しました（{why}）。")
}

pub fn l4_answer(v: &LlmVerdict) -> String {
    let conf = v
        .confidence
        .map(|c| format!("、確信度{c:.2}"))
        .unwrap_or_default();
    let reason = if v.reason.is_empty() {
        String::new()
    } else {
        format!("理由: {}", v.reason)
    };
    format!("LLMの判定は「{}」{conf}。{reason}", v.context_type.as_str())
}

pub fn l4_attack() -> &'static str {
    "攻撃と判定されたため遮断しました。"
}

pub fn l4_no_confidence() -> &'static str {
    "確信度のない返答は確信度が低いものとして扱い、静的判定を採用します。"
}

pub fn l4_low_confidence(min: f64) -> String {
    format!("確信度が{min:.2}未満のため、静的判定を採用します。")
}

pub fn static_block(category: Category, layer: u8) -> String {
    format!(
        "静的判定を採用: L{layer}の「{}」（{}）は fail-closed の分類なので遮断します。",
        category.label_ja(),
        category.as_str()
    )
}

pub fn static_respond(any_warning: bool) -> String {
    if any_warning {
        "静的判定を採用: fail-closed の分類の警告はないので応答します。".into()
    } else {
        "静的判定を採用: 応答します。".into()
    }
}

pub fn static_banter_guess() -> &'static str {
    "文脈の種類はL2の判定から「じゃれ合い」と推定しました。"
}

pub fn worldview_message(matched: &str, kind: MetaKind, name: &str) -> String {
    format!(
        "「{matched}」は物語の外の話（{}）です。{name}は同じ家で暮らす姉妹の一人なので、世界観が壊れます。",
        kind.label_ja()
    )
}

pub fn worldview_suggestion(kind: MetaKind, name: &str, correction: &str) -> String {
    format!(
        "{}の話はせず、{name}として自分の言葉で答えてください。言い換え例: 「{correction}」",
        kind.label_ja()
    )
}

/// The signals Layer 2 saw, as a reviewer reads them.
pub fn signal_list(signals: &[Signal]) -> String {
    signals
        .iter()
        .map(|s| match s {
            Signal::Laughter => "笑い",
            Signal::Emoji => "絵文字",
            Signal::Playful => "くだけた語尾",
            Signal::Returning => "常連",
            Signal::NewUser => "初めてのユーザー",
            Signal::Threat => "脅し",
            Signal::RepeatedInsults => "悪口の連続",
            Signal::Shouting => "感嘆符の連続",
            Signal::AllCaps => "大文字",
            Signal::RecentFlags => "最近の違反",
            Signal::SelfDirected => "自分に向けた言葉",
        })
        .collect::<Vec<_>>()
        .join("・")
}
