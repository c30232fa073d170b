//! The workbench's edge (issue 23): the terminal loop and every task that does I/O — the
//! store, the model, the vault's files — answering the app with `UiMsg`s. Only this folder
//! performs I/O (the `Runtime` in core.rs carries out every command); the app and the panes
//! stay pure.

pub(crate) mod chat_run;
mod core;
#[cfg(test)]
pub(crate) use core::save_rules_file;
pub use core::{Runtime, Services};
pub(crate) mod compare;
pub(crate) mod conversations;
pub(crate) mod interview_run;
pub(crate) mod patterns_run;
pub(crate) mod request;
pub(crate) mod runs_run;
pub(crate) mod term;
