//! The writer's visibility pane: the work's entities with each section's and secret's level,
//! keys 0–3 to set a level (for everyone, or for one sister), a secret editor, foreshadowing
//! status against its recommended level, and a live preview of the exact context the chosen
//! sister would get next turn, which scrolls (vis_preview.rs). Saving is a `Command`; the
//! runtime writes the file.

use super::command::{Command, Modal};
use super::error::UiError;
use super::panes::Ask;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::keymap::Action;
use super::theme::Theme;
use super::verbs::Input;
use super::vis_preview::PreviewScroll;
use crate::vault::model::SecretCfg;
use crate::vault::{Item, ItemKind, Level, Work};

/// Whose levels the pane shows and edits: everyone's, or one sister's overrides.
pub const READERS: [Option<&str>; 3] = [None, Some("yana"), Some("ayu")];

pub struct VisPane {
    pub work: Work,
    /// Index into READERS.
    pub reader: usize,
    /// Selected item (index into `items()`).
    pub row: usize,
    /// Edited since the last save.
    pub unsaved: bool,
    /// Every edit bumps this; a save reports the count it wrote, so an edit made while the
    /// file was being written is not mistaken for saved.
    pub edits: u64,
    /// The works of this vault (the tree's top level); `work` is the open one.
    pub works: Vec<String>,
    /// Secret-keeping scorecard rows (issue 15 §2), shown beside each ◆.
    pub scorecard: Vec<crate::vault::scorecard::Row>,
    /// The preview's scroll position and focus.
    pub preview: PreviewScroll,
}

impl VisPane {
    pub fn new(work: Work) -> VisPane {
        let works = vec![work.name.clone()];
        VisPane {
            work,
            reader: 0,
            row: 0,
            unsaved: false,
            edits: 0,
            works,
            scorecard: Vec::new(),
            preview: PreviewScroll::default(),
        }
    }

    /// With the other works of its vault listed (the tree's top level).
    pub fn with_works(work: Work, works: Vec<String>) -> VisPane {
        let mut p = VisPane::new(work);
        if p.works.iter().all(|w| works.contains(w)) {
            p.works = works;
        }
        p
    }

    fn edited(&mut self) {
        self.unsaved = true;
        self.edits += 1;
    }

    /// The work after the open one, wrapping; None when the vault holds only this one.
    pub fn next_work(&self) -> Option<&str> {
        let i = self.works.iter().position(|w| w == &self.work.name)?;
        let next = &self.works[(i + 1) % self.works.len()];
        (next != &self.work.name).then_some(next.as_str())
    }

    pub fn reader(&self) -> Option<&'static str> {
        READERS[self.reader % READERS.len()]
    }

    /// Items grouped by entity (secrets under their entity), foreshadowing last.
    pub fn items(&self) -> Vec<Item> {
        let mut items = self.work.items(self.reader());
        items.sort_by(|a, b| {
            let k = |i: &Item| {
                (
                    i.kind == ItemKind::Foreshadowing,
                    i.entity_type.clone(),
                    i.entity_name.clone(),
                )
            };
            k(a).cmp(&k(b))
        });
        items
    }

    pub fn selected(&self) -> Option<Item> {
        self.items().into_iter().nth(self.row)
    }

    fn secret_mut(&mut self, item: &Item) -> Option<&mut SecretCfg> {
        let id = item.secret_id.as_deref()?;
        self.work
            .visibility
            .entities
            .get_mut(&item.entity_type)?
            .values_mut()
            .flat_map(|e| e.secrets.iter_mut())
            .find(|s| s.id == id)
    }
}

fn reader_label(r: Option<&str>) -> &'static str {
    match r {
        Some("yana") => "やな",
        Some("ayu") => "あゆ",
        _ => "全員",
    }
}

/// What a key in the visibility pane asks of the workbench.
#[derive(Debug, Clone)]
pub enum VisAsk {
    /// Not this pane's key.
    NotMine,
    /// Handled here; the status line to show, if any.
    Done(Option<String>),
    /// Open the secret editor on this item with its fields as YAML.
    EditSecret {
        key: String,
        id: String,
        yaml: String,
    },
    /// Write the work (a copy taken at edit count `edits`).
    Save { work: Box<Work>, edits: u64 },
    /// Open the vault's next work `name` under `root`.
    OpenWork {
        root: std::path::PathBuf,
        name: String,
    },
}

