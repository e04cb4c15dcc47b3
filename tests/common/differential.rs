//! The differential checks of the random-program tests (`tests/random_programs.rs`, through
//! `parac::Pipeline`, and the generated corpus `tests/random_corpus.rs`, through `parac!`): a
//! call's outcome against the reference interpreter's on the same arguments, and the memory
//! checks after it (canaries around the caller's matrices, guard bands around the device's
//! buffers).
//!
//! Results must be bit-identical (floats by their bits), or with [`Tolerance::float`] floats
//! within a relative 1e-5 (`|a - b| <= 1e-5 * max(1, |a|, |b|)`: OpenCL's `/`, `sqrt`, `exp`
//! are a few ulp off and it may contract `a * b + c`) and integers exact unless a float value
//! flows into them; errors must agree on the variant, the region and (for `OutOfBounds`,
//! `Shape`, `Rank`) the matrix; the index may differ, a parallel path reporting one of
//! several failing iterations.

use parac::{PlanPolicy, Runtime};
use parac_core::interp::{Arg, Data, InterpError, Val};

/// A function's result as the interpreter gives it (a `parac!` function's return value, to
/// compare with `interp::run`'s).
pub trait ToVal {
    fn val(self) -> Option<Val>;
}

impl ToVal for () {
    fn val(self) -> Option<Val> {
        None
    }
}

macro_rules! int_results {
    ($($t:ty),*) => {$(
        impl ToVal for $t {
            fn val(self) -> Option<Val> { Some(Val::Int(self as i128)) }
        }
    )*};
}
int_results!(u8, i8, u16, i16, u32, i32, i64, u64);

impl ToVal for f32 {
    fn val(self) -> Option<Val> {
        Some(Val::F32(self))
    }
}

impl ToVal for bool {
    fn val(self) -> Option<Val> {
        Some(Val::Bool(self))
    }
}

/// How results are compared.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// Floats within a relative 1e-5 (else by their bits).
    pub float: bool,
    /// Integers compared (else only floats are: a float value flows into the integers).
    pub exact_ints: bool,
}

impl Tolerance {
    /// Bit for bit (the CPU path).
    pub const EXACT: Tolerance = Tolerance {
        float: false,
        exact_ints: true,
    };

    /// The OpenCL path's: floats within 1e-5, integers exact when `exact_ints`.
    pub fn device(exact_ints: bool) -> Tolerance {
        Tolerance {
            float: true,
            exact_ints,
        }
    }
}

fn same_f32(x: f32, y: f32, tol: Tolerance) -> bool {
    x.to_bits() == y.to_bits()
        || (x.is_nan() && y.is_nan())
        || (tol.float && (x - y).abs() <= 1e-5 * 1f32.max(x.abs()).max(y.abs()))
}

fn same_val(a: &Val, b: &Val, tol: Tolerance) -> bool {
    match (a, b) {
        (Val::F32(x), Val::F32(y)) => same_f32(*x, *y, tol),
        (Val::Int(_), Val::Int(_)) if !tol.exact_ints => true,
        (a, b) => a == b,
    }
}

/// The first element that differs, if any.
fn diff_data(a: &Data, b: &Data, tol: Tolerance) -> Option<String> {
    if a.len() != b.len() || a.scalar() != b.scalar() {
        return Some(format!("{a:?} vs {b:?}"));
    }
    if a.scalar() != parac_core::ir::Scalar::F32 && !tol.exact_ints {
        return None;
    }
    (0..a.len())
        .find(|&i| !same_val(&a.get(i), &b.get(i), tol))
        .map(|i| format!("element {i}: {:?} vs {:?}", a.get(i), b.get(i)))
}

