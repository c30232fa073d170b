//! Names with no cue at all, found by the part they play in the sentence (issue 26 §1, dev4):
//! the subject or the partner of a predicate only a person takes — 鷹取が今日休みでさ,
//! 七瀬からLINE来てた, ナナセと付き合ってる, Kanadeに言われた. A predicate (休む, 来る, 言う,
//! 結婚, 付き合う, LINE, 連絡, 会う, 笑う…) names the particles it takes a person with (が/は/も,
//! と, に, から); a few adverbs may stand between (鷹取は今日もう帰った). What stands before the
//! particle is a name when it has a name's shape in one script and is no common word of that
//! shape: a role or kin word (先生, 上司, 母), an institution (会社, 学校, 病院), a thing or a
//! season that comes (荷物, 台風), a time word (明日は休み), a place (東京から来た — から takes
//! no 来る), or a common kana word (みんな, ゲーム, チーム). The rules need no dictionary;
//! with lindera, `proper` adds what IPADIC knows.

use crate::text::chars::{is_hiragana, is_katakana};

use super::address::place_like;
use super::names::Names;
use super::names_cue::{LEADING_NOISE, after_time_word, is_common_kana_word, kanji_word_ok};
use super::scan::{Builder, Hits, ListId, Pick};
use super::view::{View, is_edge, is_han};

/// The subject: が, は, も.
const S: u16 = 1;
/// The partner: と (とは, とも).
const P: u16 = 2;
/// The one spoken to or met: に (には, にも).
const T: u16 = 4;
/// The sender: から (からは, からも).
const F: u16 = 8;
/// The subject marked by が only: は and も also stand for the object of a transitive verb
/// (サイズも教えて, 会社も辞めた, それは言ってた).
const G: u16 = 16;
/// The owner: の before a noun only a person has (鷹取の誕生日, タカトリの彼氏).
const N: u16 = 32;
/// The object: を before a verb whose object is a person (鷹取を誘って, 迎えに行く).
const O: u16 = 64;
/// No particle at all: さっき駅で鷹取見かけた.
const Z: u16 = 128;
/// って: 鷹取って覚えてる？
const Q: u16 = 256;
/// で, the company one does a thing with — only for the last name of a list (蓼沼と笹目と鳰川で
/// 旅行): a single word before で is a place or a means (京都で, 車で).
const D: u16 = 512;
/// The predicate takes a name only as the last of a list of names (鷹觜・甘粕・蛯名の班,
/// 鰺坂も鷲尾も知らない): alone, a thing stands there as often.
const L: u16 = 1024;

