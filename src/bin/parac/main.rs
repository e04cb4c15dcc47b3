//! The `parac` command: what the compiler understood of a ParaC program (`ir`), the code it
//! generates (`emit rust|opencl`), running a program's functions on files at run time (`run`),
//! the OpenCL devices (`devices`), searching plans ahead of time (`tune`) and the caches
//! (`cache`). `parac FILE.parac ...` is short for `parac ir FILE.parac ...`.
//!
//! Exit status: 0 on success (and when standard output is closed early, e.g. by `| head`), 1 when
//! the work failed (errors in a program, a file that cannot be read, a failing run), 2 on usage
//! errors.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::{CommandFactory as _, Parser, Subcommand, ValueEnum};

/// Writes to standard output (`format!` arguments): `Err(Failure::ClosedPipe)` when the reader
/// is gone.
macro_rules! out {
    ($($arg:tt)*) => {
        ::std::io::Write::write_fmt(&mut ::std::io::stdout().lock(), format_args!($($arg)*))
            .map_err($crate::Failure::from_write)
    };
}

/// [`out!`] with a newline.
macro_rules! outln {
    ($($arg:tt)*) => {
        out!("{}\n", format_args!($($arg)*))
    };
}

mod cache;
mod devices;
mod files;
mod ir;
mod run;
mod tune;

/// ParaC: an image-processing language embedded in Rust, compiled to OpenCL.
#[derive(Parser)]
#[command(
    name = "parac",
    version,
    arg_required_else_help = true,
    after_help = "`parac FILE.parac ...` is short for `parac ir FILE.parac ...`.\n\
                  Exit status: 0 success, 1 errors in the work, 2 usage errors."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Prints the IR and per-region facts of each program, or its errors.
    ///
    /// For each function, its IR and, per parallel region, its dimensions, sizes, accesses,
    /// border reach and the feature analysis. Errors are printed with their line and column;
    /// the exit status is then 1.
    Ir {
        /// ParaC programs (`.parac` files).
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Prints the code generated for a program.
    Emit {
        /// What to print.
        target: Target,
        /// A ParaC program (a `.parac` file).
        file: PathBuf,
    },
    /// Compiles a program at run time and runs one function (the only one, or --function) on
    /// files.
    ///
    /// Each input matrix is read from a file (.png: u8 or u16 gray, f32[3][M][N] planar RGB;
    /// .npy: the exact element type); each scalar parameter (and any size that only an output
    /// binds) comes from --set. Each output is written to DIR/NAME.npy and, where it has 2 or 3
    /// dimensions, to a PNG view DIR/NAME.png; the return value, if any, is printed.
    Run(run::RunArgs),
    /// Lists the OpenCL devices and the one `Runtime::new()` picks.
    Devices,
    /// Searches the plans of a program's functions on the present OpenCL device and writes them
    /// to the plan cache.
    ///
    /// Every function of FILE (or --function) runs once at the sizes given, each region's search
    /// to its end (no budget); later calls at these sizes, or at any size of the same size class
    /// (each dimension's next power of two), start with the searched plans. Sizes come from
    /// --size (or from the --in inputs); inputs not given are random; scalar parameters not
    /// given by --set are 1.
    Tune(tune::TuneArgs),
    /// parac's caches: where they are, removing them, the plan cache as one file.
    Cache {
        #[command(subcommand)]
        command: cache::CacheCommand,
    },
    /// `parac FILE.parac ...`: `parac ir FILE.parac ...`.
    #[command(external_subcommand)]
    Files(Vec<OsString>),
}

/// The targets of `parac emit`.
#[derive(Clone, Copy, ValueEnum)]
enum Target {
    /// The Rust code the `parac!` macro expands to, formatted.
    Rust,
    /// The OpenCL C program of each function (the baseline, then each candidate plan's own).
    Opencl,
    /// The loop IR of each function, after lowering and after each pass.
    Lir,
}

/// Why a command stopped early.
#[derive(Debug)]
enum Failure {
    /// A usage error found after parsing (status 2): the subcommand and the message, shown with
    /// the subcommand's usage.
    Usage(&'static str, String),
    /// The work failed (status 1): the message, printed as `error: ...`.
    Error(String),
    /// The work failed and said why already (status 1).
    Reported,
    /// Standard output is closed (`| head`): stop quietly, status 0.
    ClosedPipe,
}

impl Failure {
    /// A failed write to standard output.
    fn from_write(e: std::io::Error) -> Failure {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            Failure::ClosedPipe
        } else {
            Failure::Error(format!("cannot write to standard output: {e}"))
        }
    }
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure::Error(e.to_string())
    }
}

/// What a command returns.
type Outcome = Result<(), Failure>;

/// The runtime of `run` and `tune`: the environment's settings (`Config::from_env`), on the
/// device `--device` names if given.
fn runtime(device: Option<&str>) -> Result<parac::Runtime, parac::Error> {
    let b = parac::Runtime::builder().config(parac::Config::from_env()?);
    match device {
        Some(spec) => b.device_spec(spec)?.build(),
        None => b.build(),
    }
}

/// Installs the log subscriber: the runtime's events on stderr, filtered as `PARAC_LOG` says
/// (`LogConfig::filter`; a bad value is reported when the runtime is made, the default filter
/// applies meanwhile).
fn init_log() {
    let filter = parac::Config::from_env()
        .map(|c| c.log.filter())
        .unwrap_or_else(|_| parac::LogConfig::default().filter());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .without_time()
        .try_init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_log();
    let outcome = match cli.command {
        Command::Ir { files } => ir::ir(&files),
        Command::Emit { target, file } => ir::emit(target, &file),
        Command::Run(args) => run::run(args),
        Command::Devices => devices::devices(),
        Command::Tune(args) => tune::tune(args),
        Command::Cache { command } => cache::cache(command),
        Command::Files(args) => files_shortcut(args),
    };
    // What is still buffered; a reader gone by now is no error either.
    let flushed = std::io::stdout().flush().map_err(Failure::from_write);
    match outcome.and(flushed) {
        Ok(()) | Err(Failure::ClosedPipe) => ExitCode::SUCCESS,
        Err(Failure::Usage(command, message)) => {
            let mut cmd = Cli::command();
            cmd.build();
            let cmd = cmd.find_subcommand_mut(command).expect("a subcommand");
            cmd.error(ErrorKind::ValueValidation, message).exit()
        }
        Err(Failure::Error(message)) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
        Err(Failure::Reported) => ExitCode::FAILURE,
    }
}

/// `parac FILE.parac ...`: `parac ir FILE.parac ...` when the first word names a program file
/// (it ends in `.parac` or exists); otherwise an unknown subcommand.
fn files_shortcut(args: Vec<OsString>) -> Outcome {
    let first = PathBuf::from(&args[0]);
    let is_file = first.extension().is_some_and(|e| e == "parac") || first.is_file();
    if !is_file {
        Cli::command()
            .error(
                ErrorKind::InvalidSubcommand,
                format!(
                    "unrecognized subcommand or program file '{}'",
                    first.display()
                ),
            )
            .exit();
    }
    let argv = ["parac".into(), "ir".into()].into_iter().chain(args);
    match Cli::parse_from(argv).command {
        Command::Ir { files } => ir::ir(&files),
        _ => unreachable!("parsed as `parac ir`"),
    }
}
