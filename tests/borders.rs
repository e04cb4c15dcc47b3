//! The standard border modes of APPS.md's last section, each written as a ParaC border rule and
//! checked against the hand-written references of `tests/common/reference.rs` ([`r::stencil`],
//! [`r::box_sum`], [`r::border_value`]) on every runtime: the CPU path and, when there is one,
//! an OpenCL device (`<mode>::cpu`, `<mode>::opencl`; `PARAC_REQUIRE_OPENCL=1` makes a missing
//! device a failure).
//!
//! One test per mode: constant, replicate, reflect, reflect101, wrap (the shorthands of
//! docs/language.md) and the paper's linear extrapolation (an explicit rule block). Each mode has
//! one pipeline per width `w` with four outputs, each read through its own rule:
//! - `rows`: rows only (`m[w][*]`), a weighted 1-D stencil of `2w+1` *point reads*
//!   `src[x-w][y] .. src[x+w][y]` with weights `1 .. 2w+1`;
//! - `cols`: columns only (`m[*][w]`), `parac_convolution` of a `[1][2w+1]` window with weights
//!   `1 .. 2w+1`;
//! - `both`: 2-D (`m[w][w]`, with the 4 corners), `parac_convolution` of a `(2w+1)^2` window with
//!   the weights `1 .. (2w+1)^2` (all different, so a mirrored or shifted read changes the sum);
//! - `boxed`: 2-D, `parac_matrix_sum` of the same window.
//!
//! Widths 1, 2 and 3 for the shorthands; 1 and 2 for the extrapolation, which the paper (and
//! APPS.md's laplacian) defines two positions deep only.
//!
//! Sizes: every size of [`SIZES`] that is legal for the mode and width in both dimensions (all
//! four outputs come from one call): the shorthands any size from 1x1 (a window wider than the
//! image reflects or wraps again, as OpenCV's `borderInterpolate`), the extrapolation `S >= 4`
//! (its formulas read indices 0..3 and S-4..S-1). The tiny sizes make the windows reach past
//! both ends at once.
//!
//! Last, two tests of border values outside `0..=255` on a `u8` matrix: in `int` arithmetic they
//! are used as they are (APPS.md's laplacian relies on it); stored into a `u8` output they wrap.

#[macro_use]
mod common;

use common::data;
use common::reference::{self as r, Border};
use common::runtimes;
use common::soft::Failures;
use parac::{Matrix, Runtime};

/// A border-mode pipeline: `(rt, src, rows, cols, both, boxed)`.
type Pipeline = fn(
    &Runtime,
    &Matrix<u8>,
    &mut Matrix<i32>,
    &mut Matrix<i32>,
    &mut Matrix<i32>,
    &mut Matrix<i32>,
) -> Result<(), parac::Error>;

/// One pipeline of a shorthand mode and width. `$value` is `, v` for `constant`, else empty;
/// `$rows` the weighted point reads; `$wc`, `$w2` the weights of the window convolutions.
macro_rules! shorthand_pipeline {
    ($name:ident: $mode:ident [$($value:tt)*], $w:tt, $len:tt, rows: [$($rows:tt)*],
     $wc:tt, $w2:tt) => {
        parac::parac! {
            pub fn $name(
                src: &u8[M][N],
                rows: &mut i32[M][N],
                cols: &mut i32[M][N],
                both: &mut i32[M][N],
                boxed: &mut i32[M][N],
            ) {
                const WC: i32[1][$len] = $wc;
                const W2: i32[$len][$len] = $w2;
                parac_border_rule br = $mode(src[$w][*] $($value)*);
                parac_border_rule bc = $mode(src[*][$w] $($value)*);
                parac_border_rule b2 = $mode(src[$w][$w] $($value)*);
                parac_iterator r(x in 0:M:1; y in 0:N:1) parac_border_rule(br) {
                    rows[x][y] = $($rows)*;
                }
                parac_iterator c(x in 0:M:1; y in 0:N:1) parac_border_rule(bc) {
                    cols[x][y] = parac_convolution(WC, src[x][y-$w:$len:1]);
                }
                parac_iterator b(x in 0:M:1; y in 0:N:1) parac_border_rule(b2) {
                    both[x][y] = parac_convolution(W2, src[x-$w:$len:1][y-$w:$len:1]);
                    boxed[x][y] = parac_matrix_sum(src[x-$w:$len:1][y-$w:$len:1]);
                }
            }
        }
    };
}

