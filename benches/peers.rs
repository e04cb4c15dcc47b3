//! Halide and OpenCV side by side with parac, same machine, same run (docs/benchmarks.md, "The
//! four pipelines of APPS.md"): the four pipelines of APPS.md at their bench sizes, each contender
//! timed the same way (whole calls on images already in memory, a warm-up, then calls for at
//! least `PARAC_PEERS_SECONDS` seconds, 3 by default; the median and the minimum kept):
//!
//! - parac: the `parac!` functions of `examples/pipelines/` on the OpenCL device with the
//!   searched plan (`PlanPolicy::SearchBudget(Duration::MAX)`: the whole search happens in the
//!   warm-up) and with the model's plan (`PlanPolicy::Model`), and on the CPU path
//!   (`Runtime::cpu()`, at the vector level `PARAC_CPU_ISA` names, else the processor's widest);
//! - the hand-written OpenCL of `benches/hand/`: the kernels alone (data on the device) and
//!   whole calls (upload, kernels, download into host matrices);
//! - Halide (CPU and OpenCL schedules) and OpenCV (CPU and `UMat`), in Python, run as a child
//!   process (`benches/peers/run.py` in the virtualenv `benches/peers/setup.sh` makes), on the
//!   same input images, written here as `.npy`.
//!
//! Every contender's outputs are compared with the plain Rust references of
//! `tests/common/reference.rs` (max absolute difference; parac and the hand OpenCL must be
//! exact, unsharp within 1e-4). The floor is the host's copy bandwidth (a 256 MiB `memcpy`,
//! best of 5, bytes read plus written): each pipeline reads its inputs once and writes its
//! outputs once. Also recorded: per-kernel times of parac's searched plan (the search's
//! profiling records), for where parac loses its time.
//!
//! Writes `<criterion dir>/parac-extra/peers/peers.json`; `python3 benches/peers_report.py
//! --update docs/benchmarks.md` turns it into the tables. `PARAC_BENCH_SMALL=1` divides every
//! side by 4; `PARAC_PEERS_CONTENDERS=parac_cpu,halide_cpu` runs only the contenders named (by
//! prefix; `hand` for the hand OpenCL). Run without `--bench` (as `cargo test --benches` does) it
//! does nothing.

#[path = "../tests/common/data.rs"]
mod data;
mod hand;
mod host;
#[path = "../tests/common/reference.rs"]
mod reference;

#[path = "../examples/pipelines/blur.rs"]
mod blur_p;
#[path = "../examples/pipelines/laplacian.rs"]
mod laplacian_p;
#[path = "../examples/pipelines/sharpen.rs"]
mod sharpen_p;
#[path = "../examples/pipelines/unsharp.rs"]
mod unsharp_p;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use host::{Stats, measure};

use hand::Cl;
use hand::call::{BlurHand, HandApp, LaplacianHand, SharpenHand, UnsharpHand};
use parac::{Matrix, PlanPolicy, Runtime};
use serde_json::{Value, json};

fn stats_json(s: &Stats) -> Value {
    json!({"median_ms": s.median_ms, "min_ms": s.min_ms, "samples": s.samples})
}

