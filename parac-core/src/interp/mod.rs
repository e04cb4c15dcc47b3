//! The reference interpreter: runs a checked [`Function`] on concrete host matrices, with the
//! IR's exact C semantics and no device or generated code. It is the tests' oracle and a CPU
//! fallback.
//!
//! It reproduces the CPU path (`codegen/cpu.rs`), which is the executable specification:
//!
//! - sizes are bound from the matrix parameters' dimensions (`SizeSym::bound_by`); every matrix
//!   parameter's rank and shape are checked against its declaration first (the size expressions
//!   in `i64`, as the generated host code does); locals are zero-filled, constants take the IR's
//!   values;
//! - host steps run in order: `Let` (host scalars), `Run` (a region), `Return`;
//! - before an iterator region runs, every access the host proves (not guarded, not a bordered
//!   read: `codegen::safety`) is checked by interval arithmetic over the iteration space
//!   ([`region_intervals`], [`crate::bounds::Iv`]): an interval outside its matrix is an
//!   [`InterpError::OutOfBounds`] before anything runs; so is a divisor the host checks (a
//!   uniform divisor of a division that runs in every iteration) whose interval contains 0 an
//!   [`InterpError::DivisionByZero`] ([`region_check`]);
//! - a region runs its iteration space in row-major order (the first slot outermost), each
//!   slot's bounds evaluated where the generated loop evaluates them; a region the CPU path runs
//!   row-parallel runs the same way, a store outside its matrix failing where it executes (as
//!   on OpenCL), never one that does not run;
//! - C integer semantics through the IR's explicit casts: wrapping arithmetic, truncating `/`
//!   and `%` (by zero: [`InterpError::DivisionByZero`]), arithmetic `>>`, shift amounts masked
//!   by the width; `f32` arithmetic for floats; `clamp` is `min(max(..))`, an integer `abs`
//!   wraps and keeps its type;
//! - every access is bounds-checked; outside its matrix the border rules in force give the
//!   value (the first entry, in rule order, whose selectors match the side or corner the index
//!   falls in; `*` is the read's own index), entering the expression at its own type (not
//!   wrapped to the element type); an access no rule covers is an
//!   [`InterpError::OutOfBounds`];
//! - global reductions as the CPU path computes them: integer sums in `i64` (wrapping), float
//!   sums in `f64` over chunks of 4096 elements, the chunks' sums added in order (as the CPU
//!   path adds them), the mean as that sum divided by the element count (an empty matrix:
//!   [`InterpError::DivisionByZero`]), minimum and maximum in the promoted type.
//!
//! Where the CPU path runs iterations in parallel and several of them fail, it reports one of
//! the errors; the interpreter reports the first in row-major order.

mod data;
mod expr;
mod intervals;
mod region;
pub(crate) mod value;

pub use data::{Data, Tensor};
pub use intervals::{check_intervals, host_expr, matrix_dims, region_check, region_intervals};
/// The operators' C semantics, shared with the LIR's evaluator (`lir::eval`) and the checks'
/// (`check::eval`: `wrap`).
pub(crate) use region::reduction;
pub use value::{Val, cast, cast_f64};
pub(crate) use value::{binary, call, unary, wrap};

use crate::ir::*;

/// One argument of a call: one per parameter, in [`Function::params`] order.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A matrix parameter (an output's elements are overwritten by the call).
    Matrix(Tensor),
    /// A scalar parameter: an integer inside its type's range, an `f32` or a `bool`.
    Scalar(Val),
}

/// Why a call failed.
#[derive(Clone, Debug, PartialEq)]
pub enum InterpError {
    /// The arguments do not match the parameters (their number, a matrix for a scalar, an
    /// element type, a value outside a scalar parameter's type, a tensor whose data does not
    /// fill its shape).
    Argument(String),
    /// A matrix argument has another number of dimensions than its declaration.
    Rank {
        /// The parameter.
        matrix: String,
        /// Its declared number of dimensions.
        expected: usize,
        /// The argument's shape.
        found: Vec<usize>,
    },
    /// A matrix argument does not have the shape its declaration gives with the bound sizes.
    Shape {
        /// The parameter.
        matrix: String,
        /// The declared shape, evaluated.
        expected: Vec<usize>,
        /// The argument's shape.
        found: Vec<usize>,
    },
    /// An access outside its matrix that no border rule covers (found by the interval check
    /// before the region runs, or where it executes).
    OutOfBounds {
        /// The region (`(host code)` outside regions).
        region: String,
        /// `read of` or `write to`.
        what: &'static str,
        /// The matrix.
        matrix: String,
        /// The index.
        index: Vec<i64>,
        /// The matrix's shape.
        shape: Vec<usize>,
    },
    /// A window whose length is a host expression has a length below 1, or more than
    /// `i32::MAX` elements in all (`codegen::safety::host_lens`).
    WindowLength {
        /// The region.
        region: String,
        /// The matrix the window reads.
        matrix: String,
        /// Its window lengths, in order.
        lens: Vec<i64>,
    },
    /// An integer division or remainder by zero (or the mean of an empty matrix).
    DivisionByZero {
        /// The region (`(host code)` for host steps, `mean_<matrix>` for a global mean).
        region: String,
    },
    /// A construct the interpreter does not evaluate (the CPU path does not compile it
    /// either).
    Unsupported(String),
}

