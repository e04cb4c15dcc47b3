//! What the four example binaries share: the command line, reading the input (a PNG or a
//! `.npy` file), writing every output twice (a PNG to look at and a `.npy` with the exact
//! values), timing and the `--repeat` median.
//!
//! Each example includes it with `#[path = "common/mod.rs"] mod common;` (cargo does not build
//! `examples/common/` as an example of its own: the folder has no `main.rs`).
//!
//! Command line (the same for all four):
//!
//! ```text
//! cargo run --release --example <app> -- [INPUT] [OUT_DIR] [--repeat N]
//! ```
//!
//! - `INPUT`: a PNG (converted as the pipeline needs, see `parac::io::load_png`) or a NumPy
//!   `.npy` file (recognised by its extension) whose dtype is exactly the pipeline's input
//!   element type. Left out, or `-`, the example uses a photograph shipped in `assets/`.
//! - `OUT_DIR`: where the outputs go; default `target/parac-out/<app>/` of the workspace.
//! - `--repeat N`: after the first call, call the pipeline `N` more times and print the median
//!   time of one call as the last line, `median_ms=<x>`.
//!
//! Errors (bad arguments, unreadable input, wrong dtype or shape, a pipeline error) print a
//! message on stderr and exit with status 1.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use parac::io::{FromPng, load_png, save_png_view};
use parac::{Element, Matrix, MatrixRef, Runtime};

/// What one example binary is.
pub struct App {
    /// The example's name (also the default output folder's).
    pub name: &'static str,
    /// One line: what the example does.
    pub summary: &'static str,
    /// What the input must be, e.g. `u8 [M][N] (8-bit gray), M, N >= 4`.
    pub input: &'static str,
    /// The photograph of `assets/` used when no input is given.
    pub default_asset: &'static str,
    /// The default of `--levels L`, for the examples that take it (`None`: the option is
    /// rejected).
    pub levels: Option<usize>,
}

/// The parsed command line.
pub struct Args {
    /// The input file; `None`: the default photograph.
    pub input: Option<PathBuf>,
    /// Where the outputs go.
    pub out_dir: PathBuf,
    /// `--repeat N`: the number of extra calls to time.
    pub repeat: Option<usize>,
    /// `--levels L` (only for the examples whose [`App::levels`] is set).
    // Only `laplacian` reads it; the other examples include this module too.
    #[allow(dead_code)]
    pub levels: usize,
    /// `--device` (with `--levels`: the pyramid): the matrices stay on the runtime's device
    /// between levels (`DeviceMatrix`), one upload of the input, one download of each output.
    #[allow(dead_code)]
    pub device: bool,
}

/// A failure to report: the message is printed on stderr, the exit status is 1.
#[derive(Debug)]
pub struct Fail(pub String);

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<parac::Error> for Fail {
    fn from(e: parac::Error) -> Self {
        Fail(e.to_string())
    }
}

impl From<String> for Fail {
    fn from(s: String) -> Self {
        Fail(s)
    }
}

/// The runtime the `PARAC_*` variables ask for (`Runtime::from_env`), after installing the log
/// subscriber: the runtime's `tracing` events on stderr, filtered as `PARAC_LOG` says
/// (`LogConfig::filter`: warnings and progress lines by default; `PARAC_LOG=plan` each plan
/// choice, `launch` each kernel launch...).
pub fn runtime_from_env() -> Result<Runtime, parac::Error> {
    let config = parac::Config::from_env()?;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(config.log.filter()))
        .with_writer(std::io::stderr)
        .without_time()
        .try_init();
    Runtime::with_config(config)
}

/// Runs an example: parses the command line, creates the runtime (`PARAC_DEVICE`), prints the
/// device, then runs `body`. Any failure is printed on stderr and gives exit status 1.
pub fn main(app: &App, body: fn(&Args, &Runtime) -> Result<ExitCode, Fail>) -> ExitCode {
    let args = match parse_args(app, std::env::args_os().skip(1)) {
        Ok(Some(args)) => args,
        Ok(None) => {
            print!("{}", usage(app));
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!(
                "{}: error: {e}\n  usage: {}\n  (--help for more)",
                app.name,
                usage_line(app)
            );
            return ExitCode::FAILURE;
        }
    };
    let rt = match runtime_from_env() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{}: error: no runtime (PARAC_DEVICE): {e}", app.name);
            return ExitCode::FAILURE;
        }
    };
    println!("{}: {}", app.name, app.summary);
    println!("device: {}", rt.describe());
    if rt.device().is_some() {
        println!(
            "note: a first call may build the OpenCL program; --repeat N times the calls after it"
        );
    }
    match body(&args, &rt) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{}: error: {e}", app.name);
            ExitCode::FAILURE
        }
    }
}

