//! OpenCV's everyday functions written as a user writes them (`tests/opencv_ops/programs.rs`,
//! timed by `benches/opencv_ops.rs`): each compiled by `parac::parac!` and run on the CPU path
//! (every plan, every level of vector instructions) and on every OpenCL plan against the
//! interpreter at 1x1 to past a task's or a tile's edge, and against OpenCV's definition of the
//! function on the photographs.

#![allow(clippy::all, unused)]

#[path = "../parac-core/tests/gen/mod.rs"]
mod progen;

mod common;

#[path = "corpus/harness.rs"]
mod harness;

use harness::*;
use parac::Matrix;
use parac_core::interp::{Arg, Val};

/// 1x1, 1xN, Nx1, odd, and one past a CPU task's, a vector's or a tile's edge.
const SIZES: &[&[(&str, usize)]] = &[
    &[("M", 1), ("N", 1)],
    &[("M", 1), ("N", 7)],
    &[("M", 9), ("N", 1)],
    &[("M", 31), ("N", 33)],
    &[("M", 65), ("N", 129)],
    &[("M", 129), ("N", 65)],
    &[("M", 257), ("N", 5)],
];

/// The same for an interleaved RGB row (`W` three times the width).
const SIZES_RGB: &[&[(&str, usize)]] = &[
    &[("M", 1), ("W", 3)],
    &[("M", 1), ("W", 21)],
    &[("M", 9), ("W", 3)],
    &[("M", 31), ("W", 99)],
    &[("M", 65), ("W", 387)],
];

#[path = "opencv_ops/programs.rs"]
mod programs;

entry!(flip_lr, [src: u8], [dst: u8]);
entry!(flip_ud, [src: u8], [dst: u8]);
entry!(flip_both, [src: u8], [dst: u8]);
entry!(transpose, [src: u8], [dst: u8]);
entry!(rotate_cw, [src: u8], [dst: u8]);
entry!(rotate_ccw, [src: u8], [dst: u8]);
entry!(flip_lr_rgb, [src: u8], [dst: u8]);
entry!(flip_lr_rgb_stores, [src: u8], [dst: u8]);
entry!(transpose_i16, [src: i16], [dst: i16]);
entry!(gray, [src: u8], [dst: u8]);
entry!(threshold, [src: u8], [dst: u8]);
entry!(absdiff, [a: u8, b: u8], [dst: u8]);
entry!(sobel_dx, [src: u8], [dst: i16]);
entry!(scharr_dx, [src: u8], [dst: i16]);
entry!(laplacian, [src: u8], [dst: i16]);
entry!(gauss3, [src: u8], [dst: u8]);
entry!(sharpen, [src: u8], [dst: u8]);
entry!(dilate5, [src: u8], [dst: u8]);
entry!(pyr_down, [src: u8], [dst: u8]);
entry!(resize_nearest, [src: u8], [dst: u8]);
entry!(resize_area, [src: u8], [dst: u8]);
entry!(make_border, [src: u8], [dst: u8]);
entry!(median3, [src: u8], [dst: u8]);
entry!(ycrcb, [src: u8], [dst: u8]);
entry!(box3, [src: u8], [dst: u8]);
entry!(erode3, [src: u8], [dst: u8]);
entry!(erode15, [src: u8], [dst: u8]);
entry!(resize_up, [src: u8], [dst: u8]);

macro_rules! entries {
    ($($m:ident: $sizes:expr),* $(,)?) => {
        &[$(Entry {
            name: stringify!($m),
            src: $m::SRC,
            sizes: $sizes,
            exact: true,
            call: $m::call,
        }),*]
    };
}

const PROGRAMS: &[Entry] = entries![
    flip_lr: SIZES,
    flip_ud: SIZES,
    flip_both: SIZES,
    transpose: SIZES,
    rotate_cw: SIZES,
    rotate_ccw: SIZES,
    flip_lr_rgb: SIZES_RGB,
    flip_lr_rgb_stores: SIZES_RGB,
    transpose_i16: SIZES,
    gray: SIZES_RGB,
    threshold: SIZES,
    absdiff: SIZES,
    sobel_dx: SIZES,
    scharr_dx: SIZES,
    laplacian: SIZES,
    gauss3: SIZES,
    sharpen: SIZES,
    dilate5: SIZES,
    pyr_down: SIZES,
    resize_nearest: SIZES,
    resize_area: SIZES,
    make_border: SIZES,
    median3: SIZES,
    ycrcb: SIZES_RGB,
    box3: SIZES,
    erode3: SIZES,
    erode15: SIZES,
    resize_up: SIZES,
];

