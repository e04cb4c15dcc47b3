//! The harness of the generated corpora (`tests/random_corpus.rs`, `tests/random_corpus_cpu.rs`,
//! written by `bless_corpus` in `parac-core/tests/random_programs.rs`): arguments to canaried
//! matrices and back, the argument sets of a program, and the two differential runs, the CPU
//! path and the OpenCL device against the reference interpreter. A corpus file declares
//! `progen` and `common` and includes this module; its programs' `call` adapters use these
//! items through `super::`.

use crate::common::canary::{Canaried, Canary};
pub use crate::common::differential::ToVal;
use crate::common::differential::{
    Tolerance, memory_intact, opencl_with_guard_bands, outcomes, plan_labels, policy, zero_outputs,
};
use crate::progen;
use parac::MatrixRef;
use parac_core::interp::{self, Arg, Data, Tensor, Val};

/// A program's text (`SRC`, for the interpreter) and the same tokens through `parac!`, so that
/// a test writes each program once.
macro_rules! program {
    ($($src:tt)*) => {
        pub const SRC: &str = stringify!($($src)*);
        parac::parac! { $($src)* }
    };
}
pub(crate) use program;

/// An element type: interpreter data to and from a canaried matrix.
pub trait Elem: parac::Element + Canary {
    fn from_data(d: &Data) -> Vec<Self>;
    fn to_data(v: Vec<Self>) -> Data;
}

macro_rules! elems {
    ($($t:ty => $v:ident),*) => {$(
        impl Elem for $t {
            fn from_data(d: &Data) -> Vec<Self> {
                match d {
                    Data::$v(v) => v.clone(),
                    d => panic!("expected {} data, got {:?}", stringify!($t), d.scalar()),
                }
            }
            fn to_data(v: Vec<Self>) -> Data {
                Data::$v(v)
            }
        }
    )*};
}
elems!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, f32 => F32);

/// A matrix argument as a canaried matrix named `name`: the caller's memory around it is
/// checked when it is dropped, at the end of the call (`memory_intact`).
pub fn canaried<T: Elem>(name: &str, a: &Arg) -> Canaried<T> {
    match a {
        Arg::Matrix(t) => Canaried::new(name, t.shape.clone(), &T::from_data(&t.data)),
        Arg::Scalar(_) => panic!("a matrix argument expected"),
    }
}

pub fn put<T: Elem>(a: &mut Arg, m: &Canaried<T>) {
    *a = Arg::Matrix(
        Tensor::new(m.shape().to_vec(), T::to_data(m.as_slice().to_vec())).expect("shape"),
    );
}

pub fn int<T: TryFrom<i128>>(a: &Arg) -> T {
    match a {
        Arg::Scalar(Val::Int(v)) => T::try_from(*v).ok().expect("an integer in range"),
        a => panic!("an integer argument expected, got {a:?}"),
    }
}

pub fn float(a: &Arg) -> f32 {
    match a {
        Arg::Scalar(Val::F32(v)) => *v,
        a => panic!("an f32 argument expected, got {a:?}"),
    }
}

pub fn boolean(a: &Arg) -> bool {
    match a {
        Arg::Scalar(Val::Bool(v)) => *v,
        a => panic!("a bool argument expected, got {a:?}"),
    }
}

