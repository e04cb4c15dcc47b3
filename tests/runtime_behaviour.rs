//! How generated pipeline functions behave around the computation, on every runtime (the CPU
//! path and, when there is one, an OpenCL device; `PARAC_REQUIRE_OPENCL=1` makes a missing device
//! a failure):
//!
//! - (a) arguments of the wrong shape give a typed `Error::Shape` naming the function, the matrix
//!   and both shapes, before any work (outputs untouched);
//! - (b) 1,000 calls keep device memory flat (`parac::opencl::live_buffers()`) and the results
//!   right;
//! - (c) one `Runtime` shared by 4 threads gives the results of one thread;
//! - (d) out-of-bounds accesses the compile-time checks cannot see (a data-dependent index, sizes
//!   a pipeline is not written for, a border mode on a side shorter than its width) return
//!   `Error::OutOfBounds` instead of panicking or reading garbage;
//! - (e) integer division by zero returns `Error::DivisionByZero`.
//!
//! (d) and (e) are required on the CPU path. On OpenCL they run in a child process (an
//! out-of-bounds access or a division by zero on a device may crash the process: PoCL runs
//! kernels on the host CPU, where an integer division by zero raises SIGFPE); the child must not
//! crash and an error it returns must be the right one, but a device that computes a value
//! instead of reporting the error is accepted as a known limitation and printed (see
//! `device_error_child`).

#[macro_use]
mod common;

#[path = "../examples/pipelines/blur.rs"]
mod blur_p;
#[path = "../examples/pipelines/laplacian.rs"]
mod laplacian_p;
#[path = "../examples/pipelines/sharpen.rs"]
mod sharpen_p;
#[path = "../examples/pipelines/unsharp.rs"]
mod unsharp_p;

use std::thread;

use common::check::{assert_close, assert_same};
use common::data;
use common::reference as r;
use common::runtimes;
use parac::{Error, Matrix, Runtime};

parac::parac! {
    /// Two inputs of one shape: the second one's shape is checked against the first's.
    pub fn blend(a: &u8[M][N], b: &u8[M][N], out: &mut u16[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            out[x][y] = a[x][y] * 3 + b[x][y];
        }
    }

    /// A data-dependent index: `src[x][y + k]` is inside only for `k == 0`; the compiler cannot
    /// bound it (its facts say "unknown (data-dependent index)"), so the run-time check must.
    pub fn shift(src: &u8[M][N], out: &mut u8[M][N], k: i32) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            out[x][y] = src[x][y + k];
        }
    }

    /// A column read at an index from data: a row whose index is outside fails there.
    pub fn gather_cols(src: &u8[M][N], idx: &i32[M][N], out: &mut u8[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            out[x][y] = src[x][idx[x][y]];
        }
    }

    /// reflect101 of width 2 on any size: on a side of 2, side `-2` reflects twice (index 0),
    /// as OpenCV's borderInterpolate (docs/language.md).
    pub fn reflect101_sum(src: &u8[M][N], out: &mut i32[M][N]) {
        parac_border_rule r = reflect101(src[2][2]);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(r) {
            out[x][y] = parac_matrix_sum(src[x-2:5:1][y-2:5:1]);
        }
    }

    /// Integer division and remainder by a scalar parameter.
    pub fn divide(src: &u8[M][N], quo: &mut i32[M][N], rem: &mut i32[M][N], d: i32) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            quo[x][y] = src[x][y] / d;
            rem[x][y] = src[x][y] % (d + 1);
        }
    }

    /// Integer division by a scalar parameter on the host, between the steps.
    pub fn host_divide(src: &u8[M][N], out: &mut i32[M][N], d: i32) {
        let q = N / d;
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            out[x][y] = src[x][y] + q;
        }
    }
}

on_every_runtime! {
    wrong_shapes_are_typed_errors,
    one_runtime_shared_by_four_threads,
}

/// A matrix of one repeated value (to see that an output was not written).
fn filled<T: parac::Element>(shape: &[usize], v: T) -> Matrix<T> {
    Matrix::from_fn(shape, |_| v)
}

// ---- (a) shapes --------------------------------------------------------------------------------

/// `[a][b]..`, as the messages write shapes.
fn dims(s: &[usize]) -> String {
    s.iter().map(|d| format!("[{d}]")).collect()
}

