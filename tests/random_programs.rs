//! Random programs on every path: the generator of
//! `parac-core/tests/gen/mod.rs` makes well-typed random pipelines; each is compiled at run time
//! by `parac::Pipeline::compile` and run
//!
//! - on `Runtime::cpu()`, against the reference interpreter on the same arguments: identical
//!   results (floats by their bits) or the same error;
//! - on the OpenCL device, with the baseline and with each candidate plan of the program forced
//!   (`PlanPolicy::Fixed(label, [16, 4])`), against the interpreter with outputs starting at
//!   zero (the OpenCL path zero-fills the output elements it does not write, the interpreter and
//!   the CPU path keep the caller's): floats within a relative 1e-5
//!   (`|a - b| <= 1e-5 * max(1, |a|, |b|)`: OpenCL's `/`, `sqrt`, `exp` are a few ulp off and it
//!   may contract `a * b + c`), integers bit-exact unless a float value flows into them
//!   (`Program::exact`), errors the same variant, region and matrix. A program with prefixes
//!   along two variables of one iterator runs on the CPU path alone: on OpenCL its baseline
//!   must be `Error::Unsupported` (`codegen::opencl::unsupported`'s reason).
//!
//! A program the generator means the compiler to reject (`Program::reject`: a store at a place
//! from data that is no reduction, and the like) must fail to compile, and is not run.
//!
//! Each program runs on a few size sets (tiny and odd ones, at or above the program's own
//! minimum sizes, and one of any size) and once with one argument's shape changed. Without
//! OpenCL the device half is skipped, unless `PARAC_REQUIRE_OPENCL=1`.
//!
//! Memory safety: the device has guard bands on (`Device::set_guard_bands`: every device
//! buffer, intermediates, outputs, partials and the error flag included, sits between two
//! guard regions holding a known pattern), and `Device::check_guards` runs after every call: a
//! touched guard fails the test naming the program and the buffer. (`Pipeline` copies the
//! caller's tensors in and out, so there is no caller's memory in place to put canaries around;
//! `tests/common/canary.rs` does that for the code `parac!` emits.)
//!
//! Knobs: how many programs and which (`parac-core/tests/gen/budget.rs`): by default programs
//! for [`SECONDS`], from a seed that changes every run and is printed;
//! `PARAC_FUZZ_PROGRAMS=N` for a count, `PARAC_FUZZ_SECONDS`, `PARAC_FUZZ_SEED` to replay a
//! run. Also `PARAC_FUZZ_STRICT=1` (known bugs fail too),
//! `PARAC_FUZZ_SHRINK=0` (report failures without minimizing them). A failure is minimized by a
//! greedy shrinker over the generator's choice sequence and printed with the program, the
//! choices (replay with `PARAC_FUZZ_CHOICES=1,2,3`), the sizes and the plan.

#[path = "../parac-core/tests/gen/mod.rs"]
mod progen;

mod common;

use common::differential::{
    Tolerance, memory_intact, opencl_with_guard_bands as opencl, outcomes, plan_labels, policy,
    run_error, zero_outputs,
};
use parac::{Pipeline, Runtime};
use parac_core::interp::{self, Arg, Data, InterpError};
use std::time::Instant;

fn strict() -> bool {
    std::env::var("PARAC_FUZZ_STRICT").is_ok_and(|v| v == "1")
}

/// Generator patterns of known bugs, avoided unless `PARAC_FUZZ_STRICT=1` (see
/// `parac-core/tests/random_programs.rs`); none stands now (`minmax_convert` and `prefix_expr`
/// are fixed: `regression_prefix_of_a_long_value` below).
const KNOWN_PATTERNS: &[&str] = &[];

/// A failure: a key (which check, what kind of difference) and the details.
struct Failure {
    key: String,
    details: String,
}

