//! Plain reference implementations of the four benchmark pipelines (`shared/APPS.md`) and of the
//! standard border modes, written from the formulas as directly as possible, one element at a
//! time. They are slow on purpose: what matters is that they are obviously right.
//!
//! Integer arithmetic follows C as APPS.md says: operands are promoted to `i32`, `/` truncates
//! toward zero (Rust's `/` on `i32` does the same), `>>` on `i32` is arithmetic (Rust's too), and
//! storing into a narrower type keeps the low bits (`as`).

#![allow(dead_code)]
// The sizes are written as APPS.md writes them (`(M+1)/2`), not as `div_ceil`.
#![allow(clippy::manual_div_ceil)]

use parac::Matrix;

/// `src[x][y]` of a 2-D `u8` matrix as a C `int`.
fn at(m: &Matrix<u8>, x: usize, y: usize) -> i32 {
    i32::from(m.get(&[x, y]))
}

// -----------------------------------------------------------------------------------------------
// 1. laplacian
// -----------------------------------------------------------------------------------------------

/// The filter of `laplacian`.
pub const F: [i32; 5] = [1, 4, 6, 4, 1];

/// The paper's linear extrapolation (laplacian's `br`): the value at position `p` in
/// `-2..n+2` of a line of `n >= 4` values `v(0..n)`, as a C `int` (not clamped).
///
/// `v[-2] = v[3]*4 - v[1]*4 + v[0]*2 - v[2]`, `v[-1] = v[1]*2 - v[3]`,
/// `v[n] = v[n-2]*2 - v[n-4]`, `v[n+1] = v[n-4]*4 - v[n-2]*4 + v[n-1]*2 - v[n-3]`.
///
/// # Panics
/// If `n < 4` or `p` is outside `-2..n+2`.
pub fn extrapolate(n: usize, p: isize, v: impl Fn(usize) -> i32) -> i32 {
    assert!(n >= 4, "linear extrapolation needs 4 values, got {n}");
    let n_i = n as isize;
    match p {
        -2 => v(3) * 4 - v(1) * 4 + v(0) * 2 - v(2),
        -1 => v(1) * 2 - v(3),
        p if (0..n_i).contains(&p) => v(p as usize),
        p if p == n_i => v(n - 2) * 2 - v(n - 4),
        p if p == n_i + 1 => v(n - 4) * 4 - v(n - 2) * 4 + v(n - 1) * 2 - v(n - 3),
        _ => panic!("linear extrapolation reaches 2 beyond each end, not {p} of 0..{n}"),
    }
}

/// Every intermediate of one `laplacian` level.
pub struct LaplacianStages {
    /// `h: u8[M][N]`, the horizontally filtered `src`.
    pub h: Matrix<u8>,
    /// `down: u8[(M+1)/2][(N+1)/2]`.
    pub down: Matrix<u8>,
    /// `up: [M][N]`, the bilinear upsample of `down` (as the `int` values the formula gives).
    pub up: Matrix<i32>,
    /// `lap: i16[M][N] = src - up`.
    pub lap: Matrix<i16>,
}