/// Checks that `result` is `Error::Shape` for `matrix` of `function`, with the declared shape
/// (compared without spaces), `expected` (if given) and `got`, and that its text names them:
/// `matrix `<m>` of `<f>` has shape <got>, but the pipeline declares <declared> = <expected>`.
#[track_caller]
fn expect_shape_error(
    ctx: &str,
    result: Result<(), Error>,
    function: &str,
    matrix: &str,
    declared: &str,
    expected: Option<&[usize]>,
    got: &[usize],
) {
    let Err(e) = result else {
        panic!("{ctx}: expected Error::Shape for `{matrix}`, got Ok(())");
    };
    let Error::Shape {
        function: f,
        matrix: m,
        declared: d,
        expected: exp,
        got: g,
    } = &e
    else {
        panic!("{ctx}: expected Error::Shape for `{matrix}`, got {e:?}");
    };
    assert_eq!(
        (*f, *m, d.replace(' ', ""), g.as_slice()),
        (function, matrix, declared.to_string(), got),
        "{ctx}: {e}"
    );
    if let Some(expected) = expected {
        assert_eq!(exp.as_slice(), expected, "{ctx}: {e}");
    }
    let want = format!(
        "matrix `{matrix}` of `{function}` has shape {}, but the pipeline declares {d} = {}",
        dims(got),
        dims(exp)
    );
    assert_eq!(e.to_string(), want, "{ctx}: the message");
}

fn wrong_shapes_are_typed_errors(rt: &Runtime) {
    let on = runtimes::name(rt);
    let src = data::random_u8(6, 7, 1);

    // An output: `lap` must be [M][N] = [6][7].
    let mut lap = filled(&[6, 8], 9i16);
    let mut down = filled(&[3, 4], 9u8);
    expect_shape_error(
        &format!("laplacian, wrong `lap`, on {on}"),
        laplacian_p::laplacian(rt, &src, &mut lap, &mut down),
        "laplacian",
        "lap",
        "[M][N]",
        Some(&[6, 7]),
        &[6, 8],
    );
    // No work was done: neither output was written.
    assert_same(
        &format!("laplacian `lap` after the error, on {on}"),
        &lap,
        &filled(&[6, 8], 9),
    );
    assert_same(
        &format!("laplacian `down` after the error, on {on}"),
        &down,
        &filled(&[3, 4], 9),
    );

    // An output whose declared shape is an expression: `down` is [(M+1)/2][(N+1)/2] = [3][4].
    let mut lap = filled(&[6, 7], 9i16);
    let mut down = filled(&[3, 3], 9u8);
    expect_shape_error(
        &format!("laplacian, wrong `down`, on {on}"),
        laplacian_p::laplacian(rt, &src, &mut lap, &mut down),
        "laplacian",
        "down",
        "[(M+1)/2][(N+1)/2]",
        Some(&[3, 4]),
        &[3, 3],
    );
    assert_same(
        &format!("laplacian `lap` after the error, on {on}"),
        &lap,
        &filled(&[6, 7], 9),
    );

    // An input whose shape is checked against sizes bound by an earlier one.
    let a = data::random_u8(5, 4, 2);
    let b = data::random_u8(4, 5, 3);
    let mut out = filled(&[5, 4], 7u16);
    expect_shape_error(
        &format!("blend, wrong `b`, on {on}"),
        blend(rt, &a, &b, &mut out),
        "blend",
        "b",
        "[M][N]",
        Some(&[5, 4]),
        &[4, 5],
    );
    assert_same(
        &format!("blend `out` after the error, on {on}"),
        &out,
        &filled(&[5, 4], 7),
    );

    // An input with a constant dimension: `img` is [3][M][N].
    let img = data::random_rgb(4, 5, 4);
    let two = Matrix::from_fn([2, 4, 5], |i| img.get(i));
    let mut out = filled(&[3, 4, 5], 0.5f32);
    expect_shape_error(
        &format!("unsharp, 2 channels, on {on}"),
        unsharp_p::unsharp(rt, &two, &mut out),
        "unsharp",
        "img",
        "[3][M][N]",
        Some(&[3, 4, 5]),
        &[2, 4, 5],
    );
    // An input with the wrong number of dimensions (a gray image for an RGB one): a rank
    // error, checked before any size is bound from the argument.
    let gray = img.plane(0);
    match unsharp_p::unsharp(rt, &gray, &mut out) {
        Err(e @ parac::Error::Rank { .. }) => assert_eq!(
            e.to_string(),
            "matrix `img` of `unsharp` has 2 dimensions, shape [4][5], but the pipeline declares [3][M][N] (3 dimensions)",
            "unsharp, a 2-D input, on {on}"
        ),
        other => panic!("unsharp, a 2-D input, on {on}: expected Error::Rank, got {other:?}"),
    }
    assert_close(
        &format!("unsharp `out` after the errors, on {on}"),
        &out,
        &filled(&[3, 4, 5], 0.5),
        0.0,
    );

    // The right shapes work afterwards.
    let mut lap = Matrix::<i16>::zeros([6, 7]);
    let mut down = Matrix::<u8>::zeros([3, 4]);
    laplacian_p::laplacian(rt, &src, &mut lap, &mut down)
        .unwrap_or_else(|e| panic!("laplacian 6x7 on {on}: {e}"));
    let (want_lap, want_down) = r::laplacian(&src);
    assert_same(&format!("laplacian `lap` 6x7 on {on}"), &lap, &want_lap);
    assert_same(&format!("laplacian `down` 6x7 on {on}"), &down, &want_down);
}

