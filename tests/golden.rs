//! Golden tests: the IR the compiler builds for every program in `tests/in/*.parac` and for the
//! `parac!` block of every example, compared with `tests/out/`. When a change of the compiler's
//! understanding is intended, rewrite the expectations with `PARAC_BLESS=1 cargo test --test
//! golden` and review the diff. Next to each `tests/out/NAME.ir` of a `tests/in` program,
//! `NAME.lir` holds its loop IR after lowering and after each pass; `tests/out/backends/` holds
//! every stage, the OpenCL C and the CPU Rust included, of the programs of `tests/in/backends/`.

use std::fs;
use std::path::{Path, PathBuf};

/// What the compiler understood of a program: its IR dump and rendered diagnostics.
fn render(name: &str, source: &str) -> String {
    let out = parac_core::compile_str(source);
    let mut text = parac_core::ir::display::dump(&out.module);
    for d in &out.diagnostics {
        text.push_str(&d.render(name, source));
    }
    text
}

/// The content of the first `parac! { ... }` in a Rust file (comments skipped when matching
/// braces).
fn parac_block(rust: &str) -> Option<String> {
    let start = rust.find("parac! {").or_else(|| rust.find("parac!{"))?;
    let open = start + rust[start..].find('{')?;
    let bytes = rust.as_bytes();
    let (mut depth, mut i) = (0usize, open);
    while i < bytes.len() {
        match bytes[i] {
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    // Keep line numbers as in the Rust file for readable diagnostics.
                    let pad = "\n".repeat(rust[..open].matches('\n').count());
                    return Some(format!("{pad}{}", &rust[open + 1..i]));
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.extension().is_some_and(|e| e == ext));
    v.sort();
    v
}

fn compare(expected_path: &Path, actual: &str, failures: &mut Vec<String>) {
    if std::env::var_os("PARAC_BLESS").is_some() {
        fs::write(expected_path, actual).expect("write golden file");
        return;
    }
    match fs::read_to_string(expected_path) {
        Ok(expected) if expected == actual => {}
        Ok(expected) => {
            let line = expected
                .lines()
                .zip(actual.lines())
                .position(|(a, b)| a != b)
                .map_or_else(
                    || expected.lines().count().min(actual.lines().count()) + 1,
                    |l| l + 1,
                );
            failures.push(format!(
                "{} differs from the compiler's output, first at line {line}:\n  expected: {:?}\n  actual:   {:?}",
                expected_path.display(),
                expected.lines().nth(line - 1).unwrap_or(""),
                actual.lines().nth(line - 1).unwrap_or("")
            ));
        }
        Err(_) => failures.push(format!(
            "{} is missing (run with PARAC_BLESS=1)",
            expected_path.display()
        )),
    }
}

#[test]
fn golden_ir() {
    let mut failures = Vec::new();
    let mut count = 0;
    for path in files("tests/in", "parac") {
        let source = fs::read_to_string(&path).expect("read input");
        let name = format!("tests/in/{}", path.file_name().unwrap().to_string_lossy());
        let out = Path::new("tests/out")
            .join(path.file_stem().unwrap())
            .with_extension("ir");
        compare(&out, &render(&name, &source), &mut failures);
        let lir = parac_core::lir::dump_module(&parac_core::compile_str(&source).module);
        compare(&out.with_extension("lir"), &lir, &mut failures);
        count += 1;
    }
    for path in files("examples", "rs")
        .into_iter()
        .chain(files("examples/pipelines", "rs"))
    {
        let rust = fs::read_to_string(&path).expect("read example");
        let Some(block) = parac_block(&rust) else {
            continue;
        };
        let name = format!("examples/{}", path.file_name().unwrap().to_string_lossy());
        let text = render(&name, &block);
        assert!(
            !text.contains("error:"),
            "example {name} does not pass the front end:\n{text}"
        );
        let out = Path::new("tests/out").join(format!(
            "example_{}.ir",
            path.file_stem().unwrap().to_string_lossy()
        ));
        compare(&out, &text, &mut failures);
        count += 1;
    }
    assert!(count > 0, "no golden inputs found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every stage of the small programs of `tests/in/backends/`, as naga keeps `tests/in` →
/// `tests/out/<backend>`: the IR (`NAME.ir`), the loop IR after lowering and after each pass
/// (`NAME.lir`), the OpenCL C of the baseline and of every candidate plan (`NAME.cl.txt`) and the
/// Rust `parac!` expands to, formatted (`NAME.rs.txt`), in `tests/out/backends/`. The programs are
/// small so that a change of either printer reads as a diff (the other `tests/in` programs would
/// make 11 MB of these); `.txt` keeps the generated code out of the tree's own sources.
#[cfg(feature = "cli")]
#[test]
fn golden_backends() {
    let mut failures = Vec::new();
    let inputs = files("tests/in/backends", "parac");
    assert!(!inputs.is_empty(), "no programs in tests/in/backends");
    for path in inputs {
        let source = fs::read_to_string(&path).expect("read input");
        let name = format!(
            "tests/in/backends/{}",
            path.file_name().unwrap().to_string_lossy()
        );
        let out = Path::new("tests/out/backends").join(path.file_stem().unwrap());
        let compiled = parac_core::compile_str(&source);
        assert!(
            compiled.diagnostics.is_empty(),
            "{name}: {:?}",
            compiled.diagnostics
        );
        compare(
            &out.with_extension("ir"),
            &render(&name, &source),
            &mut failures,
        );
        let lir = parac_core::lir::dump_module(&compiled.module);
        compare(&out.with_extension("lir"), &lir, &mut failures);
        let cl: String = compiled
            .module
            .functions
            .iter()
            .map(parac_core::codegen::launch::all_programs)
            .collect();
        compare(&out.with_extension("cl.txt"), &cl, &mut failures);
        let file = syn::parse2::<syn::File>(parac_core::codegen::expand(&compiled))
            .expect("the expansion parses as a Rust file");
        compare(
            &out.with_extension("rs.txt"),
            &prettyplease::unparse(&file),
            &mut failures,
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn extracts_parac_block() {
    let src = "fn a() {}\nparac! {\n // a } in a comment\n fn f() { } }\nfn main() {}";
    let block = parac_block(src).unwrap();
    assert!(block.contains("fn f() { }"));
    assert!(!block.contains("fn main"));
    assert_eq!(block.lines().position(|l| l.contains("fn f")), Some(3));
}
