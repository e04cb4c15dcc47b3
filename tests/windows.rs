//! Windows larger than `lir::UNROLL_TAPS` (64 taps), whose reductions are loops over their taps
//! (`lir::ExprKind::Fold`) on the CPU path and in the OpenCL kernels, against hand-written
//! references (`tests/common/reference.rs`, OpenCV's border interpolation): sums, minima,
//! maxima and a float mean, square and oblong windows, every shorthand mode, an elementwise product
//! of two windows, on images from 1x1 to larger than the window (so that windows reach past
//! both ends at once and reflect or wrap several times).

#[macro_use]
mod common;

use common::data;
use common::reference::{self as r, Border};
use common::runtimes;
use common::soft::Failures;
use parac::{Matrix, Runtime};

parac::parac! {
    pub fn box9(src: &u8[M][N], dst: &mut i32[M][N]) {
        parac_border_rule b = reflect101(src[4][4]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {
            dst[itx][ity] = parac_matrix_sum(src[itx-4:9:1][ity-4:9:1]);
        }
    }

    pub fn erode11(src: &u8[M][N], dst: &mut u8[M][N]) {
        parac_border_rule b = replicate(src[5][5]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {
            dst[itx][ity] = parac_matrix_min(src[itx-5:11:1][ity-5:11:1]);
        }
    }

    pub fn dilate_wrap(src: &u8[M][N], dst: &mut u8[M][N]) {
        parac_border_rule b = wrap(src[4][6]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {
            dst[itx][ity] = parac_matrix_max(src[itx-4:9:1][ity-6:13:1]);
        }
    }

    pub fn mean_constant(src: &f32[M][N], dst: &mut f32[M][N]) {
        parac_border_rule b = constant(src[4][4], 0.5);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {
            dst[itx][ity] = parac_matrix_mean(src[itx-4:9:1][ity-4:9:1]);
        }
    }

    pub fn rect5x15(src: &u8[M][N], dst: &mut i32[M][N]) {
        parac_border_rule b = reflect(src[2][7]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {
            dst[itx][ity] = parac_matrix_sum(src[itx-2:5:1][ity-7:15:1]);
        }
    }

    // The longest windows (64 is the language's limit), slid on the CPU path.
    pub fn wide_sum(src: &u8[M][N], dst: &mut i32[M][N]) {
        parac_border_rule b = reflect101(src[1][31]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {
            dst[itx][ity] = parac_matrix_sum(src[itx-1:3:1][ity-31:63:1]);
        }
    }

    pub fn tall_min(src: &u8[M][N], dst: &mut u8[M][N]) {
        parac_border_rule b = replicate(src[31][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {
            dst[itx][ity] = parac_matrix_min(src[itx-31:63:1][ity-1:3:1]);
        }
    }

    pub fn wide_max(src: &u8[M][N], dst: &mut u8[M][N]) {
        parac_border_rule b = wrap(src[*][32]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {
            dst[itx][ity] = parac_matrix_max(src[itx:1:1][ity-32:64:1]);
        }
    }

    // An outer-product filter (two 1-D passes on the CPU path) and one that is not.
    pub fn gauss5(src: &u8[M][N], dst: &mut i32[M][N], other: &mut i32[M][N]) {
        const G: u8[5][5] = [
            [1, 4, 6, 4, 1], [4, 16, 24, 16, 4], [6, 24, 36, 24, 6],
            [4, 16, 24, 16, 4], [1, 4, 6, 4, 1]];
        const P: i8[5][5] = [
            [1, 2, 3, 4, 5], [2, 3, 4, 5, 6], [3, 4, 5, 6, -7],
            [4, 5, 6, 7, 8], [5, 6, 7, 8, 9]];
        parac_border_rule b = reflect101(src[2][2]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {
            dst[itx][ity] = parac_convolution(G, src[itx-2:5:1][ity-2:5:1]);
            other[itx][ity] = parac_convolution(P, src[itx-2:5:1][ity-2:5:1]);
        }
    }

    pub fn products(a: &u8[M][N], b: &u8[M][N], dst: &mut i32[M][N]) {
        parac_border_rule ra = replicate(a[4][4]);
        parac_border_rule rb = reflect101(b[4][4]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(ra, rb) {
            dst[itx][ity] = parac_matrix_sum(a[itx-4:9:1][ity-4:9:1] .* b[itx-4:9:1][ity-4:9:1]) - 3 * a[itx][ity];
        }
    }

    // Windows whose lengths are host expressions: loops over their taps at any length.
    pub fn matmul(a: &f32[M][K], b: &f32[K][N], c: &mut f32[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            c[x][y] = a[x][0:K] * b[0:K][y];
        }
    }

    pub fn dots(a: &i16[M][K], b: &i16[K][N], d: &mut i32[M][N], e: &mut i32[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            d[x][y] = parac_matrix_sum(a[x][0:K] .* transe(b[0:K][y]));
            e[x][y] = parac_matrix_min(a[x][0:K]) - parac_matrix_max(b[0:K][y])
                + parac_matrix_mean(a[x][0:K:1]);
        }
    }

    pub fn box_r(src: &u8[M][N], dst: &mut i32[M][N], r: i32) {
        parac_border_rule b = reflect101(src[16][16]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {
            dst[itx][ity] = parac_matrix_sum(src[itx-r:2*r+1][ity-r:2*r+1]);
        }
    }
}

/// From 1x1 to larger than the windows; 32, 33 and 65 rows: one chunk of `lir::pass::slide`'s
/// rows, one past it, two past it.
const SIZES: [(usize, usize); 11] = [
    (1, 1),
    (1, 2),
    (2, 3),
    (3, 2),
    (5, 7),
    (9, 9),
    (4, 40),
    (12, 17),
    (32, 9),
    (33, 20),
    (65, 6),
];

/// `f` over the `(2 hr + 1) x (2 hc + 1)` window of each element, outside reads through the
/// modes.
fn window<T>(
    src: &Matrix<u8>,
    (hr, hc): (usize, usize),
    (rows, cols): (Option<Border>, Option<Border>),
    f: impl Fn(&mut dyn Iterator<Item = i64>) -> T,
) -> Matrix<T>
where
    T: parac::Element,
{
    Matrix::from_fn([src.shape()[0], src.shape()[1]], |i| {
        let (x, y) = (i[0] as isize, i[1] as isize);
        let mut taps = (0..=2 * hr).flat_map(|a| {
            (0..=2 * hc).map(move |b| {
                r::border_value(
                    src,
                    rows,
                    cols,
                    x + a as isize - hr as isize,
                    y + b as isize - hc as isize,
                )
            })
        });
        f(&mut taps)
    })
}

on_every_runtime! {
    looped_windows_match_the_references,
    host_length_windows_match_the_references,
}

/// Windows whose lengths are host expressions: a float matrix product and integer dot products
/// and reductions over `K` = 1, 7 and 512 (floats that are exact in `f32` whatever the order or
/// contraction, so every path must agree bit for bit), a box sum whose radius is a parameter
/// (0 to past the image, through reflect-101), against references; a length below 1 is
/// `Error::WindowLength`, naming the matrix, before anything runs.
fn host_length_windows_match_the_references(rt: &Runtime) {
    let runtime = runtimes::name(rt);
    let mut failures = Failures::new();
    for k in [1usize, 7, 512] {
        for (m, n) in [(1, 1), (3, 5), (17, 9)] {
            let seed = data::seed_for(0x71D2 ^ k as u64, m, n);
            let (a8, b8) = (
                data::random_u8(m, k, seed),
                data::random_u8(k, n, seed ^ 0x33),
            );
            let at = |what: &str| format!("{what} on {runtime}, {m}x{k} by {k}x{n}");
            let run = |what: &str, r: Result<(), parac::Error>| {
                r.unwrap_or_else(|e| panic!("{}: {e}", at(what)));
            };
            // Quarters from -2 to 1.75: products and sums of 512 of them are exact in f32.
            let quarter = |v: u8| f32::from(v % 16) / 4.0 - 2.0;
            let af = Matrix::<f32>::from_fn([m, k], |i| quarter(a8.get(&[i[0], i[1]])));
            let bf = Matrix::<f32>::from_fn([k, n], |i| quarter(b8.get(&[i[0], i[1]])));
            let mut c = Matrix::<f32>::zeros([m, n]);
            run("matmul", matmul(rt, &af, &bf, &mut c));
            let want = Matrix::<f32>::from_fn([m, n], |i| {
                (0..k).fold(0.0, |s, q| s + af.get(&[i[0], q]) * bf.get(&[q, i[1]]))
            });
            failures.same(&at("f32 matrix product"), &c, &want);

            let wide = |v: u8| i16::from(v) * 127 - 16000;
            let ai = Matrix::<i16>::from_fn([m, k], |i| wide(a8.get(&[i[0], i[1]])));
            let bi = Matrix::<i16>::from_fn([k, n], |i| wide(b8.get(&[i[0], i[1]])));
            let (mut d, mut e) = (Matrix::<i32>::zeros([m, n]), Matrix::<i32>::zeros([m, n]));
            run("dots", dots(rt, &ai, &bi, &mut d, &mut e));
            let (ar, br) = (&ai, &bi);
            let row = |x: usize| (0..k).map(move |q| i32::from(ar.get(&[x, q])));
            let col = |y: usize| (0..k).map(move |q| i32::from(br.get(&[q, y])));
            let want = Matrix::<i32>::from_fn([m, n], |i| {
                row(i[0])
                    .zip(col(i[1]))
                    .fold(0i32, |s, (p, q)| s.wrapping_add(p.wrapping_mul(q)))
            });
            failures.same(&at("i16 dot product, wrapping in i32"), &d, &want);
            let want = Matrix::<i32>::from_fn([m, n], |i| {
                let mean = row(i[0]).sum::<i32>() / k as i32;
                row(i[0]).min().unwrap() - col(i[1]).max().unwrap() + mean
            });
            failures.same(&at("minimum, maximum and mean"), &e, &want);
        }
    }
    let both = Some(Border::Reflect101);
    for (m, n) in [(1, 1), (2, 3), (9, 9), (20, 33)] {
        let src = data::random_u8(m, n, data::seed_for(0x71D3, m, n));
        for radius in [0usize, 1, 5, 16] {
            let mut out = Matrix::<i32>::zeros([m, n]);
            let r = box_r(rt, &src, &mut out, radius as i32);
            r.unwrap_or_else(|e| panic!("box_r({radius}) on {runtime}, {m}x{n}: {e}"));
            failures.same(
                &format!("box of radius {radius} on {runtime}, {m}x{n}"),
                &out,
                &r::box_sum(&src, radius, radius, both, both),
            );
        }
        let mut out = Matrix::<i32>::zeros([m, n]);
        match box_r(rt, &src, &mut out, -1) {
            Err(parac::Error::WindowLength { matrix, lens, .. }) => failures
                .expect(matrix == "src" && lens == [-1, -1], || {
                    format!("box_r(-1) on {runtime}: {matrix} {lens:?}")
                }),
            other => failures.fail(format!("box_r(-1) on {runtime}, {m}x{n}: {other:?}")),
        }
    }
    failures.finish();
}

/// Every plan of two looped windows on the OpenCL device (several points per work-item, shared
/// reads, vectors, local tiles, split interiors: each lowering pass around a fold), forced one
/// by one, against the CPU path (which the test above holds to the references).
#[test]
fn every_opencl_plan_of_a_looped_window() {
    use common::differential::{plan_labels, policy};
    use parac::Pipeline;
    use parac::pipeline::{Arg, tensor_of};
    const SOURCE: &str = "
        pub fn products(a: &u8[M][N], b: &u8[M][N], dst: &mut i32[M][N]) {
            parac_border_rule ra = replicate(a[4][4]);
            parac_border_rule rb = reflect101(b[4][4]);
            parac_iterator it(0:M:1; 0:N:1) parac_border_rule(ra, rb) {
                dst[itx][ity] = parac_matrix_sum(a[itx-4:9:1][ity-4:9:1] .* b[itx-4:9:1][ity-4:9:1]) - 3 * a[itx][ity];
            }
        }
        pub fn erode11(src: &u8[M][N], dst: &mut u8[M][N]) {
            parac_border_rule b = replicate(src[5][5]);
            parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {
                dst[itx][ity] = parac_matrix_min(src[itx-5:11:1][ity-5:11:1]);
            }
        }
        pub fn box9(src: &u8[M][N], dst: &mut i32[M][N]) {
            parac_border_rule b = reflect101(src[4][4]);
            parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {
                dst[itx][ity] = parac_matrix_sum(src[itx-4:9:1][ity-4:9:1]);
            }
        }";
    let _b = runtimes::shared_buffers();
    let Some(mut rt) = runtimes::fresh_opencl() else {
        return;
    };
    let p = Pipeline::compile(SOURCE).expect("compiles");
    let arg = |m: &Matrix<u8>| Arg::Matrix(tensor_of(m.clone()).expect("u8"));
    let mut failures = Failures::new();
    for name in ["products", "erode11", "box9"] {
        let f = p.function(name).expect("defined");
        let inputs = if name == "products" { 2 } else { 1 };
        let out = |m: usize, n: usize| -> Arg {
            if name != "erode11" {
                Arg::Matrix(tensor_of(Matrix::<i32>::zeros([m, n])).expect("i32"))
            } else {
                Arg::Matrix(tensor_of(Matrix::<u8>::zeros([m, n])).expect("u8"))
            }
        };
        for label in plan_labels(f) {
            for (m, n) in [(1, 1), (5, 7), (33, 41)] {
                let seed = data::seed_for(0x71D1, m, n);
                let mut args: Vec<Arg> = (0..inputs)
                    .map(|k| arg(&data::random_u8(m, n, seed ^ k)))
                    .collect();
                args.push(out(m, n));
                let mut want = args.clone();
                p.run(&Runtime::cpu(), name, &mut want)
                    .expect("the CPU path");
                rt.set_policy(policy(&label));
                if let Err(e) = p.run(&rt, name, &mut args) {
                    failures.fail(format!("{name}, plan {label}, {m}x{n}: {e}"));
                    continue;
                }
                let last = args.len() - 1;
                let same = match (&args[last], &want[last]) {
                    (Arg::Matrix(g), Arg::Matrix(w)) => g == w,
                    _ => false,
                };
                failures.expect(same, || {
                    format!("{name}, plan {label}, {m}x{n}: differs from the CPU path")
                });
            }
        }
    }
    failures.finish();
}

fn looped_windows_match_the_references(rt: &Runtime) {
    let runtime = runtimes::name(rt);
    let mut failures = Failures::new();
    for (m, n) in SIZES {
        let seed = data::seed_for(0x71D0, m, n);
        let src = data::random_u8(m, n, seed);
        let other = data::random_u8(m, n, seed ^ 0x55);
        let at = |what: &str| format!("{what} on {runtime}, {m}x{n} (seed {seed:#x})");
        let run = |what: &str, r: Result<(), parac::Error>| {
            r.unwrap_or_else(|e| panic!("{}: {e}", at(what)));
        };

        let mut out = Matrix::<i32>::zeros([m, n]);
        run("box9", box9(rt, &src, &mut out));
        let both = Some(Border::Reflect101);
        failures.same(
            &at("9x9 sum, reflect101"),
            &out,
            &r::box_sum(&src, 4, 4, both, both),
        );

        let mut out = Matrix::<u8>::zeros([m, n]);
        run("erode11", erode11(rt, &src, &mut out));
        let rep = Some(Border::Replicate);
        let want = window(&src, (5, 5), (rep, rep), |t| t.min().unwrap() as u8);
        failures.same(&at("11x11 min, replicate"), &out, &want);

        let mut out = Matrix::<u8>::zeros([m, n]);
        run("dilate_wrap", dilate_wrap(rt, &src, &mut out));
        let wrap = Some(Border::Wrap);
        let want = window(&src, (4, 6), (wrap, wrap), |t| t.max().unwrap() as u8);
        failures.same(&at("9x13 max, wrap"), &out, &want);

        let mut out = Matrix::<i32>::zeros([m, n]);
        run("rect5x15", rect5x15(rt, &src, &mut out));
        let refl = Some(Border::Reflect);
        failures.same(
            &at("5x15 sum, reflect"),
            &out,
            &r::box_sum(&src, 2, 7, refl, refl),
        );

        let mut out = Matrix::<i32>::zeros([m, n]);
        run("wide_sum", wide_sum(rt, &src, &mut out));
        failures.same(
            &at("3x63 sum, reflect101"),
            &out,
            &r::box_sum(&src, 1, 31, both, both),
        );

        let mut out = Matrix::<u8>::zeros([m, n]);
        run("tall_min", tall_min(rt, &src, &mut out));
        let want = window(&src, (31, 1), (rep, rep), |t| t.min().unwrap() as u8);
        failures.same(&at("63x3 min, replicate"), &out, &want);

        let mut out = Matrix::<u8>::zeros([m, n]);
        run("wide_max", wide_max(rt, &src, &mut out));
        let want = Matrix::<u8>::from_fn([m, n], |i| {
            let (x, y) = (i[0] as isize, i[1] as isize);
            (-32..32)
                .map(|b| r::border_value(&src, None, wrap, x, y + b))
                .max()
                .unwrap() as u8
        });
        failures.same(&at("1x64 max, wrap"), &out, &want);

        let (mut out, mut out2) = (Matrix::<i32>::zeros([m, n]), Matrix::<i32>::zeros([m, n]));
        run("gauss5", gauss5(rt, &src, &mut out, &mut out2));
        let conv = |f: &dyn Fn(usize, usize) -> i32| {
            Matrix::<i32>::from_fn([m, n], |i| {
                let (x, y) = (i[0] as isize, i[1] as isize);
                let mut s = 0i32;
                for a in 0..5 {
                    for b in 0..5 {
                        let v = r::border_value(
                            &src,
                            both,
                            both,
                            x + a as isize - 2,
                            y + b as isize - 2,
                        );
                        s = s.wrapping_add(f(a, b) * v as i32);
                    }
                }
                s
            })
        };
        let g = [1, 4, 6, 4, 1];
        failures.same(&at("5x5 binomial filter"), &out, &conv(&|a, b| g[a] * g[b]));
        let p = |a: usize, b: usize| {
            if (a, b) == (2, 4) {
                -7
            } else {
                (a + b + 1) as i32
            }
        };
        failures.same(&at("5x5 filter, not an outer product"), &out2, &conv(&p));

        let mut out = Matrix::<i32>::zeros([m, n]);
        run("products", products(rt, &src, &other, &mut out));
        let want = Matrix::<i32>::from_fn([m, n], |i| {
            let (x, y) = (i[0] as isize, i[1] as isize);
            let mut s = 0i32;
            for a in -4..=4 {
                for b in -4..=4 {
                    let p = r::border_value(&src, rep, rep, x + a, y + b)
                        * r::border_value(&other, both, both, x + a, y + b);
                    s = s.wrapping_add(p as i32);
                }
            }
            s - 3 * i32::from(src.get(&[i[0], i[1]]))
        });
        failures.same(&at("9x9 sum of products, two rules"), &out, &want);

        // A float mean: the taps added in row-major order from 0 in f32, as C would.
        let fsrc =
            Matrix::<f32>::from_fn([m, n], |i| f32::from(src.get(&[i[0], i[1]])) / 4.0 - 10.0);
        let mut out = Matrix::<f32>::zeros([m, n]);
        run("mean_constant", mean_constant(rt, &fsrc, &mut out));
        let want = Matrix::<f32>::from_fn([m, n], |i| {
            let (x, y) = (i[0] as isize, i[1] as isize);
            let mut s = 0.0f32;
            for a in -4..=4isize {
                for b in -4..=4isize {
                    let (p, q) = (x + a, y + b);
                    let inside = (0..m as isize).contains(&p) && (0..n as isize).contains(&q);
                    s += if inside {
                        fsrc.get(&[p as usize, q as usize])
                    } else {
                        0.5
                    };
                }
            }
            s / 81.0
        });
        // The sum's order is the LIR's on every path; OpenCL's `/` may be a few ulp off.
        if rt.device().is_none() {
            failures.same(&at("9x9 f32 mean, constant"), &out, &want);
        } else {
            failures.close(&at("9x9 f32 mean, constant"), &out, &want, 1e-5);
        }
    }
    failures.finish();
}
