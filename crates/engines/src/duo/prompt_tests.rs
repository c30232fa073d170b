use super::*;
use crate::director::RuleSet;

fn setup() -> (RuleSet, DuoConfig) {
    (RuleSet::builtin().unwrap(), DuoConfig::builtin().unwrap())
}

fn line(speaker: &str, text: &str) -> Line {
    Line {
        speaker: speaker.into(),
        text: text.into(),
    }
}

fn build_for(
    rules: &RuleSet,
    cfg: &DuoConfig,
    speaker: &str,
    history: &[Line],
    guidance: &[String],
    owner: Option<&str>,
) -> Prompt {
    let me = rules.character(speaker).unwrap();
    let partner = rules.character(&me.partner).unwrap();
    build(&PromptInput {
        speaker: me,
        partner,
        topic: "駅前にできたパン屋",
        cfg,
        world: &cfg.world,
        history,
        guidance,
        owner,
    })
}

#[test]
fn first_turn_has_persona_world_and_a_start_cue() {
    let (rules, cfg) = setup();
    let p = build_for(&rules, &cfg, "yana", &[], &[], None);
    assert_eq!(p.messages.len(), 2);
    assert_eq!(p.messages[0].role, Role::System);
    let sys = &p.messages[0].content;
    let order: Vec<usize> = ["【キャラクター設定】", "【世界設定】", "【話題】"]
        .iter()
        .map(|m| sys.find(m).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{sys}");
    assert!(sys.contains("あなたは「やな」です"));
    assert!(sys.contains("敬語や「です・ます」で話さない"));
    assert_eq!(p.messages[1].role, Role::User);
    assert!(p.messages[1].content.contains("【会話の始まり】"));
    assert!(p.messages[1].content.contains("次のやなの発言だけ"));
}

#[test]
fn history_maps_roles_and_sections_keep_their_order() {
    let (rules, cfg) = setup();
    let history = vec![
        line("yana", "あ、パンのいい匂いがする！"),
        line("ayu", "駅前に新しくできたお店ですね。"),
        line("yana", "ちょっと寄ってみよっか？"),
        line("ayu", "はい、開店記念で割引があるそうですよ。"),
    ];
    let guidance = vec!["前の発言はやや長めでした。短くしてください。".to_string()];
    let p = build_for(
        &rules,
        &cfg,
        "yana",
        &history,
        &guidance,
        Some("値段の話をして"),
    );
    let roles: Vec<Role> = p.messages.iter().map(|m| m.role).collect();
    // The conversation opens with やな (assistant), so a placeholder user turn comes first.
    assert_eq!(
        roles,
        [
            Role::System,
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::User
        ]
    );
    assert_eq!(p.messages[1].content, cfg.placeholder_user);
    let last = &p.messages[5].content;
    let pos: Vec<usize> = [
        "【相手の直前の発言】",
        "開店記念で割引",
        "【ディレクターからの指示】",
        "【オーナー指示】",
        "値段の話をして",
    ]
    .iter()
    .map(|m| {
        last.find(m)
            .unwrap_or_else(|| panic!("{m} missing in {last}"))
    })
    .collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "{last}");
}

#[test]
fn same_role_lines_merge_for_ayu() {
    let (rules, cfg) = setup();
    // From あゆ's side: やな's lines are user turns; two in a row merge into one message.
    let history = vec![
        line("yana", "雨、降ってきたね。"),
        line("yana", "傘持ってくればよかったかも。"),
    ];
    let p = build_for(&rules, &cfg, "ayu", &history, &[], None);
    let roles: Vec<Role> = p.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::System, Role::User]);
    assert!(p.messages[1].content.starts_with("雨、降ってきたね。"));
    assert!(
        p.messages[1]
            .content
            .contains("【相手の直前の発言】\nやな: 傘持ってくれば")
    );
}

#[test]
fn budget_drops_the_oldest_history_first() {
    let (rules, mut cfg) = setup();
    let history: Vec<Line> = (0..40)
        .map(|i| {
            let who = if i % 2 == 0 { "yana" } else { "ayu" };
            line(who, &format!("第{i}発言です。{}", "あ".repeat(60)))
        })
        .collect();
    let full = build_for(&rules, &cfg, "yana", &history, &[], None);
    assert_eq!(full.dropped, 0);
    cfg.prompt_budget_chars = full.chars / 2;
    let p = build_for(&rules, &cfg, "yana", &history, &[], None);
    assert!(p.dropped > 0);
    assert!(
        p.chars <= cfg.prompt_budget_chars,
        "{} > {}",
        p.chars,
        cfg.prompt_budget_chars
    );
    let all: String = p.messages.iter().map(|m| m.content.as_str()).collect();
    assert!(all.contains("第38発言"), "newest kept");
    assert!(all.contains("第39発言"), "partner's last line always kept");
    assert!(!all.contains("第0発言"), "oldest dropped");
    assert_ne!(p.hash, full.hash);
}