/// One `laplacian` level with its intermediates (APPS.md §1).
pub fn laplacian_stages(src: &Matrix<u8>) -> LaplacianStages {
    let (m, n) = (src.shape()[0], src.shape()[1]);
    assert_eq!(src.ndim(), 2);
    assert!(m >= 4 && n >= 4, "laplacian needs M, N >= 4, got {m}x{n}");

    // Border rule `br` on the columns of `src`, written out as in APPS.md.
    let src_br = |r: usize, c: isize| -> i32 {
        let s = |y: usize| at(src, r, y);
        let n_i = n as isize;
        if c == -2 {
            s(3) * 4 - s(1) * 4 + s(0) * 2 - s(2)
        } else if c == -1 {
            s(1) * 2 - s(3)
        } else if c == n_i {
            s(n - 2) * 2 - s(n - 4)
        } else if c == n_i + 1 {
            s(n - 4) * 4 - s(n - 2) * 4 + s(n - 1) * 2 - s(n - 3)
        } else {
            s(c as usize)
        }
    };
    let h = Matrix::<u8>::from_fn([m, n], |i| {
        let (x, y) = (i[0], i[1] as isize);
        let mut sum = 0i32;
        for (k, f) in F.iter().enumerate() {
            sum += f * src_br(x, y - 2 + k as isize);
        }
        ((sum + 8) / 16) as u8
    });

    // Border rule `br1`: the same four formulas on the rows of `h`.
    let h_br1 = |r: isize, c: usize| -> i32 {
        let s = |x: usize| at(&h, x, c);
        let m_i = m as isize;
        if r == -2 {
            s(3) * 4 - s(1) * 4 + s(0) * 2 - s(2)
        } else if r == -1 {
            s(1) * 2 - s(3)
        } else if r == m_i {
            s(m - 2) * 2 - s(m - 4)
        } else if r == m_i + 1 {
            s(m - 4) * 4 - s(m - 2) * 4 + s(m - 1) * 2 - s(m - 3)
        } else {
            s(r as usize)
        }
    };
    let (md, nd) = ((m + 1) / 2, (n + 1) / 2);
    let down = Matrix::<u8>::from_fn([md, nd], |i| {
        let (di, dj) = (i[0] as isize, i[1]);
        let mut sum = 0i32;
        for (k, f) in F.iter().enumerate() {
            sum += f * h_br1(2 * di - 2 + k as isize, 2 * dj);
        }
        ((sum + 8) / 16) as u8
    });

    let up = upsample_laplacian(&down, m, n);
    let lap = Matrix::<i16>::from_fn([m, n], |i| (at(src, i[0], i[1]) - up.get(i)) as i16);
    LaplacianStages { h, down, up, lap }
}

/// The bilinear upsample of `laplacian` (rounded, clamped at the last row and column of
/// `down`) to `[m][n]`, as `int` values.
pub fn upsample_laplacian(down: &Matrix<u8>, m: usize, n: usize) -> Matrix<i32> {
    let (md, nd) = (down.shape()[0], down.shape()[1]);
    assert_eq!((md, nd), ((m + 1) / 2, (n + 1) / 2));
    Matrix::<i32>::from_fn([m, n], |i| {
        let (x, y) = (i[0], i[1]);
        let y0 = x / 2;
        let y1 = ((x + 1) / 2).min(md - 1);
        let x0 = y / 2;
        let x1 = ((y + 1) / 2).min(nd - 1);
        (at(down, y0, x0) + at(down, y0, x1) + at(down, y1, x0) + at(down, y1, x1) + 2) / 4
    })
}

/// One `laplacian` level: `(lap, down)`.
pub fn laplacian(src: &Matrix<u8>) -> (Matrix<i16>, Matrix<u8>) {
    let s = laplacian_stages(src);
    (s.lap, s.down)
}

/// `up(down) + lap` as `int`s: equals `src` for the `(lap, down)` of `src` (the example's
/// reconstruction check).
pub fn reconstruct_laplacian(lap: &Matrix<i16>, down: &Matrix<u8>) -> Matrix<i32> {
    let up = upsample_laplacian(down, lap.shape()[0], lap.shape()[1]);
    Matrix::<i32>::from_fn(lap.shape(), |i| up.get(i) + i32::from(lap.get(i)))
}

/// A pyramid of `levels` levels: the `lap` of each level, then the last `down`. Stops early
/// when a level would be smaller than 4x4.
pub fn laplacian_pyramid(src: &Matrix<u8>, levels: usize) -> (Vec<Matrix<i16>>, Matrix<u8>) {
    let mut laps = Vec::new();
    let mut cur = src.clone();
    for _ in 0..levels {
        if cur.shape()[0] < 4 || cur.shape()[1] < 4 {
            break;
        }
        let (lap, down) = laplacian(&cur);
        laps.push(lap);
        cur = down;
    }
    (laps, cur)
}

// -----------------------------------------------------------------------------------------------
// 2. sharpen
// -----------------------------------------------------------------------------------------------

/// Every intermediate of `sharpen`.
pub struct SharpenStages {
    /// `down: u8[M/4][N/4]`.
    pub down: Matrix<u8>,
    /// `up: u8[M][N]`.
    pub up: Matrix<u8>,
    /// `err: i16[M][N] = src - up`.
    pub err: Matrix<i16>,
    /// `edge: u8[M][N]`, the Sobel magnitude.
    pub edge: Matrix<u8>,
    /// The global mean of `edge` (integer division of the 64-bit sum by `M*N`).
    pub mean: i32,
    /// `gain[x][y] = min(edge * 16 / (mean + 16), 32)`.
    pub gain: Matrix<i32>,
    /// `pre[x][y] = up + (err * (16 + gain)) / 16`.
    pub pre: Matrix<i32>,
    /// The output.
    pub out: Matrix<u8>,
}

