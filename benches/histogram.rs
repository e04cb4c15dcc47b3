//! Histograms and scans on a 3840x2160 u8 image, as `benches/peers/opencv_histogram.py` times
//! OpenCV's own functions: a 256-bin histogram (`cv2.calcHist`), the integral image with its
//! squared sum (`cv2.integral`, i32; `cv2.integral2`, i32 and f32; in two passes, and on the
//! CPU path in one),
//! `cv2.equalizeHist` and Otsu's threshold (`cv2.threshold(.., THRESH_OTSU)`): the programs of
//! `tests/histogram/programs.rs`, whose results the tests hold to OpenCV's. On the CPU path,
//! and on the OpenCL device where `PARAC_DEVICE` names one (PoCL: `PARAC_DEVICE=opencl`) or
//! `Runtime::new()` picks a GPU. docs/benchmarks.md, "Histograms and scans", has the table.
//!
//! `cargo bench --bench histogram`.

use criterion::{BenchmarkId, Criterion, SamplingMode};
use parac::{Matrix, Runtime};
use std::time::Duration;

#[allow(dead_code)]
#[path = "../tests/histogram/programs.rs"]
mod programs;

use programs::*;

fn main() {
    let mut c = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let (h, w) = (2160, 3840);
    // A photograph's statistics: smooth ramps with texture, every level used.
    let src = Matrix::from_fn([h, w], |i| {
        ((i[0] * 7 + i[1] * 13 + (i[0] * i[1]) % 17) % 256) as u8
    });
    let mut runtimes = vec![("cpu", Runtime::cpu().with_cpu_isa(cpu_isa_from_env()))];
    if let Ok(rt) = Runtime::new()
        && rt.device().is_some()
    {
        eprintln!("OpenCL: {}", rt.describe());
        runtimes.push(("opencl", rt));
    }
    let mut hist = Matrix::<i32>::zeros([256]);
    let mut sum = Matrix::<i32>::zeros([h + 1, w + 1]);
    let mut sq = Matrix::<f32>::zeros([h + 1, w + 1]);
    let mut eq = Matrix::<u8>::zeros([h, w]);
    let mut g = c.benchmark_group("histogram_3840x2160");
    g.sampling_mode(SamplingMode::Flat).sample_size(10);
    for (path, rt) in &runtimes {
        let id = |what: &str| BenchmarkId::new(what, path);
        g.bench_function(id("calc_hist"), |b| {
            b.iter(|| histogram::histogram(rt, &src, &mut hist).expect("histogram"))
        });
        g.bench_function(id("integral"), |b| {
            b.iter(|| scan_integral_sum::scan_integral_sum(rt, &src, &mut sum).expect("integral"))
        });
        if rt.device().is_none() {
            g.bench_function(id("integral_one_pass"), |b| {
                b.iter(|| {
                    scan_integral_sum_2d::scan_integral_sum_2d(rt, &src, &mut sum)
                        .expect("integral")
                })
            });
        }
        g.bench_function(id("integral2"), |b| {
            b.iter(|| scan_integral::scan_integral(rt, &src, &mut sum, &mut sq).expect("integral"))
        });
        if rt.device().is_none() {
            g.bench_function(id("integral2_one_pass"), |b| {
                b.iter(|| {
                    scan_integral_2d::scan_integral_2d(rt, &src, &mut sum, &mut sq)
                        .expect("integral")
                })
            });
        }
        g.bench_function(id("equalize_hist"), |b| {
            b.iter(|| histogram_equalize::histogram_equalize(rt, &src, &mut eq).expect("equalize"))
        });
        g.bench_function(id("otsu"), |b| {
            b.iter(|| otsu::otsu(rt, &src).expect("otsu"))
        });
    }
    g.finish();
    c.final_summary();
}

/// The CPU path's vector level `PARAC_CPU_ISA` names (`auto` where unset), so that one bench
/// compares levels.
fn cpu_isa_from_env() -> parac::CpuIsa {
    parac::Config::from_env()
        .map(|c| c.cpu_isa)
        .expect("PARAC_* variables")
}
