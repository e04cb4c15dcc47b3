//! The optimization model's evidence (like the paper's Fig. 13-14), in one run on the
//! OpenCL device:
//! - `plans/<pipeline>/<plan>`: each of the four pipelines with the baseline plan everywhere,
//!   with each transform forced alone (and the first local-memory candidate) (`PlanPolicy::Force(label)`: the regions that have the
//!   candidate run it, the others the baseline, with the driver's work-group size), with the model's first-ranked plan,
//!   and with the searched plan;
//! - per stage: the plan search's own profiling-event times of every candidate of every region
//!   (printed, and written to `target/criterion/plan-records.txt`, or
//!   `plan-records.<parts>.txt` for a run of some parts);
//! - `border/<stencil>/<mode>`: the cost of border rules, as Halide's performance test measures
//!   it: a 3-tap and a 5x5 stencil with each border mode against the same stencil reading a
//!   pre-padded input.
//!
//! The first call of each configuration (program build, plan search) runs before its
//! measurement and is reported on its own. `PARAC_BENCH_SMALL=1` shrinks the images by 4;
//! `PARAC_BENCH_PARTS=border,blur,...` runs only the named parts (`border` and the pipelines).
//! `benches/plans_report.py` turns the results into the tables of `docs/benchmarks.md`.

#[path = "../tests/common/data.rs"]
mod data;

#[path = "../examples/pipelines/blur.rs"]
mod blur_p;
#[path = "../examples/pipelines/laplacian.rs"]
mod laplacian_p;
#[path = "../examples/pipelines/sharpen.rs"]
mod sharpen_p;
#[path = "../examples/pipelines/unsharp.rs"]
mod unsharp_p;

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use parac::{Matrix, PlanPolicy, Runtime};

/// The labels of every candidate of every region of the pipeline defined in `file`.
fn labels(file: &str) -> Vec<String> {
    let rust = std::fs::read_to_string(file).expect("pipeline source");
    let start = rust.find("parac! {").expect("a parac! block") + "parac! {".len();
    let end = rust.rfind('}').expect("closing brace");
    let c = parac_core::compile_str(&rust[start..end]);
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
        .filter(|l| l != "baseline")
        .collect()
}

fn div() -> usize {
    if std::env::var("PARAC_BENCH_SMALL").is_ok_and(|v| v == "1") {
        4
    } else {
        1
    }
}

// Border cost: the same stencils with a rule and on pre-padded inputs.
parac::parac! {
    fn tap3_constant(src: &i32[M][N], out: &mut i32[M][N]) {
        parac_border_rule b = constant(src[*][1], 0);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
            out[x][y] = src[x][y-1] + 2 * src[x][y] + src[x][y+1];
        }
    }
    fn tap3_clamp(src: &i32[M][N], out: &mut i32[M][N]) {
        parac_border_rule b = clamp(src[*][1]);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
            out[x][y] = src[x][y-1] + 2 * src[x][y] + src[x][y+1];
        }
    }
    fn tap3_reflect(src: &i32[M][N], out: &mut i32[M][N]) {
        parac_border_rule b = reflect(src[*][1]);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
            out[x][y] = src[x][y-1] + 2 * src[x][y] + src[x][y+1];
        }
    }
    fn tap3_reflect101(src: &i32[M][N], out: &mut i32[M][N]) {
        parac_border_rule b = reflect101(src[*][1]);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
            out[x][y] = src[x][y-1] + 2 * src[x][y] + src[x][y+1];
        }
    }
    fn tap3_wrap(src: &i32[M][N], out: &mut i32[M][N]) {
        parac_border_rule b = wrap(src[*][1]);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
            out[x][y] = src[x][y-1] + 2 * src[x][y] + src[x][y+1];
        }
    }
    fn tap3_padded(src: &i32[M][N], out: &mut i32[M][N-2]) {
        parac_iterator it(x in 0:M:1; y in 0:N-2:1) {
            out[x][y] = src[x][y] + 2 * src[x][y+1] + src[x][y+2];
        }
    }
    fn box5_constant(src: &i32[M][N], out: &mut i32[M][N]) {
        parac_border_rule b = constant(src[2][2], 0);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
            out[x][y] = parac_matrix_sum(src[x-2:5:1][y-2:5:1]);
        }
    }
    fn box5_clamp(src: &i32[M][N], out: &mut i32[M][N]) {
        parac_border_rule b = clamp(src[2][2]);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
            out[x][y] = parac_matrix_sum(src[x-2:5:1][y-2:5:1]);
        }
    }
    fn box5_reflect(src: &i32[M][N], out: &mut i32[M][N]) {
        parac_border_rule b = reflect(src[2][2]);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
            out[x][y] = parac_matrix_sum(src[x-2:5:1][y-2:5:1]);
        }
    }
    fn box5_reflect101(src: &i32[M][N], out: &mut i32[M][N]) {
        parac_border_rule b = reflect101(src[2][2]);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
            out[x][y] = parac_matrix_sum(src[x-2:5:1][y-2:5:1]);
        }
    }
    fn box5_wrap(src: &i32[M][N], out: &mut i32[M][N]) {
        parac_border_rule b = wrap(src[2][2]);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
            out[x][y] = parac_matrix_sum(src[x-2:5:1][y-2:5:1]);
        }
    }
    fn box5_padded(src: &i32[M][N], out: &mut i32[M-4][N-4]) {
        parac_iterator it(x in 0:M-4:1; y in 0:N-4:1) {
            out[x][y] = parac_matrix_sum(src[x:5:1][y:5:1]);
        }
    }
}

