//! Random-program testing: well-typed random pipelines from the generator
//! of `tests/gen/mod.rs` (1 to 3 dimensions, every element type, intermediates feeding each
//! other, windows and block `let`s, constant filters, convolutions and window reductions,
//! matrix products and transposes, every border shorthand and custom rules with corners,
//! `if`/`else`, strides, gathers, lookups, global reductions feeding later regions, host
//! scalars), checked for:
//!
//! 1. `compile_str` never panics; a program with no diagnostic goes through the code
//!    generators without a panic: `codegen::opencl::program`, `plan::labels`,
//!    `plan::candidates` of every region, `codegen::expand`;
//! 2. the reference interpreter, on random inputs of random sizes (tiny and odd ones: mostly at
//!    or above the program's own minimum sizes, sometimes any, sometimes with one argument's
//!    shape changed), never panics and returns `Ok` or a typed error (`OutOfBounds`,
//!    `DivisionByZero`, `Shape`, `Rank`); `Unsupported` is counted and printed (the generator
//!    made something the interpreter does not run), `Argument` fails (the test's arguments do
//!    not fit the function); at sizes at or above the minimum, a program with no raw lookup or
//!    division by data must run without error (`PARAC_FUZZ_VALID=0`: only count those errors);
//! 3. determinism: two runs give identical results (floats compared by their bits);
//! 4. the loop IR after every pass (`lir::lower`, `lir::eval`) gives the interpreter's outputs
//!    and result on every call the interpreter completes.
//!
//! Programs with diagnostics are skipped and counted (the test prints the fraction that
//! compiled cleanly and the most frequent diagnostics, and fails if fewer than half did).
//! A program the generator means to be rejected (`Program::reject`: a store at a place from
//! data that is no reduction, a read of a matrix reduced into, a prefix under an `if`, ...)
//! must compile with an error, the one its statement causes (checked where the program with
//! that statement replaced by a valid one compiles cleanly), and is not run. The
//! differential checks against the CPU path and OpenCL are the root tests
//! `tests/random_corpus.rs` (written by `bless_corpus`, compiled by `parac!`) and
//! `tests/random_programs.rs` (through `parac::Pipeline`).
//!
//! Knobs: how many programs and which (`gen/budget.rs`): by default programs for [`SECONDS`]
//! from a seed that changes every run and is printed; `PARAC_FUZZ_PROGRAMS=N` for a count (a
//! progress line every 1,000), `PARAC_FUZZ_SECONDS`, `PARAC_FUZZ_SEED` to replay a run;
//! `PARAC_FUZZ_STRICT=1` (generate the patterns of known bugs too, see `KNOWN_PATTERNS`),
//! `PARAC_FUZZ_VERBOSE=1` (every program; more diagnostics), `PARAC_FUZZ_EXAMPLES=1` (an
//! example program per diagnostic, and the unexpected errors). Ignored tools:
//! `collect_failures` (`PARAC_FUZZ_COLLECT=N`: N random programs, every distinct failure
//! minimized by a greedy shrinker over the choice sequence and printed), `run_file`
//! (`PARAC_FUZZ_FILE=x.parac PARAC_FUZZ_SIZES=M=4,N=5`: one program on the interpreter), and
//! `bless_corpus` (`PARAC_BLESS=1 cargo test -p parac-core --test random_programs --
//! --ignored bless_corpus` rewrites `tests/random_corpus.rs`: 30 programs chosen for the
//! constructs they cover; `PARAC_CORPUS_N`, `PARAC_CORPUS_SEED0` and `PARAC_CORPUS_OUT` make
//! a larger one elsewhere for a one-off run).
//!
//! Proptest shrinks a failure (persisted in `random_programs.proptest-regressions`); minimized
//! bugs are kept as `regression_*` tests below (ignored while the bug stands).

#[path = "gen/mod.rs"]
mod progen;

use parac_core::codegen;
use parac_core::interp::{self, Arg, Data, InterpError, Val};
use parac_core::lir;
use proptest::prelude::*;
use proptest::test_runner::{
    Config as ProptestConfig, FailurePersistence, PersistedSeed, RngSeed, TestCaseError, TestRunner,
};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// The default time budget of [`random_programs`] (`PARAC_FUZZ_SECONDS`, see `gen/budget.rs`).
const SECONDS: f64 = 30.0;

/// Programs per proptest run: [`random_programs`] runs such chunks, each from its own seed (the
/// run's seed plus the chunk's index), while its budget lasts.
const CHUNK: u64 = 10;

/// An error at sizes at or above the program's minimum, in a program with no raw lookup or
/// division by data, is a failure (the generator means those programs to run: an error is a
/// bug of the generator, the checks or the interpreter); `PARAC_FUZZ_VALID=0` only counts them.
fn strict_valid() -> bool {
    !std::env::var("PARAC_FUZZ_VALID").is_ok_and(|v| v == "0")
}

fn verbose() -> bool {
    std::env::var("PARAC_FUZZ_VERBOSE").is_ok_and(|v| v == "1")
}

// ---------------------------------------------------------------------------------------------
// Panics: caught, with their message and location, without printing
// ---------------------------------------------------------------------------------------------

thread_local! {
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    static QUIET: RefCell<bool> = const { RefCell::new(false) };
}

fn install_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if QUIET.with(|q| *q.borrow()) {
                let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
                    (*s).to_string()
                } else if let Some(s) = info.payload().downcast_ref::<String>() {
                    s.clone()
                } else {
                    "<non-string panic payload>".to_string()
                };
                let loc = info.location().map_or_else(
                    || "<unknown location>".to_string(),
                    |l| format!("{}:{}", l.file(), l.line()),
                );
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("panic at {loc}: {msg}")));
            } else {
                default(info);
            }
        }));
    });
}

/// Runs `f`, turning a panic into `Err("panic at file:line: message")`.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    QUIET.with(|q| *q.borrow_mut() = true);
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| *q.borrow_mut() = false);
    r.map_err(|_| {
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| "panic (no message)".to_string())
    })
}

// ---------------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------------

