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
    /// The 12-digit individual number (issue 26 §1), check digit verified.
    #[serde(rename = "マイナンバー")]
    MyNumber,
}

impl PiiKind {
    pub const ALL: [PiiKind; 8] = [
        PiiKind::Name,
        PiiKind::Phone,
        PiiKind::Email,
        PiiKind::Address,
        PiiKind::Company,
        PiiKind::School,
        PiiKind::Card,
        PiiKind::MyNumber,
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
            PiiKind::MyNumber => "マイナンバー",
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
            PiiKind::MyNumber => "[マイナンバー]",
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
            PiiKind::MyNumber => 1,
            PiiKind::Email => 2,
            PiiKind::Phone => 3,
            PiiKind::Address => 4,
            PiiKind::Company => 5,
            PiiKind::School => 6,
            PiiKind::Name => 7,
        }
    }
}
