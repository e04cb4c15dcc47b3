//! Every candidate plan of every region of the four pipelines, forced one at a time
//! (`PlanPolicy::Fixed(label, [16, 4])`: the candidate with that label in every region that has
//! one, the baseline elsewhere, with 16x4 work-groups, so partial work-groups are exercised and
//! PoCL compiles each kernel once rather than once per image size), against the hand-written references on each pipeline's size sweep, on
//! the OpenCL device: bit-exact for the integer pipelines, within 1e-4 for `unsharp`. The labels
//! come from the compiler itself (`parac_core::codegen::plan::candidates`), so a new candidate
//! is tested without touching this file. The searched plan (`PlanPolicy::Search`) and the
//! model's plan (`PlanPolicy::Model`) are checked the same way.
//!
//! PoCL has had bugs in local-memory reductions and in partial work-groups with barriers, which
//! depend on how it turns work-groups into loops: `tree_and_local_plans_under_cbs` reruns the
//! candidates that use local memory in a child process with `POCL_WORK_GROUP_METHOD=cbs`.
//!
//! Without OpenCL the tests print "skipped" and pass, unless `PARAC_REQUIRE_OPENCL=1`.

#[macro_use]
mod common;

#[path = "../examples/pipelines/blur.rs"]
mod blur_p;
#[path = "../examples/pipelines/laplacian.rs"]
mod laplacian_p;
#[path = "../examples/pipelines/sharpen.rs"]
mod sharpen_p;
#[path = "../examples/pipelines/unsharp.rs"]
mod unsharp_p;

use common::data;
use common::reference as r;
use common::runtimes::{self, memo};
use common::soft::Failures;
use parac::{Matrix, PlanPolicy, Runtime};

/// The labels of every candidate of every region of the pipeline defined in `file`.
fn labels(file: &str) -> Vec<String> {
    let rust = std::fs::read_to_string(file).expect("pipeline source");
    let start = rust.find("parac! {").expect("a parac! block") + "parac! {".len();
    let end = rust.rfind('}').expect("closing brace");
    let c = parac_core::compile_str(&rust[start..end]);
    assert!(c.diagnostics.is_empty(), "{file}: {:?}", c.diagnostics);
    c.module
        .functions
        .iter()
        .flat_map(parac_core::codegen::plan::labels)
        .fold(Vec::new(), |mut all: Vec<String>, l| {
            if !all.contains(&l) {
                all.push(l);
            }
            all
        })
        .into_iter()
        .collect()
}

/// Which labels a run covers: every one, or (for the `cbs` rerun) those using local memory.
fn selected(file: &str) -> Vec<PlanPolicy> {
    let only_local = std::env::var("PARAC_TEST_LOCAL_ONLY").is_ok_and(|v| v == "1");
    let mut v: Vec<PlanPolicy> = labels(file)
        .into_iter()
        .filter(|l| !only_local || l.contains("tree") || l.contains("lds"))
        .map(|l| PlanPolicy::Fixed(l, vec![16, 4]))
        .collect();
    if !only_local {
        v.push(PlanPolicy::Model);
        v.push(PlanPolicy::Search);
    }
    v
}

/// The sizes a policy is checked on: the whole sweep for a forced plan and the model's; for the
/// search (which times candidates per size class, within its budget), the smallest, an odd one
/// and the largest.
fn sizes(sweep: Vec<(usize, usize)>, plan: &str) -> Vec<(usize, usize)> {
    if plan != "Search" {
        return sweep;
    }
    let n = sweep.len();
    sweep
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || *i == n / 2 || *i + 1 == n)
        .map(|(_, s)| s)
        .collect()
}

