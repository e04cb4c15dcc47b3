//! The `parac` command.
//!
//! - `parac FILE.parac ...`: shows what the compiler understood of a ParaC program: the IR of
//!   every function and, per parallel region, its dimensions, sizes, accesses, border reach and
//!   the feature analysis. With `--emit-rust`, the Rust code the `parac!` macro expands to.
//!   Errors are printed with their line and column; the exit status is 1 if there were any.
//! - `parac run FILE.parac ...`: compiles the program at run time (`parac::Pipeline`) and runs
//!   one function on files (PNG or `.npy` in, `.npy` and PNG out).
//! - `parac emit opencl FILE.parac`: prints the OpenCL C program of each function.
//! - `parac tune FILE ...`: searches the plans of a program's functions (a `.parac` file, or the
//!   `parac! { ... }` blocks of a Rust file such as an example's pipeline) on the present device
//!   at the given sizes, to its end, and writes them to the plan cache.
//! - `parac cache path|clear|export FILE|import FILE`: where parac's caches are, removing them,
//!   and the plan cache as one file to ship or install.
//!
//! Usage errors exit with status 2 and the usage text.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use parac::pipeline::{Arg, Data, Tensor, Val, matrix_of, tensor_of};
use parac::{Matrix, Pipeline, PlanPolicy, Runtime};
use parac_core::ir::{Function, MatrixKind, ParamRef, Scalar};

const USAGE: &str = "usage:
  parac [--emit-rust] FILE.parac [FILE.parac ...]
      Prints the IR and per-region facts (accesses, borders, features) of each pipeline, or
      its errors; with --emit-rust, the Rust code the parac! macro expands to.
  parac run FILE.parac [--function NAME] --in NAME=PATH ... [--set NAME=VALUE ...]
            --out DIR [--device SPEC]
      Compiles FILE at run time and runs one function (the only one, or NAME): each input
      matrix from a file (.png: u8 or u16 gray, f32[3][M][N] planar RGB; .npy: the exact
      element type), each scalar parameter (and any size symbol that only an output binds)
      from --set; writes each output to DIR/NAME.npy and, where it has 2 or 3 dimensions, a
      PNG view DIR/NAME.png; prints the return value, if any. --device: cpu, opencl,
      opencl:<name> or auto (default: PARAC_DEVICE, else auto).
  parac emit opencl FILE.parac
      Prints the OpenCL C program of each function.
  parac tune FILE [--function NAME] [--size NAME=V ...] [--set NAME=VALUE ...]
             [--in NAME=PATH ...] [--device SPEC]
      Searches the plans of every function of FILE (or of NAME) on the present OpenCL device,
      each region's search run to its end (no budget), and writes them to the plan cache, so
      that later calls at these sizes (and any size of the same size class: each dimension's
      next power of two) start with the searched plans. FILE: a .parac program, or a Rust
      file whose parac! { ... } blocks are taken (e.g. examples/pipelines/blur.rs). Sizes
      from --size (or from the --in inputs); inputs not given are random; scalar parameters
      not given by --set are 1.
  parac cache path | clear | export FILE | import FILE
      path: prints the directory of parac's caches (program binaries in programs/, plans in
      plans/). clear: removes both. export: writes the plan cache (plans of this parac's
      search version) as one text file (FILE `-`: standard output). import: merges such a
      file into the plan cache (a complete search in the file replaces what is there).";

/// A usage error: the message, then the usage text, status 2.
fn usage(message: &str) -> ExitCode {
    if !message.is_empty() {
        eprintln!("error: {message}\n");
    }
    eprintln!("{USAGE}");
    ExitCode::from(2)
}

/// An error while doing the work: status 1.
fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::FAILURE
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "-h" || a == "--help") {
        return usage("");
    }
    match args[0].as_str() {
        "run" => run(&args[1..]),
        "emit" => emit(&args[1..]),
        "tune" => tune(&args[1..]),
        "cache" => cache(&args[1..]),
        _ => dump(&args),
    }
}

