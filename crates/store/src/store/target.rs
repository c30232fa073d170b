//! What `--db` / `KAKEAI_DB` names: an SQLite file, or a database URL. A URL is never a file
//! name: `postgres://…` / `postgresql://…` is recognised (libpq's form, the password shown only
//! as `***`), any other `scheme://…` is refused, and neither ever becomes a directory tree in
//! the current directory.

use std::path::{Path, PathBuf};

/// Where the store lives.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    File(PathBuf),
    Postgres(PgUrl),
}

/// A PostgreSQL URL as typed, and as it may be printed.
#[derive(Debug, Clone, PartialEq)]
pub struct PgUrl {
    raw: String,
    shown: String,
}

impl PgUrl {
    /// The URL with its password replaced by `***` (safe for logs and errors).
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The URL as typed (with its password): only for the driver.
    pub fn raw(&self) -> &str {
        &self.raw
    }
}

/// Reads `--db`'s value.
pub fn classify(p: &Path) -> Result<Target, String> {
    let Some(s) = p.to_str() else {
        return Ok(Target::File(p.to_path_buf()));
    };
    let Some((scheme, _)) = s.split_once("://") else {
        return Ok(Target::File(p.to_path_buf()));
    };
    let is_scheme = !scheme.is_empty()
        && scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !is_scheme {
        return Ok(Target::File(p.to_path_buf()));
    }
    let lower = scheme.to_ascii_lowercase();
    if lower != "postgres" && lower != "postgresql" {
        return Err(format!(
            "--db {}: a `{scheme}://` URL is not a store; give an SQLite file path or a \
             postgresql://user@host/dbname URL",
            mask(s)
        ));
    }
    let shown = mask(s);
    url::Url::parse(s).map_err(|e| {
        format!(
            "--db {shown}: not a valid PostgreSQL URL ({e}); if the password holds @ : / ? # or %, \
             percent-encode them (@ is %40, : is %3A, / is %2F), or leave the password out of the \
             URL and use PGPASSWORD or a pgpass file"
        )
    })?;
    Ok(Target::Postgres(PgUrl {
        raw: s.to_string(),
        shown,
    }))
}

/// `s` with any password (`user:secret@`, `password=secret`) replaced by `***`. The user
/// information ends at the **last** `@` (an unencoded password may hold `@`, `/`, `?` or `#`, so
/// the URL's own rules cannot say where it ends): hiding too much is safe, showing a piece of
/// a password is not.
pub fn mask(s: &str) -> String {
    let mut out = s.to_string();
    if let Some((head, rest)) = s.split_once("://")
        && let Some(at) = rest.rfind('@')
    {
        let userinfo = &rest[..at];
        if let Some((user, _)) = userinfo.split_once(':') {
            out = format!("{head}://{user}:***@{}", &rest[at + 1..]);
        } else if userinfo.contains(['/', '?', '#']) {
            // No colon, but not a plain user name either: nothing before the @ is shown.
            out = format!("{head}://***@{}", &rest[at + 1..]);
        }
    }
    mask_param(&out)
}

fn mask_param(s: &str) -> String {
    let Some(q) = s.find('?') else {
        return s.to_string();
    };
    let (base, query) = s.split_at(q + 1);
    let parts: Vec<String> = query
        .split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
            _ => kv.to_string(),
        })
        .collect();
    format!("{base}{}", parts.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_stay_files() {
        for f in [
            "kakeai.db",
            "/var/lib/kakeai/kakeai.db",
            "./data/k.db",
            "C:\\data\\k.db",
            "weird:name.db",
            "dir/with://inside",
            "1abc://x",
        ] {
            assert_eq!(
                classify(Path::new(f)).unwrap(),
                Target::File(f.into()),
                "{f}"
            );
        }
    }

    #[test]
    fn postgres_urls_are_recognised_and_passwords_never_shown() {
        let cases = [
            (
                "postgresql://kakeai@localhost/kakeai?host=/run/postgresql&port=5433",
                "postgresql://kakeai@localhost/kakeai?host=/run/postgresql&port=5433",
            ),
            (
                "postgres://taro:s3cr3t@db.example:5432/kakeai?sslmode=require",
                "postgres://taro:***@db.example:5432/kakeai?sslmode=require",
            ),
            (
                "postgresql://taro@db/kakeai?password=s3cr3t&sslmode=require",
                "postgresql://taro@db/kakeai?password=***&sslmode=require",
            ),
            ("POSTGRESQL://u:p@h/d", "POSTGRESQL://u:***@h/d"),
        ];
        for (url, shown) in cases {
            match classify(Path::new(url)).unwrap() {
                Target::Postgres(u) => {
                    assert_eq!(u.shown(), shown);
                    assert!(!u.shown().contains("s3cr3t"));
                    assert_eq!(u.raw(), url);
                }
                t => panic!("{url}: {t:?}"),
            }
        }
    }

    #[test]
    fn no_piece_of_an_unencoded_password_is_ever_shown() {
        // Generated variants: a password with every character that breaks a URL, in turn.
        let secret_parts = ["p", "ss", "w", "rd", "x9"];
        for sep in ["@", ":", "/", "?", "#", "%", "@:/"] {
            let password = secret_parts.join(sep);
            for url in [
                format!("postgresql://odd:{password}@db.example:5432/kakeai"),
                format!("postgres://odd:{password}@localhost/k?sslmode=require"),
            ] {
                let shown = match classify(Path::new(&url)) {
                    Ok(Target::Postgres(u)) => u.shown().to_string(),
                    Ok(t) => panic!("{url}: {t:?}"),
                    Err(e) => {
                        assert!(e.contains("percent-encode"), "{e}");
                        e
                    }
                };
                for part in secret_parts {
                    let leaked = shown
                        .split(|c: char| !c.is_ascii_alphanumeric())
                        .any(|w| w == part);
                    assert!(!leaked, "{url} shows {part:?}: {shown}");
                }
            }
        }
    }

    #[test]
    fn other_urls_are_refused_with_the_password_hidden() {
        for u in [
            "mysql://root:hunter2@db/k",
            "sqlite://k.db",
            "https://example.com/k.db",
        ] {
            let e = classify(Path::new(u)).unwrap_err();
            assert!(e.contains("is not a store"), "{e}");
            assert!(!e.contains("hunter2"), "{e}");
        }
    }
}