// ---- (b) repeated calls ------------------------------------------------------------------------

/// 1,000 calls of `laplacian` (three regions, an intermediate, two outputs) on small images,
/// alternating two inputs so that a stale buffer would show as the other input's result.
#[test]
fn repeated_calls_keep_memory_flat() {
    let _exclusive = runtimes::exclusive_buffers();
    for rt in runtimes::all() {
        let on = runtimes::name(rt);
        let inputs = [data::random_u8(8, 9, 10), data::structured_u8(8, 9, 11)];
        let wants = inputs.each_ref().map(r::laplacian);
        let mut lap = Matrix::<i16>::zeros([8, 9]);
        let mut down = Matrix::<u8>::zeros([4, 5]);
        // The first call may build programs and allocate what a runtime keeps for good.
        laplacian_p::laplacian(rt, &inputs[0], &mut lap, &mut down)
            .unwrap_or_else(|e| panic!("laplacian on {on}, first call: {e}"));
        if let Some(d) = rt.device() {
            d.finish().expect("finish");
        }
        let before = parac::opencl::live_buffers();
        for i in 0..1000 {
            let k = i % 2;
            laplacian_p::laplacian(rt, &inputs[k], &mut lap, &mut down)
                .unwrap_or_else(|e| panic!("laplacian on {on}, call {i}: {e}"));
            assert!(
                lap == wants[k].0 && down == wants[k].1,
                "laplacian on {on}, call {i} (input {k}): wrong result"
            );
            if i % 100 == 99 {
                assert_eq!(
                    parac::opencl::live_buffers(),
                    before,
                    "live device buffers after {} calls on {on}",
                    i + 1
                );
            }
        }
        if let Some(d) = rt.device() {
            d.finish().expect("finish");
        }
        assert_eq!(
            parac::opencl::live_buffers(),
            before,
            "live device buffers after 1000 calls on {on}"
        );
        if let Some(d) = rt.device() {
            // Dropped buffers' memory is reused, not piled up: what one call allocates at most.
            let pooled = d.pooled_bytes();
            laplacian_p::laplacian(rt, &inputs[0], &mut lap, &mut down).expect("laplacian");
            d.finish().expect("finish");
            assert_eq!(d.pooled_bytes(), pooled, "pooled bytes grow on {on}");
        }
    }
}

