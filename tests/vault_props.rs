//! Issue 16 §1 as properties over generated vaults (see `vault_gen`): what a reader must not be
//! shown never appears in her `vault context` (in process over hundreds of variants, and through
//! the real binary for some), in the workbench's visibility preview, or in any request body of
//! a live run against a fake endpoint; every malformed variant fails with file:line:col (or
//! loads with everything still hidden).

mod common;

#[path = "llm_fake/mod.rs"]
mod llm_fake;

mod cli_env;
mod vault_gen;

use std::path::Path;

use cli_env::Env;
use kakeai::tui::app::{App, Conn};
use kakeai::tui::vis::VisPane;
use kakeai::vault::Work;
use kakeai::vault::load::from_files;
use llm_fake::{FakeServer, Recorded, Reply, openai_reply, parts, sse_events};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use vault_gen::{Mutation, READERS, Vault, generate};

const MUTATIONS: [Mutation; 5] = [
    Mutation::None,
    Mutation::BadMarker,
    Mutation::UnknownReader,
    Mutation::UnmatchedSection,
    Mutation::UnknownEntityType,
];

fn load(v: &Vault) -> Result<Work, String> {
    from_files("w", Path::new("vault/w"), true, v.files.clone()).map_err(|e| e.to_string())
}

/// `path:LINE:COL:` right after the file's name.
fn has_location(err: &str, file: &str) -> bool {
    let Some(i) = err.find(&format!("{file}:")) else {
        return false;
    };
    let mut parts = err[i + file.len() + 1..].splitn(3, ':');
    let num =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    num(parts.next()) && num(parts.next())
}

fn app() -> App {
    common::tui::app(common::tui::header(
        "http://127.0.0.1:1",
        "m",
        Conn::Down("none".into()),
        "0",
        "/tmp/x.db",
    ))
}