type Border = fn(&Runtime, &Matrix<i32>, &mut Matrix<i32>) -> Result<(), parac::Error>;

/// Whether `PARAC_BENCH_PARTS` (unset: all) names `part`.
fn part(name: &str) -> bool {
    std::env::var("PARAC_BENCH_PARTS").map_or(true, |v| v.split(',').any(|p| p.trim() == name))
}

fn border_bench(c: &mut Criterion, rt: &Runtime, firsts: &mut String) {
    if !part("border") {
        return;
    }
    let (m, n) = (2160 / div(), 3840 / div());
    for (stencil, pad, modes) in [
        (
            "tap3",
            (0usize, 2usize),
            [
                ("constant", tap3_constant as Border),
                ("clamp", tap3_clamp),
                ("reflect", tap3_reflect),
                ("reflect101", tap3_reflect101),
                ("wrap", tap3_wrap),
                ("padded", tap3_padded),
            ],
        ),
        (
            "box5",
            (4, 4),
            [
                ("constant", box5_constant as Border),
                ("clamp", box5_clamp),
                ("reflect", box5_reflect),
                ("reflect101", box5_reflect101),
                ("wrap", box5_wrap),
                ("padded", box5_padded),
            ],
        ),
    ] {
        let mut g = c.benchmark_group(format!("border/{stencil}"));
        g.throughput(Throughput::Elements((m * n) as u64));
        for (mode, f) in modes {
            let padded = mode == "padded";
            let (im, in_) = if padded {
                (m + pad.0, n + pad.1)
            } else {
                (m, n)
            };
            let src =
                Matrix::<i32>::from_fn([im, in_], |i| ((i[0] * 31 + i[1] * 17) % 4096) as i32);
            let mut out = Matrix::<i32>::zeros([m, n]);
            let t = Instant::now();
            f(rt, &src, &mut out).expect("border stencil");
            let _ = writeln!(
                firsts,
                "border/{stencil}/{mode}\tfirst call {:.1} ms",
                t.elapsed().as_secs_f64() * 1e3
            );
            g.bench_function(mode, |b| {
                b.iter(|| f(rt, &src, &mut out).expect("border stencil"))
            });
        }
        g.finish();
    }
}