/// Runs `each` for every selected policy on a runtime of the OpenCL device (plan cache off, so
/// the search really runs).
fn for_each_plan(file: &str, mut each: impl FnMut(&mut Failures, &Runtime, &str)) {
    let Some(rt) = runtimes::fresh_opencl() else {
        return;
    };
    let _g = runtimes::shared_buffers();
    if let Some(d) = rt.device() {
        d.set_program_cache_dir(None);
    }
    let mut rt = Some(rt);
    let mut failures = Failures::new();
    for p in selected(file) {
        let name = format!("{p:?}");
        let r = rt.take().expect("runtime").with_policy(p);
        each(&mut failures, &r, &name);
        rt = Some(r);
    }
    failures.finish();
}

#[test]
fn blur_every_plan() {
    for_each_plan("examples/pipelines/blur.rs", |f, rt, plan| {
        for (m, n) in sizes(data::sweep_blur(), plan) {
            let seed = data::seed_for(0xB1B1_0003, m, n);
            let src = data::random_u12(m, n, seed);
            let want = memo(&format!("blur {m}x{n}"), || r::blur(&src));
            let mut out = Matrix::<u16>::zeros([m - 2, n - 2]);
            match blur_p::blur(rt, &src, &mut out) {
                Ok(()) => f.same(&format!("blur {m}x{n}, plan {plan}"), &out, &want),
                Err(e) => f.fail(format!("blur {m}x{n}, plan {plan}: {e}")),
            }
        }
    });
}

#[test]
fn laplacian_every_plan() {
    for_each_plan("examples/pipelines/laplacian.rs", |f, rt, plan| {
        for (m, n) in sizes(data::sweep_laplacian(), plan) {
            let seed = data::seed_for(0x1A91_0001, m, n);
            let src = data::random_u8(m, n, seed);
            let want = memo(&format!("laplacian {m}x{n}"), || r::laplacian(&src));
            let mut lap = Matrix::<i16>::zeros([m, n]);
            let mut down = Matrix::<u8>::zeros([m.div_ceil(2), n.div_ceil(2)]);
            match laplacian_p::laplacian(rt, &src, &mut lap, &mut down) {
                Ok(()) => {
                    f.same(
                        &format!("laplacian {m}x{n} lap, plan {plan}"),
                        &lap,
                        &want.0,
                    );
                    f.same(
                        &format!("laplacian {m}x{n} down, plan {plan}"),
                        &down,
                        &want.1,
                    );
                }
                Err(e) => f.fail(format!("laplacian {m}x{n}, plan {plan}: {e}")),
            }
        }
    });
}

#[test]
fn sharpen_every_plan() {
    for_each_plan("examples/pipelines/sharpen.rs", |f, rt, plan| {
        for (m, n) in sizes(data::sweep_sharpen(), plan) {
            let seed = data::seed_for(0x5A49_0002, m, n);
            for (kind, src) in [
                ("random", data::random_u8(m, n, seed)),
                ("structured", data::structured_u8(m, n, seed)),
            ] {
                let want = memo(&format!("sharpen {kind} {m}x{n}"), || r::sharpen(&src));
                let mut out = Matrix::<u8>::zeros([m, n]);
                match sharpen_p::sharpen(rt, &src, &mut out) {
                    Ok(()) => f.same(&format!("sharpen {kind} {m}x{n}, plan {plan}"), &out, &want),
                    Err(e) => f.fail(format!("sharpen {kind} {m}x{n}, plan {plan}: {e}")),
                }
            }
        }
    });
}

#[test]
fn unsharp_every_plan() {
    for_each_plan("examples/pipelines/unsharp.rs", |f, rt, plan| {
        for (m, n) in sizes(data::sweep_unsharp(), plan) {
            let seed = data::seed_for(0x0C5E_0004, m, n);
            let img = data::random_rgb(m, n, seed);
            let want = memo(&format!("unsharp {m}x{n}"), || r::unsharp(&img));
            let mut out = Matrix::<f32>::zeros([3, m, n]);
            match unsharp_p::unsharp(rt, &img, &mut out) {
                Ok(()) => f.close(&format!("unsharp {m}x{n}, plan {plan}"), &out, &want, 1e-4),
                Err(e) => f.fail(format!("unsharp {m}x{n}, plan {plan}: {e}")),
            }
        }
    });
}