#[derive(Default)]
struct Stats {
    programs: u64,
    clean: u64,
    /// Diagnostic messages (digits removed) by count, with one example program.
    diags: BTreeMap<String, (u64, String)>,
    /// Interpreter outcomes: (sizes kind, outcome) -> count.
    outcomes: BTreeMap<(&'static str, String), u64>,
    /// `Unsupported` messages.
    unsupported: BTreeMap<String, u64>,
    /// Clean programs using each construct.
    tags: BTreeMap<&'static str, u64>,
    exact: u64,
    /// Errors of programs that should run (sizes at or above the minimum, no raw lookup).
    unexpected: Vec<String>,
    /// Programs the compiler must reject (`progen::Reject`), which it did.
    rejected: u64,
    /// Of those, the ones whose twin did not compile either (the error not checked).
    rejected_twin_unclean: u64,
    compile_time: Duration,
    codegen_time: Duration,
    interp_time: Duration,
    runs: u64,
}

static STATS: Mutex<Option<Stats>> = Mutex::new(None);

fn with_stats<R>(f: impl FnOnce(&mut Stats) -> R) -> R {
    let mut g = STATS.lock().unwrap_or_else(|e| e.into_inner());
    f(g.get_or_insert_with(Stats::default))
}

fn normalize(msg: &str) -> String {
    let mut out = String::new();
    let mut in_tick = false;
    for c in msg.chars() {
        if c == '`' {
            in_tick = !in_tick;
            out.push('`');
            continue;
        }
        if in_tick {
            if !out.ends_with('…') {
                out.push('…');
            }
            continue;
        }
        if c.is_ascii_digit() {
            if !out.ends_with('#') {
                out.push('#');
            }
        } else {
            out.push(c);
        }
    }
    out.chars().take(110).collect()
}

fn outcome_name(r: &Result<Option<Val>, InterpError>) -> String {
    match r {
        Ok(_) => "Ok".into(),
        Err(InterpError::OutOfBounds { what, .. }) => format!("OutOfBounds ({what})"),
        Err(InterpError::DivisionByZero { .. }) => "DivisionByZero".into(),
        Err(InterpError::WindowLength { .. }) => "WindowLength".into(),
        Err(InterpError::Shape { .. }) => "Shape".into(),
        Err(InterpError::Rank { .. }) => "Rank".into(),
        Err(InterpError::Unsupported(_)) => "Unsupported".into(),
        Err(InterpError::Argument(_)) => "Argument".into(),
    }
}

fn print_stats(title: &str) {
    with_stats(|s| {
        let mut out = format!(
            "[random programs] {title}: {} programs, {} compiled without diagnostics ({:.1}%), {} exact on every back end\n",
            s.programs,
            s.clean,
            100.0 * s.clean as f64 / s.programs.max(1) as f64,
            s.exact
        );
        out.push_str(&format!(
            "  time: compile {:.2?}, codegen {:.2?}, interpreter {:.2?} ({} runs)\n",
            s.compile_time, s.codegen_time, s.interp_time, s.runs
        ));
        out.push_str(&format!(
            "  {} programs rejected as they must be (a store at a place from data that is no reduction, and the like; {} of them with a twin that has errors too)\n",
            s.rejected, s.rejected_twin_unclean
        ));
        let mut diags: Vec<(&String, &(u64, String))> = s.diags.iter().collect();
        diags.sort_by_key(|d| std::cmp::Reverse(d.1.0));
        if !diags.is_empty() {
            out.push_str("  diagnostics (first of each program):\n");
            for (m, (n, ex)) in diags.iter().take(if verbose() { 100 } else { 8 }) {
                out.push_str(&format!("    {n:5}  {m}\n"));
                if std::env::var("PARAC_FUZZ_EXAMPLES").is_ok_and(|v| v == "1") {
                    out.push_str(&format!(
                        "{ex}\n{:?}\n",
                        parac_core::compile_str(ex)
                            .diagnostics
                            .iter()
                            .map(|d| d.message.clone())
                            .collect::<Vec<_>>()
                    ));
                }
            }
        }
        out.push_str("  interpreter outcomes (sizes: valid = at/above the minimum, no raw lookup or division by data | minimum = the others at/above the minimum | any | shape = one argument's shape changed):\n");
        for ((k, o), n) in &s.outcomes {
            out.push_str(&format!("    {k:8} {o:28} {n}\n"));
        }
        if std::env::var("PARAC_FUZZ_EXAMPLES").is_ok_and(|v| v == "1") {
            for u in &s.unexpected {
                out.push_str(&format!("  unexpected: {u}\n"));
            }
        }
        for (m, n) in &s.unsupported {
            out.push_str(&format!("    Unsupported x{n}: {m}\n"));
        }
        out.push_str("  constructs (clean programs using each):\n   ");
        let mut line = 0;
        for (t, n) in &s.tags {
            let cell = format!(" {t}={n}");
            line += cell.len();
            if line > 100 {
                out.push_str("\n   ");
                line = cell.len();
            }
            out.push_str(&cell);
        }
        out.push('\n');
        eprintln!("{out}");
    });
}

// ---------------------------------------------------------------------------------------------
// The checks of one program
// ---------------------------------------------------------------------------------------------

/// A failure: a key (what failed, where) and the details.
#[derive(Debug, Clone)]
struct Failure {
    key: String,
    details: String,
}

fn same_data(a: &Data, b: &Data) -> bool {
    match (a, b) {
        (Data::F32(x), Data::F32(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        (a, b) => a == b,
    }
}

fn same_result(a: &Result<Option<Val>, InterpError>, b: &Result<Option<Val>, InterpError>) -> bool {
    match (a, b) {
        (Ok(Some(Val::F32(x))), Ok(Some(Val::F32(y)))) => x.to_bits() == y.to_bits(),
        (a, b) => a == b,
    }
}

/// Compiles `src`, runs the code generators and the interpreter (with sizes of `syms`, or 1
/// and up for every symbol of the function); `Ok(clean)`.
fn check_source(
    src: &str,
    syms: Option<&[progen::SymInfo]>,
    may_fail: bool,
    seed: u64,
    record: bool,
) -> Result<bool, Failure> {
    let fail = |key: String, details: String| Failure {
        key,
        details: format!("{details}\n--- program ---\n{src}"),
    };
    let t = Instant::now();
    let compiled = guarded(|| parac_core::compile_str(src))
        .map_err(|p| fail(format!("compile_str: {p}"), p.clone()))?;
    let compile_time = t.elapsed();
    if record {
        with_stats(|s| s.compile_time += compile_time);
    }
    if !compiled.diagnostics.is_empty() {
        if record {
            let m = normalize(&compiled.diagnostics[0].message);
            with_stats(|s| {
                s.diags.entry(m).or_insert((0, src.to_string())).0 += 1;
            });
        }
        return Ok(false);
    }
    // Code generation.
    let t = Instant::now();
    for f in &compiled.module.functions {
        let program = guarded(|| codegen::opencl::program(f))
            .map_err(|p| fail(format!("opencl::program: {p}"), p.clone()))?;
        names_unshadowed(&program)
            .map_err(|e| fail("OpenCL names: baseline".into(), format!("{e}\n{program}")))?;
        guarded(|| codegen::plan::labels(f))
            .map_err(|p| fail(format!("plan::labels: {p}"), p.clone()))?;
        for rid in 0..f.regions.len() {
            let plans = guarded(|| codegen::launch::plans(f, rid)).map_err(|p| {
                fail(
                    format!("plan::candidates: {p}"),
                    format!("region {rid}: {p}"),
                )
            })?;
            for p in plans {
                if let Some(src) = &p.source(f) {
                    names_unshadowed(src).map_err(|e| {
                        fail(
                            "OpenCL names: candidate".into(),
                            format!("plan {}: {e}\n{src}", p.label),
                        )
                    })?;
                }
            }
        }
    }
    guarded(|| codegen::expand(&compiled))
        .map_err(|p| fail(format!("codegen::expand: {p}"), p.clone()))?;
    if record {
        let d = t.elapsed();
        with_stats(|s| s.codegen_time += d);
    }
    // The interpreter.
    let t = Instant::now();
    let f = &compiled.module.functions[0];
    let p_syms = syms.map_or_else(|| syms_of(f), <[progen::SymInfo]>::to_vec);
    let mut rng = progen::Rng::new(seed);
    for run in 0..3 {
        let (kind, respect) = match rng.below(10) {
            0 => ("any", false),
            _ => ("minimum", true),
        };
        let sizes = progen::sizes(&p_syms, &mut rng, respect);
        let mut args = progen::args(f, &sizes, seed.wrapping_add(run));
        let kind = if rng.below(20) == 0 && progen::perturb_shape(&mut args, &mut rng) {
            "shape"
        } else {
            kind
        };
        let mut a1 = args.clone();
        let r1 = guarded(|| interp::run(f, &mut a1))
            .map_err(|p| fail(format!("interp::run: {p}"), format!("sizes {sizes:?}: {p}")))?;
        let mut a2 = args.clone();
        let r2 = guarded(|| interp::run(f, &mut a2))
            .map_err(|p| fail(format!("interp::run: {p}"), format!("sizes {sizes:?}: {p}")))?;
        if !same_result(&r1, &r2)
            || a1.iter().zip(&a2).any(|(x, y)| match (x, y) {
                (Arg::Matrix(x), Arg::Matrix(y)) => !same_data(&x.data, &y.data),
                _ => false,
            })
        {
            return Err(fail(
                "nondeterministic interpreter".into(),
                format!("sizes {sizes:?}: {r1:?} then {r2:?}"),
            ));
        }
        // The loop IR after every pass (partitioned loops included), run by its evaluator,
        // gives the interpreter's outputs on every call the interpreter completes.
        // The same for the OpenCL lowering (work-items run one after the other).
        let several = parac_core::lir::Options {
            lanes: [3, 2],
            ..parac_core::lir::Options::gpu()
        };
        let vectors = parac_core::lir::Options {
            lanes: [5, 1],
            vector_memory: true,
            peephole: true,
            mul24: true,
            ..parac_core::lir::Options::gpu()
        };
        // Work-groups of 3x2 work-items of 2 points each, reading through local tiles.
        let tiles = parac_core::lir::Options {
            lanes: [2, 1],
            share_loads: true,
            local_tile: Some([3, 2]),
            ..parac_core::lir::Options::gpu()
        };
        // Producers fused into their consumers in tasks of 2 rows (`lir::pass::fuse`), and
        // every region alone.
        let fused = parac_core::lir::Options {
            fuse_rows: 2,
            ..parac_core::lir::Options::default()
        };
        let unfused = parac_core::lir::Options {
            fuse_rows: 0,
            ..parac_core::lir::Options::default()
        };
        // Each producer fused into its consumer's OpenCL work-groups (`lir::pass::fuse::gpu`),
        // tiles of one work-group and of several, columns of 1 and 5 rows per work-item, and
        // inlined in its consumer's points (one per work-item, and lanes of 4x2 with shared
        // and vector loads); a chain's producer (three stages in one kernel) in work-items'
        // tiles alone.
        let gpu_fused = (0..f.regions.len())
            .filter(|rid| parac_core::lir::pass::fuse::gpu::plans(f, *rid).items)
            .flat_map(|rid| {
                GPU_FUSED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let base = parac_core::lir::Options {
                    region: Some(rid),
                    unroll_taps: parac_core::lir::UNROLL_TAPS,
                    ..parac_core::lir::Options::gpu()
                };
                let tiles = [[16, 8], [32, 24]].map(|tile| parac_core::lir::Options {
                    fuse_tile: Some(tile),
                    ..base.clone()
                });
                let inline = [[1, 1], [4, 2]].map(|lanes| parac_core::lir::Options {
                    fuse_inline: true,
                    lanes,
                    share_loads: true,
                    vector_memory: lanes != [1, 1],
                    ..base.clone()
                });
                let items = [[1, 1], [7, 5]].map(|tile| parac_core::lir::Options {
                    fuse_item_tile: Some(tile),
                    ..base.clone()
                });
                tiles.into_iter().chain(items).chain(inline)
            });
        for opts in [
            parac_core::lir::Options::default(),
            fused,
            unfused,
            parac_core::lir::Options::gpu(),
            several,
            vectors,
            tiles,
        ]
        .into_iter()
        .chain(gpu_fused)
        {
            if r1.is_err() {
                break;
            }
            let lowered = guarded(|| parac_core::lir::lower(f, &opts))
                .map_err(|p| fail(format!("lir::lower: {p}"), p.clone()))?;
            let mut a3 = args.clone();
            let r3 = guarded(|| parac_core::lir::eval::run(&lowered.func, f, &mut a3))
                .map_err(|p| fail(format!("lir::eval: {p}"), format!("sizes {sizes:?}: {p}")))?;
            let differs = !matches!(r3, Err(InterpError::Unsupported(_)))
                && (!same_result(&r1, &r3)
                    || a1.iter().zip(&a3).any(|(x, y)| match (x, y) {
                        (Arg::Matrix(x), Arg::Matrix(y)) => !same_data(&x.data, &y.data),
                        _ => false,
                    }));
            if differs {
                return Err(fail(
                    "the LIR differs from the interpreter".into(),
                    format!(
                        "sizes {sizes:?} (gpu lowering: {}, lanes {:?}): interpreter {r1:?}, LIR {r3:?}",
                        opts.gpu, opts.lanes
                    ),
                ));
            }
        }
        if let Err(InterpError::Argument(m)) = &r1 {
            return Err(fail(
                "interpreter: Argument (the test's arguments)".into(),
                format!("sizes {sizes:?}: {m}"),
            ));
        }
        let valid = kind == "minimum" && !may_fail;
        if valid && r1.is_err() && strict_valid() {
            let what = match &r1 {
                Err(InterpError::OutOfBounds { what, .. }) => format!("OutOfBounds ({what})"),
                Err(e) => outcome_name(&Err(e.clone())),
                Ok(_) => unreachable!(),
            };
            return Err(fail(
                format!("error at valid sizes: {what}"),
                format!("sizes {sizes:?}: {r1:?}"),
            ));
        }
        if record {
            let o = outcome_name(&r1);
            let kind = if valid { "valid" } else { kind };
            if kind == "valid" && o != "Ok" {
                with_stats(|s| {
                    if s.unexpected.len() < 20 {
                        s.unexpected.push(format!("{sizes:?}: {r1:?}\n{src}"));
                    }
                });
            }
            with_stats(|s| {
                *s.outcomes.entry((kind, o)).or_default() += 1;
                s.runs += 1;
                if let Err(InterpError::Unsupported(m)) = &r1 {
                    *s.unsupported.entry(m.clone()).or_default() += 1;
                }
            });
        }
    }
    if record {
        let d = t.elapsed();
        with_stats(|s| s.interp_time += d);
    }
    Ok(true)
}

/// The size symbols of a compiled function, minimum 1 (regressions have no generator
/// description).
/// The generated OpenCL C of a program shadows no name (the printer's naming scheme,
/// `codegen/opencl/kernel/mod.rs`, `Printer::var`): no parameter or local of a function is named like a program-scope
/// function or `__constant` array, no local like a parameter of its function, and each
/// generated local (`t<n>`, `c<n>`, `cv<n>`) is declared once in its function. Declarations
/// are found as a type name followed by an identifier (a `*` between them for parameters).
fn names_unshadowed(src: &str) -> Result<(), String> {
    // Identifiers and single punctuation characters.
    let mut toks: Vec<&str> = Vec::new();
    let b = src.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphanumeric() || c == b'_' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            toks.push(&src[st..i]);
        } else {
            if !c.is_ascii_whitespace() {
                toks.push(&src[i..i + 1]);
            }
            i += 1;
        }
    }
    let is_type = |t: &str| {
        let base = t.trim_end_matches(|c: char| c.is_ascii_digit());
        matches!(
            base,
            "void"
                | "char"
                | "uchar"
                | "short"
                | "ushort"
                | "int"
                | "uint"
                | "long"
                | "ulong"
                | "float"
        )
    };
    let is_ident = |t: &str| t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    let generated = |t: &str| {
        let base = t.trim_end_matches(|c: char| c.is_ascii_digit());
        base.len() < t.len() && matches!(base, "t" | "c" | "cv")
    };
    // Functions: (name, params, locals), split at depth 0.
    let mut globals: Vec<&str> = Vec::new();
    let mut funcs: Vec<(&str, Vec<&str>, Vec<&str>)> = Vec::new();
    let (mut depth, mut paren) = (0usize, 0usize);
    for k in 0..toks.len() {
        let t = toks[k];
        match t {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            "(" => paren += 1,
            ")" => paren = paren.saturating_sub(1),
            _ => {}
        }
        if !is_type(t) {
            continue;
        }
        let (name, fn_head) = match toks.get(k + 1) {
            Some(&"*") => (toks.get(k + 2).copied(), false),
            Some(n) => (Some(*n), toks.get(k + 2) == Some(&"(")),
            None => (None, false),
        };
        let Some(name) = name.filter(|n| is_ident(n) && !is_type(n)) else {
            continue;
        };
        if depth == 0 && paren == 0 {
            globals.push(name);
            if fn_head {
                funcs.push((name, Vec::new(), Vec::new()));
            }
        } else if let Some(f) = funcs.last_mut() {
            if depth == 0 {
                f.1.push(name);
            } else {
                f.2.push(name);
            }
        }
    }
    for (fname, params, locals) in &funcs {
        for n in params.iter().chain(locals) {
            if globals.contains(n) {
                return Err(format!("`{n}` in `{fname}` shadows a program-scope name"));
            }
        }
        for (j, n) in locals.iter().enumerate() {
            if params.contains(n) {
                return Err(format!("local `{n}` of `{fname}` shadows a parameter"));
            }
            if generated(n) && locals[..j].contains(n) {
                return Err(format!("generated local `{n}` declared twice in `{fname}`"));
            }
        }
    }
    Ok(())
}

fn syms_of(f: &parac_core::ir::Function) -> Vec<progen::SymInfo> {
    f.sizes
        .iter()
        .map(|s| progen::SymInfo {
            name: match s.name.as_str() {
                "M" => "M",
                "N" => "N",
                "C" => "C",
                _ => "K",
            },
            min: 1,
        })
        .collect()
}

/// Generates the program of `data` and checks it.
fn check_choices(data: &[u32], record: bool) -> Result<(), Failure> {
    let p = guarded(|| progen::program(data)).map_err(|p| Failure {
        key: format!("generator: {p}"),
        details: p,
    })?;
    if let Some(r) = &p.reject {
        let known = check_rejected(&p.source, r)?;
        if record {
            with_stats(|s| {
                s.programs += 1;
                s.rejected += 1;
                s.rejected_twin_unclean += u64::from(!known);
            });
        }
        return Ok(());
    }
    let seed = data
        .iter()
        .fold(0xC0FFEEu64, |h, &x| h.rotate_left(5) ^ x as u64);
    let clean = check_source(&p.source, Some(&p.syms), p.may_fail, seed, record)?;
    if record {
        with_stats(|s| {
            s.programs += 1;
            if clean {
                s.clean += 1;
                if p.exact {
                    s.exact += 1;
                }
                for t in &p.tags {
                    *s.tags.entry(t).or_default() += 1;
                }
            }
        });
    }
    if verbose() {
        eprintln!("--- program (clean: {clean}) ---\n{}", p.source);
    }
    Ok(())
}

/// A program the compiler must reject (`progen::Reject`): it compiles with an error, without a
/// panic; where its twin (the offending statement replaced by a valid one) compiles cleanly,
/// an error contains `r.error` (the statement's): `Ok(true)`. `Ok(false)`: the twin has
/// errors too.
fn check_rejected(src: &str, r: &progen::Reject) -> Result<bool, Failure> {
    let fail = |key: &str, details: String| Failure {
        key: key.to_string(),
        details: format!("{details}\n--- program ---\n{src}"),
    };
    let compiled = guarded(|| parac_core::compile_str(src))
        .map_err(|p| fail(&format!("compile_str: {p}"), p.clone()))?;
    let messages: Vec<&str> = compiled
        .diagnostics
        .iter()
        .map(|d| d.message.as_str())
        .collect();
    if messages.is_empty() {
        return Err(fail(
            "a program to reject compiled",
            format!("expected an error with `{}`", r.error),
        ));
    }
    let twin = guarded(|| parac_core::compile_str(&r.twin))
        .map_err(|p| fail(&format!("compile_str: {p}"), p.clone()))?;
    if !twin.diagnostics.is_empty() {
        // Rejected for something else too (as a few generated programs are): which error is
        // the statement's is not known.
        return Ok(false);
    }
    if !messages.iter().any(|m| m.contains(&r.error)) {
        return Err(fail(
            "a program to reject fails with another error",
            format!("expected an error with `{}`, got {messages:?}", r.error),
        ));
    }
    Ok(true)
}

// ---------------------------------------------------------------------------------------------
// The property test
// ---------------------------------------------------------------------------------------------

/// A proptest runner of `cases` programs from `seed`; with `replay`, the failures persisted in
/// `random_programs.proptest-regressions` first.
fn runner(seed: u64, cases: u64, replay: bool) -> TestRunner {
    let mut config = proptest::test_runner::contextualize_config(ProptestConfig {
        cases: cases.clamp(1, u32::MAX as u64) as u32,
        rng_seed: RngSeed::Fixed(seed),
        max_shrink_iters: 4096,
        max_shrink_time: 120_000,
        ..ProptestConfig::default()
    });
    config.source_file = Some(file!());
    config.test_name = Some("random_programs");
    if !replay {
        config.failure_persistence = config
            .failure_persistence
            .take()
            .map(|p| Box::new(SaveOnly(p)) as Box<dyn FailurePersistence>);
    }
    TestRunner::new(config)
}

/// A chunk's failure persistence after the first chunk: it saves a failure as the first's does
/// and replays none. The persisted choices make whatever program the generator now makes of
/// them; replayed by every chunk, one slow program of theirs took a third of the budget.
#[derive(Debug, Clone)]
struct SaveOnly(Box<dyn FailurePersistence>);

impl FailurePersistence for SaveOnly {
    fn load_persisted_failures2(&self, _: Option<&'static str>) -> Vec<PersistedSeed> {
        Vec::new()
    }