/// What both must agree on about a runtime error.
pub fn run_error(e: &parac::Error) -> String {
    match e {
        parac::Error::OutOfBounds {
            region,
            what,
            matrix,
            ..
        } => format!("OutOfBounds {region} {what} {matrix}"),
        parac::Error::DivisionByZero { region, .. } => format!("DivisionByZero {region}"),
        parac::Error::WindowLength {
            region,
            matrix,
            lens,
            ..
        } => format!("WindowLength {region} {matrix} {lens:?}"),
        parac::Error::Shape { matrix, .. } => format!("Shape {matrix}"),
        parac::Error::Rank { matrix, .. } => format!("Rank {matrix}"),
        e => format!("{e}"),
    }
}

/// What both must agree on about an interpreter error.
pub fn interp_error(e: &InterpError) -> String {
    match e {
        InterpError::OutOfBounds {
            region,
            what,
            matrix,
            ..
        } => format!("OutOfBounds {region} {what} {matrix}"),
        InterpError::DivisionByZero { region } => format!("DivisionByZero {region}"),
        InterpError::WindowLength {
            region,
            matrix,
            lens,
        } => format!("WindowLength {region} {matrix} {lens:?}"),
        InterpError::Shape { matrix, .. } => format!("Shape {matrix}"),
        InterpError::Rank { matrix, .. } => format!("Rank {matrix}"),
        e => format!("{e}"),
    }
}

/// The interpreter's outcome `want` (with its arguments after the call, `a_int`) against the
/// runtime's `got` (`a_rt`): `None` if they agree, else a key (what differs) and the details.
pub fn outcomes(
    want: &Result<Option<Val>, InterpError>,
    a_int: &[Arg],
    got: &Result<Option<Val>, parac::Error>,
    a_rt: &[Arg],
    tol: Tolerance,
) -> Option<(String, String)> {
    match (want, got) {
        (Ok(w), Ok(g)) => {
            let same_ret = match (w, g) {
                (Some(w), Some(g)) => same_val(w, g, tol),
                (w, g) => w == g,
            };
            if !same_ret {
                return Some((
                    "returns differ".into(),
                    format!("interpreter {w:?}, runtime {g:?}"),
                ));
            }
            for (j, (x, y)) in a_int.iter().zip(a_rt).enumerate() {
                if let (Arg::Matrix(x), Arg::Matrix(y)) = (x, y)
                    && let Some(d) = diff_data(&x.data, &y.data, tol)
                {
                    return Some((
                        "results differ".into(),
                        format!(
                            "argument {j} differs at {d}:\n  interpreter {:?}\n  runtime     {:?}",
                            x.data, y.data
                        ),
                    ));
                }
            }
            None
        }
        (Err(w), Err(g)) => {
            let (w, g) = (interp_error(w), run_error(g));
            (w != g).then(|| {
                (
                    "errors differ".into(),
                    format!("interpreter {w}, runtime {g}"),
                )
            })
        }
        (w, g) => Some((
            format!(
                "interpreter {}, runtime {}",
                if w.is_ok() { "Ok" } else { "Err" },
                if g.is_ok() { "Ok" } else { "Err" }
            ),
            format!(
                "interpreter {:?}, runtime {:?}",
                w.as_ref().map_err(interp_error),
                g.as_ref().map_err(run_error)
            ),
        )),
    }
}

/// After a call on `rt` returning `got`: every canary around the caller's matrices
/// (`super::canary`, checked when they were dropped) and every guard band of the device's
/// buffers (those dropped, and any still alive) intact; else the key and the details.
pub fn memory_intact(
    rt: &Runtime,
    got: &Result<Option<Val>, parac::Error>,
) -> Result<(), (String, String)> {
    let returned = || format!("(the call returned {:?})", got.as_ref().map_err(run_error));
    let canaries = super::canary::take_violations();
    if !canaries.is_empty() {
        return Err((
            "a canary around a caller's matrix was touched".into(),
            format!("{}\n{}", canaries.join("\n"), returned()),
        ));
    }
    if let Some(d) = rt.device()
        && let Err(e) = d.check_guards()
    {
        return Err((
            "a guard band was touched".into(),
            format!("{e}\n{}", returned()),
        ));
    }
    Ok(())
}

