//! Issue 27: patterns the operator registers are used (the cold start of `patterns::cold`), so
//! seed 000's loop closes over real HTTP: `kakeai patterns add` → the bot says it on trial →
//! the user's next message is its outcome; a pattern whose bound fell below the bar is not used.

mod cli_env;
mod line_fake;
#[path = "llm_fake/mod.rs"]
mod llm_fake;
mod serve_common;

use std::sync::{Arc, Mutex};

use cli_env::Env;
use line_fake::FakeLine;
use serve_common::*;

const LINE: &[&str] = &["えー、", "それ面白い", "じゃん！"];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registered_pattern_is_tried_and_earns_its_outcome() {
    let line = FakeLine::ok().await;
    let llm = llm(LINE, Arc::new(Mutex::new(String::new()))).await;
    let env = Env::new();
    let new = "はぁ？バカって言ったほうがバカなんだからね！";
    let tried_out = "もう、あたしのことからかって楽しいわけ？ほんとにさ〜！";
    for (resp, kind) in [(new, "プロレス受け"), (tried_out, "カウンター")] {
        let o = env.run(&[
            "patterns",
            "add",
            "--character",
            "yana",
            "--message-type",
            "からかい",
            "--example",
            "やなってほんとバカだなぁ笑",
            "--type",
            kind,
            "--response",
            resp,
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // The second one was tried twice before and failed both times: its bound is below 0.7.
    {
        let st = kakeai::store::Store::open(&env.data_db()).unwrap();
        st.conn()
            .execute(
                "UPDATE prowrestling_patterns SET used_count = 2, failure_count = 2 WHERE bot_response = ?1",
                [tried_out],
            )
            .unwrap();
    }
    let s = Serve::start(env, &line.url, &llm.server.url, &fast_config(60.0), &[]);
    let user = ("user", "U4ccccccccccccccccccccccccccccccc");
    let msgs = [
        "こんにちは",
        "今日は晴れてるね",
        "散歩いこうよ",
        "やなってほんとバカだなぁ笑",
        "ごめんごめん",
    ];
    for (i, m) in msgs.iter().enumerate() {
        assert_eq!(
            s.send(&body(&[text(&event_id(), user, &format!("c{i}"), m)]))
                .await,
            200
        );
        line.wait(20, |c| c.len() == i + 1).await;
    }
    let calls = line.calls();
    assert_eq!(calls.len(), msgs.len());
    assert_eq!(calls[3].text(), new, "the new pattern (0 uses) is tried");
    assert!(calls.iter().all(|c| c.text() != tried_out));
    let trace = query(
        &s.db(),
        "SELECT trace FROM line_messages WHERE role = 'bot' AND source = 'pattern'",
        |r| r.get::<_, String>(0),
    );
    assert!(trace[0].contains("on trial"), "{trace:?}");
    // Its outcome is real: the user answered within the window.
    let counts = until(10, || {
        let c = query(
            &s.db(),
            "SELECT used_count, success_count, failure_count FROM prowrestling_patterns WHERE pattern_id = 1",
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)),
        );
        (c[0].1 == 1).then_some(c[0])
    })
    .await;
    assert_eq!(counts, Some((1, 1, 0)));
}
