//! A real network partition for the fault tests: a network namespace joined to this one by a
//! veth pair, and nftables rules on each end's ingress that drop every IPv4 packet arriving
//! (ARP still passes, as it would between a client and its router). The dropped packets are
//! never reported to the sender: TCP only notices by its own timers (retransmissions, the
//! user timeout, keepalives), as across a real cut. Needs root, `ip` (iproute2) and `nft`
//! (nftables); without them the test is skipped with a message — unless CI=true, where their
//! absence fails.

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

/// A namespace and its link; removed (rules, link, namespace) on drop.
pub struct Netns {
    /// The namespace's name (`ip netns exec NAME …`).
    pub name: String,
    /// This side's end of the veth pair, and the namespace's.
    here: String,
    there: String,
    /// The namespace's address (its end of the link).
    pub addr: String,
    cut: bool,
}

static N: AtomicU32 = AtomicU32::new(0);

fn ok(cmd: &mut Command) -> Result<(), String> {
    match cmd.output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "{cmd:?}: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Err(e) => Err(format!("{cmd:?}: {e}")),
    }
}

fn sh(args: &[&str]) -> Result<(), String> {
    ok(Command::new(args[0]).args(&args[1..]))
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A /30 of 10.213.0.0/16 no interface here uses yet (tests in parallel each take their own).
fn free_subnet() -> Option<(u8, u8)> {
    let out = Command::new("ip")
        .args(["-4", "-o", "addr", "show"])
        .output()
        .ok()?;
    let used = String::from_utf8_lossy(&out.stdout).to_string();
    let start = (std::process::id() % 250) as u8;
    (0..250u16)
        .flat_map(|i| (0..64u8).map(move |j| (((start as u16 + i) % 250) as u8, j * 4)))
        .find(|(b, c)| !used.contains(&format!("10.213.{b}.{}/", c + 1)))
}

impl Netns {
    /// A namespace reachable at [`Netns::addr`], or None (with a message) where this machine
    /// cannot make one and CI is not set.
    pub fn new(test: &str) -> Option<Netns> {
        match Netns::try_new() {
            Ok(n) => Some(n),
            Err(why) => {
                if std::env::var("CI").as_deref() == Ok("true") {
                    panic!(
                        "{test}: a network namespace with nftables is required under CI=true \
                         (root, iproute2, nftables): {why}"
                    );
                }
                eprintln!("SKIPPED {test}: no network namespace for a partition here: {why}");
                None
            }
        }
    }

    fn try_new() -> Result<Netns, String> {
        if !is_root() {
            return Err("not root".into());
        }
        sh(&["nft", "--version"]).map_err(|e| format!("nft (nftables) missing: {e}"))?;
        let k = N.fetch_add(1, Ordering::SeqCst);
        let id = format!("{}x{k}", std::process::id());
        let (b, c) = free_subnet().ok_or("no free 10.213.x.y/30 subnet")?;
        let n = Netns {
            name: format!("kakeai-{id}"),
            here: format!("kk{id}a"),
            there: format!("kk{id}b"),
            addr: format!("10.213.{b}.{}", c + 2),
            cut: false,
        };
        let mine = format!("10.213.{b}.{}/30", c + 1);
        let theirs = format!("{}/30", n.addr);
        // From here on `n`'s drop removes whatever was made.
        sh(&["ip", "netns", "add", &n.name])?;
        sh(&[
            "ip", "link", "add", &n.here, "type", "veth", "peer", "name", &n.there,
        ])?;
        sh(&["ip", "link", "set", &n.there, "netns", &n.name])?;
        sh(&["ip", "addr", "add", &mine, "dev", &n.here])?;
        sh(&["ip", "link", "set", &n.here, "up"])?;
        n.inside(&["ip", "addr", "add", &theirs, "dev", &n.there])?;
        n.inside(&["ip", "link", "set", &n.there, "up"])?;
        n.inside(&["ip", "link", "set", "lo", "up"])?;
        Ok(n)
    }

    /// Runs `args` inside the namespace.
    pub fn inside(&self, args: &[&str]) -> Result<(), String> {
        ok(Command::new("ip")
            .args(["netns", "exec", &self.name])
            .args(args))
    }

    /// `ip netns exec NAME` before a command: the words to put first.
    pub fn prefix(&self) -> Vec<String> {
        vec![
            "ip".into(),
            "netns".into(),
            "exec".into(),
            self.name.clone(),
        ]
    }

    fn table(&self) -> String {
        format!("kakeai_{}", self.here)
    }

    /// Every IPv4 packet arriving at either end is dropped from now on, silently.
    pub fn cut(&mut self) {
        let t = self.table();
        for (dev, inside) in [(&self.here, false), (&self.there, true)] {
            let chain = format!(
                "add chain netdev {t} cut {{ type filter hook ingress device \"{dev}\" priority 0; policy accept; }}"
            );
            let rule = format!("add rule netdev {t} cut meta protocol ip drop");
            let script = format!("add table netdev {t}\n{chain}\n{rule}\n");
            let r = if inside {
                self.inside(&["nft", &script])
            } else {
                sh(&["nft", &script])
            };
            r.unwrap_or_else(|e| panic!("cutting the link: {e}"));
        }
        self.cut = true;
    }

    /// Packets pass again.
    pub fn heal(&mut self) {
        let t = self.table();
        let here = sh(&["nft", "delete", "table", "netdev", &t]);
        let there = self.inside(&["nft", "delete", "table", "netdev", &t]);
        self.cut = false;
        here.and(there)
            .unwrap_or_else(|e| panic!("healing the link: {e}"));
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        if self.cut {
            let _ = sh(&["nft", "delete", "table", "netdev", &self.table()]);
        }
        // The namespace's end goes with it, and this end with its peer.
        let _ = sh(&["ip", "netns", "delete", &self.name]);
        let _ = sh(&["ip", "link", "delete", &self.here]);
    }
}
