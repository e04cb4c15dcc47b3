//! Tests of the reference implementations themselves (`tests/common/reference.rs`) on small cases
//! computed by hand from `shared/APPS.md`, and of the test data (`tests/common/data.rs`): the
//! pipeline tests trust these references, so they must be right on their own.

// Hand computations are written out in full (`0 + 4 + 0 + 4 + 2`), sizes as APPS.md writes
// them (`(M+1)/2`).
#![allow(clippy::identity_op, clippy::manual_div_ceil)]

mod common;

use common::check::{assert_close, assert_same};
use common::data;
use common::reference::{self as r, Border};
use parac::Matrix;

/// A 2-D matrix from its rows.
fn m2<T: parac::Element, R: AsRef<[T]>>(rows: &[R]) -> Matrix<T> {
    let cols = rows[0].as_ref().len();
    let data = rows
        .iter()
        .flat_map(|row| row.as_ref().iter().copied())
        .collect();
    Matrix::from_vec([rows.len(), cols], data).expect("rectangular")
}

fn constant<T: parac::Element>(shape: &[usize], v: T) -> Matrix<T> {
    Matrix::from_fn(shape, |_| v)
}

// ---- laplacian -------------------------------------------------------------------------------

#[test]
fn laplacian_of_a_constant_image_is_zero_and_down_is_the_constant() {
    // On a constant c every border formula gives c (4c - 4c + 2c - c, 2c - c), so h, down and up
    // are c and lap is 0 everywhere, borders included.
    for (m, n) in [(4, 4), (4, 5), (5, 4), (7, 9), (8, 8), (13, 6)] {
        for c in [0u8, 1, 77, 255] {
            let s = r::laplacian_stages(&constant(&[m, n], c));
            assert_same("h", &s.h, &constant(&[m, n], c));
            assert_same(
                "down",
                &s.down,
                &constant(&[m.div_ceil(2), n.div_ceil(2)], c),
            );
            assert_same("up", &s.up, &constant(&[m, n], i32::from(c)));
            assert_same("lap", &s.lap, &constant(&[m, n], 0i16));
        }
    }
}

#[test]
fn laplacian_down_has_half_the_size_rounded_up() {
    for (m, n) in data::sweep_laplacian() {
        let (lap, down) = r::laplacian(&data::random_u8(m, n, 1));
        assert_eq!(lap.shape(), &[m, n]);
        assert_eq!(down.shape(), &[(m + 1) / 2, (n + 1) / 2], "{m}x{n}");
    }
}

#[test]
fn laplacian_of_a_4x4_ramp_by_hand() {
    // Every row is 0 10 20 30. Row extension by `br`:
    //   [-2] = 30*4 - 10*4 + 0*2 - 20 = 60,  [-1] = 10*2 - 30 = -10,
    //   [4]  = 20*2 - 0 = 40,                [5]  = 0*4 - 20*4 + 30*2 - 10 = -30,
    // so the extended row is 60 -10 | 0 10 20 30 | 40 -30 and
    //   h[0] = (60 - 40 + 0 + 40 + 20 + 8) / 16 = 88 / 16 = 5
    //   h[1] = (-10 + 0 + 60 + 80 + 30 + 8) / 16 = 168 / 16 = 10
    //   h[2] = (0 + 40 + 120 + 120 + 40 + 8) / 16 = 328 / 16 = 20
    //   h[3] = (10 + 80 + 180 + 160 - 30 + 8) / 16 = 408 / 16 = 25.
    // The rows of h are all equal, so `br1` extends them by themselves and down[i][j] = h[2j]:
    // down = [[5, 20], [5, 20]]. Upsample along a row (Nd = 2):
    //   y=0: (5*4 + 2)/4 = 5; y=1: (5 + 20 + 5 + 20 + 2)/4 = 13; y=2, y=3: (20*4 + 2)/4 = 20,
    // lap = src - up = -5 -3 0 10.
    let src = m2::<u8, _>(&[&[0, 10, 20, 30]; 4]);
    let s = r::laplacian_stages(&src);
    assert_same("h", &s.h, &m2(&[&[5u8, 10, 20, 25]; 4]));
    assert_same("down", &s.down, &m2(&[&[5u8, 20]; 2]));
    assert_same("up", &s.up, &m2(&[&[5i32, 13, 20, 20]; 4]));
    assert_same("lap", &s.lap, &m2(&[&[-5i16, -3, 0, 10]; 4]));
    // The same image transposed: the vertical pass does the same work.
    let t = Matrix::<u8>::from_fn([4, 4], |i| src.get(&[i[1], i[0]]));
    let (lap, down) = r::laplacian(&t);
    assert_same("down (transposed)", &down, &m2(&[&[5u8, 5], &[20, 20]]));
    assert_same(
        "lap (transposed)",
        &lap,
        &Matrix::from_fn([4, 4], |i| s.lap.get(&[i[1], i[0]])),
    );
}

