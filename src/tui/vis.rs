//! The writer's visibility pane: the work's entities with each section's and secret's level,
//! keys 0–3 to set a level (for everyone, or for one sister), a secret editor, foreshadowing
//! status against its recommended level, and a live preview of the exact context the chosen
//! sister would get next turn. Saving is a `Command`; the runtime writes the file.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui_textarea::TextArea;

use super::app::{App, Command, Modal};
use super::keymap::Action;
use super::theme::Theme;
use super::wrap::wrap;
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

impl App {
    /// Keys of the visibility pane. Returns None when the key is not the pane's.
    pub(super) fn vis_action(&mut self, action: Action) -> Option<Vec<Command>> {
        let vis = self.vis.as_mut()?;
        let n = vis.items().len();
        match action {
            Action::NextTurn | Action::NextField => {
                vis.row = (vis.row + 1).min(n.saturating_sub(1))
            }
            Action::PrevTurn | Action::PrevField => vis.row = vis.row.saturating_sub(1),
            Action::PageDown => vis.row = (vis.row + 8).min(n.saturating_sub(1)),
            Action::PageUp => vis.row = vis.row.saturating_sub(8),
            Action::NextReader => {
                vis.reader = (vis.reader + 1) % READERS.len();
                self.status = format!("levels for: {}", reader_label(vis.reader()));
            }
            Action::SetLevel0 | Action::SetLevel1 | Action::SetLevel2 | Action::SetLevel3 => {
                let level = match action {
                    Action::SetLevel0 => Level::HIDDEN,
                    Action::SetLevel1 => Level::AWARE,
                    Action::SetLevel2 => Level::KNOW,
                    _ => Level::USE,
                };
                let item = vis.selected()?;
                let reader = vis.reader();
                vis.work.set_level(&item, reader, level);
                vis.edited();
                self.status = format!(
                    "{} → {} {} for {} (unsaved: w writes visibility.yaml)",
                    item.key,
                    level,
                    level.name_ja(),
                    reader_label(reader)
                );
            }
            Action::EditSecret => return self.edit_secret(),
            Action::SaveRules => {
                if !vis.unsaved {
                    self.status = "visibility: nothing changed".into();
                    return Some(Vec::new());
                }
                return Some(vec![Command::SaveVault {
                    work: Box::new(vis.work.clone()),
                    edits: vis.edits,
                }]);
            }
            Action::NextWork => return self.next_work(),
            _ => return None,
        }
        Some(Vec::new())
    }

    /// e: the selected secret's fields as YAML in an editor (a section has none).
    fn edit_secret(&mut self) -> Option<Vec<Command>> {
        let vis = self.vis.as_mut()?;
        let item = vis.selected()?;
        if item.kind != ItemKind::Secret {
            self.status = "only a secret has fields to edit; sections take 0–3".into();
            return Some(Vec::new());
        }
        let cfg = vis.secret_mut(&item)?.clone();
        let yaml = serde_norway::to_string(&cfg).unwrap_or_default();
        let mut t = TextArea::from(yaml.lines().map(String::from).collect::<Vec<_>>());
        t.set_block(ratatui::widgets::Block::bordered().title(format!(
            " {} — edit as YAML · ctrl-s apply · Esc cancel ",
            cfg.id
        )));
        self.modal = Some(Modal::Secret {
            key: item.key,
            text: t,
        });
        Some(Vec::new())
    }

    /// W: the vault's next work (after the open one's edits are saved).
    fn next_work(&mut self) -> Option<Vec<Command>> {
        let vis = self.vis.as_mut()?;
        let Some(next) = vis.next_work().map(str::to_string) else {
            self.status = format!("{} is the only work in this vault", vis.work.name);
            return Some(Vec::new());
        };
        if vis.unsaved {
            self.status = format!(
                "{} has unsaved edits: w writes them before opening another work",
                vis.work.name
            );
            return Some(Vec::new());
        }
        self.status = format!("opening {next} …");
        Some(vec![Command::OpenWork {
            root: vis.work.root.parent().map(|p| p.to_path_buf())?,
            name: next,
        }])
    }

    /// The secret editor: Enter is a newline, ctrl-s applies, Esc cancels.
    pub(super) fn secret_key(&mut self, key: KeyEvent) -> bool {
        let Some(Modal::Secret {
            key: item_key,
            text,
        }) = self.modal.as_mut()
        else {
            return false;
        };
        if key.code == KeyCode::Char('s') && key.modifiers.contains(KeyModifiers::CONTROL) {
            let yaml = text.lines().join("\n");
            let item_key = item_key.clone();
            match self.apply_secret(&item_key, &yaml) {
                Ok(()) => self.modal = None,
                Err(e) => self.fail(format!("secret not applied: {e}")),
            }
        } else if key.code == KeyCode::Esc {
            self.modal = None;
        } else {
            text.input(key);
        }
        true
    }

    fn apply_secret(&mut self, item_key: &str, yaml: &str) -> Result<(), String> {
        let vis = self.vis.as_mut().ok_or("no vault")?;
        let new: SecretCfg = serde_norway::from_str(yaml).map_err(|e| e.to_string())?;
        let item = vis
            .items()
            .into_iter()
            .find(|i| i.key == item_key)
            .ok_or("the secret is gone")?;
        let mut trial = vis.work.clone();
        {
            let mut pane = VisPane::new(trial);
            *pane.secret_mut(&item).ok_or("the secret is gone")? = new.clone();
            trial = pane.work;
        }
        // The same checks as loading: levels, subtlety, unique ids, templates.
        trial.validate("").map_err(|e| e.to_string())?;
        vis.work = trial;
        vis.edited();
        self.status = format!("{} updated (unsaved: w writes visibility.yaml)", new.id);
        Ok(())
    }
}

pub fn render(f: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let dim = Style::new().fg(t.dim);
    let Some(vis) = &app.vis else {
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
    f.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(format!("{} · ", vis.work.name), dim),
            Span::styled(
                format!("for {} (a)", reader_label(reader)),
                Style::new().fg(t.accent),
            ),
            Span::styled(format!(" · 0–3 level · e edit · w save{unsaved}"), dim),
        ])),
        top,
    );
    let (lines, sel_line) = tree_lines(vis, tree_area.width, t);
    let h = tree_area.height as usize;
    let skip = sel_line.saturating_sub(h.saturating_sub(2));
    let visible: Vec<Line> = lines.into_iter().skip(skip).take(h).collect();
    f.render_widget(Paragraph::new(visible), tree_area);

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
    let dim = Style::new().fg(t.dim);
    let who = reader.unwrap_or("yana");
    let ctx = vis.work.context(Some(who));
    let head = format!(
        "── next turn, {} is told ({} chars) ──",
        reader_label(Some(who)),
        ctx.prompt.chars().count()
    );
    // Counts only, never content: the writer sees at a glance that her secrets are held.
    let w = ctx.withheld;
    let held = format!(
        "withheld: {} hidden · {} notice only · {} reference only · {} given",
        w.level0, w.level1, w.level2, w.given
    );
    let width = preview_area.width.max(1) as usize;
    let mut pl = vec![Line::styled(head, dim)];
    pl.extend(wrap(&held, width).into_iter().map(|l| Line::styled(l, dim)));
    for l in ctx.prompt.lines() {
        for w in wrap(l, width) {
            pl.push(Line::styled(w, Style::new().fg(t.text)));
        }
    }
    f.render_widget(Paragraph::new(pl), preview_area);
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