    fn save_persisted_failure2(
        &mut self,
        source_file: Option<&'static str>,
        seed: PersistedSeed,
        shrunken_value: &dyn std::fmt::Debug,
    ) {
        self.0
            .save_persisted_failure2(source_file, seed, shrunken_value);
    }

    fn box_clone(&self) -> Box<dyn FailurePersistence> {
        Box::new(self.clone())
    }

    fn eq(&self, other: &dyn FailurePersistence) -> bool {
        other
            .as_any()
            .downcast_ref::<SaveOnly>()
            .is_some_and(|o| *o.0 == *self.0)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// Known bugs (by failure key): counted and printed, not failed, unless
/// `PARAC_FUZZ_STRICT=1`. Each has a minimized regression test below. None stands now
/// (`regression_range_analysis_overflow` is fixed).
const KNOWN: &[&str] = &[];

/// Generator patterns that produce known bugs: avoided unless `PARAC_FUZZ_STRICT=1` (each has
/// a minimized regression test below). None stands now: `minmax_convert`
/// (`regression_min_max_update_of_a_converted_value`), `prefix_expr`
/// (`regression_prefix_of_a_large_window`, and `regression_prefix_of_a_long_value` in the root
/// `tests/random_programs.rs`) and `abs_unsigned` (`regression_abs_of_unsigned_on_the_cpu_path`)
/// are fixed.
const KNOWN_PATTERNS: &[&str] = &[];

fn strict() -> bool {
    std::env::var("PARAC_FUZZ_STRICT").is_ok_and(|v| v == "1")
}

fn avoid_known() {
    progen::avoid(if strict() { &[] } else { KNOWN_PATTERNS });
}

fn known(key: &str) -> bool {
    !strict() && KNOWN.iter().any(|k| key.contains(k))
}

/// The stack the random programs run on: the default test thread's 2 MiB, a caller's stack
/// as `Pipeline::compile` and the embedded functions see it. It overflowed in a debug build on
/// seed 0x6b0a101663fe3 (`lir::pass::select_loads` recursing once per level of a slide plan's
/// deep expression); every recursion over the LIR's expressions now grows its stack on the
/// heap where it runs low (`lir::visit::deep`; regression: `tests/deep_programs.rs`).
const STACK: usize = 2 * 1024 * 1024;

/// Regions of the random programs fused on OpenCL (`lir::pass::fuse::gpu`), each lowered at two
/// tiles and inlined at two lanes, and run by the LIR's evaluator against the interpreter.
static GPU_FUSED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[test]
fn random_programs() {
    std::thread::Builder::new()
        .name("random_programs".into())
        .stack_size(STACK)
        .spawn(random_programs_body)
        .expect("a thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

fn random_programs_body() {
    let start = Instant::now();
    avoid_known();
    let budget = RefCell::new(progen::budget::Budget::from_env("random_programs", SECONDS));
    let strategy = prop::collection::vec(any::<u32>(), 0..600);
    let mut result = Ok(());
    let mut chunk = 0u64;
    // Chunks of programs while the budget lasts; a chunk's programs are counted as they run.
    while result.is_ok() && budget.borrow_mut().more() {
        let seed = budget.borrow().seed().wrapping_add(chunk);
        let mut runner = runner(seed, CHUNK, chunk == 0);
        let first = Cell::new(true);
        let failed = Cell::new(false);
        result = runner
            .run(&strategy, |data| {
                // The budget's first program of the chunk was counted by the loop; once the
                // budget is spent the chunk's other cases pass at once, except while a failure
                // shrinks.
                if !first.replace(false) && !failed.get() && !budget.borrow_mut().more() {
                    return Ok(());
                }
                let done = budget.borrow().done();
                if done.is_multiple_of(1000) {
                    eprintln!(
                        "[random programs] progress: {done} programs in {:.0?}",
                        start.elapsed()
                    );
                }
                match check_choices(&data, true) {
                    Ok(()) => Ok(()),
                    Err(f) if known(&f.key) => {
                        eprintln!("[random programs] known bug: {}", f.key);
                        Ok(())
                    }
                    Err(f) => {
                        failed.set(true);
                        Err(TestCaseError::fail(format!("{}\n{}", f.key, f.details)))
                    }
                }
            })
            .map_err(|e| {
                format!(
                    "{e}\n(chunk {chunk}: replay with PARAC_FUZZ_SEED={seed:#x} PARAC_FUZZ_PROGRAMS={CHUNK})"
                )
            });
        chunk += 1;
    }
    eprintln!("{}", budget.borrow().report());
    let elapsed = start.elapsed();
    print_stats(&format!("random_programs in {elapsed:.1?}"));
    eprintln!(
        "[random programs] {} regions fused on OpenCL",
        GPU_FUSED.load(std::sync::atomic::Ordering::Relaxed)
    );
    with_stats(|s| {
        eprintln!(
            "[random programs] {:.1} programs/s",
            s.programs as f64 / elapsed.as_secs_f64()
        )
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    with_stats(|s| {
        assert!(
            s.clean * 2 >= s.programs - s.rejected,
            "fewer than half of the programs compiled cleanly: the generator explores only error paths"
        );
    });
}

// ---------------------------------------------------------------------------------------------
// Collecting failures, with a greedy shrinker
// ---------------------------------------------------------------------------------------------

/// Shrinks a choice sequence while the failure key stays the same: drops chunks, zeroes and
/// halves numbers (zero is always the plainest choice).
fn shrink(data: &[u32], key: &str) -> Vec<u32> {
    let still = |d: &[u32]| matches!(check_choices(d, false), Err(f) if f.key == key);
    let mut best = data.to_vec();
    let mut changed = true;
    let mut rounds = 0;
    while changed && rounds < 30 {
        changed = false;
        rounds += 1;
        // Truncate.
        let mut len = best.len();
        while len > 0 {
            let half = len / 2;
            if still(&best[..half]) {
                best.truncate(half);
                len = half;
                changed = true;
            } else {
                break;
            }
        }
        // Remove chunks.
        for size in [8usize, 4, 2, 1] {
            let mut i = 0;
            while i + size <= best.len() {
                let mut d = best.clone();
                d.drain(i..i + size);
                if still(&d) {
                    best = d;
                    changed = true;
                } else {
                    i += size;
                }
            }
        }
        // Zero, then halve.
        for i in 0..best.len() {
            if best[i] == 0 {
                continue;
            }
            let mut d = best.clone();
            d[i] = 0;
            if still(&d) {
                best = d;
                changed = true;
                continue;
            }
            let mut d = best.clone();
            d[i] /= 2;
            if still(&d) {
                best = d;
                changed = true;
            }
        }
    }
    best
}

/// `PARAC_FUZZ_COLLECT=N`: N random programs, every distinct failure kept, minimized and
/// printed (as the program and its choice sequence).
#[test]
#[ignore]
fn collect_failures() {
    let n = env_u64("PARAC_FUZZ_COLLECT").unwrap_or(2000);
    let seed = env_u64("PARAC_FUZZ_SEED").unwrap_or(0x7261_6e64_6f6d_0002);
    let mut rng = progen::Rng::new(seed);
    avoid_known();
    let mut found: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let start = Instant::now();
    for _ in 0..n {
        let len = rng.below(600) as usize;
        let data = rng.choices(len);
        if let Err(f) = check_choices(&data, true) {
            let e = found.entry(f.key.clone()).or_insert_with(|| data.clone());
            if data.len() < e.len() {
                *e = data;
            }
        }
    }
    print_stats(&format!("collect_failures in {:.1?}", start.elapsed()));
    let mut report = String::new();
    for (key, data) in &found {
        let small = shrink(data, key);
        let p = progen::program(&small);
        let details = check_choices(&small, false)
            .err()
            .map(|f| f.details)
            .unwrap_or_default();
        report.push_str(&format!(
            "\n=== {key}\nchoices: {small:?}\n{}\n",
            details.split("--- program ---").next().unwrap_or(""),
        ));
        report.push_str(&p.source);
    }
    eprintln!(
        "[random programs] {} distinct failures{report}",
        found.len()
    );
    assert!(found.is_empty(), "{} distinct failures", found.len());
}

// ---------------------------------------------------------------------------------------------
// Regressions: minimized failures found by this generator
// ---------------------------------------------------------------------------------------------

/// Compiles `src` (it must compile cleanly), runs the code generators, and runs the
/// interpreter on `sizes` with a few argument seeds: every run must succeed.
fn expect_ok(src: &str, sizes: &[(&str, usize)]) {
    let c = parac_core::compile_str(src);
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    check_source(src, None, true, 1, false).unwrap_or_else(|f| panic!("{}\n{}", f.key, f.details));
    let f = &c.module.functions[0];
    let sizes: progen::Sizes = sizes.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    for seed in 0..4 {
        let mut args = progen::args(f, &sizes, seed);
        let r = interp::run(f, &mut args);
        assert!(r.is_ok(), "sizes {sizes:?}, seed {seed}: {r:?}\n{src}");
    }
}

/// Bug, fixed in 33b5f15 (found by the generator's errors at valid sizes, minimized by hand
/// from the shrunk program): a read under an `if` that bounds its index is fine on its own,
/// but nested in the
/// subscript of another access (a lookup) it counts as unconditional:
/// `codegen::safety::conditional` walks the expression tree, which holds the outer `Load` and
/// not the loads of its subscripts (they live in `Region::accesses`), so `host_provable` has
/// the host prove `a[x + 1]` over the whole iteration space. Every path (the interpreter, the
/// CPU path, OpenCL, which share that check) then fails with `OutOfBounds { read of a at
/// [N] }` before running, though the read never executes outside (and the compiler's own
/// checks accepted it as guarded). Expected: `Ok`. The same holds for a guarded store whose
/// subscript reads data, and for window starts.
#[test]
fn regression_guarded_read_nested_in_a_subscript() {
    // The plain guarded read is fine ...
    expect_ok(
        "fn f(a: &u8[N], o: &mut u8[N]) {
            parac_iterator it(0:N:1) {
                if itx + 1 < N {
                    o[itx] = a[itx + 1];
                }
            }
        }",
        &[("N", 7)],
    );
    // ... nested in a lookup's subscript, it fails.
    expect_ok(
        "fn f(a: &u8[N], o: &mut u8[N]) {
            const T: u8[4] = [1, 2, 3, 4];
            parac_iterator it(0:N:1) {
                if itx + 1 < N {
                    o[itx] = T[a[itx + 1] & 3];
                }
            }
        }",
        &[("N", 7)],
    );
}

/// Bug (found by the generator's histograms): `m[i] = max(m[i], e as i32)` into `i32` bins
/// (or `u32` ones with `as u32`) at a place from data is an error, "two iterations of `it`
/// may write the same element of `m`", though docs/language.md ("Reductions into shared
/// elements") has the value "of the element's type, or converted from it"; so is a value of a
/// narrower type, `max(m[i], a[x][y])` with `a` of `u8`. Into `i16` bins, `e as i16` is an
/// update. `lower::assign::min_max_update` strips one conversion from the value (the one C's
/// promotions add to a narrow element's operands) and then requires the value's own type to
/// be the element's: of `e as i32` it sees `e`. Expected: an update, as
/// `m[i] = max(m[i], e as i32 + 0)` is (the generator writes that, `minmax_convert`).
#[test]
fn regression_min_max_update_of_a_converted_value() {
    expect_ok(
        "fn f(a: &u8[M][N], h: &mut i32[16], g: &mut u32[16]) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                h[a[x][y] % 16] = max(h[a[x][y] % 16], a[x][y] as i32);
                g[a[x][y] % 16] = min(g[a[x][y] % 16], a[x][y]);
            }
        }",
        &[("M", 5), ("N", 7)],
    );
}

/// Bug, fixed (found by the generator's prefixes, seed 0x5a17c0de): the OpenCL C printer
/// panicked ("a fold under a condition", `codegen/opencl/kernel/expr.rs`, `fold`'s
/// `debug_assert`) on a prefix whose value holds a window reduction written as a loop (more
/// than 64 elements, or of host length): the scan's `select(first, value, running + value)`
/// held it in an arm. A prefix's value is now bound by a `let` before its scans (and an integer
/// scan has no select). Expected: OpenCL C for it, the interpreter's results, in `i32` and
/// `f32`.
#[test]
fn regression_prefix_of_a_large_window() {
    for ty in ["i32", "f32"] {
        expect_ok(
            &format!(
                "fn f(a: &u8[M][N], o: &mut {ty}[M][N]) {{
                    parac_iterator it(x in 0:M:1; y in 0:N:1) {{
                        o[x][y] = parac_prefix_sum(parac_matrix_sum(a[clamp(x, 0, M - 5):5][clamp(y, 0, N - 13):13]) as {ty}, y);
                    }}
                }}"
            ),
            &[("M", 6), ("N", 14)],
        );
    }
}

/// Bug, fixed (found by the corpus: `tests/random_corpus.rs` did not compile): `abs` of an
/// unsigned integer (`u32`, `u64`), in a kernel or a host `let`, was `(x).wrapping_abs()` on
/// the CPU path (`codegen::cpu`), a method `u32` does not have: the `parac!` expansion did not
/// compile (`error[E0599]: no method named wrapping_abs found for type u32`). The interpreter and
/// OpenCL C (`abs(uint)`) give the value itself. Expected: an expansion that compiles (no
/// `wrapping_abs` on unsigned values). Fix: `abs` of an unsigned type (the operand's type
/// after C's promotions: `u8`/`u16` become `i32`, whose `wrapping_abs` is right) is the value
/// itself in `codegen::cpu` (and in `check::eval`, where a `u64` above `i64::MAX` is held
/// negative).
#[test]
fn regression_abs_of_unsigned_on_the_cpu_path() {
    let src = "fn f(a: &u32[N], o: &mut u32[N], k: u32) -> u32 {
        let h = abs(k);
        parac_iterator it(0:N:1) {
            o[itx] = abs(a[itx]);
        }
        return h;
    }";
    expect_ok(src, &[("N", 5)]);
    let c = parac_core::compile_str(src);
    let expansion = codegen::expand(&c).to_string();
    let at = expansion.find("wrapping_abs");
    assert!(
        at.is_none(),
        "the expansion calls wrapping_abs on a u32 value: ...{}...",
        at.map_or("", |i| &expansion[i.saturating_sub(60)..i + 20])
    );
}