/// The three pipelines (widths 1, 2, 3) of a shorthand mode; `[$vK]` is the `, value` of width K
/// (`constant` only).
macro_rules! shorthand_pipelines {
    ($mode:ident [$($v1:tt)*] [$($v2:tt)*] [$($v3:tt)*] => $n1:ident, $n2:ident, $n3:ident) => {
        shorthand_pipeline!($n1: $mode [$($v1)*], 1, 3,
            rows: [src[x-1][y] + 2 * src[x][y] + 3 * src[x+1][y]],
            [[1, 2, 3]],
            [[1, 2, 3], [4, 5, 6], [7, 8, 9]]);
        shorthand_pipeline!($n2: $mode [$($v2)*], 2, 5,
            rows: [src[x-2][y] + 2 * src[x-1][y] + 3 * src[x][y] + 4 * src[x+1][y]
                + 5 * src[x+2][y]],
            [[1, 2, 3, 4, 5]],
            [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11, 12, 13, 14, 15], [16, 17, 18, 19, 20],
             [21, 22, 23, 24, 25]]);
        shorthand_pipeline!($n3: $mode [$($v3)*], 3, 7,
            rows: [src[x-3][y] + 2 * src[x-2][y] + 3 * src[x-1][y] + 4 * src[x][y]
                + 5 * src[x+1][y] + 6 * src[x+2][y] + 7 * src[x+3][y]],
            [[1, 2, 3, 4, 5, 6, 7]],
            [[1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14], [15, 16, 17, 18, 19, 20, 21],
             [22, 23, 24, 25, 26, 27, 28], [29, 30, 31, 32, 33, 34, 35],
             [36, 37, 38, 39, 40, 41, 42], [43, 44, 45, 46, 47, 48, 49]]);
    };
}

/// The constants of the `constant` pipelines, per width: 0, a negative value and one above 255
/// (border values are `int`s, not converted to `u8`).
const CONSTANTS: [i64; 3] = [0, -7, 300];

shorthand_pipelines!(constant [, 0] [, -7] [, 300] => constant_1, constant_2, constant_3);
shorthand_pipelines!(replicate [] [] [] => replicate_1, replicate_2, replicate_3);
shorthand_pipelines!(reflect [] [] [] => reflect_1, reflect_2, reflect_3);
shorthand_pipelines!(reflect101 [] [] [] => reflect101_1, reflect101_2, reflect101_3);
shorthand_pipelines!(wrap [] [] [] => wrap_1, wrap_2, wrap_3);