/// `parac [--emit-rust] FILE...`.
fn dump(args: &[String]) -> ExitCode {
    let emit_rust = args.iter().any(|a| a == "--emit-rust");
    if let Some(a) = args
        .iter()
        .find(|a| a.starts_with("--") && *a != "--emit-rust")
    {
        return usage(&format!("unknown option `{a}`"));
    }
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

/// Reads and compiles a program (its diagnostics are the error).
fn compile(path: &str) -> Result<Pipeline, ExitCode> {
    let source =
        std::fs::read_to_string(path).map_err(|e| fail(format!("cannot read {path}: {e}")))?;
    Pipeline::compile_named(path, &source).map_err(|e| match e {
        parac::Error::Compile { message } => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
        e => fail(e),
    })
}

/// `parac emit opencl FILE.parac`.
fn emit(args: &[String]) -> ExitCode {
    let [target, path] = args else {
        return usage("`emit` takes a target and one file: parac emit opencl FILE.parac");
    };
    if target != "opencl" {
        return usage(&format!("unknown target `{target}` (known: opencl)"));
    }
    let p = match compile(path) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let mut out = std::io::stdout().lock();
    for f in p.functions() {
        // The baseline program, then each candidate's own program.
        let source = parac_core::codegen::launch::all_programs(f);
        // A closed pipe (`| head`) ends the output quietly.
        if out.write_all(source.as_bytes()).is_err() {
            break;
        }
    }
    ExitCode::SUCCESS
}

/// The options of `parac run` and `parac tune`.
struct RunOptions {
    file: String,
    function: Option<String>,
    inputs: Vec<(String, PathBuf)>,
    /// `--set` and (`tune`) `--size`: scalar parameters and sizes.
    sets: Vec<(String, String)>,
    out: PathBuf,
    device: Option<String>,
    /// `tune`: inputs not given are random, scalars not given are 1, names a function does not
    /// have are left to the others.
    tune: bool,
}

fn parse_run(args: &[String], tune: bool) -> Result<RunOptions, String> {
    let cmd = if tune { "tune" } else { "run" };
    let mut file = None;
    let mut function = None;
    let mut inputs = Vec::new();
    let mut sets = Vec::new();
    let mut out = None;
    let mut device = None;
    let mut it = args.iter();
    let pair = |opt: &str, v: Option<&String>| -> Result<(String, String), String> {
        let v = v.ok_or_else(|| format!("`{opt}` needs NAME=VALUE"))?;
        match v.split_once('=') {
            Some((n, x)) if !n.is_empty() => Ok((n.to_string(), x.to_string())),
            _ => Err(format!("`{opt} {v}`: expected NAME=VALUE")),
        }
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--function" => {
                function = Some(it.next().ok_or("`--function` needs a name")?.clone());
            }
            "--in" => {
                let (n, p) = pair("--in", it.next())?;
                inputs.push((n, PathBuf::from(p)));
            }
            "--set" => sets.push(pair("--set", it.next())?),
            "--size" if tune => sets.push(pair("--size", it.next())?),
            "--out" if !tune => {
                out = Some(PathBuf::from(it.next().ok_or("`--out` needs a directory")?))
            }
            "--device" => device = Some(it.next().ok_or("`--device` needs a device")?.clone()),
            o if o.starts_with("--") => return Err(format!("unknown option `{o}`")),
            f if file.is_none() => file = Some(f.to_string()),
            f => return Err(format!("unexpected argument `{f}` (one program file)")),
        }
    }
    Ok(RunOptions {
        file: file.ok_or(format!("`{cmd}` needs a program file"))?,
        function,
        inputs,
        sets,
        out: match out {
            Some(o) => o,
            None if tune => PathBuf::new(),
            None => return Err("`run` needs `--out DIR`".to_string()),
        },
        device,
        tune,
    })
}