/// Predicates a person takes, as written (inflected stems), with the particles that mark
/// the person. 来る takes no から (東京から来た is a place).
const PREDICATES: &[(&str, u16)] = &[
    ("来た", S),
    ("来る", S),
    ("来て", S),
    ("来れ", S),
    ("来な", S),
    ("来ま", S),
    ("来ら", S),
    ("来ず", S),
    ("言っ", G | F),
    ("言う", G),
    ("言い", G),
    ("言わ", G | T | F),
    ("休み", S),
    ("休ん", S),
    ("休む", S),
    ("休ま", S),
    ("結婚", S | P),
    ("付き合", S | P),
    ("つきあ", S | P),
    ("付きあ", S | P),
    ("別れ", S | P),
    ("喧嘩", S | P),
    ("ケンカ", S | P),
    ("けんか", S | P),
    ("笑っ", S),
    ("笑う", S),
    ("笑い", S),
    ("笑わ", S | T),
    ("泣い", S),
    ("泣き", S),
    ("泣く", S),
    ("泣か", S),
    ("怒っ", S),
    ("怒ら", S | T),
    ("怒る", S),
    ("遅刻", S),
    ("寝坊", S),
    ("辞め", G),
    ("引っ越", S),
    ("引越", S),
    ("教え", G | T),
    ("教わ", T | F),
    ("手伝", S | T),
    ("迎え", S),
    ("いない", S),
    ("いなく", S),
    ("いなかっ", S),
    ("いたよ", S),
    ("いた。", S),
    ("元気", S),
    ("合格", S),
    ("入院", S),
    ("退院", S),
    ("卒業", S),
    ("転校", S),
    ("退職", S),
    ("出産", S),
    ("妊娠", S),
    ("熱出", S),
    ("熱を出", S),
    ("風邪", S),
    ("インフル", S),
    ("亡くな", S),
    ("喜ん", S),
    ("怪我", S),
    ("帰っ", S),
    // dev5: more that only a person does
    ("遅れて", S),
    ("遅れる", S),
    ("遅れた", S),
    ("代わっ", S),
    ("寝て", S),
    ("寝た", S),
    ("運転", S),
    ("出張", S),
    ("転職", S),
    ("泊まり", S),
    ("髪切", S),
    ("参加", S),
    ("車出", S),
    ("揉め", S | P),
    ("約束", P),
    ("送っ", O),
    ("見習", O),
    ("落とし", G),
    ("まとめ", G),
    ("撮っ", G),
    ("貸し", T | S),
    ("返し", T),
    ("お願い", T),
    ("見せ", T),
    ("おかげ", N),
    ("せいで", N),
    ("車で", N),
    ("車に", N),
    ("送迎", N),
    ("席", N),
    ("弟", N),
    ("妹", N),
    ("帰る", S),
    ("待って", S),
    ("頑張", S),
    ("LINE", G | T | F | N),
    ("ライン", T | F),
    ("連絡", G | T | F),
    ("電話", G | T | F | P),
    ("メール", T | F),
    ("返信", G | T | F),
    ("返事", G | T | F),
    ("手紙", T | F),
    ("年賀状", T | F),
    ("プレゼント", T | F),
    ("誕生日プレゼント", T | F | N),
    ("お礼", T),
    ("DM", T | F),
    ("会っ", P | T),
    ("会う", P | T),
    ("会い", P | T),
    ("会え", P | T),
    ("会わ", P | T),
    ("聞い", T | F),
    ("聞く", T),
    ("聞け", T),
    ("聞き", T),
    ("謝", T),
    ("相談", T | P),
    ("告白", G | T | F),
    ("振られ", S | T),
    ("フラれ", S | T),
    ("誘", S | T | F | O),
    ("頼ん", T),
    ("頼ま", T),
    ("頼む", T),
    ("借り", T | F),
    ("貸し", T),
    ("伝え", T),
    ("紹介", S | T),
    ("話し", P),
    ("話す", P),
    ("話せ", P),
    ("映画行", P),
    ("映画観", P),
    ("映画見", P),
    ("映画に行", P),
    ("ランチ行", P),
    ("ランチし", P),
    ("ランチに行", P),
    ("お茶し", P),
    ("お茶行", P),
    ("買い物", P),
    ("ドライブ", P),
    ("勉強し", P),
    ("練習し", P),
    ("ご飯行", P),
    ("ご飯食べ", P),
    ("ご飯し", P),
    ("ごはん行", P),
    ("ごはん食べ", P),
    ("飯行", P),
    ("飲みに", P),
    ("飲み行", P),
    ("飲んだ", P),
    ("飲んで", P),
    ("旅行行", P | D),
    ("旅行に行", P | D),
    ("旅行し", P | D),
    ("旅行する", P | D),
    ("デート", P),
    ("同じクラス", P),
    ("同じ学校", P),
    ("同じ部活", P),
    ("同じ大学", P),
    ("仲良", P),
    ("一緒に行", S | P),
    ("一緒に来", S | P),
    ("一緒に帰", S | P),
    ("一緒だ", S | P),
    ("一緒", P),
    ("作っ", G),
    ("迎えに", S | O),
    ("見かけ", S | O | Z),
    ("覚えて", Q),
    ("呼ん", O),
    ("呼ぶ", O),
    ("呼び", O),
    ("泣かせ", O),
    ("怒らせ", O),
    ("笑わせ", O),
    ("励ま", O),
    ("慰め", O),
    ("見送", O),
    ("起こし", O),
    ("優し", S),
    ("イケメン", S),
    ("美人", S),
    ("背が高", S),
    ("頭いい", S),
    ("頭良", S),
    ("天才", S),
    ("いい人", S),
    ("いいやつ", S),
    ("いい奴", S),
    ("モテ", S),
    ("誕生日", N | S),
    ("家で", N),
    ("家に", N),
    ("家ま", N),
    ("実家", N),
    ("インスタ", N),
    ("アカウント", N),
    ("連絡先", N),
    ("電話番号", N),
    ("お母さん", N),
    ("お父さん", N),
    ("お兄さん", N),
    ("お姉さん", N),
    ("お母様", N),
    ("お父様", N),
    ("奥さん", N),
    ("旦那", N),
    ("彼氏", N | Q),
    ("彼女", N | Q),
    ("元カレ", N),
    ("元カノ", N),
    ("結婚式", N),
    ("送別会", N),
    ("歓迎会", N),
    ("誕生会", N),
    ("お見舞い", N),
    ("笑顔", N),
    // dev6: more that only a person does; with an object between (鳰川が財布忘れた)
    ("忘れ", G),
    ("拾っ", G),
    ("焼い", G),
    ("髪染め", S),
    ("奢っ", G | T),
    ("おごっ", G | T),
    ("迷っ", G),
    ("免許", G),
    ("既読無視", G),
    ("既読スルー", G),
    ("無視され", T),
    ("受かっ", G),
    ("寝ちゃ", S),
    ("くる", S),
    ("声かけ", S | T),
    ("同じゼミ", P),
    ("同じサークル", P),
    ("同じ班", P),
    ("同じチーム", P),
    ("お泊まり", P | D),
    ("付き合って", S | P | Z),
    ("お世話にな", S | T),
    ("習い事", N),
    ("体操服", N),
    ("家行", N),
    ("バイトし", S),
    ("二人", N),
    ("三人", N),
    ("四人", N),
    ("班", N | L),
    ("グループ", N | L),
    ("知らない", S | L),
    ("旅行", D),
    ("遊ん", P | D),
    ("遊ぶ", P | D),
    ("遊び", P | D),
    ("カラオケ", P | D),
    ("母です", N),
    ("父です", N),
    ("母親", N),
    ("父親", N),
    ("引き継", T | F),
];

/// Words that may stand between the particle and the predicate (鷹取が今日休み).
const BETWEEN: &[&str] = &[
    "来週から",
    "来月から",
    "明日から",
    "今日から",
    "今日",
    "明日",
    "昨日",
    "今",
    "また",
    "もう",
    "まだ",
    "急に",
    "さっき",
    "ずっと",
    "めっちゃ",
    "ちょっと",
    "先に",
    "絶対",
    "たぶん",
    "多分",
    "よく",
    "いつも",
    "全然",
    "結局",
    "突然",
    "今朝",
    "今度",
    "来週",
    "先週",
    "昨夜",
    "泣きながら",
    "ついに",
    "やっと",
    "珍しく",
    "まさか",
    "さっきから",
    "今日も",
    "もう一回",
];

/// Kanji that end a word for a thing, an institution, a group or a time — never a person's
/// name before a person predicate (会社, 学校, 荷物, 台風, 土日, 半分).
const NOT_NAME_ENDS: &str = "事々段記婚前築目回暦号件雨雪学性度祝節期徒坊民病波船包筒線痛界促検査果表否定用達当通初後緒対剣寧単気斉際互外全常然死敵終切的量校庁省課室会塾察班隊団物話絡紙知車求風震番文配料粉休末便報金曜日週月年時分数半類品具薬器械活動議験習題格績容情況態画像曲集";

