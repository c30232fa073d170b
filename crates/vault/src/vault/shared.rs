//! The vault a live run reads, shared between the writer's pane (which replaces it after a
//! save) and the run driver (which picks the new version up before its next prompt).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use super::leak::Reviewer;

use super::load::Work;

pub struct SharedVault {
    work: RwLock<Arc<Work>>,
    /// Embeddings for the semantic check (off until a command sets one from llm.toml).
    embedder: RwLock<super::semantic::Shared>,
    /// The model judge of the leak review (off until a command sets one from llm.toml).
    judge: RwLock<Arc<super::judge::Judge>>,
    generation: AtomicU64,
    /// Compiled leak reviewers per reader, for the current generation.
    reviewers: Mutex<(u64, BTreeMap<String, Arc<Reviewer>>)>,
}

impl SharedVault {
    pub fn new(work: Work) -> Arc<SharedVault> {
        Arc::new(SharedVault {
            work: RwLock::new(Arc::new(work)),
            embedder: RwLock::new(Arc::new(super::semantic::Embedder::off(
                "no embed_model in llm.toml",
            ))),
            judge: RwLock::new(Arc::new(super::judge::Judge::off(
                "no chat model configured",
            ))),
            generation: AtomicU64::new(1),
            reviewers: Mutex::new((0, BTreeMap::new())),
        })
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The current work and its generation.
    pub fn get(&self) -> (u64, Arc<Work>) {
        let w = match self.work.read() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        };
        (self.generation(), w)
    }

    /// The leak reviewer for what `reader` writes, compiled once per saved version.
    pub fn reviewer(&self, reader: &str) -> Arc<Reviewer> {
        let (generation, work) = self.get();
        let mut g = match self.reviewers.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if g.0 != generation {
            *g = (generation, BTreeMap::new());
        }
        g.1.entry(reader.to_string())
            .or_insert_with(|| Arc::new(work.reviewer(Some(reader))))
            .clone()
    }

    /// Sets where the semantic check gets its embeddings.
    pub fn set_embedder(&self, e: super::semantic::Embedder) {
        match self.embedder.write() {
            Ok(mut g) => *g = Arc::new(e),
            Err(p) => *p.into_inner() = Arc::new(e),
        }
    }

    /// Sets the chat model that judges lines per secret.
    pub fn set_judge(&self, j: super::judge::Judge) {
        match self.judge.write() {
            Ok(mut g) => *g = Arc::new(j),
            Err(p) => *p.into_inner() = Arc::new(j),
        }
    }

    pub fn judge(&self) -> Arc<super::judge::Judge> {
        match self.judge.read() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    pub fn embedder(&self) -> Arc<super::semantic::Embedder> {
        match self.embedder.read() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }

    /// Publishes an edited work; runs use it from their next prompt.
    pub fn replace(&self, work: Work) {
        let mut g = match self.work.write() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        *g = Arc::new(work);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

/// Lighter versions of each speaker's world section, in the budget's drop order: the vault
/// levels of `drop_levels` left out one more at a time (rungs equal to the one before are
/// skipped). The token budget falls back on them when history alone cannot make room.
pub fn world_ladders(
    work: &Work,
    scene: &str,
    speakers: &[&str],
    drop_levels: &[u8],
) -> BTreeMap<String, Vec<String>> {
    speakers
        .iter()
        .map(|s| {
            let mut rungs: Vec<String> = Vec::new();
            let mut last = join_world(scene, &work.context(Some(s)).prompt);
            for i in 1..=drop_levels.len() {
                let w = join_world(scene, &work.prompt_without(Some(s), &drop_levels[..i]));
                if w != last {
                    rungs.push(w.clone());
                    last = w;
                }
            }
            (s.to_string(), rungs)
        })
        .collect()
}

fn join_world(scene: &str, p: &str) -> String {
    if p.is_empty() {
        scene.to_string()
    } else {
        format!("{scene}\n\n{p}")
    }
}

/// The world section each speaker is told: the scene, then her filtered context.
pub fn worlds(work: &Work, scene: &str, speakers: &[&str]) -> BTreeMap<String, String> {
    speakers
        .iter()
        .map(|s| {
            let p = work.context(Some(s)).prompt;
            let text = if p.is_empty() {
                scene.to_string()
            } else {
                format!("{scene}\n\n{p}")
            };
            (s.to_string(), text)
        })
        .collect()
}

#[cfg(test)]
#[path = "shared_tests.rs"]
mod tests;