/// A buffer's memory goes back to its device when it is dropped and serves the next buffer of
/// the same size: `alloc` zero-fills it again, `alloc_uninit` may show what was there; `trim`
/// releases it.
#[test]
fn dropped_buffers_are_reused() {
    let _exclusive = runtimes::exclusive_buffers();
    let Some(rt) = runtimes::fresh_opencl() else {
        return;
    };
    let d = rt.device().expect("device");
    d.trim();
    let m = Matrix::<u16>::from_fn([5, 7], |i| (i[0] * 7 + i[1] + 1) as u16);
    let b = d.upload("m", &m).expect("upload");
    drop(b);
    d.finish().expect("finish");
    let pooled = d.pooled_bytes();
    assert!(
        pooled >= 5 * 7 * 2,
        "a dropped buffer is kept: {pooled} bytes"
    );
    let z = d.alloc::<u16>("z", &[5, 7]).expect("alloc");
    assert_eq!(d.pooled_bytes(), 0, "the next buffer of that size takes it");
    let mut back = Matrix::<u16>::zeros([5, 7]);
    d.download(&z, &mut back).expect("download");
    assert_eq!(
        back,
        Matrix::<u16>::zeros([5, 7]),
        "alloc zero-fills reused memory"
    );
    drop(z);
    let u = d.alloc_uninit::<u16>("u", &[5, 7]).expect("alloc_uninit");
    assert_eq!(u.shape(), &[5, 7]);
    drop(u);
    d.finish().expect("finish");
    assert!(d.trim() >= 5 * 7 * 2);
    assert_eq!(d.pooled_bytes(), 0);
}

// ---- (c) threads -------------------------------------------------------------------------------

fn one_runtime_shared_by_four_threads(rt: &Runtime) {
    let on = runtimes::name(rt);
    // Different sizes per thread, so that a shared buffer of the wrong size or content shows
    // (sharpen runs on the top-left corner whose sides are multiples of 4, at least 8x8).
    let sizes = [(9, 11), (16, 16), (13, 9), (24, 20)];
    type Out = (
        Matrix<i16>,
        Matrix<u8>,
        Matrix<u16>,
        Matrix<f32>,
        Matrix<u8>,
    );
    let run = |t: usize| -> Out {
        let (m, n) = sizes[t];
        let seed = t as u64 + 100;
        let src = data::random_u8(m, n, seed);
        let mut lap = Matrix::<i16>::zeros([m, n]);
        let mut down = Matrix::<u8>::zeros([m.div_ceil(2), n.div_ceil(2)]);
        laplacian_p::laplacian(rt, &src, &mut lap, &mut down)
            .unwrap_or_else(|e| panic!("thread {t}: laplacian on {on}: {e}"));
        let src12 = data::random_u12(m, n, seed);
        let mut blurred = Matrix::<u16>::zeros([m - 2, n - 2]);
        blur_p::blur(rt, &src12, &mut blurred)
            .unwrap_or_else(|e| panic!("thread {t}: blur on {on}: {e}"));
        let img = data::random_rgb(m, n, seed);
        let mut sharp = Matrix::<f32>::zeros([3, m, n]);
        unsharp_p::unsharp(rt, &img, &mut sharp)
            .unwrap_or_else(|e| panic!("thread {t}: unsharp on {on}: {e}"));
        let s = data::crop(&src, m / 4 * 4, n / 4 * 4);
        let mut sh = Matrix::<u8>::zeros(s.shape());
        sharpen_p::sharpen(rt, &s, &mut sh)
            .unwrap_or_else(|e| panic!("thread {t}: sharpen on {on}: {e}"));
        (lap, down, blurred, sharp, sh)
    };
    // One thread first; it also matches the references.
    let single: Vec<Out> = (0..4).map(run).collect();
    for (t, o) in single.iter().enumerate() {
        let (m, n) = sizes[t];
        let seed = t as u64 + 100;
        let (lap, down) = r::laplacian(&data::random_u8(m, n, seed));
        assert_same(&format!("laplacian `lap` {m}x{n} on {on}"), &o.0, &lap);
        assert_same(&format!("laplacian `down` {m}x{n} on {on}"), &o.1, &down);
        let blurred = r::blur(&data::random_u12(m, n, seed));
        assert_same(&format!("blur {m}x{n} on {on}"), &o.2, &blurred);
        let sharp = r::unsharp(&data::random_rgb(m, n, seed));
        assert_close(&format!("unsharp {m}x{n} on {on}"), &o.3, &sharp, 1e-4);
        let s = data::crop(&data::random_u8(m, n, seed), m / 4 * 4, n / 4 * 4);
        assert_same(
            &format!("sharpen {:?} on {on}", s.shape()),
            &o.4,
            &r::sharpen(&s),
        );
    }
    // Four threads at once on the same runtime, several rounds each.
    thread::scope(|scope| {
        for (t, want) in single.iter().enumerate() {
            let run = &run;
            let on = &on;
            scope.spawn(move || {
                for round in 0..10 {
                    let got = run(t);
                    let ctx = |what: &str| {
                        format!("thread {t}, round {round}, {what} {:?} on {on}", sizes[t])
                    };
                    assert_same(&ctx("laplacian `lap`"), &got.0, &want.0);
                    assert_same(&ctx("laplacian `down`"), &got.1, &want.1);
                    assert_same(&ctx("blur"), &got.2, &want.2);
                    assert_close(&ctx("unsharp"), &got.3, &want.3, 0.0);
                    assert_same(&ctx("sharpen"), &got.4, &want.4);
                }
            });
        }
    });
}