/// Runs `args` on the interpreter and through the pipeline on `rt`; the difference, if any.
fn compare(
    f: &parac_core::ir::Function,
    p: &Pipeline,
    rt: &Runtime,
    args: &[Arg],
    tol: Tolerance,
) -> Option<(String, String)> {
    let mut a_int = args.to_vec();
    let want = interp::run(f, &mut a_int);
    let mut a_rt = args.to_vec();
    let got = p.run(rt, &f.name, &mut a_rt);
    // Every buffer of the call is dropped by now, its guards checked; any still alive too.
    memory_intact(rt, &got)
        .err()
        .or_else(|| outcomes(&want, &a_int, &got, &a_rt, tol))
}

/// Counts of what the checks saw.
#[derive(Default)]
struct Counts {
    programs: usize,
    clean: usize,
    cpu_runs: usize,
    opencl_runs: usize,
    plans: usize,
    /// Plans left out because the budget's time ran out during their program.
    plans_skipped: usize,
    /// Programs the compiler rejected as it must (`progen::Reject`).
    rejected: usize,
    /// Programs with prefixes along two variables of one iterator (OpenCL: `Unsupported`).
    cpu_only: usize,
}

thread_local! {
    /// When the run's time budget ends (`None`: no end, as when shrinking a failure): a program
    /// whose plans reach past it stops after its first plan, so that one program with large
    /// kernels (minutes of PoCL compiling, a CI run found) does not overrun the budget.
    static DEADLINE: std::cell::Cell<Option<Instant>> = const { std::cell::Cell::new(None) };
}

/// Whether the run's time budget has ended ([`DEADLINE`]).
fn past_deadline() -> bool {
    DEADLINE.get().is_some_and(|d| Instant::now() > d)
}

/// Generates the program of `data` and checks it on the CPU path and, with `dev`, on every
/// plan of the device.
fn check(data: &[u32], dev: Option<&mut Runtime>, counts: &mut Counts) -> Result<(), Failure> {
    let prog = progen::program(data);
    counts.programs += 1;
    let fail = |key: String, details: String| Failure {
        key,
        details: format!("{details}\n--- program ---\n{}", prog.source),
    };
    if let Some(r) = &prog.reject {
        // Which error it is, parac-core's test checks.
        return match Pipeline::compile(&prog.source) {
            Ok(_) => Err(fail(
                "a program to reject compiled".into(),
                format!("expected an error with `{}`", r.error),
            )),
            Err(_) => {
                counts.rejected += 1;
                Ok(())
            }
        };
    }
    let pipeline = match Pipeline::compile(&prog.source) {
        Ok(p) => p,
        Err(_) => return Ok(()), // diagnostics: skipped, as in parac-core's test
    };
    counts.clean += 1;
    let f = &pipeline.functions()[0];
    let seed = data
        .iter()
        .fold(0x5EED_u64, |h, &x| h.rotate_left(7) ^ x as u64);
    let mut rng = progen::Rng::new(seed);
    // Size sets: at the minimum, two random ones at or above it, one of any size.
    let mut sets: Vec<progen::Sizes> = vec![
        prog.syms
            .iter()
            .map(|s| (s.name.to_string(), s.min))
            .collect(),
    ];
    sets.push(progen::sizes(&prog.syms, &mut rng, true));
    sets.push(progen::sizes(&prog.syms, &mut rng, true));
    sets.push(progen::sizes(&prog.syms, &mut rng, false));
    let mut cases: Vec<(String, Vec<Arg>, Vec<Arg>)> = Vec::new();
    for (k, s) in sets.iter().enumerate() {
        cases.push((
            format!("sizes {s:?}"),
            progen::args_with(f, s, seed ^ k as u64, false),
            progen::args_with(f, s, seed ^ k as u64, false),
        ));
    }
    let mut bad = progen::args_with(f, &sets[0], seed ^ 99, true);
    if progen::perturb_shape(&mut bad, &mut rng) {
        zero_outputs(f, &mut bad);
        cases.push((
            format!("sizes {:?}, one shape changed", sets[0]),
            bad.clone(),
            bad,
        ));
    }
    // The CPU path: bit for bit.
    let cpu = Runtime::cpu();
    for (what, args, _) in &cases {
        counts.cpu_runs += 1;
        if let Some((key, d)) = compare(f, &pipeline, &cpu, args, Tolerance::EXACT) {
            return Err(fail(format!("CPU path: {key}"), format!("{what}: {d}")));
        }
    }
    // Every plan on the device.
    let Some(rt) = dev else { return Ok(()) };
    let tol = Tolerance::device(prog.exact);
    if let Some(why) = parac_core::codegen::opencl::unsupported(f) {
        counts.cpu_only += 1;
        return cpu_only(f, &pipeline, rt, &cases, tol, &why, counts)
            .map_err(|(key, details)| fail(key, details));
    }
    // A program that starts after the budget's end runs its baseline alone, from the baseline's
    // own program (not one holding every candidate's kernel).
    let labels = if past_deadline() {
        vec!["baseline".to_string()]
    } else {
        plan_labels(f)
    };
    let one_program = rt.device().is_some_and(|d| d.one_program());
    if let Some(d) = rt.device() {
        d.set_one_program(one_program && labels.len() > 1);
    }
    let tested = test_plans(f, &pipeline, rt, &labels, &cases, tol, counts)
        .map_err(|(key, details)| fail(key, details));
    if let Some(d) = rt.device() {
        d.set_one_program(one_program);
    }
    tested
}

