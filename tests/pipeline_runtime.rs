//! Pipelines compiled at run time from their source (`parac::Pipeline`) against the functions
//! the `parac!` macro compiles from the same source, on the same runtime: the CPU path, and the OpenCL device with the baseline plan, the model's plan
//! and one candidate forced per way of launching one (`PlanPolicy::Fixed(label, [16, 4])`,
//! [`policies`]), on small sizes including the smallest legal one. Bit-exact, `unsharp` within
//! 1e-5. Both sides run through the one executor with the same kernels, so what differs is the
//! arguments' binding and the launches, not the kernels: `tests/plans.rs` checks every
//! candidate of these pipelines against the references. Then the typed errors (out-of-bounds
//! lookups and scatters, shapes, ranks, arguments, compile errors), global operators with
//! results, and the `parac` command (`run`, `emit`).
//!
//! Without OpenCL the device half prints "skipped" and passes, unless `PARAC_REQUIRE_OPENCL=1`.

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

use std::path::PathBuf;
use std::process::Command;

use common::data;
use common::runtimes;
use common::soft::Failures;
use parac::pipeline::{Arg, Tensor, Val, matrix_of, tensor_of};
use parac::{Element, Error, Matrix, Pipeline, PlanPolicy, Runtime};

/// The `parac! { ... }` body of an example pipeline (as `tests/plans.rs::labels` strips it).
fn body(file: &str) -> String {
    let rust = std::fs::read_to_string(file).expect("pipeline source");
    let start = rust.find("parac! {").expect("a parac! block") + "parac! {".len();
    let end = rust.rfind('}').expect("closing brace");
    rust[start..end].to_string()
}

