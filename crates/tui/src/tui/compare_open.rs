//! The compare view inside the workbench: opened by `kakeai --compare ID` or from the runs
//! browser (ctrl-o: the newest comparison of the selected run), drawn over the body, closed
//! with Esc or q. Loading happens on the store actor; the view itself is `compare_view`.

/// What was asked for: a comparison id, or the newest comparison of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CompareAsk {
    Id(i64),
    OfRun(i64),
}