/// [`check`]'s OpenCL half: each plan of `labels` forced on the cases, until the budget's end.
fn test_plans(
    f: &parac_core::ir::Function,
    pipeline: &Pipeline,
    rt: &mut Runtime,
    labels: &[String],
    cases: &[(String, Vec<Arg>, Vec<Arg>)],
    tol: Tolerance,
    counts: &mut Counts,
) -> Result<(), (String, String)> {
    for (i, label) in labels.iter().enumerate() {
        if i > 0 && past_deadline() {
            counts.plans_skipped += labels.len() - i;
            break;
        }
        counts.plans += 1;
        rt.set_policy(policy(label));
        for (what, _, args) in cases {
            counts.opencl_runs += 1;
            if let Some((key, d)) = compare(f, pipeline, rt, args, tol) {
                return Err((
                    format!("OpenCL: {key}"),
                    format!("plan {label}, {what}: {d}"),
                ));
            }
        }
    }
    Ok(())
}

/// [`check`]'s OpenCL half for a program with prefixes along two variables of one iterator
/// (`why`), which run on the CPU path alone: on the baseline, each case is
/// `Error::Unsupported`, or agrees with the interpreter (an argument's shape fails first).
fn cpu_only(
    f: &parac_core::ir::Function,
    pipeline: &Pipeline,
    rt: &mut Runtime,
    cases: &[(String, Vec<Arg>, Vec<Arg>)],
    tol: Tolerance,
    why: &str,
    counts: &mut Counts,
) -> Result<(), (String, String)> {
    rt.set_policy(policy("baseline"));
    for (what, _, args) in cases {
        counts.opencl_runs += 1;
        let mut a_rt = args.to_vec();
        let got = pipeline.run(rt, &f.name, &mut a_rt);
        if let Err(parac::Error::Unsupported { reason, .. }) = &got
            && *reason == why
        {
            continue;
        }
        let mut a_int = args.to_vec();
        let want = interp::run(f, &mut a_int);
        if let Some((key, d)) = memory_intact(rt, &got)
            .err()
            .or_else(|| outcomes(&want, &a_int, &got, &a_rt, tol))
        {
            return Err((
                format!("OpenCL (prefixes along two variables): {key}"),
                format!("{what}: {d} (expected `Unsupported`: {why})"),
            ));
        }
    }
    Ok(())
}

