//! The plan search that keeps a first call short: its budget (`PlanPolicy::SearchBudget`, as
//! `PARAC_SEARCH_BUDGET` gives it), its continuation by later calls and later processes, the
//! adaptive timing that never drops the leader, a plan cache that is broken or cannot be written,
//! and the `parac tune` and `parac cache` commands (export and import round trip). Every result
//! is checked bit for bit against the host; no time is asserted.
//!
//! Each test runs its own function (its own programs, plan files and records: the tests of this
//! binary run in parallel) on a fresh runtime whose caches are in a directory of its own.
//! Without OpenCL the tests print "skipped" and pass, unless `PARAC_REQUIRE_OPENCL=1`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use parac::pipeline::{Arg, matrix_of, tensor_of};
use parac::{Matrix, Pipeline, PlanPolicy, Runtime};

/// A directory of its own under the temporary directory, empty.
fn temp_dir(what: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("parac-plan-search-{what}-"))
        .tempdir()
        .expect("temp dir")
}

/// A fresh OpenCL runtime (`PARAC_DEVICE` if it names an OpenCL device, else `opencl`) whose
/// program binaries go to `<cache>/programs` and plans to `<cache>/plans`; `None` (after
/// printing "skipped") without OpenCL, a panic then if `PARAC_REQUIRE_OPENCL=1`.
fn opencl(cache: &Path, budget: Duration) -> Option<Runtime> {
    match Runtime::from_spec(&spec()).map(|rt| rt.with_warm_up(parac::WarmUp::Wait)) {
        Ok(rt) => {
            let d = rt.device().expect("an OpenCL device");
            d.set_program_cache_dir(Some(cache.join("programs")));
            Some(rt.with_policy(PlanPolicy::SearchBudget(budget)))
        }
        Err(e) => {
            if std::env::var("PARAC_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
                panic!("PARAC_REQUIRE_OPENCL=1, but there is no OpenCL device: {e}");
            }
            println!("skipped: no OpenCL ({e})");
            None
        }
    }
}

fn spec() -> String {
    std::env::var("PARAC_DEVICE")
        .ok()
        .filter(|s| s.trim().to_ascii_lowercase().starts_with("opencl"))
        .unwrap_or_else(|| "opencl".to_string())
}

/// The source of a one-region function `name`: a map with a few candidates.
fn source(name: &str) -> String {
    format!(
        "pub fn {name}(src: &u8[M][N], out: &mut u16[M][N]) {{\n    \
         parac_iterator it(0:M:1; 0:N:1) {{\n        \
         out[itx][ity] = (src[itx][ity] as u16) * 3 + 1;\n    }}\n}}\n"
    )
}

fn input(m: usize, n: usize) -> Matrix<u8> {
    let mut x = 0x2545_f491_u64 ^ (m * 1000 + n) as u64;
    let v: Vec<u8> = (0..m * n)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (x >> 56) as u8
        })
        .collect();
    Matrix::from_vec([m, n], v).expect("shape")
}

/// Calls `name` of `p` on `rt` and checks the result bit for bit.
fn call_exact(p: &Pipeline, rt: &Runtime, name: &str, src: &Matrix<u8>, what: &str) {
    let (m, n) = (src.rows(), src.cols());
    let mut args = vec![
        Arg::Matrix(tensor_of(src.clone()).expect("u8")),
        Arg::Matrix(tensor_of(Matrix::<u16>::zeros([m, n])).expect("u16")),
    ];
    p.run(rt, name, &mut args)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let out = matrix_of::<u16>(match &args[1] {
        Arg::Matrix(t) => t,
        Arg::Scalar(_) => unreachable!(),
    })
    .expect("u16");
    let want: Vec<u16> = src
        .as_slice()
        .iter()
        .map(|v| u16::from(*v) * 3 + 1)
        .collect();
    assert_eq!(out.as_slice(), &want[..], "{what}: results differ");
}

/// The search records of program `name` so far.
fn records(name: &str) -> Vec<parac::opencl::PlanRecord> {
    parac::opencl::plan_records()
        .into_iter()
        .filter(|r| r.program == name)
        .collect()
}