/// Common kanji words that stand as a subject or partner without being a name and that no
/// ending rule catches (仲間と遊んだ, 部下が休み, 職場から電話).
const NOT_NAMES_KANJI: &[&str] = &[
    "以上",
    "以下",
    "以来",
    "結果",
    "仲間",
    "部下",
    "家内",
    "職場",
    "現場",
    "会場",
    "工場",
    "役場",
    "日本",
    "窓口",
    "連中",
    "本部",
    "兄貴",
    "姉貴",
    "両親",
    "家族",
    "先方",
    "運営",
    "子供",
    "子ども",
    "友達",
    "同僚",
    "後輩",
    "先輩",
    "上司",
    "担任",
    "監督",
    "大人",
    "全員",
    "誰か",
    "自分",
    "本人",
    "相方",
    "地元",
    "近所",
    "本社",
    "支社",
    "営業",
    "人事",
    "総務",
    "経理",
    "台風",
    "地震",
    "荷物",
    "電車",
    "時間",
    "人間",
    "世間",
    "旦那",
    "彼氏",
    "彼女",
    "元彼",
    "元カレ",
    "元カノ",
    "赤ちゃん",
    "親戚",
    "隣人",
    "大家",
    "警察",
    "政府",
    "銀行",
    "一緒",
    "無理",
    "自由",
    "正直",
    "素直",
    "綺麗",
    "確実",
    "上手",
    "下手",
    "大事",
    "勝手",
    "久々",
    "次々",
    "徐々",
    "真面目",
    "時代",
    "未来",
    "案内",
    "招待",
    "期待",
    "楽天",
    "試合",
    "花火",
    "旅行",
    "質問",
    "投稿",
    "着信",
    "返信",
    "受信",
    "送信",
    "通信",
    "自信",
    "修理",
    "見積",
    "公式",
    "趣味",
    "神戸",
    "幼馴染",
    "ついで",
    "田舎",
    "写真",
    "人形",
    "横浜",
    "渋谷",
    "新宿",
    "池袋",
    "札幌",
    "仙台",
    "鎌倉",
    "銀座",
    "原宿",
    "浅草",
    "秋葉原",
    "六本木",
    "吉祥寺",
    "下北沢",
    "品川",
    "梅田",
    "難波",
    "博多",
    "天神",
    "金沢",
    "軽井沢",
    "箱根",
    "熱海",
    "日光",
    "函館",
    "小樽",
    "横須賀",
];

/// Hiragana words of a name's shape that stand as a subject or partner (ともだちと遊んだ,
/// だれかが来た) or adverbs before と/に (わざと言った, たまに会う).
pub(super) const NOT_NAMES_HIRA: &[&str] = &[
    // kin in kana (いとこが試験受かった)
    "いとこ",
    "はとこ",
    "おじさん",
    "おばさん",
    "ともだち",
    "かぞく",
    "せんせい",
    "せんぱい",
    "こうはい",
    "おや",
    "おとうと",
    "いもうと",
    "あに",
    "あね",
    "おっと",
    "つま",
    "だんな",
    "よめ",
    "むすめ",
    "むすこ",
    "じぶん",
    "ぼく",
    "わたし",
    "あたし",
    "おれ",
    "うち",
    "こども",
    "おとな",
    "ひと",
    "だれか",
    "なに",
    "なん",
    "いつ",
    "どこ",
    "ここ",
    "そこ",
    "あそこ",
    "こと",
    "もの",
    "へんじ",
    "にもつ",
    "たいふう",
    "はる",
    "なつ",
    "ふゆ",
    "ちゃん",
    "きちん",
    "わざ",
    "つい",
    "すぐ",
    "たま",
    "ほんと",
    "ふつう",
    "さいご",
    "さいしょ",
    "ひさしぶり",
    "べつ",
    "とく",
    "いっしょ",
    "きゅう",
    "ぜったい",
    "まじ",
    "ほか",
    "さき",
    "まえ",
    "あと",
    "つぎ",
    "よう",
    "ため",
    "ほど",
    "ごと",
    "しずか",
    "きれい",
    "げんき",
    "じょうず",
    "まとも",
    "ていねい",
    "かんたん",
    "あまり",
    "ほとんど",
    "ときどき",
    "しょっちゅう",
    "いつも",
    "めっちゃ",
    "あけまして",
    "こんにちは",
    "こんにち",
    "こんばん",
    "こんばんは",
    "おやすみ",
    "ありがとう",
    "よろしく",
    "ただいま",
    "おかえり",
    "さようなら",
    "またね",
    "はじめまして",
    "おつかれ",
    "おめでとう",
    "こちら",
    "そちら",
    "あちら",
];

/// Hiragana words that open a phrase before a name in hiragana (さっきとどろきから).
pub(super) const HIRA_LEADS: &[&str] = &[
    "さっき",
    "あとで",
    "ねえ",
    "でも",
    "じつは",
    "やっぱり",
    "やっぱ",
    "そういえば",
    "なんか",
    "きのう",
    "きょう",
    "あした",
    "これ",
    "それ",
    "あれ",
    "また",
    "まだ",
    "もう",
    "いま",
    "ところで",
    "たしか",
];

/// Katakana words that stand as a subject or partner without being a name (コーチに怒られた,
/// チームが勝った, インスタに上げた).
const NOT_NAMES_KATA: &[&str] = &[
    "ママ",
    "パパ",
    "ネコ",
    "イヌ",
    "ペット",
    "コーチ",
    "マネージャー",
    "マネジャー",
    "リーダー",
    "メンバー",
    "チーム",
    "スタッフ",
    "バイト",
    "アルバイト",
    "パート",
    "ボス",
    "クラス",
    "サークル",
    "ゼミ",
    "ジム",
    "バンド",
    "グループ",
    "ゲーム",
    "スマホ",
    "パソコン",
    "テレビ",
    "ラジオ",
    "ニュース",
    "ネット",
    "アプリ",
    "ライン",
    "メール",
    "メッセージ",
    "コメント",
    "インスタ",
    "ツイッター",
    "アイドル",
    "ファン",
    "オタク",
    "タクシー",
    "バス",
    "コロナ",
    "インフル",
    "ホテル",
    "カフェ",
    "コンビニ",
    "スーパー",
    "ドクター",
    "ナース",
    "ゲスト",
    "オーナー",
    "マスター",
    "シェフ",
    "コック",
    "サンタ",
    "ドライバー",
    "キャプテン",
    "カレシ",
    "カノジョ",
    "カレ",
    "カノ",
    "タバコ",
    "サイズ",
    "チャンス",
    "ブーム",
    "オファー",
    "クレーム",
    "アンケート",
    "ピーク",
    "ボーナス",
    "シーズン",
    "ターン",
    "ツケ",
    "バチ",
    "エラー",
    "アップデート",
    "アプデ",
    "セール",
    "イベント",
    "ライブ",
    "トラック",
    "ヘリ",
    "パトカー",
    "ライバル",
    "ユーザー",
    "カウンセラー",
    "ドラマ",
    "アニメ",
    "リプ",
    "ツイート",
    "レビュー",
    "クリスマス",
    "バレンタイン",
    "ホワイトデー",
    "ウーバー",
    "ナビ",
    "カーナビ",
    "アレクサ",
    "メルカリ",
    "アマゾン",
    "ヤフー",
    "グーグル",
    "アップル",
    "ラクマ",
    "ペイペイ",
    "ヨドバシ",
    "ユニクロ",
    "ニトリ",
    "ドコモ",
    "ソフトバンク",
    "ヤマト",
    "ボウリング",
    "ダーツ",
    "ビリヤード",
    "ゲーセン",
    "ランチ",
    "ディナー",
    "ドライブ",
    "ショッピング",
    "パーティー",
    "ツアー",
    "キャンプ",
    "バーベキュー",
    "カラオケ",
    "デート",
    "データ",
    "マジ",
    "タヌキ",
    "キツネ",
    "クマ",
    "サル",
    "シカ",
    "ハト",
    "カラス",
    "ツバメ",
    "ウサギ",
    "リス",
    "ヘビ",
    "エレベーター",
    "ピザ",
    "デリバリー",
    "レシピ",
    "ミンナ",
];