#[test]
fn laplacian_upsample_clamps_at_the_last_row_and_column_for_odd_sizes() {
    // 5x5 -> down 3x3; rows 4 and column 4 read down row/column 2 only.
    let down = m2::<u8, _>(&[&[0, 4, 8], &[40, 44, 48], &[80, 84, 88]]);
    let up = r::upsample_laplacian(&down, 5, 5);
    // up[x][y]: y0 = x/2, y1 = min((x+1)/2, 2), x0 = y/2, x1 = min((y+1)/2, 2).
    assert_eq!(up.get(&[0, 0]), 0);
    assert_eq!(up.get(&[0, 1]), (0 + 4 + 0 + 4 + 2) / 4); // 2
    assert_eq!(up.get(&[1, 1]), (0 + 4 + 40 + 44 + 2) / 4); // 22
    assert_eq!(up.get(&[3, 3]), (44 + 48 + 84 + 88 + 2) / 4); // 66
    assert_eq!(up.get(&[4, 4]), 88);
    assert_eq!(up.get(&[4, 3]), (84 + 88 + 84 + 88 + 2) / 4); // 86
}

#[test]
fn laplacian_reconstructs_the_source_on_every_sweep_size() {
    // lap = src - up(down) fits an i16 (-255..=255), so up(down) + lap gives src back exactly:
    // the example's reconstruction check.
    for (m, n) in data::sweep_laplacian().into_iter().take(12) {
        let src = data::random_u8(m, n, data::seed_for(7, m, n));
        let (lap, down) = r::laplacian(&src);
        assert_same(
            &format!("reconstruction {m}x{n}"),
            &r::reconstruct_laplacian(&lap, &down),
            &src.map(i32::from),
        );
    }
    let (laps, last) = r::laplacian_pyramid(&data::random_u8(37, 50, 3), 10);
    let sizes: Vec<_> = laps.iter().map(|l| l.shape().to_vec()).collect();
    assert_eq!(
        sizes,
        [vec![37, 50], vec![19, 25], vec![10, 13], vec![5, 7]]
    );
    assert_eq!(last.shape(), &[3, 4]);
}

#[test]
fn linear_extrapolation_by_hand() {
    // The line 0 1 2 3: [-2] = 3*4 - 1*4 + 0*2 - 2 = 6 (the formula is not a straight line
    // outward at -2), [-1] = 1*2 - 3 = -1, [4] = 2*2 - 0 = 4, [5] = 0*4 - 2*4 + 3*2 - 1 = -3.
    let v = [0, 1, 2, 3];
    let got: Vec<i32> = (-2..6).map(|p| r::extrapolate(4, p, |i| v[i])).collect();
    assert_eq!(got, [6, -1, 0, 1, 2, 3, 4, -3]);
    // Values are ints, not clamped to u8: 0 255 0 255 gives [-1] = 2*255 - 255 = 255,
    // [-2] = 255*4 - 255*4 + 0 - 0 = 0; 255 0 255 0 gives [-1] = 0 - 0 = 0,
    // [-2] = 0 - 0 + 510 - 255 = 255, [4] = 255*2 - 255 = 255, [5] = 1020 - 1020 + 0 - 0 = 0.
    let a = [255, 0, 255, 0];
    let got: Vec<i32> = (-2..6).map(|p| r::extrapolate(4, p, |i| a[i])).collect();
    assert_eq!(got, [255, 0, 255, 0, 255, 0, 255, 0]);
    let b = [0, 0, 0, 255];
    assert_eq!(r::extrapolate(4, -1, |i| b[i]), -255);
    assert_eq!(r::extrapolate(4, -2, |i| b[i]), 1020);
    let c = [9, 0, 0, 0, 0, 0, 200];
    assert_eq!(r::extrapolate(7, 7, |i| c[i]), 0);
    assert_eq!(r::extrapolate(7, 8, |i| c[i]), 400);
}

#[test]
fn laplacian_h_and_down_agree_with_the_generic_stencil_under_extrapolation() {
    // Two independent codings of `br` / `br1`: laplacian's own and `border_value`'s.
    let fh = Matrix::<i32>::from_vec([1, 5], r::F.to_vec()).unwrap();
    let fv = Matrix::<i32>::from_vec([5, 1], r::F.to_vec()).unwrap();
    for (m, n) in [(4, 4), (5, 7), (9, 6), (17, 23)] {
        let src = data::random_u8(m, n, data::seed_for(11, m, n));
        let s = r::laplacian_stages(&src);
        let h =
            r::stencil(&src, &fh, None, Some(Border::Extrapolate)).map(|v| ((v + 8) / 16) as u8);
        assert_same("h", &s.h, &h);
        let v = r::stencil(&s.h, &fv, Some(Border::Extrapolate), None);
        let down = Matrix::<u8>::from_fn([m.div_ceil(2), n.div_ceil(2)], |i| {
            // Row 2i of the vertical pass is centred on h row 2i (taps 2i-2 .. 2i+2).
            ((v.get(&[2 * i[0], 2 * i[1]]) + 8) / 16) as u8
        });
        assert_same("down", &s.down, &down);
    }
}

// ---- sharpen ---------------------------------------------------------------------------------

#[test]
fn sharpen_of_a_constant_image_is_that_constant() {
    // down = (16c + 8) >> 4 = c, up = (64c + 32) >> 6 = c, err = 0, edge = 0, pre = c.
    for (m, n) in [(8, 8), (8, 12), (12, 20)] {
        for c in [0u8, 1, 128, 254, 255] {
            let s = r::sharpen_stages(&constant(&[m, n], c));
            assert_same("down", &s.down, &constant(&[m / 4, n / 4], c));
            assert_same("up", &s.up, &constant(&[m, n], c));
            assert_same("edge", &s.edge, &constant(&[m, n], 0u8));
            assert_eq!(s.mean, 0);
            assert_same("out", &s.out, &constant(&[m, n], c));
        }
    }
}

