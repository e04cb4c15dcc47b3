//! Programs beyond the four pipelines, written from `docs/language.md` as a new user would, that
//! once broke the OpenCL path: each runs on the CPU path and
//! on the OpenCL device with the baseline, the model's plan and every candidate forced one by
//! one, bit-exact against a plain Rust reference, or gives the same typed error everywhere.
//!
//! - `lookup_out_of_table` / `scatter_out_of_matrix`: subscripts read from data that leave their
//!   matrix. The OpenCL path used to return garbage, and the scatter wrote past the caller's
//!   matrix (heap corruption). Now every path returns `Error::OutOfBounds`, the canaries around
//!   the caller's matrix (`common::canary`: in place on a host-memory device) and the guard
//!   bands around every device buffer (`Device::set_guard_bands`) stay intact.
//! - `integer_unsharp_7_tap`: a vertical `W7_V: u8[7][1]` filter whose candidates' hoisted
//!   locals `c0`..`c7` shadowed the program-scope constant `c3`: the program did not build.
//! - `sobel_through_block_lets`: `let w = src[x-1:3:1][y-1:3:1]` under a replicate rule: the
//!   local-memory candidates read `w` from global memory with no border rule.
//! - `self_comparisons_build_without_warnings` / `fixed_channels_build_without_warnings`:
//!   kernels PoCL warned about ("self-comparison", "`&&` with constant operand"); no build warns.
//!
//! Without OpenCL the device half prints "skipped" and passes, unless `PARAC_REQUIRE_OPENCL=1`.

#[macro_use]
mod common;

use common::canary::Canaried;
use common::runtimes;
use parac::{Error, Matrix, MatrixView, PlanPolicy, Runtime};

parac::parac! {
    /// Forms C compilers warn about, as careless (and random) programs write them: a
    /// comparison of an expression with itself, and `&&`/`||` with a constant other than 0 or 1.
    pub fn self_compare(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            out[x][y] = (x <= x) + (src[x][y] && 4) * 2 + (y == y) * 4 + (src[x][y] || 3) * 8
                + (src[x][y] > src[x][y]) * 16;
        }
    }

    /// Constant subscripts of a matrix with a constant dimension, under a border rule: the
    /// interior tests of their lanes held `2 < 3` (a declared dimension, printed as its
    /// literal) and `i >= 0 && i < 3` with `i` a lane's constant index.
    pub fn fixed_channel(src: &i32[3][M][N], out: &mut i32[M][N]) {
        parac_border_rule r = replicate(src[*][1][1]);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(r) {
            out[x][y] = src[2][x-1][y] * 3 - src[0][x][y+1] + src[1][x+1][y-1];
        }
    }

    /// A lookup table indexed by pixel values.
    pub fn lookup(src: &u8[M][N], lut: &u8[K], out: &mut u8[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            out[x][y] = lut[src[x][y]];
        }
    }

    /// Marks the values that occur (a scatter).
    pub fn scatter(src: &u8[M][N], out: &mut u8[K]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            out[src[x][y]] = 1;
        }
    }

    /// A 7-tap integer unsharp mask: horizontal, then vertical binomial passes.
    pub fn unsharp7(src: &u8[M][N], out: &mut u8[M][N]) {
        const W7_H: u8[1][7] = [[1, 6, 15, 20, 15, 6, 1]];
        const W7_V: u8[7][1] = [[1], [6], [15], [20], [15], [6], [1]];
        let bx: u8[M][N];
        parac_border_rule rs = replicate(src[3][3]);
        parac_iterator h(x in 0:M:1; y in 0:N:1) parac_border_rule(rs) {
            bx[x][y] = (parac_convolution(W7_H, src[x][y-3:7:1]) + 32) / 64;
        }
        parac_border_rule rb = replicate(bx[3][3]);
        parac_iterator v(x in 0:M:1; y in 0:N:1) parac_border_rule(rb) {
            let b = (parac_convolution(W7_V, bx[x-3:7:1][y]) + 32) / 64;
            out[x][y] = clamp(2 * src[x][y] - b, 0, 255);
        }
    }

    /// Sobel magnitude through block `let`s, as the language reference writes block operands.
    pub fn sobel(src: &u8[M][N], out: &mut i32[M][N]) {
        const SOBEL_X: i32[3][3] = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]];
        const SOBEL_Y: i32[3][3] = [[-1, -2, -1], [0, 0, 0], [1, 2, 1]];
        parac_border_rule e = replicate(src[1][1]);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(e) {
            let w = src[x-1:3:1][y-1:3:1];
            let gx = parac_convolution(SOBEL_X, w);
            let gy = parac_convolution(SOBEL_Y, w);
            out[x][y] = abs(gx) + abs(gy);
        }
    }

    /// A division by a host scalar: 0 is an error on every path, never a trap.
    pub fn divide(src: &u8[M][N], d: i32, out: &mut i32[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            out[x][y] = src[x][y] / d;
        }
    }

    /// A shift by a host scalar: the host proves its reach before anything runs.
    pub fn shifted(src: &u8[M][N], k: i32, out: &mut u8[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N-1:1) {
            out[x][y] = src[x][y + k];
        }
    }
}

