//! The interview prompt builder (seed 003 §3): a system prompt of role / constraints / flow
//! from the interview's settings, and a behaviour prompt per state with `{summary}` and
//! `{most_important}` filled. Templates: assets/interviews/prompts.toml.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use super::config::InterviewConfig;
use super::state::{Machine, State};

const PROMPTS: &str = include_str!("../../../../assets/interviews/prompts.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sister {
    name: String,
    style: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Prompts {
    role: String,
    constraints: String,
    flow: String,
    tones: BTreeMap<String, String>,
    sisters: BTreeMap<String, Sister>,
    states: BTreeMap<String, String>,
}

fn prompts() -> &'static Prompts {
    static P: OnceLock<Prompts> = OnceLock::new();
    P.get_or_init(|| toml::from_str(PROMPTS).expect("assets/interviews/prompts.toml parses"))
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "（なし）".into()
    } else {
        v.join("、")
    }
}

/// The sister's display name (やな / あゆ).
pub fn sister_name(id: &str) -> &'static str {
    prompts()
        .sisters
        .get(id)
        .map(|s| s.name.as_str())
        .unwrap_or("あゆ")
}

/// Role, constraints and flow, in that order.
pub fn system_prompt(cfg: &InterviewConfig) -> String {
    let p = prompts();
    let sister = p.sisters.get(&cfg.sister).or_else(|| p.sisters.get("ayu"));
    let (name, style) = sister
        .map(|s| (s.name.as_str(), s.style.as_str()))
        .unwrap_or(("あゆ", ""));
    let tone = p
        .tones
        .get(cfg.tone.as_str())
        .map(String::as_str)
        .unwrap_or("");
    let role = p
        .role
        .replace("{sister_name}", name)
        .replace("{sister_style}", style)
        .replace("{goal}", &cfg.goal);
    let constraints = p
        .constraints
        .replace("{tone}", tone)
        .replace("{max_deep}", &cfg.max_deep.to_string())
        .replace("{must_ask}", &list(&cfg.must_ask))
        .replace("{never_ask}", &list(&cfg.never_ask));
    format!("{role}\n\n{}\n\n{}", constraints.trim(), p.flow.trim())
}

/// The extra instruction for the current state.
pub fn behaviour(m: &Machine, cfg: &InterviewConfig) -> String {
    let key = match m.state {
        State::Fallback => "done",
        s => s.as_str(),
    };
    let t = prompts().states.get(key).cloned().unwrap_or_default();
    let most = m.most_important().unwrap_or("（まだ挙がっていません）");
    t.replace("{summary}", &m.summary())
        .replace("{most_important}", most)
        .replace("{items}", &list(&m.items))
        .replace("{deep}", &(m.deep + 1).to_string())
        .replace("{max_deep}", &cfg.max_deep.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_prompt_carries_every_setting() {
        let mut c = InterviewConfig::sample();
        c.max_deep = 3;
        let s = system_prompt(&c);
        assert!(s.starts_with("あなたはあゆです。"), "{s}");
        for part in [
            c.goal.as_str(),
            &c.must_ask[0],
            &c.never_ask[1],
            "3回まで",
            "やわらかい丁寧語",
        ] {
            assert!(s.contains(part), "{part} missing in {s}");
        }
        c.sister = "yana".into();
        c.tone = super::super::config::Tone::CasualWarm;
        let s = system_prompt(&c);
        assert!(s.starts_with("あなたはやなです。") && s.contains("くだけた話し方"));
    }

    #[test]
    fn every_state_has_a_behaviour_and_placeholders_are_filled() {
        let c = InterviewConfig::sample();
        let mut m = Machine::new(&c, false);
        m.start();
        for msg in ["はい", "いいですよ", "献立を考えること、買い物、洗い物"]
        {
            m.user(msg);
        }
        assert_eq!(m.state, State::Recommend);
        let b = behaviour(&m, &c);
        assert!(b.contains("「献立を考えること」"), "{b}");
        for msg in [
            "そうです",
            "献立を考えること",
            "毎晩悩みます",
            "冷蔵庫を見て決めます",
        ] {
            m.user(msg);
        }
        assert_eq!(m.state, State::SummaryCheck);
        let b = behaviour(&m, &c);
        assert!(!b.contains('{'), "{b}");
        assert!(b.contains("毎晩悩みます") && b.contains("買い物"), "{b}");
    }
}