/// The visibility pane's own verbs, bound in `[pane.visibility]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VisVerb {
    NextReader,
    Level0,
    Level1,
    Level2,
    Level3,
    Edit,
    Save,
    NextWork,
}

impl crate::tui::verbs::Verbs for VisVerb {
    const ALL: &'static [(&'static str, Self, &'static str)] = &[
        (
            "next_reader",
            VisVerb::NextReader,
            "levels for everyone / やな / あゆ",
        ),
        (
            "level0",
            VisVerb::Level0,
            "level 0 完全秘匿 (nothing reaches the prompt)",
        ),
        (
            "level1",
            VisVerb::Level1,
            "level 1 認識のみ (a neutral absence notice)",
        ),
        (
            "level2",
            VisVerb::Level2,
            "level 2 内容認識 (reference only, hints allowed)",
        ),
        (
            "level3",
            VisVerb::Level3,
            "level 3 使用可能 (ordinary context)",
        ),
        ("edit", VisVerb::Edit, "edit the selected secret"),
        ("save", VisVerb::Save, "write visibility.yaml"),
        (
            "next_work",
            VisVerb::NextWork,
            "open the vault's next work (runs use it from the next turn)",
        ),
    ];
}

impl VisPane {
    /// The pane's own verbs (reader, levels 0–3, the secret editor, save, next work), the
    /// conversation's moves over its rows, and the preview's scrolling (PgUp/PgDn; j/k and g
    /// once `l` focused it).
    pub fn action(&mut self, input: Input<VisVerb>) -> VisAsk {
        let n = self.items().len();
        let said = |s: String| VisAsk::Done(Some(s));
        let verb = match input {
            Input::Verb(v) => v,
            Input::Global(a) => {
                if let Some(said) = self.preview.action(a) {
                    return VisAsk::Done(said);
                }
                match a {
                    Action::NextTurn => self.row = (self.row + 1).min(n.saturating_sub(1)),
                    Action::PrevTurn => self.row = self.row.saturating_sub(1),
                    _ => return VisAsk::NotMine,
                }
                return VisAsk::Done(None);
            }
        };
        match verb {
            VisVerb::NextReader => {
                self.reader = (self.reader + 1) % READERS.len();
                said(format!("levels for: {}", reader_label(self.reader())))
            }
            VisVerb::Level0 | VisVerb::Level1 | VisVerb::Level2 | VisVerb::Level3 => {
                self.set_level(verb)
            }
            VisVerb::Edit => self.edit_secret(),
            VisVerb::Save if !self.unsaved => said("visibility: nothing changed".into()),
            VisVerb::Save => VisAsk::Save {
                work: Box::new(self.work.clone()),
                edits: self.edits,
            },
            VisVerb::NextWork => self.open_next(),
        }
    }

    fn set_level(&mut self, verb: VisVerb) -> VisAsk {
        let level = match verb {
            VisVerb::Level0 => Level::HIDDEN,
            VisVerb::Level1 => Level::AWARE,
            VisVerb::Level2 => Level::KNOW,
            _ => Level::USE,
        };
        let Some(item) = self.selected() else {
            return VisAsk::Done(None);
        };
        let reader = self.reader();
        self.work.set_level(&item, reader, level);
        self.edited();
        VisAsk::Done(Some(format!(
            "{} → {} {} for {} (unsaved: w writes visibility.yaml)",
            item.key,
            level,
            level.name_ja(),
            reader_label(reader)
        )))
    }

    /// e: the selected secret's fields as YAML (a section has none).
    fn edit_secret(&mut self) -> VisAsk {
        let Some(item) = self.selected() else {
            return VisAsk::Done(None);
        };
        if item.kind != ItemKind::Secret {
            return VisAsk::Done(Some(
                "only a secret has fields to edit; sections take 0–3".into(),
            ));
        }
        let Some(cfg) = self.secret_mut(&item).cloned() else {
            return VisAsk::Done(None);
        };
        VisAsk::EditSecret {
            key: item.key,
            id: cfg.id.clone(),
            yaml: serde_norway::to_string(&cfg).unwrap_or_default(),
        }
    }

    /// W: the vault's next work (after the open one's edits are saved).
    fn open_next(&mut self) -> VisAsk {
        let Some(next) = self.next_work().map(str::to_string) else {
            return VisAsk::Done(Some(format!(
                "{} is the only work in this vault",
                self.work.name
            )));
        };
        if self.unsaved {
            return VisAsk::Done(Some(format!(
                "{} has unsaved edits: w writes them before opening another work",
                self.work.name
            )));
        }
        match self.work.root.parent() {
            Some(root) => VisAsk::OpenWork {
                root: root.to_path_buf(),
                name: next,
            },
            None => VisAsk::Done(None),
        }
    }