/// One pipeline under every plan policy.
fn pipeline_bench(
    c: &mut Criterion,
    rt: &mut Option<Runtime>,
    name: &str,
    file: &str,
    pixels: usize,
    mut run: impl FnMut(&Runtime),
    firsts: &mut String,
) {
    if !part(name) {
        return;
    }
    let mut policies = vec![("baseline".to_string(), PlanPolicy::Baseline)];
    // Each transform alone (the combinations are timed per stage by the search), plus the
    // model's first-ranked combination.
    let all = labels(file);
    for l in &all {
        let alone = !l.contains('+')
            || l.starts_with("h") && l.ends_with("+cse")
            || l.starts_with("h") && l.ends_with("+vmem")
            || l.contains("lds") && l == all.iter().find(|x| x.contains("lds")).unwrap_or(l);
        if alone {
            policies.push((l.clone(), PlanPolicy::Force(l.clone())));
        }
    }
    policies.push(("model".to_string(), PlanPolicy::Model));
    // The search run to its end (the default budget spreads it over calls).
    policies.push((
        "search".to_string(),
        PlanPolicy::SearchBudget(Duration::MAX),
    ));
    let mut g = c.benchmark_group(format!("plans/{name}"));
    g.throughput(Throughput::Elements(pixels as u64));
    for (label, p) in policies {
        let r = rt.take().expect("runtime").with_policy(p);
        let t = Instant::now();
        run(&r);
        let _ = writeln!(
            firsts,
            "plans/{name}/{label}\tfirst call {:.1} ms",
            t.elapsed().as_secs_f64() * 1e3
        );
        g.bench_function(label.as_str(), |b| b.iter(|| run(&r)));
        *rt = Some(r);
    }
    g.finish();
}

fn main() {
    let rt = match Runtime::from_spec("opencl") {
        Ok(rt) => rt.with_warm_up(parac::WarmUp::Wait),
        Err(e) => {
            eprintln!("plans bench skipped: no OpenCL device ({e})");
            return;
        }
    };
    eprintln!("plans bench on {}", rt.describe());
    // No disk caches: every search runs here (and is recorded), programs are built afresh.
    if let Some(d) = rt.device() {
        d.set_program_cache_dir(None);
    }
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .configure_from_args();
    let mut firsts = String::new();
    border_bench(&mut c, &rt, &mut firsts);
    let mut rt = Some(rt);
    let d = div();

    let (m, n) = (4802 / d, 6408 / d);
    let src = data::random_u12(m, n, 3);
    let mut out = Matrix::<u16>::zeros([m - 2, n - 2]);
    pipeline_bench(
        &mut c,
        &mut rt,
        "blur",
        "examples/pipelines/blur.rs",
        m * n,
        |r| blur_p::blur(r, &src, &mut out).expect("blur"),
        &mut firsts,
    );

    let (m, n) = (2160 / d, 3840 / d);
    let src = data::random_u8(m, n, 1);
    let mut lap = Matrix::<i16>::zeros([m, n]);
    let mut down = Matrix::<u8>::zeros([m.div_ceil(2), n.div_ceil(2)]);
    pipeline_bench(
        &mut c,
        &mut rt,
        "laplacian",
        "examples/pipelines/laplacian.rs",
        m * n,
        |r| laplacian_p::laplacian(r, &src, &mut lap, &mut down).expect("laplacian"),
        &mut firsts,
    );

    let mut out = Matrix::<u8>::zeros([m, n]);
    let src = data::structured_u8(m, n, 2);
    pipeline_bench(
        &mut c,
        &mut rt,
        "sharpen",
        "examples/pipelines/sharpen.rs",
        m * n,
        |r| sharpen_p::sharpen(r, &src, &mut out).expect("sharpen"),
        &mut firsts,
    );

    let img = data::random_rgb(m, n, 4);
    let mut out = Matrix::<f32>::zeros([3, m, n]);
    pipeline_bench(
        &mut c,
        &mut rt,
        "unsharp",
        "examples/pipelines/unsharp.rs",
        m * n,
        |r| unsharp_p::unsharp(r, &img, &mut out).expect("unsharp"),
        &mut firsts,
    );

    c.final_summary();
    // Per stage: what the searches measured (profiling events, best of three per candidate).
    let mut text = String::new();
    for rec in parac::opencl::plan_records() {
        let _ = writeln!(text, "{}", parac::opencl::describe_plan(&rec));
    }
    text.push_str(&firsts);
    print!("{text}");
    // A run of some parts only writes its own file, which `plans_report.py` reads over the
    // full run's: a part can be measured again without losing the others' records.
    let file = match std::env::var("PARAC_BENCH_PARTS") {
        Ok(parts) if !parts.trim().is_empty() => {
            format!("plan-records.{}.txt", parts.replace([',', ' '], "_"))
        }
        _ => "plan-records.txt".to_string(),
    };
    let dir = std::path::Path::new("target/criterion");
    let _ = std::fs::create_dir_all(dir);
    let _ = std::fs::write(dir.join(file), text);
}
