//! Which vault a run was made under: its folder, its work and a hash of its files, stored with
//! the run (`options.vault`) so `compare` replays under the same vault and says so loudly when
//! the files changed since. The bundled sample is stamped as such (no folder).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::load::Work;

/// The stamp stored with a run: `{"dir", "work", "hash"}` (dir null for the bundled sample).
pub fn stamp(work: &Work) -> Value {
    if !work.on_disk {
        return json!({"dir": null, "work": work.name, "hash": "bundled-sample"});
    }
    json!({
        "dir": work.root.display().to_string(),
        "work": work.name,
        "hash": hash_dir(&work.root),
    })
}

/// Hex SHA-256 over every file under `root` (relative path and bytes, in path order); an
/// unreadable file counts by its name and the word "unreadable", so a change is still seen.
pub fn hash_dir(root: &Path) -> String {
    let mut files = Vec::new();
    collect(root, &mut files);
    files.sort();
    let mut h = Sha256::new();
    for f in files {
        let rel = f.strip_prefix(root).unwrap_or(&f);
        h.update(rel.to_string_lossy().as_bytes());
        h.update([0]);
        match std::fs::read(&f) {
            Ok(b) => h.update(&b),
            Err(_) => h.update(b"unreadable"),
        }
        h.update([0]);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The folder and work a stored run's vault stamp names (None: none stored, or the sample).
pub fn stored_source(options: &Value) -> Option<(PathBuf, Option<String>)> {
    let v = options.get("vault")?;
    let dir = v.get("dir")?.as_str()?;
    let work = v.get("work").and_then(Value::as_str).map(str::to_string);
    Some((PathBuf::from(dir), work))
}

/// A warning when the vault's files changed since the run was made (None when they did not,
/// or when the run stored no hash).
pub fn changed(options: &Value, now: &Work) -> Option<String> {
    let then = options.get("vault")?.get("hash")?.as_str()?;
    let current = stamp(now);
    let now_hash = current["hash"].as_str().unwrap_or("");
    (then != now_hash).then(|| {
        format!(
            "the vault changed since the run was made ({} → {}): leaks are judged against today's files",
            &then[..then.len().min(12)],
            &now_hash[..now_hash.len().min(12)]
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_follows_the_files() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("entities")).unwrap();
        std::fs::write(d.path().join("visibility.yaml"), "a: 1\n").unwrap();
        std::fs::write(d.path().join("entities/x.md"), "秘密").unwrap();
        let h1 = hash_dir(d.path());
        assert_eq!(h1, hash_dir(d.path()));
        std::fs::write(d.path().join("entities/x.md"), "秘密！").unwrap();
        let h2 = hash_dir(d.path());
        assert_ne!(h1, h2);
        std::fs::rename(
            d.path().join("entities/x.md"),
            d.path().join("entities/y.md"),
        )
        .unwrap();
        assert_ne!(h2, hash_dir(d.path()));
    }

    #[test]
    fn a_stored_stamp_names_its_folder() {
        let o = json!({"vault": {"dir": "/v/w", "work": "w", "hash": "ab"}});
        assert_eq!(
            stored_source(&o),
            Some((PathBuf::from("/v/w"), Some("w".into())))
        );
        assert_eq!(stored_source(&json!({})), None);
        let sample = json!({"vault": {"dir": null, "work": "sisters", "hash": "bundled-sample"}});
        assert_eq!(stored_source(&sample), None);
    }
}
