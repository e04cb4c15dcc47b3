//! `parac cache`: where parac's caches are, removing them, and the plan cache as one file.

use std::path::PathBuf;

use crate::{Failure, Outcome};

/// The subcommands of `parac cache`.
#[derive(clap::Subcommand)]
pub enum CacheCommand {
    /// Prints the directory of parac's caches (program binaries in programs/, plans in plans/).
    Path,
    /// Removes the program and plan caches.
    Clear,
    /// Writes the plan cache (plans of this parac's search version) as one text file.
    Export {
        /// The file to write; `-`: standard output.
        file: PathBuf,
    },
    /// Merges such a file into the plan cache (a complete search in the file replaces what is
    /// there).
    Import {
        /// The file to read; `-`: standard input.
        file: PathBuf,
    },
}

/// `parac cache ...`.
pub fn cache(command: CacheCommand) -> Outcome {
    let cache = parac::Config::from_env()?.cache;
    let root = cache
        .location()
        .ok_or_else(|| Failure::Error("this system has no user cache directory".to_string()))?;
    let plans = root.join("plans");
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    match command {
        CacheCommand::Path => {
            outln!("{}", root.display())?;
            if !cache.enabled {
                eprintln!("(PARAC_CACHE=0: the runtime does not use it now)");
            } else if cache.read_only {
                eprintln!("(PARAC_CACHE=read-only: the runtime reads it, never writes it)");
            }
        }
        CacheCommand::Clear => {
            let removed = parac::opencl::clear_cache(&root)?;
            for d in &removed {
                eprintln!("removed {}", d.display());
            }
            if removed.is_empty() {
                eprintln!("{}: nothing to remove", root.display());
            }
        }
        CacheCommand::Export { file } => {
            let (bundle, n) = parac::opencl::export_plans(&plans)?;
            if file.as_os_str() == "-" {
                out!("{bundle}")?;
            } else {
                std::fs::write(&file, &bundle)
                    .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
            }
            eprintln!(
                "exported {n} plan file{} from {}",
                plural(n),
                plans.display()
            );
        }
        CacheCommand::Import { file } => {
            let text = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())
            } else {
                std::fs::read_to_string(&file)
            }
            .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            let n = parac::opencl::import_plans(&text, &plans)
                .map_err(|e| format!("{}: {e}", file.display()))?;
            eprintln!(
                "imported {n} plan file{} into {}",
                plural(n),
                plans.display()
            );
        }
    }
    Ok(())
}
