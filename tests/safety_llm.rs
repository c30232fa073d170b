//! Layer 4: reading what models really reply, the decision it makes in the pipeline, and the
//! fall-back to the static result when it fails — through a fake `ContextLlm`, a client
//! pointed at a closed port, and the fake HTTP endpoint.

#[path = "llm_fake/mod.rs"]
mod llm_fake;

use std::collections::VecDeque;
use std::future::Future;
use std::sync::Mutex;

use kakeai::llm::{Client, Message};
use kakeai::safety::context_judge::parse;
use kakeai::safety::{
    Action, ClientLlm, ContextLlm, ContextType, L4CallError, L4Mode, Reason, SafetyRules, Sister,
    StepOutcome, UserContext,
};
use llm_fake::{FakeServer, Reply, openai_reply};

/// Replies from a script and remembers what it was asked.
struct Fake {
    replies: Mutex<VecDeque<Result<String, L4CallError>>>,
    asked: Mutex<Vec<(Vec<Message>, f32)>>,
}

impl Fake {
    fn new(replies: Vec<Result<&str, &str>>) -> Fake {
        Fake {
            replies: Mutex::new(
                replies
                    .into_iter()
                    .map(|r| {
                        r.map(str::to_string).map_err(|m| L4CallError {
                            message: m.to_string(),
                            endpoint_down: true,
                        })
                    })
                    .collect(),
            ),
            asked: Mutex::new(Vec::new()),
        }
    }

    fn calls(&self) -> usize {
        self.asked.lock().unwrap().len()
    }
}

impl ContextLlm for Fake {
    fn ask(
        &self,
        messages: Vec<Message>,
        temperature: f32,
    ) -> impl Future<Output = Result<String, L4CallError>> + Send {
        self.asked.lock().unwrap().push((messages, temperature));
        let r = self
            .replies
            .lock()
            .unwrap()
            .pop_front()
            .expect("the fake was asked more often than scripted");
        async move { r }
    }
}