impl std::fmt::Display for InterpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InterpError::Argument(s) => write!(f, "bad argument: {s}"),
            InterpError::Rank {
                matrix,
                expected,
                found,
            } => write!(
                f,
                "matrix `{matrix}` has shape {found:?}, but the pipeline declares {expected} dimensions"
            ),
            InterpError::Shape {
                matrix,
                expected,
                found,
            } => write!(
                f,
                "matrix `{matrix}` has shape {found:?}, but the pipeline declares {expected:?}"
            ),
            InterpError::OutOfBounds {
                region,
                what,
                matrix,
                index,
                shape,
            } => write!(
                f,
                "{region}: {what} `{matrix}` at {index:?} is outside its shape {shape:?}"
            ),
            InterpError::WindowLength {
                region,
                matrix,
                lens,
            } => write!(
                f,
                "{region}: a window of `{matrix}` has lengths {lens:?}; each must be at least 1, and their product at most 2147483647"
            ),
            InterpError::DivisionByZero { region } => write!(f, "{region}: division by zero"),
            InterpError::Unsupported(s) => write!(f, "not supported by the interpreter: {s}"),
        }
    }
}

impl std::error::Error for InterpError {}

/// Runs `f` on `args` (one per parameter, in [`Function::params`] order): the outputs are
/// written into their [`Arg::Matrix`] tensors; the result is the function's return value, if
/// it returns one. The arguments keep their tensors whatever the outcome (an output's
/// elements are then unspecified after an error).
pub fn run(f: &Function, args: &mut [Arg]) -> Result<Option<Val>, InterpError> {
    let mut m = Machine::bind(f, args)?;
    let result = m.steps(&f.steps);
    // Give every matrix parameter its elements back.
    for (p, a) in f.params.iter().zip(args.iter_mut()) {
        if let (ParamRef::Matrix(id), Arg::Matrix(t)) = (p, a) {
            std::mem::swap(&mut t.data, &mut m.mats[*id]);
        }
    }
    result
}

/// A size expression in `i64`, as the generated host code computes it (`host::size_expr`).
pub(crate) fn size_expr(sizes: &[i64], e: &Expr) -> Result<i64, InterpError> {
    let go = |x: &Expr| size_expr(sizes, x);
    Ok(match &e.kind {
        ExprKind::Int(v) => *v as i64,
        ExprKind::Size(i) => sizes[*i],
        ExprKind::Cast(a, _) => go(a)?,
        ExprKind::Unary(UnOp::Neg, a) => go(a)?.wrapping_neg(),
        ExprKind::Binary(op, a, b) => {
            let (x, y) = (go(a)?, go(b)?);
            match op {
                BinOp::Add => x.wrapping_add(y),
                BinOp::Sub => x.wrapping_sub(y),
                BinOp::Mul => x.wrapping_mul(y),
                BinOp::Div | BinOp::Rem if y == 0 => {
                    return Err(InterpError::DivisionByZero {
                        region: "(sizes)".into(),
                    });
                }
                BinOp::Div => x.wrapping_div(y),
                BinOp::Rem => x.wrapping_rem(y),
                BinOp::Shl => x.wrapping_shl(y as u32),
                BinOp::Shr => x.wrapping_shr(y as u32),
                BinOp::BitAnd => x & y,
                BinOp::BitOr => x | y,
                BinOp::BitXor => x ^ y,
                op => {
                    return Err(InterpError::Unsupported(format!(
                        "`{}` in a size expression",
                        op.symbol()
                    )));
                }
            }
        }
        _ => 0,
    })
}

/// The state of one call: sizes, matrices and host scalars.
pub(crate) struct Machine<'a> {
    pub(crate) f: &'a Function,
    /// Size symbols as the kernels see them (`i32`).
    pub(crate) z: Vec<i32>,
    /// Every matrix's dimensions (`i64`).
    pub(crate) d: Vec<Vec<i64>>,
    /// Host scalars (`Int(0)` before their step).
    pub(crate) hosts: Vec<Val>,
    /// Every matrix's elements (parameters are moved in from the arguments).
    pub(crate) mats: Vec<Data>,
}

