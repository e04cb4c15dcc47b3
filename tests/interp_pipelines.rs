//! The reference interpreter (`parac_core::interp`) against the macro-compiled CPU path
//! (`Runtime::cpu()`), bit-exactly (floats compared by their bits): the four pipelines of
//! APPS.md on random images of several sizes, and small programs covering operators and
//! casts, blocks, built-ins, border shorthands, global reductions with results, vectors, and
//! the errors both must report alike (a lookup outside its table, a division by zero, a shift
//! by a host scalar refused by the interval check, a row-parallel region's rows).
//!
//! Each small program is written once, as `mod <name> { parac::parac! { .. } }` in this file;
//! [`source`] reads its text back for `parac_core::compile_str`.

mod common;

#[path = "../examples/pipelines/blur.rs"]
mod blur_p;
#[path = "../examples/pipelines/laplacian.rs"]
mod laplacian_p;
#[path = "../examples/pipelines/sharpen.rs"]
mod sharpen_p;
#[path = "../examples/pipelines/unsharp.rs"]
mod unsharp_p;

use common::data::{Rng, random_rgb, random_u8, random_u12};
use common::differential::ToVal;
use common::runtimes::cpu;
use parac::Matrix;
use parac_core::interp::{self, Arg, Data, InterpError, Tensor, Val};
use parac_core::ir::Function;

/// A value or matrix passed to both.
trait ToArg {
    fn arg(&self) -> Arg;
}

macro_rules! elements {
    ($($t:ty => $v:ident),*) => {$(
        impl ToArg for Matrix<$t> {
            fn arg(&self) -> Arg {
                Arg::Matrix(Tensor::new(self.shape(), Data::$v(self.as_slice().to_vec())).expect("shape"))
            }
        }
    )*};
}
elements!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, f32 => F32);

macro_rules! scalars {
    ($($t:ty),*) => {$(
        impl ToArg for $t {
            fn arg(&self) -> Arg { Arg::Scalar(Val::Int(*self as i128)) }
        }
    )*};
}
scalars!(u8, i8, u16, i16, u32, i32, i64, u64);

impl ToArg for f32 {
    fn arg(&self) -> Arg {
        Arg::Scalar(Val::F32(*self))
    }
}

/// Every argument, in order.
macro_rules! args {
    ($($a:expr),* $(,)?) => { vec![$(ToArg::arg(&$a)),*] };
}

/// The function `name` of `source` (which must compile without diagnostics).
fn ir(source: &str, name: &str) -> Function {
    let mut c = parac_core::compile_str(source);
    assert!(c.diagnostics.is_empty(), "{name}: {:?}", c.diagnostics);
    let i = c
        .module
        .functions
        .iter()
        .position(|f| f.name == name)
        .unwrap_or_else(|| panic!("no function `{name}`"));
    c.module.functions.swap_remove(i)
}

/// The text of the `parac!` block of `mod <module>` in this file.
fn source(module: &str) -> String {
    let me = std::fs::read_to_string("tests/interp_pipelines.rs").expect("this file");
    let at = me.find(&format!("\nmod {module} {{")).expect("the module");
    let open =
        at + me[at..].find("parac::parac! {").expect("a parac! block") + "parac::parac! {".len();
    let mut depth = 1;
    for (i, c) in me[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return me[open..open + i].to_string();
                }
            }
            _ => {}
        }
    }
    panic!("unclosed parac! block in mod {module}")
}

/// The `parac!` block of `examples/pipelines/<name>.rs`.
fn pipeline_source(name: &str) -> String {
    let rust = std::fs::read_to_string(format!("examples/pipelines/{name}.rs")).expect("source");
    let start = rust.find("parac! {").expect("a parac! block") + "parac! {".len();
    let end = rust.rfind('}').expect("closing brace");
    rust[start..end].to_string()
}