// ---- (d) out of bounds and (e) division by zero ------------------------------------------------

/// What a call that should fail did: `Ok(description)` of the error, or `Err(description)` of
/// the success or wrong error.
type Outcome = Result<String, String>;

/// `result` must be `Error::OutOfBounds` of `function`'s `matrix` (a read).
fn out_of_bounds(result: Result<(), Error>, function: &str, matrix: &str) -> Outcome {
    match result {
        Err(
            ref e @ Error::OutOfBounds {
                function: f,
                matrix: m,
                what,
                ref index,
                ref shape,
                ..
            },
        ) if f == function && m == matrix && what == "read of" => {
            let text = e.to_string();
            // The message names the function, the matrix, the index and the shape.
            let idx: String = index.iter().map(|i| format!("[{i}]")).collect();
            let dims: String = shape.iter().map(|d| format!("[{d}]")).collect();
            if text.contains(&format!("`{function}`"))
                && text.contains(&format!(
                    "read of `{matrix}` at {idx} outside its shape {dims}"
                ))
            {
                Ok(text)
            } else {
                Err(format!("OutOfBounds with an unexpected message: {text}"))
            }
        }
        Err(e) => Err(format!(
            "expected OutOfBounds reading `{matrix}`, got {e:?}"
        )),
        Ok(()) => Err(format!(
            "expected OutOfBounds reading `{matrix}`, got Ok(())"
        )),
    }
}

/// `result` must be `Error::DivisionByZero` of `function`.
fn division_by_zero(result: Result<(), Error>, function: &str, region: Option<&str>) -> Outcome {
    match result {
        Err(
            ref e @ Error::DivisionByZero {
                function: f,
                region: reg,
            },
        ) if f == function && region.is_none_or(|r| r == reg) => {
            let text = e.to_string();
            if text == format!("`{function}`, region `{reg}`: integer division by zero") {
                Ok(text)
            } else {
                Err(format!("DivisionByZero with an unexpected message: {text}"))
            }
        }
        Err(e) => Err(format!(
            "expected DivisionByZero in `{function}`, got {e:?}"
        )),
        Ok(()) => Err(format!(
            "expected DivisionByZero in `{function}`, got Ok(())"
        )),
    }
}