/// A scalar value of type `t` from the command line.
fn parse_scalar(text: &str, t: Scalar) -> Option<Val> {
    let text = text.trim();
    let v = match t {
        Scalar::F32 => Val::F32(text.parse().ok()?),
        Scalar::Bool => match text {
            "true" | "1" => Val::Bool(true),
            "false" | "0" => Val::Bool(false),
            _ => return None,
        },
        _ => Val::Int(text.parse().ok()?),
    };
    v.fits(t).then_some(v)
}

/// Reads matrix `name` of element type `t` and rank `rank` from a `.png` or `.npy` file.
fn load(path: &Path, name: &str, t: Scalar, rank: usize) -> Result<Tensor, String> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let err = |e: parac::Error| e.to_string();
    let tensor = match ext.as_deref() {
        Some("png") => match (t, rank) {
            (Scalar::U8, 2) => tensor_of(parac::io::load_png::<u8>(path).map_err(err)?),
            (Scalar::U16, 2) => tensor_of(parac::io::load_png::<u16>(path).map_err(err)?),
            (Scalar::F32, 3) => tensor_of(parac::io::load_png::<f32>(path).map_err(err)?),
            _ => {
                return Err(format!(
                    "`{name}` is a {rank}-dimensional {t} matrix: a PNG gives u8 or u16 [M][N] or \
                     f32 [3][M][N]; use a .npy file"
                ));
            }
        },
        Some("npy") => match t {
            Scalar::U8 => tensor_of(Matrix::<u8>::read_npy(path).map_err(err)?),
            Scalar::I8 => tensor_of(Matrix::<i8>::read_npy(path).map_err(err)?),
            Scalar::U16 => tensor_of(Matrix::<u16>::read_npy(path).map_err(err)?),
            Scalar::I16 => tensor_of(Matrix::<i16>::read_npy(path).map_err(err)?),
            Scalar::U32 => tensor_of(Matrix::<u32>::read_npy(path).map_err(err)?),
            Scalar::I32 => tensor_of(Matrix::<i32>::read_npy(path).map_err(err)?),
            Scalar::F32 => tensor_of(Matrix::<f32>::read_npy(path).map_err(err)?),
            _ => return Err(format!("`{name}`: no .npy type for {t}")),
        },
        _ => {
            return Err(format!("{}: expected a .png or .npy file", path.display()));
        }
    };
    tensor.ok_or_else(|| format!("`{name}`: cannot hold {t}"))
}

/// Writes an output: `.npy` always, a PNG view for 2 or 3 dimensions; the paths written.
fn save(dir: &Path, name: &str, t: &Tensor) -> Result<Vec<PathBuf>, String> {
    fn both<T: parac::Element>(
        m: Matrix<T>,
        dir: &Path,
        name: &str,
    ) -> Result<Vec<PathBuf>, String> {
        let npy = dir.join(format!("{name}.npy"));
        m.write_npy(&npy).map_err(|e| e.to_string())?;
        let mut out = vec![npy];
        if (2..=3).contains(&m.ndim()) && !m.is_empty() {
            let png = dir.join(format!("{name}.png"));
            parac::io::save_png_view(&m, &png).map_err(|e| e.to_string())?;
            out.push(png);
        }
        Ok(out)
    }
    let bad = || format!("`{name}`: no file type for its elements");
    match &t.data {
        Data::U8(_) => both(matrix_of::<u8>(t).ok_or_else(bad)?, dir, name),
        Data::I8(_) => both(matrix_of::<i8>(t).ok_or_else(bad)?, dir, name),
        Data::U16(_) => both(matrix_of::<u16>(t).ok_or_else(bad)?, dir, name),
        Data::I16(_) => both(matrix_of::<i16>(t).ok_or_else(bad)?, dir, name),
        Data::U32(_) => both(matrix_of::<u32>(t).ok_or_else(bad)?, dir, name),
        Data::I32(_) => both(matrix_of::<i32>(t).ok_or_else(bad)?, dir, name),
        Data::F32(_) => both(matrix_of::<f32>(t).ok_or_else(bad)?, dir, name),
        _ => Err(bad()),
    }
}

