//! The `parac` command.
//!
//! - `parac FILE.parac ...`: shows what the compiler understood of a ParaC program: the IR of
//!   every function and, per parallel region, its dimensions, sizes, accesses, border reach and
//!   the feature analysis. With `--emit-rust`, the Rust code the `parac!` macro expands to.
//!   Errors are printed with their line and column; the exit status is 1 if there were any.
//! - `parac run FILE.parac ...`: compiles the program at run time (`parac::Pipeline`) and runs
//!   one function on files (PNG or `.npy` in, `.npy` and PNG out).
//! - `parac emit opencl FILE.parac`: prints the OpenCL C program of each function.
//!
//! Usage errors exit with status 2 and the usage text.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use parac::pipeline::{Arg, Data, Tensor, Val, matrix_of, tensor_of};
use parac::{Matrix, Pipeline, Runtime};
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
      Prints the OpenCL C program of each function.";

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

/// The options of `parac run`.
struct RunOptions {
    file: String,
    function: Option<String>,
    inputs: Vec<(String, PathBuf)>,
    sets: Vec<(String, String)>,
    out: PathBuf,
    device: Option<String>,
}

fn parse_run(args: &[String]) -> Result<RunOptions, String> {
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
            "--out" => out = Some(PathBuf::from(it.next().ok_or("`--out` needs a directory")?)),
            "--device" => device = Some(it.next().ok_or("`--device` needs a device")?.clone()),
            o if o.starts_with("--") => return Err(format!("unknown option `{o}`")),
            f if file.is_none() => file = Some(f.to_string()),
            f => return Err(format!("unexpected argument `{f}` (one program file)")),
        }
    }
    Ok(RunOptions {
        file: file.ok_or("`run` needs a program file")?,
        function,
        inputs,
        sets,
        out: out.ok_or("`run` needs `--out DIR`")?,
        device,
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
fn arguments(f: &Function, o: &RunOptions) -> Result<Vec<Arg>, String> {
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
    let mut tensors: Vec<Option<Tensor>> = vec![None; f.matrices.len()];
    for p in &f.params {
        let ParamRef::Matrix(m) = p else { continue };
        let mat = &f.matrices[*m];
        match o.inputs.iter().find(|(n, _)| *n == mat.name) {
            Some((_, path)) => {
                tensors[*m] = Some(load(path, &mat.name, mat.elem, mat.dims.len())?);
            }
            None if mat.kind == MatrixKind::Input => {
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
                        Tensor::zeros(mat.elem, shape)
                            .ok_or_else(|| format!("`{}`: no matrix of {}", mat.name, mat.elem))?
                    }
                };
                args.push(Arg::Matrix(t));
            }
            ParamRef::Scalar(s) => {
                let sc = &f.scalars[*s];
                let Some((_, text)) = o.sets.iter().find(|(n, _)| *n == sc.name) else {
                    return Err(format!(
                        "scalar `{}: {}` needs `--set {}=VALUE`",
                        sc.name, sc.ty, sc.name
                    ));
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
    let o = match parse_run(args) {
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