// The paper's linear extrapolation as explicit rule blocks (APPS.md §1's formulas, on the rows,
// the columns, and both with the corners). A corner applies the row formula to the column
// formula's values at the rows it reads (the reference's convention; the formulas are linear,
// so the order does not matter), written from interior elements only.
parac::parac! {
    pub fn extrapolate_1(
        src: &u8[M][N],
        rows: &mut i32[M][N],
        cols: &mut i32[M][N],
        both: &mut i32[M][N],
        boxed: &mut i32[M][N],
    ) {
        const WC: i32[1][3] = [[1, 2, 3]];
        const W2: i32[3][3] = [[1, 2, 3], [4, 5, 6], [7, 8, 9]];
        parac_border_rule er {
            src[-1][*] = src[1][*]*2 - src[3][*];
            src[+1][*] = src[M-2][*]*2 - src[M-4][*];
        }
        parac_border_rule ec {
            src[*][-1] = src[*][1]*2 - src[*][3];
            src[*][+1] = src[*][N-2]*2 - src[*][N-4];
        }
        parac_border_rule e2 {
            src[-1][*] = src[1][*]*2 - src[3][*];
            src[+1][*] = src[M-2][*]*2 - src[M-4][*];
            src[*][-1] = src[*][1]*2 - src[*][3];
            src[*][+1] = src[*][N-2]*2 - src[*][N-4];
            src[-1][-1] = (src[1][1]*2 - src[1][3])*2 - (src[3][1]*2 - src[3][3]);
            src[-1][+1] = (src[1][N-2]*2 - src[1][N-4])*2 - (src[3][N-2]*2 - src[3][N-4]);
            src[+1][-1] = (src[M-2][1]*2 - src[M-2][3])*2 - (src[M-4][1]*2 - src[M-4][3]);
            src[+1][+1] = (src[M-2][N-2]*2 - src[M-2][N-4])*2 - (src[M-4][N-2]*2 - src[M-4][N-4]);
        }
        parac_iterator r(x in 0:M:1; y in 0:N:1) parac_border_rule(er) {
            rows[x][y] = src[x-1][y] + 2 * src[x][y] + 3 * src[x+1][y];
        }
        parac_iterator c(x in 0:M:1; y in 0:N:1) parac_border_rule(ec) {
            cols[x][y] = parac_convolution(WC, src[x][y-1:3:1]);
        }
        parac_iterator b(x in 0:M:1; y in 0:N:1) parac_border_rule(e2) {
            both[x][y] = parac_convolution(W2, src[x-1:3:1][y-1:3:1]);
            boxed[x][y] = parac_matrix_sum(src[x-1:3:1][y-1:3:1]);
        }
    }

    pub fn extrapolate_2(
        src: &u8[M][N],
        rows: &mut i32[M][N],
        cols: &mut i32[M][N],
        both: &mut i32[M][N],
        boxed: &mut i32[M][N],
    ) {
        const WC: i32[1][5] = [[1, 2, 3, 4, 5]];
        const W2: i32[5][5] = [[1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11, 12, 13, 14, 15],
                               [16, 17, 18, 19, 20], [21, 22, 23, 24, 25]];
        parac_border_rule er {
            src[-2][*] = src[3][*]*4 - src[1][*]*4 + src[0][*]*2 - src[2][*];
            src[-1][*] = src[1][*]*2 - src[3][*];
            src[+1][*] = src[M-2][*]*2 - src[M-4][*];
            src[+2][*] = src[M-4][*]*4 - src[M-2][*]*4 + src[M-1][*]*2 - src[M-3][*];
        }
        parac_border_rule ec {
            src[*][-2] = src[*][3]*4 - src[*][1]*4 + src[*][0]*2 - src[*][2];
            src[*][-1] = src[*][1]*2 - src[*][3];
            src[*][+1] = src[*][N-2]*2 - src[*][N-4];
            src[*][+2] = src[*][N-4]*4 - src[*][N-2]*4 + src[*][N-1]*2 - src[*][N-3];
        }
        parac_border_rule e2 {
            src[-2][*] = src[3][*]*4 - src[1][*]*4 + src[0][*]*2 - src[2][*];
            src[-1][*] = src[1][*]*2 - src[3][*];
            src[+1][*] = src[M-2][*]*2 - src[M-4][*];
            src[+2][*] = src[M-4][*]*4 - src[M-2][*]*4 + src[M-1][*]*2 - src[M-3][*];
            src[*][-2] = src[*][3]*4 - src[*][1]*4 + src[*][0]*2 - src[*][2];
            src[*][-1] = src[*][1]*2 - src[*][3];
            src[*][+1] = src[*][N-2]*2 - src[*][N-4];
            src[*][+2] = src[*][N-4]*4 - src[*][N-2]*4 + src[*][N-1]*2 - src[*][N-3];
            src[-2][-2] = (src[3][3]*4 - src[3][1]*4 + src[3][0]*2 - src[3][2])*4 - (src[1][3]*4 - src[1][1]*4 + src[1][0]*2 - src[1][2])*4 + (src[0][3]*4 - src[0][1]*4 + src[0][0]*2 - src[0][2])*2 - (src[2][3]*4 - src[2][1]*4 + src[2][0]*2 - src[2][2]);
            src[-2][-1] = (src[3][1]*2 - src[3][3])*4 - (src[1][1]*2 - src[1][3])*4 + (src[0][1]*2 - src[0][3])*2 - (src[2][1]*2 - src[2][3]);
            src[-2][+1] = (src[3][N-2]*2 - src[3][N-4])*4 - (src[1][N-2]*2 - src[1][N-4])*4 + (src[0][N-2]*2 - src[0][N-4])*2 - (src[2][N-2]*2 - src[2][N-4]);
            src[-2][+2] = (src[3][N-4]*4 - src[3][N-2]*4 + src[3][N-1]*2 - src[3][N-3])*4 - (src[1][N-4]*4 - src[1][N-2]*4 + src[1][N-1]*2 - src[1][N-3])*4 + (src[0][N-4]*4 - src[0][N-2]*4 + src[0][N-1]*2 - src[0][N-3])*2 - (src[2][N-4]*4 - src[2][N-2]*4 + src[2][N-1]*2 - src[2][N-3]);
            src[-1][-2] = (src[1][3]*4 - src[1][1]*4 + src[1][0]*2 - src[1][2])*2 - (src[3][3]*4 - src[3][1]*4 + src[3][0]*2 - src[3][2]);
            src[-1][-1] = (src[1][1]*2 - src[1][3])*2 - (src[3][1]*2 - src[3][3]);
            src[-1][+1] = (src[1][N-2]*2 - src[1][N-4])*2 - (src[3][N-2]*2 - src[3][N-4]);
            src[-1][+2] = (src[1][N-4]*4 - src[1][N-2]*4 + src[1][N-1]*2 - src[1][N-3])*2 - (src[3][N-4]*4 - src[3][N-2]*4 + src[3][N-1]*2 - src[3][N-3]);
            src[+1][-2] = (src[M-2][3]*4 - src[M-2][1]*4 + src[M-2][0]*2 - src[M-2][2])*2 - (src[M-4][3]*4 - src[M-4][1]*4 + src[M-4][0]*2 - src[M-4][2]);
            src[+1][-1] = (src[M-2][1]*2 - src[M-2][3])*2 - (src[M-4][1]*2 - src[M-4][3]);
            src[+1][+1] = (src[M-2][N-2]*2 - src[M-2][N-4])*2 - (src[M-4][N-2]*2 - src[M-4][N-4]);
            src[+1][+2] = (src[M-2][N-4]*4 - src[M-2][N-2]*4 + src[M-2][N-1]*2 - src[M-2][N-3])*2 - (src[M-4][N-4]*4 - src[M-4][N-2]*4 + src[M-4][N-1]*2 - src[M-4][N-3]);
            src[+2][-2] = (src[M-4][3]*4 - src[M-4][1]*4 + src[M-4][0]*2 - src[M-4][2])*4 - (src[M-2][3]*4 - src[M-2][1]*4 + src[M-2][0]*2 - src[M-2][2])*4 + (src[M-1][3]*4 - src[M-1][1]*4 + src[M-1][0]*2 - src[M-1][2])*2 - (src[M-3][3]*4 - src[M-3][1]*4 + src[M-3][0]*2 - src[M-3][2]);
            src[+2][-1] = (src[M-4][1]*2 - src[M-4][3])*4 - (src[M-2][1]*2 - src[M-2][3])*4 + (src[M-1][1]*2 - src[M-1][3])*2 - (src[M-3][1]*2 - src[M-3][3]);
            src[+2][+1] = (src[M-4][N-2]*2 - src[M-4][N-4])*4 - (src[M-2][N-2]*2 - src[M-2][N-4])*4 + (src[M-1][N-2]*2 - src[M-1][N-4])*2 - (src[M-3][N-2]*2 - src[M-3][N-4]);
            src[+2][+2] = (src[M-4][N-4]*4 - src[M-4][N-2]*4 + src[M-4][N-1]*2 - src[M-4][N-3])*4 - (src[M-2][N-4]*4 - src[M-2][N-2]*4 + src[M-2][N-1]*2 - src[M-2][N-3])*4 + (src[M-1][N-4]*4 - src[M-1][N-2]*4 + src[M-1][N-1]*2 - src[M-1][N-3])*2 - (src[M-3][N-4]*4 - src[M-3][N-2]*4 + src[M-3][N-1]*2 - src[M-3][N-3]);
        }
        parac_iterator r(x in 0:M:1; y in 0:N:1) parac_border_rule(er) {
            rows[x][y] = src[x-2][y] + 2 * src[x-1][y] + 3 * src[x][y] + 4 * src[x+1][y]
                + 5 * src[x+2][y];
        }
        parac_iterator c(x in 0:M:1; y in 0:N:1) parac_border_rule(ec) {
            cols[x][y] = parac_convolution(WC, src[x][y-2:5:1]);
        }
        parac_iterator b(x in 0:M:1; y in 0:N:1) parac_border_rule(e2) {
            both[x][y] = parac_convolution(W2, src[x-2:5:1][y-2:5:1]);
            boxed[x][y] = parac_matrix_sum(src[x-2:5:1][y-2:5:1]);
        }
    }
}

