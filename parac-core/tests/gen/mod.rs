//! A generator of well-typed random ParaC pipelines, for differential and robustness tests.
//!
//! [`program`] turns a choice sequence (`&[u32]`; zero, also past the end of the sequence, is
//! always the plainest choice, so that shrinking the sequence simplifies the program) into the
//! source text of one pipeline function `f` and a description of it ([`Program`]): its
//! parameters, the size symbols with the smallest sizes the program is written for, whether its
//! integer results are exact on every back end, and the constructs it uses (tags, for coverage
//! tables). [`args`] builds interpreter arguments for a compiled function and given sizes, from
//! the IR alone (so a stored corpus needs only its source text and sizes).
//!
//! The generator keeps programs valid by construction where it can and by evaluation where it
//! cannot: every subscript is a small integer expression ([`X`]) that the generator evaluates,
//! with C semantics, over the iteration space on many sizes (those the compiler samples and
//! more), to find how far each read reaches outside its matrix; the border rules it then
//! declares cover exactly that (shorthands of every mode, or custom rules with corners), or the
//! read is replaced by another form. Writes are injective affine maps of the index variables,
//! inside their matrix for every size at or above the program's minimum. Reads of what an
//! iterator writes only happen at the element it writes (compound assignment after a store).
//!
//! Included by `parac-core/tests/random_programs.rs` and by root tests (`#[path = ...] mod
//! gen;`): it depends on `parac_core` only.

#![allow(dead_code, clippy::needless_range_loop, clippy::too_many_arguments)]

pub mod budget;
mod reduce;
mod reject;
mod scan;
pub mod time_steps;

use parac_core::interp::{Arg, Data, Tensor, Val};
use parac_core::ir::{self, Scalar};
use std::collections::{BTreeMap, BTreeSet};

// ---------------------------------------------------------------------------------------------
// Public description
// ---------------------------------------------------------------------------------------------

thread_local! {
    static AVOID: std::cell::RefCell<BTreeSet<&'static str>> =
        const { std::cell::RefCell::new(BTreeSet::new()) };
}

/// Patterns of known bugs the generator should not produce (on this thread), so that a run
/// looks for other bugs:
/// - `guarded_nested_read`: a read under an `if` that bounds its index, nested in another
///   access's subscript (`if x + 1 < N { o[x] = t[a[x + 1] & 3]; }`; fixed in 33b5f15);
/// - `abs_unsigned`: `abs` of a `u32` or `u64` value (the CPU path called `wrapping_abs`;
///   fixed, `regression_abs_of_unsigned_on_the_cpu_path`);
/// - `minmax_convert`: `m[i] = max(m[i], e as i32)` into `i32` or `u32` bins, `e` converted to
///   the element's type (was rejected as a race; fixed,
///   `regression_min_max_update_of_a_converted_value`);
/// - `prefix_expr`: a prefix of a large expression written in place, not a `let`'s value: of a
///   window reduction written as a loop, OpenCL's printer panicked
///   (`regression_prefix_of_a_large_window`); a long one it moved into a helper function that
///   read the kernel's running total (`regression_prefix_of_a_long_value`); both fixed.
pub fn avoid(patterns: &[&'static str]) {
    AVOID.with(|a| *a.borrow_mut() = patterns.iter().copied().collect());
}

fn avoiding(p: &str) -> bool {
    AVOID.with(|a| a.borrow().contains(p))
}

/// The size symbols a program may use, by index.
pub const SYMS: [&str; 4] = ["M", "N", "C", "K"];
const SM: usize = 0;
const SN: usize = 1;
const SC: usize = 2;
const SK: usize = 3;

/// A generated program.
#[derive(Clone, Debug)]
pub struct Program {
    /// The ParaC source (the content of one `parac! { .. }`).
    pub source: String,
    /// The function's name.
    pub name: String,
    /// The parameters, in order.
    pub inputs: Vec<Input>,
    /// The size symbols it uses, with the smallest size it is written for.
    pub syms: Vec<SymInfo>,
    /// Whether every integer result is exact on every back end: false when a float value
    /// flows into an integer (a conversion, a comparison), where the OpenCL path's rounding of
    /// `/`, `sqrt`, `exp` (a few ulp) may move the result by one.
    pub exact: bool,
    /// The constructs the program uses (`window`, `border:reflect101`, `lookup`, ...).
    pub tags: BTreeSet<&'static str>,
    /// Whether it may fail at sizes at or above its minimum: a raw data-dependent subscript
    /// (out of bounds on purpose) or a division by data (by zero on purpose).
    pub may_fail: bool,
    /// A program the compiler must reject (a store at a place from data that is no
    /// reduction, and the like: `reduce.rs`), never to be run.
    pub reject: Option<Reject>,
}

/// Why a generated program must be rejected.
#[derive(Clone, Debug)]
pub struct Reject {
    /// A fragment of the error the compiler must report (it names the matrix).
    pub error: String,
    /// The same program with the offending statement replaced by a valid one: it compiles
    /// cleanly, so the error is that statement's.
    pub twin: String,
}

/// One parameter.
#[derive(Clone, Debug)]
pub struct Input {
    /// Its name.
    pub name: String,
    /// What it is.
    pub kind: InputKind,
}

/// What a parameter is.
#[derive(Clone, Debug)]
pub enum InputKind {
    /// A matrix: element type, dimensions as written, output (`&mut`) or input.
    Matrix {
        /// Element type.
        elem: Scalar,
        /// The dimensions' source text.
        dims: Vec<String>,
        /// `&mut`.
        output: bool,
    },
    /// A scalar passed by value.
    Scalar {
        /// Its type.
        ty: Scalar,
    },
}

/// A size symbol of a program.
#[derive(Clone, Debug)]
pub struct SymInfo {
    /// `M`, `N`, `C` or `K`.
    pub name: &'static str,
    /// The smallest size the program is written for (below it, accesses may leave their
    /// matrices or shapes may not match: typed errors, which the tests accept).
    pub min: usize,
}

/// A run of a program: a size per symbol.
pub type Sizes = Vec<(String, usize)>;

/// Sizes for `p`: mostly tiny and odd ones, at or above each symbol's minimum; with
/// `respect == false` any size from 1.
pub fn sizes(syms: &[SymInfo], rng: &mut Rng, respect: bool) -> Sizes {
    syms.iter()
        .map(|s| {
            let v = match s.name {
                "C" => [1, 2, 3, 4, 3][rng.below(5) as usize],
                "K" => [1, 3, 7, 16, 100, 256, 300][rng.below(7) as usize],
                _ => {
                    const PICKS: [usize; 20] = [
                        1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 19, 23, 24, 31, 33,
                    ];
                    // Tiny sizes half of the time.
                    if rng.below(2) == 0 {
                        PICKS[rng.below(8) as usize]
                    } else {
                        PICKS[rng.below(PICKS.len() as u32) as usize]
                    }
                }
            };
            let v = if respect { v.max(s.min) } else { v };
            (s.name.to_string(), v)
        })
        .collect()
}

/// A small seeded PRNG (SplitMix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (0 for `n == 0`).
    pub fn below(&mut self, n: u32) -> u32 {
        if n == 0 {
            0
        } else {
            (((self.next_u64() >> 32) * n as u64) >> 32) as u32
        }
    }

    /// A choice sequence of `len` numbers, for [`program`].
    pub fn choices(&mut self, len: usize) -> Vec<u32> {
        (0..len).map(|_| self.next_u64() as u32).collect()
    }
}

