//! `kakeai dict`: build and inspect the IPADIC dictionary used by the lindera analyzer.

use std::path::PathBuf;

use clap::Subcommand;

use crate::text::analyzer::lindera;

#[derive(Subcommand, Debug)]
pub enum DictCommand {
    /// Build the dictionary from MeCab IPADIC sources (apt-get install mecab-ipadic).
    Install {
        /// Directory with the IPADIC sources (matrix.def, char.def, unk.def, *.csv).
        #[arg(long)]
        from: Option<PathBuf>,
        /// Where to put the built dictionary (default: the data dir).
        #[arg(long)]
        to: Option<PathBuf>,
    },
    /// Say where the dictionary is and whether it is installed.
    Status,
}

pub fn run(cmd: DictCommand) -> i32 {
    match cmd {
        DictCommand::Install { from, to } => {
            let src = match from.or_else(lindera::find_ipadic_sources) {
                Some(s) => s,
                None => {
                    let searched: Vec<String> = lindera::candidate_source_dirs()
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect();
                    eprintln!(
                        "kakeai: no MeCab IPADIC sources found (searched: {}).\n\
                         Install them with `apt-get install mecab-ipadic`, or pass --from DIR.",
                        searched.join(", ")
                    );
                    return 2;
                }
            };
            let Some(out) = to.or_else(lindera::default_dict_dir) else {
                eprintln!("kakeai: no data directory (HOME unset?); pass --to DIR");
                return 2;
            };
            eprintln!(
                "kakeai: building IPADIC from {} into {} …",
                src.display(),
                out.display()
            );
            match lindera::build_dictionary(&src, &out) {
                Ok(r) => {
                    println!(
                        "installed lindera-ipadic dictionary at {} ({:.1} s, {:.1} MB)",
                        r.out_dir.display(),
                        r.seconds,
                        r.bytes_on_disk as f64 / 1e6
                    );
                    0
                }
                Err(e) => {
                    eprintln!("kakeai: {e}");
                    1
                }
            }
        }
        DictCommand::Status => {
            let dir = lindera::default_dict_dir();
            match &dir {
                Some(d) if lindera::is_installed(d) => println!("installed: {}", d.display()),
                Some(d) => println!("not installed (would be at {})", d.display()),
                None => println!("no data directory"),
            }
            match lindera::find_ipadic_sources() {
                Some(s) => println!("sources: {}", s.display()),
                None => println!("sources: none found (apt-get install mecab-ipadic)"),
            }
            0
        }
    }
}