/// The OpenCL device (`PARAC_DEVICE=opencl:…` picks it), with guard bands on and the tests'
/// compile settings ([`super::runtimes::compile_once`]), or `None` (printed) without one; with
/// `PARAC_REQUIRE_OPENCL=1`, no device fails the test.
pub fn opencl_with_guard_bands() -> Option<Runtime> {
    let spec = std::env::var("PARAC_DEVICE")
        .ok()
        .filter(|s| s.trim().to_ascii_lowercase().starts_with("opencl"))
        .unwrap_or_else(|| "opencl".to_string());
    let required = std::env::var("PARAC_REQUIRE_OPENCL").is_ok_and(|v| v == "1");
    match Runtime::from_spec(&spec).map(|rt| rt.with_warm_up(parac::WarmUp::Wait)) {
        Ok(rt) if rt.device().is_some() => {
            let dev = rt.device().unwrap();
            dev.set_guard_bands(true);
            super::runtimes::compile_once(dev);
            Some(rt)
        }
        other => {
            let why = other
                .err()
                .map_or("no device".to_string(), |e| e.to_string());
            assert!(
                !required,
                "PARAC_REQUIRE_OPENCL=1, but there is no OpenCL device: {why}"
            );
            println!("skipped on OpenCL: no device ({why})");
            None
        }
    }
}

/// The plans every program runs on the device: the baseline, then each candidate label of its
/// regions, forced one by one ([`policy`]). A label whose plan in every region is another
/// label's (the same kernel text but for its name, launched the same way: passes that change
/// nothing in this program) is left out: it would test the same kernels again, and each costs
/// the device compiler seconds.
pub fn plan_labels(f: &parac_core::ir::Function) -> Vec<String> {
    use parac_core::codegen::launch::{PlanDesc, plans};
    let per_region: Vec<Vec<PlanDesc>> = (0..f.regions.len()).map(|r| plans(f, r)).collect();
    // What a label runs in each region: its kernel's text without the kernel's name, and how
    // it is launched.
    let runs = |label: &str| -> Vec<Option<String>> {
        per_region
            .iter()
            .map(|ps| {
                let p = ps.iter().find(|p| p.label == label)?;
                let text = p.source(f).unwrap_or_default().replace(&p.kernel, "");
                let text = text.replace(&format!("`{label}`"), "");
                Some(format!(
                    "{text}|{:?}|{:?}|{}|{}|{}|{}",
                    p.per_item, p.local, p.local_bytes, p.tree, p.split, p.origin
                ))
            })
            .collect()
    };
    let mut labels = vec!["baseline".to_string()];
    let mut seen = Vec::new();
    for l in parac_core::codegen::plan::labels(f) {
        if labels.contains(&l) {
            continue;
        }
        let r = runs(&l);
        if !seen.contains(&r) {
            seen.push(r);
            labels.push(l);
        }
    }
    labels
}

/// The policy forcing plan `label` of [`plan_labels`] (the baseline too) with 16x4 work-groups:
/// one work-group size for every image size, so the device compiles each kernel once (PoCL
/// specializes a kernel per work-group size, and the driver's own choice varies with the size).
pub fn policy(label: &str) -> PlanPolicy {
    PlanPolicy::Fixed(label.to_string(), vec![16, 4])
}

/// Outputs set to zero (what a pipeline does not write keeps the caller's values on every path:
/// `regression_unwritten_output_elements`).
pub fn zero_outputs(f: &parac_core::ir::Function, args: &mut [Arg]) {
    for (a, p) in args.iter_mut().zip(&f.params) {
        if let (Arg::Matrix(t), parac_core::ir::ParamRef::Matrix(m)) = (a, p)
            && f.matrices[*m].kind == parac_core::ir::MatrixKind::Output
        {
            t.data = Data::zeros(t.elem(), t.data.len()).expect("an element type");
        }
    }
}
