//! The `[line]` secrets in a `serve --config` file: an error about them names the field and
//! its file:line, never the value (a typo — an unquoted number, `line = "…"` — would otherwise
//! be echoed by the TOML parser), and a file holding them must not be readable by others
//! (refused, as `pii.key` is).

use std::path::Path;

use super::config::LineSecrets;

const FIELDS: [&str; 2] = ["channel_secret", "access_token"];

/// `[line]` must be a table of strings; else an error at the key's line, without its value.
pub fn check_shape(path: &Path, text: &str, over: &toml::Table) -> Result<(), String> {
    let Some(line) = over.get("line") else {
        return Ok(());
    };
    let Some(t) = line.as_table() else {
        return Err(format!(
            "{}:{}: `line` must be a [line] table holding channel_secret and access_token (its value is not shown)",
            path.display(),
            line_of(text, "line")
        ));
    };
    for (k, v) in t {
        if !v.is_str() {
            let what = if FIELDS.contains(&k.as_str()) {
                format!("[line] {k} must be a quoted string")
            } else {
                format!("[line] has no field {k:?}; it holds channel_secret and access_token")
            };
            return Err(format!(
                "{}:{}: {what} (its value is not shown)",
                path.display(),
                line_of(text, k)
            ));
        }
    }
    Ok(())
}

/// Refuses a config file that holds a secret and that group or others may read.
pub fn check_mode(path: &Path, line: &LineSecrets) -> Result<(), String> {
    let holds = [&line.channel_secret, &line.access_token]
        .iter()
        .any(|s| s.as_ref().is_some_and(|s| !s.expose().trim().is_empty()));
    if !holds {
        return Ok(());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(format!(
                "{}: holds the LINE secrets and is readable by others (mode {:o}); run chmod 600 on it, or put the secrets in the environment ({} / {})",
                path.display(),
                mode & 0o777,
                super::config::ENV_SECRET,
                super::config::ENV_TOKEN
            ));
        }
    }
    Ok(())
}

/// `msg` with every value written for a secret field (or for `line`) replaced by `***`.
pub fn scrub(text: &str, mut msg: String) -> String {
    for l in text.lines() {
        let Some((key, value)) = l.split_once('=') else {
            continue;
        };
        let key = key.trim().trim_start_matches("line.");
        if !(FIELDS.contains(&key) || key == "line") {
            continue;
        }
        let v = value.trim();
        let bare = v.trim_matches(|c| c == '"' || c == '\'');
        for cand in [v, bare] {
            if cand.chars().count() >= 3 && msg.contains(cand) {
                msg = msg.replace(cand, "***");
            }
        }
    }
    msg
}

/// The 1-based line where `key` is assigned (1 when not found).
fn line_of(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| {
            let t = l.trim_start();
            t.strip_prefix(key)
                .or_else(|| t.strip_prefix(&format!("line.{key}")))
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map_or(1, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::super::config::ServeConfig;

    fn load(text: &str, mode: u32) -> Result<ServeConfig, String> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("serve.toml");
        std::fs::write(&p, text).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        ServeConfig::load(Some(&p))
    }

    #[test]
    fn typos_in_secret_fields_name_the_field_and_line_never_the_value() {
        let cases = [
            (
                "[line]\nchannel_secret = 81726354918273\n",
                "channel_secret",
                ":2:",
            ),
            (
                "[line]\naccess_token = 0x7f3a9c2b1d\n",
                "access_token",
                ":2:",
            ),
            ("workers = 2\nline = \"s3cr3tT0kenValue\"\n", "line", ":2:"),
            ("[line]\nchannel_secret = s3cr3tT0kenValue\n", "", ":2:"),
            ("[line]\nchannel_secret = \"s3cr3tT0kenValue\n", "", ":2:"),
            (
                "line.access_token = 99887766554433\n",
                "access_token",
                ":1:",
            ),
        ];
        for (text, field, at) in cases {
            let e = load(text, 0o600).unwrap_err();
            for secret in [
                "81726354918273",
                "7f3a9c2b1d",
                "s3cr3tT0kenValue",
                "99887766554433",
            ] {
                assert!(!e.contains(secret), "{text:?} echoed the value: {e}");
            }
            assert!(e.contains(field) && e.contains(at), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_secret_file_others_can_read_is_refused() {
        let text = "[line]\nchannel_secret = \"abc\"\naccess_token = \"def\"\n";
        let e = load(text, 0o644).unwrap_err();
        assert!(e.contains("chmod 600") && e.contains("644"), "{e}");
        assert!(load(text, 0o600).is_ok());
        // Without secrets, the mode does not matter.
        assert!(load("workers = 2\n", 0o644).is_ok());
    }

    #[test]
    fn a_config_past_the_size_limit_or_dev_zero_is_refused_not_read() {
        let e = ServeConfig::load(Some(std::path::Path::new("/dev/zero"))).unwrap_err();
        assert!(e.contains("/dev/zero") && e.contains("limit"), "{e}");
    }
}