/// Candidate sizes `(rows, cols)`: 1x1 and thin ones, sizes below, at and just above each width,
/// odd ones, and a few larger ones. Each mode keeps the legal ones ([`min_side`]).
const SIZES: [(usize, usize); 22] = [
    (1, 1),
    (1, 2),
    (2, 1),
    (1, 6),
    (6, 1),
    (2, 2),
    (2, 3),
    (3, 2),
    (3, 3),
    (3, 5),
    (4, 3),
    (4, 4),
    (4, 6),
    (5, 4),
    (5, 5),
    (6, 7),
    (7, 3),
    (8, 8),
    (9, 16),
    (13, 11),
    (17, 24),
    (33, 29),
];

/// The smallest side a mode of width `w` is defined on (docs/language.md, "Border rules:
/// shorthands"; the extrapolation reads indices 0..3 and S-4..S-1).
fn min_side(mode: Border) -> usize {
    match mode {
        Border::Extrapolate => 4,
        _ => 1,
    }
}

/// `[rows][cols]` weights `1, 2, ..` in row-major order, as the pipelines' constants.
fn weights(rows: usize, cols: usize) -> Matrix<i32> {
    Matrix::from_fn([rows, cols], |i| (i[0] * cols + i[1] + 1) as i32)
}

/// Runs the pipelines of one mode (`(width, mode, pipeline)` each) on every legal size and
/// compares the four outputs with the references.
fn check_mode(rt: &Runtime, name: &str, cases: &[(usize, Border, Pipeline)]) {
    let runtime = runtimes::name(rt);
    let mut failures = Failures::new();
    for &(w, mode, pipeline) in cases {
        let k = 2 * w + 1;
        let min = min_side(mode);
        let sizes: Vec<_> = SIZES
            .iter()
            .copied()
            .filter(|&(m, n)| m >= min && n >= min)
            .collect();
        assert!(sizes.len() >= 8, "{name} width {w}: only {sizes:?}");
        for (m, n) in sizes {
            let seed = data::seed_for(0xB0D3 + w as u64, m, n);
            let src = data::random_u8(m, n, seed);
            let mut rows = Matrix::<i32>::zeros([m, n]);
            let mut cols = Matrix::<i32>::zeros([m, n]);
            let mut both = Matrix::<i32>::zeros([m, n]);
            let mut boxed = Matrix::<i32>::zeros([m, n]);
            let ctx = |what: &str| {
                format!(
                    "{name} width {w}, {what}, on {runtime}, size {m}x{n} (random, seed {seed:#x})"
                )
            };
            if let Err(e) = pipeline(rt, &src, &mut rows, &mut cols, &mut both, &mut boxed) {
                failures.fail(format!("{}: returned an error: {e}", ctx("call")));
                continue;
            }
            failures.same(
                &ctx("rows only (point reads)"),
                &rows,
                &r::stencil(&src, &weights(k, 1), Some(mode), None),
            );
            failures.same(
                &ctx("columns only (convolution of a window)"),
                &cols,
                &r::stencil(&src, &weights(1, k), None, Some(mode)),
            );
            failures.same(
                &ctx("2-D with corners (convolution of a window)"),
                &both,
                &r::stencil(&src, &weights(k, k), Some(mode), Some(mode)),
            );
            failures.same(
                &ctx("2-D with corners (parac_matrix_sum of a window)"),
                &boxed,
                &r::box_sum(&src, w, w, Some(mode), Some(mode)),
            );
        }
    }
    failures.finish();
}

