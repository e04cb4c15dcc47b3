//! The reference interpreter (`parac_core::interp`) on the four pipelines of APPS.md against the
//! plain Rust references of `tests/common/reference.rs` (bit-exact for the integer pipelines,
//! within 1e-4 for `unsharp`), on random images of several sizes including the smallest legal
//! ones and odd ones; and on small programs whose errors it must report: a lookup outside its
//! table, a division by zero, a shift by a host scalar that the interval check refuses before
//! the region runs.

// `tests/common/reference.rs` is written against `parac::Matrix`; this crate provides the small
// part of that API it uses, under the name `parac`.
extern crate self as parac;

#[path = "../../tests/common/reference.rs"]
mod reference;

use parac_core::bounds::Iv;
use parac_core::interp::{self, Arg, Data, InterpError, Tensor, Val};
use parac_core::ir::Function;

/// The element types the references use.
pub trait Element: Copy + Default + PartialEq + std::fmt::Debug + 'static {}
impl<T: Copy + Default + PartialEq + std::fmt::Debug + 'static> Element for T {}

/// A row-major matrix: the subset of `parac::Matrix` that `reference.rs` uses.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix<T> {
    shape: Vec<usize>,
    data: Vec<T>,
}

impl<T: Element> Matrix<T> {
    pub fn from_fn(shape: impl Into<Vec<usize>>, mut f: impl FnMut(&[usize]) -> T) -> Self {
        let shape = shape.into();
        let n = shape.iter().product();
        let mut idx = vec![0; shape.len()];
        let mut data = Vec::with_capacity(n);
        for _ in 0..n {
            data.push(f(&idx));
            for k in (0..shape.len()).rev() {
                idx[k] += 1;
                if idx[k] < shape[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
        Matrix { shape, data }
    }

    pub fn from_vec(shape: impl Into<Vec<usize>>, data: Vec<T>) -> Option<Self> {
        let shape = shape.into();
        (shape.iter().product::<usize>() == data.len()).then_some(Matrix { shape, data })
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    pub fn get(&self, idx: &[usize]) -> T {
        let mut off = 0;
        for (i, d) in idx.iter().zip(&self.shape) {
            assert!(i < d, "index {idx:?} outside {:?}", self.shape);
            off = off * d + i;
        }
        self.data[off]
    }
}

/// PCG32, seeded.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut r = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x1234_5678);
        r.next();
        r
    }

    fn next(&mut self) -> u32 {
        let old = self.0;
        self.0 = old
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(109);
        let x = (((old >> 18) ^ old) >> 27) as u32;
        x.rotate_right((old >> 59) as u32)
    }

    fn below(&mut self, n: u32) -> u32 {
        ((u64::from(self.next()) * u64::from(n)) >> 32) as u32
    }
}

/// The function `name` of the `parac!` block of `examples/pipelines/<name>.rs`.
fn pipeline(name: &str) -> Function {
    let path = format!(
        "{}/../examples/pipelines/{name}.rs",
        env!("CARGO_MANIFEST_DIR")
    );
    let rust = std::fs::read_to_string(&path).expect("pipeline source");
    let start = rust.find("parac! {").expect("a parac! block") + "parac! {".len();
    let end = rust.rfind('}').expect("closing brace");
    program(&rust[start..end], name)
}

/// The function `name` of a program that must compile without diagnostics.
fn program(src: &str, name: &str) -> Function {
    let mut c = parac_core::compile_str(src);
    assert!(c.diagnostics.is_empty(), "{name}: {:?}", c.diagnostics);
    let i = c
        .module
        .functions
        .iter()
        .position(|f| f.name == name)
        .expect("the function");
    c.module.functions.swap_remove(i)
}

fn tensor_u8(m: &Matrix<u8>) -> Arg {
    Arg::Matrix(Tensor::new(m.shape(), Data::U8(m.as_slice().to_vec())).expect("shape"))
}

fn zeros(t: parac_core::ir::Scalar, shape: &[usize]) -> Arg {
    Arg::Matrix(Tensor::zeros(t, shape).expect("a matrix type"))
}

fn out(args: &[Arg], i: usize) -> &Data {
    match &args[i] {
        Arg::Matrix(t) => &t.data,
        Arg::Scalar(_) => panic!("argument {i} is a scalar"),
    }
}

fn random_u8(m: usize, n: usize, seed: u64) -> Matrix<u8> {
    let mut rng = Rng::new(seed ^ ((m as u64) << 32) ^ n as u64);
    Matrix::from_fn([m, n], |_| rng.below(256) as u8)
}

use parac_core::ir::Scalar::{F32, I16, U8, U16};

#[test]
fn laplacian_matches_the_reference() {
    let f = pipeline("laplacian");
    for (m, n) in [(4, 4), (4, 5), (5, 4), (7, 9), (16, 16), (33, 17), (6, 31)] {
        let src = random_u8(m, n, 1);
        let (lap, down) = reference::laplacian(&src);
        let mut args = vec![
            tensor_u8(&src),
            zeros(I16, &[m, n]),
            zeros(U8, &[m.div_ceil(2), n.div_ceil(2)]),
        ];
        assert_eq!(interp::run(&f, &mut args), Ok(None), "{m}x{n}");
        assert_eq!(
            out(&args, 1),
            &Data::I16(lap.as_slice().to_vec()),
            "lap {m}x{n}"
        );
        assert_eq!(
            out(&args, 2),
            &Data::U8(down.as_slice().to_vec()),
            "down {m}x{n}"
        );
    }
}

#[test]
fn sharpen_matches_the_reference() {
    let f = pipeline("sharpen");
    for (m, n) in [(8, 8), (8, 12), (12, 8), (16, 20), (32, 28)] {
        let src = random_u8(m, n, 2);
        let want = reference::sharpen(&src);
        let mut args = vec![tensor_u8(&src), zeros(U8, &[m, n])];
        assert_eq!(interp::run(&f, &mut args), Ok(None), "{m}x{n}");
        assert_eq!(
            out(&args, 1),
            &Data::U8(want.as_slice().to_vec()),
            "{m}x{n}"
        );
    }
}

#[test]
fn blur_matches_the_reference() {
    let f = pipeline("blur");
    for (m, n) in [(3, 3), (3, 4), (5, 3), (7, 11), (32, 33)] {
        let mut rng = Rng::new(3 ^ ((m * 1000 + n) as u64));
        let src = Matrix::from_fn([m, n], |_| rng.below(4096) as u16);
        let want = reference::blur(&src);
        let mut args = vec![
            Arg::Matrix(Tensor::new([m, n], Data::U16(src.as_slice().to_vec())).expect("shape")),
            zeros(U16, &[m - 2, n - 2]),
        ];
        assert_eq!(interp::run(&f, &mut args), Ok(None), "{m}x{n}");
        assert_eq!(
            out(&args, 1),
            &Data::U16(want.as_slice().to_vec()),
            "{m}x{n}"
        );
    }
}

#[test]
fn unsharp_matches_the_reference() {
    let f = pipeline("unsharp");
    for (m, n) in [(1, 1), (1, 2), (2, 1), (3, 5), (8, 8), (17, 13)] {
        let mut rng = Rng::new(4 ^ ((m * 1000 + n) as u64));
        let lo = 1.0f32 / 255.0;
        let img = Matrix::from_fn([3, m, n], |_| {
            let u = (rng.next() >> 8) as f32 / (1u32 << 24) as f32;
            (lo + u * (1.0 - lo)).clamp(lo, 1.0)
        });
        let want = reference::unsharp(&img);
        let mut args = vec![
            Arg::Matrix(Tensor::new([3, m, n], Data::F32(img.as_slice().to_vec())).expect("shape")),
            zeros(F32, &[3, m, n]),
        ];
        assert_eq!(interp::run(&f, &mut args), Ok(None), "{m}x{n}");
        let Data::F32(got) = out(&args, 1) else {
            panic!("f32 output")
        };
        for (i, (g, w)) in got.iter().zip(want.as_slice()).enumerate() {
            let err = (f64::from(*g) - f64::from(*w)).abs();
            assert!(err <= 1e-4, "{m}x{n} element {i}: {g} vs {w}");
        }
    }
}

/// A shape that does not follow the declaration, and a wrong rank, are refused before anything
/// runs.
#[test]
fn shapes_are_checked() {
    let f = pipeline("blur");
    let mut args = vec![zeros(U16, &[5, 6]), zeros(U16, &[3, 5])];
    assert_eq!(
        interp::run(&f, &mut args),
        Err(InterpError::Shape {
            matrix: "out".into(),
            expected: vec![3, 4],
            found: vec![3, 5]
        })
    );
    let mut args = vec![zeros(U16, &[5, 6, 1]), zeros(U16, &[3, 4])];
    assert!(matches!(
        interp::run(&f, &mut args),
        Err(InterpError::Rank { expected: 2, .. })
    ));
    let mut args = vec![zeros(U8, &[5, 6]), zeros(U16, &[3, 4])];
    assert!(matches!(
        interp::run(&f, &mut args),
        Err(InterpError::Argument(_))
    ));
}

const ERRORS: &str = "
fn lookup(src: &u8[M][N], lut: &u8[16], out: &mut u8[M][N]) {
    parac_iterator it(0:M:1; 0:N:1) {
        out[itx][ity] = lut[src[itx][ity]];
    }
}
fn divide(src: &i32[M][N], k: i32, out: &mut i32[M][N]) {
    parac_iterator it(0:M:1; 0:N:1) {
        out[itx][ity] = src[itx][ity] / k;
    }
}
fn shift(src: &u8[M][N], k: i32, out: &mut u8[M][N]) {
    parac_iterator it(0:M:1; 0:N:1) {
        out[itx][ity] = src[itx][ity + k];
    }
}
";

#[test]
fn lookup_outside_its_table_is_an_error() {
    let f = program(ERRORS, "lookup");
    let lut = Arg::Matrix(Tensor::new([16], Data::U8((0..16).map(|i| 100 + i).collect())).unwrap());
    // Inside the table: the lookup.
    let src: Vec<u8> = (0..12).map(|i| (i * 5 % 16) as u8).collect();
    let mut args = vec![
        Arg::Matrix(Tensor::new([3, 4], Data::U8(src.clone())).unwrap()),
        lut.clone(),
        zeros(U8, &[3, 4]),
    ];
    assert_eq!(interp::run(&f, &mut args), Ok(None));
    assert_eq!(
        out(&args, 2),
        &Data::U8(src.iter().map(|v| 100 + v).collect())
    );
    // Index 16 at [1][2]: the first read outside, in row-major order.
    let mut bad = src;
    bad[6] = 16;
    bad[9] = 200;
    let mut args = vec![
        Arg::Matrix(Tensor::new([3, 4], Data::U8(bad)).unwrap()),
        lut,
        zeros(U8, &[3, 4]),
    ];
    assert_eq!(
        interp::run(&f, &mut args),
        Err(InterpError::OutOfBounds {
            region: "it".into(),
            what: "read of",
            matrix: "lut".into(),
            index: vec![16],
            shape: vec![16],
        })
    );
}

#[test]
fn division_by_zero_is_an_error() {
    let f = program(ERRORS, "divide");
    let src =
        || Arg::Matrix(Tensor::new([2, 3], Data::I32(vec![7, -7, 8, i32::MIN, 0, 5])).unwrap());
    let mut args = vec![
        src(),
        Arg::Scalar(Val::Int(-2)),
        zeros(parac_core::ir::Scalar::I32, &[2, 3]),
    ];
    assert_eq!(interp::run(&f, &mut args), Ok(None));
    assert_eq!(out(&args, 2), &Data::I32(vec![-3, 3, -4, 1 << 30, 0, -2]));
    // C's `MIN / -1` wraps.
    let mut args = vec![
        src(),
        Arg::Scalar(Val::Int(-1)),
        zeros(parac_core::ir::Scalar::I32, &[2, 3]),
    ];
    assert_eq!(interp::run(&f, &mut args), Ok(None));
    assert_eq!(out(&args, 2), &Data::I32(vec![-7, 7, -8, i32::MIN, 0, -5]));
    let mut args = vec![
        src(),
        Arg::Scalar(Val::Int(0)),
        zeros(parac_core::ir::Scalar::I32, &[2, 3]),
    ];
    assert_eq!(
        interp::run(&f, &mut args),
        Err(InterpError::DivisionByZero {
            region: "it".into()
        })
    );
    // A scalar outside its type is refused.
    let mut args = vec![
        src(),
        Arg::Scalar(Val::Int(1 << 40)),
        zeros(parac_core::ir::Scalar::I32, &[2, 3]),
    ];
    assert!(matches!(
        interp::run(&f, &mut args),
        Err(InterpError::Argument(_))
    ));
}

#[test]
fn host_scalar_shift_is_refused_by_the_interval_check() {
    let f = program(ERRORS, "shift");
    let (m, n) = (3usize, 5usize);
    let src: Vec<u8> = (0..(m * n) as u8).collect();
    let run = |k: i128| {
        let mut args = vec![
            Arg::Matrix(Tensor::new([m, n], Data::U8(src.clone())).unwrap()),
            Arg::Scalar(Val::Int(k)),
            Arg::Matrix(Tensor::new([m, n], Data::U8(vec![7; m * n])).unwrap()),
        ];
        let r = interp::run(&f, &mut args);
        (r, out(&args, 2).clone())
    };
    // k = 0 is a copy.
    assert_eq!(run(0), (Ok(None), Data::U8(src.clone())));
    // The interval of `ity + k` is [k, N-1+k]: refused before anything is written.
    for (k, index) in [(1, vec![0, 5]), (9, vec![0, 13]), (-2, vec![0, -2])] {
        let (r, written) = run(k);
        assert_eq!(
            r,
            Err(InterpError::OutOfBounds {
                region: "it".into(),
                what: "read of",
                matrix: "src".into(),
                index,
                shape: vec![m, n],
            }),
            "k = {k}"
        );
        assert_eq!(
            written,
            Data::U8(vec![7; m * n]),
            "nothing written, k = {k}"
        );
    }
    // The intervals themselves: the write `out[itx][ity]` and the read `src[itx][ity + k]`.
    let k_id = f.scalars.iter().position(|s| s.name == "k").unwrap();
    let mut scalars = vec![Val::Int(0); f.scalars.len()];
    scalars[k_id] = Val::Int(3);
    let ivs = interp::region_intervals(&f, 0, &[m as i64, n as i64], &scalars).unwrap();
    let r = &f.regions[0];
    let read = ivs
        .iter()
        .find(|(a, _)| !r.accesses[*a].write)
        .expect("the read is proven");
    assert_eq!(read.1, vec![Iv { lo: 0, hi: 2 }, Iv { lo: 3, hi: 7 }]);
    let write = ivs
        .iter()
        .find(|(a, _)| r.accesses[*a].write)
        .expect("the write is proven");
    assert_eq!(write.1, vec![Iv { lo: 0, hi: 2 }, Iv { lo: 0, hi: 4 }]);
    assert!(interp::check_intervals(&f, 0, &[m as i64, n as i64], &ivs).is_err());
}

const REDUCTIONS: &str = "
fn int_mean(src: &i16[M][N]) -> i32 {
    return parac_matrix_mean(src);
}
fn float_stats(src: &f32[M][N]) -> f32 {
    let (lo, hi, avg) = (parac_matrix_min(src), parac_matrix_max(src), parac_matrix_mean(src));
    return lo + hi * 100.0 + avg * 10000.0;
}
fn wide_sum(src: &u32[M][N]) -> i64 {
    return parac_matrix_sum(src);
}
";

/// Global operators (the macro's expansion of a global mean, and of a float global max, does
/// not compile yet, so these are checked against values computed by hand).
#[test]
fn global_reductions() {
    let f = program(REDUCTIONS, "int_mean");
    let run = |f: &Function, shape: [usize; 2], data: Data| {
        let mut args = vec![Arg::Matrix(Tensor::new(shape, data).unwrap())];
        interp::run(f, &mut args)
    };
    // Truncating integer division of the i64 sum by the count.
    assert_eq!(
        run(&f, [1, 3], Data::I16(vec![-7, 2, 3])),
        Ok(Some(Val::Int(0)))
    );
    assert_eq!(
        run(&f, [2, 1], Data::I16(vec![-7, -2])),
        Ok(Some(Val::Int(-4)))
    );
    assert_eq!(
        run(&f, [2, 2], Data::I16(vec![i16::MAX; 4])),
        Ok(Some(Val::Int(i16::MAX as i128)))
    );
    // The mean of no element.
    assert_eq!(
        run(&f, [0, 3], Data::I16(vec![])),
        Err(InterpError::DivisionByZero {
            region: "mean_src".into()
        })
    );

    let f = program(REDUCTIONS, "float_stats");
    let got = run(&f, [1, 3], Data::F32(vec![1.0, -2.5, 4.0])).unwrap();
    let avg = ((1.0f64 - 2.5 + 4.0) / 3.0) as f32;
    assert_eq!(got, Some(Val::F32(-2.5 + 4.0 * 100.0 + avg * 10000.0)));

    // Integer sums in i64: no wrapping at 32 bits.
    let f = program(REDUCTIONS, "wide_sum");
    assert_eq!(
        run(&f, [1, 3], Data::U32(vec![u32::MAX; 3])),
        Ok(Some(Val::Int(3 * u32::MAX as i128)))
    );
}

/// The intervals of windows and of subscripts through `let`s.
#[test]
fn intervals_of_windows_and_lets() {
    let f = pipeline("sharpen");
    // Region `it`: `src[itx*4:4:1][ity*4:4:1]` with itx in 0..M/4.
    let ivs = interp::region_intervals(&f, 0, &[8, 12], &[]).unwrap();
    let r = &f.regions[0];
    let read = ivs.iter().find(|(a, _)| !r.accesses[*a].write).unwrap();
    assert_eq!(read.1, vec![Iv { lo: 0, hi: 7 }, Iv { lo: 0, hi: 11 }]);
    assert!(interp::check_intervals(&f, 0, &[8, 12], &ivs).is_ok());
    // No iteration (M/4 = 0): nothing is checked.
    assert_eq!(interp::region_intervals(&f, 0, &[3, 12], &[]), Ok(vec![]));
    // Region `it1`: `down[r0][c0]` with `r0 = clamp(i0, 0, M/4 - 1)` through the `let`s.
    let ivs = interp::region_intervals(&f, 1, &[8, 12], &[]).unwrap();
    let r = &f.regions[1];
    for (a, subs) in &ivs {
        if !r.accesses[*a].write {
            assert_eq!(subs, &vec![Iv { lo: 0, hi: 1 }, Iv { lo: 0, hi: 2 }]);
        }
    }
    assert_eq!(ivs.len(), 5, "every access of it1 is proven");
}