/// The plans with local memory (tree reductions, local tiles) again, under PoCL's other
/// work-group method. On other drivers the variable changes nothing.
#[test]
fn tree_and_local_plans_under_cbs() {
    if runtimes::fresh_opencl().is_none() {
        return;
    }
    for test in [
        "blur_every_plan",
        "laplacian_every_plan",
        "sharpen_every_plan",
        "unsharp_every_plan",
    ] {
        let child = runtimes::run_child(
            test,
            &[
                ("POCL_WORK_GROUP_METHOD", "cbs"),
                ("PARAC_TEST_LOCAL_ONLY", "1"),
            ],
        );
        assert!(
            child.success && child.output.contains("1 passed"),
            "{test} under POCL_WORK_GROUP_METHOD=cbs: {}\n{}",
            child.status,
            child.output
        );
    }
}

/// The plan searches' records (`parac::opencl::plan_records`) of the program named `program`.
fn records_of(program: &str) -> Vec<parac::opencl::PlanRecord> {
    parac::opencl::plan_records()
        .into_iter()
        .filter(|r| r.program == program)
        .collect()
}

/// A runtime of the OpenCL device whose searches run whole in the call that starts them
/// (`SearchBudget(MAX)`), the disk cache of programs off.
fn whole_search() -> Option<Runtime> {
    let rt = runtimes::fresh_opencl()?;
    rt.device().expect("device").set_program_cache_dir(None);
    Some(rt.with_policy(PlanPolicy::SearchBudget(std::time::Duration::MAX)))
}

/// Where the work-items' first dimension is not a multiple of 16 (blur's 3203 output columns, a
/// prime, of which a driver needing divisors could only pick 1), the search times the
/// candidates whose kernel fixes no work-group size at 32x4, the global size rounded up, not at
/// the driver's size; the searched result is still exact.
#[test]
fn awkward_widths_are_searched_at_a_fixed_work_group() {
    // The whole search in one call, so that the baseline (timed last) is timed.
    let Some(rt) = whole_search() else {
        return;
    };
    let (m, n) = (5, 3205);
    let src = data::random_u12(m, n, 7);
    let mut out = Matrix::<u16>::zeros([m - 2, n - 2]);
    blur_p::blur(&rt, &src, &mut out).expect("blur");
    assert_eq!(out, r::blur(&src));
    // Records are process-wide and `blur_every_plan` searches blur too, at other sizes: this
    // call's are those of its size class (3,203 columns: 4,096 rounded up).
    let records: Vec<_> = parac::opencl::plan_records()
        .into_iter()
        .filter(|r| r.program == "blur" && r.region == "r0_it" && r.class.starts_with("4096x"))
        .collect();
    let rec = records.last().expect("blur's first region was searched");
    // Timed at 32x4 first (then maybe at other sizes too), never at the driver's size.
    let baseline: Vec<_> = rec.times.iter().filter(|t| t.0 == "baseline").collect();
    assert!(
        baseline.iter().any(|t| t.1 == Some(vec![32, 4])) && baseline.iter().all(|t| t.1.is_some()),
        "{:?}",
        rec.times
    );
}

parac::parac! {
    fn fused_search(src: &u16[M][N], out: &mut u16[M-2][N-2]) {
        let bx: u16[M][N-2];
        parac_iterator it(0:M:1; 0:N-2:1) {
            bx[itx][ity] = (src[itx][ity] + src[itx][ity+1] + src[itx][ity+2]) / 3;
        }
        parac_iterator it1(0:M-2:1; 0:N-2:1) {
            out[it1x][it1y] = (bx[it1x][it1y] + bx[it1x+1][it1y] + bx[it1x+2][it1y]) / 3;
        }
    }
}