on_every_runtime! {
    constant,
    replicate,
    reflect,
    reflect101,
    wrap,
    extrapolate,
    border_values_are_ints_in_int_arithmetic,
    border_values_wrap_when_stored_to_u8,
    gaussian_5x5_reflect101_on_tiny_images_is_opencvs,
}

parac::parac! {
    pub fn gauss5(src: &u8[M][N], dst: &mut i32[M][N]) {
        const G: i32[5][5] = [
            [1, 4, 6, 4, 1], [4, 16, 24, 16, 4], [6, 24, 36, 24, 6],
            [4, 16, 24, 16, 4], [1, 4, 6, 4, 1],
        ];
        parac_border_rule b = reflect101(src[2][2]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {
            dst[itx][ity] = parac_convolution(G, src[itx-2:5:1][ity-2:5:1]);
        }
    }
}

/// A 5x5 window on images smaller than it: what `cv2.sepFilter2D(src, -1, k, k,
/// borderType=cv2.BORDER_REFLECT_101)` with `k = [1, 4, 6, 4, 1]` gives (OpenCV 5.0.0, run once
/// on `src[i][j] = (37 (i N + j) + 11) % 251`; the sums are exact in its f64 arithmetic).
fn gaussian_5x5_reflect101_on_tiny_images_is_opencvs(rt: &Runtime) {
    let opencv: [(usize, usize, &[i32]); 4] = [
        (1, 1, &[2816]),
        (1, 2, &[7552, 7552]),
        (2, 3, &[24128, 26496, 28864, 24128, 26496, 28864]),
        (3, 2, &[21760, 21760, 26496, 26496, 31232, 31232]),
    ];
    for (m, n, want) in opencv {
        let src = Matrix::from_fn([m, n], |i| ((37 * (i[0] * n + i[1]) + 11) % 251) as u8);
        let mut dst = Matrix::<i32>::zeros([m, n]);
        gauss5(rt, &src, &mut dst).unwrap_or_else(|e| panic!("{m}x{n}: {e}"));
        assert_eq!(dst.as_slice(), want, "{m}x{n} on {}", runtimes::name(rt));
    }
}

fn constant(rt: &Runtime) {
    let c = |i: usize| Border::Constant(CONSTANTS[i]);
    check_mode(
        rt,
        "constant",
        &[
            (1, c(0), constant_1),
            (2, c(1), constant_2),
            (3, c(2), constant_3),
        ],
    );
}

fn replicate(rt: &Runtime) {
    let b = Border::Replicate;
    check_mode(
        rt,
        "replicate",
        &[
            (1, b, replicate_1),
            (2, b, replicate_2),
            (3, b, replicate_3),
        ],
    );
}

fn reflect(rt: &Runtime) {
    let b = Border::Reflect;
    check_mode(
        rt,
        "reflect",
        &[(1, b, reflect_1), (2, b, reflect_2), (3, b, reflect_3)],
    );
}

fn reflect101(rt: &Runtime) {
    let b = Border::Reflect101;
    check_mode(
        rt,
        "reflect101",
        &[
            (1, b, reflect101_1),
            (2, b, reflect101_2),
            (3, b, reflect101_3),
        ],
    );
}

fn wrap(rt: &Runtime) {
    let b = Border::Wrap;
    check_mode(
        rt,
        "wrap",
        &[(1, b, wrap_1), (2, b, wrap_2), (3, b, wrap_3)],
    );
}

fn extrapolate(rt: &Runtime) {
    let b = Border::Extrapolate;
    check_mode(
        rt,
        "linear extrapolation",
        &[(1, b, extrapolate_1), (2, b, extrapolate_2)],
    );
}

// ---- border values outside the element type ---------------------------------------------------

parac::parac! {
    /// Border values outside `0..=255` on a `u8` matrix, used in `int` arithmetic: the reads see
    /// the `int` values, not their low bytes. `b`'s left column is in `-1000..=20`, its right
    /// column in `300..=555`; `k` is a constant row of -1000 above and below.
    pub fn wide_border_arithmetic(
        src: &u8[M][N],
        points: &mut i32[M][N],
        shifted: &mut i32[M][N],
        wsum: &mut i32[M][N],
        wmin: &mut i32[M][N],
        wmax: &mut i32[M][N],
        wmean: &mut i32[M][N],
        ksum: &mut i32[M][N],
    ) {
        parac_border_rule b {
            src[*][-1] = src[*][0] * 4 - 1000;
            src[*][+1] = src[*][N-1] + 300;
        }
        parac_border_rule k = constant(src[1][*], -1000);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
            points[x][y] = src[x][y-1] * 3 + src[x][y+1] - src[x][y];
            shifted[x][y] = (src[x][y+1] >> 1) + (src[x][y-1] >> 2);
            wsum[x][y] = parac_matrix_sum(src[x][y-1:3:1]);
            wmin[x][y] = parac_matrix_min(src[x][y-1:3:1]);
            wmax[x][y] = parac_matrix_max(src[x][y-1:3:1]);
            wmean[x][y] = parac_matrix_mean(src[x][y-1:3:1]);
        }
        parac_iterator it2(x in 0:M:1; y in 0:N:1) parac_border_rule(k) {
            ksum[x][y] = parac_matrix_sum(src[x-1:3:1][y]) + src[x+1][y] / 7;
        }
    }

    /// The same border values stored directly into outputs: into `u8` they keep the low byte
    /// (the store wraps, as in C); into `i16` they are kept; a `let t: u8` converts like a store.
    pub fn wide_border_stores(
        src: &u8[M][N],
        left8: &mut u8[M][N],
        right8: &mut u8[M][N],
        left16: &mut i16[M][N],
        via_let: &mut i32[M][N],
    ) {
        parac_border_rule b {
            src[*][-1] = src[*][0] * 4 - 1000;
            src[*][+1] = src[*][N-1] + 300;
        }
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
            left8[x][y] = src[x][y-1];
            right8[x][y] = src[x][y+1];
            left16[x][y] = src[x][y-1];
            let t: u8 = src[x][y+1];
            via_let[x][y] = t + 0;
        }
    }
}