/// Floor division by a positive divisor (for the one place APPS.md says `floor`).
fn floor_div(a: i32, b: i32) -> i32 {
    assert!(b > 0);
    let q = a / b;
    if a % b != 0 && a < 0 { q - 1 } else { q }
}

/// `sharpen` with its intermediates (APPS.md §2).
pub fn sharpen_stages(src: &Matrix<u8>) -> SharpenStages {
    assert_eq!(src.ndim(), 2);
    let (m, n) = (src.shape()[0], src.shape()[1]);
    assert!(
        m % 4 == 0 && n % 4 == 0 && m >= 8 && n >= 8,
        "sharpen needs multiples of 4 >= 8, got {m}x{n}"
    );
    let (md, nd) = (m / 4, n / 4);

    // 1. down
    let down = Matrix::<u8>::from_fn([md, nd], |i| {
        let mut sum = 0i32;
        for a in 0..4 {
            for b in 0..4 {
                sum += at(src, 4 * i[0] + a, 4 * i[1] + b);
            }
        }
        ((sum + 8) >> 4) as u8
    });

    // 2. up: 4x bilinear in eighths.
    // For output position p: the two source positions and their weights (summing to 8).
    let taps = |p: usize, len: usize| -> [(usize, i32); 2] {
        let t = p as i32 - 2;
        let i0 = floor_div(t, 4);
        let a = t - 4 * i0;
        let (w0, w1) = (7 - 2 * a, 2 * a + 1);
        let last = len as i32 - 1;
        [
            (i0.clamp(0, last) as usize, w0),
            ((i0 + 1).clamp(0, last) as usize, w1),
        ]
    };
    let up = Matrix::<u8>::from_fn([m, n], |i| {
        let mut sum = 0i32;
        for (r, wr) in taps(i[0], md) {
            for (c, wc) in taps(i[1], nd) {
                sum += wr * wc * at(&down, r, c);
            }
        }
        ((sum + 32) >> 6) as u8
    });

    // 3. err
    let err = Matrix::<i16>::from_fn([m, n], |i| {
        (at(src, i[0], i[1]) - at(&up, i[0], i[1])) as i16
    });

    // 4. Sobel with clamp-to-edge.
    let s = |x: isize, y: isize| -> i32 {
        let xc = x.clamp(0, m as isize - 1) as usize;
        let yc = y.clamp(0, n as isize - 1) as usize;
        at(src, xc, yc)
    };
    let edge = Matrix::<u8>::from_fn([m, n], |i| {
        let (x, y) = (i[0] as isize, i[1] as isize);
        let gx = (s(x - 1, y + 1) + 2 * s(x, y + 1) + s(x + 1, y + 1))
            - (s(x - 1, y - 1) + 2 * s(x, y - 1) + s(x + 1, y - 1));
        let gy = (s(x + 1, y - 1) + 2 * s(x + 1, y) + s(x + 1, y + 1))
            - (s(x - 1, y - 1) + 2 * s(x - 1, y) + s(x - 1, y + 1));
        (gx.abs() + gy.abs()).min(255) as u8
    });

    // 5. mean
    let total: i64 = edge.as_slice().iter().map(|&e| i64::from(e)).sum();
    let mean = (total / (m * n) as i64) as i32;

    // 6. gain and pre
    let gain = Matrix::<i32>::from_fn([m, n], |i| {
        (at(&edge, i[0], i[1]) * 16 / (mean + 16)).min(32)
    });
    let pre = Matrix::<i32>::from_fn([m, n], |i| {
        at(&up, i[0], i[1]) + (i32::from(err.get(i)) * (16 + gain.get(i))) / 16
    });

    // 7. overshoot control
    let out = Matrix::<u8>::from_fn([m, n], |i| {
        let (x, y) = (i[0] as isize, i[1] as isize);
        let (mut lo, mut hi) = (i32::MAX, i32::MIN);
        for dx in -1..=1 {
            for dy in -1..=1 {
                lo = lo.min(s(x + dx, y + dy));
                hi = hi.max(s(x + dx, y + dy));
            }
        }
        pre.get(i).clamp(lo - 8, hi + 8).clamp(0, 255) as u8
    });

    SharpenStages {
        down,
        up,
        err,
        edge,
        mean,
        gain,
        pre,
        out,
    }
}

