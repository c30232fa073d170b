//! The run store on PostgreSQL (issue 24 §1): connecting with libpq's conventions (a
//! `postgres://` URL with user, password, host — a Unix-socket directory too — port, dbname,
//! `sslmode`; the password also from `PGPASSWORD` or a pgpass file), a pool, the schema's
//! migrations (the same versions as SQLite's, written for PostgreSQL in `migrations_pg/`),
//! `db status` and `db copy` in either direction.
//!
//! The CLI is synchronous: [`Pg`] owns a small runtime and blocks on it. Never call it from
//! inside another runtime.

pub mod copy;
pub mod migrate;
pub mod read;
pub mod status;

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::config::SslMode;

use super::target::PgUrl;

/// Why a PostgreSQL store could not be used; the URL is always shown without its password.
#[derive(Debug, thiserror::Error)]
pub enum PgError {
    #[error("{url}: cannot use this PostgreSQL database: {message}")]
    Connect { url: String, message: String },
    #[error("{url}: {}", with_fix(source))]
    Sql {
        url: String,
        source: tokio_postgres::Error,
    },
    #[error(
        "{url}: the database is at schema version {found}, but this kakeai only knows up to \
         {supported}; use a newer kakeai"
    )]
    TooNew {
        url: String,
        found: i64,
        supported: i64,
    },
    #[error("{0}")]
    Other(String),
}

/// A connected PostgreSQL store: a pool and the runtime the CLI blocks on.
pub struct Pg {
    rt: tokio::runtime::Runtime,
    pool: Pool,
    shown: String,
    /// The connect timeout: how long getting a connection may take.
    wait: Duration,
}

impl PgError {
    /// The exit code a command ends with: 3 when the database cannot be reached or used at
    /// all, 2 for everything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            PgError::Connect { .. } => 3,
            _ => 2,
        }
    }
}

impl Pg {
    /// Connects (and checks the connection once) without creating or migrating anything.
    pub fn connect(url: &PgUrl) -> Result<Pg, PgError> {
        let shown = url.shown().to_string();
        let fail = |message: String| PgError::Connect {
            url: shown.clone(),
            message,
        };
        let config = config(url.raw()).map_err(&fail)?;
        let wait = connect_timeout(&config);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(e.to_string()))?;
        let mgr_config = ManagerConfig {
            // A pooled client is checked (an empty query) before it is handed out, and a
            // broken one discarded: after a server restart the pool connects anew.
            recycling_method: RecyclingMethod::Verified,
        };
        let mgr = match config.get_ssl_mode() {
            SslMode::Disable => Manager::from_config(config, tokio_postgres::NoTls, mgr_config),
            _ => Manager::from_config(config, tls(), mgr_config),
        };
        let pool = Pool::builder(mgr)
            .max_size(4)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .build()
            .map_err(|e| fail(e.to_string()))?;
        let pg = Pg {
            rt,
            pool,
            shown,
            wait,
        };
        pg.block(async |c| c.simple_query("SELECT 1").await.map(|_| ()))
            .map_err(|e| match e {
                PgError::Sql { url, source } => PgError::Connect {
                    url,
                    message: with_fix(&source),
                },
                e => e,
            })?;
        Ok(pg)
    }

    /// The URL with its password as `***`.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Runs `f` with a pooled client, blocking until it is done.
    pub fn block<T>(
        &self,
        f: impl AsyncFnOnce(&mut deadpool_postgres::Client) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, PgError> {
        self.rt.block_on(async {
            let fail = |message| PgError::Connect {
                url: self.shown.clone(),
                message,
            };
            let mut client = match tokio::time::timeout(self.wait, self.pool.get()).await {
                Ok(r) => r.map_err(|e| fail(pool_error(e)))?,
                Err(_) => return Err(fail(no_answer(self.wait))),
            };
            f(&mut client).await.map_err(|e| self.sql(e))
        })
    }

    pub(crate) fn sql(&self, e: tokio_postgres::Error) -> PgError {
        PgError::Sql {
            url: self.shown.clone(),
            source: e,
        }
    }
}

/// An error and its causes, one line (the driver says "error connecting to server" and keeps
/// the reason — refused, no such host, timed out — in its source).
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        out.push_str(": ");
        out.push_str(&s.to_string());
        cur = s.source();
    }
    out
}

fn pool_error(e: deadpool_postgres::PoolError) -> String {
    match e {
        deadpool_postgres::PoolError::Backend(e) => with_fix(&e),
        e => e.to_string(),
    }
}

