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
