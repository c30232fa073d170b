//! The workbench's load counter ticks by itself, in a real terminal (tmux): against the fake
//! Ollama (written from Ollama's source) with a 6 s model load, the header says
//! `loading gemma2:27b… N s` and N goes up with no key pressed, then `connected`. Skipped (with
//! a note) where tmux is missing, except under CI=true.

#[path = "llm_fake/mod.rs"]
mod llm_fake;

mod common;

use std::time::{Duration, Instant};

use common::tmux::Tmux;
use llm_fake::ollama::{FakeOllama, Spec};

/// The seconds the header's load counter shows, if it shows one.
fn shown(screen: &str) -> Option<u64> {
    let at = screen.find("loading gemma2:27b… ")?;
    let rest = &screen[at + "loading gemma2:27b… ".len()..];
    rest.split(' ').next()?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_load_counter_ticks_with_no_key_pressed() {
    let Some(t) = Tmux::new("load") else {
        return;
    };
    let fake = FakeOllama::start(Spec {
        load: Duration::from_millis(6000),
        ..Spec::gemma2()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let cmd = format!(
        "KAKEAI_DATA_DIR={d}/data KAKEAI_CONFIG_DIR={d}/config KAKEAI_ANALYZER=fallback \
         {bin} --endpoint {url} --model gemma2:27b",
        d = dir.path().display(),
        bin = env!("CARGO_BIN_EXE_kakeai"),
        url = fake.url,
    );
    t.start("l", (100, 30), &cmd);
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen: Vec<u64> = Vec::new();
    let mut connected = false;
    while Instant::now() < deadline && !connected {
        let screen = t.screen("l");
        if let Some(n) = shown(&screen)
            && seen.last() != Some(&n)
        {
            seen.push(n);
        }
        connected = screen.contains("connected");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    drop(t);
    assert!(connected, "never connected; counter seen: {seen:?}");
    assert!(
        seen.len() >= 3 && seen.windows(2).all(|w| w[0] < w[1]),
        "the counter did not tick by itself: {seen:?}"
    );
}
