//! `SharedCache`: the analysis cache for judging on several threads at once — sharded, and
//! bounded so memory stays constant on an input of any size (two generations per shard: a full
//! young generation becomes the old one, and what was old is dropped).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex};

use super::Analysis;

/// Keys are already hashes: the map uses them as they are.
type Bucket = HashMap<u64, Vec<Arc<Analysis>>, BuildHasherDefault<KeyHasher>>;

#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) | u64::from(*b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A fast, non-cryptographic hash of the text (a multiply–rotate over 8-byte words); equal
/// hashes are always confirmed by comparing the texts.
fn text_hash(text: &str) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = text.len() as u64;
    let mut words = text.as_bytes().chunks_exact(8);
    for w in &mut words {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(b)).wrapping_mul(K);
    }
    for b in words.remainder() {
        h = (h.rotate_left(5) ^ u64::from(*b)).wrapping_mul(K);
    }
    // Mix the high bits down: the shard is chosen from the low ones.
    h ^ (h >> 29)
}

#[derive(Default)]
struct Shard {
    young: Bucket,
    old: Bucket,
    young_len: usize,
}

/// A thread-safe, size-bounded map from text to its `Analysis`.
pub struct SharedCache {
    shards: Vec<Mutex<Shard>>,
    /// Entries a shard's young generation holds before it ages.
    per_shard: usize,
}

const SHARDS: usize = 16;

impl SharedCache {
    /// A cache holding at most about `2 × capacity` analyses (`capacity` recent ones at least).
    pub fn new(capacity: usize) -> SharedCache {
        SharedCache {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            per_shard: capacity.div_ceil(SHARDS).max(1),
        }
    }

    /// The analysis of `text`, computed outside the lock on a miss.
    pub fn get_or_analyze(&self, text: &str) -> Arc<Analysis> {
        let key = text_hash(text);
        let shard = &self.shards[(key as usize) % SHARDS];
        if let Some(a) = self.lookup(shard, key, text) {
            return a;
        }
        let a = Arc::new(Analysis::new(text));
        let mut s = shard.lock().unwrap_or_else(|p| p.into_inner());
        // Another thread may have analysed the same text meanwhile: keep the first one.
        if let Some(found) = find(&s.young, key, text) {
            return found;
        }
        self.insert(&mut s, key, Arc::clone(&a));
        a
    }

    fn lookup(&self, shard: &Mutex<Shard>, key: u64, text: &str) -> Option<Arc<Analysis>> {
        let mut s = shard.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(a) = find(&s.young, key, text) {
            return Some(a);
        }
        // Promote an old entry so text in use survives the next ageing.
        let a = find(&s.old, key, text)?;
        self.insert(&mut s, key, Arc::clone(&a));
        Some(a)
    }

    fn insert(&self, s: &mut Shard, key: u64, a: Arc<Analysis>) {
        if s.young_len >= self.per_shard {
            s.old = std::mem::take(&mut s.young);
            s.young_len = 0;
        }
        s.young.entry(key).or_default().push(a);
        s.young_len += 1;
    }

    /// Analyses held now (both generations; an entry promoted from old counts twice).
    pub fn len(&self) -> usize {
        self.shards
            .iter()
            .map(|s| {
                let s = s.lock().unwrap_or_else(|p| p.into_inner());
                s.young_len + s.old.values().map(Vec::len).sum::<usize>()
            })
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn find(b: &Bucket, key: u64, text: &str) -> Option<Arc<Analysis>> {
    b.get(&key)?
        .iter()
        .find(|a| a.original == text)
        .map(Arc::clone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_same_analysis() {
        let c = SharedCache::new(100);
        let a = c.get_or_analyze("そっか。");
        let b = c.get_or_analyze("そっか。");
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.original, "そっか。");
    }

    #[test]
    fn stays_bounded_and_correct_on_many_texts() {
        let cap = 64;
        let c = SharedCache::new(cap);
        for i in 0..5_000 {
            let t = format!("{i}番目の行です。");
            assert_eq!(c.get_or_analyze(&t).original, t);
            // Each shard: young ≤ per_shard, old ≤ per_shard.
            assert!(c.len() <= 2 * cap.div_ceil(SHARDS) * SHARDS, "{}", c.len());
        }
        // A recent text is still served from the cache.
        let last = "4999番目の行です。";
        let a = c.get_or_analyze(last);
        assert!(Arc::ptr_eq(&a, &c.get_or_analyze(last)));
    }

    #[test]
    fn threads_share_entries() {
        let c = SharedCache::new(1_000);
        let texts: Vec<String> = (0..200).map(|i| format!("あ{i}。")).collect();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for t in &texts {
                        assert_eq!(&c.get_or_analyze(t).original, t);
                    }
                });
            }
        });
        assert_eq!(c.len(), texts.len());
    }
}