/// Shrinks a failing choice sequence while the failure key stays the same (drops chunks,
/// zeroes and halves numbers: zero is always the generator's plainest choice).
fn shrink(data: &[u32], key: &str, mut dev: Option<&mut Runtime>) -> Vec<u32> {
    let mut still = |d: &[u32]| {
        let mut c = Counts::default();
        matches!(guarded_check(d, dev.as_deref_mut(), &mut c), Err(f) if f.key == key)
    };
    let mut best = data.to_vec();
    let mut changed = true;
    let mut rounds = 0;
    while changed && rounds < 8 {
        changed = false;
        rounds += 1;
        while !best.is_empty() && still(&best[..best.len() / 2]) {
            let half = best.len() / 2;
            best.truncate(half);
            changed = true;
        }
        for size in [8usize, 2, 1] {
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
        for i in 0..best.len() {
            if best[i] == 0 {
                continue;
            }
            let mut d = best.clone();
            d[i] = 0;
            if still(&d) {
                best = d;
                changed = true;
            }
        }
    }
    best
}

/// Known bugs: a fragment of the failure key and the ignored regression test that keeps the
/// bug, counted and printed, not failed, unless `PARAC_FUZZ_STRICT=1`. None stands: the row
/// check of a store that never runs is fixed in the interpreter
/// (`regression_row_check_of_a_store_that_never_runs`; the CPU path's twin is not reachable
/// through `Pipeline`), the range analysis overflow in caee083
/// (`regression_range_analysis_overflow` in parac-core), the error order on OpenCL in 1dc9dee
/// (`regression_error_order_on_opencl` in `tests/random_corpus.rs`).
const KNOWN: &[(&str, &str)] = &[];

fn known(f: &Failure) -> Option<String> {
    if strict() {
        return None;
    }
    KNOWN
        .iter()
        .find(|(key, _)| f.key.contains(key))
        .map(|(key, test)| format!("{key} ({test})"))
}

thread_local! {
    static LAST_PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Records the location and message of a panic (and prints it as usual).
fn install_hook() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
                (*s).to_string()
            } else if let Some(s) = info.payload().downcast_ref::<String>() {
                s.clone()
            } else {
                String::new()
            };
            let loc = info
                .location()
                .map_or_else(String::new, |l| format!("{}:{}", l.file(), l.line()));
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("panic at {loc}: {msg}")));
            default(info);
        }));
    });
}

/// [`check`], a panic being a failure too.
fn guarded_check(
    data: &[u32],
    dev: Option<&mut Runtime>,
    counts: &mut Counts,
) -> Result<(), Failure> {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(data, dev, counts)));
    r.unwrap_or_else(|_| {
        let p = LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| "panic".to_string());
        Err(Failure {
            key: p.clone(),
            details: format!("{p}\n--- program ---\n{}", progen::program(data).source),
        })
    })
}

/// The default time budget of [`random_programs_on_every_path`] (`PARAC_FUZZ_SECONDS`): most of
/// it is PoCL compiling each program's candidates.
const SECONDS: f64 = 60.0;