#[test]
fn sharpen_down_and_up_of_an_8x8_ramp_by_hand() {
    // src[x][y] = 8x + y. Block (0,0) sums 4*8*(0+1+2+3) + 4*(0+1+2+3) = 216:
    // (216 + 8) >> 4 = 14. Block (0,1) adds 16*4: 280 -> 18. Block (1,0) adds 16*32: 728 -> 46.
    // Block (1,1): 792 -> 50.
    let src = Matrix::<u8>::from_fn([8, 8], |i| (8 * i[0] + i[1]) as u8);
    let s = r::sharpen_stages(&src);
    assert_same("down", &s.down, &m2(&[&[14u8, 18], &[46, 50]]));
    // Rows (and columns) of `up`: p = 0: t = -2, i0 = floor(-2/4) = -1, a = 2, weights 3, 5 on
    // rows clamp(-1) = 0 and 0; p = 2: i0 = 0, a = 0, weights 7, 1 on rows 0, 1; p = 3: 5, 3;
    // p = 4: 3, 5; p = 6: i0 = 1, weights 7, 1 on rows 1, clamp(2) = 1.
    // up[0][0] = (64*14 + 32) >> 6 = 14.
    assert_eq!(s.up.get(&[0, 0]), 14);
    // up[2][2] = (49*14 + 7*18 + 7*46 + 1*50 + 32) >> 6 = (1184 + 32) >> 6 = 19.
    assert_eq!(s.up.get(&[2, 2]), 19);
    // up[3][4] = (15*14 + 25*18 + 9*46 + 15*50 + 32) >> 6 = (1824 + 32) >> 6 = 29.
    assert_eq!(s.up.get(&[3, 4]), 29);
    // up[0][3] = (8*5*14 + 8*3*18 + 32) >> 6 = (992 + 32) >> 6 = 16.
    assert_eq!(s.up.get(&[0, 3]), 16);
    assert_eq!(s.up.get(&[7, 7]), 50);
    // With C division instead of floor, t = -2 would give i0 = 0, a = -2, weights 11, -3 and
    // up[0][0] = (121*14 - 33*18 - 33*46 + 9*50 + 32) >> 6 = 1: floor is what APPS.md says.
    assert_ne!(s.up.get(&[0, 0]), 1);
    assert_same(
        "err",
        &s.err,
        &Matrix::from_fn([8, 8], |i| i16::from(src.get(i)) - i16::from(s.up.get(i))),
    );
}

#[test]
fn sharpen_sobel_by_hand() {
    // A vertical step: columns 0..3 are 10, columns 4..7 are 50. At column 3 (left of the
    // step): gx = (50 + 100 + 50) - (10 + 20 + 10) = 160, gy = 0. At column 4: the same.
    // Elsewhere 0; the clamp at the top and bottom rows keeps gy = 0.
    let src = Matrix::<u8>::from_fn([8, 8], |i| if i[1] < 4 { 10 } else { 50 });
    let s = r::sharpen_stages(&src);
    let want = Matrix::<u8>::from_fn([8, 8], |i| if i[1] == 3 || i[1] == 4 { 160 } else { 0 });
    assert_same("edge", &s.edge, &want);
    // mean = 16 * 160 / 64 = 40.
    assert_eq!(s.mean, 40);
    // A step of 200 saturates: |gx| = 800 -> 255.
    let src = Matrix::<u8>::from_fn([8, 8], |i| if i[1] < 4 { 0 } else { 200 });
    assert_eq!(r::sharpen_stages(&src).edge.get(&[5, 3]), 255);
}

#[test]
fn sharpen_divides_negative_values_as_c_does() {
    // 100 everywhere except src[4][4] = 90 and src[4][5] = 135. At (5, 3):
    // - down[1][1] = (1600 - 10 + 35 + 8) >> 4 = 1633 >> 4 = 102, the other blocks are 100;
    // - up[5][3]: rows (p = 5: i0 = 0, a = 3) 0 and 1 weigh 1 and 7; columns (p = 3: a = 1) 0
    //   and 1 weigh 5 and 3: (5*100 + 3*100 + 35*100 + 21*102 + 32) >> 6 = 6474 >> 6 = 101;
    // - err = 100 - 101 = -1;
    // - Sobel: gx = (90 + 200 + 100) - 400 = -10, gy = 400 - (100 + 200 + 90) = 10, edge = 20;
    // - the edges sum to 600 (rows 3 and 5: 20 50 70 70, row 4: 20 70 20 70), mean = 600 / 64
    //   = 9;
    // - gain = min(20 * 16 / 25, 32) = 320 / 25 = 12;
    // - pre = 101 + (-1 * 28) / 16 = 101 + (-1) = 100 (C truncates -1.75 to -1; floor would
    //   give -2 and 99);
    // - lo = 90, hi = 100: out = clamp(clamp(100, 82, 108), 0, 255) = 100.
    let mut src = constant(&[8, 8], 100u8);
    src.set(&[4, 4], 90);
    src.set(&[4, 5], 135);
    let s = r::sharpen_stages(&src);
    assert_eq!(s.down.as_slice(), &[100, 100, 100, 102]);
    assert_eq!(s.up.get(&[5, 3]), 101);
    assert_eq!(s.err.get(&[5, 3]), -1);
    assert_eq!(s.edge.get(&[5, 3]), 20);
    assert_eq!(s.mean, 9);
    assert_eq!(s.gain.get(&[5, 3]), 12);
    assert_eq!(s.pre.get(&[5, 3]), 100);
    assert_eq!(s.out.get(&[5, 3]), 100);

    // The rule on every pixel of a random image, against the stage values themselves.
    let src = data::random_u8(12, 16, 5);
    let s = r::sharpen_stages(&src);
    let mut negative_inexact = 0;
    for x in 0..12 {
        for y in 0..16 {
            let prod = i32::from(s.err.get(&[x, y])) * (16 + s.gain.get(&[x, y]));
            let up = i32::from(s.up.get(&[x, y]));
            // C: truncation toward zero, i.e. -(|prod| / 16) for a negative product.
            let q = if prod < 0 { -(-prod / 16) } else { prod / 16 };
            assert_eq!(s.pre.get(&[x, y]), up + q);
            if prod < 0 && prod % 16 != 0 {
                negative_inexact += 1;
                assert_ne!(s.pre.get(&[x, y]), up + prod.div_euclid(16));
            }
        }
    }
    assert!(
        negative_inexact > 0,
        "the random image exercises inexact negative quotients"
    );
}