/// Bug, fixed (found by `collect_failures`, minimized by hand from the shrunk program): the
/// value-range analysis of the OpenCL peephole candidates (then the HAST printer's `range.rs`,
/// `BinOp::Mul`; since, `lir::range`) multiplied the bounds in `i128` unchecked: `k * k` for a `u64` (whole range,
/// up to `2^64 - 1` squared) overflows, and `codegen::expand` (so the `parac!` macro,
/// `Pipeline`, `opencl::program`) panicked with "attempt to multiply with overflow" in builds
/// with overflow checks (in release the bounds wrapped, and the range was wrong). Expected: no
/// panic (a range too wide for `i128` is the type's whole range). Fix: the interval arithmetic
/// (sums, differences, products, negation, `abs`, sums of window reductions and convolutions)
/// is checked; an overflow gives the type's whole range.
#[test]
fn regression_range_analysis_overflow() {
    expect_ok(
        "fn f(a: &u8[N], o: &mut u8[N], k: u64) {
            parac_iterator it(0:N:1) {
                let w = k * k;
                o[itx] = a[itx];
            }
        }",
        &[("N", 3)],
    );
}

/// Bug (found by seed 0x6b0bfc4f00735 of `random_programs`): the sliding window pass computed
/// a window's column sums ahead for every column of the row, though the window was read under
/// an `if` that held for none of them: its taps past the matrix's last column were read, and
/// the LIR failed with `OutOfBounds` where the interpreter (and the direct form) returned `Ok`.
/// A fold evaluated for some columns alone now stays as it is (`slide::window::windows_of`).
#[test]
fn regression_a_window_under_an_if_does_not_slide() {
    let src = "fn f(a: &u8[M][N], o: &mut i32[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            if ity < N - 4 && itx < M - 2 {
                o[itx][ity] = parac_matrix_sum(a[itx:3:1][ity:5]);
            }
        }
    }";
    let c = parac_core::compile_str(src);
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let f = &c.module.functions[0];
    let lowered = lir::lower(f, &lir::Options::default());
    for (m, n) in [(4, 3), (4, 4), (5, 6), (9, 9), (3, 12)] {
        let sizes: progen::Sizes = [("M".to_string(), m), ("N".to_string(), n)]
            .into_iter()
            .collect();
        let mut want = progen::args(f, &sizes, 1);
        let mut got = want.clone();
        let r1 = interp::run(f, &mut want);
        let r2 = lir::eval::run(&lowered.func, f, &mut got);
        assert!(
            r1.is_ok() && same_result(&r1, &r2),
            "{m}x{n}: {r1:?} {r2:?}"
        );
        let same = want.iter().zip(&got).all(|(x, y)| match (x, y) {
            (Arg::Matrix(x), Arg::Matrix(y)) => same_data(&x.data, &y.data),
            (x, y) => x == y,
        });
        assert!(same, "{m}x{n}");
    }
}