/// The one-line synopsis.
fn usage_line(app: &App) -> String {
    let levels = if app.levels.is_some() {
        " [--levels L] [--device]"
    } else {
        ""
    };
    format!(
        "cargo run --release --example {} -- [INPUT] [OUT_DIR] [--repeat N]{levels}",
        app.name
    )
}

/// The help text.
pub fn usage(app: &App) -> String {
    let levels = match app.levels {
        Some(l) => format!(
            "  --levels L    build L pyramid levels (default {l}; fewer if a side gets below 4)\n\
             \x20 --device      keep the pyramid on the device (one upload, one download of each\n\
             \x20               output; with --repeat, times the whole pyramid so)\n"
        ),
        None => String::new(),
    };
    format!(
        "{name}: {summary}\n\n\
         usage: {line}\n\n\
         \x20 INPUT         a PNG, converted to what {name} takes: {input};\n\
         \x20               or a .npy file of exactly that dtype;\n\
         \x20               default (or `-`): assets/{asset}\n\
         \x20 OUT_DIR       where the outputs go, each as <name>.png (a view) and <name>.npy\n\
         \x20               (exact values); default: target/parac-out/{name}/\n\
         \x20 --repeat N    call the pipeline N more times; the last line is median_ms=<x>,\n\
         \x20               the median time of one call (host input to host output)\n\
         {levels}\
         \x20 -h, --help    this text\n\n\
         The device comes from PARAC_DEVICE: auto (default), cpu, opencl or opencl:<name>.\n\
         Exit status: 0 ok, 1 error{check}.\n",
        summary = app.summary,
        name = app.name,
        line = usage_line(app),
        input = app.input,
        asset = app.default_asset,
        check = if app.levels.is_some() {
            ", 2 reconstruction check failed"
        } else {
            ""
        },
    )
}

/// Parses the arguments after the program name; `Ok(None)` for `--help`.
fn parse_args(app: &App, args: impl Iterator<Item = OsString>) -> Result<Option<Args>, String> {
    let mut args = args;
    let mut positional: Vec<OsString> = Vec::new();
    let mut repeat = None;
    let mut levels = app.levels.unwrap_or(0);
    let mut device = false;
    let mut only_positional = false;
    while let Some(arg) = args.next() {
        let option = match arg.to_str() {
            Some(s) if !only_positional && s.starts_with('-') && s != "-" => s.to_string(),
            _ => {
                positional.push(arg);
                continue;
            }
        };
        let (flag, inline) = match option.split_once('=') {
            Some((f, v)) => (f, Some(v.to_string())),
            None => (option.as_str(), None),
        };
        match flag {
            "--" if inline.is_none() => only_positional = true,
            "-h" | "--help" if inline.is_none() => return Ok(None),
            "--repeat" => repeat = Some(count(flag, value(flag, inline, &mut args)?)?),
            "--levels" if app.levels.is_some() => {
                levels = count(flag, value(flag, inline, &mut args)?)?;
            }
            "--device" if app.levels.is_some() && inline.is_none() => device = true,
            _ => return Err(format!("unknown option `{option}`")),
        }
    }
    if positional.len() > 2 {
        let extra: Vec<_> = positional[2..]
            .iter()
            .map(|a| a.to_string_lossy())
            .collect();
        return Err(format!(
            "too many arguments: {} (expected at most INPUT and OUT_DIR)",
            extra.join(" ")
        ));
    }
    let mut positional = positional.into_iter();
    let input = positional.next().filter(|a| a != "-").map(PathBuf::from);
    let out_dir = match positional.next() {
        Some(dir) => PathBuf::from(dir),
        None => workspace().join("target").join("parac-out").join(app.name),
    };
    Ok(Some(Args {
        input,
        out_dir,
        repeat,
        levels,
        device,
    }))
}