#[test]
fn sharpen_overshoot_is_clamped_to_the_window() {
    // Every output lies within [min - 8, max + 8] of its 3x3 clamped window and in 0..=255.
    for (m, n) in [(8, 8), (12, 20), (36, 52)] {
        let src = data::structured_u8(m, n, 9);
        let out = r::sharpen(&src);
        for x in 0..m {
            for y in 0..n {
                let mut lo = 255;
                let mut hi = 0;
                for dx in -1..=1isize {
                    for dy in -1..=1isize {
                        let xx = (x as isize + dx).clamp(0, m as isize - 1) as usize;
                        let yy = (y as isize + dy).clamp(0, n as isize - 1) as usize;
                        lo = lo.min(i32::from(src.get(&[xx, yy])));
                        hi = hi.max(i32::from(src.get(&[xx, yy])));
                    }
                }
                let o = i32::from(out.get(&[x, y]));
                assert!(
                    o >= lo - 8 && o <= hi + 8,
                    "({x},{y}): {o} outside {lo}-8..{hi}+8"
                );
            }
        }
    }
}

// ---- blur ------------------------------------------------------------------------------------

#[test]
fn blur_of_a_constant_image_is_that_constant() {
    for (m, n) in [(3, 3), (3, 4), (5, 7), (10, 3)] {
        for c in [0u16, 1, 2, 1000, 4095] {
            let out = r::blur(&constant(&[m, n], c));
            assert_same("blur", &out, &constant(&[m - 2, n - 2], c));
        }
    }
}

#[test]
fn blur_by_hand() {
    // Rows sum to 6, 15, 24: bx = 2, 5, 8; out = 15 / 3 = 5.
    let src = m2::<u16, _>(&[&[1, 2, 3], &[4, 5, 6], &[7, 8, 9]]);
    assert_eq!(r::blur_x(&src).as_slice(), &[2, 5, 8]);
    assert_eq!(r::blur(&src).as_slice(), &[5]);
    // Each pass truncates: row sums 2, 2, 5 give bx = 0, 0, 1 and out = 1 / 3 = 0, where one
    // division of the 9-sum would give 9 / 9 = 1.
    let src = m2::<u16, _>(&[&[1, 1, 0], &[1, 1, 0], &[2, 2, 1]]);
    assert_eq!(r::blur_x(&src).as_slice(), &[0, 0, 1]);
    assert_eq!(r::blur(&src).as_slice(), &[0]);
    // A 3x5 image: no border, the output is 1x3.
    let src = m2::<u16, _>(&[&[0, 3, 6, 9, 12], &[3, 6, 9, 12, 15], &[6, 9, 12, 15, 18]]);
    assert_eq!(r::blur_x(&src).shape(), &[3, 3]);
    assert_eq!(r::blur_x(&src).as_slice(), &[3, 6, 9, 6, 9, 12, 9, 12, 15]);
    assert_eq!(r::blur(&src).as_slice(), &[6, 9, 12]);
}

#[test]
fn blur_of_12_bit_extremes_does_not_overflow() {
    let src = Matrix::<u16>::from_fn([5, 6], |i| if (i[0] + i[1]) % 2 == 0 { 4095 } else { 0 });
    let out = r::blur(&src);
    // Row sums of three alternate between 2*4095 and 4095: bx = 2730, 1365.
    assert_eq!(r::blur_x(&src).get(&[0, 0]), 2730);
    assert_eq!(r::blur_x(&src).get(&[0, 1]), 1365);
    // out[0][0] = (2730 + 1365 + 2730) / 3 = 2275, out[0][1] = (1365 + 2730 + 1365) / 3 = 1820.
    assert_eq!(out.get(&[0, 0]), 2275);
    assert_eq!(out.get(&[0, 1]), 1820);
    assert_eq!(r::blur(&constant(&[4, 4], 4095u16)).as_slice(), &[4095; 4]);
}

// ---- unsharp ---------------------------------------------------------------------------------