    /// Applies the secret editor's YAML to `item_key` after the same checks as loading
    /// (levels, subtlety, unique ids, templates); the status line to show.
    pub fn apply_secret(&mut self, item_key: &str, yaml: &str) -> Result<String, UiError> {
        let gone = || UiError::Missing("the secret is gone".into());
        let new: SecretCfg =
            serde_norway::from_str(yaml).map_err(|e| UiError::Refused(e.to_string()))?;
        let item = self
            .items()
            .into_iter()
            .find(|i| i.key == item_key)
            .ok_or_else(gone)?;
        let mut trial = self.work.clone();
        {
            let mut pane = VisPane::new(trial);
            *pane.secret_mut(&item).ok_or_else(gone)? = new.clone();
            trial = pane.work;
        }
        trial
            .validate("")
            .map_err(|e| UiError::Refused(e.to_string()))?;
        self.work = trial;
        self.edited();
        Ok(format!(
            "{} updated (unsaved: w writes visibility.yaml)",
            new.id
        ))
    }
}

impl VisAsk {
    /// The answer as the workbench carries it out.
    pub fn into_ask(self) -> Ask {
        match self {
            VisAsk::NotMine => Ask::NotMine,
            VisAsk::Done(said) => Ask::Done(said),
            VisAsk::EditSecret { key, id, yaml } => {
                let mut t = ratatui_textarea::TextArea::from(
                    yaml.lines().map(String::from).collect::<Vec<_>>(),
                );
                t.set_block(
                    ratatui::widgets::Block::bordered()
                        .title(format!(" {id} — edit as YAML · ctrl-s apply · Esc cancel ")),
                );
                Ask::Dialog(Box::new(Modal::Secret { key, text: t }))
            }
            VisAsk::Save { work, edits } => {
                Ask::Run(None, vec![Command::SaveVault { work, edits }])
            }
            VisAsk::OpenWork { root, name } => Ask::Run(
                Some(format!("opening {name} …")),
                vec![Command::OpenWork { root, name }],
            ),
        }
    }
}

pub fn render(f: &mut Frame, area: Rect, vis: Option<&VisPane>, t: &Theme) {
    let dim = Style::new().fg(t.dim);
    let Some(vis) = vis else {
        let msg = "no vault loaded — see the status line; start with --vault DIR";
        f.render_widget(Paragraph::new(Line::styled(msg, dim)), area);
        return;
    };
    let [top, tree_area, preview_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Percentage(55),
        Constraint::Min(3),
    ])
    .areas(area);
    let reader = vis.reader();
    let unsaved = if vis.unsaved { " · unsaved" } else { "" };
    let head = Line::from(vec![
        Span::styled(format!("{} · ", vis.work.name), dim),
        Span::styled(
            format!("for {} (a)", reader_label(reader)),
            Style::new().fg(t.accent),
        ),
        Span::styled(format!(" · 0–3 level · e edit · w save{unsaved}"), dim),
    ]);
    f.render_widget(Paragraph::new(super::fit::line(head, top.width)), top);
    let (lines, sel_line) = tree_lines(vis, tree_area.width, t);
    let h = tree_area.height as usize;
    let skip = sel_line.saturating_sub(h.saturating_sub(2));
    let visible: Vec<Line> = lines.into_iter().skip(skip).take(h).collect();
    f.render_widget(
        Paragraph::new(super::fit::lines(visible, tree_area.width)),
        tree_area,
    );

    preview(f, preview_area, vis, reader, t);
}