/// The value of an option: after `=` or the next argument.
fn value(
    flag: &str,
    inline: Option<String>,
    args: &mut impl Iterator<Item = OsString>,
) -> Result<String, String> {
    match inline {
        Some(v) => Ok(v),
        None => match args.next() {
            Some(v) => v
                .into_string()
                .map_err(|v| format!("`{flag}`: `{}` is not a number", v.to_string_lossy())),
            None => Err(format!("`{flag}` needs a value")),
        },
    }
}

/// A count of at least 1.
fn count(flag: &str, v: String) -> Result<usize, String> {
    match v.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("`{flag}` takes a whole number >= 1, not `{v}`")),
    }
}

/// The workspace root (where `assets/` and `target/` are), fixed when the example is built.
fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Reads the input as a `Matrix<T>`: a `.npy` file of exactly `T`, any other file as a PNG
/// converted by `parac::io::load_png`, no file the default photograph. Prints what was read and
/// its shape, and adds the time to `steps`.
pub fn load_input<T: FromPng>(
    app: &App,
    args: &Args,
    steps: &mut Steps,
) -> Result<Matrix<T>, Fail> {
    let (path, shown) = match &args.input {
        Some(p) => (p.clone(), p.display().to_string()),
        None => (
            workspace().join("assets").join(app.default_asset),
            format!("assets/{} (default photograph)", app.default_asset),
        ),
    };
    let npy = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
    if !path.is_file() {
        let why = if path.exists() {
            "is not a file"
        } else {
            "does not exist"
        };
        return Err(Fail(format!("input {shown} {why}")));
    }
    let (read, t) = timed(|| {
        if npy {
            Matrix::<T>::read_npy(&path)
        } else {
            load_png::<T>(&path)
        }
    });
    let m = read.map_err(|e| {
        let kind = if npy { ".npy file" } else { "PNG" };
        Fail(format!(
            "cannot read the input as a {kind}: {e}\n  ({} takes {})",
            app.name, app.input
        ))
    })?;
    let how = if npy {
        "NumPy file, exact values"
    } else {
        png_conversion::<T>()
    };
    println!("input: {shown}; {how}: {} {}", T::NAME, dims(m.shape()));
    steps.add("load", t);
    Ok(m)
}

/// How `load_png` converts a PNG to a `Matrix<T>`, in words.
fn png_conversion<T: Element>() -> &'static str {
    match T::NAME {
        "u8" => "PNG read as 8-bit gray (colour through luma)",
        "u16" => "PNG read as 12-bit gray (16-bit gray value >> 4)",
        "f32" => "PNG read as planar RGB in [1/255, 1]",
        _ => "PNG",
    }
}

/// `Err` with `message` unless `ok`, adding what the example takes.
pub fn require(app: &App, ok: bool, message: impl FnOnce() -> String) -> Result<(), Fail> {
    if ok {
        Ok(())
    } else {
        Err(Fail(format!(
            "{}\n  ({} takes {})",
            message(),
            app.name,
            app.input
        )))
    }
}

/// The output folder; every matrix goes in it twice: `<name>.png` (a view for people, see
/// `parac::io::save_png_view`) and `<name>.npy` (the exact values).
pub struct Outputs {
    dir: PathBuf,
    names: Vec<String>,
}

impl Outputs {
    /// Creates the folder (and its parents) if needed.
    pub fn create(args: &Args) -> Result<Outputs, Fail> {
        std::fs::create_dir_all(&args.out_dir).map_err(|e| {
            Fail(format!(
                "cannot create the output folder {}: {e}",
                args.out_dir.display()
            ))
        })?;
        Ok(Outputs {
            dir: args.out_dir.clone(),
            names: Vec::new(),
        })
    }

    /// Writes `<name>.png` and `<name>.npy`; returns the time it took.
    pub fn write<T: Element>(&mut self, name: &str, m: &Matrix<T>) -> Result<Duration, Fail> {
        let (r, t) = timed(|| {
            save_png_view(m, self.dir.join(format!("{name}.png")))?;
            m.write_npy(self.dir.join(format!("{name}.npy")))
        });
        r.map_err(|e| Fail(format!("cannot write output `{name}`: {e}")))?;
        self.names.push(name.to_string());
        Ok(t)
    }

    /// Prints the folder and what was written in it.
    pub fn print(&self) {
        println!(
            "wrote {} files to {}/: {}  (each as .png and .npy)",
            2 * self.names.len(),
            self.dir.display(),
            self.names.join(", ")
        );
    }
}