/// The driver's error and what to do about it, on one line.
pub(crate) fn with_fix(e: &tokio_postgres::Error) -> String {
    use tokio_postgres::error::SqlState;
    let Some(db) = e.as_db_error() else {
        let text = chain(e);
        let fix = if text.contains("timed out")
            || text.contains("refused")
            || text.contains("No such file")
        {
            " — is the server running, and are host and port right?"
        } else if text.contains("lookup address") {
            " — the host name does not resolve; check the URL's host"
        } else {
            ""
        };
        return format!("{text}{fix}");
    };
    let fix = match db.code() {
        c if *c == SqlState::INVALID_PASSWORD => {
            " — check the password (in the URL, PGPASSWORD or ~/.pgpass)"
        }
        c if *c == SqlState::INVALID_CATALOG_NAME => {
            " — create it first (createdb NAME, or CREATE DATABASE), then `kakeai db migrate`"
        }
        c if *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION => {
            " — the user does not exist or may not log in; check the URL's user"
        }
        _ => "",
    };
    format!("{}{fix}", db.message())
}

/// The driver's config from a libpq URL, with libpq's fallbacks the driver lacks: the
/// password from `PGPASSWORD` or the pgpass file (`PGPASSFILE`, else ~/.pgpass), the user from
/// `PGUSER` or the login name.
pub fn config(raw: &str) -> Result<tokio_postgres::Config, String> {
    let mut c: tokio_postgres::Config = libpq_overrides(raw)
        .parse()
        .map_err(|e: tokio_postgres::Error| format!("not a valid PostgreSQL URL ({e})"))?;
    limits(&mut c);
    if c.get_user().is_none() {
        let user = std::env::var("PGUSER")
            .ok()
            .or_else(|| std::env::var("USER").ok())
            .unwrap_or_else(|| "postgres".into());
        c.user(&user);
    }
    if c.get_password().is_none() {
        if let Ok(p) = std::env::var("PGPASSWORD") {
            c.password(p);
        } else if let Some(p) = pgpass(&c) {
            c.password(p);
        }
    }
    Ok(c)
}

/// How long a connection may take to come up when neither the URL's `connect_timeout` nor
/// `PGCONNECT_TIMEOUT` says (libpq would wait for ever; a store that does not answer is an
/// error to show).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The server cancels a statement running longer than this unless the URL's
/// `options=-c statement_timeout=…` says otherwise.
pub const STATEMENT_TIMEOUT_MS: u64 = 60_000;

/// How long the server's machine may leave a connection without any sign of life before the
/// kernel gives the connection up: the TCP user timeout. Within it, a connection waiting for an
/// answer is probed ([`KEEPALIVE_IDLE`], then every [`KEEPALIVE_INTERVAL`]), so a connection
/// cut by the network is given up within about this long — whether its last request was lost
/// (unacknowledged data) or its answer was (nothing to acknowledge: only the probes tell).
/// Waiting for the network's return is no use: TCP's own retransmissions back off, and a
/// connection cut for 30 s may stay silent for a minute more after the network is back.
pub const TCP_USER_TIMEOUT: Duration = Duration::from_secs(10);
/// Silence on a connection before the first keepalive probe.
pub const KEEPALIVE_IDLE: Duration = Duration::from_secs(5);
/// Between keepalive probes.
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(5);