#[test]
fn unsharp_taps_by_hand() {
    let k = r::unsharp_taps();
    // k0 = 1 / (sqrt(2 pi) * 1.5); k_i = k0 * exp(-i^2 / 4.5).
    let k0 = 1.0 / ((2.0 * std::f64::consts::PI).sqrt() * 1.5);
    assert!((k[0] - 0.265_961_520_267_621_8).abs() < 1e-15);
    assert!((k[0] - k0).abs() < 1e-15);
    assert!((k[1] - k0 * (-1.0f64 / 4.5).exp()).abs() < 1e-15);
    assert!((k[2] - k0 * (-4.0f64 / 4.5).exp()).abs() < 1e-15);
    assert!((k[3] - k0 * (-9.0f64 / 4.5).exp()).abs() < 1e-15);
    // Not renormalised: the 7 taps sum to about 0.98256, not 1.
    let s = k[0] + 2.0 * (k[1] + k[2] + k[3]);
    assert!((s - 0.982_560_249_216_333_7).abs() < 1e-12, "{s}");
}

#[test]
fn unsharp_of_a_constant_gray_image() {
    // With gray = g everywhere, each pass multiplies by S = k0 + 2(k1 + k2 + k3) (the taps are
    // not renormalised): by = S g, bx = S^2 g, ratio = (2g - S^2 g) / g = 2 - S^2 ~ 1.03458,
    // so out = (2 - S^2) img: out == img only up to that constant factor.
    let k = r::unsharp_taps();
    let s = k[0] + 2.0 * (k[1] + k[2] + k[3]);
    let factor = 2.0 - s * s;
    assert!((factor - 1.034_575_356_659_936).abs() < 1e-12);
    for (m, n) in [(1, 1), (2, 3), (7, 9), (12, 5)] {
        // Equal channels: a gray image.
        for v in [1.0f32 / 255.0, 0.5, 1.0] {
            let img = constant(&[3, m, n], v);
            let out = r::unsharp(&img);
            let want = constant(&[3, m, n], (factor * f64::from(v)) as f32);
            assert_close("constant gray", &out, &want, 1e-7);
        }
        // Different constant channels, the same gray everywhere: out[c] = (2 - S^2) img[c].
        let rgb = [0.2f32, 0.5, 0.9];
        let img = Matrix::<f32>::from_fn([3, m, n], |i| rgb[i[0]]);
        let st = r::unsharp_stages(&img);
        let g = 0.299 * f64::from(rgb[0]) + 0.587 * f64::from(rgb[1]) + 0.114 * f64::from(rgb[2]);
        for p in 0..m * n {
            assert!((st.gray[p] - g).abs() < 1e-15);
            assert!((st.by[p] - s * g).abs() < 1e-12);
            assert!((st.bx[p] - s * s * g).abs() < 1e-12);
        }
        let want = img.map(|v| (factor * f64::from(v)) as f32);
        assert_close("constant channels", &r::unsharp(&img), &want, 1e-7);
    }
}

#[test]
fn unsharp_clamps_to_the_edge_by_hand() {
    // One row (M = 1) of two gray pixels a, b: the vertical pass only sees the row itself
    // (clamped), by = S * gray. Horizontally, column 0 reads by[-3..-1] = by[0] and
    // by[1..3] = by[1]: bx[0] = (k0 + k1 + k2 + k3) by0 + (k1 + k2 + k3) by1, and
    // symmetrically bx[1] = (k1 + k2 + k3) by0 + (k0 + k1 + k2 + k3) by1.
    let (a, b) = (0.25f32, 0.75f32);
    let img = Matrix::<f32>::from_fn([3, 1, 2], |i| if i[2] == 0 { a } else { b });
    let k = r::unsharp_taps();
    let s = k[0] + 2.0 * (k[1] + k[2] + k[3]);
    let (ga, gb) = (f64::from(a), f64::from(b)); // equal channels: gray = the value (~1e-16)
    let (bya, byb) = (s * ga, s * gb);
    let side = k[1] + k[2] + k[3];
    let bx0 = (k[0] + side) * bya + side * byb;
    let bx1 = side * bya + (k[0] + side) * byb;
    let st = r::unsharp_stages(&img);
    assert!((st.by[0] - bya).abs() < 1e-12 && (st.by[1] - byb).abs() < 1e-12);
    assert!((st.bx[0] - bx0).abs() < 1e-12 && (st.bx[1] - bx1).abs() < 1e-12);
    let r0 = (2.0 * ga - bx0) / ga;
    let r1 = (2.0 * gb - bx1) / gb;
    let want = Matrix::<f32>::from_fn([3, 1, 2], |i| {
        if i[2] == 0 {
            (r0 * ga) as f32
        } else {
            (r1 * gb) as f32
        }
    });
    assert_close("1x2", &r::unsharp(&img), &want, 1e-7);
    // The dark pixel gets darker, the bright one brighter.
    assert!(r0 < 1.0 && r1 > 1.0);
}

#[test]
fn unsharp_is_symmetric_under_transposition() {
    // The blur is separable and the same both ways, so transposing the input transposes the
    // output (up to rounding of the different summation order).
    let img = data::random_rgb(9, 14, 4);
    let t = Matrix::<f32>::from_fn([3, 14, 9], |i| img.get(&[i[0], i[2], i[1]]));
    let out = r::unsharp(&img);
    let out_t = r::unsharp(&t);
    let back = Matrix::<f32>::from_fn([3, 9, 14], |i| out_t.get(&[i[0], i[2], i[1]]));
    assert_close("transposed", &back, &out, 1e-6);
}

// ---- border modes ----------------------------------------------------------------------------

/// `pad_index` over positions `from..to` of a dimension of size `n`.
fn indices(mode: Border, n: usize, from: isize, to: isize) -> Vec<Option<usize>> {
    (from..to).map(|p| r::pad_index(mode, p, n)).collect()
}

