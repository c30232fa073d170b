//! Her system prompt and the message list she answers with, one builder for the workbench and
//! the bot. The prompt's instruction parts are what the `prompt_echo` rule compares a reply
//! against (issue 13 §4: the chat system prompt read back is an echo), as
//! `duo::prompt::scaffold` does for duo lines; the world text is left out (talking about it is
//! the point).

use crate::director::Character;
use crate::llm::Message;

/// The chat section headers, in the order the prompt uses them.
const HEADERS: &str = "【世界設定】【いまの状況】";

/// Where she is talking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// One person (the workbench's chat mode, a LINE 1:1 chat).
    OneToOne,
    /// A LINE group or room: several people, their lines marked 【A】【B】… by speaker.
    Group,
}

/// The situation paragraph (who she talks with, reply length) for `name`.
fn situation(name: &str, setting: Setting) -> String {
    match setting {
        Setting::OneToOne => format!(
            "{name}は、話しかけてきた相手と一対一で話しています。相手の言葉に、{name}らしく1〜3文で答えてください。"
        ),
        Setting::Group => format!(
            "{name}は、グループで何人かとおしゃべりしています。発言の頭の【A】【B】などは話している人の区別です（同じ記号は同じ人）。最後の発言に、{name}らしく1〜3文で答えてください。記号は書かないでください。"
        ),
    }
}

/// The system prompt with less vault context, rung by rung (assets/llm/budget.toml), for the
/// token budget.
pub fn lighter(
    me: &Character,
    partner: &Character,
    work: &crate::vault::Work,
    scene: &str,
    setting: Setting,
) -> Vec<String> {
    let drop = &crate::llm::budget::Priorities::builtin().vault_drop_levels;
    crate::vault::shared::world_ladders(work, scene, &[me.id.as_str()], drop)
        .remove(&me.id)
        .unwrap_or_default()
        .iter()
        .map(|w| system(me, partner, w, setting).0)
        .collect()
}

/// The system prompt for `me` in `world`, and its instruction parts for `prompt_echo`.
pub fn system(
    me: &Character,
    partner: &Character,
    world: &str,
    setting: Setting,
) -> (String, Vec<String>) {
    let persona = crate::duo::persona::section(me, partner);
    let situation = situation(&me.display_name, setting);
    let text = format!("{persona}\n【世界設定】\n{world}\n\n【いまの状況】\n{situation}");
    (text, vec![persona, HEADERS.to_string(), situation])
}

/// Her view of the world: the vault's text for her level, else the scene.
pub fn world(me: &Character, vault: Option<&crate::vault::SharedVault>, scene: &str) -> String {
    match vault {
        Some(v) => crate::vault::shared::worlds(&v.get().1, scene, &[me.id.as_str()])
            .remove(&me.id)
            .unwrap_or_else(|| scene.to_string()),
        None => scene.to_string(),
    }
}

/// The messages: the system prompt, the (already filtered) history, the new message.
pub fn messages(system: String, history: &[(String, String)], text: &str) -> Vec<Message> {
    let mut out = vec![Message::system(system)];
    for (u, a) in history {
        if !u.is_empty() {
            out.push(Message::user(u.clone()));
        }
        if !a.is_empty() {
            out.push(Message::assistant(a.clone()));
        }
    }
    out.push(Message::user(text.to_string()));
    out
}

/// Speaker marks for a group: the n-th distinct speaker (in order of first appearance) is
/// 【A】, 【B】, … 【Z】, then 【A2】….
pub fn speaker_mark(index: usize) -> String {
    let letter = char::from(b'A' + (index % 26) as u8);
    match index / 26 {
        0 => format!("【{letter}】"),
        n => format!("【{letter}{}】", n + 1),
    }
}

/// The mark of each speaker in `speakers` (LINE user ids, oldest first), by order of first
/// appearance; a speaker LINE did not name ('') is 【?】, never merged with a named one.
pub fn speaker_marks(speakers: &[&str]) -> Vec<String> {
    let mut seen: Vec<&str> = Vec::new();
    speakers
        .iter()
        .map(|s| {
            if s.is_empty() {
                return "【?】".to_string();
            }
            let i = seen.iter().position(|x| x == s).unwrap_or_else(|| {
                seen.push(s);
                seen.len() - 1
            });
            speaker_mark(i)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_speaker_keeps_one_mark_and_others_differ() {
        let ids: Vec<String> = (0..40).map(|i| format!("U{:032}", i % 7)).collect();
        let mut order: Vec<&str> = ids.iter().map(String::as_str).collect();
        order.push("");
        let marks = speaker_marks(&order);
        for (i, a) in order.iter().enumerate() {
            for (j, b) in order.iter().enumerate() {
                let same = !a.is_empty() && a == b;
                assert_eq!(marks[i] == marks[j], same || (a.is_empty() && b.is_empty()));
            }
        }
        assert_eq!(marks[0], "【A】");
        assert_eq!(marks[40], "【?】");
    }

    #[test]
    fn speakers_get_distinct_marks() {
        let marks: std::collections::HashSet<String> = (0..100).map(speaker_mark).collect();
        assert_eq!(marks.len(), 100);
        assert_eq!(speaker_mark(0), "【A】");
        assert_eq!(speaker_mark(27), "【B2】");
    }

    #[test]
    fn empty_sides_are_not_sent() {
        let m = messages(
            "sys".into(),
            &[("a".into(), String::new()), (String::new(), "b".into())],
            "c",
        );
        assert_eq!(m.len(), 4);
    }
}
