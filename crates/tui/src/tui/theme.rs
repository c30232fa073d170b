//! Colour themes: TOML files, three built in (themes/*.toml, embedded) plus any the user puts
//! in `<config_dir>/themes/`. A theme that fails to parse is reported and skipped.

use ratatui::style::Color;
use serde::Deserialize;

use crate::config::{ConfigError, load_toml_table};
use crate::director::Status;

const BUILTIN: [(&str, &str); 4] = [
    (
        "themes/dark.toml",
        include_str!("../../../../themes/dark.toml"),
    ),
    (
        "themes/light.toml",
        include_str!("../../../../themes/light.toml"),
    ),
    (
        "themes/high-contrast.toml",
        include_str!("../../../../themes/high-contrast.toml"),
    ),
    (
        "themes/no-color.toml",
        include_str!("../../../../themes/no-color.toml"),
    ),
];

/// The theme to start with when the user named none: `no-color` when NO_COLOR is set to a
/// non-empty value (no-color.org), else the first.
pub fn default_index(themes: &[Theme], no_color: Option<&str>) -> usize {
    match no_color {
        Some(v) if !v.is_empty() => themes
            .iter()
            .position(|t| t.name == "no-color")
            .unwrap_or(0),
        _ => 0,
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThemeFile {
    name: String,
    text: String,
    dim: String,
    accent: String,
    border: String,
    selected_bg: String,
    yana: String,
    ayu: String,
    pass: String,
    warn: String,
    retry: String,
    unscored: String,
    highlight_bg: String,
    /// Text markers on diffs and findings (colour alone carries nothing in this theme).
    #[serde(default)]
    markers: bool,
}

#[derive(Debug, Clone)]
pub struct Theme {
    pub name: String,
    pub text: Color,
    pub dim: Color,
    pub accent: Color,
    pub border: Color,
    pub selected_bg: Color,
    pub yana: Color,
    pub ayu: Color,
    pub pass: Color,
    pub warn: Color,
    pub retry: Color,
    pub unscored: Color,
    pub highlight_bg: Color,
    /// Mark the attempt diff and finding highlights with text ([-…-] {+…+} 【…】), not only
    /// colour: on in high-contrast and no-color.
    pub markers: bool,
}

impl Theme {
    pub fn speaker(&self, id: &str) -> Color {
        if id == "ayu" { self.ayu } else { self.yana }
    }

    pub fn status(&self, s: Status) -> Color {
        match s {
            Status::Pass | Status::Info => self.pass,
            Status::Warn | Status::Modify => self.warn,
            Status::Retry => self.retry,
            Status::Unscored => self.unscored,
        }
    }

    fn parse(path: &std::path::Path, text: &str) -> Result<Theme, ConfigError> {
        let table = load_toml_table(path, text)?;
        let f: ThemeFile = crate::config::from_table(table, path)?;
        let c = |key: &str, v: &str| {
            v.parse::<Color>().map_err(|_| ConfigError::Invalid {
                path: path.to_path_buf(),
                at: crate::config::locate_key(text, key),
                key: Some(key.into()),
                message: format!("`{v}` is not a colour (use #rrggbb or a colour name)"),
            })
        };
        Ok(Theme {
            text: c("text", &f.text)?,
            dim: c("dim", &f.dim)?,
            accent: c("accent", &f.accent)?,
            border: c("border", &f.border)?,
            selected_bg: c("selected_bg", &f.selected_bg)?,
            yana: c("yana", &f.yana)?,
            ayu: c("ayu", &f.ayu)?,
            pass: c("pass", &f.pass)?,
            warn: c("warn", &f.warn)?,
            retry: c("retry", &f.retry)?,
            unscored: c("unscored", &f.unscored)?,
            highlight_bg: c("highlight_bg", &f.highlight_bg)?,
            markers: f.markers,
            name: f.name,
        })
    }
}

/// The built-in themes (errors in them come back alongside; a test keeps them empty).
pub fn load_all() -> (Vec<Theme>, Vec<ConfigError>) {
    with_user(Vec::new())
}

/// The built-in themes, then the user's `files` as the runtime read them (path, text or why
/// it could not be read), in path order; errors in user files come back alongside.
pub fn with_user(
    mut files: Vec<(std::path::PathBuf, std::io::Result<String>)>,
) -> (Vec<Theme>, Vec<ConfigError>) {
    let mut themes = Vec::new();
    let mut errors = Vec::new();
    for (path, text) in BUILTIN {
        match Theme::parse(std::path::Path::new(path), text) {
            Ok(t) => themes.push(t),
            Err(e) => errors.push(e),
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    for (p, text) in files {
        match text {
            Ok(text) => match Theme::parse(&p, &text) {
                Ok(t) => themes.push(t),
                Err(e) => errors.push(e),
            },
            Err(e) => errors.push(ConfigError::Io {
                path: p,
                message: e.to_string(),
            }),
        }
    }
    (themes, errors)
}

/// A verdict as a bold `[STATUS]` in its colour (`[…]` while none).
pub fn badge(s: Option<crate::director::Status>, t: &Theme) -> ratatui::text::Span<'static> {
    use ratatui::style::{Modifier, Style};
    match s {
        Some(s) => ratatui::text::Span::styled(
            format!("[{}]", s.as_str()),
            Style::new().fg(t.status(s)).add_modifier(Modifier::BOLD),
        ),
        None => ratatui::text::Span::styled("[…]", Style::new().fg(t.dim)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_bad_colours_are_located() {
        let (themes, errors) = load_all();
        assert!(errors.is_empty(), "{errors:?}");
        let names: Vec<&str> = themes.iter().map(|t| t.name.as_str()).take(4).collect();
        assert_eq!(names, ["dark", "light", "high-contrast", "no-color"]);
        assert!(!themes[0].markers && themes[2].markers && themes[3].markers);
        assert_eq!(default_index(&themes, Some("1")), 3);
        assert_eq!(default_index(&themes, Some("")), 0);
        assert_eq!(default_index(&themes, None), 0);
        let bad = BUILTIN[0].1.replace("#9ece6a", "greenish");
        let e = Theme::parse(std::path::Path::new("mine.toml"), &bad).unwrap_err();
        let s = e.to_string();
        assert!(s.starts_with("mine.toml:"), "{s}");
        assert!(s.contains("pass") && s.contains("greenish"), "{s}");
    }
}