/// The out-of-bounds cases: `(name, outcome)`.
fn out_of_bounds_cases(rt: &Runtime) -> Vec<(&'static str, Outcome)> {
    let mut cases = Vec::new();
    let src = data::random_u8(5, 6, 20);

    // A data-dependent index past the last column (and before the first).
    let mut out = Matrix::<u8>::zeros([5, 6]);
    cases.push((
        "shift k=1 (reads column N)",
        out_of_bounds(shift(rt, &src, &mut out, 1), "shift", "src"),
    ));
    cases.push((
        "shift k=-3 (reads column -3)",
        out_of_bounds(shift(rt, &src, &mut out, -3), "shift", "src"),
    ));
    // k = 0 is fine.
    cases.push((
        "shift k=0 (in bounds)",
        match shift(rt, &src, &mut out, 0) {
            Ok(()) if out == src => Ok("Ok, out == src".to_string()),
            other => Err(format!("expected Ok and a copy, got {other:?}")),
        },
    ));

    // sharpen on 3 rows (it is written for multiples of 4, at least 8): `down` has M/4 = 0 rows,
    // and the upsample reads `down[clamp(i0, 0, M/4-1)]` = `down[-1]`.
    let small = data::random_u8(3, 8, 21);
    let mut out = Matrix::<u8>::zeros([3, 8]);
    cases.push((
        "sharpen 3x8 (down has 0 rows)",
        out_of_bounds(sharpen_p::sharpen(rt, &small, &mut out), "sharpen", "down"),
    ));

    // laplacian below its minimum of 4x4: the border formulas read src[*][3] with N = 3, and
    // h[3][*] with M = 3.
    let narrow = data::random_u8(6, 3, 22);
    let mut lap = Matrix::<i16>::zeros([6, 3]);
    let mut down = Matrix::<u8>::zeros([3, 2]);
    cases.push((
        "laplacian 6x3 (border rule reads src[*][3])",
        out_of_bounds(
            laplacian_p::laplacian(rt, &narrow, &mut lap, &mut down),
            "laplacian",
            "src",
        ),
    ));
    let short = data::random_u8(3, 6, 23);
    let mut lap = Matrix::<i16>::zeros([3, 6]);
    let mut down = Matrix::<u8>::zeros([2, 3]);
    cases.push((
        "laplacian 3x6 (border rule reads h[3][*])",
        out_of_bounds(
            laplacian_p::laplacian(rt, &short, &mut lap, &mut down),
            "laplacian",
            "h",
        ),
    ));

    // A shorthand is defined on every size (OpenCV's borderInterpolate): reflect101 of width 2
    // on a side of 2 or 1 reflects again, no error.
    for (name, m, n) in [
        ("reflect101 width 2 on 2x5 (reflects twice)", 2, 5),
        ("reflect101 width 2 on 5x2 (reflects twice)", 5, 2),
        ("reflect101 width 2 on 2x2 (reflects twice)", 2, 2),
        ("reflect101 width 2 on 1x1 (index 0)", 1, 1),
        ("reflect101 width 2 on 3x3", 3, 3),
    ] {
        let s = data::random_u8(m, n, 24);
        let mut out = Matrix::<i32>::zeros([m, n]);
        cases.push((
            name,
            match reflect101_sum(rt, &s, &mut out) {
                Ok(()) => {
                    let b = Some(r::Border::Reflect101);
                    let want = r::box_sum(&s, 2, 2, b, b);
                    if out == want {
                        Ok("Ok, matches the reference".to_string())
                    } else {
                        Err(format!("wrong result {out:?}, expected {want:?}"))
                    }
                }
                Err(e) => Err(format!("expected Ok, got {e}")),
            },
        ));
    }
    cases
}

/// The division-by-zero cases: `(name, outcome)`.
fn division_by_zero_cases(rt: &Runtime) -> Vec<(&'static str, Outcome)> {
    let mut cases = Vec::new();
    let src = data::random_u8(4, 5, 30);
    let mut quo = Matrix::<i32>::zeros([4, 5]);
    let mut rem = Matrix::<i32>::zeros([4, 5]);
    cases.push((
        "src / d with d = 0",
        division_by_zero(
            divide(rt, &src, &mut quo, &mut rem, 0),
            "divide",
            Some("it"),
        ),
    ));
    cases.push((
        "src % (d + 1) with d = -1",
        division_by_zero(
            divide(rt, &src, &mut quo, &mut rem, -1),
            "divide",
            Some("it"),
        ),
    ));
    cases.push((
        "d = 3 (no division by zero)",
        match divide(rt, &src, &mut quo, &mut rem, 3) {
            Ok(()) => {
                let ok = (0..4).all(|x| {
                    (0..5).all(|y| {
                        let v = i32::from(src.get(&[x, y]));
                        quo.get(&[x, y]) == v / 3 && rem.get(&[x, y]) == v % 4
                    })
                });
                if ok {
                    Ok("Ok, right values".to_string())
                } else {
                    Err("wrong values".to_string())
                }
            }
            Err(e) => Err(format!("expected Ok, got {e}")),
        },
    ));
    let mut out = Matrix::<i32>::zeros([4, 5]);
    cases.push((
        "host let N / d with d = 0",
        division_by_zero(host_divide(rt, &src, &mut out, 0), "host_divide", None),
    ));
    cases
}