/// The bounds that keep a silent or vanished server from hanging a command: the connect
/// timeout (the URL's `connect_timeout`, else `PGCONNECT_TIMEOUT`, else [`CONNECT_TIMEOUT`];
/// at least 2 s, as libpq), bounding the whole start-up — the driver bounds only the TCP
/// connect, [`connect_within`] the rest; TCP keepalives and the TCP user timeout (a network
/// cut; see [`TCP_USER_TIMEOUT`]) unless the URL sets its own; the server's
/// `statement_timeout`. (A statement the server is still working on is not a silent
/// connection: the server's machine answers the probes.)
fn limits(c: &mut tokio_postgres::Config) {
    let from_env = std::env::var("PGCONNECT_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<i64>().ok())
        .filter(|s| *s > 0)
        .map(|s| Duration::from_secs(s as u64));
    let t = c
        .get_connect_timeout()
        .copied()
        .or(from_env)
        .unwrap_or(CONNECT_TIMEOUT)
        .max(Duration::from_secs(2));
    c.connect_timeout(t);
    if c.get_keepalives_idle() == Duration::from_secs(2 * 60 * 60) {
        c.keepalives_idle(KEEPALIVE_IDLE);
        c.keepalives_interval(KEEPALIVE_INTERVAL);
        c.keepalives_retries(3);
    }
    if c.get_tcp_user_timeout().is_none() {
        c.tcp_user_timeout(TCP_USER_TIMEOUT);
    }
    let opts = c.get_options().unwrap_or("").to_string();
    if !opts.contains("statement_timeout") {
        let sep = if opts.is_empty() { "" } else { " " };
        c.options(format!(
            "{opts}{sep}-c statement_timeout={STATEMENT_TIMEOUT_MS}"
        ));
    }
}

/// The connect timeout [`config`] settled on.
pub fn connect_timeout(c: &tokio_postgres::Config) -> Duration {
    c.get_connect_timeout().copied().unwrap_or(CONNECT_TIMEOUT)
}

/// How long a client waits for any answer before it gives the connection up: the server's
/// statement timeout (as the URL's options set it, in ms or with a unit) and a margin; None
/// when the statement timeout is off (`statement_timeout=0`).
pub fn answer_bound(c: &tokio_postgres::Config) -> Option<Duration> {
    let opts = c.get_options().unwrap_or("");
    let at = opts.rfind("statement_timeout=")?;
    let v = &opts[at + "statement_timeout=".len()..];
    let v = v.split_whitespace().next().unwrap_or("").trim_matches('\'');
    let digits: String = v.chars().take_while(|c| c.is_ascii_digit()).collect();
    let n: u64 = digits.parse().ok()?;
    let ms = match v[digits.len()..].trim() {
        "" | "ms" => n,
        "s" => n * 1_000,
        "min" => n * 60_000,
        "h" => n * 3_600_000,
        _ => return Some(Duration::from_millis(STATEMENT_TIMEOUT_MS) + ANSWER_MARGIN),
    };
    (ms > 0).then(|| Duration::from_millis(ms) + ANSWER_MARGIN)
}

const ANSWER_MARGIN: Duration = Duration::from_secs(10);

/// A connection attempt (start-up included) bounded by the connect timeout.
pub(crate) async fn connect_within<F, T>(c: &tokio_postgres::Config, f: F) -> Result<T, String>
where
    F: Future<Output = Result<T, tokio_postgres::Error>>,
{
    let t = connect_timeout(c);
    match tokio::time::timeout(t, f).await {
        Ok(r) => r.map_err(|e| with_fix(&e)),
        Err(_) => Err(no_answer(t)),
    }
}

/// The error of a server that took the connection and never answered.
pub(crate) fn no_answer(t: Duration) -> String {
    format!(
        "no answer within {} s (connect_timeout) — is the server up, and is this a PostgreSQL \
         server? (set ?connect_timeout=N or PGCONNECT_TIMEOUT to wait longer)",
        t.as_secs()
    )
}

/// libpq lets `?host=` / `?port=` in the query replace the URL's own host and port
/// (`postgresql://u@localhost/db?host=/run/postgresql` connects to the socket only); the
/// driver would try both, the URL's first. The authority's host and port are dropped when the
/// query gives them.
fn libpq_overrides(raw: &str) -> String {
    let Ok(url) = url::Url::parse(raw) else {
        return raw.to_string();
    };
    let keys: Vec<String> = url.query_pairs().map(|(k, _)| k.into_owned()).collect();
    let has = |k: &str| keys.iter().any(|x| x == k);
    let (host, port) = (has("host") || has("hostaddr"), has("port"));
    if !host && !port {
        return raw.to_string();
    }
    let (scheme, rest) = raw.split_once("://").unwrap_or(("postgresql", raw));
    let auth_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (auth, tail) = rest.split_at(auth_end);
    let (user, hostport) = match auth.rfind('@') {
        Some(at) => (&auth[..=at], &auth[at + 1..]),
        None => ("", auth),
    };
    let (h, p) = match hostport.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || hostport.ends_with(']') => (h, Some(p)),
        _ => (hostport, None),
    };
    let h = if host { "" } else { h };
    let p = if port { None } else { p };
    let hostport = match p {
        Some(p) if !h.is_empty() => format!("{h}:{p}"),
        _ => h.to_string(),
    };
    format!("{scheme}://{user}{hostport}{tail}")
}

/// The first matching line of the pgpass file (`host:port:db:user:password`, `*` matches
/// anything, `\:` and `\\` escaped), as libpq reads it.
fn pgpass(c: &tokio_postgres::Config) -> Option<String> {
    let path = std::env::var_os("PGPASSFILE")
        .map(std::path::PathBuf::from)
        .or_else(|| directories::BaseDirs::new().map(|d| d.home_dir().join(".pgpass")))?;
    if !private_enough(&path) {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let host = c
        .get_hosts()
        .first()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(h) => h.clone(),
            #[cfg(unix)]
            tokio_postgres::config::Host::Unix(_) => "localhost".into(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = c.get_ports().first().copied().unwrap_or(5432).to_string();
    let db = c
        .get_dbname()
        .unwrap_or(c.get_user().unwrap_or(""))
        .to_string();
    let user = c.get_user().unwrap_or("").to_string();
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .find_map(|l| {
            let f = pgpass_fields(l);
            let want = [&host, &port, &db, &user];
            (f.len() == 5 && f.iter().zip(want).all(|(a, b)| a == "*" || a == b))
                .then(|| f[4].clone())
        })
}

/// As libpq: a password file others may read is not used (and the user is told once why).
fn private_enough(path: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(m) = std::fs::metadata(path)
            && m.permissions().mode() & 0o077 != 0
        {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                crate::say!(
                    "kakeai: {}: not used — others may read it (mode {:o}); run chmod 600 on it",
                    path.display(),
                    m.permissions().mode() & 0o777
                );
            });
            return false;
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    true
}

fn pgpass_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(n), Some(last)) = (chars.next(), out.last_mut()) {
                    last.push(n);
                }
            }
            ':' if out.len() < 5 => out.push(String::new()),
            c => {
                if let Some(last) = out.last_mut() {
                    last.push(c);
                }
            }
        }
    }
    out
}