fn same_val(a: Val, b: Val) -> bool {
    match (a, b) {
        (Val::F32(x), Val::F32(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        (a, b) => a == b,
    }
}

fn same_data(a: &Data, b: &Data) -> bool {
    match (a, b) {
        (Data::F32(x), Data::F32(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|(x, y)| same_val(Val::F32(*x), Val::F32(*y)))
        }
        (a, b) => a == b,
    }
}

/// Runs the interpreter on `before` (the arguments as the CPU path got them) and compares its
/// result with the CPU path's `cpu`, and, when both succeed, every matrix with `after`.
#[track_caller]
fn check<T: ToVal>(
    what: &str,
    f: &Function,
    before: Vec<Arg>,
    cpu: Result<T, parac::Error>,
    after: Vec<Arg>,
) {
    let mut args = before;
    let got = interp::run(f, &mut args);
    match (cpu, got) {
        (Ok(c), Ok(g)) => {
            let c = c.val();
            let same = match (c, g) {
                (Some(c), Some(g)) => same_val(c, g),
                (c, g) => c == g,
            };
            assert!(
                same,
                "{what}: the CPU path returns {c:?}, the interpreter {g:?}"
            );
            for (i, (g, c)) in args.iter().zip(&after).enumerate() {
                if let (Arg::Matrix(g), Arg::Matrix(c)) = (g, c) {
                    assert!(
                        same_data(&g.data, &c.data),
                        "{what}: argument {i} differs:\n interpreter {:?}\n CPU path    {:?}",
                        g.data,
                        c.data
                    );
                }
            }
        }
        (
            Err(parac::Error::OutOfBounds {
                region,
                what: w,
                matrix,
                index,
                shape,
                ..
            }),
            Err(InterpError::OutOfBounds {
                region: r2,
                what: w2,
                matrix: m2,
                index: i2,
                shape: s2,
            }),
        ) => assert_eq!(
            (region.to_string(), w, matrix.to_string(), index, shape),
            (r2, w2, m2, i2, s2),
            "{what}: both out of bounds, differently"
        ),
        (
            Err(parac::Error::DivisionByZero { region, .. }),
            Err(InterpError::DivisionByZero { region: r2 }),
        ) => {
            assert_eq!(
                region, r2,
                "{what}: both divide by zero, in different regions"
            )
        }
        (Err(parac::Error::Shape { matrix, .. }), Err(InterpError::Shape { matrix: m2, .. })) => {
            assert_eq!(matrix, m2, "{what}")
        }
        (c, g) => panic!(
            "{what}: the CPU path gives {:?}, the interpreter {g:?}",
            c.map(ToVal::val)
        ),
    }
}

fn random_f32(m: usize, n: usize, seed: u64, lo: f32, hi: f32) -> Matrix<f32> {
    let mut rng = Rng::new(seed);
    Matrix::from_fn([m, n], |_| lo + rng.unit_f32() * (hi - lo))
}

fn random_i32(m: usize, n: usize, seed: u64) -> Matrix<i32> {
    let mut rng = Rng::new(seed);
    Matrix::from_fn([m, n], |_| rng.next_u32() as i32)
}

// -----------------------------------------------------------------------------------------------
// The four pipelines
// -----------------------------------------------------------------------------------------------

#[test]
fn laplacian() {
    let f = ir(&pipeline_source("laplacian"), "laplacian");
    for (m, n) in [(4, 4), (4, 7), (9, 4), (13, 21), (32, 33)] {
        let src = random_u8(m, n, 11 + m as u64 * 100 + n as u64);
        let mut lap = Matrix::<i16>::zeros([m, n]);
        let mut down = Matrix::<u8>::zeros([m.div_ceil(2), n.div_ceil(2)]);
        let before = args![src, lap, down];
        let r = laplacian_p::laplacian(cpu(), &src, &mut lap, &mut down);
        check(
            &format!("laplacian {m}x{n}"),
            &f,
            before,
            r,
            args![src, lap, down],
        );
    }
}

#[test]
fn sharpen() {
    let f = ir(&pipeline_source("sharpen"), "sharpen");
    for (m, n) in [(8, 8), (8, 16), (20, 12), (36, 40)] {
        let src = random_u8(m, n, 12 + m as u64 * 100 + n as u64);
        let mut out = Matrix::<u8>::zeros([m, n]);
        let before = args![src, out];
        let r = sharpen_p::sharpen(cpu(), &src, &mut out);
        check(&format!("sharpen {m}x{n}"), &f, before, r, args![src, out]);
    }
}

#[test]
fn blur() {
    let f = ir(&pipeline_source("blur"), "blur");
    for (m, n) in [(3, 3), (3, 8), (6, 3), (17, 31)] {
        let src = random_u12(m, n, 13 + m as u64 * 100 + n as u64);
        let mut out = Matrix::<u16>::zeros([m - 2, n - 2]);
        let before = args![src, out];
        let r = blur_p::blur(cpu(), &src, &mut out);
        check(&format!("blur {m}x{n}"), &f, before, r, args![src, out]);
    }
    // A wrong shape: the same error.
    let src = random_u12(5, 6, 1);
    let mut out = Matrix::<u16>::zeros([3, 5]);
    let before = args![src, out];
    let r = blur_p::blur(cpu(), &src, &mut out);
    check("blur, wrong shape", &f, before, r, args![src, out]);
}

#[test]
fn unsharp() {
    let f = ir(&pipeline_source("unsharp"), "unsharp");
    for (m, n) in [(1, 1), (1, 3), (4, 1), (7, 9), (24, 17)] {
        let img = random_rgb(m, n, 14 + m as u64 * 100 + n as u64);
        let mut out = Matrix::<f32>::zeros([3, m, n]);
        let before = args![img, out];
        let r = unsharp_p::unsharp(cpu(), &img, &mut out);
        check(&format!("unsharp {m}x{n}"), &f, before, r, args![img, out]);
    }
}

// -----------------------------------------------------------------------------------------------
// Small programs
// -----------------------------------------------------------------------------------------------

mod ops {
    parac::parac! {
    pub fn int_operators(a: &i32[M][N], b: &i32[M][N], out: &mut i32[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            let p = a[x][y];
            let q = b[x][y] | 1;
            let arith = p + q - p * q / q % 7;
            let bits = (p & 255) | (q ^ 15) | (p << 2) | (q >> 1) | (p >> (q & 63)) | (q << p);
            let sign = -p + +q;
            let inv = !p;
            let cmp = (p == q) as i32 + (p != q) as i32 + (p < q) as i32 + (p > q) as i32
                + (p <= q) as i32 + (p >= q) as i32;
            let logic = (p > 0 && q > 0 || !(p < q)) as i32;
            let prec = p + q * 2 << 1 & 255 | q ^ 3;
            out[x][y] = arith + bits + sign + inv + cmp + logic + prec + abs(p) + p % q;
        }
    }
    pub fn promotion(a: &u8[M][N], b: &i16[M][N], c: &u32[M][N], out: &mut u8[M][N], wide: &mut u32[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = a[itx][ity] * 2 - b[itx][ity];
            wide[itx][ity] = c[itx][ity] - 1 + (a[itx][ity] >> 1) + c[itx][ity] / (a[itx][ity] as u32 + 1);
        }
    }
    pub fn float_operators(a: &f32[M][N], b: &f32[M][N], out: &mut f32[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            let p = a[itx][ity];
            let q = b[itx][ity];
            let r = (p + q) * (p - q) / (q * q + 1.0);
            let s = -r + +p;
            let t = (p < q || p >= 2.0 * q && !(p == q) || p != 0.0 && q <= 1.0 || q > p) as i32;
            out[itx][ity] = r + s + t as f32 + p / q;
        }
    }
    pub fn casts(src: &f32[M][N], o8: &mut u8[M][N], oi8: &mut i8[M][N], o16: &mut u16[M][N], oi16: &mut i16[M][N], o32: &mut u32[M][N], oi32: &mut i32[M][N], of: &mut f32[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            let v = src[x][y];
            let big = v as i64 * 3000000000i64;
            let unsuffixed = 3000000000;
            let wide: u64 = big as u64 + unsuffixed as u64;
            let flag = v > 0.5;
            o8[x][y] = v as u8;
            oi8[x][y] = v as i8;
            o16[x][y] = (v * 256.0) as u16;
            oi16[x][y] = -v as i16;
            o32[x][y] = v as u32 + 4000000000u32;
            oi32[x][y] = (big >> 20) as i32 + (wide % 7) as i32 + flag as i32 + 7u8 as i32 + -3i8 as i32;
            of[x][y] = (v as i32) as f32 + 1.5f32 + 2u16 as f32 + (flag as i32) as f32;
        }
    }
    }
}

#[test]
fn operators_and_casts() {
    let rt = cpu();
    for (m, n) in [(1, 1), (3, 5), (8, 7)] {
        let seed = (m * 100 + n) as u64;
        let f = ir(&source("ops"), "int_operators");
        let (a, b) = (random_i32(m, n, seed), random_i32(m, n, seed + 1));
        let mut out = Matrix::<i32>::zeros([m, n]);
        let before = args![a, b, out];
        let r = ops::int_operators(rt, &a, &b, &mut out);
        check("int_operators", &f, before, r, args![a, b, out]);

        let f = ir(&source("ops"), "promotion");
        let a = random_u8(m, n, seed + 2);
        let b = Matrix::from_fn([m, n], |i| (i[0] * 7919 + i[1] * 104729) as i16);
        let c = Matrix::from_fn([m, n], |i| {
            (i[0] as u32).wrapping_mul(2_654_435_761) ^ i[1] as u32
        });
        let (mut out, mut wide) = (Matrix::<u8>::zeros([m, n]), Matrix::<u32>::zeros([m, n]));
        let before = args![a, b, c, out, wide];
        let r = ops::promotion(rt, &a, &b, &c, &mut out, &mut wide);
        check("promotion", &f, before, r, args![a, b, c, out, wide]);

        let f = ir(&source("ops"), "float_operators");
        let (a, b) = (
            random_f32(m, n, seed + 3, -4.0, 4.0),
            random_f32(m, n, seed + 4, -2.0, 2.0),
        );
        let mut out = Matrix::<f32>::zeros([m, n]);
        let before = args![a, b, out];
        let r = ops::float_operators(rt, &a, &b, &mut out);
        check("float_operators", &f, before, r, args![a, b, out]);

        let f = ir(&source("ops"), "casts");
        let src = random_f32(m, n, seed + 5, -300.0, 300.0);
        let mut o8 = Matrix::<u8>::zeros([m, n]);
        let mut oi8 = Matrix::<i8>::zeros([m, n]);
        let mut o16 = Matrix::<u16>::zeros([m, n]);
        let mut oi16 = Matrix::<i16>::zeros([m, n]);
        let mut o32 = Matrix::<u32>::zeros([m, n]);
        let mut oi32 = Matrix::<i32>::zeros([m, n]);
        let mut of = Matrix::<f32>::zeros([m, n]);
        let before = args![src, o8, oi8, o16, oi16, o32, oi32, of];
        let r = ops::casts(
            rt, &src, &mut o8, &mut oi8, &mut o16, &mut oi16, &mut o32, &mut oi32, &mut of,
        );
        check(
            "casts",
            &f,
            before,
            r,
            args![src, o8, oi8, o16, oi16, o32, oi32, of],
        );
    }
}

mod blocks {
    parac::parac! {
    pub fn block_product(src: &u8[M][N], dst: &mut f32[(M-1)*3][(N-1)*3]) {
        const A: f32[3][2] = [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]];
        parac_iterator it(0:M-1:1; 0:N-1:1) {
            dst[itx*3:3:1][ity*3:3:1] = A * src[itx:2:1][ity:2:1] * transe(A);
        }
    }
    pub fn transpose_tiles(src: &u8[M][N], dst: &mut u8[N][M]) {
        parac_iterator it(0:M/4:1; 0:N/4:1) {
            let tile = src[itx*4:4:1][ity*4:4:1];
            dst[ity*4:4:1][itx*4:4:1] = transe(tile);
        }
    }
    pub fn elementwise(src: &f32[M][N], gain: f32, a: &mut f32[M][N], b: &mut f32[M][N]) {
        const K: f32[2][2] = [[1.0, 2.0], [3.0, 4.0]];
        parac_iterator it(0:M/2:1; 0:N/2:1) {
            a[itx*2:2:1][ity*2:2:1] = gain * src[itx*2:2:1][ity*2:2:1] .* K;
            b[itx*2:2:1][ity*2:2:1] = src[itx*2:2:1][ity*2:2:1] * 0.5 + K - src[itx*2:2:1][ity*2:2:1] .* K;
        }
    }
    pub fn scaled_columns(src: &u8[M][N], col: &mut u8[M*4][N], row: &mut u8[M][N*4]) {
        const RAMP: f32[4][1] = [[1.0], [3.0 / 4.0], [2.0 / 4.0], [1.0 / 4.0]];
        parac_iterator it(0:M:1; 0:N:1) {
            col[itx*4:4:1][ity] = src[itx][ity] * RAMP;
            row[itx][ity*4:4:1] = src[itx][ity] * transe(RAMP);
        }
    }
    pub fn integer_product(a: &i16[M][N], b: &i16[M][N], out: &mut i32[M][N]) {
        parac_iterator it(0:M/2:1; 0:N/2:1) {
            out[itx*2:2:1][ity*2:2:1] = a[itx*2:2:1][ity*2:2:1] * b[itx*2:2:1][ity*2:2:1] - 2 * a[itx*2:2:1][ity*2:2:1];
        }
    }
    }
}

#[test]
fn blocks() {
    let rt = cpu();
    for (m, n) in [(2, 2), (4, 8), (9, 6)] {
        let seed = (m * 100 + n) as u64;
        let f = ir(&source("blocks"), "block_product");
        let src = random_u8(m, n, seed);
        let mut dst = Matrix::<f32>::zeros([(m - 1) * 3, (n - 1) * 3]);
        let before = args![src, dst];
        let r = blocks::block_product(rt, &src, &mut dst);
        check("block_product", &f, before, r, args![src, dst]);

        let f = ir(&source("blocks"), "transpose_tiles");
        let mut dst = Matrix::<u8>::zeros([n, m]);
        let before = args![src, dst];
        let r = blocks::transpose_tiles(rt, &src, &mut dst);
        check("transpose_tiles", &f, before, r, args![src, dst]);

        let f = ir(&source("blocks"), "elementwise");
        let s = random_f32(m, n, seed + 1, -1.0, 1.0);
        let (mut a, mut b) = (Matrix::<f32>::zeros([m, n]), Matrix::<f32>::zeros([m, n]));
        let before = args![s, 0.75f32, a, b];
        let r = blocks::elementwise(rt, &s, 0.75, &mut a, &mut b);
        check("elementwise", &f, before, r, args![s, 0.75f32, a, b]);

        let f = ir(&source("blocks"), "scaled_columns");
        let (mut col, mut row) = (
            Matrix::<u8>::zeros([m * 4, n]),
            Matrix::<u8>::zeros([m, n * 4]),
        );
        let before = args![src, col, row];
        let r = blocks::scaled_columns(rt, &src, &mut col, &mut row);
        check("scaled_columns", &f, before, r, args![src, col, row]);

        let f = ir(&source("blocks"), "integer_product");
        let a = Matrix::from_fn([m, n], |i| {
            (i[0] as i16 * 1237).wrapping_sub(i[1] as i16 * 4099)
        });
        let b = Matrix::from_fn([m, n], |i| (i[1] as i16 * 877) ^ (i[0] as i16 * 31));
        let mut out = Matrix::<i32>::zeros([m, n]);
        let before = args![a, b, out];
        let r = blocks::integer_product(rt, &a, &b, &mut out);
        check("integer_product", &f, before, r, args![a, b, out]);
    }
}

mod builtins {
    parac::parac! {
    pub fn window_reductions(src: &u8[M][N], sum: &mut i32[M-2][N-2], mn: &mut u8[M-2][N-2], mx: &mut u8[M-2][N-2], mean: &mut u8[M-2][N-2]) {
        parac_iterator it(0:M-2:1; 0:N-2:1) {
            sum[itx][ity] = parac_matrix_sum(src[itx:3:1][ity:3:1]);
            mn[itx][ity] = parac_matrix_min(src[itx:3:1][ity:3:1]);
            mx[itx][ity] = parac_matrix_max(src[itx:3:1][ity:3:1]);
            mean[itx][ity] = parac_matrix_mean(src[itx:3:1][ity:3:1]);
        }
    }
    pub fn float_reductions(src: &f32[M][N], out: &mut f32[M-1][N-1]) {
        parac_iterator it(0:M-1:1; 0:N-1:1) {
            out[itx][ity] = parac_matrix_sum(src[itx:2:1][ity:2:1]) - parac_matrix_mean(src[itx:2:1][ity:2:1])
                + parac_matrix_max(src[itx:2:1][ity:2:1]) * parac_matrix_min(src[itx:2:1][ity:2:1]);
        }
    }
    pub fn convolutions(src: &u8[M][N], f: &f32[M][N], g: &mut i32[M][N], h: &mut f32[M][N], v: &mut i32[M][N]) {
        const SOBEL_X: i8[3][3] = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]];
        const GAUSS: f32[1][3] = [[0.25, 0.5, 0.25]];
        const TENT: u8[3][1] = [[1], [2], [1]];
        parac_border_rule r = reflect101(src[1][1]);
        parac_border_rule rf = replicate(f[*][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r, rf) {
            g[itx][ity] = parac_convolution(SOBEL_X, src[itx-1:3:1][ity-1:3:1]);
            h[itx][ity] = parac_convolution(GAUSS, f[itx][ity-1:3:1]);
            v[itx][ity] = parac_convolution(TENT, src[itx-1:3:1][ity]);
        }
    }
    pub fn scalar_functions(src: &f32[M][N], ints: &i32[M][N], out: &mut f32[M][N], iout: &mut i32[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            let v = src[x][y];
            let i = ints[x][y];
            out[x][y] = sqrt(abs(v)) + exp(-v) + floor(v) + ceil(v) + round(v)
                + min(v, 1.0) + max(v, 0.0) + clamp(v, -1.0, 1.0);
            iout[x][y] = abs(i) + min(i, 10) + max(i, -10) + clamp(i, 0, 255);
        }
    }
    pub fn transpose_window(src: &u8[M][N], out: &mut u8[M/2*3][N/3*2]) {
        parac_iterator it(0:M/2:1; 0:N/3:1) {
            out[itx*3:3:1][ity*2:2:1] = transe(src[itx*2:2:1][ity*3:3:1]);
        }
    }
    }
}