const SIZES: &[(usize, usize)] = &[(1, 1), (1, 7), (3, 2), (5, 5), (17, 13), (33, 64), (64, 31)];

fn image(rows: usize, cols: usize, seed: u64) -> Matrix<u8> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    Matrix::from_fn([rows, cols], |_| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 33) as u8
    })
}

/// Every policy a device test runs: baseline, model, and each candidate of `function` forced.
fn policies(function: &str) -> Vec<PlanPolicy> {
    let src = include_str!("any_program.rs");
    let start = src.find("parac::parac! {").expect("block") + "parac::parac! {".len();
    let end = src[start..].find("\n}\n").expect("end") + start;
    let c = parac_core::compile_str(&src[start..end]);
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let f = c
        .module
        .functions
        .iter()
        .find(|f| f.name == function)
        .expect("function");
    let mut out = vec![PlanPolicy::Baseline, PlanPolicy::Model];
    for l in parac_core::codegen::plan::labels(f) {
        out.push(PlanPolicy::Fixed(l, vec![16, 4]));
    }
    out
}

/// The runtimes to check on: the CPU path, and the device under every policy of `function`,
/// with guard bands around every device buffer, checked after each policy's calls.
fn each_runtime(function: &str, mut check: impl FnMut(&Runtime, &str)) {
    check(runtimes::cpu(), "cpu");
    let Some(mut rt) = runtimes::fresh_opencl() else {
        return;
    };
    rt.device().expect("a device").set_guard_bands(true);
    for p in policies(function) {
        let label = format!("opencl {p:?}");
        rt.set_policy(p);
        check(&rt, &label);
        if let Err(e) = rt.device().expect("a device").check_guards() {
            panic!("{label}: {e}");
        }
    }
}

fn reference_unsharp7(src: &Matrix<u8>) -> Matrix<u8> {
    let (m, n) = (src.rows() as i64, src.cols() as i64);
    let w = [1i32, 6, 15, 20, 15, 6, 1];
    let at = |x: i64, y: i64| src.get(&[x.clamp(0, m - 1) as usize, y.clamp(0, n - 1) as usize]);
    let bx = Matrix::from_fn([m as usize, n as usize], |i| {
        let (x, y) = (i[0] as i64, i[1] as i64);
        let s: i32 = (0..7).map(|k| w[k] * at(x, y - 3 + k as i64) as i32).sum();
        ((s + 32) / 64) as u8
    });
    let bat = |x: i64, y: i64| bx.get(&[x.clamp(0, m - 1) as usize, y as usize]);
    Matrix::from_fn([m as usize, n as usize], |i| {
        let (x, y) = (i[0] as i64, i[1] as i64);
        let s: i32 = (0..7).map(|k| w[k] * bat(x - 3 + k as i64, y) as i32).sum();
        let b = (s + 32) / 64;
        (2 * at(x, y) as i32 - b).clamp(0, 255) as u8
    })
}