/// The preview part of the pane (from its `next turn` heading down), joined without
/// whitespace so a token wrapped over two lines is still found.
fn preview(app: &App) -> String {
    let mut t = Terminal::new(TestBackend::new(120, 160)).unwrap();
    t.draw(|f| kakeai::tui::vis::render(f, f.area(), app.rooms.vis.as_ref(), app.theme()))
        .unwrap();
    let buf = t.backend().buffer();
    let area = buf.area;
    let rows: Vec<String> = (0..area.height)
        .map(|y| {
            (0..area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect();
    let from = rows
        .iter()
        .position(|r| r.contains("next turn"))
        .expect("the preview heading");
    rows[from..]
        .concat()
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

#[test]
fn generated_vaults_never_show_a_reader_what_she_must_not_see() {
    let (mut loaded, mut failed, mut hidden_checked, mut shown_checked) = (0, 0, 0, 0);
    let mut a = app();
    for seed in 0..300u64 {
        // Half the variants are well-formed, the other half carry one mutation each.
        let mutation = if seed % 2 == 0 {
            Mutation::None
        } else {
            MUTATIONS[1 + (seed / 2 % 4) as usize]
        };
        let v = generate(seed, mutation);
        let w = match load(&v) {
            Ok(w) => w,
            Err(e) => {
                let file = v.bad_file.as_deref().unwrap_or_else(|| {
                    panic!("seed {seed}: a valid vault failed: {e}\n{:#?}", v.files)
                });
                assert!(has_location(&e, file), "seed {seed} {mutation:?}: {e}");
                failed += 1;
                continue;
            }
        };
        loaded += 1;
        for (ri, reader) in READERS.iter().enumerate() {
            let c = w.context(*reader);
            let json = serde_json::to_string(&c).unwrap();
            for t in &v.hidden[ri] {
                assert!(
                    !json.contains(t.as_str()),
                    "seed {seed} {mutation:?} reader {reader:?}: {t} shown\n{}\n{:#?}",
                    c.prompt,
                    v.files
                );
                hidden_checked += 1;
            }
            for t in &v.shown[ri] {
                assert!(
                    c.prompt.contains(t.as_str()),
                    "seed {seed} reader {reader:?}: level-3 {t} missing\n{}\n{:#?}",
                    c.prompt,
                    v.files
                );
                shown_checked += 1;
            }
        }
        // The workbench preview, for each of the pane's readers (全員 previews やな).
        if seed % 16 == 0 {
            a.rooms.vis = Some(VisPane::new(w));
            for (i, ri) in [(0, 1), (1, 1), (2, 2)] {
                a.rooms.vis.as_mut().unwrap().reader = i;
                let p = preview(&a);
                for t in &v.hidden[ri] {
                    assert!(!p.contains(t.as_str()), "seed {seed} pane {i}: {t} in {p}");
                }
            }
        }
    }
    // The generator must exercise both outcomes and many places.
    assert!(
        loaded > 120 && failed > 80,
        "loaded {loaded}, failed {failed}"
    );
    assert!(
        hidden_checked > 4000 && shown_checked > 150,
        "{hidden_checked} hidden, {shown_checked} shown"
    );
}

fn write_vault(root: &Path, v: &Vault) {
    for (rel, text) in &v.files {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

#[test]
fn the_cli_prints_no_hidden_token_and_reports_malformed_vaults_with_a_location() {
    let env = Env::new();
    let mut ran = 0;
    for seed in 1000..1015u64 {
        let mutation = MUTATIONS[(seed % 5) as usize];
        let v = generate(seed, mutation);
        let root = env.dir.path().join(format!("v{seed}"));
        write_vault(&root, &v);
        for (ri, reader) in READERS.iter().enumerate() {
            let mut args = vec!["vault", "context", "--vault", root.to_str().unwrap()];
            if let Some(r) = reader {
                args.extend(["--reader", r]);
            }
            let out = env.run(&args);
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            if out.status.code() == Some(2) {
                let file = v
                    .bad_file
                    .as_deref()
                    .unwrap_or_else(|| panic!("seed {seed}: {all}"));
                assert!(has_location(&all, file), "seed {seed}: {all}");
                continue;
            }
            assert_eq!(out.status.code(), Some(0), "{all}");
            assert!(all.contains("withheld from"), "{all}");
            for t in &v.hidden[ri] {
                assert!(
                    !all.contains(t.as_str()),
                    "seed {seed} {reader:?}: {t}\n{all}"
                );
            }
            ran += 1;
        }
    }
    assert!(ran >= 9, "{ran}");
}

/// An OpenAI-compatible fake that answers every chat with the same harmless line.
async fn server() -> FakeServer {
    FakeServer::with(|req: &Recorded, _| match req.path.as_str() {
        "/v1/models" => Reply::json(
            200,
            r#"{"object":"list","data":[{"id":"tiny-ja","object":"model","owned_by":"llamacpp"}]}"#,
        ),
        "/v1/chat/completions" if req.json()["stream"] == true => Reply::sse(parts(&sse_events(
            "tiny-ja",
            &["ねえ、", "坂の上の", "空、", "きれいだね。"],
            "stop",
            4,
        ))),
        "/v1/chat/completions" => Reply::json(
            200,
            &openai_reply(
                "tiny-ja",
                r#"{"frame":4,"roleplay":4,"connection":4,"density":4,"naturalness":4}"#,
                20,
            ),
        ),
        _ => Reply::json(404, r#"{"error":{"message":"File Not Found"}}"#),
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_runs_over_generated_vaults_send_no_hidden_token() {
    let server = server().await;
    let env = Env::new();
    let mut runs = 0;
    let mut checked = 0;
    for seed in 2000..2100u64 {
        if runs == 2 {
            break;
        }
        let v = generate(seed, Mutation::None);
        let both = v.hidden_from_both();
        // A variant worth running: something hidden from both and something shown.
        if both.len() < 4 || v.shown[1].is_empty() || v.shown[2].is_empty() {
            continue;
        }
        runs += 1;
        let root = env.dir.path().join(format!("v{seed}"));
        write_vault(&root, &v);
        let before = server.recorded().len();
        let mut c = env.cmd(&[
            "run",
            "--headless",
            "--topic",
            "坂道",
            "--turns",
            "2",
            "--attempts",
            "1",
            "--endpoint",
            &server.url,
            "--model",
            "tiny-ja",
            "--vault",
            root.to_str().unwrap(),
        ]);
        let out = tokio::task::spawn_blocking(move || c.output().unwrap())
            .await
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let bodies: Vec<String> = server.recorded()[before..]
            .iter()
            // The leak judge's prompt carries a secret by design; the sisters' never.
            .filter(|r| r.path == "/v1/chat/completions" && !llm_fake::is_leak_judge(r))
            .map(|r| r.body.clone())
            .collect();
        assert!(bodies.len() >= 2, "{}", bodies.len());
        // The sisters' level-3 text does reach the prompts (the check is not vacuous).
        let sent = bodies.concat();
        assert!(
            v.shown[1]
                .iter()
                .chain(&v.shown[2])
                .any(|t| sent.contains(t.as_str()))
        );
        for b in &bodies {
            for t in &both {
                assert!(!b.contains(t.as_str()), "seed {seed}: {t} sent in {b}");
                checked += 1;
            }
        }
    }
    assert_eq!(runs, 2);
    assert!(checked > 10, "{checked}");
}