/// The check of [`names_unshadowed`] finds the shadowing once found in the printer (a hoisted load
/// `c3` shadowing the `__constant` filter `c3`), a local shadowing a parameter and a generated
/// local declared twice, and passes every program the printer makes of a plain pipeline.
#[test]
fn names_check_finds_shadowing() {
    let bad = [
        "__constant uchar c3[7] = {1, 2, 3, 4, 5, 6, 7};\n__kernel void k(__global const uchar* m0) {\n    const uchar c3 = m0[0];\n}\n",
        "__kernel void k(__global const uchar* m0, int z0) {\n    const int z0 = 1;\n}\n",
        "__kernel void k(__global const uchar* m0) {\n    const int t0 = 1;\n    if (1) { const int t0 = 2; }\n}\n",
    ];
    for src in bad {
        assert!(names_unshadowed(src).is_err(), "{src}");
    }
    let c = parac_core::compile_str(
        "fn f(a: &u8[M][N], o: &mut u16[M][N]) {
            const W: u8[7][1] = [[1], [2], [3], [4], [3], [2], [1]];
            parac_border_rule e = replicate(a[3][*]);
            parac_iterator it(0:M:1; 0:N:1) parac_border_rule(e) {
                o[itx][ity] = parac_convolution(W, a[itx-3:7:1][ity]);
            }
        }",
    );
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let f = &c.module.functions[0];
    names_unshadowed(&codegen::opencl::program(f)).expect("the baseline program");
    let plans = codegen::launch::plans(f, 0);
    assert!(plans.len() > 3, "candidates to check");
    for p in plans {
        if let Some(src) = &p.source(f) {
            names_unshadowed(src).unwrap_or_else(|e| panic!("plan {}: {e}\n{src}", p.label));
        }
    }
}