#[test]
fn opencv_ops_match_the_interpreter_on_the_cpu_path() {
    harness::cpu_path(PROGRAMS);
}

#[test]
fn opencv_ops_match_the_interpreter_at_every_cpu_level() {
    harness::cpu_levels(PROGRAMS);
}

#[test]
fn opencv_ops_match_the_interpreter_on_every_opencl_plan() {
    harness::opencl(PROGRAMS);
}

/// The element of `src` (`rows` x `cols`) that OpenCV's `flip`, `transpose` and `rotate` put
/// at `(i, j)` of their result, by name.
fn opencv_at(op: &str, rows: usize, cols: usize, i: usize, j: usize) -> (usize, usize) {
    match op {
        "flip 1" => (i, cols - 1 - j),
        "flip 0" => (rows - 1 - i, j),
        "flip -1" => (rows - 1 - i, cols - 1 - j),
        "transpose" => (j, i),
        "rotate 90 clockwise" => (rows - 1 - j, i),
        "rotate 90 counterclockwise" => (j, cols - 1 - i),
        _ => unreachable!("{op}"),
    }
}

#[test]
fn flips_transposes_and_rotations_are_opencvs() {
    let cam = common::data::camera_u8();
    let mut images = vec![("camera".to_string(), cam.clone())];
    for (r, c) in [(1, 1), (1, 9), (7, 1), (33, 65), (129, 31)] {
        images.push((format!("camera {r}x{c}"), common::data::crop(&cam, r, c)));
    }
    let mut runtimes = vec![("cpu", parac::Runtime::cpu())];
    runtimes.extend(common::runtimes::fresh_opencl().map(|rt| ("opencl", rt)));
    type Op = fn(&parac::Runtime, &Matrix<u8>, &mut Matrix<u8>) -> Result<(), parac::Error>;
    let ops: [(&str, Op, bool); 6] = [
        ("flip 1", |r, s, d| flip_lr::flip_lr(r, s, d), false),
        ("flip 0", |r, s, d| flip_ud::flip_ud(r, s, d), false),
        ("flip -1", |r, s, d| flip_both::flip_both(r, s, d), false),
        ("transpose", |r, s, d| transpose::transpose(r, s, d), true),
        (
            "rotate 90 clockwise",
            |r, s, d| rotate_cw::rotate_cw(r, s, d),
            true,
        ),
        (
            "rotate 90 counterclockwise",
            |r, s, d| rotate_ccw::rotate_ccw(r, s, d),
            true,
        ),
    ];
    for (rname, rt) in &runtimes {
        for (name, img) in &images {
            let (rows, cols) = (img.shape()[0], img.shape()[1]);
            for (op, f, turned) in &ops {
                let shape = if *turned { [cols, rows] } else { [rows, cols] };
                let mut dst = Matrix::<u8>::zeros(&shape);
                f(rt, img, &mut dst).unwrap();
                let want = Matrix::from_fn(&shape, |ij| {
                    let (a, b) = opencv_at(op, rows, cols, ij[0], ij[1]);
                    img.as_slice()[a * cols + b]
                });
                assert_eq!(dst.as_slice(), want.as_slice(), "{op}, {name} on {rname}");
            }
        }
    }
}

