//! `parac ir` and `parac emit`.

use std::path::{Path, PathBuf};

use crate::{Failure, Outcome, Target, files};

/// `parac ir FILE...`: the IR dump of each file and its diagnostics; every file is tried.
pub fn ir(paths: &[PathBuf]) -> Outcome {
    let mut failed = false;
    for path in paths {
        let Some((name, source)) = read_or_report(path, &mut failed) else {
            continue;
        };
        let out = parac_core::compile_str(&source);
        let written = out!("{}", parac_core::ir::display::dump(&out.module));
        failed |= report(&name, &source, &out.diagnostics);
        match written {
            Ok(()) => {}
            // Nobody reads on: stop, with the status of what was done.
            Err(Failure::ClosedPipe) if failed => return Err(Failure::Reported),
            Err(e) => return Err(e),
        }
    }
    if failed {
        Err(Failure::Reported)
    } else {
        Ok(())
    }
}

/// `parac emit TARGET FILE`.
pub fn emit(target: Target, path: &Path) -> Outcome {
    match target {
        Target::Rust => emit_rust(path),
        Target::Opencl => {
            let p = files::compile(path)?;
            for f in p.functions() {
                // The baseline program, then each candidate's own program.
                out!("{}", parac_core::codegen::launch::all_programs(f))?;
            }
            Ok(())
        }
        Target::Lir => emit_lir(path),
    }
}

/// `parac emit lir FILE`: the loop IR of each function after lowering and after each pass
/// (diagnostics printed with their line and column, status 1).
fn emit_lir(path: &Path) -> Outcome {
    let mut failed = false;
    let Some((name, source)) = read_or_report(path, &mut failed) else {
        return Err(Failure::Reported);
    };
    let out = parac_core::compile_str(&source);
    let written = out!("{}", parac_core::lir::dump_module(&out.module));
    if report(&name, &source, &out.diagnostics) {
        return Err(Failure::Reported);
    }
    written
}

/// `parac emit rust FILE`: what the `parac!` macro expands to (with a `compile_error!` per
/// diagnostic, which are also printed with their line and column, status 1), formatted.
fn emit_rust(path: &Path) -> Outcome {
    let mut failed = false;
    let Some((name, source)) = read_or_report(path, &mut failed) else {
        return Err(Failure::Reported);
    };
    let out = parac_core::compile_str(&source);
    let tokens = parac_core::codegen::expand(&out);
    // Formatted where the tokens parse as a file (they should); as they are otherwise.
    let text = match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(_) => format!("{tokens}\n"),
    };
    let written = out!("{text}");
    if report(&name, &source, &out.diagnostics) {
        return Err(Failure::Reported);
    }
    written
}

/// The name and text of a program file, or `None` after printing why it cannot be read (and
/// setting `failed`).
fn read_or_report(path: &Path, failed: &mut bool) -> Option<(String, String)> {
    let name = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(source) => Some((name, source)),
        Err(e) => {
            eprintln!("error: cannot read {name}: {e}");
            *failed = true;
            None
        }
    }
}

/// Prints the diagnostics of a file to standard error; whether there were any.
fn report(name: &str, source: &str, diagnostics: &[parac_core::diag::Diagnostic]) -> bool {
    for d in diagnostics {
        eprint!("{}", d.render(name, source));
    }
    if !diagnostics.is_empty() {
        eprintln!(
            "{name}: {} error{}",
            diagnostics.len(),
            if diagnostics.len() == 1 { "" } else { "s" }
        );
    }
    !diagnostics.is_empty()
}