/// The lines of the plan files under `<cache>/plans`, comments left out.
fn plan_lines(cache: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(cache.join("plans")) else {
        return out;
    };
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "plans"))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("a plan file");
        assert!(
            text.starts_with("parac plans 1\n"),
            "{}: {text}",
            f.display()
        );
        out.extend(
            text.lines()
                .filter(|l| !l.starts_with('#'))
                .map(str::to_string),
        );
    }
    out
}

/// Budget 0: every call makes exactly one timing of the region (the first, the model's plan,
/// whose build is not counted) and runs the fastest plan so far, bit-exact; later calls go on
/// until the search is complete; then calls use the choice without timing, and so does a new
/// runtime (another process) reading the plan cache.
#[test]
fn a_zero_budget_times_one_plan_per_call_and_later_calls_go_on() {
    let tmp = temp_dir("zero");
    let cache = tmp.path();
    let Some(rt) = opencl(cache, Duration::ZERO) else {
        return;
    };
    let name = "zero_budget";
    let p = Pipeline::compile(&source(name)).expect("compiles");
    let src = input(21, 70);
    let mut calls = 0;
    loop {
        calls += 1;
        assert!(calls < 80, "the search ends");
        // Candidates' programs build on the background thread: a call whose next candidate is
        // not built yet makes no step, so this test waits for them between calls.
        rt.wait_for_background();
        call_exact(&p, &rt, name, &src, &format!("call {calls}"));
        let rs = records(name);
        assert_eq!(rs.len(), calls, "one search step per call");
        let last = rs.last().expect("a record");
        assert_eq!(last.steps, 1, "{last:?}");
        if calls == 1 {
            // The model's plan first: the first-ranked candidate, not the baseline.
            assert_eq!(last.times.len(), 1, "{last:?}");
            assert_ne!(last.chosen.0, "baseline", "{last:?}");
        }
        if last.complete {
            break;
        }
    }
    assert!(
        calls > 3,
        "a zero budget spreads the search over calls ({calls})"
    );
    // Complete: no more timing, the same results.
    call_exact(&p, &rt, name, &src, "after the search");
    assert_eq!(records(name).len(), calls);
    let lines = plan_lines(cache);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("plan\t") && l.contains("\tdone\t")),
        "{lines:?}"
    );
    // Another runtime (as another process would) takes the plan from the cache.
    let rt2 = opencl(cache, Duration::ZERO).expect("a second runtime");
    call_exact(&p, &rt2, name, &src, "a new runtime");
    assert_eq!(records(name).len(), calls, "no search in the new runtime");
}

/// A small budget: the first call times the model's plan only, a timing starts only if it is
/// expected to fit, and the budget a call leaves unspent goes to the next, so timings that cost more than the budget (a candidate's build)
/// still happen, spread over calls; every call is bit-exact and no call records an empty step.
#[test]
fn a_small_budget_spreads_the_search_over_calls() {
    let tmp = temp_dir("small");
    let cache = tmp.path();
    let Some(rt) = opencl(cache, Duration::from_millis(50)) else {
        return;
    };
    let name = "small_budget";
    let p = Pipeline::compile(&source(name)).expect("compiles");
    let src = input(11, 66);
    // The call that starts the search times the model's plan alone (about one build and one
    // run), whatever its budget.
    call_exact(&p, &rt, name, &src, "call 1");
    let first = records(name);
    assert!(
        !first.is_empty() && first.iter().all(|r| r.times.len() == 1),
        "{first:?}"
    );
    // Calls go on while candidates build in the background (no call waits for one): on a
    // cold PoCL cache a build takes seconds, so the calls are paced, and bounded by time.
    let mut calls = 1;
    let start = std::time::Instant::now();
    while records(name).last().is_none_or(|r| r.times.len() < 3) {
        calls += 1;
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the search goes on: {:?}",
            records(name)
        );
        call_exact(&p, &rt, name, &src, &format!("call {calls}"));
        std::thread::sleep(Duration::from_millis(10));
    }
    let rs = records(name);
    assert!(rs.iter().all(|r| r.steps > 0), "{rs:?}");
    assert!(rs.len() <= calls);
    // Builds still queued would write into the cache directory after it is removed.
    rt.wait_for_background();
}

