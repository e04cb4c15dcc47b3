//! Reductions into shared elements (`m[i] += e` where iterations may share `m[i]`,
//! `ir::Update`) and prefixes (`parac_prefix_sum`, `ir::ExprKind::Prefix`): the programs of
//! `tests/histogram/programs.rs` (histograms of one to three dimensions, narrow, float and bit
//! updates, row and column scans, `cv2.integral2`, `cv2.equalizeHist`, Otsu's threshold), each
//! compiled by `parac::parac!` and run on the CPU path and on every OpenCL plan against the
//! interpreter (the random corpus's harness) at 1x1 to past a task's or a work-group's edge,
//! and against OpenCV's own algorithms on the photographs.

#![allow(clippy::all, unused)]

#[path = "../parac-core/tests/gen/mod.rs"]
mod progen;

mod common;

#[path = "corpus/harness.rs"]
mod harness;

use harness::*;
use parac_core::interp::{Arg, Val};

/// 1x1, 1xN, Nx1, odd, and one past a CPU task's or a work-group's edge.
const SIZES: &[&[(&str, usize)]] = &[
    &[("M", 1), ("N", 1)],
    &[("M", 1), ("N", 7)],
    &[("M", 9), ("N", 1)],
    &[("M", 31), ("N", 33)],
    &[("M", 65), ("N", 129)],
    &[("M", 257), ("N", 5)],
];

#[path = "histogram/programs.rs"]
mod programs;

entry!(histogram, [src: u8], [hist: i32]);

entry!(histogram_2d, [a: u8, b: u8], [h: u32]);

// Narrow bins (u16: they wrap as C's do), accumulated onto the caller's values; weights.
entry!(histogram_u16, [src: u8], [hist: u16]);

// A bilateral grid's splat: 3-D, and a count under a condition on data (one shared element).
entry!(histogram_grid, [src: u8], [grid: i32, count: u32]);

// Bit masks, row maxima and column minima, a subtraction.
entry!(histogram_bits, [src: u8], [bits: u8, rmax: u8, cmin: i32, neg: i32]);

// A float sum into shared elements: the iterations in order, as the interpreter runs them.
entry!(histogram_float, [src: u8], [sums: f32]);
// Bins too few for the data: the same `OutOfBounds` error on every path.
entry!(histogram_too_few, [src: u8], [few: i32]);

// A cumulative histogram: every bin added into each bin at or after it.
entry!(histogram_cumulative, [src: u8], [cdf: i32]);

// Prefix sums along rows and columns, minima, maxima and float sums (a row's in order).
entry!(scan_rows, [src: u8], [sums: i32, maxes: u8, mins: i16, floats: f32]);

entry!(scan_columns, [src: u8], [sums: u32, maxes: u8]);

// `cv2.integral2` (sum in i32, squared sum in f32): row sums, then column sums of them, the
// zero row and column from a constant border.
entry!(scan_integral, [src: u8], [sum: i32, sqsum: f32]);

// The same in one iterator, along both variables at once (one pass; the CPU path's).
entry!(scan_integral_2d, [src: u8], [sum: i32, sqsum: f32]);

// `cv2.equalizeHist`: the histogram, its cumulative sums, the first bin used, the lookup table
// (rounded half to even, as `saturate_cast<uchar>` rounds).
entry!(histogram_equalize, [src: u8], [dst: u8]);

const PROGRAMS: &[Entry] = &[
    Entry {
        name: "histogram",
        src: histogram::SRC,
        sizes: SIZES,
        exact: true,
        call: histogram::call,
    },
    Entry {
        name: "histogram_2d",
        src: histogram_2d::SRC,
        sizes: SIZES,
        exact: true,
        call: histogram_2d::call,
    },
    Entry {
        name: "histogram_u16",
        src: histogram_u16::SRC,
        sizes: SIZES,
        exact: true,
        call: histogram_u16::call,
    },
    Entry {
        name: "histogram_grid",
        src: histogram_grid::SRC,
        sizes: SIZES,
        exact: true,
        call: histogram_grid::call,
    },
    Entry {
        name: "histogram_bits",
        src: histogram_bits::SRC,
        sizes: SIZES,
        exact: true,
        call: histogram_bits::call,
    },
    Entry {
        name: "histogram_too_few",
        src: histogram_too_few::SRC,
        sizes: SIZES,
        exact: true,
        call: histogram_too_few::call,
    },
    Entry {
        name: "histogram_float",
        src: histogram_float::SRC,
        sizes: SIZES,
        exact: true,
        call: histogram_float::call,
    },
    Entry {
        name: "histogram_cumulative",
        src: histogram_cumulative::SRC,
        sizes: SIZES,
        exact: true,
        call: histogram_cumulative::call,
    },
    Entry {
        name: "scan_rows",
        src: scan_rows::SRC,
        sizes: SIZES,
        exact: true,
        call: scan_rows::call,
    },
    Entry {
        name: "scan_columns",
        src: scan_columns::SRC,
        sizes: SIZES,
        exact: true,
        call: scan_columns::call,
    },
    Entry {
        name: "scan_integral",
        src: scan_integral::SRC,
        sizes: SIZES,
        exact: true,
        call: scan_integral::call,
    },
    Entry {
        name: "histogram_equalize",
        src: histogram_equalize::SRC,
        sizes: SIZES,
        exact: true,
        call: histogram_equalize::call,
    },
];