#[test]
fn flip_of_interleaved_rgb_is_opencvs() {
    let cam = common::data::camera_u8();
    let mut runtimes = vec![("cpu", parac::Runtime::cpu())];
    runtimes.extend(common::runtimes::fresh_opencl().map(|rt| ("opencl", rt)));
    for (rows, cols) in [(1, 1), (1, 9), (7, 1), (33, 65), (129, 31)] {
        // Three channels of each pixel, interleaved: `u8[rows][3 * cols]`.
        let rgb = Matrix::from_fn(&[rows, 3 * cols], |i| {
            cam.as_slice()[i[0] * cam.shape()[1] + i[1] / 3].wrapping_add(i[1] as u8 % 3 * 50)
        });
        let want = Matrix::from_fn(&[rows, 3 * cols], |i| {
            rgb.as_slice()[i[0] * 3 * cols + 3 * (cols - 1 - i[1] / 3) + i[1] % 3]
        });
        for (rname, rt) in &runtimes {
            let mut dst = Matrix::<u8>::zeros(&[rows, 3 * cols]);
            flip_lr_rgb::flip_lr_rgb(rt, &rgb, &mut dst).unwrap();
            assert_eq!(
                dst.as_slice(),
                want.as_slice(),
                "flip 1, {rows}x{cols} RGB on {rname}"
            );
        }
    }
}

/// OpenCV's `BORDER_REFLECT_101` index of `i` in a line of `n`.
fn reflect101(i: isize, n: usize) -> usize {
    let n = n as isize;
    let mut i = i;
    while i < 0 || i >= n {
        i = if i < 0 { -i } else { 2 * (n - 1) - i };
    }
    i as usize
}

/// The sum of `k` (odd sides) times `img` around `(i, j)`, reflect-101: OpenCV's `filter2D`
/// before its result is converted.
fn correlate<const R: usize, const C: usize>(
    img: &Matrix<u8>,
    k: [[i32; C]; R],
    i: isize,
    j: isize,
) -> i32 {
    let (rows, cols) = (img.shape()[0], img.shape()[1]);
    let mut s = 0;
    for (a, row) in k.iter().enumerate() {
        for (b, w) in row.iter().enumerate() {
            let p = reflect101(i + a as isize - (R / 2) as isize, rows);
            let q = reflect101(j + b as isize - (C / 2) as isize, cols);
            s += w * i32::from(img.as_slice()[p * cols + q]);
        }
    }
    s
}

const G5: [[i32; 5]; 5] = [
    [1, 4, 6, 4, 1],
    [4, 16, 24, 16, 4],
    [6, 24, 36, 24, 6],
    [4, 16, 24, 16, 4],
    [1, 4, 6, 4, 1],
];

/// OpenCV's result of the one-input u8 functions of the corpus at `(i, j)` of `img`, by
/// program name (the definitions `benches/peers/opencv_ops.py` checks against OpenCV 5.1).
fn opencv_filter(op: &str, img: &Matrix<u8>, i: usize, j: usize) -> i32 {
    let (rows, cols) = (img.shape()[0], img.shape()[1]);
    let at = |p: usize, q: usize| i32::from(img.as_slice()[p * cols + q]);
    let (si, sj) = (i as isize, j as isize);
    match op {
        "threshold" => 255 * i32::from(at(i, j) > 127),
        "sobel_dx" => correlate(img, [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], si, sj),
        "scharr_dx" => correlate(img, [[-3, 0, 3], [-10, 0, 10], [-3, 0, 3]], si, sj),
        "laplacian" => correlate(img, [[0, 1, 0], [1, -4, 1], [0, 1, 0]], si, sj),
        "gauss3" => (correlate(img, [[1, 2, 1], [2, 4, 2], [1, 2, 1]], si, sj) + 8) >> 4,
        "sharpen" => correlate(img, [[0, -1, 0], [-1, 5, -1], [0, -1, 0]], si, sj).clamp(0, 255),
        "dilate5" => (0..25)
            .map(|k| {
                let p = (i + k / 5).saturating_sub(2).min(rows - 1);
                let q = (j + k % 5).saturating_sub(2).min(cols - 1);
                at(p, q)
            })
            .max()
            .unwrap(),
        "median3" => {
            let mut w: Vec<i32> = (0..9)
                .map(|k| {
                    let p = (i + k / 3).saturating_sub(1).min(rows - 1);
                    let q = (j + k % 3).saturating_sub(1).min(cols - 1);
                    at(p, q)
                })
                .collect();
            w.sort_unstable();
            w[4]
        }
        "pyr_down" => (correlate(img, G5, 2 * si, 2 * sj) + 128) >> 8,
        "resize_nearest" => at(2 * i, 2 * j),
        "resize_area" => {
            (at(2 * i, 2 * j)
                + at(2 * i + 1, 2 * j)
                + at(2 * i, 2 * j + 1)
                + at(2 * i + 1, 2 * j + 1)
                + 2)
                >> 2
        }
        "make_border" => at(reflect101(si - 4, rows), reflect101(sj - 4, cols)),
        "box3" => (correlate(img, [[1; 3]; 3], si, sj) + 4) / 9,
        "erode3" | "erode15" => {
            let r = if op == "erode3" { 1 } else { 7 };
            let side = 2 * r + 1;
            (0..side * side)
                .map(|k| {
                    let p = (i + k / side).saturating_sub(r).min(rows - 1);
                    let q = (j + k % side).saturating_sub(r).min(cols - 1);
                    at(p, q)
                })
                .min()
                .unwrap()
        }
        "resize_up" => at(i / 2, j / 2),
        _ => unreachable!("{op}"),
    }
}