/// The generator itself: deterministic, and mostly valid programs from plain choices.
#[test]
fn generator_is_deterministic() {
    let mut rng = progen::Rng::new(5);
    for _ in 0..50 {
        let d = rng.choices(300);
        assert_eq!(progen::program(&d).source, progen::program(&d).source);
    }
    // The all-zero sequence is the plainest program, and it compiles.
    let p = progen::program(&[]);
    let c = parac_core::compile_str(&p.source);
    assert!(
        c.diagnostics.is_empty(),
        "{}\n{:?}",
        p.source,
        c.diagnostics
    );
}

/// The generator writes histograms, prefix scans and programs to reject at a modest rate (so
/// that the other constructs keep their share of the budget), each kind of them.
#[test]
fn generator_writes_reductions_and_scans() {
    let mut rng = progen::Rng::new(11);
    let n = 1000;
    let mut tags: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut rejects = 0;
    for _ in 0..n {
        let len = rng.below(600) as usize;
        let p = progen::program(&rng.choices(len));
        for t in &p.tags {
            *tags.entry(t).or_default() += 1;
        }
        if let Some(r) = &p.reject {
            rejects += 1;
            assert_ne!(r.twin, p.source, "a twin is another program");
        }
    }
    let share = |t: &str| tags.get(t).copied().unwrap_or(0);
    for (t, lo, hi) in [
        ("reduce", 50, 300),
        ("histogram", 30, 200),
        ("scan", 30, 250),
    ] {
        assert!(
            (lo..=hi).contains(&share(t)),
            "{} of {n} programs with `{t}`",
            share(t)
        );
    }
    assert!(
        (3..=40).contains(&rejects),
        "{rejects} of {n} programs to reject"
    );
    for t in [
        "reduce:1d",
        "reduce:2d",
        "reduce:3d",
        "reduce:rows",
        "reduce:grid",
        "reduce:output",
        "reduce:attached",
        "reduce:f32",
        "reduce:narrow",
        "reduce:under_if",
        "reduce:uniform",
        "reduce:min",
        "reduce:max",
        "reduce:xor",
        "reduce_raw",
        "scan:2d",
        "scan:cumulative",
        "scan:min",
        "scan:max",
    ] {
        assert!(share(t) > 0, "no program with `{t}`");
    }
}

