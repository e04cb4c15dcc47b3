//! OpenCV's everyday functions written as a user writes them (`tests/opencv_ops/programs.rs`,
//! whose results the tests hold to OpenCV's), at 3840x2160 and 640x480 u8, as
//! `benches/peers/opencv_ops.py` times OpenCV's own functions: on the CPU path (at the level of
//! vector instructions `PARAC_CPU_ISA` names, else the processor's widest), and on the OpenCL
//! device where `PARAC_DEVICE` names one (PoCL: `PARAC_DEVICE=opencl`) or `Runtime::new()`
//! picks a GPU. docs/benchmarks.md, "OpenCV's functions", has the table.
//!
//! `cargo bench --bench opencv_ops` (`-- 3840x2160`, `-- flip` to choose).

use criterion::{BenchmarkId, Criterion, SamplingMode};
use parac::{Matrix, Runtime};
use std::time::Duration;

#[allow(dead_code)]
#[path = "../tests/opencv_ops/programs.rs"]
mod programs;

use programs::*;

fn main() {
    let mut c = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    let mut runtimes = vec![("cpu", Runtime::cpu().with_cpu_isa(cpu_isa_from_env()))];
    if let Ok(rt) = Runtime::new()
        && rt.device().is_some()
    {
        eprintln!("OpenCL: {}", rt.describe());
        runtimes.push(("opencl", rt));
    }
    for (h, w) in [(2160, 3840), (480, 640)] {
        // A photograph's statistics: smooth ramps with texture.
        let src = Matrix::from_fn([h, w], |i| {
            ((i[0] * 7 + i[1] * 13 + (i[0] * i[1]) % 17) % 256) as u8
        });
        let rgb = Matrix::from_fn([h, 3 * w], |i| ((i[0] * 5 + i[1] * 3) % 256) as u8);
        let src16 = Matrix::from_fn([h, w], |i| (i[0] * 31 + i[1] * 17) as i16);
        let mut same = Matrix::<u8>::zeros([h, w]);
        let mut turned = Matrix::<u8>::zeros([w, h]);
        let mut rgb_out = Matrix::<u8>::zeros([h, 3 * w]);
        let mut turned16 = Matrix::<i16>::zeros([w, h]);
        let other = Matrix::from_fn([h, w], |i| ((i[0] * 3 + i[1] * 5) % 256) as u8);
        let mut grad = Matrix::<i16>::zeros([h, w]);
        let mut gray_out = Matrix::<u8>::zeros([h, w]);
        let mut half = Matrix::<u8>::zeros([h / 2, w / 2]);
        let mut framed = Matrix::<u8>::zeros([h + 8, w + 8]);
        let mut doubled = Matrix::<u8>::zeros([2 * h, 2 * w]);
        let mut g = c.benchmark_group(format!("opencv_ops_{w}x{h}"));
        g.sampling_mode(SamplingMode::Flat).sample_size(10);
        for (path, rt) in &runtimes {
            let id = |what: &str| BenchmarkId::new(what, path);
            g.bench_function(id("flip_lr"), |b| {
                b.iter(|| flip_lr::flip_lr(rt, &src, &mut same).expect("flip"))
            });
            g.bench_function(id("flip_ud"), |b| {
                b.iter(|| flip_ud::flip_ud(rt, &src, &mut same).expect("flip"))
            });
            g.bench_function(id("flip_both"), |b| {
                b.iter(|| flip_both::flip_both(rt, &src, &mut same).expect("flip"))
            });
            g.bench_function(id("transpose"), |b| {
                b.iter(|| transpose::transpose(rt, &src, &mut turned).expect("transpose"))
            });
            g.bench_function(id("rotate_cw"), |b| {
                b.iter(|| rotate_cw::rotate_cw(rt, &src, &mut turned).expect("rotate"))
            });
            g.bench_function(id("rotate_ccw"), |b| {
                b.iter(|| rotate_ccw::rotate_ccw(rt, &src, &mut turned).expect("rotate"))
            });
            g.bench_function(id("flip_lr_rgb"), |b| {
                b.iter(|| flip_lr_rgb::flip_lr_rgb(rt, &rgb, &mut rgb_out).expect("flip"))
            });
            g.bench_function(id("transpose_i16"), |b| {
                b.iter(|| {
                    transpose_i16::transpose_i16(rt, &src16, &mut turned16).expect("transpose")
                })
            });
            g.bench_function(id("gray"), |b| {
                b.iter(|| gray::gray(rt, &rgb, &mut gray_out).expect("gray"))
            });
            g.bench_function(id("threshold"), |b| {
                b.iter(|| threshold::threshold(rt, &src, &mut same).expect("threshold"))
            });
            g.bench_function(id("absdiff"), |b| {
                b.iter(|| absdiff::absdiff(rt, &src, &other, &mut same).expect("absdiff"))
            });
            g.bench_function(id("sobel_dx"), |b| {
                b.iter(|| sobel_dx::sobel_dx(rt, &src, &mut grad).expect("sobel"))
            });
            g.bench_function(id("scharr_dx"), |b| {
                b.iter(|| scharr_dx::scharr_dx(rt, &src, &mut grad).expect("scharr"))
            });
            g.bench_function(id("laplacian"), |b| {
                b.iter(|| laplacian::laplacian(rt, &src, &mut grad).expect("laplacian"))
            });
            g.bench_function(id("gauss3"), |b| {
                b.iter(|| gauss3::gauss3(rt, &src, &mut same).expect("gauss"))
            });
            g.bench_function(id("sharpen"), |b| {
                b.iter(|| sharpen::sharpen(rt, &src, &mut same).expect("filter2D"))
            });
            g.bench_function(id("dilate5"), |b| {
                b.iter(|| dilate5::dilate5(rt, &src, &mut same).expect("dilate"))
            });
            g.bench_function(id("median3"), |b| {
                b.iter(|| median3::median3(rt, &src, &mut same).expect("median"))
            });
            g.bench_function(id("pyr_down"), |b| {
                b.iter(|| pyr_down::pyr_down(rt, &src, &mut half).expect("pyrDown"))
            });
            g.bench_function(id("resize_nearest"), |b| {
                b.iter(|| resize_nearest::resize_nearest(rt, &src, &mut half).expect("resize"))
            });
            g.bench_function(id("resize_area"), |b| {
                b.iter(|| resize_area::resize_area(rt, &src, &mut half).expect("resize"))
            });
            g.bench_function(id("make_border"), |b| {
                b.iter(|| make_border::make_border(rt, &src, &mut framed).expect("border"))
            });
            g.bench_function(id("ycrcb"), |b| {
                b.iter(|| ycrcb::ycrcb(rt, &rgb, &mut rgb_out).expect("ycrcb"))
            });
            g.bench_function(id("box3"), |b| {
                b.iter(|| box3::box3(rt, &src, &mut same).expect("blur"))
            });
            g.bench_function(id("erode3"), |b| {
                b.iter(|| erode3::erode3(rt, &src, &mut same).expect("erode"))
            });
            g.bench_function(id("erode15"), |b| {
                b.iter(|| erode15::erode15(rt, &src, &mut same).expect("erode"))
            });
            g.bench_function(id("resize_up"), |b| {
                b.iter(|| resize_up::resize_up(rt, &src, &mut doubled).expect("resize"))
            });
        }
        g.finish();
    }
    c.final_summary();
}

/// The level `PARAC_CPU_ISA` names, else the processor's widest.
fn cpu_isa_from_env() -> parac::CpuIsa {
    parac::Config::from_env()
        .map(|c| c.cpu_isa)
        .expect("PARAC_* variables")
}