/// The largest absolute difference between two matrices of the same shape, as f64.
fn max_diff<T: parac::Element + Into<f64>>(a: &Matrix<T>, b: &Matrix<T>) -> f64 {
    if a.shape() != b.shape() {
        return f64::INFINITY;
    }
    a.as_slice()
        .iter()
        .zip(b.as_slice())
        .map(|(x, y)| ((*x).into() - (*y).into()).abs())
        .fold(0.0, f64::max)
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

fn extra_dir() -> PathBuf {
    let base = std::env::var_os("CRITERION_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("CARGO_TARGET_DIR").map(|d| Path::new(&d).join("criterion")))
        .unwrap_or_else(|| PathBuf::from("target/criterion"));
    base.join("parac-extra").join("peers")
}

/// The parac runtimes: (contender, runtime).
fn runtimes() -> Vec<(&'static str, Runtime)> {
    let mut out = Vec::new();
    if !wanted("parac_opencl") && !wanted("parac_cpu") {
        return out;
    }
    for (name, p) in [
        // Each region's search run to its end in the warm-up call.
        (
            "parac_opencl_search",
            PlanPolicy::SearchBudget(Duration::MAX),
        ),
        ("parac_opencl_model", PlanPolicy::Model),
    ] {
        if !wanted(name) {
            continue;
        }
        match Runtime::from_spec("opencl") {
            Ok(rt) => out.push((name, rt.with_policy(p).with_warm_up(parac::WarmUp::Wait))),
            Err(e) => eprintln!("peers: no OpenCL device for {name}: {e}"),
        }
    }
    if wanted("parac_cpu") {
        let isa = parac::Config::from_env()
            .map(|c| c.cpu_isa)
            .expect("PARAC_* variables");
        out.push(("parac_cpu", Runtime::cpu().with_cpu_isa(isa)));
    }
    out
}

/// Whether contender `name` runs: `PARAC_PEERS_CONTENDERS` is a comma-separated list of
/// prefixes (`parac_cpu,halide_cpu`; `hand` for the hand OpenCL); unset runs them all.
fn wanted(name: &str) -> bool {
    match std::env::var("PARAC_PEERS_CONTENDERS") {
        Ok(list) => list
            .split(',')
            .map(str::trim)
            .any(|p| !p.is_empty() && (name.starts_with(p) || p.starts_with(name))),
        Err(_) => true,
    }
}

/// Records one contender's result.
fn record(results: &mut Vec<Value>, pipeline: &str, contender: &str, s: &Stats, diff: f64) {
    println!(
        "{pipeline:10} {contender:22} {:9.2} ms (min {:8.2}, {} samples), max diff {diff}",
        s.median_ms, s.min_ms, s.samples
    );
    let mut v = stats_json(s);
    v["pipeline"] = json!(pipeline);
    v["contender"] = json!(contender);
    v["status"] = json!("ok");
    v["max_abs_diff"] = json!(diff);
    results.push(v);
}

/// Times the hand pipeline `h`: kernels alone, then whole calls; `out` reads its outputs'
/// difference from the reference after a call.
fn hand_rows<A: HandApp>(
    results: &mut Vec<Value>,
    pipeline: &str,
    cl: &Cl,
    h: &mut A,
    input: &A::In,
    diff: impl Fn(&A) -> f64,
    (warm, secs): (f64, f64),
) {
    h.call(cl, input);
    let d = diff(h);
    let s = measure(
        || {
            h.hand().run(cl).expect("run");
            cl.finish().expect("finish");
        },
        warm,
        secs,
    );
    record(results, pipeline, "hand_opencl", &s, d);
    let s = measure(|| h.call(cl, input), warm, secs);
    record(results, pipeline, "hand_opencl_call", &s, d);
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let div = if std::env::var("PARAC_BENCH_SMALL").is_ok_and(|v| v == "1") {
        4
    } else {
        1
    };
    let secs: f64 = std::env::var("PARAC_PEERS_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let warm = 1.0;
    let uhd = (2160 / div, 3840 / div);
    let sharpen_size = (uhd.0 / 4 * 4, uhd.1 / 4 * 4);
    let blur_size = (4802 / div, 6408 / div);
    let dir = extra_dir();
    let inputs_dir = dir.join("in");
    std::fs::create_dir_all(&inputs_dir).expect("peers directory");

    // Inputs (as apps.rs makes them) and the references' outputs.
    let lap_in = data::structured_u8(uhd.0, uhd.1, 1);
    let sharp_in = data::structured_u8(sharpen_size.0, sharpen_size.1, 2);
    let blur_in = data::random_u12(blur_size.0, blur_size.1, 3);
    let uns_in = data::random_rgb(uhd.0, uhd.1, 4);
    let t = Instant::now();
    let (lap_ref, down_ref) = reference::laplacian(&lap_in);
    let sharp_ref = reference::sharpen(&sharp_in);
    let blur_ref = reference::blur(&blur_in);
    let uns_ref = reference::unsharp(&uns_in);
    println!("peers: references in {:.1} s", t.elapsed().as_secs_f64());
    let write =
        |name: &str, r: Result<(), parac::Error>| r.unwrap_or_else(|e| panic!("{name}: {e}"));
    write("in", lap_in.write_npy(inputs_dir.join("laplacian.src.npy")));
    write("in", sharp_in.write_npy(inputs_dir.join("sharpen.src.npy")));
    write("in", blur_in.write_npy(inputs_dir.join("blur.src.npy")));
    write("in", uns_in.write_npy(inputs_dir.join("unsharp.img.npy")));
    write(
        "ref",
        lap_ref.write_npy(inputs_dir.join("laplacian.lap.npy")),
    );
    write(
        "ref",
        down_ref.write_npy(inputs_dir.join("laplacian.down.npy")),
    );
    write(
        "ref",
        sharp_ref.write_npy(inputs_dir.join("sharpen.out.npy")),
    );
    write("ref", blur_ref.write_npy(inputs_dir.join("blur.out.npy")));
    write("ref", uns_ref.write_npy(inputs_dir.join("unsharp.out.npy")));

    let mut results: Vec<Value> = Vec::new();
    let mut device = String::from("none");
    let cfg = (warm, secs);

    // parac, each runtime.
    for (name, rt) in runtimes() {
        if rt.device().is_some() {
            device = rt.describe();
        }
        let (m, n) = uhd;
        let mut lap = Matrix::<i16>::zeros([m, n]);
        let mut down = Matrix::<u8>::zeros([m.div_ceil(2), n.div_ceil(2)]);
        let s = measure(
            || laplacian_p::laplacian(&rt, &lap_in, &mut lap, &mut down).expect("laplacian"),
            warm,
            secs,
        );
        let d = max_diff(&lap, &lap_ref).max(max_diff(&down, &down_ref));
        record(&mut results, "laplacian", name, &s, d);

        let mut out = Matrix::<u8>::zeros(sharp_in.shape());
        let s = measure(
            || sharpen_p::sharpen(&rt, &sharp_in, &mut out).expect("sharpen"),
            warm,
            secs,
        );
        record(
            &mut results,
            "sharpen",
            name,
            &s,
            max_diff(&out, &sharp_ref),
        );

        let mut out = Matrix::<u16>::zeros([blur_size.0 - 2, blur_size.1 - 2]);
        let s = measure(
            || blur_p::blur(&rt, &blur_in, &mut out).expect("blur"),
            warm,
            secs,
        );
        record(&mut results, "blur", name, &s, max_diff(&out, &blur_ref));

        let mut out = Matrix::<f32>::zeros(uns_in.shape());
        let s = measure(
            || unsharp_p::unsharp(&rt, &uns_in, &mut out).expect("unsharp"),
            warm,
            secs,
        );
        record(&mut results, "unsharp", name, &s, max_diff(&out, &uns_ref));
    }
    // Per-kernel times of the searched plans (profiling events, ms), for where the time goes.
    let kernels: Vec<Value> = parac::opencl::plan_records()
        .iter()
        .map(|r| {
            let ms = r
                .times
                .iter()
                .filter(|(l, w, _)| *l == r.chosen.0 && *w == r.chosen.1)
                .map(|(_, _, t)| *t)
                .fold(f64::INFINITY, f64::min);
            let baseline = r
                .times
                .iter()
                .filter(|(l, _, _)| l == "baseline")
                .map(|(_, _, t)| *t)
                .fold(f64::INFINITY, f64::min);
            json!({"program": r.program, "region": r.region, "class": r.class,
                   "plan": r.chosen.0, "ms": ms, "baseline_ms": baseline})
        })
        .collect();

    // The hand-written OpenCL.
    match Cl::new() {
        Ok(_) if !wanted("hand") => {}
        Ok(cl) => {
            let (m, n) = uhd;
            let (p, _) = cl.build(hand::sources::LAPLACIAN).expect("build");
            let mut h = LaplacianHand(
                hand::Laplacian::new(&cl, &p, m, n).expect("laplacian"),
                Matrix::zeros([m, n]),
                Matrix::zeros([m.div_ceil(2), n.div_ceil(2)]),
            );
            let diff = |h: &LaplacianHand| max_diff(&h.1, &lap_ref).max(max_diff(&h.2, &down_ref));
            hand_rows(&mut results, "laplacian", &cl, &mut h, &lap_in, diff, cfg);

            let (m, n) = sharpen_size;
            let (p, _) = cl.build(hand::sources::SHARPEN).expect("build");
            let mut h = SharpenHand(
                hand::Sharpen::new(&cl, &p, m, n).expect("sharpen"),
                Matrix::zeros([m, n]),
            );
            let diff = |h: &SharpenHand| max_diff(&h.1, &sharp_ref);
            hand_rows(&mut results, "sharpen", &cl, &mut h, &sharp_in, diff, cfg);

            let (m, n) = blur_size;
            let (p, _) = cl.build(hand::sources::BLUR).expect("build");
            let mut h = BlurHand(
                hand::Blur::new(&cl, &p, m, n).expect("blur"),
                Matrix::zeros([m - 2, n - 2]),
            );
            let diff = |h: &BlurHand| max_diff(&h.1, &blur_ref);
            hand_rows(&mut results, "blur", &cl, &mut h, &blur_in, diff, cfg);

            let (m, n) = uhd;
            let (p, _) = cl.build(hand::sources::UNSHARP).expect("build");
            let mut h = UnsharpHand(
                hand::Unsharp::new(&cl, &p, m, n).expect("unsharp"),
                Matrix::zeros([3, m, n]),
            );
            let diff = |h: &UnsharpHand| max_diff(&h.1, &uns_ref);
            hand_rows(&mut results, "unsharp", &cl, &mut h, &uns_in, diff, cfg);
        }
        Err(e) => eprintln!("peers: no OpenCL device for the hand pipelines: {e}"),
    }

    // Halide and OpenCV, in a child process.
    let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers");
    let python = peers.join(".venv/bin/python");
    let out_dir = dir.join("python");
    let mut py: Value = json!({});
    let python_contenders: Vec<&str> = ["halide_cpu", "halide_opencl", "opencv_cpu", "opencv_umat"]
        .into_iter()
        .filter(|c| wanted(c))
        .collect();
    if python_contenders.is_empty() {
        println!("peers: no Python contender asked for");
    } else if python.exists() {
        let st = Command::new(&python)
            .arg(peers.join("run.py"))
            .arg("--inputs")
            .arg(&inputs_dir)
            .arg("--out")
            .arg(&out_dir)
            .arg("--seconds")
            .arg(secs.to_string())
            .arg("--warmup")
            .arg(warm.to_string())
            .arg("--contenders")
            .arg(python_contenders.join(","))
            .status();
        match st {
            Ok(s) if s.success() => match std::fs::read_to_string(out_dir.join("results.json")) {
                Ok(text) => py = serde_json::from_str(&text).unwrap_or(json!({})),
                Err(e) => eprintln!("peers: no results.json: {e}"),
            },
            Ok(s) => eprintln!("peers: run.py failed ({s})"),
            Err(e) => eprintln!("peers: cannot run {}: {e}", python.display()),
        }
    } else {
        eprintln!(
            "peers: no Halide/OpenCV virtualenv: run `bash benches/peers/setup.sh` first ({} missing)",
            python.display()
        );
    }
    if let Some(rs) = py.get("results").and_then(Value::as_array) {
        results.extend(rs.iter().cloned());
    }

    let (m, n) = uhd;
    let (ms, ns) = sharpen_size;
    let (mb, nb) = blur_size;
    let floor_bytes = json!({
        "laplacian": m * n + 2 * m * n + m.div_ceil(2) * n.div_ceil(2),
        "sharpen": 2 * ms * ns,
        "blur": 2 * mb * nb + 2 * (mb - 2) * (nb - 2),
        "unsharp": 2 * 3 * 4 * m * n,
    });
    let pixels = json!({
        "laplacian": m * n, "sharpen": ms * ns, "blur": mb * nb, "unsharp": m * n,
    });
    let all = json!({
        "machine": format!("{} ({} cores)", cpu_model(), std::thread::available_parallelism().map_or(0, |n| n.get())),
        "device": device,
        "seconds": secs,
        "copy_bandwidth": host::copy_bandwidth(),
        "floor_bytes": floor_bytes,
        "pixels": pixels,
        "results": results,
        "kernels": kernels,
        "python": {"versions": py.get("versions"), "machine": py.get("machine"), "loc": py.get("loc")},
    });
    let path = dir.join("peers.json");
    std::fs::write(&path, serde_json::to_string_pretty(&all).expect("json")).expect("write");
    println!("peers: wrote {}", path.display());
}