/// No call waits for a candidate's build: with builds made slow on purpose (3 s each), the calls
/// after the first (which builds the function's first program, the baseline's kernels and the
/// model's plans, before the delay is set) take less than the delay, results exact, while the
/// background thread builds the candidates; once it has, later calls time them and the search
/// goes on.
#[test]
fn no_call_waits_for_a_candidates_build() {
    let tmp = temp_dir("background");
    let cache = tmp.path();
    let Some(rt) = opencl(cache, Duration::from_millis(50)) else {
        return;
    };
    let name = "background_builds";
    let p = Pipeline::compile(&source(name)).expect("compiles");
    let src = input(13, 37);
    call_exact(&p, &rt, name, &src, "call 1");
    let delay = Duration::from_secs(3);
    rt.device().expect("a device").set_build_delay(delay);
    for i in 2..6 {
        let t = std::time::Instant::now();
        call_exact(&p, &rt, name, &src, &format!("call {i}"));
        assert!(
            t.elapsed() < delay,
            "call {i} waited for a build: {:?}",
            t.elapsed()
        );
    }
    let timed = records(name).last().map_or(0, |r| r.times.len());
    rt.wait_for_background();
    rt.device()
        .expect("a device")
        .set_build_delay(Duration::ZERO);
    let mut calls = 0;
    while records(name)
        .last()
        .is_none_or(|r| r.times.len() <= timed && !r.complete)
    {
        calls += 1;
        assert!(calls < 200, "the search goes on: {:?}", records(name));
        rt.wait_for_background();
        call_exact(
            &p,
            &rt,
            name,
            &src,
            &format!("after the builds, call {calls}"),
        );
    }
    // Builds still queued would write into the cache directory after it is removed.
    rt.wait_for_background();
}

/// A search stopped by its budget goes on in another runtime (another process) from what the
/// plan cache holds, not from the start.
#[test]
fn an_unfinished_search_goes_on_in_another_process() {
    let tmp = temp_dir("resume");
    let cache = tmp.path();
    let Some(rt) = opencl(cache, Duration::ZERO) else {
        return;
    };
    let name = "resumed";
    let p = Pipeline::compile(&source(name)).expect("compiles");
    let src = input(9, 40);
    for i in 0..3 {
        rt.wait_for_background();
        call_exact(&p, &rt, name, &src, &format!("call {i}"));
    }
    let measured = records(name).last().expect("records").times.len();
    assert_eq!(measured, 3, "{:?}", records(name));
    let lines = plan_lines(cache);
    assert!(
        lines.iter().any(|l| l.contains("\tpartial\t")),
        "the unfinished search is saved: {lines:?}"
    );
    drop(rt);
    let rt2 = opencl(cache, Duration::ZERO).expect("a second runtime");
    // The first step of the new runtime goes on from the saved search (a call whose next
    // candidate's program is not built yet makes no step; its build goes on in the background).
    let before = records(name).len();
    let mut tries = 0;
    while records(name).len() == before {
        tries += 1;
        assert!(
            tries < 5,
            "the new runtime makes a step: {:?}",
            records(name)
        );
        call_exact(
            &p,
            &rt2,
            name,
            &src,
            &format!("a new runtime, call {tries}"),
        );
        rt2.wait_for_background();
    }
    let last = records(name)[before].clone();
    assert_eq!(last.times.len(), measured + 1, "{last:?}");
    assert_eq!(last.steps, 1);
}