fn reference_sobel(src: &Matrix<u8>) -> Matrix<i32> {
    let (m, n) = (src.rows() as i64, src.cols() as i64);
    let at =
        |x: i64, y: i64| src.get(&[x.clamp(0, m - 1) as usize, y.clamp(0, n - 1) as usize]) as i32;
    Matrix::from_fn([m as usize, n as usize], |i| {
        let (x, y) = (i[0] as i64, i[1] as i64);
        let gx = (at(x - 1, y + 1) + 2 * at(x, y + 1) + at(x + 1, y + 1))
            - (at(x - 1, y - 1) + 2 * at(x, y - 1) + at(x + 1, y - 1));
        let gy = (at(x + 1, y - 1) + 2 * at(x + 1, y) + at(x + 1, y + 1))
            - (at(x - 1, y - 1) + 2 * at(x - 1, y) + at(x - 1, y + 1));
        gx.abs() + gy.abs()
    })
}

/// `self_compare` on every path and plan, exact, and no kernel built with a warning (PoCL
/// prints "N warnings generated." on stderr for each program that has any).
#[test]
fn self_comparisons_build_without_warnings() {
    each_runtime("self_compare", |rt, label| {
        for (i, &(m, n)) in SIZES.iter().enumerate() {
            let src = image(m, n, i as u64);
            let mut out = Matrix::zeros([m, n]);
            self_compare(rt, &src, &mut out).unwrap_or_else(|e| panic!("{label} {m}x{n}: {e}"));
            let want = src.map(|v| 1 + 2 * u8::from(v != 0) + 4 + 8);
            assert_eq!(out, want, "{label} {m}x{n}");
        }
        if let Some(d) = rt.device() {
            let w = d.build_warnings();
            assert!(w.is_empty(), "{label}: {}", w.join("\n"));
        }
    });
}

/// `fixed_channel` on every path and plan, exact, and no kernel built with a warning (PoCL's
/// "use of logical '&&' with constant operand", from a random program of this form).
#[test]
fn fixed_channels_build_without_warnings() {
    each_runtime("fixed_channel", |rt, label| {
        for (i, &(m, n)) in SIZES.iter().enumerate() {
            let img = image(m, n, 30 + i as u64);
            let src: Matrix<i32> = Matrix::from_fn([3, m, n], |i| {
                i32::from(img.get(&i[1..])) * (i[0] as i32 + 1) - 100
            });
            let mut out = Matrix::zeros([m, n]);
            fixed_channel(rt, &src, &mut out).unwrap_or_else(|e| panic!("{label} {m}x{n}: {e}"));
            let at = |c: usize, x: isize, y: isize| {
                let x = x.clamp(0, m as isize - 1) as usize;
                let y = y.clamp(0, n as isize - 1) as usize;
                src.get(&[c, x, y])
            };
            let want = Matrix::from_fn([m, n], |i| {
                let (x, y) = (i[0] as isize, i[1] as isize);
                at(2, x - 1, y) * 3 - at(0, x, y + 1) + at(1, x + 1, y - 1)
            });
            assert_eq!(out, want, "{label} {m}x{n}");
        }
        if let Some(d) = rt.device() {
            let w = d.build_warnings();
            assert!(w.is_empty(), "{label}: {}", w.join("\n"));
        }
    });
}

#[test]
fn integer_unsharp_7_tap() {
    each_runtime("unsharp7", |rt, label| {
        for (i, &(m, n)) in SIZES.iter().enumerate() {
            let src = image(m, n, i as u64);
            let mut out = Matrix::zeros([m, n]);
            unsharp7(rt, &src, &mut out).unwrap_or_else(|e| panic!("{label} {m}x{n}: {e}"));
            assert_eq!(out, reference_unsharp7(&src), "{label} {m}x{n}");
        }
    });
}