#[test]
fn builtins() {
    let rt = cpu();
    for (m, n) in [(3, 3), (4, 6), (7, 10)] {
        let seed = (m * 100 + n) as u64;
        let src = random_u8(m, n, seed);
        let f = ir(&source("builtins"), "window_reductions");
        let mut sum = Matrix::<i32>::zeros([m - 2, n - 2]);
        let mut mn = Matrix::<u8>::zeros([m - 2, n - 2]);
        let mut mx = Matrix::<u8>::zeros([m - 2, n - 2]);
        let mut mean = Matrix::<u8>::zeros([m - 2, n - 2]);
        let before = args![src, sum, mn, mx, mean];
        let r = builtins::window_reductions(rt, &src, &mut sum, &mut mn, &mut mx, &mut mean);
        check(
            "window_reductions",
            &f,
            before,
            r,
            args![src, sum, mn, mx, mean],
        );

        let f = ir(&source("builtins"), "float_reductions");
        let fs = random_f32(m, n, seed + 1, -3.0, 3.0);
        let mut out = Matrix::<f32>::zeros([m - 1, n - 1]);
        let before = args![fs, out];
        let r = builtins::float_reductions(rt, &fs, &mut out);
        check("float_reductions", &f, before, r, args![fs, out]);

        let f = ir(&source("builtins"), "convolutions");
        let (mut g, mut h, mut v) = (
            Matrix::<i32>::zeros([m, n]),
            Matrix::<f32>::zeros([m, n]),
            Matrix::<i32>::zeros([m, n]),
        );
        let before = args![src, fs, g, h, v];
        let r = builtins::convolutions(rt, &src, &fs, &mut g, &mut h, &mut v);
        check("convolutions", &f, before, r, args![src, fs, g, h, v]);

        let f = ir(&source("builtins"), "scalar_functions");
        let ints = random_i32(m, n, seed + 2);
        let (mut out, mut iout) = (Matrix::<f32>::zeros([m, n]), Matrix::<i32>::zeros([m, n]));
        let before = args![fs, ints, out, iout];
        let r = builtins::scalar_functions(rt, &fs, &ints, &mut out, &mut iout);
        check(
            "scalar_functions",
            &f,
            before,
            r,
            args![fs, ints, out, iout],
        );

        let f = ir(&source("builtins"), "transpose_window");
        let mut out = Matrix::<u8>::zeros([m / 2 * 3, n / 3 * 2]);
        let before = args![src, out];
        let r = builtins::transpose_window(rt, &src, &mut out);
        check("transpose_window", &f, before, r, args![src, out]);
    }
}