/// Katakana endings of services, places and roles (カスタマーサポート, コールセンター,
/// クラスメイト).
const NOT_NAME_KATA_ENDS: &[&str] = &[
    "サポート",
    "センター",
    "デスク",
    "サービス",
    "ショップ",
    "ストア",
    "メイト",
    "ナビ",
];

/// Capitalised latin words that stand as a sender or partner without being a person.
const NOT_NAMES_LATIN: &[&str] = &[
    "Amazon",
    "Google",
    "Apple",
    "Microsoft",
    "Netflix",
    "Uber",
    "Yahoo",
    "Facebook",
    "Twitter",
    "Instagram",
    "Discord",
    "Slack",
    "Zoom",
    "Teams",
    "Gmail",
    "Outlook",
    "Siri",
    "Alexa",
    "Claude",
    "Gemini",
    "Copilot",
];

/// Words after which a name is said to be who plays a part (担当は鷹取です, 幹事はタカトリ,
/// 撮ってくれたのは鷹取): the name runs to the end of the sentence, です or だ.
const TOPICS: &[&str] = &[
    "担当は",
    "担当者は",
    "幹事は",
    "当番は",
    "犯人は",
    "相手は",
    "好きな人は",
    "推しは",
    "司会は",
    "キャプテンは",
    "リーダーは",
    "主役は",
    "代表は",
    "くれたのは",
    "来たのは",
    "言ったのは",
    "会ったのは",
    "誘ったのは",
    "いたのは",
    // dev6: a form's fields and a list's heading
    "自己紹介:",
    "お名前:",
    "参加者:",
    "出席者:",
    "欠席者:",
    "メンバー:",
];

/// What ends the name after a topic: the end, a pause, です, だ.
const TOPIC_ENDS: &[&str] = &[
    "です",
    "だよ",
    "だった",
    "だ。",
    "だね",
    "じゃ",
    "でした",
    "って",
    "。",
    "！",
    "!",
    "？",
    "?",
    "、",
    "\n",
    " ",
];

/// What follows a name called out at the start and a comma (轟木、今どこ？).
const CALLS: &[&str] = &[
    "今どこ",
    "どこいる",
    "どこにいる",
    "起きてる",
    "何してる",
    "なにしてる",
    "今暇",
    "今ひま",
    "ちょっといい",
    "元気",
    "久しぶり",
    "おはよう",
    "おやすみ",
];

/// The predicate and topic lists, in the masker's scan.
pub(super) struct Subjects {
    automaton: ListId,
    topics: ListId,
}

impl Subjects {
    pub fn new(lists: &mut Builder) -> Subjects {
        let automaton = lists.list(PREDICATES.iter().map(|(p, _)| *p), Pick::LeftmostLongest);
        let topics = lists.list(TOPICS, Pick::Standard);
        Subjects { automaton, topics }
    }

    /// Every name standing as the subject or partner of a person predicate: its span.
    pub fn find(&self, v: &View, hits: &Hits, names: &Names, out: &mut Vec<(usize, usize)>) {
        for m in hits.of(self.automaton) {
            let p = skip_between(v, v.char_at(m.start));
            let (pred, roles) = PREDICATES[m.pattern];
            // と一緒 ends the sentence (今日のシフト、鷹取と一緒); と一緒に食べる is a thing.
            let after = v.at(v.char_at(m.end));
            if pred == "一緒" && !after.is_none_or(|c| is_edge(c) || c == 'で') {
                continue;
            }
            // で is a particle only for the predicates that take company with it.
            let particle = particle_before(v, p).filter(|&(_, r)| r != D || roles & D != 0);
            let (e, role) = match particle {
                Some(found) => found,
                // 駅で鷹取見かけた: a name glued to the verb, after a particle or a pause.
                None if roles & Z != 0 => (p, Z),
                // 鳰川が財布忘れた, 蓼沼が駅前で待ってる: the subject, an object or a place
                // between it and the predicate.
                None if roles & (S | G) != 0 => match object_before(v, p)
                    .map(|o| skip_between(v, o))
                    .and_then(|o| particle_before(v, o))
                {
                    Some((e, role)) if role & roles & (S | G) != 0 => (e, role & (S | G)),
                    _ => continue,
                },
                None => continue,
            };
            if roles & role == 0 {
                continue;
            }
            let Some(s) = name_before(v, e, names) else {
                continue;
            };
            if (role == D || roles & L != 0) && !last_of_list(v, s, e, names) {
                continue;
            }
            out.push((s, e));
            // 轟木と鴇田がケンカ: a partner joined by と before the subject.
            if role & S != 0 && s >= 2 && v.at(s - 1) == Some('と') {
                out.extend(name_before(v, s - 1, names).map(|s2| (s2, s - 1)));
            }
        }
        for m in hits.of(self.topics) {
            out.extend(after_topic(v, v.char_at(m.end), names));
        }
        out.extend(called(v, names));
        out.extend(signed(v, names));
        out.extend(speaker(v, names));
        siblings(v, names, out);
    }
}