parac::parac! {
    fn chain_search(src: &u16[M][N], out: &mut i32[M][N]) {
        let a: u16[M][N];
        let b: i32[M][N];
        parac_iterator p(x in 0:M:1; y in 0:N:1) {
            a[x][y] = (3 * src[x][y] + y) / 2;
        }
        parac_border_rule ra = clamp(a[2][*]);
        parac_iterator q(x in 0:M:1; y in 0:N:1) parac_border_rule(ra) {
            b[x][y] = a[x-2][y] + a[x][y] - a[x+1][y] + 3 * a[x+2][y];
        }
        parac_border_rule rb = clamp(b[*][1]);
        parac_iterator d(x in 0:M:1; y in 0:N:1) parac_border_rule(rb) {
            out[x][y] = b[x][y-1] + b[x][y+1] - 2 * (a[x][y] as i32);
        }
    }
}

/// A chain's producer (`p`, read by `q` and by `d`, `q` fused into `d`) waits for both its
/// consumers' times, and `q` for `d`'s: the executor runs each again after the consumers it
/// waits for, the latest first, so that every region's whole search ends in the first call,
/// the chain's candidates timed; later calls search nothing; every call exact.
#[test]
fn a_chains_search_ends_in_its_first_call() {
    let Some(rt) = whole_search() else {
        return;
    };
    let ours = || records_of("chain_search");
    let (m, n) = (29, 45);
    let src = data::random_u12(m, n, 12);
    // The three stages by hand, rows and columns clamped.
    let cl = |v: i64, len: usize| v.clamp(0, len as i64 - 1) as usize;
    let a = |x: usize, y: usize| (3 * i64::from(src.as_slice()[x * n + y]) + y as i64) / 2;
    let b = |x: usize, y: usize| {
        let at = |d: i64| a(cl(x as i64 + d, m), y);
        at(-2) + at(0) - at(1) + 3 * at(2)
    };
    let want: Vec<i32> = (0..m * n)
        .map(|i| {
            let (x, y) = (i / n, i % n);
            let at = |d: i64| b(x, cl(y as i64 + d, n));
            (at(-1) + at(1) - 2 * a(x, y)) as i32
        })
        .collect();
    for call in 0..3 {
        let mut out = Matrix::<i32>::zeros([m, n]);
        let before = ours().len();
        chain_search(&rt, &src, &mut out).expect("chain_search");
        assert_eq!(out.as_slice(), &want[..], "call {call}");
        let records = ours();
        if call == 0 {
            for region in ["r0_p", "r1_q"] {
                let r = records.iter().rfind(|r| r.region == region);
                let r = r.unwrap_or_else(|| panic!("{region} searched: {records:?}"));
                assert!(r.complete, "{r:?}");
                assert!(r.times.iter().any(|t| t.0.contains("fuse")), "{r:?}");
            }
        } else {
            assert_eq!(records.len(), before, "call {call} searched: {records:?}");
        }
    }
}

/// A producer's fused candidates are weighed against its consumer's best time, which the
/// first call's search only has once the consumer has run: the executor runs the producer again
/// right after it, so that a whole search (`SearchBudget(MAX)`, as a waiting warm-up has) ends
/// in the first call, fused candidates timed, and the second call searches nothing (it had
/// stalled for seconds); every call exact.
#[test]
fn a_fused_search_ends_in_its_first_call() {
    let Some(rt) = whole_search() else {
        return;
    };
    let ours = || records_of("fused_search");
    let (m, n) = (37, 70);
    let src = data::random_u12(m, n, 11);
    for call in 0..3 {
        let mut out = Matrix::<u16>::zeros([m - 2, n - 2]);
        let before = ours().len();
        fused_search(&rt, &src, &mut out).expect("fused_search");
        assert_eq!(out, r::blur(&src), "call {call}");
        let records = ours();
        if call == 0 {
            let it = records
                .iter()
                .rfind(|r| r.region == "r0_it")
                .expect("it searched");
            assert!(it.complete, "{it:?}");
            assert!(it.times.iter().any(|t| t.0.contains("fuse")), "{it:?}");
        } else {
            assert_eq!(records.len(), before, "call {call} searched: {records:?}");
        }
    }
}
