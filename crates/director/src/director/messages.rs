//! Every Japanese message and suggestion the Director shows, in one place.

pub fn empty() -> (String, String) {
    (
        "発言が空です。".into(),
        "話題に沿って、キャラクターとして一言以上話してください。".into(),
    )
}

pub fn script_format() -> (String, String) {
    (
        "発言全体が台本形式（「」や話者名）で書かれていたため、中身を発言として判定しました。"
            .into(),
        "台本形式の「」や「やな：」は付けず、セリフだけを書いてください。".into(),
    )
}

pub fn lines(n: usize, retry: bool, max_ok: usize) -> (String, String) {
    let what = if retry {
        "長すぎます"
    } else {
        "やや長めです"
    };
    (
        format!("{n}行あり、{what}。"),
        format!("{max_ok}行以内に収め、言いたいことを一つに絞ってください。"),
    )
}

pub fn setting(phrase: &str) -> (String, String) {
    (
        format!("「{phrase}」は、姉妹が一緒に暮らしていない印象を与えます。"),
        "やなとあゆは同じ家に住んでいます。「うち」「私たちの家」など、一緒に暮らしている前提で話してください。".into(),
    )
}

pub fn praise_retry(eval: &str, target: &str) -> (String, String) {
    (
        format!("「{target}」への評価語「{eval}」があり、相手を持ち上げています。"),
        "相手を褒めず、事実や補足情報を伝える役に徹してください。".into(),
    )
}

pub fn praise_warn(eval: &str) -> (String, String) {
    (
        format!("評価語「{eval}」があります。"),
        "評価の言葉は控えめにし、具体的な情報で応じてください。".into(),
    )
}

pub fn scatter(sentences: usize, topics: usize, retry: bool) -> (String, String) {
    let what = if retry {
        "話が散らかっています"
    } else {
        "話が広がりがちです"
    };
    // No topic found (the analyzer saw none) is no count to report: 「話題0つ」 read as nonsense.
    let counts = if topics == 0 {
        format!("{sentences}文")
    } else {
        format!("{sentences}文・話題{topics}つ")
    };
    (
        format!("{counts}で、{what}。"),
        "話題を一つに絞り、2文程度（50〜80文字）で答えてください。".into(),
    )
}

pub fn contradiction(phrase: &str) -> (String, String) {
    (
        format!("「{phrase}」は二重否定で、意味が逆転しています。"),
        "否定を重ねず、言いたいことを肯定か否定のどちらか一方で言い切ってください。".into(),
    )
}

pub fn tone(name: &str, t: &crate::director::ToneScore, retry: bool) -> String {
    let mark = |b: u8| if b > 0 { "○" } else { "×" };
    let what = if retry {
        "が感じられません"
    } else {
        "が弱めです"
    };
    format!(
        "{name}らしい口調{what}（口調スコア{}/3：語尾{}・語彙{}・文体{}）。",
        t.score,
        mark(t.marker),
        mark(t.vocab),
        mark(t.style)
    )
}

pub fn tone_violation(name: &str, word: &str, ending: bool) -> (String, String) {
    let kind = if ending { "語尾" } else { "言葉" };
    (
        format!("{name}が使わない{kind}「{word}」があります。"),
        format!("「{word}」を使わず、{name}の話し方で言い直してください。"),
    )
}

pub fn too_many_exclamations(name: &str, n: usize, max: usize) -> (String, String) {
    (
        format!("「！」が{n}個あり、{name}としても騒がしすぎます。"),
        format!("「！」は{max}個までにして、落ち着いた言い方も混ぜてください。"),
    )
}

pub fn forbidden(word: &str, reason: &str) -> (String, String) {
    (
        format!("使ってはいけない言葉「{word}」があります。{reason}"),
        format!("「{word}」を使わずに言い直してください。"),
    )
}

pub fn prompt_leak(marker: &str) -> (String, String) {
    (
        format!("プロンプトの内部表記「{marker}」が発言に混ざっています。"),
        "指示や見出しは書かず、キャラクターのセリフだけを出力してください。".into(),
    )
}

pub fn speaker_label(label: &str) -> (String, String) {
    (
        format!("行頭に話者名「{label}」があり、台本を書いています。"),
        "自分のセリフだけを、話者名を付けずに出力してください。".into(),
    )
}

pub fn topic_loop_line(word: &str, n: usize) -> (String, String) {
    (
        format!("「{word}」を1つの発言で{n}回繰り返しています。"),
        format!("「{word}」の繰り返しを避け、言い換えるか新しい観点を加えてください。"),
    )
}

pub fn topic_loop_turns(word: &str, turns: usize) -> (String, String) {
    (
        format!("「{word}」が直近{turns}ターン続けて出ており、話題がループしています。"),
        format!("「{word}」から一歩進めて、別の側面か次の話題に移ってください。"),
    )
}

pub fn early_shift(previous: &str, new: &str) -> (String, String) {
    (
        format!("直前の話題「{previous}」を掘り下げる前に「{new}」へ移っています。"),
        format!("まず相手の「{previous}」の話に応じてから、話題を変えてください。"),
    )
}

pub fn not_japanese(percent: u32) -> (String, String) {
    (
        format!("日本語の文字が{percent}%しかなく、日本語の発言になっていません。"),
        "キャラクターとして、日本語で一言二言話してください。".into(),
    )
}

pub fn prompt_echo(run: &str) -> (String, String) {
    (
        format!("指示文の読み上げになっています（「{run}」）。"),
        "指示や設定の文は繰り返さず、キャラクターのセリフだけを書いてください。".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scatter_never_counts_zero_topics() {
        for sentences in 0..8 {
            for topics in 0..5 {
                for retry in [false, true] {
                    let (m, _) = scatter(sentences, topics, retry);
                    assert!(!m.contains("話題0"), "{m}");
                    assert!(m.starts_with(&format!("{sentences}文")), "{m}");
                    assert_eq!(m.contains(&format!("話題{topics}つ")), topics > 0, "{m}");
                }
            }
        }
    }
}