mod borders {
    parac::parac! {
    pub fn border_constant(src: &u8[M][N], a: &mut i32[M][N], r: &mut i32[M][N], c: &mut i32[M][N]) {
        parac_border_rule c2 = constant(src[1][1], 0);
        parac_border_rule cr = constant(src[2][*], 255);
        parac_border_rule cc = constant(src[*][3], 128);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(c2) {
            a[itx][ity] = parac_matrix_sum(src[itx-1:3:1][ity-1:3:1]);
        }
        parac_iterator it1(0:M:1; 0:N:1) parac_border_rule(cr) {
            r[it1x][it1y] = parac_matrix_sum(src[it1x-2:5:1][it1y]);
        }
        parac_iterator it2(0:M:1; 0:N:1) parac_border_rule(cc) {
            c[it2x][it2y] = parac_matrix_sum(src[it2x][it2y-3:7:1]);
        }
    }
    pub fn border_reflect101(src: &u8[M][N], a: &mut i32[M][N], r: &mut i32[M][N], c: &mut i32[M][N]) {
        parac_border_rule g2 = reflect101(src[2][3]);
        parac_border_rule gr = reflect101(src[1][*]);
        parac_border_rule gc = reflect101(src[*][2]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(g2) {
            a[itx][ity] = parac_matrix_sum(src[itx-2:5:1][ity-3:7:1]);
        }
        parac_iterator it1(0:M:1; 0:N:1) parac_border_rule(gr) {
            r[it1x][it1y] = parac_matrix_sum(src[it1x-1:3:1][it1y]);
        }
        parac_iterator it2(0:M:1; 0:N:1) parac_border_rule(gc) {
            c[it2x][it2y] = parac_matrix_sum(src[it2x][it2y-2:5:1]);
        }
    }
    pub fn border_wrap(src: &u8[M][N], a: &mut i32[M][N], r: &mut i32[M][N], c: &mut i32[M][N]) {
        parac_border_rule w2 = wrap(src[3][1]);
        parac_border_rule wr = wrap(src[3][*]);
        parac_border_rule wc = wrap(src[*][2]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(w2) {
            a[itx][ity] = src[itx-3][ity-1] + src[itx+3][ity+1] + src[itx-3][ity+1] + src[itx+3][ity-1];
        }
        parac_iterator it1(0:M:1; 0:N:1) parac_border_rule(wr) {
            r[it1x][it1y] = src[it1x-3][it1y] - src[it1x+3][it1y];
        }
        parac_iterator it2(0:M:1; 0:N:1) parac_border_rule(wc) {
            c[it2x][it2y] = src[it2x][it2y-2] - src[it2x][it2y+2];
        }
    }
    pub fn border_float_and_channels(f: &f32[M][N], img: &u8[3][M][N], a: &mut f32[M][N], b: &mut i32[3][M][N]) {
        parac_border_rule cf = constant(f[1][1], 0.5);
        parac_border_rule ci = replicate(img[*][1][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(cf) {
            a[itx][ity] = parac_matrix_mean(f[itx-1:3:1][ity-1:3:1]);
        }
        parac_iterator it1(ch in 0:3:1; x in 0:M:1; y in 0:N:1) parac_border_rule(ci) {
            b[ch][x][y] = parac_matrix_sum(img[ch][x-1:3:1][y-1:3:1]);
        }
    }
    pub fn extrapolate(src: &u8[M][N], out: &mut i16[M][N]) {
        parac_border_rule lin {
            src[*][-2] = src[*][0] * 2 - src[*][2];
            src[*][-1] = src[*][0] * 2 - src[*][1];
            src[*][+1] = src[*][N-1] * 2 - src[*][N-2];
            src[*][+2] = src[*][N-1] * 2 - src[*][N-3];
        }
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(lin) {
            out[itx][ity] = src[itx][ity-2] + src[itx][ity+2] - src[itx][ity];
        }
    }
    }
}

#[test]
fn borders() {
    let rt = cpu();
    for (m, n) in [(3, 4), (4, 3), (5, 9), (11, 8)] {
        let seed = (m * 100 + n) as u64;
        let src = random_u8(m, n, seed);
        let z = || Matrix::<i32>::zeros([m, n]);
        type Fun = fn(
            &parac::Runtime,
            &Matrix<u8>,
            &mut Matrix<i32>,
            &mut Matrix<i32>,
            &mut Matrix<i32>,
        ) -> Result<(), parac::Error>;
        let funs: [(&str, Fun); 3] = [
            ("border_constant", |rt, s, a, r, c| {
                borders::border_constant(rt, s, a, r, c)
            }),
            ("border_reflect101", |rt, s, a, r, c| {
                borders::border_reflect101(rt, s, a, r, c)
            }),
            ("border_wrap", |rt, s, a, r, c| {
                borders::border_wrap(rt, s, a, r, c)
            }),
        ];
        for (name, fun) in funs {
            let f = ir(&source("borders"), name);
            let (mut a, mut r, mut c) = (z(), z(), z());
            let before = args![src, a, r, c];
            let res = fun(rt, &src, &mut a, &mut r, &mut c);
            check(
                &format!("{name} {m}x{n}"),
                &f,
                before,
                res,
                args![src, a, r, c],
            );
        }

        let f = ir(&source("borders"), "border_float_and_channels");
        let fl = random_f32(m, n, seed + 1, -1.0, 1.0);
        let img = {
            let mut rng = Rng::new(seed + 2);
            Matrix::from_fn([3, m, n], |_| rng.below(256) as u8)
        };
        let (mut a, mut b) = (
            Matrix::<f32>::zeros([m, n]),
            Matrix::<i32>::zeros([3, m, n]),
        );
        let before = args![fl, img, a, b];
        let r = borders::border_float_and_channels(rt, &fl, &img, &mut a, &mut b);
        check(
            "border_float_and_channels",
            &f,
            before,
            r,
            args![fl, img, a, b],
        );

        let f = ir(&source("borders"), "extrapolate");
        let mut out = Matrix::<i16>::zeros([m, n]);
        let before = args![src, out];
        let r = borders::extrapolate(rt, &src, &mut out);
        check("extrapolate", &f, before, r, args![src, out]);
    }
}

mod reductions {
    parac::parac! {
    pub fn stretch(src: &u8[M][N], out: &mut u8[M][N]) -> i64 {
        let (lo, hi) = (parac_matrix_min(src), parac_matrix_max(src));
        let range = max(hi - lo, 1);
        let total: i64 = parac_matrix_sum(src);
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = (src[itx][ity] - lo) * 255 / range;
        }
        return total;
    }
    pub fn float_stats(src: &f32[M][N]) -> f32 {
        let s = parac_matrix_sum(src);
        let lo = parac_matrix_min(src);
        return s + lo * 1000.0;
    }
    pub fn pixel_count(src: &u8[M][N]) -> u64 {
        let rows = M;
        return (rows * N) as u64;
    }
    }
}

// Left out, as their expansion does not compile: `parac_matrix_mean` as a global operator (the
// CPU path's `(sum) / (len as i64 as _)`: the type of `_` cannot be inferred) and a global
// `parac_matrix_max` of an `f32` matrix (the device path's combine calls the unstable
// `<[f32]>::as_slice`). Both are tested in `parac-core/tests/interp.rs` against values
// computed by hand.
#[test]
fn global_reductions() {
    let rt = cpu();
    for (m, n) in [(1, 1), (2, 3), (13, 9), (70, 65)] {
        let seed = (m * 100 + n) as u64;
        let src = random_u8(m, n, seed);
        let f = ir(&source("reductions"), "stretch");
        let mut out = Matrix::<u8>::zeros([m, n]);
        let before = args![src, out];
        let r = reductions::stretch(rt, &src, &mut out);
        check("stretch", &f, before, r, args![src, out]);

        let f = ir(&source("reductions"), "pixel_count");
        let before = args![src];
        let r = reductions::pixel_count(rt, &src);
        check("pixel_count", &f, before, r, args![src]);

        // 70x65: more than one chunk of the f64 sum.
        let f = ir(&source("reductions"), "float_stats");
        let fs = random_f32(m, n, seed + 1, -2.0, 5.0);
        let before = args![fs];
        let r = reductions::float_stats(rt, &fs);
        check("float_stats", &f, before, r, args![fs]);
    }
}

mod vectors {
    parac::parac! {
    pub fn smooth_vector(v: &f32[N], out: &mut f32[N]) -> f32 {
        const TAPS: f32[3] = [0.25, 0.5, 0.25];
        let tmp: f32[N];
        parac_border_rule rv = reflect(v[1]);
        parac_iterator it(0:N:1) parac_border_rule(rv) {
            tmp[itx] = parac_convolution(TAPS, v[itx-1:3:1]);
        }
        parac_border_rule rt {
            tmp[-2] = tmp[0];
            tmp[-1] = tmp[0];
            tmp[+1] = tmp[N-1];
            tmp[+2] = tmp[N-1];
        }
        parac_iterator it1(0:N:1) parac_border_rule(rt) {
            out[it1x] = parac_matrix_mean(tmp[it1x-2:5:1]);
        }
        let total = parac_matrix_sum(out);
        return total;
    }
    pub fn wrap_difference(v: &i32[N], out: &mut i32[N]) {
        parac_border_rule w = wrap(v[2]);
        parac_iterator it(0:N:1) parac_border_rule(w) {
            out[itx] = v[itx+2] - v[itx-2];
        }
    }
    pub fn weight_columns(src: &f32[M][N], w: &f32[N], off: &f32[M], out: &mut f32[M][N], row_max: &mut f32[M]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            out[x][y] = src[x][y] * w[y] + off[x];
        }
        parac_iterator r(x in 0:M:1) {
            row_max[x] = max(parac_matrix_max(src[x][0:4:1]), parac_matrix_max(src[x][N-4:4:1]));
        }
    }
    }
}

#[test]
fn vectors() {
    let rt = cpu();
    for n in [2usize, 5, 17] {
        let seed = n as u64;
        let f = ir(&source("vectors"), "smooth_vector");
        let v =
            Matrix::from_vec([n], random_f32(1, n, seed, -1.0, 1.0).as_slice().to_vec()).unwrap();
        let mut out = Matrix::<f32>::zeros([n]);
        let before = args![v, out];
        let r = vectors::smooth_vector(rt, &v, &mut out);
        check(&format!("smooth_vector {n}"), &f, before, r, args![v, out]);

        let f = ir(&source("vectors"), "wrap_difference");
        let vi = Matrix::from_vec([n], random_i32(1, n, seed + 1).as_slice().to_vec()).unwrap();
        let mut out = Matrix::<i32>::zeros([n]);
        let before = args![vi, out];
        let r = vectors::wrap_difference(rt, &vi, &mut out);
        check(
            &format!("wrap_difference {n}"),
            &f,
            before,
            r,
            args![vi, out],
        );
    }
    for (m, n) in [(1, 4), (3, 7)] {
        let seed = (m * 100 + n) as u64;
        let f = ir(&source("vectors"), "weight_columns");
        let src = random_f32(m, n, seed, -1.0, 1.0);
        let w = Matrix::from_vec(
            [n],
            random_f32(1, n, seed + 1, 0.0, 2.0).as_slice().to_vec(),
        )
        .unwrap();
        let off = Matrix::from_vec(
            [m],
            random_f32(m, 1, seed + 2, -5.0, 5.0).as_slice().to_vec(),
        )
        .unwrap();
        let (mut out, mut row_max) = (Matrix::<f32>::zeros([m, n]), Matrix::<f32>::zeros([m]));
        let before = args![src, w, off, out, row_max];
        let r = vectors::weight_columns(rt, &src, &w, &off, &mut out, &mut row_max);
        check(
            "weight_columns",
            &f,
            before,
            r,
            args![src, w, off, out, row_max],
        );
    }
}

mod errors {
    parac::parac! {
    pub fn lookup(src: &u8[M][N], lut: &u8[16], out: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = lut[src[itx][ity]];
        }
    }
    pub fn divide(src: &i32[M][N], k: i32, out: &mut i32[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = src[itx][ity] / k + src[itx][ity] % (k + 1);
        }
    }
    pub fn shift(src: &u8[M][N], k: i32, out: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = src[itx][ity + k];
        }
    }
    pub fn guarded_rows(src: &u8[M][N], k: i32, out: &mut u8[M][N]) {
        parac_iterator it(0:M+k:1; 0:N:1) {
            if itx < M {
                out[itx][ity] = src[itx][ity];
            }
        }
    }
    pub fn rows_past(src: &u8[M][N], k: i32, out: &mut u8[M][N]) {
        parac_iterator it(0:M+k:1; 0:N:1) {
            if itx < M + 1 {
                out[itx][ity] = src[itx % M][ity];
            }
        }
    }
    pub fn rows_before(src: &u8[M][N], k: i32, out: &mut u8[M][N]) {
        parac_iterator it(k:M:1; 0:N:1) {
            if itx >= -1 {
                out[itx][ity] = src[0][ity];
            }
        }
    }
    pub fn empty_rows_beside(src: &u8[M][N], out: &mut u8[M][N], none: &mut u8[M][K]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = src[itx][ity] + 1;
            if ity < K {
                none[itx][ity] = 7;
            }
        }
    }
    }
}

