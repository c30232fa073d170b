//! The PII second opinion on the LINE bot's path (issue 26 §1, seed 003 §6): what the model
//! finds is masked in the store and in every later prompt; a message the model could not check
//! goes to no model (her fallback line, marked for review, a placeholder in later history);
//! `fail-open` and `off` behave as configured. The real binary, the fake LINE API and a fake
//! OpenAI-compatible model (non-stream JSON for the check, SSE for her lines).

mod cli_env;
mod line_fake;
#[path = "llm_fake/mod.rs"]
mod llm_fake;
mod serve_common;

use std::time::Duration;

use cli_env::Env;
use line_fake::FakeLine;
use llm_fake::{FakeServer, Recorded, Reply, openai_reply, parts, sse_events};
use serve_common::*;

/// A nickname no rule can know: only the model's second opinion can find it.
const NICK: &str = "ミナミン";
const SAID: &str = "えー、それ面白いじゃん！";
const FALLBACK: &str = "ん、ちょっと考えがまとまんない！もう一回言ってくれる？";

/// How the fake model answers the PII check.
#[derive(Clone, Copy, Debug)]
enum Check {
    /// Masks every NICK as [氏名] (a model that found it).
    Finds,
    /// HTTP 500 with llama-server's error body.
    ServerError,
    /// A chatty reply without the three lines.
    Unreadable,
    /// A MASKED_TEXT that is not the text it was shown (the model rewrote it).
    Rewritten,
    /// Answers after the check's time limit.
    TooSlow,
}

fn model(check: Check) -> impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static {
    move |req: &Recorded, _| {
        if is_pii_pass(req) {
            let text = pii_pass_text(req);
            let body = |s: &str| Reply::json(200, &openai_reply("tiny-ja", s, 12));
            return match check {
                Check::Finds if text.contains(NICK) => body(&format!(
                    "PII_DETECTED: true\nMASKED_TEXT: {}\nDETECTED_ITEMS: 氏名",
                    text.replace(NICK, "[氏名]")
                )),
                Check::Finds => body(&format!(
                    "PII_DETECTED: false\nMASKED_TEXT: {text}\nDETECTED_ITEMS: なし"
                )),
                Check::ServerError => Reply::json(
                    500,
                    r#"{"error":{"code":500,"message":"Internal Server Error","type":"server_error"}}"#,
                ),
                Check::Unreadable => body("この投稿には個人情報が含まれている可能性があります。"),
                Check::Rewritten => body(
                    "PII_DETECTED: true\nMASKED_TEXT: [氏名]について話しました\nDETECTED_ITEMS: 氏名",
                ),
                Check::TooSlow => body(&format!(
                    "PII_DETECTED: false\nMASKED_TEXT: {text}\nDETECTED_ITEMS: なし"
                ))
                .delay(Duration::from_secs(4)),
            };
        }
        match req.path.as_str() {
            "/v1/models" => Reply::json(
                200,
                r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
            ),
            "/v1/chat/completions" if req.json()["stream"] == true => Reply::sse(parts(
                &sse_events("tiny-ja", &["えー、", "それ面白い", "じゃん！"], "stop", 3),
            )),
            _ => Reply::json(
                200,
                &openai_reply(
                    "tiny-ja",
                    r#"{"context_type":"じゃれ合い","confidence":0.9,"reason":"x"}"#,
                    10,
                ),
            ),
        }
    }
}

fn config(mode: &str) -> String {
    format!(
        "{}[pii]\nllm = \"{mode}\"\nllm_seconds = 2\n",
        fast_config(60.0)
    )
}

/// Sends `msgs` one after another in a 1:1 chat, each answered before the next.
async fn chat(s: &Serve, line: &FakeLine, msgs: &[String]) {
    let user = "U4af4980629aaaaaaaaaaaaaaaaaaaa77";
    for (i, m) in msgs.iter().enumerate() {
        let id = format!("p{i}");
        assert_eq!(
            s.send(&body(&[text(&event_id(), ("user", user), &id, m)]))
                .await,
            200
        );
        let n = i + 1;
        let calls = line.wait(30, |c| c.len() >= n).await;
        assert_eq!(calls.len(), n, "message {i} answered: {calls:?}");
    }
}

/// Every request the model got whose messages carry `needle`, by kind.
fn seen(llm: &FakeServer, needle: &str) -> Vec<String> {
    llm.recorded()
        .iter()
        .filter(|r| r.body.contains(needle))
        .map(|r| {
            if is_pii_pass(r) {
                "pii-check".to_string()
            } else {
                format!("{} stream={}", r.path, r.json()["stream"])
            }
        })
        .collect()
}