/// The name `[s, e)` stands last in a list of names: a separator before it joins another word of
/// a name's shape (蓼沼と笹目と|鳰川, 鷹觜・甘粕・|蛯名, 鰺坂も|鷲尾も).
fn last_of_list(v: &View, s: usize, e: usize, names: &Names) -> bool {
    let sep = separator_before(v, s, e);
    sep > 0 && s > sep && name_before(v, s - sep, names).is_some()
}

/// Where an object or a place ends before the predicate at `p` (財布|忘れた, 駅前で|待ってる,
/// 傘を|貸して): a run of one to six kanji or katakana, bare or with を or で (not に: 丁寧に,
/// 一緒に are manners); returns its start.
fn object_before(v: &View, p: usize) -> Option<usize> {
    let e = if p > 0 && matches!(v.at(p - 1), Some('を' | 'で')) {
        p - 1
    } else {
        p
    };
    let word = |c: char| (is_han(c) || is_katakana(c)) && c != '・';
    let s = v.run_before(e, 7, word);
    (s < e && e - s <= 6).then_some(s)
}

/// What joins the names of a list: と, とか, や, 、, ・ (and も…も, checked by the caller).
fn separator_at(v: &View, i: usize) -> usize {
    if v.slice(i, (i + 2).min(v.len())) == "とか" {
        2
    } else if matches!(v.at(i), Some('と' | 'や' | '、' | '・' | 'も')) {
        1
    } else {
        0
    }
}

/// The separator's length right before the name `[at, e)` (蓼沼と|笹目, 鷹觜・|甘粕; も only
/// when the name has its own も: 鰺坂も|鷲尾も), 0 for none.
fn separator_before(v: &View, at: usize, e: usize) -> usize {
    let before = v.at(at.wrapping_sub(1));
    if at >= 3 && v.slice(at - 2, at) == "とか" {
        2
    } else if matches!(before, Some('と' | 'や' | '・' | '、'))
        || (before == Some('も') && v.at(e) == Some('も'))
    {
        1
    } else {
        0
    }
}

/// The script a list's names share: kanji, hiragana, katakana, latin; 0 for anything else.
fn script(c: char) -> u8 {
    if is_han(c) {
        1
    } else if is_hiragana(c) {
        2
    } else if is_katakana(c) {
        3
    } else if c.is_ascii_alphabetic() {
        4
    } else {
        0
    }
}

/// The other names of a list one found name stands in (蓼沼と笹目と鳰川で, 樺沢、茅根、柊木の,
/// 鰺坂も鷲尾も): a word of the same script and a name's shape, joined by the same separator.
/// Right of the name, the next word counts when another separator follows it, or when the list
/// already holds two names (the found one has a separator before it).
pub(super) fn siblings(v: &View, names: &Names, out: &mut Vec<(usize, usize)>) {
    for i in 0..out.len() {
        let (s, e) = out[i];
        let Some(kind) = v.at(s).map(script).filter(|&k| k != 0) else {
            continue;
        };
        let chained = siblings_before(v, names, (s, e), kind, out);
        siblings_after(v, names, (s, e), kind, chained, out);
    }
}

/// The names of the list left of `[s, e)` (蓼沼と|笹目); whether there was one.
fn siblings_before(
    v: &View,
    names: &Names,
    (s, e): (usize, usize),
    kind: u8,
    out: &mut Vec<(usize, usize)>,
) -> bool {
    let mut at = s;
    let mut chained = false;
    while at >= 2 {
        let sep = separator_before(v, at, e);
        if sep == 0 {
            break;
        }
        let j = at - sep;
        // 以上、薬袋でした: a pause joins a list only of three (樺沢、茅根、柊木の).
        let pause = v.at(j) == Some('、');
        match name_before(v, j, names) {
            Some(s2)
                if v.at(s2).map(script) == Some(kind)
                    && (!pause
                        || chained
                        || separator_at(v, e) > 0
                        || (s2 > 0 && v.at(s2 - 1) == Some('、')))
                    && (s2 == 0
                        || v.at(s2 - 1).is_some_and(|c| is_edge(c) || c == ':')
                        || separator_at(v, s2 - 1) > 0
                        || after_time_word(v, s2)) =>
            {
                out.push((s2, j));
                chained = true;
                at = s2;
            }
            _ => break,
        }
    }
    chained
}

/// The names of the list right of `[s, e)` (蓼沼と笹目|と鳰川).
fn siblings_after(
    v: &View,
    names: &Names,
    (s, e): (usize, usize),
    kind: u8,
    chained: bool,
    out: &mut Vec<(usize, usize)>,
) {
    let mut end = e;
    let mut links = usize::from(chained || (s > 0 && separator_at(v, s - 1) > 0));
    loop {
        let sep = separator_at(v, end);
        if sep == 0 {
            break;
        }
        let also = v.at(end) == Some('も');
        let a = end + sep;
        let Some(c) = v.at(a) else { break };
        if script(c) != kind {
            break;
        }
        let b = match kind {
            1 => v.run_after(a, 7, is_han),
            2 => v.run_after(a, 8, is_hiragana),
            3 => v.run_after(a, 10, |c| is_katakana(c) && c != '・'),
            _ => v.run_after(a, 16, |c| c.is_ascii_alphabetic()),
        };
        let next = separator_at(v, b);
        let follows = if also {
            v.at(b) == Some('も')
        } else {
            (next > 0 && v.at(b) != Some('も'))
                || (links > 0
                    && v.at(b)
                        .is_none_or(|c| is_edge(c) || "でがはものにを".contains(c)))
        };
        if b > a && follows && name_before(v, b, names) == Some(a) {
            out.push((a, b));
            links += 1;
            end = b;
        } else {
            break;
        }
    }
}

/// A speaker's name before a quoted line that makes the whole message (瓜生「ちょっと待って」):
/// two or more kanji of a name's shape.
fn speaker(v: &View, names: &Names) -> Option<(usize, usize)> {
    let k = (2..v.len().min(8)).find(|&i| v.at(i) == Some('「'))?;
    let closed = v
        .norm
        .trim_end_matches(['。', '!', '！', '?', '？', ' '])
        .ends_with('」');
    (closed && v.slice(0, k).chars().all(is_han) && kanji_name(v, k, names) == Some(0))
        .then_some((0, k))
}