/// `sharpen` (APPS.md §2).
pub fn sharpen(src: &Matrix<u8>) -> Matrix<u8> {
    sharpen_stages(src).out
}

// -----------------------------------------------------------------------------------------------
// 3. blur
// -----------------------------------------------------------------------------------------------

/// `bx: u16[M][N-2]`, the horizontal pass of `blur`.
pub fn blur_x(src: &Matrix<u16>) -> Matrix<u16> {
    let (m, n) = (src.shape()[0], src.shape()[1]);
    assert!(m >= 3 && n >= 3, "blur needs M, N >= 3, got {m}x{n}");
    let s = |x: usize, y: usize| i32::from(src.get(&[x, y]));
    Matrix::<u16>::from_fn([m, n - 2], |i| {
        let (x, y) = (i[0], i[1]);
        ((s(x, y) + s(x, y + 1) + s(x, y + 2)) / 3) as u16
    })
}

/// `blur` (APPS.md §3): `out: u16[M-2][N-2]`.
pub fn blur(src: &Matrix<u16>) -> Matrix<u16> {
    let (m, n) = (src.shape()[0], src.shape()[1]);
    let bx = blur_x(src);
    let b = |x: usize, y: usize| i32::from(bx.get(&[x, y]));
    Matrix::<u16>::from_fn([m - 2, n - 2], |i| {
        let (x, y) = (i[0], i[1]);
        ((b(x, y) + b(x + 1, y) + b(x + 2, y)) / 3) as u16
    })
}

// -----------------------------------------------------------------------------------------------
// 4. unsharp
// -----------------------------------------------------------------------------------------------

/// The 4 Gaussian taps of `unsharp`: `k[i] = exp(-i*i / (2 sigma^2)) / (sqrt(2 pi) sigma)`,
/// `sigma = 1.5`, not renormalised.
pub fn unsharp_taps() -> [f64; 4] {
    let sigma = 1.5f64;
    let norm = (2.0 * std::f64::consts::PI).sqrt() * sigma;
    [0.0f64, 1.0, 2.0, 3.0].map(|i| (-i * i / (2.0 * sigma * sigma)).exp() / norm)
}

/// Every intermediate of `unsharp`, in `f64`, `[M][N]` row-major.
pub struct UnsharpStages {
    /// `gray`.
    pub gray: Vec<f64>,
    /// `by`, the vertical pass.
    pub by: Vec<f64>,
    /// `bx`, the horizontal pass on `by`.
    pub bx: Vec<f64>,
    /// `ratio = (2 gray - bx) / gray`.
    pub ratio: Vec<f64>,
    /// `out[c][x][y] = ratio * img[c][x][y]`, `[3][M][N]`.
    pub out: Vec<f64>,
}

