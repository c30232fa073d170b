//! The prompt for one attempt, in the section order: persona, world, history, the
//! partner's last line, Director guidance, owner instruction. History follows duo-talk's
//! mapping (own lines → assistant, partner's → user, same roles merged, a placeholder user turn
//! first when needed) and is trimmed oldest-first to fit the character budget.

use sha2::{Digest, Sha256};

use super::config::DuoConfig;
use super::persona;
use crate::director::Character;
use crate::llm::{Message, Role};

/// One committed line of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Character id.
    pub speaker: String,
    pub text: String,
}

pub struct PromptInput<'a> {
    pub speaker: &'a Character,
    pub partner: &'a Character,
    pub topic: &'a str,
    pub cfg: &'a DuoConfig,
    /// The 【世界設定】 section for this speaker: the scene, then her filtered vault context.
    pub world: &'a str,
    /// Committed lines, oldest first.
    pub history: &'a [Line],
    /// Director guidance for this attempt (retry reasons, last turn's WARN, topic state).
    pub guidance: &'a [String],
    /// The owner's instruction for this turn, if any.
    pub owner: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub messages: Vec<Message>,
    /// History lines left out to fit the budget.
    pub dropped: usize,
    pub chars: usize,
    /// Short hash of the exact messages, stored with the attempt.
    pub hash: String,
}

pub fn build(input: &PromptInput) -> Prompt {
    let system = format!(
        "{}\n【世界設定】\n{}\n\n【話題】\n{}",
        persona::section(input.speaker, input.partner),
        input.world,
        input.topic
    );
    let (earlier, partner_last) = match input.history.split_last() {
        Some((last, rest)) if last.speaker != input.speaker.id => (rest, Some(last)),
        _ => (input.history, None),
    };
    let last = final_message(input, partner_last);
    let fixed = system.chars().count() + last.chars().count();
    // Keep the newest history that fits; drop from the oldest end.
    let mut budget = input.cfg.prompt_budget_chars.saturating_sub(fixed);
    let mut keep = 0;
    for l in earlier.iter().rev() {
        let n = l.text.chars().count();
        if n > budget {
            break;
        }
        budget -= n;
        keep += 1;
    }
    let kept = &earlier[earlier.len() - keep..];
    let mut turns: Vec<Message> = Vec::with_capacity(kept.len() + 3);
    turns.push(msg(Role::System, system));
    for l in kept {
        let role = if l.speaker == input.speaker.id {
            Role::Assistant
        } else {
            Role::User
        };
        push_merged(&mut turns, role, &l.text);
    }
    push_merged(&mut turns, Role::User, &last);
    if turns.get(1).map(|m| m.role) == Some(Role::Assistant) {
        turns.insert(1, msg(Role::User, input.cfg.placeholder_user.clone()));
    }
    let chars = turns.iter().map(|m| m.content.chars().count()).sum();
    Prompt {
        hash: hash(&turns),
        messages: turns,
        dropped: earlier.len() - keep,
        chars,
    }
}

fn final_message(input: &PromptInput, partner_last: Option<&Line>) -> String {
    let mut s = String::new();
    match partner_last {
        Some(l) => s.push_str(&format!(
            "【相手の直前の発言】\n{}: {}\n",
            input.partner.display_name, l.text
        )),
        None if input.history.is_empty() => s.push_str(&format!(
            "【会話の始まり】\n話題「{}」について、{}から話し始めてください。\n",
            input.topic, input.speaker.display_name
        )),
        None => {}
    }
    if !input.guidance.is_empty() {
        s.push_str("\n【ディレクターからの指示】\n");
        // Each line once: a repeat is counted in the attempt's fit report, never sent.
        let mut seen = std::collections::HashSet::new();
        for g in input.guidance.iter().filter(|g| seen.insert(g.trim())) {
            s.push_str(&format!("- {g}\n"));
        }
    }
    if let Some(o) = input.owner.filter(|o| !o.trim().is_empty()) {
        s.push_str(&format!("\n【オーナー指示】\n{}\n", o.trim()));
    }
    s.push('\n');
    s.push_str(
        &input
            .cfg
            .reply_guide
            .replace("{name}", &input.speaker.display_name),
    );
    s
}

/// The instruction parts of the prompt `build` makes from `input` — persona, section headers,
/// Director guidance, owner instruction, reply guide — for the `prompt_echo` rule. The world,
/// the topic and the conversation are left out: talking about them is the point.
pub fn scaffold(input: &PromptInput) -> Vec<String> {
    let name = &input.speaker.display_name;
    let mut out = vec![
        persona::section(input.speaker, input.partner),
        "【世界設定】【話題】【相手の直前の発言】【会話の始まり】【ディレクターからの指示】【オーナー指示】"
            .to_string(),
        format!("について、{name}から話し始めてください。"),
        input.cfg.reply_guide.replace("{name}", name),
    ];
    out.extend(input.guidance.iter().cloned());
    out.extend(input.owner.map(str::to_string));
    out
}

/// The same system message with each lighter world (less vault context) in place of `full`,
/// for the token budget's later rungs (`llm::budget::fit_prioritised`).
pub fn lighter_systems(messages: &[Message], full: &str, ladder: &[String]) -> Vec<String> {
    match messages.first() {
        Some(m) if m.role == Role::System && !full.is_empty() && m.content.contains(full) => ladder
            .iter()
            .map(|w| m.content.replacen(full, w, 1))
            .collect(),
        _ => Vec::new(),
    }
}

fn msg(role: Role, content: String) -> Message {
    Message { role, content }
}

fn push_merged(turns: &mut Vec<Message>, role: Role, text: &str) {
    match turns.last_mut() {
        Some(m) if m.role == role && role != Role::System => {
            m.content.push('\n');
            m.content.push_str(text);
        }
        _ => turns.push(msg(role, text.to_string())),
    }
}

fn hash(turns: &[Message]) -> String {
    let mut h = Sha256::new();
    for m in turns {
        h.update([m.role as u8]);
        h.update(m.content.as_bytes());
        h.update([0]);
    }
    h.finalize()
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
#[path = "prompt_tests.rs"]
mod tests;