fn user_rows(s: &Serve) -> Vec<(String, String, String)> {
    query(
        &s.db(),
        "SELECT text_masked, pii_kinds, pii_check FROM line_messages WHERE role = 'user' ORDER BY id",
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// Generated messages with the nickname in different places and scripts around it.
fn messages() -> Vec<String> {
    // Frames where no rule can tell the nickname is a person (behind a person's predicate —
    // 「…がさ、また遅刻」「…って覚えてる」「…の誕生日」 — the rules now find it themselves).
    let frames = [
        "きのう{}と駅前のカフェに行ったよ",
        "駅前で{}を見た",
        "{}のことで相談があるんだ",
        "さっき{}からスタンプ届いた",
    ];
    frames.iter().map(|f| f.replace("{}", NICK)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_model_finds_is_masked_before_any_prompt_and_in_the_store() {
    let line = FakeLine::ok().await;
    let llm = FakeServer::with(model(Check::Finds)).await;
    let s = Serve::start(Env::new(), &line.url, &llm.url, &config("fail-closed"), &[]);
    let msgs = messages();
    chat(&s, &line, &msgs).await;
    // She answered with the model's line every time.
    assert!(
        line.calls().iter().all(|c| c.text() == SAID),
        "{:?}",
        line.calls()
    );
    // The nickname reached the model only in the check itself.
    let reached = seen(&llm, NICK);
    assert_eq!(reached.len(), msgs.len(), "{reached:?}");
    assert!(reached.iter().all(|k| k == "pii-check"), "{reached:?}");
    let rows = user_rows(&s);
    assert_eq!(rows.len(), msgs.len());
    for (text, kinds, check) in &rows {
        assert!(!text.contains(NICK) && text.contains("[氏名]"), "{text}");
        assert!(kinds.contains("氏名"), "{kinds}");
        assert_eq!(check, "llm");
    }
    // Nothing in the database file holds it (the pattern log included).
    let all = std::fs::read(s.db()).unwrap_or_default();
    assert!(!String::from_utf8_lossy(&all).contains(NICK));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_the_model_could_not_check_goes_to_no_model() {
    for check in [
        Check::ServerError,
        Check::Unreadable,
        Check::Rewritten,
        Check::TooSlow,
    ] {
        let line = FakeLine::ok().await;
        let llm = FakeServer::with(model(check)).await;
        let s = Serve::start(Env::new(), &line.url, &llm.url, &config("fail-closed"), &[]);
        let msgs = messages();
        chat(&s, &line, &msgs[..2]).await;
        let calls = line.calls();
        assert!(
            calls.iter().all(|c| c.text() == FALLBACK),
            "{check:?}: {calls:?}"
        );
        // Only the check saw the text; no answer, no safety question, no judge.
        let reached = seen(&llm, NICK);
        assert!(
            reached.iter().all(|k| k == "pii-check"),
            "{check:?}: {reached:?}"
        );
        // Neither did the second message's prompt carry the first (history is a placeholder):
        // no stream request was made at all.
        assert!(
            !llm.recorded().iter().any(|r| r.json()["stream"] == true),
            "{check:?}: her line was generated from an unchecked text"
        );
        for (_, _, c) in user_rows(&s) {
            assert_eq!(c, "failed", "{check:?}");
        }
        let review: Vec<bool> = query(
            &s.db(),
            "SELECT review FROM line_messages WHERE role = 'bot' ORDER BY id",
            |r| r.get(0),
        );
        assert_eq!(review, vec![true, true], "{check:?}");
        let log = s.stderr.lock().unwrap().join("\n");
        // The line names the setting that decided what happened, in the serve log file too.
        let file = std::fs::read_to_string(s.db().parent().unwrap().join("kakeai-serve.log"))
            .unwrap_or_default();
        for text in [&log, &file] {
            let line = text.lines().find(|l| l.contains("pii-unchecked"));
            assert!(
                line.is_some_and(|l| l.contains("[pii] llm = \"fail-closed\"")),
                "{check:?}: {text}"
            );
        }
        // Every failed check is counted, a timeout included (it is no model error of a line).
        assert_eq!(
            s.metric("kakeai_line_pii_check_failures_total").await,
            2.0,
            "{check:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checked_message_after_an_unchecked_one_sees_a_placeholder() {
    // The check fails (every time, retries included) for the first message only; the second
    // is checked and answered.
    let inner = model(Check::Finds);
    let llm = FakeServer::with(move |req: &Recorded, i| {
        if is_pii_pass(req) && pii_pass_text(req).contains("カナタン") {
            return Reply::json(500, r#"{"error":{"code":500,"message":"x"}}"#);
        }
        inner(req, i)
    })
    .await;
    let line = FakeLine::ok().await;
    let s = Serve::start(Env::new(), &line.url, &llm.url, &config("fail-closed"), &[]);
    let msgs = vec![
        "ひみつの話なんだけど、カナタンのことで相談があるんだ".to_string(),
        "今日は暑いね".to_string(),
    ];
    chat(&s, &line, &msgs).await;
    let texts: Vec<String> = line.calls().iter().map(|c| c.text()).collect();
    assert_eq!(texts, vec![FALLBACK.to_string(), SAID.to_string()]);
    let streamed: Vec<Recorded> = llm
        .recorded()
        .into_iter()
        .filter(|r| r.json()["stream"] == true)
        .collect();
    assert!(!streamed.is_empty());
    for r in &streamed {
        assert!(!r.body.contains("カナタン"), "{}", r.body);
        assert!(r.body.contains("確認できなかったメッセージ"), "{}", r.body);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_open_answers_from_the_rules_result_and_off_never_asks() {
    for (mode, asks) in [("fail-open", true), ("off", false)] {
        let line = FakeLine::ok().await;
        let llm = FakeServer::with(model(Check::ServerError)).await;
        let s = Serve::start(Env::new(), &line.url, &llm.url, &config(mode), &[]);
        chat(&s, &line, &messages()[..1]).await;
        assert_eq!(line.calls()[0].text(), SAID, "{mode}");
        let checks = llm.recorded().iter().filter(|r| is_pii_pass(r)).count();
        assert_eq!(checks > 0, asks, "{mode}");
        let expect = if asks { "open" } else { "" };
        assert_eq!(user_rows(&s)[0].2, expect, "{mode}");
        // A failed check under fail-open is logged too, naming the setting; off asks nothing.
        let log = s.stderr.lock().unwrap().join("\n");
        let named = log
            .lines()
            .any(|l| l.contains("pii-unchecked") && l.contains("[pii] llm = \"fail-open\""));
        assert_eq!(named, asks, "{mode}: {log}");
    }
}