/// Fails with every case whose outcome is wrong.
#[track_caller]
fn require_all(what: &str, on: &str, cases: &[(&str, Outcome)]) {
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(name, o)| o.as_ref().err().map(|e| format!("{name}: {e}")))
        .collect();
    assert!(
        wrong.is_empty(),
        "{what} on {on}:\n  {}",
        wrong.join("\n  ")
    );
}

#[test]
fn out_of_bounds_is_an_error_on_the_cpu_path() {
    let rt = runtimes::cpu();
    require_all("out of bounds", "CPU", &out_of_bounds_cases(rt));
}

/// Where several rows fail, the CPU path reports the first failing row's error (as the
/// interpreter does), on one thread or several.
#[test]
fn the_first_failing_row_is_the_error() {
    let (m, n) = (300, 37);
    let src = filled(&[m, n], 7u8);
    let bad = [((250, 3), 99), ((41, 20), -5), ((42, 1), 1000)];
    let idx = Matrix::from_fn([m, n], |i| {
        bad.iter()
            .find(|(at, _)| *at == (i[0], i[1]))
            .map_or((i[1] % n) as i32, |(_, v)| *v)
    });
    for threads in [1, 2, 8] {
        let rt = Runtime::cpu().with_cpu_threads(threads);
        let mut out = Matrix::<u8>::zeros([m, n]);
        match gather_cols(&rt, &src, &idx, &mut out) {
            Err(Error::OutOfBounds {
                matrix: "src",
                index,
                ..
            }) => assert_eq!(index, vec![41, -5], "{threads} threads"),
            other => panic!("{threads} threads: {other:?}"),
        }
    }
}

#[test]
fn division_by_zero_is_an_error_on_the_cpu_path() {
    let rt = runtimes::cpu();
    require_all("division by zero", "CPU", &division_by_zero_cases(rt));
}

/// The OpenCL half of (d) and (e), in a child process (`device_error_child`). The child must
/// exit normally (no crash, no panic); a case where the device computes a value instead of the
/// error is a known limitation: printed, not a failure. A wrong error, or a wrong value where
/// there is no error to report, fails.
#[test]
fn out_of_bounds_and_division_by_zero_on_opencl() {
    let Some(_) = runtimes::opencl() else { return };
    let child = runtimes::run_child(
        "device_error_child",
        &[("PARAC_TEST_CHILD", "opencl"), ("RUST_BACKTRACE", "0")],
    );
    assert!(
        child.success,
        "the child running out-of-bounds and division-by-zero cases on OpenCL did not exit \
         normally ({}); a device access outside a buffer or a division by zero must not crash \
         the process:\n{}",
        child.status, child.output
    );
    assert!(child.output.contains("1 passed"), "{}", child.output);
    for line in child
        .output
        .lines()
        .filter(|l| l.starts_with("KNOWN LIMITATION"))
    {
        println!("{line}");
    }
}

/// Run by `out_of_bounds_and_division_by_zero_on_opencl` with `PARAC_TEST_CHILD=opencl`; does
/// nothing otherwise.
#[test]
#[ignore = "run by out_of_bounds_and_division_by_zero_on_opencl"]
fn device_error_child() {
    if std::env::var("PARAC_TEST_CHILD").as_deref() != Ok("opencl") {
        return;
    }
    let rt = runtimes::opencl().expect("the parent found an OpenCL device");
    let on = runtimes::name(rt);
    let mut wrong = Vec::new();
    for (what, cases) in [
        ("out of bounds", out_of_bounds_cases(rt)),
        ("division by zero", division_by_zero_cases(rt)),
    ] {
        for (name, outcome) in cases {
            match outcome {
                Ok(text) => println!("{what}, {name}: as expected: {text}"),
                // KNOWN LIMITATION (accepted until the OpenCL path reports it): the kernel ran
                // and returned Ok with whatever the device computed.
                Err(e) if e.ends_with("got Ok(())") => {
                    println!("KNOWN LIMITATION on {on}: {what}, {name}: not detected ({e})");
                }
                Err(e) => wrong.push(format!("{what}, {name}: {e}")),
            }
        }
    }
    assert!(wrong.is_empty(), "on {on}:\n  {}", wrong.join("\n  "));
}