/// Sizes of the two tests below (the rules read columns 0 and N-1, rows 0..M-1).
const WIDE_SIZES: [(usize, usize); 6] = [(1, 1), (1, 4), (3, 1), (2, 3), (7, 9), (16, 13)];

/// `src[x][y]` with `wide_border_*`'s rule `b` on the columns, as the `int` it must be read as.
fn wide_b(src: &Matrix<u8>, x: usize, y: isize) -> i32 {
    let n = src.shape()[1] as isize;
    let s = |c: usize| i32::from(src.get(&[x, c]));
    match y {
        -1 => s(0) * 4 - 1000,
        y if y == n => s(n as usize - 1) + 300,
        y => s(y as usize),
    }
}

/// `src[x][y]` with `wide_border_arithmetic`'s rule `k` (constant -1000 rows).
fn wide_k(src: &Matrix<u8>, x: isize, y: usize) -> i32 {
    if (0..src.shape()[0] as isize).contains(&x) {
        i32::from(src.get(&[x as usize, y]))
    } else {
        -1000
    }
}

/// A `[m][n]` matrix of `f(x, y)`.
fn per_pixel<T: parac::Element>(m: usize, n: usize, f: impl Fn(usize, isize) -> T) -> Matrix<T> {
    Matrix::from_fn([m, n], |i| f(i[0], i[1] as isize))
}