#[test]
fn random_programs_on_every_path() {
    let start = Instant::now();
    progen::avoid(if strict() { &[] } else { KNOWN_PATTERNS });
    let mut budget = progen::budget::Budget::from_env("random programs", SECONDS);
    let guards_before = parac::opencl::guard_violations();
    let mut dev = opencl();
    let mut counts = Counts::default();
    let mut failures: Vec<(String, Vec<u32>, String)> = Vec::new();
    let mut known_hits = 0;
    let replay: Option<Vec<u32>> = std::env::var("PARAC_FUZZ_CHOICES").ok().map(|list| {
        list.split(',')
            .filter_map(|x| x.trim().parse().ok())
            .collect()
    });
    let mut rng = progen::Rng::new(budget.seed());
    install_hook();
    loop {
        let data = match &replay {
            Some(d) if budget.done() == 0 && budget.more() => d.clone(),
            None if budget.more() => {
                let len = 50 + rng.below(350) as usize;
                rng.choices(len)
            }
            _ => break,
        };
        // The first of every four programs is built as a user's is, with the driver's
        // optimizations (generated code whose results depend on them is undefined behaviour);
        // the others as the other tests' are, PoCL compiling them four to five times faster.
        if let Some(d) = dev.as_ref().and_then(|rt| rt.device()) {
            if budget.done() % 4 == 1 {
                common::runtimes::driver_optimized(d);
            } else {
                common::runtimes::test_build_options(d);
            }
        }
        DEADLINE.set(budget.deadline());
        let checked = guarded_check(&data, dev.as_mut(), &mut counts);
        DEADLINE.set(None);
        if let Err(f) = checked {
            if let Some(k) = known(&f) {
                known_hits += 1;
                eprintln!("[random programs] known bug: {k}");
                continue;
            }
            if failures.iter().any(|(k, _, _)| *k == f.key) {
                continue;
            }
            let small = if std::env::var("PARAC_FUZZ_SHRINK").is_ok_and(|v| v == "0") {
                data.clone()
            } else {
                shrink(&data, &f.key, dev.as_mut())
            };
            let mut c = Counts::default();
            let details = match guarded_check(&small, dev.as_mut(), &mut c) {
                Err(f) => f.details,
                Ok(()) => f.details,
            };
            failures.push((f.key, small, details));
        }
    }
    eprintln!(
        "[random programs] {} programs ({} compiled cleanly, {} rejected as they must be, {} with prefixes along two variables: OpenCL `Unsupported`), {} CPU runs, {} OpenCL runs over {} plans ({} left out at the budget's end), {} known-bug hits, {} failures, in {:.1?}",
        counts.programs,
        counts.clean,
        counts.rejected,
        counts.cpu_only,
        counts.cpu_runs,
        counts.opencl_runs,
        counts.plans,
        counts.plans_skipped,
        known_hits,
        failures.len(),
        start.elapsed()
    );
    eprintln!("{}", budget.report());
    // Every touched guard is a failure of the call that touched it.
    let touched = parac::opencl::guard_violations() - guards_before;
    assert!(
        touched == 0 || failures.iter().any(|(k, _, _)| k.contains("guard band")),
        "{touched} guard bands touched, but no call's check saw them"
    );
    // No program built with a warning (PoCL prints "N warnings generated." on stderr): the
    // build logs are printed, and fail the test with `PARAC_FUZZ_STRICT=1` (a warning is a
    // printer's bug to fix, not a wrong result).
    if let Some(d) = dev.as_ref().and_then(|rt| rt.device()) {
        let w = d.build_warnings();
        if !w.is_empty() {
            eprintln!(
                "[random programs] {} programs built with warnings; the generated kernels are \
                 to compile without any:\n{}",
                w.len(),
                w.join("\n\n")
            );
        }
        assert!(
            !strict() || w.is_empty(),
            "programs built with warnings (above)"
        );
    }
    let report: Vec<String> = failures
        .iter()
        .map(|(k, data, d)| {
            let list: Vec<String> = data.iter().map(u32::to_string).collect();
            format!("=== {k}\nPARAC_FUZZ_CHOICES={}\n{d}", list.join(","))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{}\n\n{}",
        report.join("\n\n"),
        budget.report()
    );
}

/// The program of the row-check regressions: a store under an `if` that never holds, into an
/// output with no rows (`M - 2 = 0`).
const ROW_CHECK_SRC: &str = "fn f(a0: &u32[M][N], o0: &mut f32[M - 2][N - 2]) {
    parac_iterator p(0:1:1; 0:1) {
        if py > 0 {
            o0[px][py] = a0[px][py];
        }
    }
}";

mod row_check {
    parac::parac! {
        pub fn f(a0: &u32[M][N], o0: &mut f32[M - 2][N - 2]) {
            parac_iterator p(0:1:1; 0:1) {
                if py > 0 {
                    o0[px][py] = a0[px][py];
                }
            }
        }
        pub fn g(a0: &u32[M][N], o0: &mut f32[M - 2][N - 2]) {
            parac_iterator p(0:1:1; 0:1) {
                if py >= 0 {
                    o0[px][py] = a0[px][py];
                }
            }
        }
    }
}

