//! Random vaults for the fail-closed property tests: entities with nested headings, markers in
//! every accepted spelling and place, comments, visibility.yaml entries (some spelled in
//! full-width), per-reader overrides, secrets and foreshadowing. Every text place carries a
//! unique ASCII token; an oracle written from the rules (seed 004 + issue 16), not from the
//! code, says which tokens a reader must never be shown. A mutation makes a variant malformed.

#![allow(dead_code)]

mod oracle;

/// Readers as the vault sees them: the common levels, then each sister.
pub const READERS: [Option<&str>; 3] = [None, Some("yana"), Some("ayu")];

pub use crate::common::seeded::Gen as Lcg;

/// Accepted spellings; `{}` is the level.
const SPELLINGS: [&str; 9] = [
    "<!-- ai_visibility: {} -->",
    "<!-- ai_visibility：{} -->",
    "<!-- AI_VISIBILITY: {} -->",
    "<!--   ai_visibility  :  {}   -->",
    "<!--ai_visibility:{}-->",
    "<!-- Ai-Visibility = {} -->",
    "<!-- ａｉ＿ｖｉｓｉｂｉｌｉｔｙ：{} -->",
    "<!-- visibility: \"{}\" -->",
    "<!--\nai_visibility: {}\n-->",
];

/// Malformed markers a writer could type meaning "hide this".
const BAD_MARKERS: [&str; 7] = [
    "<!-- ai_visibility: 5 -->",
    "<!-- ai_visiblity: 0 -->",
    "<!-- ai_visibility 0 -->",
    "<!-- AI_VISIBILITY: 秘匿 -->",
    "ai_visibility: 0",
    "<!- ai_visibility: 0 -->",
    "<!-- ai_visibility: 0",
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mutation {
    None,
    BadMarker,
    UnknownReader,
    UnmatchedSection,
    UnknownEntityType,
}

#[derive(Clone, Default)]
pub(crate) struct Spec {
    pub(crate) level: u8,
    /// (reader index 1 = yana, 2 = ayu, level)
    pub(crate) readers: Vec<(usize, u8)>,
}

impl Spec {
    pub(crate) fn for_reader(&self, ri: usize) -> u8 {
        self.readers
            .iter()
            .find(|(r, _)| *r == ri && ri > 0)
            .map_or(self.level, |(_, l)| *l)
    }
    fn yaml(&self) -> String {
        if self.readers.is_empty() {
            return self.level.to_string();
        }
        let rs: Vec<String> = self
            .readers
            .iter()
            .map(|(r, l)| format!("{}: {l}", ["", "yana", "ayu"][*r]))
            .collect();
        format!("{{level: {}, readers: {{{}}}}}", self.level, rs.join(", "))
    }
}

pub(crate) struct Sec {
    pub(crate) name: String,
    pub(crate) name_token: String,
    pub(crate) body_token: String,
    pub(crate) parent: Option<usize>,
    pub(crate) markers: Vec<u8>,
    pub(crate) yaml: Option<Spec>,
    pub(crate) front: Option<u8>,
}

pub(crate) struct Ent {
    pub(crate) ty: &'static str,
    pub(crate) folder: &'static str,
    pub(crate) name: String,
    pub(crate) title_token: String,
    pub(crate) front_default: Option<u8>,
    pub(crate) cap: Option<u8>,
    pub(crate) yaml_vis: Option<Spec>,
    pub(crate) secs: Vec<Sec>,
}

pub(crate) struct Secret {
    pub(crate) token: String,
    pub(crate) level: Option<u8>,
    pub(crate) readers: Vec<(usize, u8)>,
}

/// A generated vault: its files, and per reader the tokens she must never see and those she
/// must see (level 3 section text).
pub struct Vault {
    pub files: Vec<(String, String)>,
    pub hidden: [Vec<String>; 3],
    pub shown: [Vec<String>; 3],
    pub mutation: Mutation,
    /// The file a malformed variant must name in its error.
    pub bad_file: Option<String>,
}

impl Vault {
    /// Tokens hidden from both sisters (what a live run must never send).
    pub fn hidden_from_both(&self) -> Vec<String> {
        self.hidden[1]
            .iter()
            .filter(|t| self.hidden[2].contains(t))
            .cloned()
            .collect()
    }
}

pub fn generate(seed: u64, mutation: Mutation) -> Vault {
    let mut r = Lcg::new(seed.wrapping_mul(2654435761).wrapping_add(17));
    let mut id = 0;
    let mut tok = |kind: &str| {
        id += 1;
        format!("{kind}{seed}q{id}Z")
    };
    let work_default = r.next(4) as u8;
    let mut comments = Vec::new();
    let mut ents = Vec::new();
    let n_chars = 1 + r.next(3);
    let n_world = r.next(3);
    let n_fs = r.next(3);
    for (ty, folder, n) in [
        ("characters", "characters", n_chars),
        ("world_settings", "world_settings", n_world),
        ("foreshadowing", "_foreshadowing", n_fs),
    ] {
        for k in 0..n {
            let name = match ty {
                "characters" => format!("人物{k}"),
                "world_settings" => format!("場所{k}"),
                _ => format!("FS-{k}"),
            };
            let mut secs: Vec<Sec> = Vec::new();
            let mut stack: Vec<(usize, usize)> = Vec::new(); // (depth, index)
            let n_secs = 1 + r.next(5) as usize;
            let mut depths = Vec::new();
            for s in 0..n_secs {
                let depth = if s == 0 { 2 } else { 2 + r.next(3) as usize };
                while stack.last().is_some_and(|(d, _)| *d >= depth) {
                    stack.pop();
                }
                let parent = stack.last().map(|(_, i)| *i);
                let name_token = tok("N");
                let markers = (0..r.next(3)).map(|_| r.next(4) as u8).collect();
                let yaml = r.chance(35).then(|| Spec {
                    level: r.next(4) as u8,
                    readers: overrides(&mut r, 30),
                });
                let front = (ty != "foreshadowing" && r.chance(15)).then(|| r.next(4) as u8);
                secs.push(Sec {
                    name: format!("節{s}({name_token})"),
                    name_token,
                    body_token: tok("B"),
                    parent,
                    markers,
                    yaml,
                    front,
                });
                stack.push((depth, s));
                depths.push(depth);
            }
            let yaml_vis = r
                .chance(if ty == "foreshadowing" { 70 } else { 20 })
                .then(|| Spec {
                    level: r.next(4) as u8,
                    readers: overrides(&mut r, 30),
                });
            let ent = Ent {
                ty,
                folder,
                name,
                title_token: tok("T"),
                front_default: r.chance(60).then(|| r.next(4) as u8),
                cap: r.chance(10).then(|| r.next(4) as u8),
                yaml_vis,
                secs,
            };
            ents.push((ent, depths));
        }
    }
    let mut secrets = Vec::new();
    for _ in 0..r.next(3) {
        secrets.push(Secret {
            token: tok("S"),
            level: r.chance(80).then(|| r.next(4) as u8),
            readers: overrides(&mut r, 40),
        });
    }

    // Files.
    let mut files = Vec::new();
    let mut bad_file = None;
    let bad_at = (mutation == Mutation::BadMarker).then(|| r.next(ents.len() as u64) as usize);
    for (ei, (e, depths)) in ents.iter().enumerate() {
        let mut md = if e.ty == "foreshadowing" {
            // A foreshadowing's title is content: it can be a keyword itself.
            format!("---\nname: 題{}\n", e.title_token)
        } else {
            format!("---\nname: {}\n", e.name)
        };
        if e.ty == "foreshadowing" {
            md.push_str(&format!(
                "status: planted\nforbidden_keywords: [{}]\n",
                e.title_token
            ));
        }
        let fronts: Vec<(&Sec, u8)> = e
            .secs
            .iter()
            .filter_map(|s| s.front.map(|f| (s, f)))
            .collect();
        if e.front_default.is_some() || !fronts.is_empty() {
            md.push_str("ai_visibility:\n");
            if let Some(d) = e.front_default {
                md.push_str(&format!("  default: {d}\n"));
            }
            for (s, f) in fronts {
                md.push_str(&format!("  {}: {f}\n", s.name));
            }
        }
        md.push_str("---\n");
        let title = match e.cap {
            Some(c) => format!("# 題{} {}\n", e.title_token, spell(&mut r, c, true)),
            None => format!("# 題{}\n", e.title_token),
        };
        if e.cap.is_some() || r.chance(50) {
            md.push_str(&title);
        }
        for (si, s) in e.secs.iter().enumerate() {
            let hashes = "#".repeat(depths[si]);
            let mut on_heading = String::new();
            let mut after = Vec::new();
            for (mi, m) in s.markers.iter().enumerate() {
                if mi == 0 && r.chance(30) {
                    on_heading = format!(" {}", spell(&mut r, *m, true));
                } else {
                    after.push(spell(&mut r, *m, false));
                }
            }
            md.push_str(&format!("{hashes} {}{on_heading}\n", s.name));
            let c = tok("C");
            comments.push(c.clone());
            let mut body = vec![format!("本文{}です。<!-- 作者メモ {c} -->", s.body_token)];
            for m in after {
                // Anywhere before the section's text: a marker with no text after it in its
                // section is a writer's mistake the vault refuses (it was meant for the heading
                // below), so a valid vault never has one.
                let at = r.next(body.len() as u64) as usize;
                body.insert(at, m);
            }
            if bad_at == Some(ei) && si == 0 {
                body.insert(0, r.pick(&BAD_MARKERS).to_string());
                bad_file = Some(format!("{}/{}.md", e.folder, e.name));
            }
            md.push_str(&body.join("\n"));
            md.push_str("\n\n");
        }
        files.push((format!("{}/{}.md", e.folder, e.name), md));
    }

    // visibility.yaml
    let mut vis = format!("default_visibility: {work_default}\nentities:\n");
    for ty in ["characters", "world_settings", "foreshadowing"] {
        let mine: Vec<&Ent> = ents.iter().map(|(e, _)| e).filter(|e| e.ty == ty).collect();
        let has_secrets = ty == "characters" && !secrets.is_empty();
        let listed: Vec<&&Ent> = mine
            .iter()
            .filter(|e| {
                e.yaml_vis.is_some()
                    || e.secs.iter().any(|s| s.yaml.is_some())
                    || (has_secrets && e.name == "人物0")
            })
            .collect();
        if listed.is_empty() {
            continue;
        }
        let ty_key = if mutation == Mutation::UnknownEntityType && ty == "characters" {
            bad_file = Some("_ai_control/visibility.yaml".into());
            "character"
        } else {
            ty
        };
        vis.push_str(&format!("  {ty_key}:\n"));
        for e in listed {
            vis.push_str(&format!("    {}:\n", e.name));
            if let Some(v) = &e.yaml_vis {
                vis.push_str(&format!("      visibility: {}\n", v.yaml()));
            }
            let entries: Vec<&Sec> = e.secs.iter().filter(|s| s.yaml.is_some()).collect();
            if !entries.is_empty() {
                vis.push_str("      sections:\n");
                for s in entries {
                    // Half the entries are written with full-width parentheses.
                    let key = if r.chance(50) {
                        s.name.replace('(', "（").replace(')', "）")
                    } else {
                        s.name.clone()
                    };
                    let mut spec = s.yaml.clone().unwrap_or_default().yaml();
                    if mutation == Mutation::UnknownReader && bad_file.is_none() {
                        let bad = *r.pick(&["あゆ", "ayuu", "Yana", "やな"]);
                        spec = format!("{{level: 3, readers: {{{bad}: 3}}}}");
                        bad_file = Some("_ai_control/visibility.yaml".into());
                    }
                    vis.push_str(&format!("        {key}: {spec}\n"));
                }
                if mutation == Mutation::UnmatchedSection && bad_file.is_none() {
                    vis.push_str("        隠し設定(どこにもない): 0\n");
                    bad_file = Some("_ai_control/visibility.yaml".into());
                }
            }
            if has_secrets && e.name == "人物0" {
                vis.push_str("      secrets:\n");
                for (i, s) in secrets.iter().enumerate() {
                    vis.push_str(&format!(
                        "        - id: SEC-{i}\n          content: 秘密{}の話\n",
                        s.token
                    ));
                    if let Some(l) = s.level {
                        vis.push_str(&format!("          visibility: {l}\n"));
                    }
                    if !s.readers.is_empty() {
                        let rs: Vec<String> = s
                            .readers
                            .iter()
                            .map(|(ri, l)| format!("{}: {l}", ["", "yana", "ayu"][*ri]))
                            .collect();
                        vis.push_str(&format!("          readers: {{{}}}\n", rs.join(", ")));
                    }
                }
            }
        }
    }
    files.push(("_ai_control/visibility.yaml".into(), vis));

    let (hidden, shown) = oracle::levels(&ents, &secrets, &comments, work_default);
    Vault {
        files,
        hidden,
        shown,
        mutation,
        bad_file: if mutation == Mutation::None {
            None
        } else {
            bad_file
        },
    }
}

/// Per-reader overrides, each sister with `percent` chance.
fn overrides(r: &mut Lcg, percent: u64) -> Vec<(usize, u8)> {
    let mut v = Vec::new();
    for ri in 1..=2 {
        if r.chance(percent) {
            v.push((ri, r.next(4) as u8));
        }
    }
    v
}

fn spell(r: &mut Lcg, level: u8, one_line: bool) -> String {
    let n = if one_line {
        SPELLINGS.len() - 1
    } else {
        SPELLINGS.len()
    };
    let s = SPELLINGS[r.next(n as u64) as usize];
    let digit = if r.chance(20) {
        char::from_u32(0xFF10 + level as u32)
            .unwrap_or('0')
            .to_string()
    } else {
        level.to_string()
    };
    s.replace("{}", &digit)
}