/// The arguments of `f` from the options: inputs read, outputs zero-filled at the shape their
/// declaration gives with the sizes bound by the inputs (or `--set`), scalars parsed.
/// Under `tune`, names of other functions' parameters and sizes are theirs (`tune` checks that
/// some function has each).
fn arguments(f: &Function, o: &RunOptions) -> Result<Vec<Arg>, String> {
    if !o.tune {
        check_names(f, o)?;
    }
    arguments_checked(f, o)
}

/// Every `--in` and `--set` name is one of `f`'s.
fn check_names(f: &Function, o: &RunOptions) -> Result<(), String> {
    for (n, _) in &o.inputs {
        let known = f.params.iter().any(|p| match p {
            ParamRef::Matrix(m) => f.matrices[*m].name == *n,
            ParamRef::Scalar(_) => false,
        });
        if !known {
            return Err(format!("`{}` has no matrix parameter `{n}`", f.name));
        }
    }
    for (n, _) in &o.sets {
        let known = f.scalars.iter().any(|s| s.name == *n) || f.sizes.iter().any(|s| s.name == *n);
        if !known {
            return Err(format!(
                "`{}` has no scalar parameter or size `{n}`",
                f.name
            ));
        }
    }
    Ok(())
}

/// Whether `f` has a matrix parameter, scalar parameter or size called `n`.
fn knows(f: &Function, n: &str) -> bool {
    f.scalars.iter().any(|s| s.name == n)
        || f.sizes.iter().any(|s| s.name == n)
        || f.params.iter().any(|p| match p {
            ParamRef::Matrix(m) => f.matrices[*m].name == n,
            ParamRef::Scalar(_) => false,
        })
}

/// `arguments` once the names are checked.
fn arguments_checked(f: &Function, o: &RunOptions) -> Result<Vec<Arg>, String> {
    let mut tensors: Vec<Option<Tensor>> = vec![None; f.matrices.len()];
    for p in &f.params {
        let ParamRef::Matrix(m) = p else { continue };
        let mat = &f.matrices[*m];
        match o.inputs.iter().find(|(n, _)| *n == mat.name) {
            Some((_, path)) => {
                tensors[*m] = Some(load(path, &mat.name, mat.elem, mat.dims.len())?);
            }
            None if mat.kind == MatrixKind::Input && !o.tune => {
                return Err(format!(
                    "input `{}` needs `--in {}=PATH`",
                    mat.name, mat.name
                ));
            }
            None => {}
        }
    }
    // Sizes: from the matrices read, else from `--set`.
    let mut sizes = Vec::new();
    for s in &f.sizes {
        let (m, d) = s.bound_by;
        let v = match (&tensors[m], o.sets.iter().find(|(n, _)| *n == s.name)) {
            (Some(t), _) => t.shape.get(d).copied().unwrap_or(0) as i64,
            (None, Some((_, v))) => v
                .trim()
                .parse::<i64>()
                .map_err(|_| format!("size `{}`: `{v}` is not an integer", s.name))?,
            (None, None) if o.tune => {
                return Err(format!(
                    "`{}`: size `{}` needs `--size {}=VALUE` (or `--in {}=PATH`)",
                    f.name, s.name, s.name, f.matrices[m].name
                ));
            }
            (None, None) => {
                return Err(format!(
                    "size `{}` is bound by output `{}`: give it with `--set {}=VALUE` or the \
                     output with `--in {}=PATH`",
                    s.name, f.matrices[m].name, s.name, f.matrices[m].name
                ));
            }
        };
        sizes.push(v);
    }
    let dims = parac_core::interp::matrix_dims(f, &sizes).map_err(|e| e.to_string())?;
    let mut args = Vec::new();
    for p in &f.params {
        match p {
            ParamRef::Matrix(m) => {
                let mat = &f.matrices[*m];
                let t = match tensors[*m].take() {
                    Some(t) => t,
                    None => {
                        let shape: Vec<usize> =
                            dims[*m].iter().map(|d| (*d).max(0) as usize).collect();
                        let mut t = Tensor::zeros(mat.elem, shape)
                            .ok_or_else(|| format!("`{}`: no matrix of {}", mat.name, mat.elem))?;
                        if mat.kind == MatrixKind::Input {
                            randomize(&mut t.data, *m as u64);
                        }
                        t
                    }
                };
                args.push(Arg::Matrix(t));
            }
            ParamRef::Scalar(s) => {
                let sc = &f.scalars[*s];
                let text = match o.sets.iter().find(|(n, _)| *n == sc.name) {
                    Some((_, text)) => text.as_str(),
                    None if o.tune => "1",
                    None => {
                        return Err(format!(
                            "scalar `{}: {}` needs `--set {}=VALUE`",
                            sc.name, sc.ty, sc.name
                        ));
                    }
                };
                let v = parse_scalar(text, sc.ty).ok_or_else(|| {
                    format!("`--set {}={text}`: not a value of {}", sc.name, sc.ty)
                })?;
                args.push(Arg::Scalar(v));
            }
        }
    }
    Ok(args)
}