/// TLS for `sslmode=prefer|require` through rustls and the webpki roots (no OpenSSL).
pub(crate) fn tls() -> tokio_postgres_rustls::MakeRustlsConnect {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    tokio_postgres_rustls::MakeRustlsConnect::new(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_connection_has_bounds_the_url_can_change() {
        for (url, connect, answer) in [
            ("postgresql://u@h/d", 10, Some(70)),
            ("postgresql://u@h/d?connect_timeout=3", 3, Some(70)),
            // libpq's floor: 1 s means 2 s.
            ("postgresql://u@h/d?connect_timeout=1", 2, Some(70)),
            (
                "postgresql://u@h/d?options=-c%20statement_timeout%3D5s",
                10,
                Some(15),
            ),
            (
                "postgresql://u@h/d?options=-c%20statement_timeout%3D0",
                10,
                None,
            ),
        ] {
            let c = config(url).expect("parses");
            assert_eq!(connect_timeout(&c), Duration::from_secs(connect), "{url}");
            assert_eq!(answer_bound(&c), answer.map(Duration::from_secs), "{url}");
            assert_eq!(c.get_keepalives_idle(), KEEPALIVE_IDLE, "{url}");
            assert_eq!(c.get_tcp_user_timeout(), Some(&TCP_USER_TIMEOUT), "{url}");
        }
        // The URL's own keepalive and user timeout are kept.
        let c =
            config("postgresql://u@h/d?keepalives_idle=60&tcp_user_timeout=30").expect("parses");
        assert_eq!(c.get_keepalives_idle(), Duration::from_secs(60));
        assert!(
            c.get_tcp_user_timeout()
                .is_some_and(|t| *t != TCP_USER_TIMEOUT)
        );
        let c = config("postgresql://u@h/d?options=-c%20search_path%3Dx").expect("parses");
        assert_eq!(
            c.get_options(),
            Some("-c search_path=x -c statement_timeout=60000")
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_password_file_others_may_read_is_not_used() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pgpass");
        std::fs::write(&f, "*:*:*:*:secret\n").unwrap();
        for (mode, used) in [
            (0o600, true),
            (0o400, true),
            (0o640, false),
            (0o644, false),
            (0o606, false),
        ] {
            std::fs::set_permissions(&f, std::fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(private_enough(&f), used, "mode {mode:o}");
        }
    }

    #[test]
    fn pgpass_lines_unescape_and_match_wildcards() {
        assert_eq!(
            pgpass_fields(r"db.example:5432:*:kakeai:se\:cr\\et"),
            ["db.example", "5432", "*", "kakeai", r"se:cr\et"]
        );
        // A password may hold unescaped colons after the fifth field starts.
        assert_eq!(pgpass_fields("h:1:d:u:a:b")[4], "a:b");
    }

    #[test]
    fn a_url_with_a_socket_directory_and_sslmode_parses() {
        let c = config(
            "postgresql://kakeai@localhost/kakeai?host=/run/postgresql&port=5433&sslmode=require",
        )
        .expect("parses");
        assert_eq!(c.get_dbname(), Some("kakeai"));
        assert_eq!(c.get_ports(), [5433]);
        assert_eq!(c.get_ssl_mode(), SslMode::Require);
        assert_eq!(
            c.get_hosts(),
            [tokio_postgres::config::Host::Unix("/run/postgresql".into())]
        );
        // Without query overrides the URL's host and port stand.
        let c = config("postgresql://u:p@db.example:6543/x").expect("parses");
        assert_eq!(c.get_ports(), [6543]);
        assert_eq!(
            c.get_hosts(),
            [tokio_postgres::config::Host::Tcp("db.example".into())]
        );
        assert_eq!(c.get_ssl_mode(), SslMode::Prefer);
        assert!(config("postgresql://kakeai@localhost/x?sslmode=sometimes").is_err());
    }
}
