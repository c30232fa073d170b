//! Which vault a paired comparison uses (issue 23 item 4): the flags, else the variant's, else
//! the vault stored with the baseline run — never silently the bundled sample when the run was
//! made under another vault.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::{VaultSource, vault_source};
use crate::cli::vault::VaultArgs;
use crate::compare::Variant;

fn variant(text: &str) -> Variant {
    Variant::parse(Path::new("v.toml"), text).unwrap()
}

#[test]
fn the_baseline_runs_vault_is_used_unless_something_else_is_named() {
    let stored = json!({"vault": {"dir": "/vaults/w", "work": "w", "hash": "ab"}});
    let none = VaultArgs {
        vault: None,
        work: None,
    };
    let plain = variant("name = \"terse\"\n");
    assert_eq!(
        vault_source(&plain, &none, &stored),
        VaultSource::Stored(PathBuf::from("/vaults/w"))
    );
    // A run made before runs stored their vault, or under the bundled sample: the default.
    assert_eq!(
        vault_source(&plain, &none, &json!({})),
        VaultSource::Default
    );
    let sample = json!({"vault": {"dir": null, "work": "sisters", "hash": "bundled-sample"}});
    assert_eq!(vault_source(&plain, &none, &sample), VaultSource::Default);
    // The variant's own vault, then the flags, win.
    let own = variant("name = \"v\"\n[vault]\ndir = \"/other\"\n");
    assert_eq!(vault_source(&own, &none, &stored), VaultSource::Variant);
    let flags = VaultArgs {
        vault: Some(PathBuf::from("/flag")),
        work: None,
    };
    assert_eq!(vault_source(&own, &flags, &stored), VaultSource::Flags);
}
