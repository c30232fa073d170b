//! The small vocabulary the safety layers share: tiers, categories, the sister being talked to,
//! and what is known about the user sending the message.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What a hit does (see assets/safety/ng_words.toml).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Informational; shadows other hits inside it.
    Safe,
    /// Raises the message to Layer 4.
    Warning,
    /// Blocks at the layer that found it.
    Critical,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Safe => "safe",
            Tier::Warning => "warning",
            Tier::Critical => "critical",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Violence,
    SelfHarm,
    Sexual,
    Insult,
    Hate,
    Privacy,
    AgeQuestion,
    Politics,
    Religion,
    AiIdentity,
}

impl Category {
    pub const ALL: [Category; 10] = [
        Category::Violence,
        Category::SelfHarm,
        Category::Sexual,
        Category::Insult,
        Category::Hate,
        Category::Privacy,
        Category::AgeQuestion,
        Category::Politics,
        Category::Religion,
        Category::AiIdentity,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Violence => "violence",
            Category::SelfHarm => "self_harm",
            Category::Sexual => "sexual",
            Category::Insult => "insult",
            Category::Hate => "hate",
            Category::Privacy => "privacy",
            Category::AgeQuestion => "age_question",
            Category::Politics => "politics",
            Category::Religion => "religion",
            Category::AiIdentity => "ai_identity",
        }
    }

    /// The Japanese label shown to reviewers.
    pub fn label_ja(self) -> &'static str {
        match self {
            Category::Violence => "暴力",
            Category::SelfHarm => "自傷",
            Category::Sexual => "性的",
            Category::Insult => "侮辱",
            Category::Hate => "差別",
            Category::Privacy => "個人情報",
            Category::AgeQuestion => "年齢の質問",
            Category::Politics => "政治",
            Category::Religion => "宗教",
            Category::AiIdentity => "AIの正体",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The sister a user talks to (chat mode talks to one at a time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sister {
    /// やな, the elder sister; casual.
    #[default]
    Yana,
    /// あゆ, the younger sister; polite.
    Ayu,
}

impl Sister {
    pub fn id(self) -> &'static str {
        match self {
            Sister::Yana => "yana",
            Sister::Ayu => "ayu",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Sister::Yana => "やな",
            Sister::Ayu => "あゆ",
        }
    }

    /// Accepts the id or the display name.
    pub fn parse(s: &str) -> Option<Sister> {
        match s.trim() {
            "yana" | "やな" => Some(Sister::Yana),
            "ayu" | "あゆ" => Some(Sister::Ayu),
            _ => None,
        }
    }
}

/// What is known about the sender, for Layer 2 and the Layer 4 prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UserContext {
    /// The caller knows this user (a stored conversation, a known account).
    #[serde(default)]
    pub returning: bool,
    /// Earlier messages of this user that were answered (not blocked).
    #[serde(default)]
    pub previous_messages: usize,
    /// Of this user's recent messages, how many were blocked.
    #[serde(default)]
    pub recent_flags: usize,
}

impl UserContext {
    /// A user with no history.
    pub fn new_user() -> UserContext {
        UserContext::default()
    }

    /// A user who has talked before without trouble.
    pub fn returning(previous_messages: usize) -> UserContext {
        UserContext {
            returning: true,
            previous_messages,
            recent_flags: 0,
        }
    }

    /// Whether Layer 2 treats the user as returning.
    pub fn is_returning(&self, returning_after: usize) -> bool {
        self.returning || self.previous_messages >= returning_after
    }
}