/// Evaluates a dimension of the IR (`int`, size symbols, `+ - * / % << >>`) as the host does,
/// in `i64`; `None` for a division by zero or anything else.
pub fn eval_dim(f: &ir::Function, sizes: &Sizes, e: &ir::Expr) -> Option<i64> {
    use ir::{BinOp, ExprKind, UnOp};
    Some(match &e.kind {
        ExprKind::Int(v) => *v as i64,
        ExprKind::Size(i) => {
            let name = &f.sizes[*i].name;
            sizes
                .iter()
                .find(|(n, _)| n == name)
                .map_or(4, |(_, v)| *v as i64)
        }
        ExprKind::Cast(a, _) => eval_dim(f, sizes, a)?,
        ExprKind::Unary(UnOp::Neg, a) => eval_dim(f, sizes, a)?.wrapping_neg(),
        ExprKind::Binary(op, a, b) => {
            let (x, y) = (eval_dim(f, sizes, a)?, eval_dim(f, sizes, b)?);
            match op {
                BinOp::Add => x.wrapping_add(y),
                BinOp::Sub => x.wrapping_sub(y),
                BinOp::Mul => x.wrapping_mul(y),
                BinOp::Div if y != 0 => x.wrapping_div(y),
                BinOp::Rem if y != 0 => x.wrapping_rem(y),
                BinOp::Shl => x.wrapping_shl(y as u32),
                BinOp::Shr => x.wrapping_shr(y as u32),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// The shape of each matrix parameter of `f` for `sizes` (negative dimensions as 0), in
/// parameter order; `None` for scalars.
pub fn shapes(f: &ir::Function, sizes: &Sizes) -> Vec<Option<Vec<usize>>> {
    f.params
        .iter()
        .map(|p| match p {
            ir::ParamRef::Matrix(m) => Some(
                f.matrices[*m]
                    .dims
                    .iter()
                    .map(|d| eval_dim(f, sizes, d).unwrap_or(0).max(0) as usize)
                    .collect(),
            ),
            ir::ParamRef::Scalar(_) => None,
        })
        .collect()
}

/// Interpreter arguments for `f` with `sizes`: every matrix parameter gets the shape its
/// declaration gives (random elements: small, moderate or full-range values, chosen per
/// matrix; outputs too, so that elements a pipeline does not write are visible), every scalar
/// a random value of its type (mostly small).
pub fn args(f: &ir::Function, sizes: &Sizes, seed: u64) -> Vec<Arg> {
    args_with(f, sizes, seed, false)
}

/// As [`args`]; with `zero_outputs`, output matrices start at zero (the OpenCL path starts
/// every output it does not write whole at zero, where the CPU path and the interpreter keep
/// the caller's elements).
pub fn args_with(f: &ir::Function, sizes: &Sizes, seed: u64, zero_outputs: bool) -> Vec<Arg> {
    let mut rng = Rng::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ 0xA5A5);
    let shapes = shapes(f, sizes);
    f.params
        .iter()
        .zip(shapes)
        .map(|(p, shape)| match p {
            ir::ParamRef::Matrix(m) => {
                let shape = shape.expect("a matrix");
                let n: usize = shape.iter().product();
                let mat = &f.matrices[*m];
                let data = random_data(mat.elem, n, &mut rng);
                let data = if zero_outputs && mat.kind == ir::MatrixKind::Output {
                    Data::zeros(mat.elem, n).expect("an element type")
                } else {
                    data
                };
                Arg::Matrix(Tensor { shape, data })
            }
            ir::ParamRef::Scalar(s) => Arg::Scalar(random_scalar(f.scalars[*s].ty, &mut rng)),
        })
        .collect()
}

/// Changes the shape of one matrix argument (one more row, or a dimension more or less):
/// the call must then fail with a shape or rank error. False when there is no matrix.
pub fn perturb_shape(args: &mut [Arg], rng: &mut Rng) -> bool {
    let ms: Vec<usize> = (0..args.len())
        .filter(|&i| matches!(args[i], Arg::Matrix(_)))
        .collect();
    if ms.is_empty() {
        return false;
    }
    let i = ms[rng.below(ms.len() as u32) as usize];
    let Arg::Matrix(t) = &mut args[i] else {
        return false;
    };
    let mut shape = t.shape.clone();
    match rng.below(4) {
        0 if shape.len() > 1 => {
            shape.remove(0);
        }
        1 => shape.insert(0, 1 + rng.below(2) as usize),
        _ => {
            let d = rng.below(shape.len() as u32) as usize;
            shape[d] += 1;
        }
    }
    let n = shape.iter().product();
    let elem = t.elem();
    *t = Tensor {
        shape,
        data: random_data(elem, n, rng),
    };
    true
}

fn random_data(elem: Scalar, n: usize, rng: &mut Rng) -> Data {
    // 0: small values, 1: moderate, 2: the type's whole range.
    let mode = [0, 1, 1, 1, 2][rng.below(5) as usize];
    let mut int = |lo: i64, hi: i64| -> i64 {
        let span = (hi - lo + 1) as u64;
        lo + (rng.next_u64() % span) as i64
    };
    macro_rules! ints {
        ($v:ident, $t:ty, $small:expr, $mid:expr) => {{
            let (lo, hi): (i64, i64) = match mode {
                0 => $small,
                1 => $mid,
                _ => (<$t>::MIN as i64, <$t>::MAX as i64),
            };
            Data::$v((0..n).map(|_| int(lo, hi) as $t).collect())
        }};
    }
    match elem {
        Scalar::U8 => ints!(U8, u8, (0, 15), (0, 255)),
        Scalar::I8 => ints!(I8, i8, (-8, 8), (-128, 127)),
        Scalar::U16 => ints!(U16, u16, (0, 15), (0, 4095)),
        Scalar::I16 => ints!(I16, i16, (-8, 8), (-2048, 2047)),
        Scalar::U32 => ints!(U32, u32, (0, 15), (0, 100_000)),
        Scalar::I32 => ints!(I32, i32, (-8, 8), (-100_000, 100_000)),
        Scalar::I64 => ints!(I64, i64, (-8, 8), (-100_000, 100_000)),
        Scalar::U64 => Data::U64((0..n).map(|_| int(0, 100_000) as u64).collect()),
        Scalar::F32 | Scalar::Bool => Data::F32(
            (0..n)
                .map(|_| {
                    let r = rng.next_u64();
                    match mode {
                        0 => ((r % 33) as f32 - 16.0) / 4.0,
                        1 => ((r % 2_000_001) as f32 - 1_000_000.0) / 10_000.0,
                        _ => match r % 8 {
                            0 => 0.0,
                            1 => -1.0,
                            2 => 255.0,
                            _ => ((r >> 8) % 2_000_001) as f32 / 1000.0 - 1000.0,
                        },
                    }
                })
                .collect(),
        ),
    }
}

fn random_scalar(ty: Scalar, rng: &mut Rng) -> Val {
    let small = |rng: &mut Rng| rng.below(41) as i128 - 4;
    match ty {
        Scalar::Bool => Val::Bool(rng.below(2) == 1),
        Scalar::F32 => Val::F32(match rng.below(6) {
            0 => 0.0,
            1 => 1.0,
            2 => -0.5,
            _ => (rng.below(8001) as f32 - 4000.0) / 1000.0,
        }),
        t => {
            let (lo, hi) = t.range().expect("an integer type");
            let v = if rng.below(8) == 0 {
                lo + (rng.next_u64() as i128).rem_euclid(hi - lo + 1)
            } else {
                small(rng)
            };
            Val::Int(v.clamp(lo, hi))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Integer expressions the generator evaluates: extents, bounds, subscripts
// ---------------------------------------------------------------------------------------------

/// An `i32` expression of size symbols, index variables, host scalars and data, which the
/// generator can evaluate (data and unknown host values as unbounded intervals).
#[derive(Clone, Debug)]
enum X {
    Lit(i64),
    Sym(usize),
    /// Slot, name.
    Var(usize, String),
    /// A host scalar, with an expression that bounds it from above (for iteration bounds).
    Host(String, Box<X>),
    /// Data-dependent: unknown at compile time.
    Data(String),
    Bin(char, Box<X>, Box<X>),
    Min(Box<X>, Box<X>),
    Max(Box<X>, Box<X>),
    Clamp(Box<X>, Box<X>, Box<X>),
}

type Iv = (Option<i64>, Option<i64>);

fn lit(v: i64) -> X {
    X::Lit(v)
}

fn sym(s: usize) -> X {
    X::Sym(s)
}

fn add(a: X, k: i64) -> X {
    match (a, k) {
        (a, 0) => a,
        (X::Lit(v), k) => X::Lit(v + k),
        (a, k) if k < 0 => X::Bin('-', Box::new(a), Box::new(X::Lit(-k))),
        (a, k) => X::Bin('+', Box::new(a), Box::new(X::Lit(k))),
    }
}

fn bin(op: char, a: X, b: X) -> X {
    match (op, &a, &b) {
        ('*', _, X::Lit(1)) | ('/', _, X::Lit(1)) => a,
        ('-', _, X::Lit(k)) => add(a, -k),
        ('+', _, X::Lit(k)) => add(a, *k),
        _ => X::Bin(op, Box::new(a), Box::new(b)),
    }
}

impl X {
    fn text(&self) -> String {
        self.text_p(0)
    }

    fn text_p(&self, p: u8) -> String {
        match self {
            X::Lit(v) if *v < 0 && p > 0 => format!("({v})"),
            X::Lit(v) => v.to_string(),
            X::Sym(s) => SYMS[*s].to_string(),
            X::Var(_, n) => n.clone(),
            X::Host(n, _) => n.clone(),
            X::Data(t) if p > 0 => format!("({t})"),
            X::Data(t) => t.clone(),
            X::Bin(op, a, b) => {
                let q = if matches!(op, '+' | '-') { 1 } else { 2 };
                let s = format!("{} {op} {}", a.text_p(q), b.text_p(q + 1));
                if q < p { format!("({s})") } else { s }
            }
            X::Min(a, b) => format!("min({}, {})", a.text(), b.text()),
            X::Max(a, b) => format!("max({}, {})", a.text(), b.text()),
            X::Clamp(a, b, c) => format!("clamp({}, {}, {})", a.text(), b.text(), c.text()),
        }
    }

    /// The value interval with every symbol at `s` and the slot variables at `vars`.
    fn iv(&self, s: i64, vars: &[i64]) -> Iv {
        match self {
            X::Lit(v) => (Some(*v), Some(*v)),
            X::Sym(_) => (Some(s), Some(s)),
            X::Var(i, _) => (Some(vars[*i]), Some(vars[*i])),
            X::Host(_, m) => m.iv(s, vars),
            X::Data(_) => (None, None),
            X::Bin(op, a, b) => {
                let (a, b) = (a.iv(s, vars), b.iv(s, vars));
                match op {
                    '+' => (add2(a.0, b.0), add2(a.1, b.1)),
                    '-' => (sub2(a.0, b.1), sub2(a.1, b.0)),
                    '*' => match (a, b) {
                        ((Some(w), Some(x)), (Some(y), Some(z))) => {
                            let c = [w * y, w * z, x * y, x * z];
                            (c.iter().min().copied(), c.iter().max().copied())
                        }
                        _ => (None, None),
                    },
                    '/' => match b {
                        (Some(k), Some(k2)) if k == k2 && k > 0 => {
                            (a.0.map(|v| v / k), a.1.map(|v| v / k))
                        }
                        _ => (None, None),
                    },
                    '%' => match b {
                        (Some(k), Some(k2)) if k == k2 && k > 0 => match a {
                            (Some(lo), Some(hi)) if lo == hi => (Some(lo % k), Some(lo % k)),
                            (Some(lo), _) if lo >= 0 => (Some(0), Some(k - 1)),
                            _ => (Some(-(k - 1)), Some(k - 1)),
                        },
                        _ => (None, None),
                    },
                    _ => (None, None),
                }
            }
            X::Min(a, b) => {
                let (a, b) = (a.iv(s, vars), b.iv(s, vars));
                (min2(a.0, b.0), either(a.1, b.1, i64::min))
            }
            X::Max(a, b) => {
                let (a, b) = (a.iv(s, vars), b.iv(s, vars));
                (either(a.0, b.0, i64::max), max2(a.1, b.1))
            }
            X::Clamp(a, lo, hi) => {
                X::Min(Box::new(X::Max(a.clone(), lo.clone())), hi.clone()).iv(s, vars)
            }
        }
    }

    /// The exact value (`None` if unknown).
    fn val(&self, s: i64, vars: &[i64]) -> Option<i64> {
        match self.iv(s, vars) {
            (Some(a), Some(b)) if a == b => Some(a),
            _ => None,
        }
    }

    /// The slots whose variables it uses.
    fn slots(&self, out: &mut BTreeSet<usize>) {
        match self {
            X::Var(i, _) => {
                out.insert(*i);
            }
            X::Host(_, m) => m.slots(out),
            X::Bin(_, a, b) | X::Min(a, b) | X::Max(a, b) => {
                a.slots(out);
                b.slots(out);
            }
            X::Clamp(a, b, c) => {
                a.slots(out);
                b.slots(out);
                c.slots(out);
            }
            _ => {}
        }
    }

    fn has_data(&self) -> bool {
        match self {
            X::Data(_) => true,
            X::Host(_, m) => m.has_data(),
            X::Bin(_, a, b) | X::Min(a, b) | X::Max(a, b) => a.has_data() || b.has_data(),
            X::Clamp(a, b, c) => a.has_data() || b.has_data() || c.has_data(),
            _ => false,
        }
    }
}

fn add2(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    Some(a? + b?)
}
fn sub2(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    Some(a? - b?)
}
fn min2(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    Some(a?.min(b?))
}
fn max2(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    Some(a?.max(b?))
}
fn either(a: Option<i64>, b: Option<i64>, f: fn(i64, i64) -> i64) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(f(a, b)),
        (Some(a), None) | (None, Some(a)) => Some(a),
        _ => None,
    }
}

/// The sizes at which the generator evaluates accesses: every small size (the compiler samples
/// every residue mod 4 around 16) and larger ones, to see reach that grows with the size.
const SAMPLES: [i64; 34] = [
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 31, 32,
    33, 34, 63, 64, 65, 66, 100, 101,
];

// ---------------------------------------------------------------------------------------------
// The generator's model of a function
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    In,
    Out,
    Local,
    Const,
}

/// What a dimension of a matrix stands for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Axis {
    /// The channel of a 3-D matrix.
    Chan,
    /// Rows or columns, extents of symbol `.0`.
    Plane(usize),
    /// A lookup table's length.
    Table,
    /// A constant matrix's dimension.
    Fixed,
}

#[derive(Clone, Debug)]
struct Mat {
    name: String,
    elem: Scalar,
    kind: Kind,
    dims: Vec<X>,
    axes: Vec<Axis>,
    written: bool,
}

impl Mat {
    fn dims_text(&self) -> String {
        self.dims
            .iter()
            .map(|d| format!("[{}]", d.text()))
            .collect()
    }

    /// The block shape of a constant matrix.
    fn block(&self) -> Option<(usize, usize)> {
        let lit = |x: &X| match x {
            X::Lit(v) => Some(*v as usize),
            _ => None,
        };
        match self.dims.len() {
            1 => Some((1, lit(&self.dims[0])?)),
            2 => Some((lit(&self.dims[0])?, lit(&self.dims[1])?)),
            _ => None,
        }
    }
}

/// A host scalar: a parameter, a host `let` or a global operator's result.
#[derive(Clone, Debug)]
struct Host {
    name: String,
    ty: Scalar,
    reduction: bool,
    /// A host `let` or global result no kernel has used yet.
    fresh: bool,
}

/// A border rule declared so far: its name, its matrix, its widths (before, after) per
/// dimension.
type Rule = (String, usize, Vec<(u32, u32)>);

/// An iteration slot.
#[derive(Clone, Debug)]
struct Slot {
    var: String,
    /// The size symbol of its axis (`None` for a constant channel count).
    sym: Option<usize>,
    chan: bool,
    lo: i64,
    hi: X,
    step: i64,
}

/// A kernel `let`.
#[derive(Clone, Debug)]
struct KLet {
    name: String,
    /// `None`: a block.
    ty: Scalar,
    block: Option<(usize, usize)>,
}

/// What a kernel has in scope while the generator writes its body.
#[derive(Default)]
struct Kx {
    slots: Vec<Option<Slot>>,
    /// `(slot, lowest value, highest value + 1 as an expression)` of the enclosing `if`s.
    guards: Vec<(usize, i64, Option<X>)>,
    lets: Vec<KLet>,
    /// Border widths needed per matrix and dimension: (before, after).
    need: BTreeMap<usize, Vec<(u32, u32)>>,
    /// Matrices that take no border rule in this iterator.
    no_border: BTreeSet<usize>,
    /// Matrices this iterator writes.
    targets: BTreeSet<usize>,
    /// Whether the last read generated may reach outside its matrix (a border value: not
    /// converted to the element type, so a `u8` read may be negative or above 255).
    last_out: bool,
    /// Inside the right operand of `&&` or `||` (no reduction over a window of host length).
    short: usize,
    /// The window being generated writes its lengths as host expressions of the same value
    /// (`(5 + N - N)`), so its reduction is a loop over a host length.
    host_len: bool,
    /// How deep in `if`s the statements being generated are (prefixes only at 0).
    depth: usize,
    /// The matrices this iterator reduces into (`reduce.rs`).
    hists: Vec<reduce::Hist>,
    /// A matrix this iterator stores one constant into at places from data (`seen[v] = 1`).
    seen: Option<reduce::Seen>,
    /// The slots the iterator's first prefix scans along.
    scan: Option<Vec<usize>>,
    /// Kernel `let`s whose value is from data for certain (prefixes).
    data_lets: Vec<String>,
}

/// A store target of an iterator: the matrix, its subscripts, its block shape.
#[derive(Clone, Debug)]
struct Target {
    mat: usize,
    subs: Vec<String>,
    block: Option<(usize, usize)>,
}

/// A kernel expression.
#[derive(Clone, Debug)]
struct Ex {
    t: String,
    ty: Scalar,
    atom: bool,
}

impl Ex {
    fn new(t: impl Into<String>, ty: Scalar) -> Ex {
        Ex {
            t: t.into(),
            ty,
            atom: false,
        }
    }
    fn atom(t: impl Into<String>, ty: Scalar) -> Ex {
        Ex {
            t: t.into(),
            ty,
            atom: true,
        }
    }
    fn p(&self) -> String {
        if self.atom {
            self.t.clone()
        } else {
            format!("({})", self.t)
        }
    }
}

/// A block expression.
#[derive(Clone, Debug)]
struct Bx {
    t: String,
    elem: Scalar,
    atom: bool,
}

impl Bx {
    fn p(&self) -> String {
        if self.atom {
            self.t.clone()
        } else {
            format!("({})", self.t)
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Want {
    Int,
    Float,
    Num,
    Bool,
}

const ELEMS: [Scalar; 7] = [
    Scalar::U8,
    Scalar::I8,
    Scalar::U16,
    Scalar::I16,
    Scalar::U32,
    Scalar::I32,
    Scalar::F32,
];

const INTS: [Scalar; 8] = [
    Scalar::I32,
    Scalar::U8,
    Scalar::I8,
    Scalar::U16,
    Scalar::I16,
    Scalar::U32,
    Scalar::I64,
    Scalar::U64,
];

struct G<'a> {
    data: &'a [u32],
    pos: usize,
    rank: usize,
    mats: Vec<Mat>,
    hosts: Vec<Host>,
    /// Rules declared so far: name, matrix, widths per dimension.
    rules: Vec<Rule>,
    /// Smallest size per symbol.
    min: [i64; 4],
    used_syms: BTreeSet<usize>,
    /// Statements at function level, in order.
    body: Vec<String>,
    /// Constant declarations (emitted first).
    consts: Vec<String>,
    /// Statements to emit before the iterator being generated.
    pre: Vec<String>,
    counter: usize,
    exact: bool,
    tags: BTreeSet<&'static str>,
    /// The shape of the first parameter (every symbol bare).
    base: Vec<(X, Axis)>,
    /// The statement that makes the program one to reject: the error expected, the statement
    /// and a valid one to put in its place (`reduce.rs`).
    reject: Option<(String, String, String)>,
}

/// Generates a program from a choice sequence.
pub fn program(data: &[u32]) -> Program {
    let mut g = G {
        data,
        pos: 0,
        rank: 2,
        mats: Vec::new(),
        hosts: Vec::new(),
        rules: Vec::new(),
        min: [1; 4],
        used_syms: BTreeSet::new(),
        body: Vec::new(),
        consts: Vec::new(),
        pre: Vec::new(),
        counter: 0,
        exact: true,
        tags: BTreeSet::new(),
        base: Vec::new(),
        reject: None,
    };
    g.function()
}

impl<'a> G<'a> {
    // --- choices ---

    fn n(&mut self, k: usize) -> usize {
        let v = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        if k == 0 { 0 } else { v as usize % k }
    }

    /// True with probability `pct` percent (false on a zero choice).
    fn chance(&mut self, pct: usize) -> bool {
        self.n(100) >= 100 - pct.min(100)
    }

    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.n(xs.len())].clone()
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}{}", self.counter)
    }

    fn tag(&mut self, t: &'static str) {
        self.tags.insert(t);
    }

    fn raise_min(&mut self, s: usize, v: i64) {
        if v > self.min[s] {
            self.min[s] = v;
        }
    }

    /// The largest minimum size a program may have: the compiler checks accesses on sizes 16
    /// to 19 and 64 to 67, so a program must be valid from 16 on.
    const MAX_MIN: i64 = 16;

    /// Raises the minimum of symbol `sym` so that extent `e` is at least `v`; false (and no
    /// change) when that needs a size above [`Self::MAX_MIN`].
    fn raise_extent(&mut self, e: &X, sym: Option<usize>, v: i64) -> bool {
        let Some(s) = sym else { return true };
        for cand in 1..=Self::MAX_MIN {
            if e.val(cand, &[]).is_some_and(|x| x >= v) {
                self.raise_min(s, cand);
                return true;
            }
        }
        false
    }

    /// Whether extent `e` reaches `v` at some size up to [`Self::MAX_MIN`].
    fn can_extent(e: &X, v: i64) -> bool {
        (1..=Self::MAX_MIN).any(|c| e.val(c, &[]).is_some_and(|x| x >= v))
    }

    // --- the function ---

    fn function(&mut self) -> Program {
        self.rank = self.pick(&[2, 2, 1, 3, 2, 3, 1]);
        let rank = self.rank;
        self.tag(["rank1", "rank2", "rank3"][rank - 1]);
        let chan = if rank == 3 {
            if self.chance(50) {
                self.used_syms.insert(SC);
                self.tag("chan:C");
                sym(SC)
            } else {
                lit(3)
            }
        } else {
            lit(0)
        };
        let base: Vec<(X, Axis)> = match rank {
            1 => vec![(sym(SN), Axis::Plane(SN))],
            2 => vec![(sym(SM), Axis::Plane(SM)), (sym(SN), Axis::Plane(SN))],
            _ => vec![
                (chan.clone(), Axis::Chan),
                (sym(SM), Axis::Plane(SM)),
                (sym(SN), Axis::Plane(SN)),
            ],
        };
        self.base = base.clone();
        self.used_syms.insert(SN);
        if rank >= 2 {
            self.used_syms.insert(SM);
        }
        let mut params: Vec<(String, Input)> = Vec::new();
        // Inputs: the first binds every symbol; sometimes no input at all (outputs bind).
        let no_inputs = self.chance(4);
        let n_in = if no_inputs { 0 } else { 1 + self.n(3) };
        for k in 0..n_in {
            let elem = self.pick(&ELEMS);
            let (dims, axes) = if k == 0 {
                base.iter().cloned().unzip()
            } else {
                self.variant_shape(&base, true)
            };
            let name = format!("a{k}");
            self.add_param_mat(&mut params, name, elem, Kind::In, dims, axes);
        }
        let n_out = 1 + self.n(3).min(self.n(3));
        for k in 0..n_out {
            let elem = self.pick(&ELEMS);
            let (dims, axes) = if k == 0 && (no_inputs || self.chance(50)) {
                base.iter().cloned().unzip()
            } else {
                self.variant_shape(&base, false)
            };
            let name = format!("o{k}");
            self.add_param_mat(&mut params, name, elem, Kind::Out, dims, axes);
        }
        if no_inputs {
            self.tag("outputs_bind_sizes");
            // The base-shaped output binds the sizes: put it first.
            let i = params.iter().position(|(_, p)| p.name == "o0").expect("o0");
            let o0 = params.remove(i);
            params.insert(0, o0);
        }
        for k in 0..self.n(4).min(self.n(4)) {
            let ty = self.pick(&[
                Scalar::I32,
                Scalar::F32,
                Scalar::U8,
                Scalar::I64,
                Scalar::Bool,
                Scalar::U64,
                Scalar::I16,
                Scalar::U32,
                Scalar::I32,
                Scalar::F32,
            ]);
            let name = format!("s{k}");
            self.tags.insert(match ty {
                Scalar::I32 => "param:i32",
                Scalar::F32 => "param:f32",
                Scalar::U8 => "param:u8",
                Scalar::I64 => "param:i64",
                Scalar::Bool => "param:bool",
                Scalar::U64 => "param:u64",
                Scalar::I16 => "param:i16",
                _ => "param:u32",
            });
            self.hosts.push(Host {
                name: name.clone(),
                ty,
                reduction: false,
                fresh: false,
            });
            let input = Input {
                name: name.clone(),
                kind: InputKind::Scalar { ty },
            };
            // Scalars anywhere after the first matrix.
            let at = 1 + self.n(params.len());
            params.insert(at.min(params.len()), (format!("{name}: {ty}"), input));
        }
        let ret = if self.chance(15) {
            self.tag("return");
            Some(self.pick(&[
                Scalar::I64,
                Scalar::I32,
                Scalar::F32,
                Scalar::U64,
                Scalar::U8,
                Scalar::I16,
                Scalar::U32,
            ]))
        } else {
            None
        };

        // The body.
        let steps = 1 + self.n(4);
        for _ in 0..steps {
            match self.n(10) {
                0 | 1 if self.has_reducible() => {
                    let s = self.reduction();
                    self.body.push(s);
                }
                2 => {
                    let s = self.host_let();
                    self.body.push(s);
                }
                // Now and then a histogram (`reduce.rs`): few, so that the other kinds of
                // iterator keep their share.
                3 if self.chance(35) => {
                    let s = self.histogram();
                    self.body.push(s);
                }
                _ => {
                    let s = self.iterator(None);
                    self.body.push(s);
                }
            }
        }
        // Every output is written.
        for o in 0..self.mats.len() {
            if self.mats[o].kind == Kind::Out && !self.mats[o].written {
                let s = self.iterator(Some(o));
                self.body.push(s);
            }
        }
        if let Some(t) = ret {
            let e = if self.has_reducible() && self.chance(60) {
                let (op, m) = self.pick_reduction();
                format!("{op}({m})")
            } else {
                let want = if t == Scalar::F32 {
                    Want::Num
                } else {
                    Want::Int
                };
                self.hexpr(want, 2).t
            };
            self.body.push(format!("return {e};"));
        }

        let head: Vec<String> = params.iter().map(|(t, _)| t.clone()).collect();
        let mut src = String::new();
        if self.chance(30) {
            src.push_str("/// A generated pipeline.\n");
        }
        src.push_str(&format!(
            "{}fn f({}){} {{\n",
            if self.chance(50) { "pub " } else { "" },
            head.join(", "),
            ret.map_or(String::new(), |t| format!(" -> {t}"))
        ));
        for c in &self.consts {
            src.push_str("    ");
            src.push_str(c);
            src.push('\n');
        }
        for s in &self.body {
            for line in s.lines() {
                src.push_str("    ");
                src.push_str(line);
                src.push('\n');
            }
        }
        src.push_str("}\n");
        let syms = self
            .used_syms
            .iter()
            .map(|&s| SymInfo {
                name: SYMS[s],
                min: self.min[s].max(1) as usize,
            })
            .collect();
        let reject = self.reject.take().map(|(error, bad, good)| Reject {
            error,
            twin: src.replacen(&bad, &good, 1),
        });
        Program {
            source: src,
            name: "f".to_string(),
            inputs: params.into_iter().map(|(_, i)| i).collect(),
            syms,
            exact: self.exact,
            may_fail: self.tags.contains("lookup_raw")
                || self.tags.contains("division_by_data")
                || self.tags.contains("reduce_raw"),
            tags: self.tags.clone(),
            reject,
        }
    }

    fn add_param_mat(
        &mut self,
        params: &mut Vec<(String, Input)>,
        name: String,
        elem: Scalar,
        kind: Kind,
        dims: Vec<X>,
        axes: Vec<Axis>,
    ) {
        self.tags.insert(match elem {
            Scalar::U8 => "elem:u8",
            Scalar::I8 => "elem:i8",
            Scalar::U16 => "elem:u16",
            Scalar::I16 => "elem:i16",
            Scalar::U32 => "elem:u32",
            Scalar::I32 => "elem:i32",
            _ => "elem:f32",
        });
        let m = Mat {
            name: name.clone(),
            elem,
            kind,
            dims,
            axes,
            written: kind == Kind::In,
        };
        let text = format!(
            "{name}: &{}{elem}{}",
            if kind == Kind::Out { "mut " } else { "" },
            m.dims_text()
        );
        let input = Input {
            name,
            kind: InputKind::Matrix {
                elem,
                dims: m.dims.iter().map(X::text).collect(),
                output: kind == Kind::Out,
            },
        };
        self.note_extents(&m);
        self.mats.push(m);
        params.push((text, input));
    }

    /// Raises the minimum sizes so that every extent of `m` is at least 1.
    fn note_extents(&mut self, m: &Mat) {
        for (d, a) in m.dims.iter().zip(&m.axes) {
            match a {
                Axis::Plane(s) => {
                    self.used_syms.insert(*s);
                    let _ = self.raise_extent(d, Some(*s), 1);
                }
                Axis::Table => {
                    if matches!(d, X::Sym(_)) {
                        self.used_syms.insert(SK);
                    }
                }
                _ => {}
            }
        }
    }

    /// A shape related to the base shape: the same, half, double, cropped, a quarter, a row or
    /// column vector, a plane of a 3-D program, a lookup table, or transposed.
    fn variant_shape(&mut self, base: &[(X, Axis)], input: bool) -> (Vec<X>, Vec<Axis>) {
        let choice = self.n(12);
        let plane = |x: X, s: usize| (x, Axis::Plane(s));
        match choice {
            // Lookup table (inputs) / a vector along the columns.
            8 if input => {
                if self.chance(50) {
                    self.tag("table:K");
                    self.used_syms.insert(SK);
                    (vec![sym(SK)], vec![Axis::Table])
                } else {
                    self.tag("table:256");
                    (vec![lit(256)], vec![Axis::Table])
                }
            }
            8 | 9 if self.rank >= 2 => {
                if self.chance(50) {
                    (vec![sym(SN)], vec![Axis::Plane(SN)])
                } else {
                    (vec![sym(SM)], vec![Axis::Plane(SM)])
                }
            }
            // Rows and columns swapped: read down its columns along the rows' loop.
            11 if input && self.rank == 2 => {
                self.tag("shape:transposed");
                (
                    vec![sym(SN), sym(SM)],
                    vec![Axis::Plane(SN), Axis::Plane(SM)],
                )
            }
            10 if self.rank == 3 => (
                vec![sym(SM), sym(SN)],
                vec![Axis::Plane(SM), Axis::Plane(SN)],
            ),
            _ => {
                let form = if choice < 5 { 0 } else { 1 + self.n(5) };
                let mut dims = Vec::new();
                let mut axes = Vec::new();
                for (x, a) in base {
                    match a {
                        Axis::Plane(s) => {
                            let s = *s;
                            let e = match form {
                                0 => sym(s),
                                1 => {
                                    self.tag("shape:half");
                                    bin('/', add(sym(s), 1), lit(2))
                                }
                                2 => {
                                    self.tag("shape:double");
                                    bin('*', sym(s), lit(2))
                                }
                                3 => {
                                    self.tag("shape:crop");
                                    add(sym(s), -(1 + self.n(2) as i64))
                                }
                                4 => {
                                    self.tag("shape:quarter");
                                    bin('/', sym(s), lit(4))
                                }
                                _ => {
                                    self.tag("shape:half_down");
                                    bin('/', sym(s), lit(2))
                                }
                            };
                            let (e, a) = plane(e, s);
                            dims.push(e);
                            axes.push(a);
                        }
                        a => {
                            dims.push(x.clone());
                            axes.push(*a);
                        }
                    }
                }
                (dims, axes)
            }
        }
    }

    // --- host statements ---

    fn has_reducible(&self) -> bool {
        self.mats.iter().any(|m| m.kind != Kind::Const && m.written)
    }

    fn pick_reduction(&mut self) -> (&'static str, String) {
        let ms: Vec<usize> = (0..self.mats.len())
            .filter(|&i| self.mats[i].kind != Kind::Const && self.mats[i].written)
            .collect();
        let m = ms[self.n(ms.len())];
        let op = self.pick(&[
            "parac_matrix_sum",
            "parac_matrix_min",
            "parac_matrix_max",
            "parac_matrix_mean",
        ]);
        self.tags.insert(match op {
            "parac_matrix_sum" => "global:sum",
            "parac_matrix_min" => "global:min",
            "parac_matrix_max" => "global:max",
            _ => "global:mean",
        });
        if self.mats[m].kind == Kind::Local {
            self.tag("global:of_local");
        }
        if self.mats[m].elem == Scalar::F32 && op != "parac_matrix_min" && op != "parac_matrix_max"
        {
            // Float sums are added in another order on each back end.
            self.exact = false;
        }
        (op, self.mats[m].name.clone())
    }

    fn reduction_type(&self, op: &str, m: &str) -> Scalar {
        let e = self.mats.iter().find(|x| x.name == m).expect("matrix").elem;
        match op {
            "parac_matrix_sum" | "parac_matrix_mean" => {
                if e == Scalar::F32 {
                    Scalar::F32
                } else {
                    Scalar::I64
                }
            }
            _ => e.promote(),
        }
    }

    /// A global reduction in a function-level `let`, sometimes with host `let`s built on it.
    fn reduction(&mut self) -> String {
        match self.n(4) {
            1 => {
                // The paper's stretch: (lo, hi) and a range.
                let ms: Vec<usize> = (0..self.mats.len())
                    .filter(|&i| self.mats[i].kind != Kind::Const && self.mats[i].written)
                    .collect();
                let m = ms[self.n(ms.len())];
                let name = self.mats[m].name.clone();
                let t = self.mats[m].elem.promote();
                let (lo, hi) = (self.fresh("h"), self.fresh("h"));
                self.tag("global:min");
                self.tag("global:max");
                self.tag("host_tuple");
                let range = self.fresh("h");
                self.hosts.push(Host {
                    name: lo.clone(),
                    ty: t,
                    reduction: true,
                    fresh: true,
                });
                self.hosts.push(Host {
                    name: hi.clone(),
                    ty: t,
                    reduction: true,
                    fresh: true,
                });
                let one = if t == Scalar::F32 { "1.0" } else { "1" };
                self.hosts.push(Host {
                    name: range.clone(),
                    ty: t,
                    reduction: true,
                    fresh: true,
                });
                format!(
                    "let ({lo}, {hi}) = (parac_matrix_min({name}), parac_matrix_max({name}));\nlet {range} = max({hi} - {lo}, {one});"
                )
            }
            2 => {
                // A mean through the element count.
                let ms: Vec<usize> = (0..self.mats.len())
                    .filter(|&i| {
                        self.mats[i].kind != Kind::Const
                            && self.mats[i].written
                            && self.mats[i].elem != Scalar::F32
                    })
                    .collect();
                if ms.is_empty() {
                    return self.host_let();
                }
                let m = ms[self.n(ms.len())];
                let count: Vec<String> = self.mats[m].dims.iter().map(|d| d.text_p(2)).collect();
                let h = self.fresh("h");
                self.tag("global:sum");
                self.hosts.push(Host {
                    name: h.clone(),
                    ty: Scalar::I32,
                    reduction: true,
                    fresh: true,
                });
                format!(
                    "let {h}: i32 = (parac_matrix_sum({}) / ({}) as i64) as i32;",
                    self.mats[m].name,
                    count.join(" * ")
                )
            }
            _ => {
                let (op, m) = self.pick_reduction();
                let ty = self.reduction_type(op, &m);
                let h = self.fresh("h");
                self.hosts.push(Host {
                    name: h.clone(),
                    ty,
                    reduction: true,
                    fresh: true,
                });
                format!("let {h} = {op}({m});")
            }
        }
    }

    fn host_let(&mut self) -> String {
        self.tag("host_let");
        let want = if self.chance(25) {
            Want::Float
        } else {
            Want::Int
        };
        let e = self.hexpr(want, 2);
        let h = self.fresh("h");
        let (ty, text) = if self.chance(30) && want == Want::Int {
            let t = self.pick(&[Scalar::I32, Scalar::I64, Scalar::U32, Scalar::I16]);
            (t, format!("let {h}: {t} = {};", e.t))
        } else {
            (e.ty, format!("let {h} = {};", e.t))
        };
        self.hosts.push(Host {
            name: h,
            ty,
            reduction: false,
            fresh: true,
        });
        text
    }

    /// A host expression (sizes, scalar parameters, host `let`s, literals).
    fn hexpr(&mut self, want: Want, depth: usize) -> Ex {
        let want = if want == Want::Num {
            if self.chance(30) {
                Want::Float
            } else {
                Want::Int
            }
        } else {
            want
        };
        if depth == 0 || self.n(3) == 0 {
            let hs: Vec<Host> = self
                .hosts
                .iter()
                .filter(|h| match want {
                    Want::Float => h.ty == Scalar::F32,
                    _ => h.ty.is_int(),
                })
                .cloned()
                .collect();
            if !hs.is_empty() && self.chance(50) {
                let h = self.pick(&hs);
                return Ex::atom(h.name, h.ty);
            }
            return match want {
                Want::Float => {
                    let v = self.pick(&["0.5", "2.0", "1.5", "0.25", "3.0"]);
                    Ex::atom(v, Scalar::F32)
                }
                _ => {
                    if self.chance(50) {
                        let s: Vec<usize> = self.used_syms.iter().copied().collect();
                        let s = self.pick(&s);
                        Ex::atom(SYMS[s], Scalar::I32)
                    } else {
                        Ex::atom(self.n(10).to_string(), Scalar::I32)
                    }
                }
            };
        }
        match (want, self.n(5)) {
            (Want::Float, 0) => {
                let a = self.hexpr(Want::Float, depth - 1);
                Ex::atom(format!("sqrt(abs({}))", a.t), Scalar::F32)
            }
            (Want::Float, 1) => {
                let a = self.hexpr(Want::Int, depth - 1);
                Ex::new(format!("{} as f32", a.p()), Scalar::F32)
            }
            (Want::Float, _) => {
                let op = self.pick(&["+", "-", "*"]);
                let (a, b) = (self.hexpr(want, depth - 1), self.hexpr(want, depth - 1));
                Ex::new(format!("{} {op} {}", a.p(), b.p()), Scalar::F32)
            }
            (_, 0) => {
                let f = self.pick(&["min", "max"]);
                let (a, b) = (self.hexpr(want, depth - 1), self.hexpr(want, depth - 1));
                Ex::atom(format!("{f}({}, {})", a.t, b.t), Scalar::arith(a.ty, b.ty))
            }
            (_, 1) => {
                let a = self.hexpr(want, depth - 1);
                let k = 1 + self.n(7);
                Ex::new(format!("{} / {k}", a.p()), a.ty.promote())
            }
            (_, 2) => {
                let a = self.hexpr(want, depth - 1);
                if matches!(a.ty.promote(), Scalar::U32 | Scalar::U64) {
                    if avoiding("abs_unsigned") {
                        return a;
                    }
                    self.tag("abs_unsigned");
                }
                Ex::atom(format!("abs({})", a.t), a.ty.promote())
            }
            _ => {
                let op = self.pick(&["+", "-", "*"]);
                let (a, b) = (self.hexpr(want, depth - 1), self.hexpr(want, depth - 1));
                Ex::new(
                    format!("{} {op} {}", a.p(), b.p()),
                    Scalar::arith(a.ty, b.ty),
                )
            }
        }
    }

    // --- iterators ---

    /// The matrices an iterator may read: inputs, constants, and what earlier iterators wrote
    /// (never what this one writes).
    fn readable(&self, kx: &Kx) -> Vec<usize> {
        (0..self.mats.len())
            .filter(|i| {
                let m = &self.mats[*i];
                !kx.targets.contains(i) && m.kind != Kind::Const && m.written
            })
            .collect()
    }

    /// An iterator writing `target` (or a target of its choosing), with the border rules,
    /// locals, constants and host `let`s it needs declared before it.
    fn iterator(&mut self, target: Option<usize>) -> String {
        self.pre.clear();
        // The primary target.
        let t = match target {
            Some(t) => t,
            None => {
                let unwritten: Vec<usize> = (0..self.mats.len())
                    .filter(|&i| self.mats[i].kind == Kind::Out && !self.mats[i].written)
                    .collect();
                if !unwritten.is_empty() && !self.chance(35) {
                    unwritten[0]
                } else if self.chance(70) {
                    self.new_local()
                } else {
                    let outs: Vec<usize> = (0..self.mats.len())
                        .filter(|&i| self.mats[i].kind == Kind::Out)
                        .collect();
                    self.pick(&outs)
                }
            }
        };
        let mut kx = Kx::default();
        kx.targets.insert(t);
        // Secondary targets of the same shape.
        let mut targets = vec![t];
        if self.chance(25) {
            let tdims = self.mats[t].dims_text();
            let others: Vec<usize> = (0..self.mats.len())
                .filter(|&i| {
                    i != t
                        && matches!(self.mats[i].kind, Kind::Out)
                        && self.mats[i].dims_text() == tdims
                })
                .collect();
            if !others.is_empty() {
                let o = self.pick(&others);
                kx.targets.insert(o);
                targets.push(o);
                self.tag("two_targets");
            }
        }
        let name = self.pick(&["it", "it", "p", "it1", "q"]).to_string();
        let named = self.chance(30);
        if named {
            self.tag("named_slots");
        }
        // The grid, from the primary target's dimensions.
        let tm = self.mats[t].clone();
        let nd = tm.dims.len();
        let mut empty_first = false;
        if nd == 1 && self.rank >= 2 && self.chance(30) {
            empty_first = true;
            kx.slots.push(None);
            self.tag("empty_slot");
        }
        let off = kx.slots.len();
        let mut subs: Vec<Vec<String>> = Vec::new();
        let mut lens: Vec<usize> = Vec::new();
        let mut slot_texts = Vec::new();
        for d in 0..nd {
            let slot = off + d;
            let var = if named {
                let names: &[&str] = match (nd, tm.axes[d]) {
                    (_, Axis::Chan) => &["c", "ch"],
                    (1, _) => &["i", "x"],
                    (_, _) if d + 1 == nd => &["y", "col"],
                    _ => &["x", "row"],
                };
                self.pick(names).to_string()
            } else {
                format!("{name}{}", ["x", "y", "z"][slot])
            };
            let e = tm.dims[d].clone();
            let vx = X::Var(slot, var.clone());
            let (sl, sub, len) = match tm.axes[d] {
                Axis::Chan => (
                    Slot {
                        var: var.clone(),
                        sym: if matches!(e, X::Sym(_)) {
                            Some(SC)
                        } else {
                            None
                        },
                        chan: true,
                        lo: 0,
                        hi: e.clone(),
                        step: 1,
                    },
                    vec![var.clone()],
                    1,
                ),
                Axis::Plane(s) => self.write_form(&e, s, &vx),
                _ => unreachable!("targets are planes"),
            };
            slot_texts.push(self.slot_text(&sl, named));
            kx.slots.push(Some(sl));
            subs.push(sub);
            lens.push(len);
        }
        if empty_first {
            slot_texts.insert(0, String::new());
        }
        // Stores: every combination of the per-dimension subscripts (at most 4).
        let block = match (nd, lens.as_slice()) {
            (_, l) if l.iter().all(|&x| x == 1) => None,
            (1, l) => Some((1, l[0])),
            (2, l) => Some((l[0], l[1])),
            (_, l) => Some((l[1], l[2])),
        };
        if block.is_some() {
            self.tag("window_store");
        }
        let mut combos: Vec<Vec<String>> = vec![vec![]];
        for s in &subs {
            let mut next = Vec::new();
            for c in &combos {
                for x in s {
                    let mut c = c.clone();
                    c.push(x.clone());
                    next.push(c);
                }
            }
            combos = next;
        }
        combos.truncate(4);
        let mut stores = Vec::new();
        for c in &combos {
            for &m in &targets {
                stores.push(Target {
                    mat: m,
                    subs: c.clone(),
                    block,
                });
            }
        }
        // Sometimes a matrix reduced into at places from data besides the stores.
        if self.chance(5) {
            self.attach_bins(&mut kx);
        }
        // The body.
        let mut lines = Vec::new();
        self.kbody(&mut kx, &stores, &mut lines, 0);
        self.last_updates(&mut kx, &mut lines);
        for m in &targets {
            self.mats[*m].written = true;
        }
        self.close_iterator(&mut kx, &name, &slot_texts, lines)
    }

    /// The text of an iterator named `name` over `slot_texts` with body `lines`, after the
    /// border rules, locals and host `let`s it needs (`self.pre`); the matrices it reduces
    /// into are written from now on.
    fn close_iterator(
        &mut self,
        kx: &mut Kx,
        name: &str,
        slot_texts: &[String],
        lines: Vec<String>,
    ) -> String {
        for h in std::mem::take(&mut kx.hists) {
            self.mats[h.mat].written = true;
        }
        if let Some(s) = kx.seen.take() {
            self.mats[s.mat].written = true;
        }
        // Border rules for what the body reads outside its matrices.
        let mut rule_names = Vec::new();
        let need: Vec<(usize, Vec<(u32, u32)>)> =
            kx.need.iter().map(|(k, v)| (*k, v.clone())).collect();
        for (m, widths) in need {
            if widths.iter().all(|&(a, b)| a == 0 && b == 0) {
                continue;
            }
            rule_names.push(self.rule_for(m, &widths));
        }
        // Sometimes a rule the iterator does not need.
        let ruled: BTreeSet<usize> = kx.need.keys().copied().collect();
        let free: Vec<Rule> = self
            .rules
            .iter()
            .filter(|r| !ruled.contains(&r.1))
            .cloned()
            .collect();
        if self.chance(5) && !free.is_empty() {
            let r = self.pick(&free);
            if !rule_names.contains(&r.0) {
                rule_names.push(r.0);
                self.tag("unneeded_rule");
            }
        }
        let mut out = String::new();
        for p in self.pre.drain(..) {
            out.push_str(&p);
            out.push('\n');
        }
        let rules = if rule_names.is_empty() {
            String::new()
        } else {
            format!(" parac_border_rule({})", rule_names.join(", "))
        };
        // Some stages kept apart by the program (`parac_schedule(fuse = 0)`: never fused on the
        // CPU path), chosen from the text (not the random stream, which stays as it was).
        let apart = (name.bytes().chain(lines.iter().flat_map(|l| l.bytes())))
            .map(u32::from)
            .sum::<u32>()
            % 3
            == 0;
        let schedule = if apart {
            self.tag("fuse_apart");
            " parac_schedule(fuse = 0)"
        } else {
            ""
        };
        out.push_str(&format!(
            "parac_iterator {name}({}){rules}{schedule} {{\n",
            slot_texts.join("; ")
        ));
        for l in lines {
            out.push_str("    ");
            out.push_str(&l);
            out.push('\n');
        }
        out.push('}');
        out
    }

    fn slot_text(&mut self, s: &Slot, named: bool) -> String {
        let step = if s.step == 1 && self.chance(40) {
            String::new()
        } else {
            format!(":{}", s.step)
        };
        format!(
            "{}{}:{}{step}",
            if named {
                format!("{} in ", s.var)
            } else {
                String::new()
            },
            s.lo,
            s.hi.text()
        )
    }

    /// How an iterator writes dimension `e` (of symbol `s`): its slot, the subscripts it
    /// stores at (several: several stores), and the window length.
    fn write_form(&mut self, e: &X, s: usize, v: &X) -> (Slot, Vec<String>, usize) {
        let var = match v {
            X::Var(_, n) => n.clone(),
            _ => unreachable!(),
        };
        let slot = |lo: i64, hi: X, step: i64| Slot {
            var: var.clone(),
            sym: Some(s),
            chan: false,
            lo,
            hi,
            step,
        };
        match self.n(20) {
            // Every other element.
            12 => {
                self.tag("stride");
                let lo = self.n(2) as i64;
                (slot(lo, e.clone(), 2), vec![var.clone()], 1)
            }
            // The interior.
            13 => {
                self.tag("partial_bounds");
                let (lo, hi) = match self.n(3) {
                    0 => (1, e.clone()),
                    1 => (0, add(e.clone(), -1)),
                    _ => (1, add(e.clone(), -1)),
                };
                (slot(lo, hi, 1), vec![var.clone()], 1)
            }
            // Coarse grid, point stores at 2v and 2v+1.
            14 => {
                self.tag("tile_points");
                let subs = match self.n(3) {
                    0 => vec![format!("{var} * 2"), format!("{var} * 2 + 1")],
                    1 => vec![format!("{var} * 2")],
                    _ => vec![format!("{var} * 2 + 1")],
                };
                (slot(0, bin('/', e.clone(), lit(2)), 1), subs, 1)
            }
            // Coarse grid, a window store.
            15 | 16 => {
                self.tag("tile_window");
                let t = 2 + self.n(3) as i64;
                let tag = self.chance(50);
                let sub = if tag {
                    format!("{var} * {t}:{t}:1")
                } else {
                    format!("{var} * {t}:{t}")
                };
                (
                    slot(0, bin('/', e.clone(), lit(t)), 1),
                    vec![sub],
                    t as usize,
                )
            }
            // Stepped iteration, a window store at the variable.
            17 => {
                self.tag("stepped_window");
                let t = 2 + self.n(3) as i64;
                let hi = bin('*', bin('/', e.clone(), lit(t)), lit(t));
                (slot(0, hi, t), vec![format!("{var}:{t}:1")], t as usize)
            }
            // Bounded by a host scalar.
            18 => {
                self.tag("host_bound");
                let ints: Vec<Host> = self
                    .hosts
                    .iter()
                    .filter(|h| h.ty == Scalar::I32 && !h.reduction)
                    .cloned()
                    .collect();
                let (h, hi) = if !ints.is_empty() && self.chance(60) {
                    let k = self.pick(&ints);
                    let h = self.fresh("h");
                    let text = if self.chance(50) {
                        format!("let {h} = min({}, {});", k.name, e.text())
                    } else {
                        format!("let {h} = clamp({}, 0, {});", k.name, e.text())
                    };
                    (text, X::Host(h, Box::new(e.clone())))
                } else {
                    let h = self.fresh("h");
                    let text = format!("let {h} = {} / 2 + 1;", e.text_p(2));
                    let model = add(bin('/', e.clone(), lit(2)), 1);
                    // (E/2 + 1 <= E only from E >= 2.)
                    let _ = self.raise_extent(e, Some(s), 2);
                    (text, X::Host(h.clone(), Box::new(model)))
                };
                if let X::Host(name, _) = &hi {
                    self.hosts.push(Host {
                        name: name.clone(),
                        ty: Scalar::I32,
                        reduction: false,
                        fresh: false,
                    });
                }
                self.pre.push(h);
                (slot(0, hi, 1), vec![var.clone()], 1)
            }
            // Reversed.
            19 => {
                self.tag("flip_write");
                (
                    slot(0, e.clone(), 1),
                    vec![format!("{} - {var}", add(e.clone(), -1).text_p(1))],
                    1,
                )
            }
            _ => (slot(0, e.clone(), 1), vec![var.clone()], 1),
        }
    }

    /// A new local matrix, declared before the iterator that writes it (or at the start).
    fn new_local(&mut self) -> usize {
        let base = self.base.clone();
        let (dims, axes) = if self.chance(60) {
            base.into_iter().unzip()
        } else {
            let (d, a) = self.variant_shape(&base, false);
            if a.contains(&Axis::Table) {
                base.into_iter().unzip()
            } else {
                (d, a)
            }
        };
        let elem = self.pick(&ELEMS);
        let name = self.fresh("t");
        let m = Mat {
            name: name.clone(),
            elem,
            kind: Kind::Local,
            dims,
            axes,
            written: false,
        };
        self.tag("local");
        let decl = format!("let {name}: {elem}{};", m.dims_text());
        self.note_extents(&m);
        self.mats.push(m);
        if self.chance(30) {
            self.body.insert(0, decl);
        } else {
            self.pre.push(decl);
        }
        self.mats.len() - 1
    }

    // --- kernel bodies ---

    fn kbody(&mut self, kx: &mut Kx, stores: &[Target], lines: &mut Vec<String>, depth: usize) {
        let saved = kx.lets.len();
        let outer = std::mem::replace(&mut kx.depth, depth);
        // A prefix, outside every `if` (`scan.rs`).
        if depth == 0 && self.chance(3) {
            self.prefix_let(kx, lines);
        }
        for _ in 0..self.n(3) {
            let l = self.klet(kx);
            lines.push(l);
        }
        if depth < 2 && self.chance(30) {
            self.kif(kx, stores, lines, depth);
        } else {
            self.kstores(kx, stores, lines);
        }
        kx.depth = outer;
        kx.lets.truncate(saved);
    }

    /// Every store, once (chained where two targets share subscripts), and sometimes a
    /// compound assignment after one.
    fn kstores(&mut self, kx: &mut Kx, stores: &[Target], lines: &mut Vec<String>) {
        let mut i = 0;
        while i < stores.len() {
            let s = &stores[i];
            // Chain with the next store if it has the same subscripts.
            if i + 1 < stores.len()
                && stores[i + 1].subs == s.subs
                && stores[i + 1].mat != s.mat
                && self.chance(40)
            {
                self.tag("chained_store");
                let a = self.lvalue(&stores[i]);
                let b = self.lvalue(&stores[i + 1]);
                // The value converts through the second target's type first.
                let v = self.store_value(kx, &stores[i + 1]);
                if self.mats[stores[i + 1].mat].elem == Scalar::F32
                    && self.mats[stores[i].mat].elem != Scalar::F32
                {
                    // A float stored into an integer: keep it in range.
                    lines.push(format!("{b} = {v};"));
                    let v2 = self.store_value(kx, &stores[i]);
                    lines.push(format!("{a} = {v2};"));
                } else {
                    lines.push(format!("{a} = {b} = {v};"));
                }
                i += 2;
                continue;
            }
            let v = match s.block {
                // A prefix stored (`scan.rs`), outside every `if`.
                None if kx.depth == 0 && self.chance(3) => self
                    .prefix_value(kx, self.mats[s.mat].elem, lines)
                    .unwrap_or_else(|| self.store_value(kx, s)),
                _ => self.store_value(kx, s),
            };
            let lv = self.lvalue(s);
            lines.push(format!("{lv} = {v};"));
            if self.chance(15) {
                self.tag("compound_assign");
                let elem = self.mats[s.mat].elem;
                let op = self.pick(&["+=", "-=", "*=", "/="]);
                let rhs = if s.block.is_some() {
                    // A block target: a scalar operand.
                    if op == "/=" || elem != Scalar::F32 {
                        (1 + self.n(4)).to_string()
                    } else {
                        "0.5".to_string()
                    }
                } else if op == "/=" {
                    if elem == Scalar::F32 {
                        "2.0".to_string()
                    } else {
                        (1 + self.n(4)).to_string()
                    }
                } else {
                    let want = if elem == Scalar::F32 {
                        Want::Num
                    } else {
                        Want::Int
                    };
                    let e = self.kexpr(kx, want, 1);
                    self.fit(e, elem).t
                };
                lines.push(format!("{lv} {op} {rhs};"));
            }
            i += 1;
        }
        // The updates of the matrices reduced into, in some branches.
        self.updates(kx, lines, false);
    }

    fn lvalue(&self, s: &Target) -> String {
        let subs: String = s.subs.iter().map(|x| format!("[{x}]")).collect();
        format!("{}{subs}", self.mats[s.mat].name)
    }

    /// The value stored at a target: a scalar, or a block of its shape.
    fn store_value(&mut self, kx: &mut Kx, s: &Target) -> String {
        let elem = self.mats[s.mat].elem;
        match s.block {
            Some(shape) => {
                let want = if elem == Scalar::F32 {
                    Want::Num
                } else {
                    Want::Int
                };
                self.bexpr(kx, shape, want, 2).t
            }
            None => {
                let want = if elem == Scalar::F32 {
                    Want::Num
                } else if self.chance(15) {
                    Want::Float
                } else {
                    Want::Int
                };
                let e = self.kexpr(kx, want, 3);
                self.fit(e, elem).t
            }
        }
    }

    /// Converts a float going into an integer of type `to` within its range (an out-of-range
    /// conversion is undefined in OpenCL C).
    fn fit(&mut self, e: Ex, to: Scalar) -> Ex {
        if e.ty == Scalar::F32 && to.is_int() {
            self.exact = false;
            self.tag("float_to_int");
            let (lo, hi) = float_range(to);
            Ex::atom(format!("clamp({}, {lo}, {hi})", e.t), Scalar::F32)
        } else {
            e
        }
    }

    fn klet(&mut self, kx: &mut Kx) -> String {
        let name = self.fresh("v");
        match self.n(6) {
            // A block let (a window).
            4 => {
                let shape = self.block_shape();
                let want = if self.chance(70) {
                    Want::Int
                } else {
                    Want::Num
                };
                if let Some(b) = self.window(kx, shape, want) {
                    self.tag("block_let");
                    kx.lets.push(KLet {
                        name: name.clone(),
                        ty: b.elem,
                        block: Some(shape),
                    });
                    return format!("let {name} = {};", b.t);
                }
                let e = self.kexpr(kx, Want::Num, 2);
                kx.lets.push(KLet {
                    name: name.clone(),
                    ty: e.ty,
                    block: None,
                });
                format!("let {name} = {};", e.t)
            }
            // A tuple.
            5 => {
                self.tag("tuple_let");
                let b = self.fresh("v");
                let (x, y) = (self.kexpr(kx, Want::Num, 2), self.kexpr(kx, Want::Num, 2));
                let s = format!("let ({name}, {b}) = ({}, {});", x.t, y.t);
                kx.lets.push(KLet {
                    name,
                    ty: x.ty,
                    block: None,
                });
                kx.lets.push(KLet {
                    name: b,
                    ty: y.ty,
                    block: None,
                });
                s
            }
            // A typed let (converts like a store).
            3 => {
                self.tag("typed_let");
                let t = self.pick(&[
                    Scalar::I16,
                    Scalar::U8,
                    Scalar::I32,
                    Scalar::F32,
                    Scalar::I64,
                    Scalar::U32,
                    Scalar::U64,
                    Scalar::I8,
                    Scalar::U16,
                ]);
                let want = if t == Scalar::F32 {
                    Want::Num
                } else {
                    Want::Int
                };
                let e = self.kexpr(kx, want, 2);
                let e = self.fit(e, t);
                kx.lets.push(KLet {
                    name: name.clone(),
                    ty: t,
                    block: None,
                });
                format!("let {name}: {t} = {};", e.t)
            }
            _ => {
                let e = self.kexpr(kx, Want::Num, 3);
                kx.lets.push(KLet {
                    name: name.clone(),
                    ty: e.ty,
                    block: None,
                });
                format!("let {name} = {};", e.t)
            }
        }
    }

    /// `if`/`else` around the stores: on data, on the index variables, or a guard that lets
    /// the branch read past the edge without a border rule.
    fn kif(&mut self, kx: &mut Kx, stores: &[Target], lines: &mut Vec<String>, depth: usize) {
        self.tag("if");
        // A guard on a slot: `v >= a` or `v < E - a`.
        let planes: Vec<usize> = (0..kx.slots.len())
            .filter(|&i| kx.slots[i].as_ref().is_some_and(|s| !s.chan))
            .collect();
        let guard = if !planes.is_empty() && self.chance(40) {
            let i = self.pick(&planes);
            let s = kx.slots[i].clone().expect("slot");
            let a = 1 + self.n(2) as i64;
            let ext = self.slot_extent(kx, i);
            if self.chance(50) {
                let cond = match self.n(3) {
                    0 if a == 1 => format!("{} != 0", s.var),
                    1 => format!("{} > {}", s.var, a - 1),
                    _ => format!("{} >= {a}", s.var),
                };
                Some((cond, (i, a, None)))
            } else if let Some(e) = ext {
                let cond = match self.n(2) {
                    0 => format!("{} < {}", s.var, add(e.clone(), -a).text()),
                    _ => format!("{} + {a} < {}", s.var, e.text_p(1)),
                };
                Some((cond, (i, i64::MIN, Some(add(e, -a)))))
            } else {
                None
            }
        } else {
            None
        };
        let cond = match &guard {
            Some((c, g)) => {
                self.tag("guarded_read");
                kx.guards.push(g.clone());
                c.clone()
            }
            None => {
                let w = if self.chance(70) {
                    Want::Bool
                } else {
                    Want::Int
                };
                self.kexpr(kx, w, 2).t
            }
        };
        let mut then = Vec::new();
        self.kbody(kx, stores, &mut then, depth + 1);
        if guard.is_some() {
            kx.guards.pop();
        }
        lines.push(format!("if {cond} {{"));
        for l in then {
            lines.push(format!("    {l}"));
        }
        match self.n(3) {
            0 => lines.push("}".into()),
            1 if guard.is_none() => {
                self.tag("else_if");
                let c2 = self.kexpr(kx, Want::Bool, 2).t;
                let mut b = Vec::new();
                self.kbody(kx, stores, &mut b, depth + 1);
                lines.push(format!("}} else if {c2} {{"));
                for l in b {
                    lines.push(format!("    {l}"));
                }
                let mut e = Vec::new();
                self.kbody(kx, stores, &mut e, depth + 1);
                lines.push("} else {".into());
                for l in e {
                    lines.push(format!("    {l}"));
                }
                lines.push("}".into());
            }
            _ => {
                self.tag("else");
                let mut e = Vec::new();
                self.kbody(kx, stores, &mut e, depth + 1);
                lines.push("} else {".into());
                for l in e {
                    lines.push(format!("    {l}"));
                }
                lines.push("}".into());
            }
        }
    }

    /// The extent of the dimension a slot runs over, if the slot runs over all of it (for
    /// upper guards).
    fn slot_extent(&self, kx: &Kx, i: usize) -> Option<X> {
        let s = kx.slots[i].as_ref()?;
        Some(match &s.hi {
            X::Host(_, m) => (**m).clone(),
            h => h.clone(),
        })
    }

    // --- expressions ---

    fn kexpr(&mut self, kx: &mut Kx, want: Want, depth: usize) -> Ex {
        let want = match want {
            Want::Num => {
                if self.chance(35) {
                    Want::Float
                } else {
                    Want::Int
                }
            }
            w => w,
        };
        if want == Want::Bool {
            return self.kbool(kx, depth);
        }
        if depth == 0 || self.n(3) == 0 {
            return self.kleaf(kx, want, depth);
        }
        if want == Want::Float {
            self.kfloat(kx, depth)
        } else {
            self.kint(kx, depth)
        }
    }

    fn kbool(&mut self, kx: &mut Kx, depth: usize) -> Ex {
        if depth > 0 {
            match self.n(8) {
                5 => {
                    let a = self.kbool(kx, depth - 1);
                    return Ex::new(format!("!{}", a.p()), Scalar::Bool);
                }
                6 => {
                    let op = self.pick(&["&&", "||"]);
                    let a = self.kbool(kx, depth - 1);
                    kx.short += 1;
                    let b = self.kbool(kx, depth - 1);
                    kx.short -= 1;
                    return Ex::new(format!("{} {op} {}", a.p(), b.p()), Scalar::Bool);
                }
                7 => {
                    let bs: Vec<Host> = self
                        .hosts
                        .iter()
                        .filter(|h| h.ty == Scalar::Bool)
                        .cloned()
                        .collect();
                    if !bs.is_empty() {
                        let h = self.pick(&bs);
                        return Ex::atom(h.name, Scalar::Bool);
                    }
                }
                _ => {}
            }
        }
        let w = if self.chance(25) {
            Want::Float
        } else {
            Want::Int
        };
        if w == Want::Float {
            self.exact = false;
        }
        let (a, b) = (
            self.kexpr(kx, w, depth.saturating_sub(1)),
            self.kexpr(kx, w, depth.saturating_sub(1)),
        );
        let op = self.pick(&["<", ">", "<=", ">=", "==", "!="]);
        Ex::new(format!("{} {op} {}", a.p(), b.p()), Scalar::Bool)
    }

    fn int_lit(&mut self) -> Ex {
        match self.n(12) {
            9 => {
                self.tag("suffixed_literal");
                let (v, t) = self.pick(&[
                    ("3u8", Scalar::U8),
                    ("200u8", Scalar::U8),
                    ("7u16", Scalar::U16),
                    ("4000000000u32", Scalar::U32),
                    ("3000000000i64", Scalar::I64),
                    ("5u64", Scalar::U64),
                    ("2i8", Scalar::I8),
                    ("1000i16", Scalar::I16),
                    ("17u32", Scalar::U32),
                ]);
                Ex::atom(v, t)
            }
            10 => Ex::atom("3000000000", Scalar::I64),
            11 => Ex::atom((100 + self.n(1000)).to_string(), Scalar::I32),
            k => Ex::atom(k.to_string(), Scalar::I32),
        }
    }

    fn float_lit(&mut self) -> Ex {
        let v = self.pick(&[
            "0.5", "2.0", "1.5", "0.25", "3.0", "1.0", "0.125", "10.0", "2.5f32",
        ]);
        Ex::atom(v, Scalar::F32)
    }

    /// A leaf: an element, a window reduction, a convolution, a lookup, an index variable, a
    /// size, a host scalar, a kernel `let`, a constant element, a literal.
    fn kleaf(&mut self, kx: &mut Kx, want: Want, depth: usize) -> Ex {
        let float = want == Want::Float;
        // Host `let`s and global results feed the regions after them.
        if let Some(i) = self
            .hosts
            .iter()
            .position(|h| h.fresh && (h.ty == Scalar::F32) == float && h.ty != Scalar::Bool)
            && self.chance(60)
        {
            self.hosts[i].fresh = false;
            let h = self.hosts[i].clone();
            self.tag(if h.reduction {
                "global_in_kernel"
            } else {
                "host_in_kernel"
            });
            return Ex::atom(h.name, h.ty);
        }
        for _ in 0..3 {
            match self.n(14) {
                0..=3 => {
                    if let Some(e) = self.element(kx, want, depth) {
                        return e;
                    }
                }
                4 | 5 => {
                    if let Some(e) = self.window_op(kx, want) {
                        return e;
                    }
                }
                6 if !float => {
                    let vars: Vec<String> =
                        kx.slots.iter().flatten().map(|s| s.var.clone()).collect();
                    if !vars.is_empty() {
                        return Ex::atom(self.pick(&vars), Scalar::I32);
                    }
                }
                7 => {
                    let hs: Vec<Host> = self
                        .hosts
                        .iter()
                        .filter(|h| (h.ty == Scalar::F32) == float && h.ty != Scalar::Bool)
                        .cloned()
                        .collect();
                    if !hs.is_empty() {
                        let h = self.pick(&hs);
                        if h.reduction {
                            self.tag("global_in_kernel");
                        } else {
                            self.tag("host_in_kernel");
                        }
                        return Ex::atom(h.name, h.ty);
                    }
                }
                8 => {
                    let ls: Vec<KLet> = kx
                        .lets
                        .iter()
                        .filter(|l| {
                            l.block.is_none()
                                && (l.ty == Scalar::F32) == float
                                && l.ty != Scalar::Bool
                        })
                        .cloned()
                        .collect();
                    if !ls.is_empty() {
                        let l = self.pick(&ls);
                        return Ex::atom(l.name, l.ty);
                    }
                }
                9 => {
                    if let Some(e) = self.lookup(kx, depth) {
                        if float {
                            return Ex::new(format!("{} as f32", e.p()), Scalar::F32);
                        }
                        return e;
                    }
                }
                10 => {
                    if let Some(e) = self.const_element(kx, want) {
                        return e;
                    }
                }
                11 if !float => {
                    let s: Vec<usize> = self.used_syms.iter().copied().collect();
                    let s = self.pick(&s);
                    return Ex::atom(SYMS[s], Scalar::I32);
                }
                _ => {}
            }
        }
        if float {
            self.float_lit()
        } else {
            self.int_lit()
        }
    }

    fn kint(&mut self, kx: &mut Kx, depth: usize) -> Ex {
        let d = depth - 1;
        match self.n(16) {
            0..=3 => {
                let op = self.pick(&["+", "-", "*", "+", "-"]);
                let (a, b) = (self.kexpr(kx, Want::Int, d), self.kexpr(kx, Want::Int, d));
                Ex::new(
                    format!("{} {op} {}", a.p(), b.p()),
                    Scalar::arith(a.ty, b.ty),
                )
            }
            4 => {
                // Division and remainder: by a positive constant, by a value made non-zero, or
                // (rarely) by anything.
                let op = self.pick(&["/", "%"]);
                let a = self.kexpr(kx, Want::Int, d);
                let (b, ty) = match self.n(8) {
                    0..=4 => ((1 + self.n(9)).to_string(), Scalar::I32),
                    5 | 6 => {
                        let b = self.kexpr(kx, Want::Int, d.min(1));
                        (format!("(({}) & 7) + 1", b.t), b.ty.promote())
                    }
                    _ => {
                        self.tag("division_by_data");
                        let b = self.kexpr(kx, Want::Int, d.min(1));
                        (b.p(), b.ty)
                    }
                };
                let b = if b.chars().all(|c| c.is_ascii_digit()) {
                    b
                } else {
                    format!("({b})")
                };
                Ex::new(format!("{} {op} {b}", a.p()), Scalar::arith(a.ty, ty))
            }
            5 => {
                let op = self.pick(&["&", "|", "^"]);
                let (a, b) = (self.kexpr(kx, Want::Int, d), self.kexpr(kx, Want::Int, d));
                Ex::new(
                    format!("{} {op} {}", a.p(), b.p()),
                    Scalar::arith(a.ty, b.ty),
                )
            }
            6 => {
                self.tag("shift");
                let op = self.pick(&["<<", ">>"]);
                let a = self.kexpr(kx, Want::Int, d);
                let k = if self.chance(70) {
                    self.n(8).to_string()
                } else {
                    let b = self.kexpr(kx, Want::Int, 0);
                    format!("({} & 7)", b.p())
                };
                Ex::new(format!("{} {op} {k}", a.p()), a.ty.promote())
            }
            7 => {
                let a = self.kexpr(kx, Want::Int, d);
                let op = self.pick(&["-", "!"]);
                Ex::new(format!("{op}{}", a.p()), a.ty.promote())
            }
            8 => {
                let (a, b) = (self.kexpr(kx, Want::Int, d), self.kexpr(kx, Want::Int, d));
                let f = self.pick(&["min", "max"]);
                Ex::atom(format!("{f}({}, {})", a.t, b.t), Scalar::arith(a.ty, b.ty))
            }
            9 => {
                let a = self.kexpr(kx, Want::Int, d);
                let unsigned = matches!(a.ty.promote(), Scalar::U32 | Scalar::U64);
                if self.chance(50) && !(unsigned && avoiding("abs_unsigned")) {
                    if unsigned {
                        self.tag("abs_unsigned");
                    }
                    Ex::atom(format!("abs({})", a.t), a.ty.promote())
                } else {
                    let lo = self.n(20) as i64 - 10;
                    let hi = lo + 1 + self.n(300) as i64;
                    Ex::atom(format!("clamp({}, {lo}, {hi})", a.t), a.ty.promote())
                }
            }
            10 => {
                self.tag("cast");
                let a = self.kexpr(kx, Want::Int, d);
                let t = self.pick(&INTS);
                Ex::new(format!("{} as {t}", a.p()), t)
            }
            11 => {
                let b = self.kbool(kx, d);
                Ex::new(format!("{} as i32", b.p()), Scalar::I32)
            }
            12 => {
                // A float made integer.
                let a = self.kexpr(kx, Want::Float, d);
                let t = self.pick(&[
                    Scalar::I32,
                    Scalar::U8,
                    Scalar::I16,
                    Scalar::U32,
                    Scalar::I64,
                ]);
                let f = self.fit(a, t);
                Ex::new(format!("{} as {t}", f.p()), t)
            }
            _ => self.kleaf(kx, Want::Int, d),
        }
    }

    fn kfloat(&mut self, kx: &mut Kx, depth: usize) -> Ex {
        let d = depth - 1;
        match self.n(14) {
            0..=3 => {
                let op = self.pick(&["+", "-", "*"]);
                let (a, b) = (
                    self.kexpr(kx, Want::Float, d),
                    self.kexpr(kx, Want::Float, d),
                );
                Ex::new(format!("{} {op} {}", a.p(), b.p()), Scalar::F32)
            }
            4 => {
                let (a, b) = (
                    self.kexpr(kx, Want::Float, d),
                    self.kexpr(kx, Want::Float, d),
                );
                Ex::new(format!("{} / (abs({}) + 1.0)", a.p(), b.t), Scalar::F32)
            }
            5 => {
                let a = self.kexpr(kx, Want::Float, d);
                Ex::new(format!("-{}", a.p()), Scalar::F32)
            }
            6 => {
                let a = self.kexpr(kx, Want::Float, d);
                let f = self.pick(&["sqrt", "exp", "floor", "ceil", "round", "abs"]);
                self.tag("float_builtin");
                let t = match f {
                    "sqrt" => format!("sqrt(abs({}))", a.t),
                    "exp" => format!("exp(clamp({}, -8.0, 8.0))", a.t),
                    _ => format!("{f}({})", a.t),
                };
                Ex::atom(t, Scalar::F32)
            }
            7 => {
                let (a, b) = (
                    self.kexpr(kx, Want::Float, d),
                    self.kexpr(kx, Want::Float, d),
                );
                let f = self.pick(&["min", "max"]);
                Ex::atom(format!("{f}({}, {})", a.t, b.t), Scalar::F32)
            }
            8 => {
                let a = self.kexpr(kx, Want::Float, d);
                Ex::atom(format!("clamp({}, -100.0, 100.0)", a.t), Scalar::F32)
            }
            9 | 10 => {
                let a = self.kexpr(kx, Want::Int, d);
                Ex::new(format!("{} as f32", a.p()), Scalar::F32)
            }
            11 => {
                // Mixed: an integer operand promotes to float.
                let (a, b) = (self.kexpr(kx, Want::Float, d), self.kexpr(kx, Want::Int, d));
                let op = self.pick(&["+", "*", "-"]);
                Ex::new(format!("{} {op} {}", a.p(), b.p()), Scalar::F32)
            }
            _ => self.kleaf(kx, Want::Float, d),
        }
    }

    /// A readable matrix whose element type suits `want` (any when `want` is `Num`).
    fn pick_readable(&mut self, kx: &Kx, want: Want, skip_tables: bool) -> Option<usize> {
        let rs: Vec<usize> = self
            .readable(kx)
            .into_iter()
            .filter(|&i| {
                let m = &self.mats[i];
                let ok = match want {
                    Want::Float => m.elem == Scalar::F32,
                    Want::Int => m.elem != Scalar::F32,
                    _ => true,
                };
                ok && !(skip_tables && m.axes.contains(&Axis::Table))
            })
            .collect();
        if rs.is_empty() {
            return None;
        }
        // Prefer what earlier iterators wrote (pipelines feed each other).
        let locals: Vec<usize> = rs
            .iter()
            .copied()
            .filter(|&i| self.mats[i].kind != Kind::In)
            .collect();
        if !locals.is_empty() && self.chance(40) {
            return Some(self.pick(&locals));
        }
        Some(self.pick(&rs))
    }

    /// An element of a readable matrix.
    fn element(&mut self, kx: &mut Kx, want: Want, depth: usize) -> Option<Ex> {
        let m = match self.pick_readable(kx, want, true) {
            Some(m) => m,
            None => {
                // Another type, converted.
                let m = self.pick_readable(kx, Want::Num, true)?;
                let e = self.access(kx, m, None, depth)?;
                let ty = self.mats[m].elem;
                let e = Ex::atom(e, ty);
                return Some(if want == Want::Float {
                    Ex::new(format!("{} as f32", e.p()), Scalar::F32)
                } else {
                    let f = self.fit(e, Scalar::I32);
                    Ex::new(format!("{} as i32", f.p()), Scalar::I32)
                });
            }
        };
        let t = self.access(kx, m, None, depth)?;
        Some(Ex::atom(t, self.mats[m].elem))
    }

    /// A lookup: a table indexed by data (in range, or sometimes not, on purpose).
    fn lookup(&mut self, kx: &mut Kx, depth: usize) -> Option<Ex> {
        let tables: Vec<usize> = self
            .readable(kx)
            .into_iter()
            .filter(|&i| self.mats[i].axes == [Axis::Table])
            .collect();
        if tables.is_empty() || depth > 2 {
            // A constant table indexed by data, masked into range.
            let m = self.pick_readable(kx, Want::Int, true)?;
            let idx = self.nested_access(kx, m, depth + 1)?;
            let len = 2 + self.n(7);
            let t = self.pick(&[Scalar::I16, Scalar::U8, Scalar::I32, Scalar::F32]);
            let name = self.const_matrix(&[len], t);
            self.tag("lookup_const");
            // The largest power of two not above `len`, minus one: always inside.
            let mask = (1usize << (usize::BITS - 1 - len.leading_zeros())) - 1;
            return Some(if t == Scalar::F32 {
                let e = Ex::atom(format!("{name}[{idx} & {mask}]"), t);
                let f = self.fit(e, Scalar::I32);
                Ex::new(format!("{} as i32", f.p()), Scalar::I32)
            } else {
                Ex::atom(format!("{name}[{idx} & {mask}]"), t)
            });
        }
        let tb = self.pick(&tables);
        let t = self.index_data(kx, &self.mats[tb].dims[0].clone(), 1, depth)?;
        let elem = self.mats[tb].elem;
        self.tag("lookup");
        let e = Ex::atom(format!("{}[{}]", self.mats[tb].name, t.text()), elem);
        Some(if elem == Scalar::F32 {
            let f = self.fit(e, Scalar::I32);
            Ex::new(format!("{} as i32", f.p()), Scalar::I32)
        } else {
            e
        })
    }

    /// A data-dependent subscript into a dimension of extent `e` for a window of `len`:
    /// clamped into range, or (sometimes) raw.
    fn index_data(&mut self, kx: &mut Kx, e: &X, len: usize, depth: usize) -> Option<X> {
        if depth > 2 {
            return None;
        }
        let m = self.pick_readable(kx, Want::Int, true)?;
        let d = self.nested_access(kx, m, depth + 1)?;
        let elem = self.mats[m].elem;
        let hi = add(e.clone(), -(len as i64));
        Some(match self.n(10) {
            0 | 1 => {
                // Raw: may leave the matrix (an error at run time, on purpose).
                self.tag("lookup_raw");
                X::Data(d)
            }
            2 if elem != Scalar::I32
                && elem != Scalar::U32
                && matches!(e, X::Lit(256))
                && len == 1 =>
            {
                X::Data(format!("{d} & 255"))
            }
            // `min` alone bounds an unsigned read only inside the matrix: a border value is
            // not converted to the element type (`a[+1] = a[1] * 2 - a[3]` may be negative).
            3 if (!elem.is_int() || elem == Scalar::U8 || elem == Scalar::U16) && !kx.last_out => {
                X::Min(Box::new(X::Data(d)), Box::new(hi))
            }
            _ => X::Clamp(Box::new(X::Data(d)), Box::new(lit(0)), Box::new(hi)),
        })
    }

    fn const_element(&mut self, _kx: &mut Kx, want: Want) -> Option<Ex> {
        let t = if want == Want::Float {
            Scalar::F32
        } else {
            self.pick(&[Scalar::I8, Scalar::U8, Scalar::I32, Scalar::I16])
        };
        let shape = self.block_shape();
        let name = self.const_matrix(&[shape.0, shape.1], t);
        let (i, j) = (self.n(shape.0), self.n(shape.1));
        self.tag("const_element");
        Some(Ex::atom(format!("{name}[{i}][{j}]"), t))
    }

    /// A constant matrix of this shape and type (a new one, or one declared before).
    fn const_matrix(&mut self, shape: &[usize], t: Scalar) -> String {
        let dims: Vec<X> = shape.iter().map(|&d| lit(d as i64)).collect();
        if let Some(m) = self.mats.iter().find(|m| {
            m.kind == Kind::Const
                && m.elem == t
                && m.dims.len() == dims.len()
                && m.dims.iter().zip(&dims).all(|(a, b)| a.text() == b.text())
        }) {
            let name = m.name.clone();
            if self.chance(50) {
                return name;
            }
        }
        let name = self.fresh("F");
        let total: usize = shape.iter().product();
        let mut vals = Vec::new();
        for _ in 0..total {
            vals.push(match t {
                Scalar::F32 => self
                    .pick(&[
                        "0.25",
                        "0.5",
                        "1.0",
                        "-1.0",
                        "2.0",
                        "0.125",
                        "1.0 / 3.0",
                        "-0.75",
                        "sqrt(2.0)",
                        "3.0",
                    ])
                    .to_string(),
                Scalar::U8 | Scalar::U16 | Scalar::U32 => self.n(9).to_string(),
                _ => (self.n(11) as i64 - 5).to_string(),
            });
        }
        let init = if shape.len() == 2 && !self.chance(15) {
            let rows: Vec<String> = vals
                .chunks(shape[1])
                .map(|r| format!("[{}]", r.join(", ")))
                .collect();
            format!("[{}]", rows.join(", "))
        } else {
            if shape.len() == 2 {
                self.tag("const_flat_list");
            }
            format!("[{}]", vals.join(", "))
        };
        let dims_t: String = shape.iter().map(|d| format!("[{d}]")).collect();
        let decl = format!("const {name}: {t}{dims_t} = {init};");
        self.tag("const_matrix");
        if self.chance(30) {
            self.pre.push(decl);
        } else {
            self.consts.push(decl);
        }
        self.mats.push(Mat {
            name: name.clone(),
            elem: t,
            kind: Kind::Const,
            dims,
            axes: vec![Axis::Fixed; shape.len()],
            written: true,
        });
        name
    }

    /// A block shape (rows, columns): any small shape, a row in 1-D programs; now and then one
    /// past `lir::UNROLL_TAPS` (64 taps), whose reductions are loops; the longest windows (63),
    /// which `lir::pass::slide` computes per row on the CPU path.
    fn block_shape(&mut self) -> (usize, usize) {
        if self.rank == 1 {
            return (1, self.pick(&[3, 2, 5, 1, 4, 7]));
        }
        self.pick(&[
            (3, 3),
            (1, 3),
            (3, 1),
            (2, 2),
            (1, 5),
            (5, 1),
            (5, 5),
            (1, 2),
            (2, 1),
            (3, 5),
            (1, 1),
            (4, 4),
            (2, 3),
            (7, 1),
            (9, 9),
            (5, 13),
            (3, 63),
            (63, 2),
        ])
    }

    /// A window reduction or a convolution.
    fn window_op(&mut self, kx: &mut Kx, want: Want) -> Option<Ex> {
        let shape = self.block_shape();
        let float = want == Want::Float;
        // The window: a block let of that shape, or a new window.
        let lets: Vec<KLet> = kx
            .lets
            .iter()
            .filter(|l| l.block == Some(shape) && ((l.ty == Scalar::F32) == float || !float))
            .cloned()
            .collect();
        let op = self.n(6);
        let (w, elem) = if !lets.is_empty() && self.chance(60) {
            let l = self.pick(&lets);
            self.tag("block_let_use");
            (l.name, l.ty)
        } else {
            // A reduction's window, now and then of host length.
            kx.host_len = op >= 2 && kx.short == 0 && self.chance(15);
            let b = self.window(kx, shape, if float { Want::Num } else { Want::Int });
            if kx.host_len && b.is_some() {
                self.tag("host_length_window");
            }
            kx.host_len = false;
            let b = b?;
            (b.t, b.elem)
        };
        match op {
            0 | 1 => {
                // A convolution with a constant filter (1-D or 2-D).
                let ft = if float || elem == Scalar::F32 {
                    self.pick(&[Scalar::F32, Scalar::I8, Scalar::U8])
                } else {
                    self.pick(&[
                        Scalar::I8,
                        Scalar::U8,
                        Scalar::I32,
                        Scalar::I16,
                        Scalar::U16,
                    ])
                };
                let fshape: Vec<usize> = if shape.0 == 1 && self.chance(40) {
                    self.tag("filter_1d");
                    vec![shape.1]
                } else {
                    vec![shape.0, shape.1]
                };
                let fname = self.const_matrix(&fshape, ft);
                self.tag("convolution");
                let ty = Scalar::arith(ft, elem);
                let e = Ex::atom(format!("parac_convolution({fname}, {w})"), ty);
                Some(self.want_ty(e, want))
            }
            k => {
                let op = ["sum", "min", "max", "mean", "sum"][k - 2];
                self.tags.insert(match op {
                    "sum" => "window_sum",
                    "min" => "window_min",
                    "max" => "window_max",
                    _ => "window_mean",
                });
                let ty = if elem == Scalar::F32 {
                    Scalar::F32
                } else if op == "min" || op == "max" {
                    elem.promote()
                } else {
                    Scalar::I32
                };
                let e = Ex::atom(format!("parac_matrix_{op}({w})"), ty);
                Some(self.want_ty(e, want))
            }
        }
    }

    /// Converts `e` to the class `want` asks for.
    fn want_ty(&mut self, e: Ex, want: Want) -> Ex {
        match want {
            Want::Float if e.ty != Scalar::F32 => Ex::new(format!("{} as f32", e.p()), Scalar::F32),
            Want::Int if e.ty == Scalar::F32 => {
                let f = self.fit(e, Scalar::I32);
                Ex::new(format!("{} as i32", f.p()), Scalar::I32)
            }
            _ => e,
        }
    }

    /// A window of a readable matrix with this block shape.
    fn window(&mut self, kx: &mut Kx, shape: (usize, usize), want: Want) -> Option<Bx> {
        for _ in 0..3 {
            let m = self.pick_readable(kx, want, true)?;
            let nd = self.mats[m].dims.len();
            if nd == 1 && shape.0 != 1 {
                continue;
            }
            if let Some(t) = self.access(kx, m, Some(shape), 0) {
                self.tag("window");
                return Some(Bx {
                    t,
                    elem: self.mats[m].elem,
                    atom: true,
                });
            }
        }
        None
    }

    /// A block value of this shape: a window, a constant, a block `let`, and operators on them
    /// (scalar multiples, elementwise sums and products, transposes, matrix products).
    fn bexpr(&mut self, kx: &mut Kx, shape: (usize, usize), want: Want, depth: usize) -> Bx {
        let (r, c) = shape;
        if depth > 0 {
            match self.n(10) {
                0 => {
                    let b = self.bexpr(kx, shape, want, depth - 1);
                    let s = self.kexpr(
                        kx,
                        if want == Want::Int {
                            Want::Int
                        } else {
                            Want::Num
                        },
                        1,
                    );
                    self.tag("block_scalar_op");
                    let ty = Scalar::arith(b.elem, s.ty);
                    let t = match self.n(5) {
                        0 => format!("{} * {}", s.p(), b.p()),
                        1 => format!("{} * {}", b.p(), s.p()),
                        2 => format!("{} + {}", b.p(), s.p()),
                        3 => format!("{} - {}", b.p(), s.p()),
                        _ => {
                            let k = if ty == Scalar::F32 {
                                "2.0".to_string()
                            } else {
                                (1 + self.n(4)).to_string()
                            };
                            return Bx {
                                t: format!("{} / {k}", b.p()),
                                elem: ty,
                                atom: false,
                            };
                        }
                    };
                    return Bx {
                        t,
                        elem: ty,
                        atom: false,
                    };
                }
                1 | 2 => {
                    let a = self.bexpr(kx, shape, want, depth - 1);
                    let b = self.bexpr(kx, shape, want, depth - 1);
                    let op = self.pick(&["+", "-", ".*"]);
                    self.tag("block_elementwise");
                    return Bx {
                        t: format!("{} {op} {}", a.p(), b.p()),
                        elem: Scalar::arith(a.elem, b.elem),
                        atom: false,
                    };
                }
                3 => {
                    let a = self.bexpr(kx, (c, r), want, depth - 1);
                    self.tag("transe");
                    return Bx {
                        t: format!("transe({})", a.t),
                        elem: a.elem,
                        atom: true,
                    };
                }
                4 => {
                    let k = 1 + self.n(3);
                    let a = self.bexpr(kx, (r, k), want, depth - 1);
                    let b = self.bexpr(kx, (k, c), want, depth - 1);
                    self.tag("matrix_product");
                    return Bx {
                        t: format!("{} * {}", a.p(), b.p()),
                        elem: Scalar::arith(a.elem, b.elem),
                        atom: false,
                    };
                }
                _ => {}
            }
        }
        match self.n(4) {
            0 | 1 => {
                if let Some(b) = self.window(kx, shape, want) {
                    return b;
                }
            }
            2 => {
                let lets: Vec<KLet> = kx
                    .lets
                    .iter()
                    .filter(|l| {
                        l.block == Some(shape) && (want != Want::Int || l.ty != Scalar::F32)
                    })
                    .cloned()
                    .collect();
                if !lets.is_empty() {
                    let l = self.pick(&lets);
                    self.tag("block_let_use");
                    return Bx {
                        t: l.name,
                        elem: l.ty,
                        atom: true,
                    };
                }
            }
            _ => {}
        }
        let t = if want == Want::Int {
            self.pick(&[Scalar::I32, Scalar::U8, Scalar::I8, Scalar::I16])
        } else {
            self.pick(&[Scalar::F32, Scalar::I32, Scalar::U8])
        };
        let name = self.const_matrix(&[r, c], t);
        self.tag("const_block");
        Bx {
            t: name,
            elem: t,
            atom: true,
        }
    }

    // --- accesses ---

    /// The subscripts of a read of matrix `m` (a point, or a window of `block` shape), with
    /// the border widths it needs recorded in `kx`; `None` if no valid form was found.
    fn access(
        &mut self,
        kx: &mut Kx,
        m: usize,
        block: Option<(usize, usize)>,
        depth: usize,
    ) -> Option<String> {
        let mat = self.mats[m].clone();
        let nd = mat.dims.len();
        let lens: Vec<usize> = match (block, nd) {
            (None, _) => vec![1; nd],
            (Some((1, c)), 1) => vec![c],
            (Some(_), 1) => return None,
            (Some((r, c)), 2) => vec![r, c],
            (Some((r, c)), _) => vec![1, r, c],
        };
        if lens
            .iter()
            .zip(&mat.axes)
            .any(|(&l, a)| l > 1 && !matches!(a, Axis::Plane(_)))
        {
            return None;
        }
        for attempt in 0..5 {
            let safe = attempt >= 3;
            let mut subs = Vec::new();
            let mut reach = Vec::new();
            let mut ok = true;
            // A 1x1 block is a window, not a point: the last dimension says `:1`.
            let all_one = block.is_some() && lens.iter().all(|&l| l == 1);
            for d in 0..nd {
                let force = all_one && d + 1 == nd;
                let Some((text, rch)) = self.subscript(kx, &mat, d, lens[d], force, safe, depth)
                else {
                    ok = false;
                    break;
                };
                subs.push(text);
                reach.push(rch);
            }
            if !ok {
                continue;
            }
            let out = reach.iter().any(|&(a, b)| a > 0 || b > 0);
            if out {
                let can = matches!(mat.kind, Kind::In | Kind::Local) && !kx.no_border.contains(&m);
                if !can {
                    continue;
                }
                if !kx.need.contains_key(&m) && self.chance(10) {
                    // This iterator reads the matrix inside only.
                    kx.no_border.insert(m);
                    continue;
                }
                let e = kx.need.entry(m).or_insert_with(|| vec![(0, 0); nd]);
                for (w, r) in e.iter_mut().zip(&reach) {
                    w.0 = w.0.max(r.0);
                    w.1 = w.1.max(r.1);
                }
                self.tag("bordered_read");
            }
            kx.last_out = out;
            let s: String = subs.iter().map(|s| format!("[{s}]")).collect();
            return Some(format!("{}{s}", mat.name));
        }
        None
    }

    /// A read inside another access's subscript (a lookup's index).
    fn nested_access(&mut self, kx: &mut Kx, m: usize, depth: usize) -> Option<String> {
        if !kx.guards.is_empty() {
            self.tag("guarded_nested_read");
        }
        if avoiding("guarded_nested_read") {
            let saved = std::mem::take(&mut kx.guards);
            let r = self.access(kx, m, None, depth);
            kx.guards = saved;
            return r;
        }
        self.access(kx, m, None, depth)
    }

    /// One subscript of a read, with its reach outside the dimension: (before, after).
    fn subscript(
        &mut self,
        kx: &mut Kx,
        m: &Mat,
        d: usize,
        len: usize,
        force_window: bool,
        safe: bool,
        depth: usize,
    ) -> Option<(String, (u32, u32))> {
        let e = m.dims[d].clone();
        match m.axes[d] {
            Axis::Chan => {
                let slot = kx
                    .slots
                    .iter()
                    .flatten()
                    .find(|s| s.chan && s.hi.text() == e.text())
                    .map(|s| s.var.clone());
                match slot {
                    Some(v) if !self.chance(15) => Some((v, (0, 0))),
                    _ => {
                        let k = self.n(3) as i64;
                        if let X::Sym(s) = e {
                            self.raise_min(s, k + 1);
                        }
                        self.tag("const_channel");
                        Some((k.to_string(), (0, 0)))
                    }
                }
            }
            Axis::Table => {
                let x = self.index_data(kx, &e, 1, depth)?;
                Some((x.text(), (0, 0)))
            }
            Axis::Fixed => {
                let X::Lit(n) = e else { return None };
                let k = self.n((n as usize + 1).saturating_sub(len).max(1));
                if len > 1 || force_window {
                    return Some((format!("{k}:{len}:1"), (0, 0)));
                }
                Some((k.to_string(), (0, 0)))
            }
            Axis::Plane(s) => {
                let slot = kx
                    .slots
                    .iter()
                    .enumerate()
                    .find(|(_, sl)| sl.as_ref().is_some_and(|sl| sl.sym == Some(s) && !sl.chan))
                    .map(|(i, sl)| (i, sl.clone().expect("slot")));
                let stride = if len > 1 && self.chance(12) {
                    self.tag("window_stride");
                    2
                } else {
                    1
                };
                let span = ((len - 1) * stride + 1) as i64;
                let start: X = match slot {
                    None => {
                        // No slot runs along this dimension: a fixed row, data, or a host value.
                        match self.n(6) {
                            0..=3 => {
                                let k = self.n(3) as i64;
                                self.tag("fixed_index");
                                if !self.raise_extent(&e, Some(s), k + span) {
                                    return None;
                                }
                                if self.chance(30) {
                                    // From the end.
                                    add(e.clone(), -(k + span))
                                } else {
                                    lit(k)
                                }
                            }
                            4 => {
                                self.tag("gather_data");
                                if !self.raise_extent(&e, Some(s), span) {
                                    return None;
                                }
                                let hi = add(e.clone(), -span);
                                match self.index_data(kx, &e, 1, depth) {
                                    Some(X::Data(t)) => X::Clamp(
                                        Box::new(X::Data(t)),
                                        Box::new(lit(0)),
                                        Box::new(hi),
                                    ),
                                    Some(x) => {
                                        X::Clamp(Box::new(x), Box::new(lit(0)), Box::new(hi))
                                    }
                                    None => lit(0),
                                }
                            }
                            _ => {
                                let ints: Vec<Host> = self
                                    .hosts
                                    .iter()
                                    .filter(|h| h.ty == Scalar::I32)
                                    .cloned()
                                    .collect();
                                if !self.raise_extent(&e, Some(s), span) {
                                    return None;
                                }
                                if ints.is_empty() {
                                    lit(0)
                                } else {
                                    self.tag("gather_host");
                                    let h = self.pick(&ints);
                                    X::Clamp(
                                        Box::new(X::Data(h.name)),
                                        Box::new(lit(0)),
                                        Box::new(add(e.clone(), -span)),
                                    )
                                }
                            }
                        }
                    }
                    Some((i, sl)) => {
                        let v = X::Var(i, sl.var.clone());
                        let ratio = self.ratio(&e, &sl);
                        let (mul, div) = if ratio >= 1.5 {
                            (ratio.round() as i64, 1)
                        } else if ratio >= 0.8 {
                            (1, 1)
                        } else if ratio >= 0.4 {
                            (1, 2)
                        } else {
                            (1, 4)
                        };
                        let base = if div > 1 {
                            self.tag("gather_div");
                            bin('/', v.clone(), lit(div))
                        } else {
                            bin('*', v.clone(), lit(mul))
                        };
                        // Offsets: centred windows, causal ones, or the guard's offset.
                        let guard = kx.guards.iter().rev().find(|g| g.0 == i).cloned();
                        let off: i64 = if let Some(g) = &guard {
                            if g.2.is_none() {
                                -g.1
                            } else {
                                1 + self.n(2) as i64 - 1
                            }
                        } else {
                            match self.n(8) {
                                0..=2 => 0,
                                3 => -(span - 1) / 2,
                                4 => -(span - 1),
                                5 => 1,
                                6 => -1,
                                _ => self.n(5) as i64 - 2,
                            }
                        };
                        if safe {
                            self.tag("gather_clamp");
                            if !self.raise_extent(&e, Some(s), span) {
                                return None;
                            }
                            X::Clamp(
                                Box::new(add(base, off)),
                                Box::new(lit(0)),
                                Box::new(add(e.clone(), -span)),
                            )
                        } else {
                            match self.n(14) {
                                0 => {
                                    self.tag("gather_clamp");
                                    if !self.raise_extent(&e, Some(s), span) {
                                        return None;
                                    }
                                    X::Clamp(
                                        Box::new(add(base, off)),
                                        Box::new(lit(0)),
                                        Box::new(add(e.clone(), -span)),
                                    )
                                }
                                1 => {
                                    self.tag("gather_min");
                                    if !self.raise_extent(&e, Some(s), span) {
                                        return None;
                                    }
                                    X::Min(
                                        Box::new(add(base, off.abs())),
                                        Box::new(add(e.clone(), -span)),
                                    )
                                }
                                2 => {
                                    self.tag("gather_max");
                                    X::Max(Box::new(add(base, -off.abs())), Box::new(lit(0)))
                                }
                                3 if mul == 1 && div == 1 && Self::can_extent(&e, span) => {
                                    self.tag("gather_flip");
                                    bin('-', add(e.clone(), -span), v)
                                }
                                4 if len == 1 => {
                                    self.tag("gather_data");
                                    match self.index_data(kx, &e, 1, depth) {
                                        Some(x) => x,
                                        None => add(base, off),
                                    }
                                }
                                _ => add(base, off),
                            }
                        }
                    }
                };
                let reach = self.reach(kx, &start, span, &e, s)?;
                let text = if len > 1 || force_window {
                    // Of host length: the same value, from the dimension's size expression.
                    let len = if kx.host_len {
                        format!("({len} + {} - {})", e.text_p(3), e.text_p(3))
                    } else {
                        len.to_string()
                    };
                    if stride == 1 && self.chance(40) {
                        format!("{}:{len}", start.text())
                    } else {
                        format!("{}:{len}:{stride}", start.text())
                    }
                } else {
                    start.text()
                };
                Some((text, reach))
            }
        }
    }

    /// The ratio of a dimension's extent to the number of values its slot runs over (at a
    /// large size): 2 for a double-size matrix read from a grid over the base size.
    fn ratio(&self, e: &X, sl: &Slot) -> f64 {
        let s = 64;
        let ext = e.val(s, &[]).unwrap_or(s) as f64;
        let hi = sl.hi.val(s, &[]).unwrap_or(s) as f64;
        ext / hi.max(1.0)
    }

    /// How far an index from `start` spanning `span` reaches outside extent `e` (of symbol
    /// `sym`) on the generator's sample sizes from the symbol's minimum, given the slot ranges
    /// and guards in `kx`; `None` when it grows with the size or exceeds 3.
    fn reach(&self, kx: &Kx, start: &X, span: i64, e: &X, sym: usize) -> Option<(u32, u32)> {
        let mut used = BTreeSet::new();
        start.slots(&mut used);
        let mut worst = (0i64, 0i64);
        let mut at_33 = (0i64, 0i64);
        // From the symbol's own minimum (sizes are drawn per symbol).
        let floor = self.min[sym];
        for &s in SAMPLES.iter().filter(|&&s| s >= floor) {
            let ext = e.val(s, &[])?;
            if ext <= 0 {
                continue;
            }
            let mut lo: Option<i64> = None;
            let mut hi: Option<i64> = None;
            let mut unknown = false;
            let mut vars = vec![0i64; kx.slots.len().max(1)];
            // Every combination of the used slots' values (one slot in practice).
            let used_v: Vec<usize> = used.iter().copied().collect();
            let ranges: Vec<Vec<i64>> =
                used_v.iter().map(|&i| self.slot_values(kx, i, s)).collect();
            if ranges.iter().any(|r| r.is_empty()) {
                continue;
            }
            let mut idx = vec![0usize; ranges.len()];
            loop {
                for (k, &i) in used_v.iter().enumerate() {
                    vars[i] = ranges[k][idx[k]];
                }
                let (a, b) = start.iv(s, &vars);
                match (a, b) {
                    (Some(a), Some(b)) => {
                        lo = Some(lo.map_or(a, |x| x.min(a)));
                        hi = Some(hi.map_or(b + span - 1, |x| x.max(b + span - 1)));
                    }
                    (a, b) => {
                        unknown = true;
                        if let Some(a) = a {
                            lo = Some(lo.map_or(a, |x| x.min(a)));
                        }
                        if let Some(b) = b {
                            hi = Some(hi.map_or(b + span - 1, |x| x.max(b + span - 1)));
                        }
                    }
                }
                // Next combination.
                let mut k = 0;
                loop {
                    if k == idx.len() {
                        break;
                    }
                    idx[k] += 1;
                    if idx[k] < ranges[k].len() {
                        break;
                    }
                    idx[k] = 0;
                    k += 1;
                }
                if k == idx.len() {
                    break;
                }
            }
            let _ = unknown;
            let before = lo.map_or(0, |l| (-l).max(0));
            let after = hi.map_or(0, |h| (h - (ext - 1)).max(0));
            worst = (worst.0.max(before), worst.1.max(after));
            if s <= 34 {
                at_33 = worst;
            }
        }
        if worst != at_33 || worst.0 > 3 || worst.1 > 3 {
            return None;
        }
        Some((worst.0 as u32, worst.1 as u32))
    }

    /// The values slot `i`'s variable takes at size `s`, restricted by the enclosing guards.
    fn slot_values(&self, kx: &Kx, i: usize, s: i64) -> Vec<i64> {
        let Some(sl) = kx.slots.get(i).and_then(|x| x.as_ref()) else {
            return vec![0];
        };
        let Some(hi) = sl.hi.val(s, &[]) else {
            return vec![];
        };
        let mut lo_g = i64::MIN;
        let mut hi_g = i64::MAX;
        for g in kx.guards.iter().filter(|g| g.0 == i) {
            if g.1 != i64::MIN {
                lo_g = lo_g.max(g.1);
            }
            if let Some(h) = &g.2
                && let Some(h) = h.val(s, &[])
            {
                hi_g = hi_g.min(h);
            }
        }
        let mut out = Vec::new();
        let mut v = sl.lo;
        while v < hi && out.len() < 4096 {
            if v >= lo_g && v < hi_g {
                out.push(v);
            }
            v += sl.step;
        }
        out
    }

    // --- border rules ---

    /// A rule for matrix `m` covering `widths` (before, after) per dimension: one declared
    /// before that covers them, a shorthand of any mode, or a custom rule with every side and
    /// corner entry.
    fn rule_for(&mut self, m: usize, widths: &[(u32, u32)]) -> String {
        let covers = |w: &[(u32, u32)]| {
            w.len() == widths.len() && w.iter().zip(widths).all(|(a, b)| a.0 >= b.0 && a.1 >= b.1)
        };
        let old: Vec<String> = self
            .rules
            .iter()
            .filter(|(_, rm, w)| *rm == m && covers(w))
            .map(|(n, _, _)| n.clone())
            .collect();
        if !old.is_empty() && self.chance(40) {
            self.tag("rule_reused");
            return self.pick(&old);
        }
        let mat = self.mats[m].clone();
        let name = self.fresh("r");
        let wmax = widths.iter().map(|&(a, b)| a.max(b)).max().unwrap_or(0);
        let (text, stored) = if wmax <= 2 && self.chance(35) {
            (self.custom_rule(&name, &mat, widths), widths.to_vec())
        } else {
            self.shorthand_rule(&name, &mat, widths)
        };
        self.rules.push((name.clone(), m, stored));
        self.pre.push(text);
        name
    }

    fn shorthand_rule(
        &mut self,
        name: &str,
        mat: &Mat,
        widths: &[(u32, u32)],
    ) -> (String, Vec<(u32, u32)>) {
        let modes = [
            "constant",
            "replicate",
            "clamp",
            "reflect",
            "reflect101",
            "wrap",
        ];
        let mut mode = self.pick(&modes);
        // The widths: what is needed, sometimes one more, sometimes 1 where none is needed.
        let mut ws: Vec<u32> = Vec::new();
        for (d, &(a, b)) in widths.iter().enumerate() {
            let w = a.max(b);
            ws.push(if mat.axes[d] == Axis::Chan {
                0
            } else if w > 0 && self.chance(15) {
                w + 1
            } else if w == 0 && self.chance(10) {
                1
            } else {
                w
            });
        }
        let need = |mode: &str, w: u32| -> i64 {
            match mode {
                "reflect" | "wrap" => w as i64,
                "reflect101" => w as i64 + 1,
                _ => 1,
            }
        };
        if ws
            .iter()
            .enumerate()
            .any(|(d, &w)| w > 0 && !Self::can_extent(&mat.dims[d], need(mode, w)))
        {
            mode = if self.chance(50) {
                "replicate"
            } else {
                "constant"
            };
        }
        self.tags.insert(match mode {
            "constant" => "border:constant",
            "replicate" => "border:replicate",
            "clamp" => "border:clamp",
            "reflect" => "border:reflect",
            "reflect101" => "border:reflect101",
            _ => "border:wrap",
        });
        let mut text = Vec::new();
        let mut stored = Vec::new();
        for (d, &w) in ws.iter().enumerate() {
            if w == 0 {
                text.push("[*]".to_string());
                stored.push((0, 0));
                continue;
            }
            if let Axis::Plane(s) = mat.axes[d] {
                let ok = self.raise_extent(&mat.dims[d].clone(), Some(s), need(mode, w));
                debug_assert!(ok, "the mode was checked");
            }
            text.push(format!("[{w}]"));
            stored.push((w, w));
        }
        let value = if mode == "constant" {
            let v = self.border_value_scalar(mat);
            format!(", {v}")
        } else {
            String::new()
        };
        (
            format!(
                "parac_border_rule {name} = {mode}({}{}{value});",
                mat.name,
                text.concat()
            ),
            stored,
        )
    }

    /// A scalar border value for `mat`: a literal, a size, or a host scalar (integer for an
    /// integer matrix).
    fn border_value_scalar(&mut self, mat: &Mat) -> String {
        let float = mat.elem == Scalar::F32;
        let hs: Vec<Host> = self
            .hosts
            .iter()
            .filter(|h| h.ty != Scalar::Bool && (float || h.ty != Scalar::F32))
            .cloned()
            .collect();
        match self.n(5) {
            0 | 1 => {
                if float {
                    self.pick(&["0.5", "0.0", "-1.0", "255.0"]).to_string()
                } else {
                    self.pick(&["0", "255", "1", "-1", "7"]).to_string()
                }
            }
            2 => {
                let s: Vec<usize> = self.used_syms.iter().copied().collect();
                SYMS[self.pick(&s)].to_string()
            }
            _ if !hs.is_empty() => {
                self.tag("border_host_value");
                self.pick(&hs).name
            }
            _ => "3".to_string(),
        }
    }

    /// A custom rule: every side entry `-1..-w`, `+1..+w` of each bordered dimension and every
    /// corner, with constant values, interior reads and extrapolations.
    fn custom_rule(&mut self, name: &str, mat: &Mat, widths: &[(u32, u32)]) -> String {
        self.tag("border:custom");
        let nd = mat.dims.len();
        // The offsets per dimension: 0 for `*`, else -k / +k.
        let mut offs: Vec<Vec<i64>> = Vec::new();
        for &(a, b) in widths {
            let mut o: Vec<i64> = (1..=a as i64).map(|k| -k).collect();
            o.extend((1..=b as i64).collect::<Vec<_>>());
            offs.push(o);
        }
        let bordered: Vec<usize> = (0..nd).filter(|&d| !offs[d].is_empty()).collect();
        let mut entries: Vec<Vec<i64>> = Vec::new();
        // Sides.
        for &d in &bordered {
            for &o in &offs[d] {
                let mut e = vec![0; nd];
                e[d] = o;
                entries.push(e);
            }
        }
        // Corners.
        if bordered.len() == 2 {
            self.tag("border:corner");
            let (d0, d1) = (bordered[0], bordered[1]);
            for &a in &offs[d0] {
                for &b in &offs[d1] {
                    let mut e = vec![0; nd];
                    e[d0] = a;
                    e[d1] = b;
                    entries.push(e);
                }
            }
        }
        let sel = |o: i64| {
            if o == 0 {
                "[*]".to_string()
            } else if o < 0 {
                format!("[{o}]")
            } else {
                format!("[+{o}]")
            }
        };
        let mut lines = Vec::new();
        let mut i = 0;
        while i < entries.len() {
            let e = entries[i].clone();
            let target: String = format!(
                "{}{}",
                mat.name,
                e.iter().map(|&o| sel(o)).collect::<String>()
            );
            // Chain two corners with one value sometimes.
            let chain = e.iter().filter(|&&o| o != 0).count() == 2
                && i + 1 < entries.len()
                && entries[i + 1].iter().filter(|&&o| o != 0).count() == 2
                && self.chance(40);
            let value = self.border_value(mat, &e, chain);
            if chain {
                self.tag("border:chained");
                let e2 = &entries[i + 1];
                let t2: String = format!(
                    "{}{}",
                    mat.name,
                    e2.iter().map(|&o| sel(o)).collect::<String>()
                );
                lines.push(format!("    {target} = {t2} = {value};"));
                i += 2;
            } else {
                lines.push(format!("    {target} = {value};"));
                i += 1;
            }
        }
        format!("parac_border_rule {name} {{\n{}\n}}", lines.join("\n"))
    }

    /// The value of a custom rule's entry `e` (offsets per dimension, 0 for `*`): a constant,
    /// or interior elements of the matrix (`*` where the entry has `*`). With `fixed`, no `*`
    /// read (the value serves two entries).
    fn border_value(&mut self, mat: &Mat, e: &[i64], fixed: bool) -> String {
        let nd = mat.dims.len();
        let read = |g: &mut G, from_end: bool, k: i64| -> String {
            let mut s = String::new();
            for d in 0..nd {
                if e[d] == 0 && !fixed {
                    s.push_str("[*]");
                } else if mat.axes[d] == Axis::Chan {
                    if let X::Sym(c) = mat.dims[d] {
                        g.raise_min(c, 1);
                    }
                    s.push_str("[0]");
                } else {
                    let ext = mat.dims[d].clone();
                    if let Axis::Plane(sy) = mat.axes[d]
                        && !g.raise_extent(&ext, Some(sy), k + 1)
                    {
                        // Too small a matrix for this read: its first element.
                        s.push_str("[0]");
                        continue;
                    }
                    if from_end {
                        s.push_str(&format!("[{}]", add(ext, -(k + 1)).text()));
                    } else {
                        s.push_str(&format!("[{k}]"));
                    }
                }
            }
            format!("{}{s}", mat.name)
        };
        match self.n(6) {
            0 => self.border_value_scalar(mat),
            1 | 2 => {
                let k = self.n(3) as i64;
                let end = self.chance(50);
                read(self, end, k)
            }
            3 => {
                // The paper's linear extrapolation.
                self.tag("border:extrapolation");
                let a = read(self, false, 1);
                let b = read(self, false, 3);
                format!("{a} * 2 - {b}")
            }
            4 => {
                let a = read(self, true, 0);
                let b = read(self, true, 1);
                format!("{a} + {b}")
            }
            _ => {
                let a = read(self, false, 0);
                let v = self.border_value_scalar(mat);
                format!("{a} + {v}")
            }
        }
    }
}

/// The float range an integer type holds, as literals (a float converted into it stays in
/// range).
fn float_range(t: Scalar) -> (&'static str, &'static str) {
    match t {
        Scalar::U8 => ("0.0", "255.0"),
        Scalar::I8 => ("-128.0", "127.0"),
        Scalar::U16 => ("0.0", "65535.0"),
        Scalar::I16 => ("-32768.0", "32767.0"),
        Scalar::U32 => ("0.0", "4000000000.0"),
        Scalar::U64 => ("0.0", "1000000000000.0"),
        Scalar::I64 => ("-1000000000000.0", "1000000000000.0"),
        _ => ("-2000000000.0", "2000000000.0"),
    }
}