/// Prefixes along two variables of one iterator: the CPU path only (OpenCL reports them).
const CPU_ONLY: &[Entry] = &[Entry {
    name: "scan_integral_2d",
    src: scan_integral_2d::SRC,
    sizes: SIZES,
    exact: true,
    call: scan_integral_2d::call,
}];

#[test]
fn histograms_and_scans_match_the_interpreter_on_the_cpu_path() {
    harness::cpu_path(PROGRAMS);
    harness::cpu_path(CPU_ONLY);
}

#[test]
fn histograms_and_scans_match_the_interpreter_on_every_opencl_plan() {
    harness::opencl(PROGRAMS);
}

// Otsu's threshold (`cv2.threshold(.., THRESH_OTSU)`): cumulative counts and sums of the
// histogram, the between-class variance per threshold from exact integers, the first
// threshold of the largest.
mod otsu {
    pub use super::programs::otsu::*;
    use super::{Arg, Val};

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let src = super::canaried::<u8>("src", &args[0]);
        otsu(rt, &src).map(|t| Some(Val::Int(t as i128)))
    }
}

#[test]
fn histogram_otsu_matches_the_interpreter_on_every_path() {
    let e = &[Entry {
        name: "otsu",
        src: otsu::SRC,
        sizes: SIZES,
        exact: true,
        call: otsu::call,
    }];
    harness::cpu_path(e);
    harness::opencl(e);
}

// ---- against OpenCV's own algorithms ---------------------------------------------------------

use parac::Matrix;

/// `cv2.calcHist` of a u8 image, 256 bins.
fn calc_hist(src: &[u8]) -> Vec<i32> {
    let mut h = vec![0i32; 256];
    for v in src {
        h[*v as usize] += 1;
    }
    h
}

/// `cv2.integral2(src, sdepth=CV_32S, sqdepth=CV_32F)`, as OpenCV's `integral_` computes it:
/// per row, running sums (the squares in f32), added to the row above.
fn integral2(src: &[u8], rows: usize, cols: usize) -> (Vec<i32>, Vec<f32>) {
    let w = cols + 1;
    let (mut sum, mut sq) = (vec![0i32; (rows + 1) * w], vec![0f32; (rows + 1) * w]);
    for y in 0..rows {
        let (mut s, mut q) = (0i32, 0f32);
        for x in 0..cols {
            let v = src[y * cols + x];
            s = s.wrapping_add(v as i32);
            q += v as f32 * v as f32;
            sum[(y + 1) * w + x + 1] = sum[y * w + x + 1].wrapping_add(s);
            sq[(y + 1) * w + x + 1] = sq[y * w + x + 1] + q;
        }
    }
    (sum, sq)
}

/// `cv2.equalizeHist`, as OpenCV's `EqualizeHistLut_Invoker` computes its table.
fn equalize_hist(src: &[u8]) -> Vec<u8> {
    let hist = calc_hist(src);
    let total = src.len() as i32;
    let mut i = 0;
    while hist[i] == 0 {
        i += 1;
    }
    if hist[i] == total {
        return vec![i as u8; src.len()];
    }
    let scale = 255.0f32 / (total - hist[i]) as f32;
    let mut lut = [0u8; 256];
    let mut sum = 0i32;
    lut[i] = 0;
    for j in i + 1..256 {
        sum += hist[j];
        lut[j] = (sum as f32 * scale).round_ties_even().clamp(0.0, 255.0) as u8;
    }
    src.iter().map(|v| lut[*v as usize]).collect()
}

