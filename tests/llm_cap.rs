//! The character cap on live streams: cut at max_chars, trimmed back to a sentence end, the rest
//! of the stream dropped; judge calls uncapped.

mod llm_fake;

use std::time::Duration;

use kakeai::llm::{ApiKind, ChatRequest, Client, Finish, Message, ResponseFormat};
use llm_fake::{FakeServer, Part, Reply, config, parts};

fn line_request() -> ChatRequest {
    ChatRequest::line(vec![
        Message::system("あなたは姉のやな。"),
        Message::user("あゆ、週末どこ行く？"),
    ])
}

async fn collect(client: &Client, req: &ChatRequest) -> kakeai::llm::Completion {
    client.stream_chat(req, &mut |_| {}).await.unwrap()
}

/// About 30 characters per sentence; enough of them to pass 400.
fn long_deltas() -> Vec<String> {
    let sentences = [
        "ねえあゆ、この前の話の続きなんだけどさ、聞いてくれる？",
        "駅前の新しいパン屋さん、朝七時から開いてるんだって。",
        "クロワッサンがすごく評判で、行列ができるらしいよ！",
        "今度の土曜日、早起きして一緒に並んでみない？",
    ];
    let mut out = Vec::new();
    for i in 0..6 {
        for s in sentences {
            let chars: Vec<char> = s.chars().collect();
            // 1–3 characters per delta, like real tokens.
            let mut at = 0;
            while at < chars.len() {
                let n = 1 + (at + i) % 3;
                out.push(chars[at..(at + n).min(chars.len())].iter().collect());
                at += n;
            }
        }
    }
    out
}

#[tokio::test]
async fn cap_cuts_at_400_chars_trims_to_sentence_end_and_drops_the_stream() {
    let deltas = long_deltas();
    let refs: Vec<&str> = deltas.iter().map(String::as_str).collect();
    let lines = llm_fake::ollama_lines("gemma2:27b", &refs, "stop", refs.len() as u32);
    let mut body = parts(&lines[..lines.len() - 1]);
    // After the cap the server keeps talking slowly; a client that stopped reading is gone.
    for _ in 0..200 {
        body.push(Part::Sleep(Duration::from_millis(10)));
        body.extend(parts(&[&lines[0]]));
    }
    let server = FakeServer::scripted(vec![Reply::ndjson(body)]).await;
    let client = Client::new(config(&server.url, Some(ApiKind::Ollama))).unwrap();
    let c = collect(&client, &line_request()).await;
    assert_eq!(c.finish, Finish::Capped);
    let n = c.text.chars().count();
    assert!(n <= 400 && n > 350, "{n} chars");
    assert!(c.text.ends_with(['。', '？', '！']), "{}", c.text);
    assert!(c.raw.starts_with(&c.text));
    let raw_n = c.raw.chars().count();
    assert!(
        raw_n > 400 && raw_n <= 403,
        "stopped at the delta that crossed the cap: {raw_n}"
    );
    assert!(server.wait_client_gone().await, "the response was dropped");
    assert_eq!(server.recorded().len(), 1);
}

#[tokio::test]
async fn cap_without_sentence_end_keeps_exactly_max_chars_and_judge_calls_are_uncapped() {
    let deltas: Vec<String> = (0..60).map(|_| "あいう".to_string()).collect();
    let refs: Vec<&str> = deltas.iter().map(String::as_str).collect();
    let events = llm_fake::sse_events("m", &refs, "stop", 60);
    let server =
        FakeServer::scripted(vec![Reply::sse(parts(&events)), Reply::sse(parts(&events))]).await;
    let mut cfg = config(&server.url, Some(ApiKind::OpenAi));
    cfg.max_chars = 100;
    let client = Client::new(cfg).unwrap();
    let c = collect(&client, &line_request()).await;
    assert_eq!(c.finish, Finish::Capped);
    assert_eq!(c.text.chars().count(), 100);

    let judge = ChatRequest::judge(vec![Message::user("採点して")], ResponseFormat::Json);
    let c = collect(&client, &judge).await;
    assert_eq!(c.finish, Finish::Stop);
    assert_eq!(c.text.chars().count(), 180);
}