/// Named times in order (`load`, `call`, `write`...), summed per name.
#[derive(Default)]
pub struct Steps(Vec<(&'static str, Duration)>);

impl Steps {
    /// Adds `t` to the step `name` (a new step goes last).
    pub fn add(&mut self, name: &'static str, t: Duration) {
        match self.0.iter_mut().find(|(n, _)| *n == name) {
            Some((_, d)) => *d += t,
            None => self.0.push((name, t)),
        }
    }

    /// One line: every step and the total.
    pub fn print(&self) {
        let total: Duration = self.0.iter().map(|(_, d)| *d).sum();
        let steps: Vec<String> = self
            .0
            .iter()
            .map(|(n, d)| format!("{n} {}", ms(*d)))
            .collect();
        println!("time: {}; total {}", steps.join(", "), ms(total));
    }
}

/// Runs `f` and measures it.
pub fn timed<R>(f: impl FnOnce() -> R) -> (R, Duration) {
    let start = Instant::now();
    let r = f();
    (r, start.elapsed())
}

/// `12.345 ms`.
pub fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// `[512][512]`.
pub fn dims(shape: &[usize]) -> String {
    shape.iter().map(|d| format!("[{d}]")).collect()
}

/// The median (the mean of the two middle ones for an even count); zero for none.
pub fn median(samples: &[Duration]) -> Duration {
    let mut s = samples.to_vec();
    s.sort();
    match s.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2,
    }
}

/// Calls `call` `n` times, timing each call alone (host input to host output).
pub fn repeat(
    n: usize,
    mut call: impl FnMut() -> Result<(), parac::Error>,
) -> Result<Vec<Duration>, Fail> {
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let (r, t) = timed(&mut call);
        r.map_err(|e| Fail(format!("repeated call {}: {e}", i + 1)))?;
        samples.push(t);
    }
    Ok(samples)
}

/// One line of statistics on repeated calls: `what: N calls, min, median, max`.
pub fn print_stats(what: &str, samples: &[Duration]) {
    let min = samples.iter().min().copied().unwrap_or_default();
    let max = samples.iter().max().copied().unwrap_or_default();
    println!(
        "repeat: {what}: {} calls, min {}, median {}, max {}",
        samples.len(),
        ms(min),
        ms(median(samples)),
        ms(max)
    );
}

/// The last line of a `--repeat` run: `median_ms=<x>`.
pub fn print_median_line(samples: &[Duration]) {
    println!("median_ms={:.3}", median(samples).as_secs_f64() * 1e3);
}

/// Runs a pipeline with one input and one output the way every single-output example does:
/// writes `input`, calls the pipeline once and reports the call (`call: name(...) -> out ...:
/// time (stages)`), writes `out`, prints the written files and the step times, and with
/// `--repeat N` times N more calls, printing `median_ms=<x>` last.
#[allow(clippy::too_many_arguments, dead_code)] // laplacian has two outputs and its own loop
pub fn run_single<I: Element, O: Element, S: MatrixRef<I>>(
    args: &Args,
    steps: &mut Steps,
    name: &str,
    input_name: &str,
    stages: &str,
    src: &S,
    dst: &mut Matrix<O>,
    mut call: impl FnMut(&S, &mut Matrix<O>) -> Result<(), parac::Error>,
) -> Result<ExitCode, Fail> {
    let mut out = Outputs::create(args)?;
    // The input as the pipeline saw it (a copy of a region of interest, for the files only).
    let input = Matrix::copy_of(src).map_err(|e| Fail(format!("input: {e}")))?;
    steps.add("write", out.write("input", &input)?);
    let (r, t) = timed(|| call(src, dst));
    r?;
    println!(
        "call: {name}({input_name} {} {}) -> out {} {}: {} ({stages})",
        I::NAME,
        dims(src.shape()),
        O::NAME,
        dims(dst.shape()),
        ms(t)
    );
    steps.add("call", t);
    steps.add("write", out.write("out", dst)?);
    out.print();
    steps.print();
    if let Some(n) = args.repeat {
        let samples = repeat(n, || call(src, dst))?;
        print_stats(name, &samples);
        print_median_line(&samples);
    }
    Ok(ExitCode::SUCCESS)
}