/// `cv2.threshold(src, 0, 255, THRESH_OTSU)`'s threshold, as OpenCV's `getThreshVal_Otsu_8u`
/// computes it (in f64).
fn otsu_threshold(src: &[u8]) -> i32 {
    let h = calc_hist(src);
    let scale = 1.0 / src.len() as f64;
    let mu: f64 = (0..256).map(|i| i as f64 * h[i] as f64).sum::<f64>() * scale;
    let (mut mu1, mut q1, mut max_sigma, mut max_val) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    for i in 0..256 {
        let p_i = h[i] as f64 * scale;
        mu1 *= q1;
        q1 += p_i;
        let q2 = 1.0 - q1;
        let eps = f32::EPSILON as f64;
        if q1.min(q2) < eps || q1.max(q2) > 1.0 - eps {
            continue;
        }
        mu1 = (mu1 + i as f64 * p_i) / q1;
        let mu2 = (mu - q1 * mu1) / q2;
        let sigma = q1 * q2 * (mu1 - mu2) * (mu1 - mu2);
        if sigma > max_sigma {
            max_sigma = sigma;
            max_val = i as f64;
        }
    }
    max_val as i32
}

/// The images OpenCV's results are compared on: the photographs, cropped to odd and tiny
/// sizes, a two-level image (Otsu's clear case) and one of one value.
fn images() -> Vec<(String, Matrix<u8>)> {
    let cam = common::data::camera_u8();
    let mut out = vec![("camera".to_string(), cam.clone())];
    for (r, c) in [(1, 1), (1, 9), (7, 1), (33, 65), (129, 31)] {
        out.push((format!("camera {r}x{c}"), common::data::crop(&cam, r, c)));
    }
    out.push(("coffee".to_string(), common::data::coffee_u8()));
    out.push((
        "two levels".to_string(),
        Matrix::from_fn(&[40, 50], |i| {
            if (i[0] * 7 + i[1] * 3) % 5 < 2 {
                40
            } else {
                200
            }
        }),
    ));
    out.push(("constant".to_string(), Matrix::from_fn(&[9, 9], |_| 77)));
    out
}

fn runtimes() -> Vec<(&'static str, parac::Runtime)> {
    let mut out = vec![("cpu", parac::Runtime::cpu())];
    out.extend(common::runtimes::fresh_opencl().map(|rt| ("opencl", rt)));
    out
}

#[test]
fn histogram_equalize_otsu_and_scan_integral_are_opencvs() {
    for (rname, rt) in runtimes() {
        for (name, img) in images() {
            let (rows, cols) = (img.shape()[0], img.shape()[1]);
            let px = img.as_slice();
            let at = format!("{name} on {rname}");
            let mut hist = Matrix::<i32>::zeros(&[256]);
            histogram::histogram(&rt, &img, &mut hist).unwrap();
            assert_eq!(hist.as_slice(), &calc_hist(px)[..], "calcHist, {at}");
            let mut eq = Matrix::<u8>::zeros(&[rows, cols]);
            histogram_equalize::histogram_equalize(&rt, &img, &mut eq).unwrap();
            assert_eq!(eq.as_slice(), &equalize_hist(px)[..], "equalizeHist, {at}");
            let t = otsu::otsu(&rt, &img).unwrap();
            assert_eq!(t, otsu_threshold(px), "Otsu, {at}");
            let (sum, sq) = integral2(px, rows, cols);
            let mut s = Matrix::<i32>::zeros(&[rows + 1, cols + 1]);
            let mut q = Matrix::<f32>::zeros(&[rows + 1, cols + 1]);
            scan_integral::scan_integral(&rt, &img, &mut s, &mut q).unwrap();
            assert_eq!(s.as_slice(), &sum[..], "integral, {at}");
            assert_eq!(q.as_slice(), &sq[..], "squared integral, {at}");
            if rname == "cpu" {
                scan_integral_2d::scan_integral_2d(&rt, &img, &mut s, &mut q).unwrap();
                assert_eq!(s.as_slice(), &sum[..], "integral in one pass, {at}");
                assert_eq!(q.as_slice(), &sq[..], "squared integral in one pass, {at}");
            } else {
                let e = scan_integral_2d::scan_integral_2d(&rt, &img, &mut s, &mut q);
                assert!(matches!(e, Err(parac::Error::Unsupported { .. })), "{e:?}");
            }
        }
    }
}
