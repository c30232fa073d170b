//! The kinds of personal data the masker finds: their labels, tokens and overlap ranks.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PiiKind {
    #[serde(rename = "氏名")]
    Name,
    #[serde(rename = "電話番号")]
    Phone,
    #[serde(rename = "メールアドレス")]
    Email,
    #[serde(rename = "住所")]
    Address,
    #[serde(rename = "会社名")]
    Company,
    #[serde(rename = "学校名")]
    School,
    /// Payment card numbers (issue 16: a kind beyond the seed's six), Luhn-checked.
    #[serde(rename = "カード番号")]
    Card,
}

impl PiiKind {
    pub const ALL: [PiiKind; 7] = [
        PiiKind::Name,
        PiiKind::Phone,
        PiiKind::Email,
        PiiKind::Address,
        PiiKind::Company,
        PiiKind::School,
        PiiKind::Card,
    ];

    pub fn label(&self) -> &'static str {
        match self {
            PiiKind::Name => "氏名",
            PiiKind::Phone => "電話番号",
            PiiKind::Email => "メールアドレス",
            PiiKind::Address => "住所",
            PiiKind::Company => "会社名",
            PiiKind::School => "学校名",
            PiiKind::Card => "カード番号",
        }
    }

    /// The replacement written into the masked text.
    pub fn token(&self) -> &'static str {
        match self {
            PiiKind::Name => "[氏名]",
            PiiKind::Phone => "[電話番号]",
            PiiKind::Email => "[メールアドレス]",
            PiiKind::Address => "[住所]",
            PiiKind::Company => "[会社名]",
            PiiKind::School => "[学校名]",
            PiiKind::Card => "[カード番号]",
        }
    }

    /// The kind whose token is `token` (`"[住所]"` → Address).
    pub fn from_token(token: &str) -> Option<PiiKind> {
        PiiKind::ALL.into_iter().find(|k| k.token() == token)
    }

    /// The kind whose label is `label` (`"住所"` → Address).
    pub fn from_label(label: &str) -> Option<PiiKind> {
        PiiKind::ALL.into_iter().find(|k| k.label() == label)
    }

    /// Tie-break for equal-length overlaps: lower wins.
    pub(super) fn rank(self) -> u8 {
        match self {
            PiiKind::Card => 0,
            PiiKind::Email => 1,
            PiiKind::Phone => 2,
            PiiKind::Address => 3,
            PiiKind::Company => 4,
            PiiKind::School => 5,
            PiiKind::Name => 6,
        }
    }
}