/// What a call must give: success, or the error's kind.
fn kind(r: &Result<(), parac::Error>) -> &'static str {
    match r {
        Ok(()) => "ok",
        Err(parac::Error::OutOfBounds { .. }) => "out of bounds",
        Err(parac::Error::DivisionByZero { .. }) => "division by zero",
        Err(_) => "other",
    }
}

#[test]
fn errors() {
    let rt = cpu();
    let (m, n) = (4usize, 6usize);
    let f = ir(&source("errors"), "lookup");
    let lut = Matrix::from_fn([16], |i| (200 - i[0]) as u8);
    for (bad, want) in [
        (None, "ok"),
        (Some((2, 3, 16u8)), "out of bounds"),
        (Some((0, 5, 255)), "out of bounds"),
    ] {
        let mut src = Matrix::from_fn([m, n], |i| ((i[0] * 7 + i[1] * 3) % 16) as u8);
        if let Some((x, y, v)) = bad {
            src.as_mut_slice()[x * n + y] = v;
        }
        let mut out = Matrix::<u8>::zeros([m, n]);
        let before = args![src, lut, out];
        let r = errors::lookup(rt, &src, &lut, &mut out);
        assert_eq!(kind(&r), want, "lookup {bad:?}");
        check(
            &format!("lookup {bad:?}"),
            &f,
            before,
            r,
            args![src, lut, out],
        );
    }

    let f = ir(&source("errors"), "divide");
    let src = random_i32(m, n, 5);
    for (k, want) in [
        (3, "ok"),
        (-2, "ok"),
        (0, "division by zero"),
        (-1, "division by zero"),
    ] {
        let mut out = Matrix::<i32>::zeros([m, n]);
        let before = args![src, k, out];
        let r = errors::divide(rt, &src, k, &mut out);
        assert_eq!(kind(&r), want, "divide {k}");
        check(&format!("divide {k}"), &f, before, r, args![src, k, out]);
    }

    let f = ir(&source("errors"), "shift");
    let src = random_u8(m, n, 6);
    for (k, want) in [
        (0, "ok"),
        (1, "out of bounds"),
        (-1, "out of bounds"),
        (100, "out of bounds"),
        (i32::MIN, "out of bounds"),
    ] {
        let mut out = Matrix::<u8>::zeros([m, n]);
        let before = args![src, k, out];
        let r = errors::shift(rt, &src, k, &mut out);
        assert_eq!(kind(&r), want, "shift {k}");
        check(&format!("shift {k}"), &f, before, r, args![src, k, out]);
    }

    // A store under an `if` that skips the rows a region iterates beyond its matrix never runs
    // out of bounds: the interpreter, the CPU path and the OpenCL path succeed for every k.
    let f = ir(&source("errors"), "guarded_rows");
    for k in [0, -2, 1, 3] {
        let mut out = Matrix::<u8>::zeros([m, n]);
        let before = args![src, k, out];
        let r = errors::guarded_rows(rt, &src, k, &mut out);
        assert_eq!(kind(&r), "ok", "guarded_rows {k}");
        check(
            &format!("guarded_rows {k}"),
            &f,
            before,
            r,
            args![src, k, out],
        );
    }
    // Where such a store does run, on a row past the matrix or before it, it fails there, as
    // on the interpreter, with every coordinate; the rows before it are written.
    let f = ir(&source("errors"), "rows_past");
    for (k, want) in [(0, "ok"), (1, "out of bounds"), (3, "out of bounds")] {
        let mut out = Matrix::<u8>::zeros([m, n]);
        let before = args![src, k, out];
        let r = errors::rows_past(rt, &src, k, &mut out);
        assert_eq!(kind(&r), want, "rows_past {k}");
        check(&format!("rows_past {k}"), &f, before, r, args![src, k, out]);
    }
    let f = ir(&source("errors"), "rows_before");
    for (k, want) in [(0, "ok"), (-1, "out of bounds"), (-3, "out of bounds")] {
        let mut out = Matrix::<u8>::zeros([m, n]);
        let before = args![src, k, out];
        let r = errors::rows_before(rt, &src, k, &mut out);
        assert_eq!(kind(&r), want, "rows_before {k}");
        check(
            &format!("rows_before {k}"),
            &f,
            before,
            r,
            args![src, k, out],
        );
    }
    // A matrix written beside another with empty rows: every row of the first is still written.
    let f = ir(&source("errors"), "empty_rows_beside");
    for k in [0, 1] {
        let mut out = Matrix::<u8>::zeros([m, n]);
        let mut none = Matrix::<u8>::zeros([m, k]);
        let before = args![src, out, none];
        let r = errors::empty_rows_beside(rt, &src, &mut out, &mut none);
        assert_eq!(kind(&r), "ok", "empty_rows_beside {k}");
        check(
            &format!("empty_rows_beside {k}"),
            &f,
            before,
            r,
            args![src, out, none],
        );
    }
}