fn compiled(file: &str) -> Pipeline {
    Pipeline::compile_named(file, &body(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Baseline, the model's plan, and per region one candidate forced for each way of launching
/// one: points per work-item along each dimension, a fixed work-group (local tiles, trees),
/// a split of the interior from the border strips.
fn policies(p: &Pipeline) -> Vec<PlanPolicy> {
    let mut out = vec![PlanPolicy::Baseline, PlanPolicy::Model];
    let mut launches = Vec::new();
    for f in p.functions() {
        for rid in 0..f.regions.len() {
            for d in parac_core::codegen::launch::plans(f, rid) {
                let how = (rid, d.per_item.map(|n| n > 1), d.local.is_some(), d.split);
                let fixed = PlanPolicy::Fixed(d.label, vec![16, 4]);
                if !launches.contains(&how) && !out.contains(&fixed) {
                    launches.push(how);
                    out.push(fixed);
                }
            }
        }
    }
    out
}

/// Runs `each` on the CPU path, then on a fresh OpenCL runtime under every policy of `p`.
fn each_runtime(p: &Pipeline, each: impl FnMut(&Runtime, &str)) {
    each_runtime_of(p, |_| true, each)
}

/// As [`each_runtime`], under the policies `keep` selects.
fn each_runtime_of(
    p: &Pipeline,
    keep: impl Fn(&PlanPolicy) -> bool,
    mut each: impl FnMut(&Runtime, &str),
) {
    let _b = runtimes::shared_buffers();
    each(&Runtime::cpu(), "cpu");
    let Some(mut rt) = runtimes::fresh_opencl() else {
        return;
    };
    for policy in policies(p).into_iter().filter(|p| keep(p)) {
        let label = format!("opencl {policy:?}");
        rt.set_policy(policy);
        each(&rt, &label);
    }
}

fn arg<T: Element>(m: &Matrix<T>) -> Arg {
    Arg::Matrix(tensor_of(m.clone()).expect("a language element type"))
}

fn out<T: Element>(args: &[Arg], i: usize) -> Matrix<T> {
    match &args[i] {
        Arg::Matrix(t) => matrix_of(t).expect("the declared element type"),
        Arg::Scalar(v) => panic!("argument {i} is the scalar {v}"),
    }
}

#[test]
fn laplacian_like_the_macro() {
    let p = compiled("examples/pipelines/laplacian.rs");
    each_runtime(&p, |rt, label| {
        let mut f = Failures::new();
        for (m, n) in [(4, 4), (5, 7), (17, 13)] {
            let src = data::random_u8(m, n, data::seed_for(0x9E01, m, n));
            let (mut lap, mut down) = (
                Matrix::<i16>::zeros([m, n]),
                Matrix::<u8>::zeros([m.div_ceil(2), n.div_ceil(2)]),
            );
            laplacian_p::laplacian(rt, &src, &mut lap, &mut down).expect("macro");
            let mut args = [
                arg(&src),
                arg(&Matrix::<i16>::zeros([m, n])),
                arg(&Matrix::<u8>::zeros([m.div_ceil(2), n.div_ceil(2)])),
            ];
            match p.run(rt, "laplacian", &mut args) {
                Ok(None) => {
                    f.same(&format!("{label} {m}x{n} lap"), &out(&args, 1), &lap);
                    f.same(&format!("{label} {m}x{n} down"), &out(&args, 2), &down);
                }
                r => f.fail(format!("{label} {m}x{n}: {r:?}")),
            }
        }
        f.finish();
    });
}

#[test]
fn sharpen_like_the_macro() {
    let p = compiled("examples/pipelines/sharpen.rs");
    each_runtime(&p, |rt, label| {
        let mut f = Failures::new();
        for (m, n) in [(8, 8), (12, 20)] {
            let src = data::structured_u8(m, n, data::seed_for(0x9E02, m, n));
            let mut want = Matrix::<u8>::zeros([m, n]);
            sharpen_p::sharpen(rt, &src, &mut want).expect("macro");
            let mut args = [arg(&src), arg(&Matrix::<u8>::zeros([m, n]))];
            match p.run(rt, "sharpen", &mut args) {
                Ok(None) => f.same(&format!("{label} {m}x{n}"), &out(&args, 1), &want),
                r => f.fail(format!("{label} {m}x{n}: {r:?}")),
            }
        }
        f.finish();
    });
}

#[test]
fn blur_like_the_macro() {
    let p = compiled("examples/pipelines/blur.rs");
    each_runtime(&p, |rt, label| {
        let mut f = Failures::new();
        for (m, n) in [(3, 3), (9, 10), (17, 33)] {
            let src = data::random_u12(m, n, data::seed_for(0x9E03, m, n));
            let mut want = Matrix::<u16>::zeros([m - 2, n - 2]);
            blur_p::blur(rt, &src, &mut want).expect("macro");
            let mut args = [arg(&src), arg(&Matrix::<u16>::zeros([m - 2, n - 2]))];
            match p.run(rt, "blur", &mut args) {
                Ok(None) => f.same(&format!("{label} {m}x{n}"), &out(&args, 1), &want),
                r => f.fail(format!("{label} {m}x{n}: {r:?}")),
            }
        }
        f.finish();
    });
}

#[test]
fn unsharp_like_the_macro() {
    let p = compiled("examples/pipelines/unsharp.rs");
    each_runtime(&p, |rt, label| {
        let mut f = Failures::new();
        for (m, n) in [(1, 1), (7, 7), (15, 17)] {
            let img = data::random_rgb(m, n, data::seed_for(0x9E04, m, n));
            let mut want = Matrix::<f32>::zeros([3, m, n]);
            unsharp_p::unsharp(rt, &img, &mut want).expect("macro");
            let mut args = [arg(&img), arg(&Matrix::<f32>::zeros([3, m, n]))];
            match p.run(rt, "unsharp", &mut args) {
                Ok(None) => f.close(&format!("{label} {m}x{n}"), &out(&args, 1), &want, 1e-5),
                r => f.fail(format!("{label} {m}x{n}: {r:?}")),
            }
        }
        f.finish();
    });
}

/// `tests/any_program.rs`'s lookup and scatter (subscripts read from data), division by a host
/// scalar (checked by the host before the region: the kernels divide without a test) and a
/// shift by one (its reach proven by the host).
const ANY_PROGRAM: &str = "
    pub fn lookup(src: &u8[M][N], lut: &u8[K], out: &mut u8[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            out[x][y] = lut[src[x][y]];
        }
    }
    pub fn scatter(src: &u8[M][N], out: &mut u8[K]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            out[src[x][y]] = 1;
        }
    }
    pub fn divide(src: &u8[M][N], d: i32, out: &mut i32[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            out[x][y] = src[x][y] / d;
        }
    }
    pub fn shifted(src: &u8[M][N], k: i32, out: &mut u8[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N-1:1) {
            out[x][y] = src[x][y + k];
        }
    }
";

#[test]
fn host_scalars_are_checked_before_the_region() {
    let p = Pipeline::compile(ANY_PROGRAM).expect("compiles");
    each_runtime(&p, |rt, label| {
        let src = data::random_u8(9, 11, 40);
        let scalar = |v: i32| Arg::Scalar(Val::Int(v as i128));
        let mut args = [arg(&src), scalar(3), arg(&Matrix::<i32>::zeros([9, 11]))];
        let r = p.run(rt, "divide", &mut args);
        assert!(matches!(r, Ok(None)), "{label}: {r:?}");
        assert_eq!(out::<i32>(&args, 2), src.map(|v| v as i32 / 3), "{label}");
        let mut args = [arg(&src), scalar(0), arg(&Matrix::<i32>::zeros([9, 11]))];
        let r = p.run(rt, "divide", &mut args);
        assert!(
            matches!(
                r,
                Err(Error::DivisionByZero {
                    function: "divide",
                    region: "it"
                })
            ),
            "{label}: {r:?}"
        );
        let mut args = [arg(&src), scalar(1), arg(&Matrix::<u8>::zeros([9, 11]))];
        let r = p.run(rt, "shifted", &mut args);
        assert!(matches!(r, Ok(None)), "{label}: {r:?}");
        assert_eq!(
            out::<u8>(&args, 2).get(&[2, 3]),
            src.get(&[2, 4]),
            "{label}"
        );
        for k in [2, -1, 1000] {
            let mut args = [arg(&src), scalar(k), arg(&Matrix::<u8>::zeros([9, 11]))];
            let r = p.run(rt, "shifted", &mut args);
            assert!(
                matches!(r, Err(Error::OutOfBounds { matrix: "src", .. })),
                "{label} k = {k}: {r:?}"
            );
        }
    });
}

#[test]
fn lookups_and_scatters_outside_are_errors_on_every_path() {
    let p = Pipeline::compile(ANY_PROGRAM).expect("compiles");
    each_runtime(&p, |rt, label| {
        for (m, n) in [(1, 7), (5, 5), (17, 13)] {
            let src = data::random_u8(m, n, data::seed_for(0x9E05, m, n));
            // A 256-entry table: the right result.
            let lut = Matrix::<u8>::from_fn([256], |i| (255 - i[0]) as u8);
            let mut args = [arg(&src), arg(&lut), arg(&Matrix::<u8>::zeros([m, n]))];
            let r = p.run(rt, "lookup", &mut args);
            assert!(matches!(r, Ok(None)), "{label} {m}x{n}: {r:?}");
            assert_eq!(out::<u8>(&args, 2), src.map(|v| 255 - v), "{label} {m}x{n}");
            // A 16-entry table: values from 16 up fall outside it.
            assert!(src.as_slice().iter().any(|v| *v >= 16));
            let small = Matrix::<u8>::from_fn([16], |i| i[0] as u8);
            let mut args = [arg(&src), arg(&small), arg(&Matrix::<u8>::zeros([m, n]))];
            let r = p.run(rt, "lookup", &mut args);
            assert!(
                matches!(
                    r,
                    Err(Error::OutOfBounds {
                        matrix: "lut",
                        what: "read of",
                        function: "lookup",
                        ..
                    })
                ),
                "{label} {m}x{n}: {r:?}"
            );
            // A scatter into 256 elements, then into 4.
            let mut args = [arg(&src), arg(&Matrix::<u8>::zeros([256]))];
            let r = p.run(rt, "scatter", &mut args);
            assert!(matches!(r, Ok(None)), "{label} {m}x{n}: {r:?}");
            let mut want = Matrix::<u8>::zeros([256]);
            for v in src.as_slice() {
                want.set(&[*v as usize], 1);
            }
            assert_eq!(out::<u8>(&args, 1), want, "{label} {m}x{n}");
            let mut args = [arg(&src), arg(&Matrix::<u8>::zeros([4]))];
            let r = p.run(rt, "scatter", &mut args);
            assert!(
                matches!(
                    r,
                    Err(Error::OutOfBounds {
                        matrix: "out",
                        what: "write to",
                        ..
                    })
                ),
                "{label} {m}x{n}: {r:?}"
            );
        }
    });
}

/// Global operators with results on both paths: the interpreter (CPU path) and the device's
/// partials combined on the host (the baseline, the model's plan, tree reductions) give the
/// same outputs and return values.
#[test]
fn global_operators_and_results() {
    let source = std::fs::read_to_string("tests/in/global_reductions.parac").expect("source");
    let p = Pipeline::compile(&source).expect("compiles");
    let mut want: Vec<(String, Option<Val>, Tensor)> = Vec::new();
    // The reductions' plans: the baseline's partial per row, tree reductions' per work-group.
    let reductions = |p: &PlanPolicy| match p {
        PlanPolicy::Fixed(label, _) => label.contains("tree"),
        _ => true,
    };
    each_runtime_of(&p, reductions, |rt, label| {
        let mut i = 0;
        for (m, n) in [(1, 1), (6, 9), (31, 17)] {
            let src = data::random_u8(m, n, data::seed_for(0x9E06, m, n));
            for function in ["stretch", "mean_of_edges"] {
                let mut args = [arg(&src), arg(&Matrix::<u8>::zeros([m, n]))];
                let r = p
                    .run(rt, function, &mut args)
                    .unwrap_or_else(|e| panic!("{label} {function} {m}x{n}: {e}"));
                let Arg::Matrix(t) = &args[1] else {
                    unreachable!()
                };
                let what = format!("{function} {m}x{n}");
                if label == "cpu" {
                    want.push((what, r, t.clone()));
                } else {
                    assert_eq!(
                        (&what, &r, t),
                        (&want[i].0, &want[i].1, &want[i].2),
                        "{label}"
                    );
                }
                i += 1;
            }
            let mut args = [arg(&src)];
            let r = p.run(rt, "pixel_count", &mut args);
            assert_eq!(
                r.expect("pixel_count"),
                Some(Val::Int((m * n) as i128)),
                "{label}"
            );
        }
    });
    let stretched = &want[2];
    assert!(
        matches!(stretched.1, Some(Val::Int(s)) if s > 0),
        "{stretched:?}"
    );
}

/// Shape and rank errors are the generated function's, word for word; arguments of the wrong
/// kind or type and unknown functions are `Error::Argument`; compile errors are rendered.
#[test]
fn argument_errors() {
    let p = compiled("examples/pipelines/laplacian.rs");
    let rt = Runtime::cpu();
    let src = data::random_u8(6, 8, 1);
    // `down` of the wrong shape.
    let (mut lap, mut down) = (Matrix::<i16>::zeros([6, 8]), Matrix::<u8>::zeros([3, 5]));
    let macro_error = laplacian_p::laplacian(&rt, &src, &mut lap, &mut down).unwrap_err();
    let mut args = [arg(&src), arg(&lap), arg(&down)];
    let e = p.run(&rt, "laplacian", &mut args).unwrap_err();
    assert!(matches!(e, Error::Shape { matrix: "down", .. }), "{e:?}");
    assert_eq!(e.to_string(), macro_error.to_string());
    // `src` of the wrong rank.
    let flat = Matrix::<u8>::zeros([48]);
    let macro_error = laplacian_p::laplacian(&rt, &flat, &mut lap, &mut down).unwrap_err();
    let mut args = [arg(&flat), arg(&lap), arg(&down)];
    let e = p.run(&rt, "laplacian", &mut args).unwrap_err();
    assert!(matches!(e, Error::Rank { matrix: "src", .. }), "{e:?}");
    assert_eq!(e.to_string(), macro_error.to_string());
    // Wrong element type, wrong count, unknown function.
    let mut args = [arg(&src.map(|v| v as i16)), arg(&lap), arg(&down)];
    let e = p.run(&rt, "laplacian", &mut args).unwrap_err();
    assert!(
        matches!(e, Error::Argument { ref message, .. } if message.contains("holds u8")),
        "{e:?}"
    );
    let e = p.run(&rt, "laplacian", &mut [arg(&src)]).unwrap_err();
    assert!(matches!(e, Error::Argument { .. }), "{e:?}");
    let e = p.run(&rt, "nope", &mut []).unwrap_err();
    assert!(e.to_string().contains("laplacian"), "{e}");
    // Compile errors, rendered with their place.
    let e = Pipeline::compile(
        "fn f(a: &u8[M], b: &mut u8[M]) {\n  parac_iterator it(0:M:1) { b[itx] = c[itx]; }\n}",
    )
    .unwrap_err();
    let Error::Compile { message } = &e else {
        panic!("{e:?}")
    };
    assert!(
        message.contains("<source>:2:") && message.contains('c'),
        "{message}"
    );
    // The functions and their programs.
    assert_eq!(p.functions().len(), 1);
    assert!(p.function("laplacian").is_some());
    assert!(
        p.opencl_source("laplacian")
            .expect("source")
            .contains("__kernel void r0_it(")
    );
}

fn temp_dir(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("parac-pipeline-{name}-"))
        .tempdir()
        .expect("temp dir")
}

#[test]
fn cli_run_and_emit() {
    let exe = env!("CARGO_BIN_EXE_parac");
    let tmp = temp_dir("cli");
    let dir = tmp.path();
    let run = Command::new(exe)
        .args([
            "run",
            "tests/in/laplacian_level.parac",
            "--in",
            "src=assets/camera.png",
            "--out",
        ])
        .arg(dir)
        .args(["--device", "cpu"])
        .output()
        .expect("run parac");
    let text = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{text}");
    // The outputs, as the macro-compiled pipeline computes them.
    let src = parac::io::load_png::<u8>("assets/camera.png").expect("camera");
    let (m, n) = (src.rows(), src.cols());
    let (mut lap, mut down) = (
        Matrix::<i16>::zeros([m, n]),
        Matrix::<u8>::zeros([m.div_ceil(2), n.div_ceil(2)]),
    );
    laplacian_p::laplacian(&Runtime::cpu(), &src, &mut lap, &mut down).expect("macro");
    assert_eq!(
        Matrix::<i16>::read_npy(dir.join("lap.npy")).expect("lap.npy"),
        lap
    );
    assert_eq!(
        Matrix::<u8>::read_npy(dir.join("down.npy")).expect("down.npy"),
        down
    );
    for png in ["lap.png", "down.png"] {
        assert!(dir.join(png).is_file(), "{png}: {text}");
    }

    // A returned value is printed; an `.npy` input of the exact type.
    let tmp = temp_dir("ret");
    let dir = tmp.path();
    std::fs::create_dir_all(dir).expect("temp dir");
    let img = data::random_u8(5, 7, 3);
    img.write_npy(dir.join("src.npy")).expect("write");
    let run = Command::new(exe)
        .args([
            "run",
            "tests/in/global_reductions.parac",
            "--function",
            "stretch",
            "--in",
        ])
        .arg(format!("src={}", dir.join("src.npy").display()))
        .arg("--out")
        .arg(dir)
        .args(["--device", "cpu"])
        .output()
        .expect("run parac");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let total: u64 = img.as_slice().iter().map(|v| *v as u64).sum();
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        total.to_string()
    );

    // Usage errors: status 2, the error and where to find help (and the subcommand's usage
    // where the arguments parsed but do not fit the program).
    for (bad, usage) in [
        (vec!["run", "tests/in/laplacian_level.parac"], true),
        (
            vec!["run", "tests/in/laplacian_level.parac", "--out", "x"],
            true,
        ),
        (
            vec!["run", "tests/in/global_reductions.parac", "--out", "x"],
            true,
        ),
        (
            vec![
                "run",
                "tests/in/laplacian_level.parac",
                "--out",
                "x",
                "--in",
                "src",
            ],
            false,
        ),
        (
            vec!["emit", "metal", "tests/in/laplacian_level.parac"],
            false,
        ),
        (vec!["ir"], true),
        (vec!["frobnicate"], true),
        (vec!["tests/in/laplacian_level.parac", "--emit-rust"], true),
        (vec!["cache", "frobnicate"], true),
        (vec![], true),
    ] {
        let r = Command::new(exe).args(&bad).output().expect("run parac");
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{bad:?}: {err}");
        assert!(err.contains("--help"), "{bad:?}: {err}");
        assert!(!usage || err.contains("Usage: parac"), "{bad:?}: {err}");
    }

    // `emit opencl`: the program of each function.
    let emit = Command::new(exe)
        .args(["emit", "opencl", "tests/in/laplacian_level.parac"])
        .output()
        .expect("run parac");
    assert!(emit.status.success());
    let cl = String::from_utf8_lossy(&emit.stdout);
    assert!(cl.contains("__kernel void r0_it("), "{cl}");
    assert!(cl.contains("__kernel"), "{cl}");

    // The IR dump, as `parac ir FILE...` and as `parac FILE...`; errors in a program: status 1.
    for args in [
        &["ir", "tests/in/laplacian_level.parac"][..],
        &["tests/in/laplacian_level.parac"],
    ] {
        let dump = Command::new(exe).args(args).output().expect("run parac");
        assert!(dump.status.success(), "{args:?}");
        assert!(
            String::from_utf8_lossy(&dump.stdout).contains("fn laplacian"),
            "{args:?}"
        );
    }
    let errors = Command::new(exe)
        .args(["ir", "tests/in/errors_collected.parac"])
        .output()
        .expect("run parac");
    assert_eq!(errors.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&errors.stderr).contains("errors_collected.parac:5:34"));

    // `emit lir`: the loop IR after lowering and after each pass.
    let lir = Command::new(exe)
        .args(["emit", "lir", "tests/in/laplacian_level.parac"])
        .output()
        .expect("run parac");
    assert!(lir.status.success());
    let lir = String::from_utf8_lossy(&lir.stdout);
    assert!(lir.contains("// after lower\nfunc laplacian"), "{lir}");
    assert!(lir.contains("parallel for"), "{lir}");

    // `emit rust`: the macro's expansion, formatted.
    let rust = Command::new(exe)
        .args(["emit", "rust", "tests/in/laplacian_level.parac"])
        .output()
        .expect("run parac");
    assert!(rust.status.success());
    let rust = String::from_utf8_lossy(&rust.stdout);
    assert!(rust.contains("pub fn laplacian(\n"), "{rust}");
    assert!(rust.lines().count() > 50, "one line per statement: {rust}");

    // `devices`: the devices, or none, and what `Runtime::new()` picks; status 0 either way.
    let devices = Command::new(exe)
        .arg("devices")
        .output()
        .expect("run parac");
    let text = String::from_utf8_lossy(&devices.stdout);
    assert!(devices.status.success(), "{text}");
    assert!(text.contains("Runtime::new() "), "{text}");
}