/// `parac run ...`.
fn run(args: &[String]) -> ExitCode {
    let o = match parse_run(args, false) {
        Ok(o) => o,
        Err(e) => return usage(&e),
    };
    let p = match compile(&o.file) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let f = match &o.function {
        Some(name) => match p.function(name) {
            Some(f) => f,
            None => {
                let names: Vec<&str> = p.functions().iter().map(|f| &*f.name).collect();
                return usage(&format!(
                    "{}: no function `{name}` (it has: {})",
                    o.file,
                    names.join(", ")
                ));
            }
        },
        None => match p.functions() {
            [f] => f,
            fs => {
                let names: Vec<&str> = fs.iter().map(|f| &*f.name).collect();
                return usage(&format!(
                    "{} has {} functions ({}): pick one with --function NAME",
                    o.file,
                    fs.len(),
                    names.join(", ")
                ));
            }
        },
    };
    let mut call = match arguments(f, &o) {
        Ok(a) => a,
        Err(e) => return usage(&e),
    };
    let rt = match &o.device {
        Some(spec) => Runtime::from_spec(spec),
        None => Runtime::new(),
    };
    let rt = match rt {
        Ok(rt) => rt,
        Err(e) => return fail(e),
    };
    eprintln!("running `{}` on {}", f.name, rt.describe());
    let ret = match p.run(&rt, &f.name, &mut call) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if let Err(e) = std::fs::create_dir_all(&o.out) {
        return fail(format!("cannot create {}: {e}", o.out.display()));
    }
    for (param, a) in f.params.iter().zip(&call) {
        let (ParamRef::Matrix(m), Arg::Matrix(t)) = (param, a) else {
            continue;
        };
        let mat = &f.matrices[*m];
        if mat.kind != MatrixKind::Output {
            continue;
        }
        match save(&o.out, &mat.name, t) {
            Ok(paths) => {
                for p in paths {
                    eprintln!("wrote {}", p.display());
                }
            }
            Err(e) => return fail(e),
        }
    }
    if let Some(v) = ret {
        println!("{v}");
    }
    ExitCode::SUCCESS
}