#[test]
fn pad_index_follows_the_patterns_of_the_language() {
    // docs/language.md: for `abcd` (n = 4), positions -3..7.
    let s = |v: &[usize]| v.iter().map(|&i| Some(i)).collect::<Vec<_>>();
    // aaa|abcd|ddd
    assert_eq!(
        indices(Border::Replicate, 4, -3, 7),
        s(&[0, 0, 0, 0, 1, 2, 3, 3, 3, 3])
    );
    // cba|abcd|dcb
    assert_eq!(
        indices(Border::Reflect, 4, -3, 7),
        s(&[2, 1, 0, 0, 1, 2, 3, 3, 2, 1])
    );
    // dcb|abcd|cba
    assert_eq!(
        indices(Border::Reflect101, 4, -3, 7),
        s(&[3, 2, 1, 0, 1, 2, 3, 2, 1, 0])
    );
    // bcd|abcd|abc
    assert_eq!(
        indices(Border::Wrap, 4, -3, 7),
        s(&[1, 2, 3, 0, 1, 2, 3, 0, 1, 2])
    );
    // vvv|abcd|vvv: no index outside.
    let c = indices(Border::Constant(7), 4, -3, 7);
    assert_eq!(
        c,
        [
            None,
            None,
            None,
            Some(0),
            Some(1),
            Some(2),
            Some(3),
            None,
            None,
            None
        ]
    );
    let e = indices(Border::Extrapolate, 4, -2, 6);
    assert_eq!(
        e,
        [None, None, Some(0), Some(1), Some(2), Some(3), None, None]
    );
    // APPS.md: reflect `fedcba|abcdef`, reflect-101 `gfedcb|abcdefgh`.
    assert_eq!(indices(Border::Reflect, 6, -6, 0), s(&[5, 4, 3, 2, 1, 0]));
    assert_eq!(
        indices(Border::Reflect101, 8, -6, 0),
        s(&[6, 5, 4, 3, 2, 1])
    );
    // The smallest legal sizes for width 3: reflect and wrap n >= 3, reflect101 n > 3.
    assert_eq!(
        indices(Border::Reflect, 3, -3, 6),
        s(&[2, 1, 0, 0, 1, 2, 2, 1, 0])
    );
    assert_eq!(
        indices(Border::Wrap, 3, -3, 6),
        s(&[0, 1, 2, 0, 1, 2, 0, 1, 2])
    );
    assert_eq!(indices(Border::Reflect101, 4, 4, 7), s(&[2, 1, 0]));
    // Width 1 on a single element.
    assert_eq!(indices(Border::Replicate, 1, -1, 2), s(&[0, 0, 0]));
    assert_eq!(indices(Border::Reflect, 1, -1, 2), s(&[0, 0, 0]));
    assert_eq!(indices(Border::Wrap, 1, -1, 2), s(&[0, 0, 0]));
}

#[test]
fn reflections_and_wraps_repeat_past_a_small_side() {
    // OpenCV's borderInterpolate: reflect or wrap again until inside.
    assert_eq!(r::pad_index(Border::Reflect101, -3, 3), Some(1));
    assert_eq!(r::pad_index(Border::Reflect101, -5, 1), Some(0));
    assert_eq!(r::pad_index(Border::Reflect101, 7, 2), Some(1));
    assert_eq!(r::pad_index(Border::Reflect, -4, 3), Some(2));
    assert_eq!(r::pad_index(Border::Reflect, 6, 2), Some(1));
    // Side +4 of a dimension of 3.
    assert_eq!(r::pad_index(Border::Wrap, 6, 3), Some(0));
    assert_eq!(r::pad_index(Border::Wrap, -7, 3), Some(2));
}

#[test]
fn padded_2d_corners_by_hand() {
    // a b c
    // d e f
    let src = m2::<u8, _>(&[&[1, 2, 3], &[4, 5, 6]]);
    let p = |mode| r::padded(&src, Some(mode), Some(mode), 1, 1);
    assert_same(
        "replicate",
        &p(Border::Replicate),
        &m2(&[
            &[1, 1, 2, 3, 3],
            &[1, 1, 2, 3, 3],
            &[4, 4, 5, 6, 6],
            &[4, 4, 5, 6, 6],
        ]),
    );
    assert_same(
        "reflect101",
        &p(Border::Reflect101),
        &m2(&[
            &[5, 4, 5, 6, 5],
            &[2, 1, 2, 3, 2],
            &[5, 4, 5, 6, 5],
            &[2, 1, 2, 3, 2],
        ]),
    );
    assert_same(
        "wrap",
        &p(Border::Wrap),
        &m2(&[
            &[6, 4, 5, 6, 4],
            &[3, 1, 2, 3, 1],
            &[6, 4, 5, 6, 4],
            &[3, 1, 2, 3, 1],
        ]),
    );
    assert_same(
        "constant",
        &p(Border::Constant(-1)),
        &m2(&[
            &[-1, -1, -1, -1, -1],
            &[-1, 1, 2, 3, -1],
            &[-1, 4, 5, 6, -1],
            &[-1, -1, -1, -1, -1],
        ]),
    );
    // Width 2 reflect on the columns only (rows: none, 1-D).
    assert_same(
        "reflect columns",
        &r::padded(&src, None, Some(Border::Reflect), 0, 2),
        &m2(&[&[2, 1, 1, 2, 3, 3, 2], &[5, 4, 4, 5, 6, 6, 5]]),
    );
    // Width 2 replicate on the rows only.
    assert_same(
        "replicate rows",
        &r::padded(&src, Some(Border::Replicate), None, 2, 0),
        &m2(&[
            &[1, 2, 3],
            &[1, 2, 3],
            &[1, 2, 3],
            &[4, 5, 6],
            &[4, 5, 6],
            &[4, 5, 6],
        ]),
    );
}