/// An unbounded budget runs the whole search in the first call; the plan chosen took every
/// sample (adaptive timing drops candidates far behind the leader after one sample, never the
/// leader), and the plan file says so.
#[test]
fn an_unbounded_budget_searches_to_the_end_and_never_drops_the_leader() {
    let tmp = temp_dir("unbounded");
    let cache = tmp.path();
    let Some(rt) = opencl(cache, Duration::MAX) else {
        return;
    };
    let name = "unbounded";
    let p = Pipeline::compile(&source(name)).expect("compiles");
    let src = input(17, 33);
    call_exact(&p, &rt, name, &src, "first call");
    let rs = records(name);
    assert_eq!(rs.len(), 1);
    assert!(rs[0].complete, "{:?}", rs[0]);
    assert!(rs[0].times.len() > 2, "{:?}", rs[0]);
    // The chosen plan has the fastest time of all.
    let best = rs[0]
        .times
        .iter()
        .map(|t| t.2)
        .fold(f64::INFINITY, f64::min);
    let chosen = rs[0]
        .times
        .iter()
        .find(|t| t.0 == rs[0].chosen.0 && t.1 == rs[0].chosen.1)
        .expect("the chosen plan was timed");
    assert_eq!(chosen.2, best);
    // In the plan file: the chosen (label, work-group) took at least the full samples.
    let lines = plan_lines(cache);
    let plan: Vec<&str> = lines
        .iter()
        .find(|l| l.starts_with("plan\t"))
        .expect("a plan line")
        .split('\t')
        .collect();
    assert_eq!(plan[3], "done", "{lines:?}");
    let time: Vec<&str> = lines
        .iter()
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|f| f[0] == "time" && f[4] == plan[4] && f[5] == plan[5])
        .expect("the chosen plan's time line");
    let samples: u32 = time[7].parse().expect("samples");
    assert!(samples >= 3, "the leader took {samples} samples: {lines:?}");
    call_exact(&p, &rt, name, &src, "second call");
    assert_eq!(records(name).len(), 1, "no search on the second call");
}

/// A plan cache that cannot be written (its directory is a file, or read-only) or whose file is
/// damaged is no cache: the call runs (bit-exact), and a damaged file is replaced by a good one.
#[test]
fn a_broken_or_unwritable_plan_cache_does_not_fail_a_call() {
    let src = input(13, 24);
    // `plans` is a file: nothing can be written under it.
    let tmp = temp_dir("file");
    let cache = tmp.path();
    std::fs::write(cache.join("plans"), "not a directory").expect("write");
    let Some(rt) = opencl(cache, Duration::ZERO) else {
        return;
    };
    let name = "unwritable";
    let p = Pipeline::compile(&source(name)).expect("compiles");
    for i in 0..3 {
        rt.wait_for_background();
        call_exact(&p, &rt, name, &src, &format!("unwritable, call {i}"));
    }
    // The search still goes on in the process.
    assert_eq!(records(name).last().expect("records").times.len(), 3);

    // A damaged plan file: ignored, then replaced.
    let tmp = temp_dir("damaged");
    let cache = tmp.path();
    let name = "damaged";
    let p = Pipeline::compile(&source(name)).expect("compiles");
    let rt = opencl(cache, Duration::ZERO).expect("runtime");
    call_exact(&p, &rt, name, &src, "first");
    let files: Vec<PathBuf> = std::fs::read_dir(cache.join("plans"))
        .expect("plans")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::write(&files[0], b"\x00\xffparac plans 1\ngarbage\n").expect("damage");
    let rt2 = opencl(cache, Duration::ZERO).expect("runtime");
    call_exact(&p, &rt2, name, &src, "over a damaged file");
    let text = std::fs::read_to_string(&files[0]).expect("rewritten");
    assert!(text.starts_with("parac plans 1\n"), "{text}");

    // A read-only directory (a user whose permissions are checked cannot write it; root can).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let tmp = temp_dir("readonly");
        let cache = tmp.path();
        std::fs::create_dir_all(cache.join("plans")).expect("plans");
        std::fs::set_permissions(cache.join("plans"), std::fs::Permissions::from_mode(0o555))
            .expect("chmod");
        let name = "read_only";
        let p = Pipeline::compile(&source(name)).expect("compiles");
        let rt = opencl(cache, Duration::ZERO).expect("runtime");
        for i in 0..2 {
            call_exact(&p, &rt, name, &src, &format!("read-only, call {i}"));
        }
        rt.wait_for_background();
        let _ =
            std::fs::set_permissions(cache.join("plans"), std::fs::Permissions::from_mode(0o755));
    }
}