// ---------------------------------------------------------------------------------------------
// The corpus for the CPU path
// ---------------------------------------------------------------------------------------------

/// `PARAC_BLESS=1`: writes `tests/random_corpus.rs` (workspace root) with 30 generated
/// programs (`PARAC_CORPUS_N` to change that) and `tests/random_corpus_cpu.rs`, the CPU path's
/// corpus, with 300 others (`PARAC_CORPUS_CPU_N`), chosen in seed order for the constructs they
/// add, each compiling cleanly and running on the interpreter without `Unsupported`.
/// `PARAC_CORPUS_ONLY_CPU=1` writes only the second.
#[test]
#[ignore]
fn bless_corpus() {
    if !std::env::var("PARAC_BLESS").is_ok_and(|v| v == "1") {
        eprintln!("set PARAC_BLESS=1 to rewrite tests/random_corpus.rs");
        return;
    }
    if !std::env::var("PARAC_CORPUS_ONLY_CPU").is_ok_and(|v| v == "1") {
        corpus::bless(
            corpus::Corpus::Both,
            env_u64("PARAC_CORPUS_N").map_or(30, |n| n as usize),
        );
    }
    corpus::bless(
        corpus::Corpus::Cpu,
        env_u64("PARAC_CORPUS_CPU_N").map_or(300, |n| n as usize),
    );
}