/// The tree: the vault's works, then every item under its group with its scorecard badge;
/// and the line the selected item is on.
fn tree_lines(vis: &VisPane, width: u16, t: &Theme) -> (Vec<Line<'static>>, usize) {
    let dim = Style::new().fg(t.dim);
    let items = vis.items();
    let mut lines: Vec<Line> = Vec::new();
    // The tree's top level: the vault's works, the open one expanded below.
    if vis.works.len() > 1 {
        let mut spans = vec![Span::styled("works ", dim)];
        for w in &vis.works {
            let open = w == &vis.work.name;
            let (mark, style) = if open {
                ("▾", Style::new().fg(t.accent).add_modifier(Modifier::BOLD))
            } else {
                ("▸", dim)
            };
            spans.push(Span::styled(format!("{mark}{w} "), style));
        }
        spans.push(Span::styled("(W next)", dim));
        lines.push(Line::from(spans));
    }
    let mut sel_line = 0;
    let scores = crate::vault::scorecard::labels(&vis.scorecard, vis.reader());
    let mut group = String::new();
    for (i, it) in items.iter().enumerate() {
        let g = match it.kind {
            ItemKind::Foreshadowing => "foreshadowing".to_string(),
            _ => format!("{}/{}", it.entity_type, it.entity_name),
        };
        if g != group {
            lines.push(Line::styled(
                g.clone(),
                Style::new().fg(t.dim).add_modifier(Modifier::BOLD),
            ));
            group = g;
        }
        if i == vis.row {
            sel_line = lines.len();
        }
        let mut line = item_line(it, i == vis.row, t);
        // The scorecard names a level-0 item by its neutral label, anything else by its id.
        let review_id = if it.level.get() == 0 {
            crate::vault::review::hidden_label(&it.key)
        } else {
            it.secret_id.clone().unwrap_or_else(|| it.key.clone())
        };
        let badge = scores.get(&review_id);
        let used: usize = line
            .spans
            .iter()
            .map(|sp| crate::text::width::width(&sp.content))
            .sum();
        match badge {
            // On a narrow pane the badge gets its own line rather than being cut.
            Some(l) if used + 2 + crate::text::width::width(l) > width as usize => {
                lines.push(line);
                let room = (width as usize).saturating_sub(4).max(8);
                for part in wrap_words(l, room) {
                    lines.push(Line::styled(format!("    {part}"), Style::new().fg(t.dim)));
                }
            }
            Some(l) => {
                line.spans
                    .push(Span::styled(format!("  {l}"), Style::new().fg(t.dim)));
                lines.push(line);
            }
            None => lines.push(line),
        }
    }
    (lines, sel_line)
}

/// The preview: the exact text the next prompt carries for that sister, and what is withheld.
fn preview(f: &mut Frame, preview_area: Rect, vis: &VisPane, reader: Option<&str>, t: &Theme) {
    let who = reader.unwrap_or("yana");
    let name = reader_label(Some(who));
    let lines = super::vis_preview::lines(&vis.work, who, name, preview_area.width.into(), t);
    super::vis_preview::render(f, preview_area, lines, &vis.preview, t);
}

fn item_line(it: &Item, selected: bool, t: &Theme) -> Line<'static> {
    let base = if selected {
        Style::new()
            .fg(t.text)
            .bg(t.selected_bg)
            .add_modifier(Modifier::BOLD)
    } else {
        Style::new().fg(t.text)
    };
    let name = match it.kind {
        ItemKind::Section => it.section_name.clone(),
        ItemKind::Secret => format!("◆{}", it.secret_id.clone().unwrap_or_default()),
        ItemKind::Foreshadowing => format!(
            "{} {}",
            it.secret_id.clone().unwrap_or_default(),
            it.entity_name
        ),
    };
    let level_color = match it.level.get() {
        0 => t.retry,
        1 | 2 => t.warn,
        _ => t.pass,
    };
    let mut spans = vec![
        Span::styled(format!(" {}", pad(&name, 16)), base),
        Span::styled(
            format!(" {} {}", it.level, it.level.name_ja()),
            base.fg(level_color),
        ),
        Span::styled(format!("  {}", it.source.label()), base.fg(t.dim)),
    ];
    if let Some(st) = it.status {
        let ok = st
            .recommended()
            .is_none_or(|(lo, hi)| (lo..=hi).contains(&it.level.get()));
        let mark = if ok { "" } else { " ⚠" };
        spans.push(Span::styled(
            format!("  {}{mark}", st.as_str()),
            base.fg(if ok { t.dim } else { t.warn }),
        ));
    }
    Line::from(spans)
}

/// Pads to a display width (Japanese is two columns a char).
/// `s` wrapped at spaces into lines of at most `cols` display columns (a longer word alone).
fn wrap_words(s: &str, cols: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in s.split(' ').filter(|w| !w.is_empty()) {
        let w = crate::text::width::width(word);
        let used = crate::text::width::width(&cur);
        if !cur.is_empty() && used + 1 + w > cols {
            out.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn pad(s: &str, width: usize) -> String {
    let w = unicode_width::UnicodeWidthStr::width(s);
    if w >= width {
        s.to_string()
    } else {
        format!("{s}{}", " ".repeat(width - w))
    }
}