/// `unsharp` in `f64` with its intermediates (APPS.md §4).
pub fn unsharp_stages(img: &Matrix<f32>) -> UnsharpStages {
    assert!(
        img.ndim() == 3 && img.shape()[0] == 3,
        "unsharp needs [3][M][N]"
    );
    let (m, n) = (img.shape()[1], img.shape()[2]);
    let k = unsharp_taps();
    let px = |c: usize, x: usize, y: usize| f64::from(img.get(&[c, x, y]));

    let gray: Vec<f64> = (0..m * n)
        .map(|p| {
            let (x, y) = (p / n, p % n);
            0.299 * px(0, x, y) + 0.587 * px(1, x, y) + 0.114 * px(2, x, y)
        })
        .collect();
    // Clamp-to-edge outside the image.
    let g = |x: isize, y: isize| {
        let xc = x.clamp(0, m as isize - 1) as usize;
        let yc = y.clamp(0, n as isize - 1) as usize;
        gray[xc * n + yc]
    };
    let by: Vec<f64> = (0..m * n)
        .map(|p| {
            let (x, y) = ((p / n) as isize, (p % n) as isize);
            k[0] * g(x, y)
                + k[1] * (g(x - 1, y) + g(x + 1, y))
                + k[2] * (g(x - 2, y) + g(x + 2, y))
                + k[3] * (g(x - 3, y) + g(x + 3, y))
        })
        .collect();
    // `by` outside the image is `by` of the clamped column (`gray` is clamped in both
    // dimensions, so the vertical pass of a clamped column is the clamped vertical pass).
    let b = |x: isize, y: isize| {
        let yc = y.clamp(0, n as isize - 1) as usize;
        by[x as usize * n + yc]
    };
    let bx: Vec<f64> = (0..m * n)
        .map(|p| {
            let (x, y) = ((p / n) as isize, (p % n) as isize);
            k[0] * b(x, y)
                + k[1] * (b(x, y - 1) + b(x, y + 1))
                + k[2] * (b(x, y - 2) + b(x, y + 2))
                + k[3] * (b(x, y - 3) + b(x, y + 3))
        })
        .collect();
    let ratio: Vec<f64> = (0..m * n)
        .map(|p| (2.0 * gray[p] - bx[p]) / gray[p])
        .collect();
    let out: Vec<f64> = (0..3 * m * n)
        .map(|q| {
            let (c, p) = (q / (m * n), q % (m * n));
            ratio[p] * px(c, p / n, p % n)
        })
        .collect();
    UnsharpStages {
        gray,
        by,
        bx,
        ratio,
        out,
    }
}

/// `unsharp` (APPS.md §4), computed in `f64` and rounded to `f32` at the end.
pub fn unsharp(img: &Matrix<f32>) -> Matrix<f32> {
    let out = unsharp_stages(img).out;
    Matrix::from_vec(img.shape(), out.into_iter().map(|v| v as f32).collect()).expect("same shape")
}

// -----------------------------------------------------------------------------------------------
// Border modes (APPS.md, last section; docs/language.md "Border rules: shorthands")
// -----------------------------------------------------------------------------------------------

/// What a read outside a dimension gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Border {
    /// A fixed value: `vvv|abcd|vvv`.
    Constant(i64),
    /// Clamp to the edge: `aaa|abcd|ddd`.
    Replicate,
    /// Mirror including the edge: `cba|abcd|dcb` (`fedcba|abcdef`).
    Reflect,
    /// Mirror around the edge: `dcb|abcd|cba` (`gfedcb|abcdefgh`, OpenCV's default).
    Reflect101,
    /// Periodic: `bcd|abcd|abc`.
    Wrap,
    /// The paper's linear extrapolation (laplacian's `br`), 2 wide; see [`extrapolate`].
    Extrapolate,
}

/// The in-range index that position `p` of a dimension of size `n` reads under `mode`, or
/// `None` when the value does not come from one element (`Constant`, `Extrapolate` outside
/// `0..n`). Inside `0..n`, `p` itself.
///
/// OpenCV's `borderInterpolate`, as OpenCV writes it: reflect (about the edge) or wrap again
/// until the position lands inside, so any position of any size `n >= 1` has an index
/// (reflect101 of a 1-wide dimension reads index 0).
pub fn pad_index(mode: Border, p: isize, n: usize) -> Option<usize> {
    let n_i = n as isize;
    let mut p = p;
    if (0..n_i).contains(&p) {
        return Some(p as usize);
    }
    assert!(n > 0, "{mode:?}: no element in an empty dimension");
    match mode {
        Border::Constant(_) | Border::Extrapolate => return None,
        Border::Replicate => p = p.clamp(0, n_i - 1),
        Border::Wrap => {
            if p < 0 {
                p -= ((p - n_i + 1) / n_i) * n_i;
            }
            if p >= n_i {
                p %= n_i;
            }
        }
        Border::Reflect | Border::Reflect101 if n == 1 => p = 0,
        Border::Reflect | Border::Reflect101 => {
            let d = isize::from(mode == Border::Reflect101);
            while !(0..n_i).contains(&p) {
                p = if p < 0 {
                    -p - 1 + d
                } else {
                    n_i - 1 - (p - n_i) - d
                };
            }
        }
    }
    Some(p as usize)
}

