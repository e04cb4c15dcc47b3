//! Windows of growing size on the CPU path: a box mean with reflect-101 borders
//! (`cv2.blur`'s default) and an erosion (the minimum of a square window; replicate borders,
//! which for a minimum equal `cv2.erode`'s default of ignoring what is outside) at 3x3 to
//! 63x63 on a 3840x2160 u8 image. `benches/peers/opencv_windows.py` times the same with
//! OpenCV; docs/benchmarks.md, "Windows", has the table. Where `Runtime::new()` picks an
//! OpenCL device (a GPU; PoCL with `PARAC_DEVICE=opencl`), the same calls on it too.
//!
//! `cargo bench --bench windows`.

use criterion::{BenchmarkId, Criterion, SamplingMode};
use parac::{Matrix, Runtime};
use std::time::Duration;

macro_rules! windows {
    ($($boxf:ident, $erode:ident, $n:tt, $r:tt, $half:tt, $taps:tt;)*) => {
        $(parac::parac! {
            pub fn $boxf(src: &u8[H][W], dst: &mut u8[H][W]) {
                parac_border_rule b = reflect101(src[$r][$r]);
                parac_iterator it(0:H:1; 0:W:1) parac_border_rule(b) {
                    dst[itx][ity] = (parac_matrix_sum(src[itx-$r:$n:1][ity-$r:$n:1]) + $half) / $taps;
                }
            }
            pub fn $erode(src: &u8[H][W], dst: &mut u8[H][W]) {
                parac_border_rule b = replicate(src[$r][$r]);
                parac_iterator it(0:H:1; 0:W:1) parac_border_rule(b) {
                    dst[itx][ity] = parac_matrix_min(src[itx-$r:$n:1][ity-$r:$n:1]);
                }
            }
        })*
        /// `(window side, box mean, erosion)`.
        type Filter = fn(&Runtime, &Matrix<u8>, &mut Matrix<u8>) -> Result<(), parac::Error>;
        const FILTERS: &[(usize, Filter, Filter)] = &[$(($n, $boxf, $erode)),*];
    };
}

windows! {
    box3, erode3, 3, 1, 4, 9;
    box7, erode7, 7, 3, 24, 49;
    box15, erode15, 15, 7, 112, 225;
    box31, erode31, 31, 15, 480, 961;
    box63, erode63, 63, 31, 1984, 3969;
}

parac::parac! {
    /// A 5x5 binomial blur (`cv2.GaussianBlur(src, (5, 5), 0)`'s filter, reflect-101): an outer
    /// product, two 1-D passes on the CPU path (`lir::pass::slide`).
    pub fn gauss5(src: &u8[H][W], dst: &mut u8[H][W]) {
        const G: u16[5][5] = [
            [1, 4, 6, 4, 1], [4, 16, 24, 16, 4], [6, 24, 36, 24, 6],
            [4, 16, 24, 16, 4], [1, 4, 6, 4, 1]];
        parac_border_rule b = reflect101(src[2][2]);
        parac_iterator it(0:H:1; 0:W:1) parac_border_rule(b) {
            dst[itx][ity] = (parac_convolution(G, src[itx-2:5:1][ity-2:5:1]) + 128) / 256;
        }
    }
}

fn main() {
    let mut c = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    let (h, w) = (2160, 3840);
    let src = Matrix::from_fn([h, w], |i| {
        ((i[0] * 7 + i[1] * 13 + (i[0] * i[1]) % 17) % 256) as u8
    });
    let mut dst = Matrix::<u8>::zeros([h, w]);
    // The CPU path, and the device `Runtime::new()` picks where it is an OpenCL one (a GPU, or
    // the device PARAC_DEVICE names): whole calls, transfers included.
    let mut runtimes = vec![("cpu", Runtime::cpu())];
    if let Ok(rt) = Runtime::new()
        && rt.device().is_some()
    {
        eprintln!("OpenCL: {}", rt.describe());
        runtimes.push(("opencl", rt));
    }
    let mut g = c.benchmark_group("windows_3840x2160");
    g.sampling_mode(SamplingMode::Flat).sample_size(10);
    // Every runtime's output equals the CPU path's (which the tests hold to the interpreter).
    for &(n, boxf, erode) in FILTERS.iter().filter(|_| runtimes.len() > 1) {
        for (name, f) in [("box mean", boxf), ("erosion", erode)] {
            let mut want = Matrix::<u8>::zeros([h, w]);
            f(&runtimes[0].1, &src, &mut want).expect("CPU path");
            for (path, rt) in &runtimes[1..] {
                f(rt, &src, &mut dst).expect("OpenCL");
                assert!(
                    dst.as_slice() == want.as_slice(),
                    "{name} {n}x{n}: {path} differs"
                );
            }
        }
    }
    for (path, rt) in &runtimes {
        for &(n, boxf, erode) in FILTERS {
            g.bench_function(BenchmarkId::new(format!("box_mean_{path}"), n), |b| {
                b.iter(|| boxf(rt, &src, &mut dst).expect("box mean"))
            });
            g.bench_function(BenchmarkId::new(format!("erode_{path}"), n), |b| {
                b.iter(|| erode(rt, &src, &mut dst).expect("erosion"))
            });
        }
    }
    for (path, rt) in &runtimes {
        g.bench_function(BenchmarkId::new(format!("gauss5_{path}"), 5), |b| {
            b.iter(|| gauss5(rt, &src, &mut dst).expect("gauss5"))
        });
    }
    g.finish();
    c.final_summary();
}