/// The name right after a topic at `q`, up to the end of its phrase.
fn after_topic(v: &View, q: usize, names: &Names) -> Option<(usize, usize)> {
    let c = v.at(q)?;
    let class: fn(char) -> bool = if is_han(c) {
        is_han
    } else if is_hiragana(c) {
        is_hiragana
    } else if is_katakana(c) {
        is_katakana
    } else if c.is_ascii_alphabetic() {
        |c: char| c.is_ascii_alphabetic()
    } else {
        return None;
    };
    let mut e = v.run_after(q, 12, class);
    if v.at(e) == Some(' ') && v.at(e + 1).is_some_and(class) {
        e = v.run_after(e + 1, 12, class);
    }
    // A hiragana run carries its predicate along (たかとりだよ): cut it at an ending.
    if is_hiragana(c) {
        let cut = (q + 2..e).find(|&i| {
            TOPIC_ENDS
                .iter()
                .filter(|w| **w != " ")
                .any(|w| v.slice(i, v.len()).starts_with(w))
        });
        e = cut.unwrap_or(e);
    }
    let rest = v.slice(e, v.len());
    let ends = e == v.len() || TOPIC_ENDS.iter().any(|w| rest.starts_with(w));
    let shaped = if is_hiragana(c) {
        // たかとり ゆうり: each word of a name's shape.
        let mid = (q..e).find(|&i| v.at(i) == Some(' ')).unwrap_or(e);
        hira_word(v, q, mid) && (mid == e || hira_word(v, mid + 1, e))
    } else {
        name_before(v, e, names) == Some(q)
    };
    (ends && shaped).then_some((q, e))
}

/// A name called out at the start before a comma and a question (轟木、今どこ？) or news told
/// as hearsay (芹生、今日来れないって).
fn called(v: &View, names: &Names) -> Option<(usize, usize)> {
    if !v.has_comma {
        return None;
    }
    let comma = (1..v.len().min(14)).find(|&i| v.at(i) == Some('、'))?;
    let rest = v.slice(comma + 1, v.len());
    // 芹生、今日来れないって: news of someone, told as hearsay after the call.
    let said = rest.trim_end_matches(['。', '!', '！', '?', '？', '…', 'w', 'ｗ', '笑', ' ']);
    let told = ["って", "らしい", "みたい", "だって", "ってさ", "そう"]
        .iter()
        .any(|w| said.ends_with(w));
    let call = CALLS.iter().any(|w| rest.starts_with(w));
    // A hiragana phrase before the pause is a clause as often as a name (とどろきがさ、).
    if !call && (!told || v.at(comma - 1).is_some_and(is_hiragana)) {
        return None;
    }
    (name_before(v, comma, names) == Some(0)).then_some((0, comma))
}

/// A name signing the message with より at its end (ありがとう！ 鷹取より).
fn signed(v: &View, names: &Names) -> Option<(usize, usize)> {
    let text = v.norm.trim_end_matches(['。', '!', '！', '♪', ' ', '\n']);
    let e = text.strip_suffix("より")?.chars().count();
    let s = name_before(v, e, names)?;
    (s == 0 || v.at(s - 1).is_some_and(is_edge)).then_some((s, e))
}

/// `p` moved back over adverbs and one comma between a particle and the predicate.
fn skip_between(v: &View, mut p: usize) -> usize {
    for _ in 0..3 {
        if p > 0 && v.at(p - 1) == Some('、') {
            p -= 1;
            // トドロキがさ、: a filler after the particle.
            if p >= 2
                && matches!(v.at(p - 1), Some('さ' | 'ね'))
                && matches!(v.at(p - 2), Some('が' | 'は' | 'も'))
            {
                p -= 1;
            }
            continue;
        }
        // 鷹取を駅まで迎えに: a place and まで between.
        if p >= 3 && v.slice(p - 2, p) == "まで" {
            let s = v.run_before(p - 2, 6, |c| is_han(c) || is_katakana(c));
            if s < p - 2 {
                p = s;
                continue;
            }
        }
        let head = v.slice(0, p);
        match BETWEEN.iter().find(|w| head.ends_with(**w)) {
            Some(w) => p -= w.chars().count(),
            None => break,
        }
    }
    p
}

/// The particle ending at `p`: where the name ends and which role it marks.
fn particle_before(v: &View, p: usize) -> Option<(usize, u16)> {
    let mut p = p;
    let mut topic = false;
    if p >= 3 && matches!(v.at(p - 1), Some('は' | 'も')) {
        let before = v.at(p - 2);
        if matches!(before, Some('に' | 'と')) || v.slice(p.saturating_sub(3), p - 1) == "から"
        {
            p -= 1;
            topic = true;
        }
    }
    if p >= 3 && v.slice(p - 2, p) == "から" {
        return Some((p - 2, F));
    }
    if p >= 3 && v.slice(p - 2, p) == "って" && !topic {
        return Some((p - 2, Q));
    }
    // 瓜生とかも来る: とか before the particle (and whoever else).
    if p >= 4 && matches!(v.at(p - 1), Some('も' | 'は' | 'が')) && v.slice(p - 3, p - 1) == "とか"
    {
        return Some((p - 3, S));
    }
    let role = match v.at(p.checked_sub(1)?)? {
        'と' => P,
        'で' if !topic => D,
        'に' => T,
        'が' if !topic => S | G,
        'は' | 'も' if !topic => S,
        'の' if !topic => N,
        'を' if !topic => O,
        _ => return None,
    };
    Some((p - 1, role))
}

/// The start of a name ending at `e` (before its particle), when what stands there reads as
/// one.
fn name_before(v: &View, e: usize, names: &Names) -> Option<usize> {
    let c = v.at(e.checked_sub(1)?)?;
    if is_han(c) {
        kanji_name(v, e, names).or_else(|| one_kanji_name(v, e))
    } else if is_hiragana(c) {
        hiragana_name(v, e, names)
    } else if is_katakana(c) && c != '・' {
        katakana_name(v, e)
    } else if c.is_ascii_alphabetic() {
        latin_name(v, e)
    } else {
        None
    }
}