#[test]
fn extrapolated_corners_are_separable() {
    // On a 4x4 image whose rows are the line 0 1 2 3 scaled by the row number + 1, the corner
    // (-1, -1) extrapolates the column -1 values (-1 * (x + 1)) along the rows:
    // col[-1] of row x = 2 * (x+1) - 3 * (x+1) = -(x+1): -1, -2, -3, -4; then row -1 of that
    // column is 2 * (-2) - (-4) = 0. Computing rows first gives the same (linear).
    let src = Matrix::<i16>::from_fn([4, 4], |i| ((i[0] + 1) * i[1]) as i16);
    let v = |x, y| {
        r::border_value(
            &src,
            Some(Border::Extrapolate),
            Some(Border::Extrapolate),
            x,
            y,
        )
    };
    assert_eq!(v(0, -1), -1);
    assert_eq!(v(3, -1), -4);
    assert_eq!(v(-1, -1), 0);
    for x in -2..6isize {
        for y in -2..6isize {
            let rows_first = r::extrapolate(4, y, |c| {
                r::extrapolate(4, x, |rr| i32::from(src.get(&[rr, c])))
            });
            assert_eq!(v(x, y), i64::from(rows_first), "({x},{y})");
        }
    }
}

#[test]
fn box_sums_under_each_mode_by_hand() {
    let ones = constant(&[3, 3], 1u8);
    // Constant 0, 3x3: corners see 4 ones, edges 6, the centre 9.
    let zero = Some(Border::Constant(0));
    assert_same(
        "3x3 constant 0",
        &r::box_sum(&ones, 1, 1, zero, zero),
        &m2(&[&[4, 6, 4], &[6, 9, 6], &[4, 6, 4]]),
    );
    // Constant 2: each outside read adds 2 instead of 0: corners 4 + 5*2, edges 6 + 3*2.
    let two = Some(Border::Constant(2));
    assert_same(
        "3x3 constant 2",
        &r::box_sum(&ones, 1, 1, two, two),
        &m2(&[&[14, 12, 14], &[12, 9, 12], &[14, 12, 14]]),
    );
    // 5x5 on a 3x3 of ones with constant 0: every window holds the whole image.
    assert_same(
        "5x5 constant",
        &r::box_sum(&ones, 2, 2, zero, zero),
        &constant(&[3, 3], 9),
    );
    for mode in [
        Border::Replicate,
        Border::Reflect,
        Border::Reflect101,
        Border::Wrap,
    ] {
        assert_same(
            "ones",
            &r::box_sum(&ones, 1, 1, Some(mode), Some(mode)),
            &constant(&[3, 3], 9),
        );
    }

    // 1 2 3 / 4 5 6 / 7 8 9
    let src = m2::<u8, _>(&[&[1, 2, 3], &[4, 5, 6], &[7, 8, 9]]);
    // Wrap on a 3x3 with a 3x3 window: every window is a permutation of the image, sum 45.
    let w = Some(Border::Wrap);
    assert_same(
        "wrap",
        &r::box_sum(&src, 1, 1, w, w),
        &constant(&[3, 3], 45),
    );
    // Replicate at (0,0): rows 0 0 1, columns 0 0 1: 1+1+2 + 1+1+2 + 4+4+5 = 21.
    let rep = Some(Border::Replicate);
    let b = r::box_sum(&src, 1, 1, rep, rep);
    assert_eq!(b.get(&[0, 0]), 21);
    assert_eq!(b.get(&[1, 1]), 45);
    // (2,2): rows 1 2 2, columns 1 2 2: 5+6+6 + 8+9+9 + 8+9+9 = 69.
    assert_eq!(b.get(&[2, 2]), 69);
    // Reflect101 at (0,0): rows 1 0 1, columns 1 0 1: 5+4+5 + 2+1+2 + 5+4+5 = 33.
    let r101 = Some(Border::Reflect101);
    assert_eq!(r::box_sum(&src, 1, 1, r101, r101).get(&[0, 0]), 33);
    // Reflect at (0,0) equals replicate for width 1: 21.
    let rf = Some(Border::Reflect);
    assert_eq!(r::box_sum(&src, 1, 1, rf, rf).get(&[0, 0]), 21);
    // 1-D horizontal width 2 with reflect101 on a row of 4: 1 2 3 4 -> 3 2 | 1 2 3 4 | 3 2.
    let row = m2::<u8, _>(&[&[1, 2, 3, 4]]);
    let b = r::box_sum(&row, 0, 2, None, r101);
    assert_eq!(
        b.as_slice(),
        &[
            3 + 2 + 1 + 2 + 3,
            2 + 1 + 2 + 3 + 4,
            1 + 2 + 3 + 4 + 3,
            2 + 3 + 4 + 3 + 2
        ]
    );
    // 1-D vertical width 3 with wrap on a column of 3 values: every window is 7 values, the
    // column repeated: 2*(1+4+7) + the centre.
    let col = m2::<u8, _>(&[&[1], &[4], &[7]]);
    let b = r::box_sum(&col, 3, 0, w, None);
    assert_eq!(b.as_slice(), &[24 + 1, 24 + 4, 24 + 7]);
}