#[test]
fn lighter_systems_swap_only_the_world() {
    use crate::llm::Message;
    let m = vec![
        Message::system(
            "【キャラクター設定】やな\n【世界設定】\n港町。\n\n■ 灯台／歴史\n古い灯台。\n\n【話題】\n灯台",
        ),
        Message::user("次の発言"),
    ];
    let full = "港町。\n\n■ 灯台／歴史\n古い灯台。";
    let l = super::lighter_systems(&m, full, &["港町。".to_string()]);
    assert_eq!(
        l,
        vec!["【キャラクター設定】やな\n【世界設定】\n港町。\n\n【話題】\n灯台".to_string()]
    );
    // No system message, or a world it does not contain: no rungs (never a wrong swap).
    assert!(super::lighter_systems(&m[1..], full, &["港町。".into()]).is_empty());
    assert!(super::lighter_systems(&m, "別の世界", &["港町。".into()]).is_empty());
}

/// Every request for every bundled persona, told the sample vault's world, at the start, mid
/// conversation and with guidance and an owner instruction.
fn every_request() -> Vec<(String, Prompt)> {
    let (rules, cfg) = setup();
    let work = crate::vault::load::sample();
    let ids: Vec<&str> = rules.data.characters.keys().map(String::as_str).collect();
    let worlds = crate::vault::shared::worlds(&work, &cfg.world, &ids);
    let history = [
        line("yana", "わ！あの灯台、すっごい古そう！"),
        line("ayu", "明治時代に建てられたそうですよ。"),
    ];
    let guidance = ["前の発言はやや長めでした。短くしてください。".to_string()];
    let mut out = Vec::new();
    for id in &ids {
        let me = rules.character(id).unwrap();
        let partner = rules.character(&me.partner).unwrap();
        let world = worlds.get(*id).map_or(cfg.world.as_str(), String::as_str);
        for (h, g, o) in [
            (&history[..0], &guidance[..0], None),
            (&history[..], &guidance[..], Some("灯台の話を続けて")),
        ] {
            let p = build(&PromptInput {
                speaker: me,
                partner,
                topic: "港の灯台",
                cfg: &cfg,
                world,
                history: h,
                guidance: g,
                owner: o,
            });
            out.push((id.to_string(), p));
        }
    }
    out
}

/// Issue 26 §5: あゆ's prompt listed 「あゆはやなを「姉様」と呼びます。」 three times.
#[test]
fn no_line_repeats_in_any_request() {
    for (id, p) in every_request() {
        let mut seen = std::collections::HashSet::new();
        for m in &p.messages {
            for l in m.content.lines().map(str::trim).filter(|l| !l.is_empty()) {
                assert!(seen.insert(l.to_string()), "{id}: repeated line {l:?}");
            }
        }
    }
}

/// Issue 26 §5: what is listed under してはいけないこと is a prohibition (a negative predicate),
/// never a positive statement such as 「あゆはやなを「姉様」と呼びます。」.
#[test]
fn prohibitions_are_prohibitions() {
    for (id, p) in every_request() {
        let sys = &p.messages[0].content;
        let list = sys
            .split("してはいけないこと:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{id}: no prohibitions"));
        let bullets: Vec<&str> = list.lines().take_while(|l| l.starts_with("- ")).collect();
        assert!(!bullets.is_empty(), "{id}");
        for b in bullets {
            // The first sentence is the prohibition; advice may follow it (…しない。発見は姉に
            // 任せ…), a reason may close it in brackets: 「X」と言わない（…）。
            let body = first_sentence(b.trim_start_matches("- "));
            let head = match body.strip_suffix('）').and_then(|s| s.rfind('（')) {
                Some(i) => &body[..i],
                None => body,
            };
            assert!(
                head.ends_with("ない") || head.ends_with("ません"),
                "{id}: not a prohibition: {b}"
            );
        }
    }
}

/// Up to the first 。 outside brackets, without it.
fn first_sentence(s: &str) -> &str {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '「' | '（' | '『' => depth += 1,
            '」' | '）' | '』' => depth -= 1,
            '。' if depth == 0 => return &s[..i],
            _ => {}
        }
    }
    s
}

/// Each forbidden word is still named in its speaker's prompt, with its reason once.
#[test]
fn forbidden_words_are_named_once_with_their_reason() {
    let (rules, _) = setup();
    for (id, p) in every_request() {
        let c = rules.character(&id).unwrap();
        let sys = &p.messages[0].content;
        for w in &c.forbidden_words {
            assert!(sys.contains(&format!("「{}」", w.word)), "{id}: {}", w.word);
            assert_eq!(
                sys.matches(w.reason.trim_end_matches('。')).count(),
                1,
                "{id}"
            );
        }
    }
}

/// A guidance line given more than once (the same reason from two rules, a retry that repeats
/// the last turn's WARN) is sent once: generated orders and repeat counts, seeded.
#[test]
fn no_guidance_line_is_repeated_within_a_request() {
    let (rules, cfg) = setup();
    let pool = [
        "前の発言はやや長めでした。短くしてください。",
        "話題から離れています。",
        "相手の質問に答えてください。",
        "同じ言い回しを避けてください。",
    ];
    let mut rng = fastrand::Rng::with_seed(39);
    for _ in 0..200 {
        let g: Vec<String> = (0..rng.usize(1..10))
            .map(|_| pool[rng.usize(..pool.len())].to_string())
            .collect();
        let p = build_for(&rules, &cfg, "ayu", &[], &g, None);
        let last = &p.messages.last().unwrap().content;
        let distinct: std::collections::BTreeSet<&String> = g.iter().collect();
        for line in &distinct {
            assert_eq!(last.matches(&format!("- {line}\n")).count(), 1, "{g:?}");
        }
        assert_eq!(crate::duo::fitting::repeated(&g), g.len() - distinct.len());
    }
}
