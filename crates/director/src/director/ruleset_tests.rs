//! Rules files as a user writes them: an unknown table or key is located at its file:line:col.

use std::path::Path;

use super::*;
use crate::config::{load_toml_table, merge_tables, relocate};

/// Rules as a user might write them, with one key serde does not know, in every TOML form.
#[test]
fn an_unknown_rules_table_or_key_is_located() {
    // (user text, the unknown key's line:col, the key the message must name)
    let cases: &[(&str, (usize, usize), &str)] = &[
        (
            "[lines]\nwarn = 6\n\n[bogus_table]\nx = 1\n",
            (4, 2),
            "bogus_table",
        ),
        ("[lines]\nwarn = 6\n  colour = 3\n", (3, 3), "colour"),
        ("lines = { warn = 6, shade = 2 }\n", (1, 21), "shade"),
        (
            "# a comment\nlines.warn = 6\nlines.tint = 1\n",
            (3, 7),
            "tint",
        ),
        ("stray_key = true\n[lines]\nwarn = 6\n", (1, 1), "stray_key"),
    ];
    for (text, at, name) in cases {
        let path = Path::new("user/rules.toml");
        let mut table = default_table().unwrap();
        merge_tables(&mut table, load_toml_table(path, text).unwrap());
        let err = RuleSet::from_table(table)
            .map(drop)
            .map_err(|e| relocate(e, path, text))
            .expect_err(text);
        let s = err.to_string();
        let want = format!("user/rules.toml:{}:{}:", at.0, at.1);
        assert!(s.starts_with(&want), "{text:?}: want {want} got {s}");
        assert!(s.contains(name), "{text:?}: {s}");
    }
}
