//! Range-proven rewrites of integer divisions (a schedule's `peep`), over a region's whole
//! kernel, with the ranges of [`crate::lir::range`] (variables bound so far included):
//! - `a / 2^k` and `a % 2^k` of an `a` proven non-negative: `a >> k` and `a & (2^k - 1)`;
//! - `a / c` and `a % c` (another constant `c > 0`) of an `int` proven non-negative: the
//!   unsigned division (no sign fix-up);
//! - `a / b` of `int`s, `b` not a constant and `a` proven in `[0, 2^20)`: a float division,
//!   `int((float(a) + 0.5) / float(b))`, exact there (see `FLOAT_DIV_LIMIT`), with `b == 0` still
//!   the checked division (the error flag), where `b` is not proven non-zero. No vector unit
//!   divides integers; every one divides floats.

use crate::ir::{BinOp, Scalar};
use crate::lir::range::{Vars, range_in};
use crate::lir::visit::{Mutator, mutate_body, rebuild_expr, rebuild_stmt};
use crate::lir::{ExprId, ExprKind, Func, Stmt, StmtId, VarId};
use std::collections::HashSet;

/// For an integer `a` in `[0, FLOAT_DIV_LIMIT)` and any integer `b != 0`, C's truncating `a / b`
/// equals `(int)(((float)a + 0.5f) / (float)b)` even where the float division is off by
/// OpenCL's allowed 2.5 ulp. With `a = q|b| + r`, `0 <= r < |b|`, the exact quotient of `a + 0.5`
/// (exact in a float) by `|b|` lies in `[q + 0.5/|b|, q + 1 - 0.5/|b|]`; a relative error `e`
/// moves it by at most `(a + 0.5) e / |b|`, less than `0.5 / |b|` while `(a + 0.5) e < 0.5`, that
/// is `a < 2^20.68` for `e = 2.5 * 2^-23`: the truncation stays `q` (with `b`'s sign, as C's).
/// For `|b| > 2^24` (inexact in a float) `q` is 0 and the quotient stays below 1. The limit
/// keeps a factor of 1.6 to spare; `codegen::opencl::range`'s test checks it with the division
/// perturbed by 3 ulp either way.
pub const FLOAT_DIV_LIMIT: i128 = 1 << 20;

/// Rewrites the divisions of every region of `func`.
pub fn run(func: &mut Func) {
    let mut p = Peep {
        vars: Vars::new(),
        once: crate::lir::range::bound_once(func),
    };
    mutate_body(&mut p, func);
}

/// The pass as a [`Mutator`]: the ranges of the variables bound so far (a variable's range
/// from its binding's value as written; the rewrites keep values), divisions rewritten
/// bottom-up.
struct Peep {
    vars: Vars,
    once: HashSet<VarId>,
}

impl Mutator for Peep {
    fn mutate_stmt(&mut self, func: &mut Func, s: StmtId) -> StmtId {
        match func.stmts[s] {
            Stmt::Let(v, e) => self.bind(func, v, e),
            Stmt::For { var, lo, hi, .. } => {
                let r = range_in(func, lo, &self.vars).zip(range_in(func, hi, &self.vars));
                if let Some((l, h)) = r.filter(|(l, h)| l.0 < h.1) {
                    if self.once.contains(&var) {
                        self.vars.insert(var, (l.0, h.1 - 1));
                    }
                }
            }
            _ => {}
        }
        rebuild_stmt(self, func, s)
    }

    fn mutate_expr(&mut self, func: &mut Func, e: ExprId) -> ExprId {
        // A `let` expression's variable is within its value's range in the body.
        if let ExprKind::Let(v, a, _) = func.exprs[e].kind {
            self.bind(func, v, a);
        }
        let e = rebuild_expr(self, func, e);
        match func.exprs[e].kind {
            ExprKind::Binary(op @ (BinOp::Div | BinOp::Rem), a, b) if func.exprs[e].lanes == 1 => {
                self.division(func, e, op, a, b).unwrap_or(e)
            }
            _ => e,
        }
    }
}

impl Peep {
    /// Records the range of `v`, bound once, to `value`'s.
    fn bind(&mut self, func: &Func, v: VarId, value: ExprId) {
        if let (Some(r), true) = (range_in(func, value, &self.vars), self.once.contains(&v)) {
            self.vars.insert(v, r);
        }
    }

    fn division(
        &self,
        func: &mut Func,
        e: ExprId,
        op: BinOp,
        a: ExprId,
        b: ExprId,
    ) -> Option<ExprId> {
        let t = func.exprs[e].ty;
        if !matches!(t, Scalar::I32 | Scalar::I64 | Scalar::U32 | Scalar::U64) {
            return None;
        }
        let ra = range_in(func, a, &self.vars)?;
        let nonneg = ra.0 >= 0;
        if let ExprKind::Int(c) = func.exprs[b].kind {
            if c <= 0 || !nonneg {
                return None;
            }
            if c & (c - 1) == 0 {
                let (op, k) = match op {
                    BinOp::Div => (BinOp::Shr, c.trailing_zeros() as i128),
                    _ => (BinOp::BitAnd, c - 1),
                };
                let k = func.int(k, t);
                return Some(func.binary(op, a, k, t));
            }
            if t != Scalar::I32 {
                return None;
            }
            let u = Scalar::U32;
            let (ua, uc) = (func.cast(a, u), func.int(c, u));
            let q = func.binary(op, ua, uc, u);
            return Some(func.cast(q, t));
        }
        if op != BinOp::Div || t != Scalar::I32 || !nonneg || ra.1 >= FLOAT_DIV_LIMIT {
            return None;
        }
        let f = Scalar::F32;
        let (fa, fb) = (func.cast(a, f), func.cast(b, f));
        let half = func.expr(ExprKind::Float(0.5), f);
        let num = func.binary(BinOp::Add, fa, half, f);
        let q = func.binary(BinOp::Div, num, fb, f);
        let q = func.cast(q, t);
        let rb = range_in(func, b, &self.vars);
        if rb.is_some_and(|r| r.0 > 0 || r.1 < 0) {
            return Some(q);
        }
        let zero = func.int(0, t);
        let is_zero = func.binary(BinOp::Eq, b, zero, Scalar::Bool);
        Some(func.expr(ExprKind::Select(is_zero, e, q), t))
    }
}