#[path = "gen/corpus.rs"]
mod corpus;

/// `PARAC_FUZZ_FILE=prog.parac [PARAC_FUZZ_SIZES=M=4,N=5]`: compiles one program and runs the
/// interpreter on a few argument seeds, printing each outcome (a tool for minimizing by hand).
#[test]
#[ignore]
fn run_file() {
    let Ok(path) = std::env::var("PARAC_FUZZ_FILE") else {
        return;
    };
    let src = std::fs::read_to_string(&path).expect("the program");
    if let Err(f) = check_source(&src, None, true, 1, false) {
        eprintln!("check: {}", f.key);
    }
    let c = parac_core::compile_str(&src);
    for d in &c.diagnostics {
        eprintln!("diagnostic: {}", d.message);
    }
    let f = &c.module.functions[0];
    let sizes: progen::Sizes = std::env::var("PARAC_FUZZ_SIZES")
        .unwrap_or_default()
        .split(',')
        .filter_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            Some((k.trim().to_string(), v.trim().parse().ok()?))
        })
        .collect();
    for seed in 0..4 {
        let mut args = progen::args(f, &sizes, seed);
        let r = interp::run(f, &mut args);
        eprintln!("seed {seed}: {r:?}");
    }
}

/// Random iterated stencils (`gen/time_steps.rs`), lowered with time tiling off and in bands
/// of 2 to 8 steps in tasks of 1 to 32 rows, overlapped or split, 2-D grids and 3-D ones
/// (tiled by planes), run by the LIR's evaluator against the
/// interpreter at sizes from 1x1 to 19x11 and 9x35 and counts 0, 1, 2, 3, 5 and 7: the same
/// results, or the same error; and, where a step is one region, as OpenCL's time bands of 2 to
/// 4 steps on tiles of 16x8 to 32x8 (`lir::pass::fuse::time::gpu`). `PARAC_FUZZ_ITERATED=N` makes N programs (60 by default).
#[test]
fn random_iterated_stencils_match_the_interpreter_tiled_or_not() {
    let n: usize = std::env::var("PARAC_FUZZ_ITERATED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let mut rng = progen::Rng::new(0x2545_f491_4f6c_dd1d);
    // Overlapped tiles and split tiling (tasks of at least the rows a split needs).
    let switches: Vec<(String, lir::Options)> = [
        (0, 32, true, false),
        (2, 1, true, false),
        (3, 2, false, false),
        (4, 5, true, false),
        (8, 32, true, false),
        (2, 1, true, true),
        (3, 1, false, true),
        (5, 16, true, true),
    ]
    .into_iter()
    .map(|(k, rows, partition, split): (i64, i64, bool, bool)| {
        (
            format!("bands of {k}, tasks of {rows} rows, partition {partition}, split {split}"),
            lir::Options {
                time_steps: k,
                time_rows: rows,
                time_model: false,
                time_split: Some(split),
                partition,
                dump: true,
                ..lir::Options::default()
            },
        )
    })
    .collect();
    let (mut runs, mut tiled, mut banded) = (0, 0, 0);
    // 2-D grids, then 3-D ones (a third as many), each at its sizes.
    let planar: &[&[i64]] = &[
        &[1, 1],
        &[1, 4],
        &[3, 1],
        &[5, 7],
        &[12, 3],
        &[19, 11],
        &[9, 35],
    ];
    let cubic: &[&[i64]] = &[&[1, 1, 1], &[2, 3, 1], &[5, 2, 3], &[9, 3, 4], &[17, 2, 5]];
    for i in 0..n + n / 3 {
        let (src, shapes) = match i < n {
            true => (progen::time_steps::program(&mut rng), planar),
            false => (progen::time_steps::program3(&mut rng), cubic),
        };
        let c = parac_core::compile_str(&src);
        assert!(c.diagnostics.is_empty(), "{src}\n{:?}", c.diagnostics);
        let f = &c.module.functions[0];
        let mut lowered: Vec<(String, lir::Lowered)> = switches
            .iter()
            .map(|(s, o)| (s.clone(), lir::lower(f, o)))
            .collect();
        tiled += lowered
            .iter()
            .filter(|(_, l)| l.dumps.iter().any(|(stage, _)| *stage == "time"))
            .count();
        // OpenCL's time bands (work-groups of 16x8 over tiles of a few groups), as the
        // executor runs them: bands, then the steps left.
        for rid in 0..f.regions.len() {
            if !lir::pass::fuse::time::gpu::bandable(f, rid) {
                continue;
            }
            // Overlapped tiles, and split bands (four phases in place) on the fewest rows and
            // columns a split allows.
            let mut bands: Vec<(String, lir::Options)> =
                [(2, [16, 8]), (3, [16, 16]), (4, [32, 8])]
                    .into_iter()
                    .map(|(k, tile)| {
                        let o = lir::Options {
                            time_band: Some((k, tile)),
                            ..lir::Options::gpu()
                        };
                        (format!("OpenCL bands of {k} steps, tiles {tile:?}"), o)
                    })
                    .collect();
            for k in [3, 5] {
                if let Some(tile) = lir::pass::fuse::time::gpu::split_tile(f, rid, k) {
                    let o = lir::Options {
                        time_split_band: Some((k, tile)),
                        ..lir::Options::gpu()
                    };
                    bands.push((
                        format!("OpenCL split bands of {k} steps, tiles {tile:?}"),
                        o,
                    ));
                }
            }
            for (name, o) in bands {
                let o = lir::Options {
                    region: Some(rid),
                    host_proofs: false,
                    dump: true,
                    ..o
                };
                let l = lir::lower(f, &o);
                assert!(
                    l.dumps.iter().any(|(stage, _)| *stage == "time_band"),
                    "{src}\nbandable, but no {name}"
                );
                banded += 1;
                lowered.push((name, l));
            }
        }
        for &sizes in shapes {
            let steps = [0, 1, 2, 3, 5, 7][rng.below(6) as usize];
            let Some(start) = progen::time_steps::args(f, sizes, steps, &mut rng) else {
                continue;
            };
            let mut want = start.clone();
            let result = interp::run(f, &mut want);
            for (switch, l) in &lowered {
                let mut got = start.clone();
                let r = lir::eval::run(&l.func, f, &mut got);
                runs += 1;
                match (&result, &r) {
                    (Ok(a), Ok(b)) => {
                        assert_eq!(a, b, "{src}\nat {sizes:?}, {steps} steps ({switch})");
                        assert_eq!(got, want, "{src}\nat {sizes:?}, {steps} steps ({switch})");
                    }
                    (Err(a), Err(b)) => assert_eq!(
                        a.to_string(),
                        b.to_string(),
                        "{src}\nat {sizes:?}, {steps} steps ({switch})"
                    ),
                    _ => panic!(
                        "{src}\nat {sizes:?}, {steps} steps ({switch}): {result:?} against {r:?}"
                    ),
                }
            }
        }
    }
    eprintln!(
        "[time steps] {n} programs on 2-D grids and {} on 3-D ones, {runs} runs, {tiled} tiled \
         lowerings, {banded} OpenCL bands",
        n / 3
    );
    assert!(tiled > n / 4, "only {tiled} lowerings tiled");
    assert!(banded > n / 4, "only {banded} OpenCL bands");
}