#[test]
fn filters_resizes_and_borders_are_opencvs() {
    let cam = common::data::camera_u8();
    let mut images = vec![("camera".to_string(), cam.clone())];
    for (r, c) in [(5, 5), (5, 9), (36, 52), (33, 65), (129, 31)] {
        images.push((format!("camera {r}x{c}"), common::data::crop(&cam, r, c)));
    }
    let mut runtimes = vec![("cpu", parac::Runtime::cpu())];
    runtimes.extend(common::runtimes::fresh_opencl().map(|rt| ("opencl", rt)));
    /// A function of the corpus on a u8 image, its result widened to `i32`.
    type Op = fn(&parac::Runtime, &Matrix<u8>) -> Result<Matrix<i32>, parac::Error>;
    fn run<T: parac::Element + Into<i32>>(
        shape: [usize; 2],
        f: impl FnOnce(&mut Matrix<T>) -> Result<(), parac::Error>,
    ) -> Result<Matrix<i32>, parac::Error> {
        let mut dst = Matrix::<T>::zeros(&shape);
        f(&mut dst)?;
        Ok(Matrix::from_fn(&shape, |i| {
            dst.as_slice()[i[0] * shape[1] + i[1]].into()
        }))
    }
    fn dims(s: &Matrix<u8>) -> (usize, usize) {
        (s.shape()[0], s.shape()[1])
    }
    let ops: [(&str, Op); 16] = [
        ("threshold", |r, s| {
            run(dims(s).into(), |d| threshold::threshold(r, s, d))
        }),
        ("sobel_dx", |r, s| {
            run(dims(s).into(), |d| sobel_dx::sobel_dx(r, s, d))
        }),
        ("scharr_dx", |r, s| {
            run(dims(s).into(), |d| scharr_dx::scharr_dx(r, s, d))
        }),
        ("laplacian", |r, s| {
            run(dims(s).into(), |d| laplacian::laplacian(r, s, d))
        }),
        ("gauss3", |r, s| {
            run(dims(s).into(), |d| gauss3::gauss3(r, s, d))
        }),
        ("sharpen", |r, s| {
            run(dims(s).into(), |d| sharpen::sharpen(r, s, d))
        }),
        ("dilate5", |r, s| {
            run(dims(s).into(), |d| dilate5::dilate5(r, s, d))
        }),
        ("median3", |r, s| {
            run(dims(s).into(), |d| median3::median3(r, s, d))
        }),
        ("pyr_down", |r, s| {
            let (m, n) = dims(s);
            run([m.div_ceil(2), n.div_ceil(2)], |d| {
                pyr_down::pyr_down(r, s, d)
            })
        }),
        ("resize_nearest", |r, s| {
            let (m, n) = dims(s);
            run([m / 2, n / 2], |d| resize_nearest::resize_nearest(r, s, d))
        }),
        ("resize_area", |r, s| {
            let (m, n) = dims(s);
            run([m / 2, n / 2], |d| resize_area::resize_area(r, s, d))
        }),
        ("make_border", |r, s| {
            let (m, n) = dims(s);
            run([m + 8, n + 8], |d| make_border::make_border(r, s, d))
        }),
        ("box3", |r, s| run(dims(s).into(), |d| box3::box3(r, s, d))),
        ("erode3", |r, s| {
            run(dims(s).into(), |d| erode3::erode3(r, s, d))
        }),
        ("erode15", |r, s| {
            run(dims(s).into(), |d| erode15::erode15(r, s, d))
        }),
        ("resize_up", |r, s| {
            let (m, n) = dims(s);
            run([2 * m, 2 * n], |d| resize_up::resize_up(r, s, d))
        }),
    ];
    for (rname, rt) in &runtimes {
        for (name, img) in &images {
            for (op, f) in &ops {
                let got = f(rt, img).unwrap();
                let shape = [got.shape()[0], got.shape()[1]];
                let want = Matrix::from_fn(&shape, |ij| opencv_filter(op, img, ij[0], ij[1]));
                assert_eq!(got.as_slice(), want.as_slice(), "{op}, {name} on {rname}");
            }
        }
    }
}