impl<'a> Machine<'a> {
    /// Checks the arguments, binds the sizes and sets up every matrix (moving the parameters'
    /// tensors in).
    fn bind(f: &'a Function, args: &mut [Arg]) -> Result<Machine<'a>, InterpError> {
        let bad = |s: String| Err(InterpError::Argument(s));
        if args.len() != f.params.len() {
            return bad(format!(
                "`{}` takes {} arguments, got {}",
                f.name,
                f.params.len(),
                args.len()
            ));
        }
        let mut hosts = vec![Val::Int(0); f.scalars.len()];
        for (p, a) in f.params.iter().zip(args.iter()) {
            match (p, a) {
                (ParamRef::Matrix(m), Arg::Matrix(t)) => {
                    let mat = &f.matrices[*m];
                    if t.elem() != mat.elem {
                        return bad(format!(
                            "matrix `{}` holds {}, got {}",
                            mat.name,
                            mat.elem,
                            t.elem()
                        ));
                    }
                    if t.shape.iter().product::<usize>() != t.data.len() {
                        return bad(format!(
                            "matrix `{}`: shape {:?} but {} elements",
                            mat.name,
                            t.shape,
                            t.data.len()
                        ));
                    }
                    // Ranks first: sizes are bound from dimensions that must exist.
                    if t.shape.len() != mat.dims.len() {
                        return Err(InterpError::Rank {
                            matrix: mat.name.clone(),
                            expected: mat.dims.len(),
                            found: t.shape.clone(),
                        });
                    }
                }
                (ParamRef::Scalar(s), Arg::Scalar(v)) => {
                    let sc = &f.scalars[*s];
                    if !v.fits(sc.ty) {
                        return bad(format!("scalar `{}: {}` got {v:?}", sc.name, sc.ty));
                    }
                    hosts[*s] = *v;
                }
                (ParamRef::Matrix(m), _) => {
                    return bad(format!("`{}` is a matrix", f.matrices[*m].name));
                }
                (ParamRef::Scalar(s), _) => {
                    return bad(format!("`{}` is a scalar", f.scalars[*s].name));
                }
            }
        }
        let shape_of = |m: MatrixId| {
            f.params
                .iter()
                .position(|p| *p == ParamRef::Matrix(m))
                .and_then(|i| match &args[i] {
                    Arg::Matrix(t) => Some(t.shape.clone()),
                    Arg::Scalar(_) => None,
                })
        };
        let sizes: Vec<i64> = f
            .sizes
            .iter()
            .map(|s| {
                shape_of(s.bound_by.0)
                    .and_then(|sh| sh.get(s.bound_by.1).copied())
                    .unwrap_or(0) as i64
            })
            .collect();
        let mut d = Vec::with_capacity(f.matrices.len());
        for mat in &f.matrices {
            let dims: Result<Vec<i64>, InterpError> =
                mat.dims.iter().map(|e| size_expr(&sizes, e)).collect();
            d.push(dims?);
        }
        for p in &f.params {
            let ParamRef::Matrix(m) = p else { continue };
            let expected: Vec<usize> = d[*m]
                .iter()
                .map(|v| usize::try_from(*v).unwrap_or(0))
                .collect();
            let found = shape_of(*m).expect("a matrix argument");
            if expected != found {
                return Err(InterpError::Shape {
                    matrix: f.matrices[*m].name.clone(),
                    expected,
                    found,
                });
            }
        }
        let mut mats = Vec::with_capacity(f.matrices.len());
        for (m, mat) in f.matrices.iter().enumerate() {
            let n: usize = d[m].iter().map(|v| (*v).max(0) as usize).product();
            let data = match &mat.kind {
                MatrixKind::Const(values) => {
                    let mut data = Data::zeros(mat.elem, values.len())
                        .ok_or_else(|| InterpError::Unsupported("a bool matrix".into()))?;
                    for (i, v) in values.iter().enumerate() {
                        data.set(i, value::float_lit(*v, mat.elem));
                    }
                    data
                }
                MatrixKind::Local => Data::zeros(mat.elem, n)
                    .ok_or_else(|| InterpError::Unsupported("a bool matrix".into()))?,
                // Parameters: moved in below.
                _ => Data::U8(Vec::new()),
            };
            mats.push(data);
        }
        for (p, a) in f.params.iter().zip(args.iter_mut()) {
            if let (ParamRef::Matrix(m), Arg::Matrix(t)) = (p, a) {
                std::mem::swap(&mut mats[*m], &mut t.data);
            }
        }
        Ok(Machine {
            f,
            z: sizes.iter().map(|s| *s as i32).collect(),
            d,
            hosts,
            mats,
        })
    }

    /// Host steps, in order.
    fn steps(&mut self, steps: &[HostStep]) -> Result<Option<Val>, InterpError> {
        let f = self.f;
        for step in steps {
            match step {
                HostStep::Repeat { count, body, .. } => {
                    for _ in 0..self.host_expr(count)?.as_i64() {
                        if let Some(v) = self.steps(body)? {
                            return Ok(Some(v));
                        }
                    }
                }
                HostStep::Swap(a, b) => self.mats.swap(*a, *b),
                HostStep::Run(r) => self.run_region(*r)?,
                HostStep::Let(s, e) => {
                    let v = self.host_expr(e)?;
                    self.hosts[*s] = cast(v, f.scalars[*s].ty);
                }
                HostStep::Return(e) => {
                    let v = self.host_expr(e)?;
                    return Ok(Some(match f.ret {
                        Some(t) => cast(v, t),
                        None => v,
                    }));
                }
            }
        }
        Ok(None)
    }
}