/// One-kanji words that stand as a subject, a partner or an owner without being a name: people
/// and kin, animals, weather and seasons, times, places, things (母が来た, 猫が泣いてた, 雨が
/// 降って, 春がくる, 店が休み).
const ONE_KANJI_WORDS: &str = "私僕俺君彼誰皆人方客親母父兄姉弟妹夫妻娘嫁婿孫祖叔伯甥姪友敵主者子奴輩神仏鬼王姫医師\
    犬猫鳥魚虫馬牛豚猿熊鹿狐狸兎蛇亀鶏羊象虎龍竜蜂蚊蝉蟻鯉鴨鳩烏雀\
    雨雪風雷霧霜嵐雲空星月日陽光影音声色味香水火土木金石氷湯油酒茶米肉卵豆麦塩糖薬毒血汗涙息熱咳痛傷病\
    今朝昼夜晩夕春夏秋冬週年時分秒前後次上下左右中外内横隣奥表裏東西南北先元初末端底頂\
    家店駅寺宮塔橋道路川山海湖池森林畑田庭門窓壁床屋部室棚机席車船便線国県市町村区都府州島港街里郷\
    会社校塾園院局署課班組隊団派党軍本紙字文絵画歌曲詩話書図表服靴帽鞄傘鍵財箱袋瓶皿箸刀剣銃弾玉球\
    銭額値税株円事物件品具器機力気心頭顔目耳鼻口歯手足指腕肩腰胸腹背肌髪首膝体命夢愛恋罪罰運縁恩\
    全各他両片半何誰些俺己汝貴殿様桜梅菊藤桃梨柿栗旬花草葉実根枝種苗芽";

/// One kanji alone at the start of a phrase (榊が先に, うち、汀と, 明日椛が): a name when it
/// is no common word that stands there (母, 猫, 雨, 店).
fn one_kanji_name(v: &View, e: usize) -> Option<usize> {
    let s = e.checked_sub(1)?;
    let c = v.at(s)?;
    let alone = s == 0
        || v.at(s - 1)
            .is_some_and(|b| is_edge(b) || "「とや・".contains(b))
        || after_time_word(v, s);
    let word = ONE_KANJI_WORDS.contains(c)
        || NOT_NAME_ENDS.contains(c)
        || super::names_cue::ANIMAL_ENDS.contains(c)
        || !is_han(c)
        || c == '々';
    (alone && !word).then_some(s)
}

/// A word that repeats its first half (にこにこ, ニコニコ): a mimetic word, no name.
fn reduplicated(w: &str) -> bool {
    let c: Vec<char> = w.chars().collect();
    c.len() >= 4 && c.len().is_multiple_of(2) && c[..c.len() / 2] == c[c.len() / 2..]
}

/// Two to six kanji (a surname, a given name, or both with one space between), no role,
/// institution, thing or time word, no place.
pub(super) fn kanji_name(v: &View, e: usize, names: &Names) -> Option<usize> {
    let mut s = v.run_before(e, 8, is_han);
    // 轟木 澪と: a full name with one space.
    if s >= 2 && v.at(s - 1) == Some(' ') && v.at(s - 2).is_some_and(is_han) {
        let s2 = v.run_before(s - 1, 5, is_han);
        if (s - 1 - s2) <= 4 && e - s <= 3 {
            s = s2;
        }
    }
    'noise: loop {
        let run = v.slice(s, e);
        for w in LEADING_NOISE {
            if run.starts_with(w) && e - s > w.chars().count() {
                s += w.chars().count();
                continue 'noise;
            }
        }
        break;
    }
    let word = v.slice(s, e);
    let first = word.split(' ').next().unwrap_or(word);
    let last = word.rsplit(' ').next().unwrap_or(word);
    let n = word.chars().filter(|&c| c != ' ').count();
    let polite = s > 0 && matches!(v.at(s - 1), Some('お' | 'ご'));
    if !(2..=6).contains(&n) || polite || last.chars().count() > 4 {
        return None;
    }
    if names.contains(first) && first.chars().count() >= 2 {
        return Some(s);
    }
    let end = last.chars().last()?;
    let ok = !place_like(word)
        && kanji_word_ok(last)
        && !NOT_NAME_ENDS.contains(end)
        && !NOT_NAMES_KANJI.contains(&last)
        && !super::names_context::NOT_PAIR_NAMES.contains(&last)
        && !super::names_cue::ROLE_WORDS
            .iter()
            .any(|w| last.ends_with(w))
        && !(end == '部' && last.chars().count() >= 3)
        && !super::names_cue::ANIMAL_ENDS.contains(end);
    ok.then_some(s)
}

/// A hiragana word from the start of its phrase: two to eight chars, no common word, no
/// adverb (ゆっくり, にこにこ), no honorific (the honorific rule's).
fn hiragana_name(v: &View, e: usize, names: &Names) -> Option<usize> {
    // 実は|とどろきと, 轟木と|ときたが: a particle after a word ends the phrase before the
    // name — but 昨日とどろき is a time word and a name.
    let mut s = e;
    let mut cut = false;
    while s > 0 && e - s < 9 && v.at(s - 1).is_some_and(is_hiragana) {
        let c = v.chars[s - 1];
        let after_word = s >= 2
            && v.at(s - 2)
                .is_some_and(|w| is_han(w) || is_katakana(w) || w.is_ascii_alphanumeric());
        let time_word = c == 'と' && after_time_word(v, s - 1);
        // 久しぶりに|ときた: a particle after an adverb's ending ends the phrase too.
        let after_adverb = ["ぶり", "よう", "ため", "すぐ", "たま", "つい"]
            .iter()
            .any(|w| v.slice(0, s - 1).ends_with(w));
        if (after_word || after_adverb) && !time_word && "はがをにでへもとやの".contains(c)
        {
            cut = true;
            break;
        }
        s -= 1;
    }
    // Glued to any other kanji, the kana are a verb's ending (会える|ように) — unless two or
    // more kanji of a name's shape and a kana given name ending like one (鴫原ゆうりと).
    if !cut
        && s >= 2
        && v.at(s - 1).is_some_and(is_han)
        && (2..=4).contains(&(e - s))
        && !v
            .slice(s, e)
            .ends_with(|c: char| "いるたてだうくすつぬふむずんっ".contains(c))
        && !"はがをにでへもとやの".contains(v.chars[s])
        && !NOT_NAMES_HIRA.contains(&v.slice(s, e))
        && !is_common_kana_word(v.slice(s, e))
        && let Some(ks) = kanji_name(v, s, names)
        && v.slice(ks, s).chars().count() >= 2
        && !v.slice(ks, s).contains(' ')
    {
        return Some(ks);
    }
    let alone = cut || s == 0 || after_time_word(v, s) || v.at(s - 1).is_some_and(is_edge);
    // さっき|とどろき, これ|ときたが: a leading adverb or demonstrative is no part of it.
    'lead: loop {
        if !alone {
            break;
        }
        let run = v.slice(s, e);
        for w in HIRA_LEADS {
            if run.starts_with(w) && e - s >= w.chars().count() + 2 {
                s += w.chars().count();
                continue 'lead;
            }
        }
        break;
    }
    if !(alone && hira_word(v, s, e)) {
        return None;
    }
    // ひよどり あかりと: a hiragana surname one space before the given name.
    if s >= 2
        && v.at(s - 1) == Some(' ')
        && v.at(s - 2).is_some_and(is_hiragana)
        && let Some(s2) = hiragana_name(v, s - 1, names)
    {
        return Some(s2);
    }
    Some(s)
}