#[test]
fn sobel_through_block_lets() {
    each_runtime("sobel", |rt, label| {
        for (i, &(m, n)) in SIZES.iter().enumerate() {
            let src = image(m, n, 10 + i as u64);
            let mut out = Matrix::zeros([m, n]);
            sobel(rt, &src, &mut out).unwrap_or_else(|e| panic!("{label} {m}x{n}: {e}"));
            assert_eq!(out, reference_sobel(&src), "{label} {m}x{n}");
        }
    });
}

#[test]
fn lookup_out_of_table() {
    each_runtime("lookup", |rt, label| {
        for (i, &(m, n)) in SIZES.iter().enumerate() {
            let src = image(m, n, 20 + i as u64);
            // A 256-entry table: every value inside, the right result.
            let lut: Matrix<u8> = Matrix::from_fn([256], |i| (255 - i[0]) as u8);
            let mut out = Matrix::zeros([m, n]);
            lookup(rt, &src, &lut, &mut out).unwrap_or_else(|e| panic!("{label}: {e}"));
            assert_eq!(out, src.map(|v| 255 - v), "{label} {m}x{n}");
            // A 16-entry table: values from 16 up fall outside it.
            if src.as_slice().iter().all(|v| *v < 16) {
                continue;
            }
            let small: Matrix<u8> = Matrix::from_fn([16], |i| i[0] as u8);
            let mut view = Canaried::new("out", [m, n], &vec![0u8; m * n]);
            let r = lookup(rt, &src, &small, &mut view);
            assert!(
                matches!(r, Err(Error::OutOfBounds { matrix: "lut", .. })),
                "{label} {m}x{n}: {r:?}"
            );
            assert_eq!(view.check(), Ok(()), "{label} {m}x{n}: canaries");
        }
    });
}

#[test]
fn scatter_out_of_matrix() {
    each_runtime("scatter", |rt, label| {
        for (i, &(m, n)) in SIZES.iter().enumerate() {
            let src = image(m, n, 30 + i as u64);
            // K = 256: every value has its element.
            let mut seen = Matrix::<u8>::zeros([256]);
            scatter(rt, &src, &mut seen).unwrap_or_else(|e| panic!("{label}: {e}"));
            let mut want = Matrix::<u8>::zeros([256]);
            for v in src.as_slice() {
                want.set(&[*v as usize], 1);
            }
            assert_eq!(seen, want, "{label} {m}x{n}");
            // K = 4: writes outside are skipped and reported; the memory around stays intact.
            if src.as_slice().iter().all(|v| *v < 4) {
                continue;
            }
            let mut view = Canaried::new("out", [4], &[0u8; 4]);
            let r = scatter(rt, &src, &mut view);
            assert!(
                matches!(r, Err(Error::OutOfBounds { matrix: "out", .. })),
                "{label} {m}x{n}: {r:?}"
            );
            assert_eq!(view.check(), Ok(()), "{label} {m}x{n}: canaries");
        }
    });
}

#[test]
fn division_by_a_zero_scalar_is_an_error() {
    each_runtime("divide", |rt, label| {
        let src = image(9, 11, 40);
        let mut out = Matrix::zeros([9, 11]);
        divide(rt, &src, 3, &mut out).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(out, src.map(|v| v as i32 / 3), "{label}");
        let r = divide(rt, &src, 0, &mut out);
        assert!(
            matches!(r, Err(Error::DivisionByZero { .. })),
            "{label}: {r:?}"
        );
    });
}

#[test]
fn host_scalar_reach_is_proven_before_the_call() {
    each_runtime("shifted", |rt, label| {
        let src = image(6, 10, 50);
        let view = MatrixView::new([6, 10], src.as_slice()).expect("view");
        let mut out = Matrix::zeros([6, 10]);
        shifted(rt, &view, 1, &mut out).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_eq!(out.get(&[2, 3]), src.get(&[2, 4]), "{label}");
        for k in [2, -1, 1000] {
            let r = shifted(rt, &src, k, &mut out);
            assert!(
                matches!(r, Err(Error::OutOfBounds { matrix: "src", .. })),
                "{label} k = {k}: {r:?}"
            );
        }
    });
}
