//! Constant folding: integer arithmetic and casts of constants (wrapped at their type, as C
//! does), `x + 0`, `x * 1`, `(x ± c1) ± c2` as `x ± c` (wrapping sums are associative),
//! `select` on a constant, and reads of a constant matrix at constant indices (a constant
//! filter's taps become literals once windows are written out).

use crate::ir::{BinOp, Function, MatrixKind, Scalar};
use crate::lir::visit::{Mutator, mutate_body, rebuild_expr};
use crate::lir::{Buf, ExprId, ExprKind, Func};

/// `v` wrapped to the integer type `t` (C's conversion; `bool`: `v != 0`).
fn wrap(v: i128, t: Scalar) -> i128 {
    crate::interp::cast(crate::interp::Val::Int(v), t).as_i128()
}

/// `(x ± c1) ± c2` (integers of one type, `c1`, `c2` constants) as `x + c` or `x - c`, or `x`;
/// any other expression as it is.
pub(crate) fn reassociate(func: &mut Func, e: ExprId) -> ExprId {
    let t = func.exprs[e].ty;
    let signed = |func: &Func, x: ExprId| -> Option<(ExprId, i128)> {
        let ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) = func.exprs[x].kind else {
            return None;
        };
        let c = Simplify::int(func, b).filter(|_| func.exprs[b].ty == t)?;
        Some((a, if op == BinOp::Add { c } else { -c }))
    };
    let Some((inner, c2)) = signed(func, e) else {
        return e;
    };
    let Some((x, c1)) = signed(func, inner).filter(|(x, _)| func.exprs[*x].ty == t) else {
        return e;
    };
    let c = wrap(c1 + c2, t);
    if c == 0 {
        return x;
    }
    let k = func.int(c, t);
    func.binary(BinOp::Add, x, k, t)
}

struct Simplify<'a> {
    f: &'a Function,
}

/// Folds the constants of `func` (`f`: its HAST, for the constant matrices' values).
pub fn run(func: &mut Func, f: &Function) {
    mutate_body(&mut Simplify { f }, func);
}

impl Simplify<'_> {
    fn int(func: &Func, e: ExprId) -> Option<i128> {
        match func.exprs[e].kind {
            ExprKind::Int(v) if func.exprs[e].ty.is_int() => Some(v),
            _ => None,
        }
    }

    /// The value of constant matrix `m` at constant indices, as an expression of its type.
    fn const_read(&self, func: &mut Func, m: usize, index: &[ExprId]) -> Option<ExprId> {
        let mat = &self.f.matrices[m];
        let MatrixKind::Const(values) = &mat.kind else {
            return None;
        };
        let mut lin: i128 = 0;
        for (d, i) in mat.dims.iter().zip(index) {
            let crate::ir::ExprKind::Int(d) = d.kind else {
                return None;
            };
            let i = Self::int(func, *i)?;
            if i < 0 || i >= d {
                return None;
            }
            lin = lin * d + i;
        }
        let v = *values.get(usize::try_from(lin).ok()?)?;
        // The value as the interpreter reads a constant (`as`, saturating).
        Some(match crate::interp::cast_f64(v, mat.elem) {
            crate::interp::Val::F32(x) => func.expr(ExprKind::Float(x as f64), mat.elem),
            x => func.int(x.as_i128(), mat.elem),
        })
    }
}

impl Mutator for Simplify<'_> {
    fn mutate_expr(&mut self, func: &mut Func, e: ExprId) -> ExprId {
        let e = rebuild_expr(self, func, e);
        let t = func.exprs[e].ty;
        let int = |x: ExprId| Self::int(func, x);
        let same = |x: ExprId| func.exprs[x].ty == t;
        match func.exprs[e].kind.clone() {
            ExprKind::Cast(a) if t.is_int() || t == Scalar::Bool => match int(a) {
                Some(v) => func.int(wrap(v, t), t),
                None => e,
            },
            ExprKind::Binary(op, a, b) if t.is_int() && same(a) && same(b) => {
                match (op, int(a), int(b)) {
                    (BinOp::Add, Some(x), Some(y)) => func.int(wrap(x.wrapping_add(y), t), t),
                    (BinOp::Sub, Some(x), Some(y)) => func.int(wrap(x.wrapping_sub(y), t), t),
                    (BinOp::Mul, Some(x), Some(y)) => func.int(wrap(x.wrapping_mul(y), t), t),
                    (BinOp::Add, Some(0), _) | (BinOp::Mul, Some(1), _) => b,
                    (BinOp::Add | BinOp::Sub, _, Some(0)) | (BinOp::Mul, _, Some(1)) => a,
                    (BinOp::Add | BinOp::Sub, _, Some(_)) => reassociate(func, e),
                    _ => e,
                }
            }
            ExprKind::Select(c, a, b) => match func.exprs[c].kind {
                ExprKind::Int(v) if func.exprs[c].ty == Scalar::Bool => {
                    if v != 0 {
                        a
                    } else {
                        b
                    }
                }
                _ => e,
            },
            ExprKind::Load {
                buf: Buf::Matrix(m),
                index,
                ..
            } => self.const_read(func, m, &index).unwrap_or(e),
            _ => e,
        }
    }
}