#[test]
fn reads_many_reply_shapes() {
    use ContextType::*;
    let rows: &[(&str, ContextType, Option<f64>)] = &[
        (
            r#"{"context_type": "じゃれ合い", "confidence": 0.82, "reason": "笑っている"}"#,
            Banter,
            Some(0.82),
        ),
        (
            "```json\n{\"context_type\": \"攻撃\", \"confidence\": 0.9}\n```",
            Attack,
            Some(0.9),
        ),
        (
            "判定します。\n{\"context_type\": \"通常\", \"confidence\": 0.7}\n以上です。",
            Normal,
            Some(0.7),
        ),
        (
            "｛＂context_type＂：＂攻撃＂，＂confidence＂：０.８｝",
            Attack,
            Some(0.8),
        ),
        (
            "{'context_type': 'じゃれ合い', 'confidence': 0.6}",
            Banter,
            Some(0.6),
        ),
        (r#"{"label": "banter", "score": "75%"}"#, Banter, Some(0.75)),
        (
            r#"{"type": "Attack", "confidence": 95}"#,
            Attack,
            Some(0.95),
        ),
        (r#"{"judgment": "neutral"}"#, Normal, None),
        (
            r#"{"result": {"context_type": "ジャレ合い", "confidence": "0.55"}}"#,
            Banter,
            Some(0.55),
        ),
        (
            r#"{"判定": "攻撃（attack）", "確信度": 0.8}"#,
            Attack,
            Some(0.8),
        ),
        (
            r#"{"note": "{not json"} {"context_type": "通常", "confidence": 2.5}"#,
            Normal,
            Some(1.0),
        ),
        ("攻撃", Attack, None),
        ("じゃれ合いです。", Banter, None),
    ];
    for (reply, want, conf) in rows {
        let v = parse(reply).unwrap_or_else(|e| panic!("{reply}: {e}"));
        assert_eq!(v.context_type, *want, "{reply}");
        match (v.confidence, conf) {
            (Some(a), Some(b)) => assert!((a - b).abs() < 1e-9, "{reply}: {a}"),
            (a, b) => assert_eq!(a, *b, "{reply}"),
        }
    }
    assert_eq!(
        parse(r#"{"context_type": "じゃれ合い", "confidence": 0.8, "reason": "冗談"}"#)
            .unwrap()
            .reason,
        "冗談"
    );
    for bad in [
        "",
        "わかりません",
        "攻撃ではなく、じゃれ合いだと思います",
        r#"{"context_type": "たぶん大丈夫"}"#,
        r#"{"confidence": 0.9}"#,
        r#"{"context_type": 3}"#,
    ] {
        assert!(parse(bad).is_err(), "{bad:?} should not read");
    }
}

fn rules() -> SafetyRules {
    SafetyRules::builtin()
}

const REGULAR: UserContext = UserContext {
    returning: true,
    previous_messages: 8,
    recent_flags: 0,
};

#[tokio::test]
async fn attack_blocks_and_banter_clears() {
    let r = rules();
    let fake = Fake::new(vec![
        Ok(r#"{"context_type": "攻撃", "confidence": 0.9, "reason": "見下している"}"#),
        Ok(r#"{"context_type": "じゃれ合い", "confidence": 0.8}"#),
        Ok(r#"{"context_type": "通常", "confidence": 0.9}"#),
    ]);
    // A regular's bare insult is raised by Layer 2; the model calls it an attack.
    let j = r
        .judge
        .judge_async("やなってバカ", Sister::Yana, &REGULAR, &fake)
        .await;
    assert_eq!(
        (j.action, j.layer, j.reason),
        (Action::Block, Some(4), Some(Reason::Attack))
    );
    assert_eq!(j.context_type, Some(ContextType::Attack));
    assert_eq!(j.trace[3].outcome, StepOutcome::Block);
    assert_eq!(j.trace[3].llm.as_ref().unwrap().reason, "見下している");
    // Banter overrules a fail-closed warning (死ね in a joke).
    let j = r
        .judge
        .judge_async("ゲームで死ねって言われたｗ", Sister::Yana, &REGULAR, &fake)
        .await;
    assert_eq!(
        (j.action, j.context_type),
        (Action::Respond, Some(ContextType::Banter))
    );
    // 通常 clears a warning too.
    let j = r
        .judge
        .judge_async("自殺のニュースを見た", Sister::Ayu, &REGULAR, &fake)
        .await;
    assert_eq!(
        (j.action, j.context_type),
        (Action::Respond, Some(ContextType::Normal))
    );
    // The call ran at the policy's temperature, and the message went in as JSON data.
    let asked = fake.asked.lock().unwrap();
    assert!((asked[0].1 - 0.1).abs() < 1e-6);
    let prompt = &asked[2].0[0].content;
    assert!(
        prompt.contains(r#""message":"自殺のニュースを見た""#),
        "{prompt}"
    );
    assert!(prompt.contains("あゆ"), "{prompt}");
    assert!(prompt.contains(r#""category":"self_harm""#), "{prompt}");
}

#[tokio::test]
async fn layer_four_runs_only_when_something_was_raised() {
    let mut r = rules();
    let fake = Fake::new(vec![Ok(r#"{"context_type": "攻撃", "confidence": 0.7}"#)]);
    // Nothing raised: not asked.
    let j = r
        .judge
        .judge_async("今日は晴れだね", Sister::Yana, &REGULAR, &fake)
        .await;
    assert_eq!(fake.calls(), 0);
    assert_eq!(j.trace[3].outcome, StepOutcome::Skipped);
    // A critical hit: not asked, and it cannot be overturned.
    let j = r
        .judge
        .judge_async("ぶっ殺す", Sister::Yana, &REGULAR, &fake)
        .await;
    assert_eq!((fake.calls(), j.layer), (0, Some(1)));
    // "always": a clean message is asked too, and an attack there blocks.
    r.judge.policy_mut().l4 = L4Mode::Always;
    let j = r
        .judge
        .judge_async("ねえ、ちょっといい？", Sister::Yana, &REGULAR, &fake)
        .await;
    assert_eq!(fake.calls(), 1);
    assert_eq!(j.reason, Some(Reason::Attack));
    // "off": never asked.
    r.judge.policy_mut().l4 = L4Mode::Off;
    let j = r
        .judge
        .judge_async("やなってバカ", Sister::Yana, &REGULAR, &fake)
        .await;
    assert_eq!(fake.calls(), 1);
    assert!(j.trace[3].note.contains("off"), "{}", j.trace[3].note);
}

#[tokio::test]
async fn failures_fall_back_to_the_static_result_and_say_so() {
    let r = rules();
    let fake = Fake::new(vec![
        Err("connection refused"),
        Ok("うーん、どうでしょう"),
        Ok(r#"{"context_type": "通常", "confidence": 0.2}"#),
        Err("timed out"),
    ]);
    // Endpoint down: 死にたい (self_harm, fail-closed) is blocked at Layer 1.
    let j = r
        .judge
        .judge_async("暑くて死にたい", Sister::Yana, &REGULAR, &fake)
        .await;
    assert_eq!(
        (j.action, j.layer, j.reason),
        (Action::Block, Some(1), Some(Reason::StaticNg))
    );
    assert_eq!(j.trace[3].outcome, StepOutcome::Failed);
    assert!(
        j.trace[3].note.contains("connection refused"),
        "{}",
        j.trace[3].note
    );
    assert!(j.trace[3].note.contains("静的判定"), "{}", j.trace[3].note);
    // Unreadable: same fallback, raw reply kept.
    let j = r
        .judge
        .judge_async("暑くて死にたい", Sister::Yana, &REGULAR, &fake)
        .await;
    assert_eq!(j.action, Action::Block);
    assert_eq!(j.trace[3].raw.as_deref(), Some("うーん、どうでしょう"));
    // Not confident enough to clear a fail-closed warning.
    let j = r
        .judge
        .judge_async("暑くて死にたい", Sister::Yana, &REGULAR, &fake)
        .await;
    assert_eq!(j.action, Action::Block);
    assert_eq!(j.context_type, Some(ContextType::Normal));
    assert_eq!(j.trace[3].outcome, StepOutcome::Answered);
    // A fail-open category just responds; Layer 2's banter guess survives the failure.
    let j = r
        .judge
        .judge_async("バカだなぁ笑", Sister::Yana, &REGULAR, &fake)
        .await;
    assert_eq!(j.action, Action::Respond);
    assert_eq!(j.context_type, Some(ContextType::Banter));
    assert_eq!(j.trace[3].outcome, StepOutcome::Failed);
}

fn closed_port() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    url
}

#[tokio::test]
async fn a_real_client_on_a_closed_port_fails_over() {
    let cfg = llm_fake::config(&closed_port(), Some(kakeai::llm::ApiKind::Ollama));
    let llm = ClientLlm {
        client: Client::new(cfg).unwrap(),
    };
    let r = rules();
    let j = r
        .judge
        .judge_async("もう死にたい…暑すぎ", Sister::Ayu, &REGULAR, &llm)
        .await;
    assert_eq!(j.trace[3].outcome, StepOutcome::Failed, "{j:#?}");
    assert_eq!(j.action, Action::Block);
    let err = llm
        .ask(vec![Message::user("x")], 0.1)
        .await
        .expect_err("closed port");
    assert!(err.endpoint_down, "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_client_sends_the_schema_at_low_temperature() {
    let server = FakeServer::with(|req, _| match req.path.as_str() {
        "/v1/chat/completions" => Reply::json(
            200,
            &openai_reply(
                "tiny-ja",
                "```json\n{\"context_type\": \"攻撃\", \"confidence\": 0.88}\n```",
                12,
            ),
        ),
        _ => Reply::json(404, r#"{"error":"no"}"#),
    })
    .await;
    let mut cfg = llm_fake::config(&server.url, Some(kakeai::llm::ApiKind::OpenAi));
    cfg.model = "tiny-ja".into();
    let llm = ClientLlm {
        client: Client::new(cfg).unwrap(),
    };
    let r = rules();
    let j = r
        .judge
        .judge_async("やなってバカ", Sister::Yana, &REGULAR, &llm)
        .await;
    assert_eq!(
        (j.action, j.reason),
        (Action::Block, Some(Reason::Attack)),
        "{j:#?}"
    );
    let body = server.recorded()[0].json();
    assert!(
        (body["temperature"].as_f64().unwrap() - 0.1).abs() < 1e-6,
        "{body}"
    );
    assert_eq!(
        body["response_format"]["json_schema"]["schema"]["properties"]["context_type"]["enum"],
        serde_json::json!(["じゃれ合い", "攻撃", "通常"]),
        "{body}"
    );
}

/// Issue 16 §3: Layer 4 lowers a static warning only with a confident, well-formed answer that
/// is not a copy of its prompt. Generated replies that fall short leave the static result.
#[tokio::test]
async fn only_a_confident_real_answer_clears_a_warning() {
    let r = rules();
    let messages = [
        "暑くて死にたい",
        "お前の家まで行ってやるからな、覚悟しとけよ",
        "ゲームで死ねって言われたｗ",
        "やなってバカ",
    ];
    let weak = [
        // Bare labels: no confidence is low confidence.
        "じゃれ合い".to_string(),
        "通常".to_string(),
        "Banter".to_string(),
        // Observed: the old template echoed back with full confidence.
        r#"{"context_type": "じゃれ合い", "confidence": 1.0, "reason": "短い理由"}"#.to_string(),
        r#"{"context_type": "じゃれ合い", "confidence": 0.8, "reason": "短い理由"}"#.to_string(),
        r#"{"context_type": "通常", "confidence": 0.95, "reason": "「短い 理由」"}"#.to_string(),
        // The instructions copied as the reason.
        r#"{"context_type": "通常", "confidence": 0.9, "reason": "そう判定した根拠を、メッセージの中身に触れて一文で"}"#
            .to_string(),
        // Well-formed but no confidence.
        r#"{"context_type": "じゃれ合い", "reason": "冗談の合図がある"}"#.to_string(),
    ];
    for text in messages {
        let stat = r.judge.judge(text, Sister::Yana, &REGULAR);
        for reply in &weak {
            let fake = Fake::new(vec![Ok(reply.as_str())]);
            let j = r
                .judge
                .judge_async(text, Sister::Yana, &REGULAR, &fake)
                .await;
            assert_eq!(
                (j.action, j.layer, j.reason),
                (stat.action, stat.layer, stat.reason),
                "{text} / {reply}: {:?}",
                j.trace
            );
        }
    }
    // The threat is held statically, so a copied じゃれ合い 1.0 cannot let it through.
    let threat = r.judge.judge(messages[1], Sister::Yana, &REGULAR);
    assert_eq!(threat.action, Action::Block, "{:?}", threat.trace);
    // A confident, real answer still clears a fail-closed warning.
    let fake = Fake::new(vec![Ok(
        r#"{"context_type": "じゃれ合い", "confidence": 0.9, "reason": "ゲームの話で笑っている"}"#,
    )]);
    let j = r
        .judge
        .judge_async(messages[2], Sister::Yana, &REGULAR, &fake)
        .await;
    assert_eq!(j.action, Action::Respond);
}

#[test]
fn the_layer_four_prompt_has_no_example_values() {
    use kakeai::safety::context_judge::{L4Request, prompt};
    let p = prompt(&L4Request {
        text: "今日の天気どう？",
        sister: Sister::Ayu,
        ctx: &REGULAR,
        hits: &[],
    });
    let c = &p[0].content;
    assert!(!c.contains("0.8") && !c.contains("短い理由"), "{c}");
    // The only JSON object is the data block holding the message.
    assert_eq!(c.matches("{\"").count(), 2, "{c}");
    assert!(!c.contains("\"context_type\""), "{c}");
}