/// `parac tune` searches a program's functions to the end and writes the plan cache; `parac
/// cache export` and `import` carry it to another cache, where a call finds its plan without
/// searching; `parac cache path` and `clear`.
#[test]
fn cli_tune_export_import() {
    let exe = env!("CARGO_BIN_EXE_parac");
    let tmp = temp_dir("cli");
    let dir = tmp.path();
    // Two caches, as two machines with the same device.
    let (a, b) = (dir.join("a"), dir.join("b"));
    let name = "tuned";
    let file = dir.join("tuned.parac");
    std::fs::write(&file, source(name)).expect("write the program");
    let parac = |cache: &Path| {
        let mut c = Command::new(exe);
        c.env("XDG_CACHE_HOME", cache).env_remove("PARAC_CACHE");
        c
    };
    let path = parac(&a).args(["cache", "path"]).output().expect("parac");
    assert!(path.status.success());
    assert_eq!(
        String::from_utf8_lossy(&path.stdout).trim(),
        a.join("parac").display().to_string()
    );
    let has_cl = Runtime::from_spec(&spec()).is_ok();
    let tune = parac(&a)
        .arg("tune")
        .arg(&file)
        .args(["--size", "M=19", "--size", "N=50", "--device", &spec()])
        .output()
        .expect("parac tune");
    let out = String::from_utf8_lossy(&tune.stdout);
    let err = String::from_utf8_lossy(&tune.stderr);
    if !has_cl {
        assert!(!tune.status.success(), "tune needs a device: {out}{err}");
        if std::env::var("PARAC_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
            panic!("PARAC_REQUIRE_OPENCL=1, but there is no OpenCL device");
        }
        println!("skipped: no OpenCL");
        return;
    }
    assert!(tune.status.success(), "{out}{err}");
    assert!(out.contains("1 region searched"), "{out}{err}");
    let tuned = plan_lines(&a.join("parac"));
    assert!(
        tuned.iter().any(|l| l.contains("\tdone\t")),
        "{tuned:?}\n{out}{err}"
    );
    // Usage errors: a size no function has, a missing size.
    let bad = parac(&a)
        .arg("tune")
        .arg(&file)
        .args(["--size", "K=3"])
        .output()
        .expect("parac");
    assert_eq!(bad.status.code(), Some(2));
    let bad = parac(&a)
        .arg("tune")
        .arg(&file)
        .args(["--size", "M=3"])
        .output()
        .expect("parac");
    assert_eq!(bad.status.code(), Some(2), "N is missing");

    let bundle = dir.join("plans.bundle");
    let export = parac(&a)
        .args(["cache", "export"])
        .arg(&bundle)
        .output()
        .expect("export");
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let import = parac(&b)
        .args(["cache", "import"])
        .arg(&bundle)
        .output()
        .expect("import");
    assert!(
        import.status.success(),
        "{}",
        String::from_utf8_lossy(&import.stderr)
    );
    assert_eq!(
        plan_lines(&b.join("parac")),
        tuned,
        "the round trip keeps every line"
    );
    // A damaged bundle is refused and changes nothing.
    let damaged = dir.join("damaged.bundle");
    let text = std::fs::read_to_string(&bundle).expect("bundle");
    std::fs::write(&damaged, &text[..text.len() / 2]).expect("write");
    let refused = parac(&b)
        .args(["cache", "import"])
        .arg(&damaged)
        .output()
        .expect("import");
    assert!(!refused.status.success());
    assert_eq!(plan_lines(&b.join("parac")), tuned);

    // In cache `b`, a call at a size of the tuned size class runs without searching.
    let rt = opencl(&b.join("parac"), Duration::ZERO).expect("runtime");
    let p = Pipeline::compile(&source(name)).expect("compiles");
    call_exact(&p, &rt, name, &input(20, 60), "imported plans");
    assert!(records(name).is_empty(), "{:?}", records(name));

    let clear = parac(&b).args(["cache", "clear"]).output().expect("clear");
    assert!(clear.status.success());
    assert!(!b.join("parac/plans").exists());
}
