//! A throwaway PostgreSQL cluster for the tests (issue 24 §1), from the system's own binaries:
//! `initdb` and `pg_ctl` in a temporary directory, a Unix socket only, trust authentication.
//! Run as root (CI), the server runs as the `postgres` user. Not installed: the test is skipped
//! with a message — unless CI=true, where PostgreSQL is required and its absence fails.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A running cluster; stopped and removed on drop.
pub struct PgCluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    as_postgres: bool,
    pub port: u16,
}

/// The directory holding initdb and pg_ctl: `KAKEAI_PG_BIN`, else the newest
/// /usr/lib/postgresql/N/bin, else whatever `pg_config --bindir` says.
fn bin_dir() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("KAKEAI_PG_BIN") {
        return Some(PathBuf::from(d));
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").exists())
        .collect();
    versions.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|n| n.to_str())
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or(0)
    });
    if let Some(b) = versions.pop() {
        return Some(b);
    }
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    let b = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    b.join("initdb").exists().then_some(b)
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

impl PgCluster {
    /// Starts a cluster, or `None` (with a message) when PostgreSQL is not installed and CI is
    /// not set. Under CI=true a missing PostgreSQL panics: those tests must run there.
    pub fn start(test: &str) -> Option<PgCluster> {
        let Some(bin) = bin_dir() else {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!(
                    "{test}: PostgreSQL (initdb, pg_ctl) is required under CI=true; install the postgresql package"
                );
            }
            eprintln!(
                "SKIPPED {test}: PostgreSQL is not installed (initdb/pg_ctl not found); install postgresql to run it"
            );
            return None;
        };
        let dir = tempfile::Builder::new()
            .prefix("kakeai-pg-")
            .tempdir()
            .expect("temp dir");
        let as_postgres = is_root();
        if as_postgres {
            // The server refuses to run as root: the postgres user owns the directory.
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "chown the cluster directory to postgres");
        }
        let port = free_port();
        let c = PgCluster {
            dir,
            bin,
            as_postgres,
            port,
        };
        let data = c.data();
        c.run(
            "initdb",
            &[
                "-D",
                data.to_str().expect("utf-8 path"),
                "-A",
                "trust",
                "-U",
                "kakeai",
                "-E",
                "UTF8",
                "--locale=C",
            ],
        );
        let opts = format!(
            "-k {} -p {port} -c listen_addresses='' -c fsync=off",
            c.dir.path().display()
        );
        c.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().expect("utf-8 path"),
                "-o",
                &opts,
                "-l",
                c.dir.path().join("log").to_str().expect("utf-8 path"),
                "-w",
                "start",
            ],
        );
        Some(c)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The socket directory.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    fn run(&self, tool: &str, args: &[&str]) {
        let exe = self.bin.join(tool);
        let out = if self.as_postgres {
            Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(&exe)
                .args(args)
                .output()
        } else {
            Command::new(&exe).args(args).output()
        }
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
        assert!(
            out.status.success(),
            "{tool} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A URL for a new, empty database `name` (created here).
    pub fn database(&self, name: &str) -> String {
        self.run(
            "createdb",
            &[
                "-h",
                self.socket_dir().to_str().expect("utf-8 path"),
                "-p",
                &self.port.to_string(),
                "-U",
                "kakeai",
                name,
            ],
        );
        self.url(name)
    }

    /// libpq's URL form with the socket directory as `host`.
    pub fn url(&self, name: &str) -> String {
        format!(
            "postgresql://kakeai@localhost/{name}?host={}&port={}",
            self.socket_dir().display(),
            self.port
        )
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let data = self.data();
        let _ = if self.as_postgres {
            Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(self.bin.join("pg_ctl"))
                .args(["-D", data.to_str().unwrap_or(""), "-m", "immediate", "stop"])
                .output()
        } else {
            Command::new(self.bin.join("pg_ctl"))
                .args(["-D", data.to_str().unwrap_or(""), "-m", "immediate", "stop"])
                .output()
        };
    }
}

/// A port nobody listens on now (the socket file's name carries it).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}