#[test]
fn colour_conversions_and_absdiff_are_opencvs() {
    let cam = common::data::camera_u8();
    let mut runtimes = vec![("cpu", parac::Runtime::cpu())];
    runtimes.extend(common::runtimes::fresh_opencl().map(|rt| ("opencl", rt)));
    for (rows, cols) in [(1, 1), (1, 9), (7, 1), (33, 65), (129, 31)] {
        let bgr = Matrix::from_fn(&[rows, 3 * cols], |i| {
            cam.as_slice()[(i[0] * 3 + i[1] % 3) % 512 * 512 + i[1] / 3]
        });
        let gray = Matrix::from_fn(&[rows, cols], |i| {
            let c = |k: usize| u32::from(bgr.as_slice()[i[0] * 3 * cols + 3 * i[1] + k]);
            ((c(0) * 3735 + c(1) * 19235 + c(2) * 9798 + 16384) >> 15) as u8
        });
        let a = common::data::crop(&cam, rows, cols);
        let b = Matrix::from_fn(&[rows, cols], |i| {
            cam.as_slice()[(i[0] + 100) * 512 + i[1] + 7]
        });
        let diff = Matrix::from_fn(&[rows, cols], |i| {
            let k = i[0] * cols + i[1];
            a.as_slice()[k].abs_diff(b.as_slice()[k])
        });
        // OpenCV's BGR2YCrCb: luma, then the red and blue differences from it.
        let ycc = Matrix::from_fn(&[rows, 3 * cols], |i| {
            let c = |k: usize| i32::from(bgr.as_slice()[i[0] * 3 * cols + 3 * (i[1] / 3) + k]);
            let l = (c(0) * 1868 + c(1) * 9617 + c(2) * 4899 + 8192) >> 14;
            let chroma = |d: i32, w: i32| ((d * w + (128 << 14) + (1 << 13)) >> 14).clamp(0, 255);
            (match i[1] % 3 {
                0 => l,
                1 => chroma(c(2) - l, 11682),
                _ => chroma(c(0) - l, 9241),
            }) as u8
        });
        for (rname, rt) in &runtimes {
            let mut out = Matrix::<u8>::zeros(&[rows, 3 * cols]);
            ycrcb::ycrcb(rt, &bgr, &mut out).unwrap();
            assert_eq!(
                out.as_slice(),
                ycc.as_slice(),
                "ycrcb {rows}x{cols} on {rname}"
            );
            let mut dst = Matrix::<u8>::zeros(&[rows, cols]);
            gray::gray(rt, &bgr, &mut dst).unwrap();
            assert_eq!(
                dst.as_slice(),
                gray.as_slice(),
                "gray {rows}x{cols} on {rname}"
            );
            absdiff::absdiff(rt, &a, &b, &mut dst).unwrap();
            assert_eq!(
                dst.as_slice(),
                diff.as_slice(),
                "absdiff {rows}x{cols} on {rname}"
            );
        }
    }
}