/// A reader that goes away (`parac ... | head -1`) ends the output quietly, status 0.
#[test]
fn cli_closed_pipe() {
    use std::io::BufRead as _;
    let exe = env!("CARGO_BIN_EXE_parac");
    // Each writes more than a pipe holds (64 KiB), so that it meets the closed pipe.
    let mut dumps = vec!["ir"];
    dumps.extend(["tests/in/laplacian_level.parac"; 40]);
    for args in [
        &["emit", "opencl", "tests/in/laplacian_level.parac"][..],
        &["emit", "rust", "tests/in/laplacian_level.parac"],
        &dumps,
    ] {
        let mut child = Command::new(exe)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run parac");
        let mut line = String::new();
        let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        stdout.read_line(&mut line).expect("a line");
        assert!(!line.is_empty(), "{args:?}");
        drop(stdout);
        let out = child.wait_with_output().expect("parac ends");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stderr.is_empty(), "{args:?}: quietly");
    }
}

/// Writes `data` (of `t`, `shape`) as `.npy`, or as a PNG where `png` and the matrix is u8
/// `[M][N]` (what a user would hand `parac run`): the path.
fn write_input(
    dir: &std::path::Path,
    name: &str,
    t: parac_core::ir::Scalar,
    shape: &[usize],
    seed: u64,
) -> PathBuf {
    use parac_core::ir::Scalar as S;
    let n: usize = shape.iter().product();
    let mut g = data::Rng::new(seed);
    let mut vals = || g.below(200) as i64 + 1;
    macro_rules! npy {
        ($t:ty) => {{
            let v: Vec<$t> = (0..n).map(|_| vals() as $t).collect();
            let path = dir.join(format!("{name}.npy"));
            Matrix::from_vec(shape.to_vec(), v)
                .expect("shape")
                .write_npy(&path)
                .expect("npy");
            path
        }};
    }
    match t {
        S::U8 if shape.len() == 2 => {
            let v: Vec<u8> = (0..n).map(|_| vals() as u8).collect();
            let img =
                image::GrayImage::from_raw(shape[1] as u32, shape[0] as u32, v).expect("image");
            let path = dir.join(format!("{name}.png"));
            img.save(&path).expect("png");
            path
        }
        S::U8 => npy!(u8),
        S::I8 => npy!(i8),
        S::U16 => npy!(u16),
        S::I16 => npy!(i16),
        S::U32 => npy!(u32),
        S::I32 => npy!(i32),
        _ => npy!(f32),
    }
}