/// Module `$m`: the program of `programs::$m` and a `call` that binds the arguments (`$in`
/// inputs, `$out` outputs, by element type) through canaried matrices: at the test's root,
/// beside `use harness::*` and `mod programs`.
#[allow(unused_macros)]
macro_rules! entry {
    ($m:ident, [$($i:ident: $it:ty),*], [$($o:ident: $ot:ty),*]) => {
        mod $m {
            use super::{Arg, Val};
            pub use super::programs::$m::*;
            pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
                let mut k = 0;
                $(let $i = super::canaried::<$it>(stringify!($i), &args[k]); k += 1;)*
                let first_out = k;
                $(let mut $o = super::canaried::<$ot>(stringify!($o), &args[k]); k += 1;)*
                let r = $m(rt, $(&$i,)* $(&mut $o),*);
                let mut k = first_out;
                $(super::put(&mut args[k], &$o); k += 1;)*
                r.map(|()| None)
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use entry;

pub struct Entry {
    pub name: &'static str,
    pub src: &'static str,
    pub sizes: &'static [&'static [(&'static str, usize)]],
    pub exact: bool,
    pub call: fn(&parac::Runtime, &mut [Arg]) -> Result<Option<Val>, parac::Error>,
}

/// The argument sets of a program: one per size set, and one with an argument's shape changed.
/// With `zero_outputs`, outputs start at zero, else with random elements (kept where a
/// pipeline does not write, on every path).
fn cases(i: usize, e: &Entry, f: &parac_core::ir::Function, zero: bool) -> Vec<(String, Vec<Arg>)> {
    let mut cases = Vec::new();
    for (k, s) in e.sizes.iter().enumerate() {
        let sizes: progen::Sizes = s.iter().map(|(n, v)| (n.to_string(), *v)).collect();
        cases.push((
            format!("sizes {s:?}"),
            progen::args_with(f, &sizes, k as u64, zero),
        ));
    }
    let sizes: progen::Sizes = e.sizes[0]
        .iter()
        .map(|(n, v)| (n.to_string(), *v))
        .collect();
    let mut args = progen::args_with(f, &sizes, 99, zero);
    if progen::perturb_shape(&mut args, &mut progen::Rng::new(i as u64)) {
        if zero {
            zero_outputs(f, &mut args);
        }
        cases.push((format!("sizes {:?}, one shape changed", e.sizes[0]), args));
    }
    cases
}

/// Runs one case on the interpreter and on `rt`: the canaries and guard bands after the call,
/// then the outcomes (`tests/common/differential.rs`); the difference, if any.
fn compare(
    e: &Entry,
    f: &parac_core::ir::Function,
    rt: &parac::Runtime,
    args: &[Arg],
    tol: Tolerance,
) -> Option<String> {
    let mut a_int = args.to_vec();
    let want = interp::run(f, &mut a_int);
    let mut a_rt = args.to_vec();
    let got = (e.call)(rt, &mut a_rt);
    memory_intact(rt, &got)
        .err()
        .or_else(|| outcomes(&want, &a_int, &got, &a_rt, tol))
        .map(|(key, details)| format!("{key}: {details}"))
}

/// Every program of the corpus on the CPU path and the interpreter, for each of its sizes and
/// once more with one argument's shape changed, with the model's choice of fusion (fused where
/// a task's halo is narrow or its intermediates large), with every fused stage forced fused
/// (`PlanPolicy::Stages`, label `fuse`) and with every stage apart (`PlanPolicy::Baseline`):
/// bit for bit, or the same error; no canary around a caller's matrix touched.
pub fn cpu_path(programs: &[Entry]) {
    let mut failures = Vec::new();
    let mut runs = 0;
    for (i, e) in programs.iter().enumerate() {
        let c = parac_core::compile_str(e.src);
        assert!(c.diagnostics.is_empty(), "{}: {:?}", e.name, c.diagnostics);
        let f = &c.module.functions[0];
        let fused: Vec<(String, String)> = f
            .regions
            .iter()
            .map(|r| (r.name.clone(), "fuse".to_string()))
            .collect();
        // The model's choice, every stage fused where it can be, every stage apart.
        let runtimes = [
            ("model", parac::Runtime::cpu()),
            (
                "fused",
                parac::Runtime::cpu().with_policy(parac::PlanPolicy::Stages(fused)),
            ),
            (
                "apart",
                parac::Runtime::cpu().with_policy(parac::PlanPolicy::Baseline),
            ),
        ];
        for (what, args) in cases(i, e, f, false) {
            for (how, rt) in &runtimes {
                runs += 1;
                if let Some(p) = compare(e, f, rt, &args, Tolerance::EXACT) {
                    failures.push(format!("{} ({what}, {how}): {p}\n{}", e.name, e.src));
                }
            }
        }
    }
    eprintln!(
        "[random corpus] CPU path: {} programs, {runs} runs, {} mismatches",
        programs.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every program on the CPU path at each level of vector instructions the processor has
/// (`CpuIsa`: the plain loops, AVX2, AVX-512) with the model's plan, for each of its sizes,
/// against the interpreter, bit for bit.
pub fn cpu_levels(programs: &[Entry]) {
    let mut failures = Vec::new();
    let levels = parac::CpuIsa::available();
    for (i, e) in programs.iter().enumerate() {
        let c = parac_core::compile_str(e.src);
        let f = &c.module.functions[0];
        for (what, args) in cases(i, e, f, false) {
            for isa in &levels {
                // Every output its function only writes streamed (`cpu_stream_bytes` 0): the
                // default runtime's tests run the rows of small outputs as any other.
                let rt = parac::Runtime::cpu()
                    .with_cpu_isa(*isa)
                    .with_cpu_stream_bytes(0);
                if let Some(p) = compare(e, f, &rt, &args, Tolerance::EXACT) {
                    failures.push(format!("{} ({what}, {isa:?}): {p}\n{}", e.name, e.src));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The default time budget of [`opencl`] (`PARAC_FUZZ_SECONDS`).
const OPENCL_SECONDS: f64 = 45.0;

/// The programs on the OpenCL device (`PARAC_DEVICE=opencl:…` picks one), for a budget of
/// time from one the run's seed picks (`PARAC_FUZZ_PROGRAMS=N`: N of them), guard bands on,
/// with the baseline and with every candidate of its regions forced
/// (`PlanPolicy::Fixed(label, [16, 4])`), against the interpreter: floats within a relative
/// 1e-5, integers exact where no float flows into them, or the same error; no canary or guard
/// band touched. Skipped without OpenCL unless `PARAC_REQUIRE_OPENCL=1`.
pub fn opencl(programs: &[Entry]) {
    opencl_with(programs, true);
}

/// [`opencl`], with the device's guard bands on or off (off: buffers are the device's own, not
/// sub-buffers between guards, as a user's are).
pub fn opencl_with(programs: &[Entry], guard_bands: bool) {
    opencl_labels(programs, guard_bands, |_| true);
}

/// [`opencl_with`], forcing only the plans whose labels `keep` accepts.
pub fn opencl_labels(programs: &[Entry], guard_bands: bool, keep: fn(&str) -> bool) {
    opencl_policies(programs, guard_bands, move |f| {
        let mut labels = plan_labels(f);
        labels.retain(|l| keep(l));
        labels.into_iter().map(|l| (policy(&l), l)).collect()
    });
}

/// [`opencl_with`], with the plan policies `policies` gives for a function (each with what it
/// is called in a failure).
pub fn opencl_policies(
    programs: &[Entry],
    guard_bands: bool,
    policies: impl Fn(&parac_core::ir::Function) -> Vec<(parac::PlanPolicy, String)>,
) {
    // One runtime (one device and program cache: each program is built once), its policy set
    // per label.
    let Some(mut rt) = opencl_with_guard_bands() else {
        return;
    };
    if let Some(d) = rt.device() {
        d.set_guard_bands(guard_bands);
    }
    let mut failures = Vec::new();
    let mut runs = 0;
    let only = std::env::var("PARAC_CORPUS_ONLY").ok();
    // Programs for a budget of time (most of it PoCL compiling every candidate), from one the
    // run's seed picks, in a circle: every run tests others, and runs together test them all.
    // `PARAC_FUZZ_PROGRAMS=N` tests N of them (all: the corpus's size).
    let mut budget = progen::budget::Budget::from_env("random corpus on OpenCL", OPENCL_SECONDS);
    let first = (budget.seed() % programs.len().max(1) as u64) as usize;
    let order = (0..programs.len()).map(|k| (first + k) % programs.len());
    for i in order {
        let e = &programs[i];
        if only.as_deref().is_some_and(|o| o != e.name) {
            continue;
        }
        if only.is_none() && !budget.more() {
            break;
        }
        let c = parac_core::compile_str(e.src);
        assert!(c.diagnostics.is_empty(), "{}: {:?}", e.name, c.diagnostics);
        let f = &c.module.functions[0];
        let labels = policies(f);
        // Outputs start with random elements: those a pipeline does not write keep the caller's
        // values on every path.
        let cases = cases(i, e, f, false);
        if std::env::var("PARAC_CORPUS_PROGRESS").is_ok_and(|v| v == "1") {
            eprintln!("[random corpus] {}: {} plans", e.name, labels.len());
        }
        for (policy, label) in labels {
            rt.set_policy(policy);
            for (what, args) in &cases {
                runs += 1;
                if let Some(p) = compare(e, f, &rt, args, Tolerance::device(e.exact)) {
                    failures.push(format!("{} [{label}] ({what}): {p}\n{}", e.name, e.src));
                }
            }
        }
    }
    eprintln!(
        "[random corpus] OpenCL: {} of {} programs, {runs} runs, {} mismatches",
        budget.done(),
        programs.len(),
        failures.len()
    );
    eprintln!("{}", budget.report());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // The generated kernels are to compile without a warning (see `tests/random_programs.rs`).
    let w = rt.device().map(|d| d.build_warnings()).unwrap_or_default();
    if !w.is_empty() {
        eprintln!(
            "[random corpus] programs built with warnings:\n{}",
            w.join("\n\n")
        );
    }
}