/// A hiragana word `[s, e)` of a name's shape: two to eight chars, no common word, no adverb
/// (ゆっくり, にこにこ), no honorific (the honorific rule's).
pub(super) fn hira_word(v: &View, s: usize, e: usize) -> bool {
    let word = v.slice(s, e);
    let n = e - s;
    // あいつとこいつ: a common word on either side of a particle inside the run.
    let common =
        |w: &str| NOT_NAMES_HIRA.contains(&w) || super::names_cue::NOT_KANA_NAMES.contains(&w);
    let joined_common = word.char_indices().any(|(i, c)| {
        i > 0
            && "とのはがもにや".contains(c)
            && (common(&word[..i]) || common(&word[i + c.len_utf8()..]))
    });
    let chars: Vec<char> = word.chars().collect();
    let adverb = n == 4 && chars[3] == 'り' && matches!(chars[1], 'っ' | 'ん');
    (2..=8).contains(&n)
        && !word.ends_with(['っ', 'ん', 'の'])
        && !["さん", "ちゃん", "くん", "さま"]
            .iter()
            .any(|h| word.ends_with(h))
        && !is_common_kana_word(word)
        && !NOT_NAMES_HIRA.contains(&word)
        && !adverb
        && !joined_common
        && !reduplicated(word)
        && !reduplicated(v.slice(v.run_before(e, 9, is_hiragana), e))
}

/// A katakana word, or two with a space or ・ between: no common word of that shape.
pub(super) fn katakana_name(v: &View, e: usize) -> Option<usize> {
    let kata = |c: char| is_katakana(c) && c != '・';
    let mut s = v.run_before(e, 10, kata);
    if s >= 2 && matches!(v.at(s - 1), Some(' ' | '・')) && v.at(s - 2).is_some_and(kata) {
        s = v.run_before(s - 1, 10, kata);
    }
    let word = v.slice(s, e);
    let last = word.rsplit([' ', '・']).next().unwrap_or(word);
    // 元カレ, 新メンバー: glued to kanji, the katakana is the tail of a word (not after a
    // time word: 昨日トドロキに).
    let glued = s > 0 && v.at(s - 1).is_some_and(is_han) && !after_time_word(v, s);
    let ok = (2..=12).contains(&(e - s))
        && !glued
        && !word.ends_with(['ッ', 'ー'])
        && !NOT_NAMES_KATA.contains(&last)
        && !NOT_NAME_KATA_ENDS.iter().any(|w| last.ends_with(w))
        && !super::names_cue::NOT_KATA_NAMES.contains(&last)
        && !super::orgs::NOT_BARE.contains(&last)
        && !reduplicated(word);
    ok.then_some(s)
}

/// A word spelt as Japanese romaji: every consonant cluster one romaji has (ch, sh, ts, ky…,
/// n before a consonant, a doubled consonant) — ABC, NHK are not.
pub(super) fn romaji_like(w: &str) -> bool {
    let w = w.to_ascii_lowercase();
    let b = w.as_bytes();
    let vowel = |c: u8| b"aeiou".contains(&c);
    b.windows(2).all(|p| {
        vowel(p[0])
            || vowel(p[1])
            || p[0] == b'n'
            || p[0] == p[1]
            || matches!(p, [b'c' | b's', b'h'] | [b't', b's'] | [_, b'y'])
    }) && b.last().is_some_and(|&c| vowel(c) || c == b'n')
}

/// A capitalised latin name (Kanade, Taro Aoki): not all capitals (LINE, NHK), no brand.
fn latin_name(v: &View, e: usize) -> Option<usize> {
    let mut s = v.run_before(e, 16, |c| c.is_ascii_alphabetic());
    if s >= 2 && v.at(s - 1) == Some(' ') && v.at(s - 2).is_some_and(|c| c.is_ascii_alphabetic()) {
        s = v.run_before(s - 1, 16, |c| c.is_ascii_alphabetic());
    }
    let word = v.slice(s, e);
    let capitalised = |w: &str| {
        w.len() >= 2
            && w.starts_with(|c: char| c.is_ascii_uppercase())
            && w[1..].chars().all(|c| c.is_ascii_lowercase())
    };
    // SHIGIHARA Yuri: a surname in capitals beside a capitalised given name.
    let parts: Vec<&str> = word.split(' ').collect();
    let caps_surname = parts.len() == 2
        && parts.iter().any(|w| capitalised(w))
        && parts
            .iter()
            .any(|w| w.len() >= 2 && w.chars().all(|c| c.is_ascii_uppercase()) && romaji_like(w));
    let shaped = parts.iter().all(|w| capitalised(w)) || caps_surname;
    let glued = s > 0 && v.at(s - 1).is_some_and(|c| c.is_ascii_alphanumeric());
    (shaped && !glued && !NOT_NAMES_LATIN.contains(&word)).then_some(s)
}