/// `parac run` runs every function of every `tests/in` program and of every example pipeline
/// (inputs: a PNG for u8 `[M][N]`, `.npy` for the others, every size 24; scalars 2 or `true`),
/// on the CPU path, and `parac emit opencl` prints each program's kernels.
#[test]
fn cli_runs_every_program() {
    use parac_core::ir::{MatrixKind, ParamRef};
    let exe = env!("CARGO_BIN_EXE_parac");
    let tmp = temp_dir("every");
    let root = tmp.path();
    std::fs::create_dir_all(root).expect("temp dir");
    let mut files: Vec<PathBuf> = ["tests/in", "tests/in/backends"]
        .into_iter()
        .flat_map(|d| std::fs::read_dir(d).expect(d))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "parac"))
        .filter(|p| !p.ends_with("errors_collected.parac"))
        .collect();
    files.sort();
    for ex in ["blur", "laplacian", "sharpen", "unsharp"] {
        let path = root.join(format!("{ex}.parac"));
        std::fs::write(&path, body(&format!("examples/pipelines/{ex}.rs"))).expect("write");
        files.push(path);
    }
    let mut fails = Vec::new();
    let mut runs = 0;
    for file in &files {
        let source = std::fs::read_to_string(file).expect("source");
        let p = Pipeline::compile_named(&file.display().to_string(), &source)
            .unwrap_or_else(|e| panic!("{e}"));
        let emit = Command::new(exe)
            .args(["emit", "opencl"])
            .arg(file)
            .output()
            .expect("run parac");
        let text = String::from_utf8_lossy(&emit.stdout);
        if !emit.status.success() || !text.contains("__kernel void") {
            fails.push(format!("emit opencl {}: {}", file.display(), text));
        }
        for (k, f) in p.functions().iter().enumerate() {
            let dir = root.join(format!("{}-{}", k, f.name));
            std::fs::create_dir_all(&dir).expect("dir");
            let sizes = vec![24i64; f.sizes.len()];
            let dims = parac_core::interp::matrix_dims(f, &sizes).expect("dims");
            let mut cmd = Command::new(exe);
            cmd.args(["run"]).arg(file).args(["--function", &f.name]);
            for prm in &f.params {
                match prm {
                    ParamRef::Matrix(m) if f.matrices[*m].kind == MatrixKind::Input => {
                        let mat = &f.matrices[*m];
                        let shape: Vec<usize> = dims[*m].iter().map(|d| *d as usize).collect();
                        let path = write_input(&dir, &mat.name, mat.elem, &shape, *m as u64);
                        cmd.arg("--in")
                            .arg(format!("{}={}", mat.name, path.display()));
                    }
                    ParamRef::Matrix(_) => {}
                    ParamRef::Scalar(s) => {
                        let sc = &f.scalars[*s];
                        let v = if sc.ty == parac_core::ir::Scalar::Bool {
                            "true"
                        } else {
                            "2"
                        };
                        cmd.args(["--set", &format!("{}={v}", sc.name)]);
                    }
                }
            }
            for s in &f.sizes {
                if f.matrices[s.bound_by.0].kind != MatrixKind::Input {
                    cmd.args(["--set", &format!("{}=24", s.name)]);
                }
            }
            cmd.arg("--out").arg(&dir).args(["--device", "cpu"]);
            let out = cmd.output().expect("run parac");
            runs += 1;
            if !out.status.success() {
                fails.push(format!(
                    "run {} {}: {}",
                    file.display(),
                    f.name,
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
        }
    }
    assert!(runs >= 40, "only {runs} functions");
    assert!(
        fails.is_empty(),
        "{} of {runs} failed:\n{}",
        fails.len(),
        fails.join("\n")
    );
}