/// The value at `(x, y)` of a 2-D matrix extended by `rows` on its row dimension and `cols` on
/// its column dimension (`None`: no border there; reading outside panics). A corner takes the
/// row and the column mapping independently; a constant on either axis gives the constant;
/// extrapolation is applied per axis (columns over row-extended values, which is the same as
/// rows over column-extended ones since it is linear).
pub fn border_value<T: parac::Element + Into<i64>>(
    src: &Matrix<T>,
    rows: Option<Border>,
    cols: Option<Border>,
    x: isize,
    y: isize,
) -> i64 {
    let (m, n) = (src.shape()[0], src.shape()[1]);
    if !(0..n as isize).contains(&y) {
        let mode = cols.unwrap_or_else(|| panic!("column {y} outside 0..{n} with no border"));
        match mode {
            Border::Constant(v) => return v,
            Border::Extrapolate => {
                return i64::from(extrapolate(n, y, |c| {
                    border_value(src, rows, cols, x, c as isize) as i32
                }));
            }
            _ => {
                let c = pad_index(mode, y, n).expect("an index mode");
                return border_value(src, rows, cols, x, c as isize);
            }
        }
    }
    if !(0..m as isize).contains(&x) {
        let mode = rows.unwrap_or_else(|| panic!("row {x} outside 0..{m} with no border"));
        match mode {
            Border::Constant(v) => return v,
            Border::Extrapolate => {
                return i64::from(extrapolate(m, x, |r| {
                    border_value(src, rows, cols, r as isize, y) as i32
                }));
            }
            _ => {
                let r = pad_index(mode, x, m).expect("an index mode");
                return border_value(src, rows, cols, r as isize, y);
            }
        }
    }
    src.get(&[x as usize, y as usize]).into()
}

/// `src` extended by `wr` rows and `wc` columns on each side: `[M+2wr][N+2wc]`, element
/// `[wr + x][wc + y]` = [`border_value`]`(x, y)`.
pub fn padded<T: parac::Element + Into<i64>>(
    src: &Matrix<T>,
    rows: Option<Border>,
    cols: Option<Border>,
    wr: usize,
    wc: usize,
) -> Matrix<i32> {
    let (m, n) = (src.shape()[0], src.shape()[1]);
    Matrix::<i32>::from_fn([m + 2 * wr, n + 2 * wc], |i| {
        let x = i[0] as isize - wr as isize;
        let y = i[1] as isize - wc as isize;
        border_value(src, rows, cols, x, y) as i32
    })
}

/// A 2-D stencil (correlation) over `src` with a centred `weights` matrix of odd sides:
/// `out[x][y] = sum w[a][b] * src[x + a - ha][y + b - hb]` (`ha`, `hb` the half sides), the
/// sum in 64 bits and stored as an `i32` (wrapping), outside reads through [`border_value`].
pub fn stencil<T: parac::Element + Into<i64>>(
    src: &Matrix<T>,
    weights: &Matrix<i32>,
    rows: Option<Border>,
    cols: Option<Border>,
) -> Matrix<i32> {
    let (kh, kw) = (weights.shape()[0], weights.shape()[1]);
    assert!(
        kh % 2 == 1 && kw % 2 == 1,
        "a centred stencil has odd sides"
    );
    let (ha, hb) = ((kh / 2) as isize, (kw / 2) as isize);
    Matrix::<i32>::from_fn([src.shape()[0], src.shape()[1]], |i| {
        let (x, y) = (i[0] as isize, i[1] as isize);
        let mut sum = 0i64;
        for a in 0..kh {
            for b in 0..kw {
                let w = i64::from(weights.get(&[a, b]));
                sum += w * border_value(src, rows, cols, x + a as isize - ha, y + b as isize - hb);
            }
        }
        sum as i32
    })
}

/// The sum over the `(2 rr + 1) x (2 rc + 1)` window centred on each element (`rr = 0`: a
/// horizontal 1-D window, `rc = 0`: a vertical one), outside reads through [`border_value`].
pub fn box_sum<T: parac::Element + Into<i64>>(
    src: &Matrix<T>,
    rr: usize,
    rc: usize,
    rows: Option<Border>,
    cols: Option<Border>,
) -> Matrix<i32> {
    let ones = Matrix::<i32>::from_fn([2 * rr + 1, 2 * rc + 1], |_| 1);
    stencil(src, &ones, rows, cols)
}
