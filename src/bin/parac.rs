//! `parac FILE.parac`: shows what the compiler understood of a ParaC program: the IR of every
//! function and, per parallel region, its dimensions, sizes, accesses, border reach and the
//! feature analysis (`features:` class, parallel dimensions, per matrix point or chunk, offsets
//! and reuse). Errors are printed with their line and column; the exit status is 1 if there
//! were any.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help") {
        eprintln!(
            "usage: parac [--emit-rust] FILE.parac [FILE.parac ...]\n\nPrints the IR and per-region facts (accesses, borders, features) of each\npipeline, or its errors; with --emit-rust, the Rust code the parac! macro expands to."
        );
        return ExitCode::from(2);
    }
    let emit_rust = args.iter().any(|a| a == "--emit-rust");
    let mut failed = false;
    for path in args.iter().filter(|a| !a.starts_with("--")) {
        let source = match std::fs::read_to_string(path) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: cannot read {path}: {e}");
                failed = true;
                continue;
            }
        };
        let out = parac_core::compile_str(&source);
        if emit_rust {
            println!("{}", parac_core::codegen::expand(&out));
        } else {
            print!("{}", parac_core::ir::display::dump(&out.module));
        }
        for d in &out.diagnostics {
            eprint!("{}", d.render(path, &source));
        }
        if !out.diagnostics.is_empty() {
            eprintln!(
                "{path}: {} error{}",
                out.diagnostics.len(),
                if out.diagnostics.len() == 1 { "" } else { "s" }
            );
            failed = true;
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