/// Fills `data` with seeded pseudo-random values: integers over their type's range, `f32` in
/// [0, 1).
fn randomize(data: &mut Data, seed: u64) {
    let mut x = 0x9e37_79b9_7f4a_7c15_u64 ^ seed.wrapping_mul(0xd1b5_4a32_d192_ed03);
    let mut next = move || {
        // xorshift64*
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    match data {
        Data::U8(v) => v.iter_mut().for_each(|e| *e = (next() >> 56) as u8),
        Data::I8(v) => v.iter_mut().for_each(|e| *e = (next() >> 56) as i8),
        Data::U16(v) => v.iter_mut().for_each(|e| *e = (next() >> 48) as u16),
        Data::I16(v) => v.iter_mut().for_each(|e| *e = (next() >> 48) as i16),
        Data::U32(v) => v.iter_mut().for_each(|e| *e = (next() >> 32) as u32),
        Data::I32(v) => v.iter_mut().for_each(|e| *e = (next() >> 32) as i32),
        Data::I64(v) => v.iter_mut().for_each(|e| *e = next() as i64),
        Data::U64(v) => v.iter_mut().for_each(|e| *e = next()),
        Data::F32(v) => v
            .iter_mut()
            .for_each(|e| *e = (next() >> 40) as f32 / (1u64 << 24) as f32),
    }
}

/// The ParaC source of a program file: a `.rs` file's `parac! { ... }` blocks (their insides,
/// one after the other), anything else whole.
fn program_source(path: &str, text: &str) -> Result<String, String> {
    if !path.ends_with(".rs") {
        return Ok(text.to_string());
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("parac!") {
        let after = &rest[i + "parac!".len()..];
        let Some(open) = after.find(|c: char| !c.is_whitespace()) else {
            break;
        };
        if !after[open..].starts_with('{') {
            rest = after;
            continue;
        }
        let body = &after[open + 1..];
        let mut depth = 1usize;
        let mut end = None;
        for (j, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(j);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            return Err(format!("{path}: a `parac! {{` block is not closed"));
        };
        out.push_str(&body[..end]);
        out.push('\n');
        rest = &body[end + 1..];
    }
    if out.trim().is_empty() {
        return Err(format!("{path}: no `parac! {{ ... }}` block"));
    }
    Ok(out)
}

/// `parac tune ...`.
fn tune(args: &[String]) -> ExitCode {
    let o = match parse_run(args, true) {
        Ok(o) => o,
        Err(e) => return usage(&e),
    };
    let text = match std::fs::read_to_string(&o.file) {
        Ok(t) => t,
        Err(e) => return fail(format!("cannot read {}: {e}", o.file)),
    };
    let source = match program_source(&o.file, &text) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let p = match Pipeline::compile_named(&o.file, &source) {
        Ok(p) => p,
        Err(parac::Error::Compile { message }) => {
            eprintln!("{message}");
            return ExitCode::FAILURE;
        }
        Err(e) => return fail(e),
    };
    let functions: Vec<&parac_core::ir::Function> = match &o.function {
        Some(name) => match p.function(name) {
            Some(f) => vec![f],
            None => {
                let names: Vec<&str> = p.functions().iter().map(|f| &*f.name).collect();
                return usage(&format!(
                    "{}: no function `{name}` (it has: {})",
                    o.file,
                    names.join(", ")
                ));
            }
        },
        None => p.functions().iter().collect(),
    };
    let names = o
        .inputs
        .iter()
        .map(|i| &i.0)
        .chain(o.sets.iter().map(|s| &s.0));
    for n in names {
        if !functions.iter().any(|f| knows(f, n)) {
            return usage(&format!("no function tuned has a parameter or size `{n}`"));
        }
    }
    let rt = match &o.device {
        Some(spec) => Runtime::from_spec(spec),
        None => Runtime::new(),
    };
    let rt = match rt {
        Ok(rt) => rt.with_policy(PlanPolicy::SearchBudget(Duration::MAX)),
        Err(e) => return fail(e),
    };
    let Some(dev) = rt.device() else {
        return fail(format!(
            "no OpenCL device ({}): plans are chosen on OpenCL devices only",
            rt.describe()
        ));
    };
    eprintln!("tuning on {}", rt.describe());
    let mut failed = false;
    for f in functions {
        let mut call = match arguments(f, &o) {
            Ok(a) => a,
            Err(e) => return usage(&e),
        };
        let sizes: Vec<String> = call
            .iter()
            .zip(&f.params)
            .filter_map(|(a, p)| match (a, p) {
                (Arg::Matrix(t), ParamRef::Matrix(m)) => Some(format!(
                    "{} {}",
                    f.matrices[*m].name,
                    t.shape
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join("x")
                )),
                _ => None,
            })
            .collect();
        let before = parac::opencl::plan_records().len();
        let start = Instant::now();
        if let Err(e) = p.run(&rt, &f.name, &mut call) {
            eprintln!("error: `{}`: {e}", f.name);
            failed = true;
            continue;
        }
        let records = parac::opencl::plan_records();
        let new = &records[before.min(records.len())..];
        let searched: Vec<_> = new.iter().filter(|r| r.program == *f.name).collect();
        println!(
            "{} ({}): {} region{} searched in {:.1} s{}",
            f.name,
            sizes.join(", "),
            searched.len(),
            if searched.len() == 1 { "" } else { "s" },
            start.elapsed().as_secs_f64(),
            if searched.len() < f.regions.len() {
                " (the others: from the plan cache, or with one plan)"
            } else {
                ""
            }
        );
        for r in searched {
            let ms = r
                .times
                .iter()
                .find(|t| t.0 == r.chosen.0 && t.1 == r.chosen.1)
                .map_or("-".to_string(), |t| format!("{:.3} ms", t.2));
            let wg = r.chosen.1.as_ref().map_or("-".to_string(), |l| {
                l.iter().map(usize::to_string).collect::<Vec<_>>().join("x")
            });
            println!(
                "  {} [{}]: {}@{wg} {ms} ({} plans timed{})",
                r.region,
                r.class,
                r.chosen.0,
                r.times.len(),
                if r.complete {
                    ""
                } else {
                    "; the search did not end"
                }
            );
        }
    }
    match dev.program_cache_dir() {
        Some(dir) => match dir.parent() {
            Some(root) => println!("plan cache: {}", root.join("plans").display()),
            None => println!("plan cache: next to {}", dir.display()),
        },
        None => println!("plan cache: off (PARAC_CACHE=0): the plans were not kept"),
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `parac cache ...`.
fn cache(args: &[String]) -> ExitCode {
    let Some(root) = parac::opencl::cache_root() else {
        return fail("this system has no user cache directory");
    };
    let plans = root.join("plans");
    match args {
        [c] if c == "path" => {
            println!("{}", root.display());
            if std::env::var_os("PARAC_CACHE").is_some_and(|v| v == "0") {
                eprintln!("(PARAC_CACHE=0: the runtime does not use it now)");
            }
            ExitCode::SUCCESS
        }
        [c] if c == "clear" => match parac::opencl::clear_cache(&root) {
            Ok(removed) => {
                for d in &removed {
                    eprintln!("removed {}", d.display());
                }
                if removed.is_empty() {
                    eprintln!("{}: nothing to remove", root.display());
                }
                ExitCode::SUCCESS
            }
            Err(e) => fail(e),
        },
        [c, file] if c == "export" => {
            let (bundle, n) = match parac::opencl::export_plans(&plans) {
                Ok(b) => b,
                Err(e) => return fail(e),
            };
            let written = if file == "-" {
                std::io::stdout().write_all(bundle.as_bytes())
            } else {
                std::fs::write(file, &bundle)
            };
            if let Err(e) = written {
                return fail(format!("cannot write {file}: {e}"));
            }
            eprintln!(
                "exported {n} plan file{} from {}",
                if n == 1 { "" } else { "s" },
                plans.display()
            );
            ExitCode::SUCCESS
        }
        [c, file] if c == "import" => {
            let text = if file == "-" {
                let mut t = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut t).map(|_| t)
            } else {
                std::fs::read_to_string(file)
            };
            let text = match text {
                Ok(t) => t,
                Err(e) => return fail(format!("cannot read {file}: {e}")),
            };
            match parac::opencl::import_plans(&text, &plans) {
                Ok(n) => {
                    eprintln!(
                        "imported {n} plan file{} into {}",
                        if n == 1 { "" } else { "s" },
                        plans.display()
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => fail(format!("{file}: {e}")),
            }
        }
        [] => usage("`cache` needs a command: path, clear, export FILE or import FILE"),
        [c, ..] => usage(&format!(
            "`cache {c}`: expected `path`, `clear`, `export FILE` or `import FILE`"
        )),
    }
}