/// Bug, fixed in the interpreter (found by the random programs with 50 programs, minimized by
/// hand): a region whose store is under an `if` that never holds ([`ROW_CHECK_SRC`]), into an
/// output with no rows. The interpreter ran the region row-parallel as the CPU path does and
/// first checked that the written matrix has a row for every iteration of `px`
/// (`interp/region.rs`, `by_rows`), returning `OutOfBounds` (write to `o0` at `[0]`, one
/// coordinate of a matrix of rank 2); the OpenCL path runs no store and returns `Ok`.
/// `docs/language.md` has an access outside fail where it executes. Now the interpreter runs
/// such a region as any other: a store fails where it runs, with all its coordinates. Checked
/// here on the interpreter, `Pipeline` on the CPU (the interpreter) and OpenCL; the macro's
/// CPU path is [`regression_row_check_of_a_store_that_never_runs_on_the_cpu_path`].
#[test]
fn regression_row_check_of_a_store_that_never_runs() {
    use parac_core::interp::Tensor;
    let p = Pipeline::compile(ROW_CHECK_SRC).expect("compiles");
    let f = &p.functions()[0];
    let args = |rows: usize| {
        vec![
            Arg::Matrix(
                Tensor::new(vec![rows + 2, 5], Data::U32(vec![1; (rows + 2) * 5])).unwrap(),
            ),
            Arg::Matrix(Tensor::new(vec![rows, 3], Data::F32(vec![0.0; rows * 3])).unwrap()),
        ]
    };
    let mut a = args(0);
    assert_eq!(interp::run(f, &mut a), Ok(None), "the interpreter");
    let mut a = args(0);
    assert_eq!(
        p.run(&Runtime::cpu(), &f.name, &mut a)
            .map_err(|e| run_error(&e)),
        Ok(None),
        "Pipeline on the CPU"
    );
    if let Some(rt) = opencl() {
        let mut a = args(0);
        let got = p.run(&rt, &f.name, &mut a).map_err(|e| run_error(&e));
        assert_eq!(got, Ok(None), "{}", rt.describe());
        rt.device()
            .unwrap()
            .check_guards()
            .expect("guard bands intact");
    }
    // A store that runs outside its matrix still fails, naming every coordinate.
    let src = ROW_CHECK_SRC.replace("py > 0", "py >= 0");
    let f = &parac_core::compile_str(&src).module.functions[0];
    let mut a = args(0);
    match interp::run(f, &mut a) {
        Err(InterpError::OutOfBounds {
            what: "write to",
            matrix,
            index,
            shape,
            ..
        }) => {
            assert_eq!(
                (matrix.as_str(), index, shape),
                ("o0", vec![0, 0], vec![0, 3])
            );
        }
        other => panic!("expected OutOfBounds, got {other:?}"),
    }
}

/// The macro's CPU path (`codegen/cpu/`) on [`ROW_CHECK_SRC`]: it checked, before the
/// row-parallel region, that `o0` had a row for every iteration of `px`, and returned
/// `OutOfBounds` where the interpreter and OpenCL return `Ok`
/// ([`regression_row_check_of_a_store_that_never_runs`]). Now a region whose rows are not all
/// in its matrices runs in order, a store failing only where it runs; a store that does run
/// there still fails, naming every coordinate.
#[test]
fn regression_row_check_of_a_store_that_never_runs_on_the_cpu_path() {
    let a0 = parac::Matrix::<u32>::from_vec([2, 5], vec![1; 10]).unwrap();
    let mut o0 = parac::Matrix::<f32>::zeros([0, 3]);
    let got = row_check::f(&Runtime::cpu(), &a0, &mut o0).map_err(|e| run_error(&e));
    assert_eq!(got, Ok(()));
    match row_check::g(&Runtime::cpu(), &a0, &mut o0) {
        Err(parac::Error::OutOfBounds {
            what: "write to",
            matrix,
            index,
            shape,
            ..
        }) => assert_eq!((matrix, index, shape), ("o0", vec![0, 0], vec![0, 3])),
        other => panic!("expected OutOfBounds, got {other:?}"),
    }
}

