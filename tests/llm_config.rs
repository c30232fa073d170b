//! llm.toml: embedded defaults, the user's file merged over them, and errors as path:line:col.

use std::path::Path;

use clap::ValueEnum;
use kakeai::config::ConfigError;
use kakeai::llm::{ApiKind, LlmConfig, SystemRole};

fn parse(text: &str) -> Result<LlmConfig, ConfigError> {
    LlmConfig::from_toml_str(Path::new("/home/u/.config/kakeai/llm.toml"), text)
}

#[test]
fn user_values_merge_over_defaults() {
    let c = parse(
        "endpoint = \"http://192.168.1.20:8080/v1\"\nmodel = \"tiny-ja\"\napi = \"openai\"\n\
         max_chars = 120\n[timeouts]\nidle_ms = 1500\n[models.\"tiny-ja\"]\nsystem_role = \"native\"\n",
    )
    .unwrap();
    assert_eq!(c.endpoint, "http://192.168.1.20:8080/v1");
    assert_eq!(c.api, Some(ApiKind::OpenAi));
    assert_eq!(c.max_chars, 120);
    assert_eq!(c.timeouts.idle_ms, 1500);
    // Untouched keys keep their defaults, inside [timeouts] too.
    assert_eq!(c.timeouts.first_token_ms, 60_000);
    assert_eq!(c.num_ctx, 8192);
    assert_eq!(c.trim_chars, "。？！");
    assert_eq!(c.effective_system_role(), SystemRole::Native);
}

#[test]
fn every_setting_is_documented_in_the_default_file() {
    let text = LlmConfig::default_toml();
    for key in [
        "endpoint",
        "model",
        "api",
        "num_ctx",
        "system_role",
        "stop",
        "max_chars",
        "trim_chars",
        "temperature",
        "judge_temperature",
        "max_tokens",
        "retry_backoff_ms",
        "embed_model",
        "connect_ms",
        "first_token_ms",
        "idle_ms",
        "request_ms",
    ] {
        let set = text.lines().any(|l| {
            let l = l.trim_start_matches(['#', ' ']);
            l.starts_with(&format!("{key} ="))
        });
        assert!(set, "`{key}` is missing from assets/config/llm.toml");
    }
    assert_eq!(parse("").unwrap(), LlmConfig::default());
}

#[test]
fn syntax_error_points_at_line_and_column() {
    let e = parse("model = \"gemma2:27b\"\nmax_chars = = 3\n").unwrap_err();
    let s = e.to_string();
    assert!(s.starts_with("/home/u/.config/kakeai/llm.toml:2:"), "{s}");
}

#[test]
fn wrong_types_and_unknown_keys_name_the_key_and_its_line() {
    let s = parse("model = \"m\"\n\nmax_chars = \"many\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        s.starts_with("/home/u/.config/kakeai/llm.toml:3:1: in `max_chars`"),
        "{s}"
    );

    let s = parse("[timeouts]\nidel_ms = 10\n").unwrap_err().to_string();
    assert!(s.contains("idel_ms"), "{s}");

    let s = parse("api = \"vllm\"\n").unwrap_err().to_string();
    assert!(s.contains(":1:1: in `api`") && s.contains("vllm"), "{s}");
}

#[test]
fn invalid_values_are_refused_with_their_location() {
    let s = parse("# mine\nendpoint = \"localhost:11434\"\n")
        .unwrap_err()
        .to_string();
    assert!(
        s.contains(":2:1: in `endpoint`") && s.contains("http://"),
        "{s}"
    );
    let s = parse("max_chars = 0\n").unwrap_err().to_string();
    assert!(s.contains("in `max_chars`"), "{s}");
    let s = parse("[timeouts]\nidle_ms = 0\n").unwrap_err().to_string();
    assert!(s.contains(":2:1: in `timeouts.idle_ms`"), "{s}");
    let s = parse("temperature = 9.5\n").unwrap_err().to_string();
    assert!(s.contains("in `temperature`"), "{s}");
}

#[test]
fn api_kind_values_for_the_command_line() {
    assert_eq!(ApiKind::from_str("ollama", true), Ok(ApiKind::Ollama));
    assert_eq!(ApiKind::from_str("openai", true), Ok(ApiKind::OpenAi));
    let names: Vec<String> = ApiKind::value_variants()
        .iter()
        .filter_map(|v| v.to_possible_value())
        .map(|p| p.get_name().to_string())
        .collect();
    assert_eq!(names, vec!["ollama", "openai"]);
}

#[test]
fn load_reads_the_config_dir() {
    // The only test in this binary that touches the environment.
    let dir = tempfile::tempdir().unwrap();
    unsafe { std::env::set_var("KAKEAI_CONFIG_DIR", dir.path()) };
    assert_eq!(LlmConfig::load().unwrap(), LlmConfig::default());
    std::fs::write(
        dir.path().join("llm.toml"),
        "model = \"qwen2.5:7b\"\nnum_ctx = [\n",
    )
    .unwrap();
    let s = LlmConfig::load().unwrap_err().to_string();
    assert!(
        s.starts_with(&format!("{}:", dir.path().join("llm.toml").display())),
        "{s}"
    );
    std::fs::write(dir.path().join("llm.toml"), "model = \"qwen2.5:7b\"\n").unwrap();
    let c = LlmConfig::load().unwrap();
    assert_eq!(c.model, "qwen2.5:7b");
    assert_eq!(c.effective_system_role(), SystemRole::Native);
}