#[test]
fn stencil_with_signed_weights_by_hand() {
    // A horizontal difference [-1 0 1] with replicate: d[y] = src[y+1] - src[y-1].
    let src = m2::<u8, _>(&[&[10, 30, 60, 100]]);
    let k = Matrix::<i32>::from_vec([1, 3], vec![-1, 0, 1]).unwrap();
    let d = r::stencil(&src, &k, None, Some(Border::Replicate));
    assert_eq!(d.as_slice(), &[30 - 10, 60 - 10, 100 - 30, 100 - 60]);
}

// ---- test data -------------------------------------------------------------------------------

#[test]
fn the_generator_matches_the_pcg32_reference_output() {
    // pcg32-demo, seed 42, sequence 54.
    let mut rng = data::Rng::new(42);
    let got: Vec<u32> = (0..6).map(|_| rng.next_u32()).collect();
    assert_eq!(
        got,
        [
            0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e
        ]
    );
}

#[test]
fn random_images_are_deterministic_and_in_range() {
    assert_eq!(data::random_u8(5, 7, 1), data::random_u8(5, 7, 1));
    assert_ne!(data::random_u8(5, 7, 1), data::random_u8(5, 7, 2));
    let u = data::random_u8(64, 64, 3);
    assert!(u.as_slice().contains(&0) && u.as_slice().contains(&255));
    let w = data::random_u12(64, 64, 3);
    assert!(w.as_slice().iter().all(|&v| v <= 4095));
    assert!(w.as_slice().iter().any(|&v| v > 4000) && w.as_slice().iter().any(|&v| v < 100));
    let f = data::random_rgb(17, 9, 3);
    assert_eq!(f.shape(), &[3, 17, 9]);
    assert!(
        f.as_slice()
            .iter()
            .all(|&v| (1.0 / 255.0..=1.0).contains(&v))
    );
    let s = data::structured_u8(20, 30, 3);
    assert_eq!(s.shape(), &[20, 30]);
}

#[test]
fn sweeps_respect_the_constraints_and_cover_awkward_sizes() {
    let awkward = |sizes: &[(usize, usize)]| {
        assert!(
            sizes.iter().any(|&(m, n)| m % 2 == 1 && n % 2 == 1),
            "odd sides"
        );
        for w in [4, 8, 16] {
            assert!(
                sizes.iter().any(|&(m, n)| m % w != 0 && n % w != 0),
                "width {w}"
            );
        }
        assert!(
            sizes.iter().any(|&(m, n)| m * n >= 200 * 300),
            "a larger size"
        );
    };
    let l = data::sweep_laplacian();
    assert!(l.iter().all(|&(m, n)| m >= 4 && n >= 4));
    assert!(l.contains(&(4, 4)));
    awkward(&l);
    let s = data::sweep_sharpen();
    assert!(
        s.iter()
            .all(|&(m, n)| m % 4 == 0 && n % 4 == 0 && m >= 8 && n >= 8)
    );
    assert!(s.contains(&(8, 8)));
    assert!(s.iter().any(|&(m, n)| m % 8 != 0 && n % 8 != 0));
    assert!(s.iter().any(|&(m, n)| m % 16 != 0 && n % 16 != 0));
    assert!(s.iter().any(|&(m, n)| m * n >= 200 * 300));
    let b = data::sweep_blur();
    assert!(b.iter().all(|&(m, n)| m >= 3 && n >= 3));
    assert!(b.contains(&(3, 3)));
    awkward(&b);
    // The outputs too are not multiples of the vector widths.
    let out: Vec<_> = b.iter().map(|&(m, n)| (m - 2, n - 2)).collect();
    awkward(&out);
    let u = data::sweep_unsharp();
    assert!(u.contains(&(1, 1)));
    awkward(&u);
}

#[test]
fn the_shipped_photographs_load() {
    let cam = data::camera_u8();
    assert_eq!(cam.shape(), &[512, 512]);
    let cam12 = data::camera_u12();
    assert_eq!(cam12.shape(), &[512, 512]);
    for (b, w) in cam.as_slice().iter().zip(cam12.as_slice()) {
        assert_eq!(u32::from(*w), (u32::from(*b) * 257) >> 4);
    }
    let coffee = data::coffee_rgb();
    assert_eq!(coffee.shape(), &[3, 400, 600]);
    assert!(
        coffee
            .as_slice()
            .iter()
            .all(|&v| (1.0 / 255.0..=1.0).contains(&v))
    );
    assert_eq!(data::coffee_u8().shape(), &[400, 600]);
    assert_eq!(data::coffee_u12().shape(), &[400, 600]);
    // The references run on them (sizes: camera is a multiple of 4; coffee 400x600 too).
    assert_eq!(r::sharpen(&data::crop(&cam, 64, 96)).shape(), &[64, 96]);
    let (lap, down) = r::laplacian(&data::crop(&cam, 61, 47));
    assert_eq!((lap.shape(), down.shape()), (&[61, 47][..], &[31, 24][..]));
    assert_eq!(r::blur(&data::crop(&cam12, 40, 33)).shape(), &[38, 31]);
    assert_eq!(
        r::unsharp(&data::crop_planes(&coffee, 20, 30)).shape(),
        &[3, 20, 30]
    );
}
