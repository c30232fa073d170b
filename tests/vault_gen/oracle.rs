//! The oracle: from the generated structure and the rules as written (seed 004 + issue 16),
//! independent of the code under test, which tokens each reader must never be shown (level 0
//! places, level-1 text, comments, a foreshadowing's title below level 2) and which she must
//! be shown (level-3 section text).

use super::{Ent, Sec, Secret};

type PerReader = [Vec<String>; 3];

pub(crate) fn levels(
    ents: &[(Ent, Vec<usize>)],
    secrets: &[Secret],
    comments: &[String],
    work_default: u8,
) -> (PerReader, PerReader) {
    let mut hidden: [Vec<String>; 3] = Default::default();
    let mut shown: [Vec<String>; 3] = Default::default();
    for ri in 0..3 {
        for (e, _) in ents {
            let ent_level = |sec: Option<&Sec>| -> u8 {
                if let Some(v) = &e.yaml_vis {
                    return v.for_reader(ri);
                }
                if let Some(f) = sec.and_then(|s| s.front) {
                    return f;
                }
                e.front_default.unwrap_or(work_default)
            };
            let mut eff: Vec<u8> = Vec::new();
            for s in &e.secs {
                let own = match &s.yaml {
                    Some(y) => Some(y.for_reader(ri)),
                    None => s.markers.iter().copied().min(),
                };
                let parent = s.parent.map(|p| eff[p]);
                let mut l = match (own, parent) {
                    (Some(o), Some(p)) => o.min(p),
                    (Some(o), None) => o,
                    (None, Some(p)) => p,
                    (None, None) => ent_level(Some(s)),
                };
                if let Some(c) = e.cap {
                    l = l.min(c);
                }
                eff.push(l);
            }
            if e.ty == "foreshadowing" {
                let mut lf = ent_level(None);
                if let Some(c) = e.cap {
                    lf = lf.min(c);
                }
                if lf <= 1 {
                    hidden[ri].push(e.title_token.clone());
                }
                for (s, l) in e.secs.iter().zip(&eff) {
                    if lf <= 1 || *l < lf {
                        hidden[ri].push(s.body_token.clone());
                    }
                    if lf == 0 || *l < lf {
                        hidden[ri].push(s.name_token.clone());
                    }
                }
            } else {
                for (s, l) in e.secs.iter().zip(&eff) {
                    match l {
                        0 => {
                            hidden[ri].push(s.body_token.clone());
                            hidden[ri].push(s.name_token.clone());
                        }
                        1 => hidden[ri].push(s.body_token.clone()),
                        3 => shown[ri].push(s.body_token.clone()),
                        _ => {}
                    }
                }
            }
        }
        for s in secrets {
            let l = s
                .readers
                .iter()
                .find(|(r, _)| *r == ri && ri > 0)
                .map(|(_, l)| *l)
                .or(s.level)
                .unwrap_or(work_default);
            if l <= 1 {
                hidden[ri].push(s.token.clone());
            }
        }
        hidden[ri].extend(comments.iter().cloned());
    }
    (hidden, shown)
}