fn border_values_are_ints_in_int_arithmetic(rt: &Runtime) {
    let runtime = runtimes::name(rt);
    let mut failures = Failures::new();
    for (m, n) in WIDE_SIZES {
        // Bytes near 0 and 255 make the border values reach both ends of their ranges.
        let seed = data::seed_for(0x1DE, m, n);
        let mut src = data::random_u8(m, n, seed);
        src.as_mut_slice()[0] = 255;
        let last = src.len() - 1;
        src.as_mut_slice()[last] = 255;
        let out = || Matrix::<i32>::zeros([m, n]);
        let (mut points, mut shifted, mut wsum) = (out(), out(), out());
        let (mut wmin, mut wmax, mut wmean, mut ksum) = (out(), out(), out(), out());
        let ctx =
            |what: &str| format!("wide_border_arithmetic `{what}` on {runtime}, size {m}x{n}");
        if let Err(e) = wide_border_arithmetic(
            rt,
            &src,
            &mut points,
            &mut shifted,
            &mut wsum,
            &mut wmin,
            &mut wmax,
            &mut wmean,
            &mut ksum,
        ) {
            failures.fail(format!("{}: returned an error: {e}", ctx("call")));
            continue;
        }
        let b = |x: usize, y: isize| wide_b(&src, x, y);
        let window = |x: usize, y: isize| [b(x, y - 1), b(x, y), b(x, y + 1)];
        failures.same(
            &ctx("points"),
            &points,
            &per_pixel(m, n, |x, y| b(x, y - 1) * 3 + b(x, y + 1) - b(x, y)),
        );
        failures.same(
            &ctx("shifted"),
            &shifted,
            &per_pixel(m, n, |x, y| (b(x, y + 1) >> 1) + (b(x, y - 1) >> 2)),
        );
        failures.same(
            &ctx("wsum"),
            &wsum,
            &per_pixel(m, n, |x, y| window(x, y).iter().sum()),
        );
        failures.same(
            &ctx("wmin"),
            &wmin,
            &per_pixel(m, n, |x, y| *window(x, y).iter().min().unwrap()),
        );
        failures.same(
            &ctx("wmax"),
            &wmax,
            &per_pixel(m, n, |x, y| *window(x, y).iter().max().unwrap()),
        );
        failures.same(
            &ctx("wmean"),
            &wmean,
            &per_pixel(m, n, |x, y| window(x, y).iter().sum::<i32>() / 3),
        );
        let k = |x: isize, y: usize| wide_k(&src, x, y);
        failures.same(
            &ctx("ksum"),
            &ksum,
            &per_pixel(m, n, |x, y| {
                let (x, y) = (x as isize, y as usize);
                k(x - 1, y) + k(x, y) + k(x + 1, y) + k(x + 1, y) / 7
            }),
        );
    }
    failures.finish();
}

