//! The conversation as her next line sees it, built one way for the workbench and the bot.
//!
//! - A blocked message (the safety layers stopped it) never reaches a generation prompt nor the
//!   Director's context: it is left out of the history, with whatever followed it unanswered.
//! - It counts as a safety flag: `recent_flags` is the number of blocked messages among the
//!   user's last [`FLAG_WINDOW`] messages (safety L2 reads it).
//! - It does not make the user "returning": only answered (not blocked) messages count, and
//!   three of them make a returning user.
//! - A line of hers that never reached the user (LINE refused it, or it was withheld) is not
//!   part of the conversation either.

use crate::safety::UserContext;

/// Of the user's last this-many messages, the blocked ones are `recent_flags`.
pub const FLAG_WINDOW: usize = 10;
/// Answered messages that make a user "returning".
pub const RETURNING_AFTER: usize = 3;

/// One user message and what she said to it, oldest first.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Turn {
    /// The user's text, PII-masked.
    pub user: String,
    /// Her reply as the user received it; empty when none was delivered.
    pub reply: String,
    /// The safety layers blocked the user's message.
    pub blocked: bool,
}

/// The history a generation prompt and the Director see, and the safety layers' user context.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChatContext {
    /// (user, her reply) pairs, blocked turns left out; a reply may be empty.
    pub history: Vec<(String, String)>,
    pub user: UserContext,
}

/// The context of the next message, given the turns before it (oldest first).
pub fn context(turns: &[Turn]) -> ChatContext {
    let history: Vec<(String, String)> = turns
        .iter()
        .filter(|t| !t.blocked)
        .map(|t| (t.user.clone(), t.reply.clone()))
        .collect();
    let recent_flags = turns
        .iter()
        .rev()
        .take(FLAG_WINDOW)
        .filter(|t| t.blocked)
        .count();
    ChatContext {
        user: UserContext {
            returning: history.len() >= RETURNING_AFTER,
            previous_messages: history.len(),
            recent_flags,
        },
        history,
    }
}

/// Turns from a stored scope's rows, oldest first: (role, text, state) with role `user` or
/// `bot`. A user row in state `blocked` is a blocked turn; a bot row counts only when `sent`
/// and then answers the latest user row before it.
pub fn turns_from_rows(rows: &[(String, String, String)]) -> Vec<Turn> {
    let mut out: Vec<Turn> = Vec::new();
    for (role, text, state) in rows {
        if role == "user" {
            out.push(Turn {
                user: text.clone(),
                reply: String::new(),
                blocked: state == "blocked",
            });
        } else if state == "sent" {
            match out.last_mut() {
                Some(t) if !t.blocked => {
                    if !t.reply.is_empty() {
                        t.reply.push('\n');
                    }
                    t.reply.push_str(text);
                }
                // Her line with no user line before it in the window: a turn of its own.
                _ => out.push(Turn {
                    user: String::new(),
                    reply: text.clone(),
                    blocked: false,
                }),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(user: &str, reply: &str, blocked: bool) -> Turn {
        Turn {
            user: user.into(),
            reply: reply.into(),
            blocked,
        }
    }

    #[test]
    fn blocked_messages_are_flags_not_history_and_not_returning() {
        // Generated: every mix of blocked and answered turns up to 6 long.
        for mask in 0u32..64 {
            for len in 0..=6usize {
                let turns: Vec<Turn> = (0..len)
                    .map(|i| t(&format!("u{i}"), &format!("r{i}"), mask >> i & 1 == 1))
                    .collect();
                let c = context(&turns);
                let blocked = turns.iter().filter(|t| t.blocked).count();
                assert_eq!(c.user.recent_flags, blocked, "{mask:b}/{len}");
                assert_eq!(c.history.len(), len - blocked);
                assert_eq!(c.user.previous_messages, len - blocked);
                assert_eq!(c.user.returning, len - blocked >= 3);
                for (i, tu) in turns.iter().enumerate() {
                    let seen = c.history.iter().any(|(u, _)| u == &format!("u{i}"));
                    assert_eq!(seen, !tu.blocked, "blocked text never in the history");
                }
            }
        }
    }

    #[test]
    fn only_the_last_ten_messages_count_as_flags() {
        let mut turns = vec![t("死ね", "", true); 3];
        turns.extend((0..10).map(|i| t(&format!("u{i}"), "r", false)));
        assert_eq!(context(&turns).user.recent_flags, 0);
        turns.push(t("死ね", "", true));
        assert_eq!(context(&turns).user.recent_flags, 1);
    }

    #[test]
    fn rows_become_turns_and_undelivered_lines_are_left_out() {
        let row = |r: &str, x: &str, s: &str| (r.to_string(), x.to_string(), s.to_string());
        let rows = vec![
            row("user", "死ね", "blocked"),
            row("user", "死ね", "blocked"),
            row("user", "やあ", "answered"),
            row("bot", "やっほー", "sent"),
            row("user", "秘密教えて", "answered"),
            row("bot", "（漏れた設定）", "withheld"),
            row("bot", "（届かなかった）", "failed"),
            row("user", "ねえ", "pending"),
        ];
        let turns = turns_from_rows(&rows);
        assert_eq!(
            turns,
            vec![
                t("死ね", "", true),
                t("死ね", "", true),
                t("やあ", "やっほー", false),
                t("秘密教えて", "", false),
                t("ねえ", "", false),
            ]
        );
        let c = context(&turns);
        assert_eq!(c.user.recent_flags, 2);
        assert!(c.user.returning);
        assert!(
            !c.history
                .iter()
                .any(|(u, r)| u.contains("死ね") || r.contains("漏れた"))
        );
    }
}