/// A minimum and a maximum over matrices with rows of no columns (a size that rounds to 0),
/// found by the random programs (seed `0x6b0bd5d281158`): the baseline OpenCL kernel began a
/// row's result at its first element, which a row of no columns does not have (it read the
/// empty matrix's one-element buffer, 0), where the interpreter, the CPU path and the tree plans
/// begin at the identity. Every plan against the interpreter, at sizes with and without columns.
#[test]
fn regression_min_and_max_of_rows_of_no_columns() {
    use parac_core::interp::Tensor;
    let src = "fn f(d: &u8[M][N], a: &u32[M][N / 4], b: &i8[M][N / 4], c: &f32[M][N / 4]) -> i64 {
        return parac_matrix_min(a) as i64 + parac_matrix_max(b) as i64
            + parac_matrix_min(c) as i64 + parac_matrix_max(a) as i64;
    }";
    let p = Pipeline::compile(src).expect("compiles");
    let f = &p.functions()[0];
    let args = |rows: usize, n: usize| {
        let len = rows * (n / 4);
        let t = |d: Data| Arg::Matrix(Tensor::new(vec![rows, n / 4], d).unwrap());
        let d = Tensor::new(vec![rows, n], Data::U8(vec![1; rows * n])).unwrap();
        vec![
            Arg::Matrix(d),
            t(Data::U32((0..len as u32).map(|i| 7 + i).collect())),
            t(Data::I8((0..len).map(|i| i as i8 - 3).collect())),
            t(Data::F32((0..len).map(|i| i as f32 * 0.5).collect())),
        ]
    };
    let mut rt = opencl();
    for (rows, n) in [(7, 2), (1, 3), (3, 9), (2, 4)] {
        let want = Ok(interp::run(f, &mut args(rows, n)).expect("the interpreter"));
        let got = p.run(&Runtime::cpu(), &f.name, &mut args(rows, n));
        assert_eq!(
            got.map_err(|e| run_error(&e)),
            want,
            "the CPU at {rows}x{n}"
        );
        let Some(rt) = &mut rt else { continue };
        for label in ["baseline", "tree256", "tree64"] {
            rt.set_policy(policy(label));
            let got = p.run(rt, &f.name, &mut args(rows, n));
            assert_eq!(
                got.map_err(|e| run_error(&e)),
                want,
                "{label} at {rows}x{n}"
            );
        }
    }
}

/// Bug, fixed (found by the random programs' prefixes, seed 0x5a17c0de): a prefix of a long
/// value in place (here three clamped reads; two were fine) did not build on OpenCL ("use of
/// undeclared identifier 'tmp0'"): the printer moved the arm `running + value` of the scan's
/// `select(first, value, running + value)` into a helper function (`pc_arm_*`,
/// `codegen/opencl/kernel/expr.rs`, `outline`, past 600 characters of C), whose free variables
/// it passes, but not the kernel's running total (the array `tmp0`), which the arm reads. An
/// integer scan now starts at its operator's identity, with no select; a float one keeps it.
/// Expected: the interpreter's results, along the columns (`x`) and the rows (`y`), in `i32`
/// and `f32`.
#[test]
fn regression_prefix_of_a_long_value() {
    use parac_core::interp::Tensor;
    for ty in ["i32", "f32"] {
        for along in ["x", "y"] {
            let src = format!(
                "fn f(a: &u8[M][N], o: &mut {ty}[M][N]) {{
                    parac_iterator it(x in 0:M:1; y in 0:N:1) {{
                        o[x][y] = parac_prefix_sum((a[clamp(x, 0, M - 1)][clamp(y, 0, N - 1)]
                            + a[clamp(x, 0, M - 1)][clamp(y, 0, N - 1)]
                            + a[clamp(x, 0, M - 1)][clamp(y, 0, N - 1)]) as {ty}, {along});
                    }}
                }}"
            );
            let p = Pipeline::compile(&src).expect("compiles");
            let f = &p.functions()[0];
            let out = match ty {
                "i32" => Data::I32(vec![0; 12]),
                _ => Data::F32(vec![0.0; 12]),
            };
            let args = || {
                vec![
                    Arg::Matrix(Tensor::new(vec![3, 4], Data::U8((0..12).collect())).unwrap()),
                    Arg::Matrix(Tensor::new(vec![3, 4], out.clone()).unwrap()),
                ]
            };
            let mut want = args();
            interp::run(f, &mut want).expect("the interpreter");
            let Some(rt) = opencl() else { return };
            let mut got = args();
            let r = p.run(&rt, &f.name, &mut got).map_err(|e| run_error(&e));
            assert_eq!(r, Ok(None), "{ty} along {along}");
            assert_eq!(got, want, "{ty} along {along}");
        }
    }
}