fn border_values_wrap_when_stored_to_u8(rt: &Runtime) {
    let runtime = runtimes::name(rt);
    let mut failures = Failures::new();
    for (m, n) in WIDE_SIZES {
        let seed = data::seed_for(0x57, m, n);
        let mut src = data::random_u8(m, n, seed);
        src.as_mut_slice()[0] = 0;
        let mut left8 = Matrix::<u8>::zeros([m, n]);
        let mut right8 = Matrix::<u8>::zeros([m, n]);
        let mut left16 = Matrix::<i16>::zeros([m, n]);
        let mut via_let = Matrix::<i32>::zeros([m, n]);
        let ctx = |what: &str| format!("wide_border_stores `{what}` on {runtime}, size {m}x{n}");
        if let Err(e) =
            wide_border_stores(rt, &src, &mut left8, &mut right8, &mut left16, &mut via_let)
        {
            failures.fail(format!("{}: returned an error: {e}", ctx("call")));
            continue;
        }
        let b = |x: usize, y: isize| wide_b(&src, x, y);
        failures.same(
            &ctx("left8"),
            &left8,
            &per_pixel(m, n, |x, y| b(x, y - 1) as u8),
        );
        failures.same(
            &ctx("right8"),
            &right8,
            &per_pixel(m, n, |x, y| b(x, y + 1) as u8),
        );
        failures.same(
            &ctx("left16"),
            &left16,
            &per_pixel(m, n, |x, y| b(x, y - 1) as i16),
        );
        failures.same(
            &ctx("via_let"),
            &via_let,
            &per_pixel(m, n, |x, y| i32::from(b(x, y + 1) as u8)),
        );
        // The wrap is visible: src[0][0] = 0, so column 0 of row 0 reads -1000, stored as
        // -1000 into i16 and as its low byte 24 into u8.
        failures.expect(
            (left16.get(&[0, 0]), left8.get(&[0, 0])) == (-1000, 24),
            || {
                format!(
                    "{}: got ({}, {}), expected (-1000, 24)",
                    ctx("left16, left8 at [0, 0]"),
                    left16.get(&[0, 0]),
                    left8.get(&[0, 0])
                )
            },
        );
    }
    failures.finish();
}
