//! A throwaway PostgreSQL cluster for the tests (issue 24 §1), from the system's own binaries:
//! `initdb` and `pg_ctl` in a temporary directory, a Unix socket only, trust authentication.
//! Run as root (CI), the server runs as the `postgres` user. Not installed: the test is skipped
//! with a message — unless CI=true, where PostgreSQL is required and its absence fails.
//! [`PgCluster::start_in`] runs the server inside a network namespace, reached over TCP.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A running cluster; stopped and removed on drop.
pub struct PgCluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    as_postgres: bool,
    pub port: u16,
    /// The server's options (`pg_ctl -o`), for starting it again.
    opts: String,
    /// Words before `pg_ctl start` (`ip netns exec NAME`), and the TCP address it listens on.
    net: Option<(Vec<String>, String)>,
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
        PgCluster::start_on(test, None)
    }

    /// As [`PgCluster::start`], the server running inside the namespace `ns` and listening on
    /// its address (TCP, trust) besides the socket: [`PgCluster::tcp_url`] reaches it.
    pub fn start_in(test: &str, ns: &super::netns::Netns) -> Option<PgCluster> {
        PgCluster::start_on(test, Some((ns.prefix(), ns.addr.clone())))
    }

    fn start_on(test: &str, net: Option<(Vec<String>, String)>) -> Option<PgCluster> {
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
        let listen = net.as_ref().map(|(_, a)| a.as_str()).unwrap_or("");
        let opts = format!(
            "-k {} -p {port} -c listen_addresses='{listen}' -c fsync=off",
            dir.path().display()
        );
        let c = PgCluster {
            dir,
            bin,
            as_postgres,
            port,
            opts,
            net,
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
        if c.net.is_some() {
            // initdb trusts only the loopback over TCP: the link's other end too.
            use std::io::Write;
            let mut hba = std::fs::OpenOptions::new()
                .append(true)
                .open(data.join("pg_hba.conf"))
                .expect("pg_hba.conf");
            writeln!(hba, "host all all samenet trust").expect("pg_hba.conf");
        }
        c.start_again();
        Some(c)
    }

    /// Starts the (stopped or killed) server again and waits until it accepts connections.
    pub fn start_again(&self) {
        let data = self.data();
        let log = self.dir.path().join("log");
        let args = [
            "-D",
            data.to_str().expect("utf-8 path"),
            "-o",
            &self.opts,
            "-l",
            log.to_str().expect("utf-8 path"),
            "-w",
            "start",
        ];
        if let Err(e) = self.try_run("pg_ctl", &args) {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(15).collect();
            panic!(
                "{e}\nserver log (last lines, newest first):\n{}",
                tail.join("\n")
            );
        }
    }

    /// `pg_ctl stop -m fast`: sessions are ended, the server shuts down cleanly.
    pub fn stop(&self) {
        let data = self.data();
        self.run(
            "pg_ctl",
            &[
                "-D",
                data.to_str().expect("utf-8 path"),
                "-m",
                "fast",
                "-w",
                "stop",
            ],
        );
    }

    /// `kill -9` of the postmaster, then waits until it and every server process are gone (a
    /// crash: no shutdown, recovery on the next start).
    pub fn kill9(&self) {
        let pidfile =
            std::fs::read_to_string(self.data().join("postmaster.pid")).expect("pid file");
        let pid: i32 = pidfile
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .expect("pid");
        // Its children (known now: none is forked once it is dead) notice its death and exit;
        // the shared memory goes with the last of them.
        let children: Vec<i32> = Command::new("pgrep")
            .args(["-P", &pid.to_string()])
            .output()
            .map(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .filter_map(|l| l.trim().parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        // SAFETY: kill with the pid read from the server's own pid file.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while std::time::Instant::now() < deadline {
            // Gone, or a zombie nobody reaped (its resources are freed).
            let alive = |p: i32| {
                std::fs::read_to_string(format!("/proc/{p}/stat"))
                    .ok()
                    .and_then(|s| s.rsplit_once(") ").map(|(_, r)| !r.starts_with('Z')))
                    .unwrap_or(false)
            };
            if !alive(pid) && !children.iter().any(|c| alive(*c)) {
                // A zombie nobody reaps still answers kill(pid, 0), and the server would take
                // it for a live postmaster: the stale lock file goes, as after a reboot.
                let _ = std::fs::remove_file(self.data().join("postmaster.pid"));
                let lock = format!(".s.PGSQL.{}.lock", self.port);
                let _ = std::fs::remove_file(self.socket_dir().join(lock));
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the killed server's processes did not exit");
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// The socket directory.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    fn run(&self, tool: &str, args: &[&str]) {
        if let Err(e) = self.try_run(tool, args) {
            panic!("{e}");
        }
    }

    fn try_run(&self, tool: &str, args: &[&str]) -> Result<(), String> {
        let exe = self.bin.join(tool);
        // Only the server (`pg_ctl start`) runs inside the namespace.
        let wrap: &[String] = match &self.net {
            Some((w, _)) if tool == "pg_ctl" && args.contains(&"start") => w,
            _ => &[],
        };
        let mut cmd = match wrap.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest);
                c
            }
            None if self.as_postgres => Command::new("runuser"),
            None => Command::new(&exe),
        };
        if !wrap.is_empty() && self.as_postgres {
            cmd.args(["runuser", "-u", "postgres", "--"]).arg(&exe);
        } else if !wrap.is_empty() {
            cmd.arg(&exe);
        } else if self.as_postgres {
            cmd.args(["-u", "postgres", "--"]).arg(&exe);
        }
        let out = cmd
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
        if out.status.success() {
            return Ok(());
        }
        Err(format!(
            "{tool} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
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

impl PgCluster {
    /// A URL reaching database `name` over TCP at the namespace's address (a cluster started
    /// with [`PgCluster::start_in`]).
    pub fn tcp_url(&self, name: &str) -> String {
        let (_, addr) = self.net.as_ref().expect("a cluster in a namespace");
        format!("postgresql://kakeai@{addr}:{}/{name}", self.port)
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
