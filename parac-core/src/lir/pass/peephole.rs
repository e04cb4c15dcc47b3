//! Range-proven rewrites, over a region's whole kernel, with the ranges of
//! [`crate::lir::range`] (variables bound so far included). Of integer divisions (a schedule's
//! `peep`):
//! - `a / 2^k` and `a % 2^k` of an `a` proven non-negative: `a >> k` and `a & (2^k - 1)`;
//! - `a / c` and `a % c` (another constant `c > 0`) of an `int` proven non-negative: the
//!   unsigned division (no sign fix-up);
//! - `a / b` of `int`s, `b` not a constant and `a` proven in `[0, 2^20)`: a float division,
//!   `int((float(a) + 0.5) / float(b))`, exact there (see `FLOAT_DIV_LIMIT`), with `b == 0` still
//!   the checked division (the error flag), where `b` is not proven non-zero (by its range, or
//!   by the host's check, `Builtin::NonZero`). No vector unit
//!   divides integers; every one divides floats.
//!
//! Of 64-bit index arithmetic (on the OpenCL lowering, always): `(long)a ± (long)b`, `(long)a *
//! (long)b` (either may be a constant) of `int`s `a`, `b`, where the result is proven to fit an
//! `int`, as `(long)(a ± b)` or `(long)(a * b)`, then `(x ± c1) ± c2` folded
//! (`super::simplify::reassociate`): a window's `(long)(y - 1) + 1` is `(long)y`, and a
//! device compiler sees that neighbouring work-items read neighbouring elements.
//!
//! Of divisions of a variable known to be a multiple (on the OpenCL lowering, with `narrow`):
//! `(v + c) / K` and `(v + c) >> k` (`K = 2^k`), `v >= 0` a multiple of `K` (a work-item's
//! first point of `W` points a row, `W` a multiple of `K`) and `v + c >= 0` for `/`, as
//! `(v >> k) + floor(c / K)`: an upsampling read `down[(y + 1) / 2]` of a work-item's points
//! becomes `down[(y >> 1) + 0]`, `down[(y >> 1) + 1]`.., one affine leaf plus constants, which
//! [`super::share_loads`] and [`super::vector_memory`] share and read as vectors.
//!
//! Ranges come from the variables' bindings, and, inside the `then` arm of an `if`, from the
//! conjuncts of its condition that bound a variable plus a constant (`v + c < e`): a
//! work-item's interior test bounds its first point by the dimensions.
//!
//! Of integer products (a schedule's `m24`): `a * b` of `int`s each proven within 24 bits, the
//! product within 32, as `mul24(a, b)` (`Builtin::Mul24`: a full-rate multiply on GPUs whose
//! 32-bit one is slower, as AMD's).

use crate::ir::{BinOp, Builtin, Scalar};
use crate::lir::range::{Vars, range_in};
use crate::lir::visit::{Mutator, mutate_body, rebuild_expr, rebuild_stmt};
use crate::lir::{ExprId, ExprKind, Func, Stmt, StmtId, VarId};
use std::collections::{HashMap, HashSet};

/// For an integer `a` in `[0, FLOAT_DIV_LIMIT)` and any integer `b != 0`, C's truncating `a / b`
/// equals `(int)(((float)a + 0.5f) / (float)b)` even where the float division is off by
/// OpenCL's allowed 2.5 ulp. With `a = q|b| + r`, `0 <= r < |b|`, the exact quotient of `a + 0.5`
/// (exact in a float) by `|b|` lies in `[q + 0.5/|b|, q + 1 - 0.5/|b|]`; a relative error `e`
/// moves it by at most `(a + 0.5) e / |b|`, less than `0.5 / |b|` while `(a + 0.5) e < 0.5`, that
/// is `a < 2^20.68` for `e = 2.5 * 2^-23`: the truncation stays `q` (with `b`'s sign, as C's).
/// For `|b| > 2^24` (inexact in a float) `q` is 0 and the quotient stays below 1. The limit
/// keeps a factor of 1.6 to spare; this file's test checks it with the division
/// perturbed by 3 ulp either way.
pub const FLOAT_DIV_LIMIT: i128 = 1 << 20;

/// The signed range of `mul24`'s operands.
pub(crate) const M24: (i128, i128) = (-(1 << 23), (1 << 23) - 1);

/// Which rewrites [`run`] makes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rewrites {
    /// Divisions (`peep`).
    pub divisions: bool,
    /// Products as `mul24` (`m24`).
    pub mul24: bool,
    /// 64-bit index arithmetic in `int`.
    pub narrow: bool,
}

/// Makes the rewrites `what` asks for in every region of `func`.
pub fn run(func: &mut Func, what: Rewrites) {
    let mut p = Peep {
        vars: Vars::new(),
        once: crate::lir::range::bound_once(func),
        what,
        multiple: HashMap::new(),
    };
    mutate_body(&mut p, func);
}

/// The pass as a [`Mutator`]: the ranges of the variables bound so far (a variable's range
/// from its binding's value as written; the rewrites keep values), divisions rewritten
/// bottom-up.
struct Peep {
    vars: Vars,
    once: HashSet<VarId>,
    what: Rewrites,
    /// Variables bound once to a multiple of a power of two: `(2^k, r)`, the value is
    /// `r` modulo `2^k`.
    multiple: HashMap<VarId, (i128, i128)>,
}

impl Mutator for Peep {
    fn mutate_stmt(&mut self, func: &mut Func, s: StmtId) -> StmtId {
        match func.stmts[s] {
            Stmt::Let(v, e) => self.bind(func, v, e),
            Stmt::For {
                var, lo, hi, step, ..
            } => {
                let r = range_in(func, lo, &self.vars).zip(range_in(func, hi, &self.vars));
                if let Some((l, h)) = r.filter(|(l, h)| l.0 < h.1)
                    && self.once.contains(&var)
                {
                    self.vars.insert(var, (l.0, h.1 - 1));
                }
                // `lo + i * step`: congruent to `lo` modulo the power of two dividing `step`.
                let m = 1i128 << step.trailing_zeros().min(30);
                if let (ExprKind::Int(l), true) = (&func.exprs[lo].kind, m > 1)
                    && self.once.contains(&var)
                {
                    self.multiple.insert(var, (m, l.rem_euclid(m)));
                }
            }
            Stmt::If(c, then, other) if self.what.narrow => {
                let c = self.mutate_expr(func, c);
                let outside = self.vars.clone();
                self.refine(func, c);
                let then = self.mutate_stmt(func, then);
                self.vars = outside;
                let other = other.map(|o| self.mutate_stmt(func, o));
                return func.stmt(Stmt::If(c, then, other));
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
        if func.exprs[e].lanes != 1 {
            return e;
        }
        if let ExprKind::Binary(op @ (BinOp::Div | BinOp::Shr), a, b) = func.exprs[e].kind
            && let Some(split) = self.split_multiple(func, Node { e, op, a, b })
        {
            return split;
        }
        match func.exprs[e].kind {
            ExprKind::Binary(op @ (BinOp::Div | BinOp::Rem), a, b) if self.what.divisions => {
                self.division(func, Node { e, op, a, b }).unwrap_or(e)
            }
            ExprKind::Binary(BinOp::Mul | BinOp::ElemMul, a, b)
                if self.what.mul24 && func.exprs[e].ty == Scalar::I32 =>
            {
                self.product(
                    func,
                    Node {
                        e,
                        op: BinOp::Mul,
                        a,
                        b,
                    },
                )
                .unwrap_or(e)
            }
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b)
                if self.what.narrow && func.exprs[e].ty == Scalar::I64 =>
            {
                let n = self.narrow(func, Node { e, op, a, b }).unwrap_or(e);
                self.exact(func, n)
            }
            _ if self.what.narrow => self.exact(func, e),
            _ => e,
        }
    }
}

/// A binary expression being rewritten: the node, its operator and operands.
#[derive(Clone, Copy)]
struct Node {
    e: ExprId,
    op: BinOp,
    a: ExprId,
    b: ExprId,
}

impl Peep {
    /// Records the range of `v`, bound once, to `value`'s (and that it is a multiple where
    /// `value` is a multiple plus a constant).
    fn bind(&mut self, func: &Func, v: VarId, value: ExprId) {
        if !self.once.contains(&v) {
            return;
        }
        if let Some(r) = range_in(func, value, &self.vars) {
            self.vars.insert(v, r);
        }
        if let Some((u, c)) = self.unit(func, value)
            && let Some(&(m, r)) = self.multiple.get(&u)
        {
            self.multiple.insert(v, (m, (r + c).rem_euclid(m)));
        }
    }

    /// `e` as `v + c` exactly (no step wraps: its range is `v`'s moved by `c`), through
    /// widening casts.
    fn unit(&self, func: &Func, e: ExprId) -> Option<(VarId, i128)> {
        fn walk(func: &Func, e: ExprId) -> Option<(VarId, i128)> {
            let int = |x: ExprId| match func.exprs[x].kind {
                ExprKind::Int(k) => Some(k),
                _ => None,
            };
            match func.exprs[e].kind {
                ExprKind::Var(v) => Some((v, 0)),
                ExprKind::Cast(a) if func.exprs[a].ty.is_int() => walk(func, a),
                ExprKind::Binary(BinOp::Add, a, b) => match (int(a), int(b)) {
                    (_, Some(c)) => walk(func, a).map(|(v, k)| (v, k + c)),
                    (Some(c), _) => walk(func, b).map(|(v, k)| (v, k + c)),
                    _ => None,
                },
                ExprKind::Binary(BinOp::Sub, a, b) => {
                    let c = int(b)?;
                    walk(func, a).map(|(v, k)| (v, k - c))
                }
                _ => None,
            }
        }
        if !func.exprs[e].ty.is_int() {
            return None;
        }
        let (v, c) = walk(func, e)?;
        let r = *self.vars.get(&v)?;
        (range_in(func, e, &self.vars)? == (r.0 + c, r.1 + c)).then_some((v, c))
    }

    /// Narrows the ranges of the variables by the conjuncts of `cond`, which holds.
    fn refine(&mut self, func: &Func, cond: ExprId) {
        let ExprKind::Binary(op, a, b) = func.exprs[cond].kind else {
            return;
        };
        if op == BinOp::And {
            self.refine(func, a);
            self.refine(func, b);
            return;
        }
        let (Some((v, c)), Some(rb)) = (self.unit(func, a), range_in(func, b, &self.vars)) else {
            return;
        };
        let Some(r) = self.vars.get_mut(&v) else {
            return;
        };
        match op {
            BinOp::Lt => r.1 = r.1.min(rb.1 - 1 - c),
            BinOp::Le => r.1 = r.1.min(rb.1 - c),
            BinOp::Gt => r.0 = r.0.max(rb.0 + 1 - c),
            BinOp::Ge => r.0 = r.0.max(rb.0 - c),
            _ => {}
        }
    }

    /// `(v >> k) + floor(c / 2^k)` for `(v + c) / 2^k` or `(v + c) >> k` (see the module's
    /// documentation).
    fn split_multiple(&self, func: &mut Func, n: Node) -> Option<ExprId> {
        let Node { e, op, a, b } = n;
        let t = func.exprs[e].ty;
        let ExprKind::Int(kb) = func.exprs[b].kind else {
            return None;
        };
        if !self.what.narrow {
            return None;
        }
        let k = match op {
            BinOp::Div if kb > 1 && kb & (kb - 1) == 0 => kb.trailing_zeros(),
            BinOp::Shr if (1..30).contains(&kb) => kb as u32,
            _ => return None,
        };
        let (v, c) = self.unit(func, a)?;
        let &(m, r) = self.multiple.get(&v)?;
        let (vr, ar) = (*self.vars.get(&v)?, range_in(func, a, &self.vars)?);
        if r != 0 || m % (1 << k) != 0 || vr.0 < 0 || (op == BinOp::Div && ar.0 < 0) {
            return None;
        }
        if func.exprs[a].ty != t || func.exprs[b].ty != t || func.vars[v].ty != t {
            return None;
        }
        let var = func.expr(ExprKind::Var(v), t);
        let sh = func.int(k as i128, t);
        let high = func.binary(BinOp::Shr, var, sh, t);
        let low = c.div_euclid(1 << k);
        if low == 0 {
            return Some(high);
        }
        let low = func.int(low, t);
        let sum = func.binary(BinOp::Add, high, low, t);
        Some(self.exact(func, sum))
    }

    /// `e` marked exact where it is an integer `+ - *` of 32 or 64 bits whose operands' ranges
    /// prove it never leaves its type (a new node: the same node may be used where the ranges
    /// are wider).
    fn exact(&self, func: &mut Func, e: ExprId) -> ExprId {
        let x = &func.exprs[e];
        let ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) = x.kind else {
            return e;
        };
        if x.exact || !matches!(x.ty, Scalar::I32 | Scalar::I64) || func.exprs[a].ty != x.ty {
            return e;
        }
        let t = x.ty.range().expect("an integer type");
        let (Some(ra), Some(rb)) = (range_in(func, a, &self.vars), range_in(func, b, &self.vars))
        else {
            return e;
        };
        let r = match op {
            BinOp::Add => crate::lir::range::add(ra, rb),
            BinOp::Sub => crate::lir::range::add(ra, (-rb.1, -rb.0)),
            _ => crate::lir::range::mul(ra, rb),
        };
        if !r.is_some_and(|r| r.0 >= t.0 && r.1 <= t.1) {
            return e;
        }
        let node = crate::lir::Expr {
            exact: true,
            ..func.exprs[e].clone()
        };
        func.exprs.push(node)
    }

    /// `(long)(a op b)` for `(long)a op (long)b` (see the module's documentation).
    fn narrow(&self, func: &mut Func, n: Node) -> Option<ExprId> {
        let Node { e, op, a, b } = n;
        let int = (i32::MIN as i128, i32::MAX as i128);
        let fits = |r: (i128, i128)| r.0 >= int.0 && r.1 <= int.1;
        let r = range_in(func, e, &self.vars)?;
        // A range at the type's extremes may be the type's own (a wrapped sum): no proof.
        if !fits(r) {
            return None;
        }
        let operand = |func: &mut Func, x: ExprId| -> Option<ExprId> {
            match func.exprs[x].kind {
                ExprKind::Cast(y) if func.exprs[y].ty == Scalar::I32 => Some(y),
                ExprKind::Int(c) if fits((c, c)) => Some(func.int(c, Scalar::I32)),
                _ => None,
            }
        };
        let (x, y) = (operand(func, a)?, operand(func, b)?);
        let n = func.binary(op, x, y, Scalar::I32);
        let n = crate::lir::pass::simplify::reassociate(func, n);
        let n = self.exact(func, n);
        Some(func.cast(n, Scalar::I64))
    }

    /// `mul24(a, b)` where `a` and `b` fit 24 bits and `a * b` 32.
    fn product(&self, func: &mut Func, n: Node) -> Option<ExprId> {
        let Node { e, a, b, .. } = n;
        let fits = |r: (i128, i128)| r.0 >= M24.0 && r.1 <= M24.1;
        let (ra, rb) = (
            range_in(func, a, &self.vars)?,
            range_in(func, b, &self.vars)?,
        );
        let p = crate::lir::range::mul(ra, rb)?;
        if !fits(ra) || !fits(rb) || p.0 < i32::MIN as i128 || p.1 > i32::MAX as i128 {
            return None;
        }
        let t = func.exprs[e].ty;
        Some(func.expr(ExprKind::Call(Builtin::Mul24, vec![a, b]), t))
    }

    fn division(&self, func: &mut Func, n: Node) -> Option<ExprId> {
        let Node { e, op, a, b } = n;
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
        let host = matches!(func.exprs[b].kind, ExprKind::Call(Builtin::NonZero, _));
        if host || rb.is_some_and(|r| r.0 > 0 || r.1 < 0) {
            return Some(q);
        }
        // The zero test keeps the checked division in one arm and the float one in the other,
        // each holding `a` and `b`: a fold in either (a window of host length, read by a loop
        // the kernel printer runs before the statement) cannot sit in an arm, so such a
        // division stays the checked one (found by the random programs).
        if has_fold(func, a) || has_fold(func, b) {
            return None;
        }
        let zero = func.int(0, t);
        let is_zero = func.binary(BinOp::Eq, b, zero, Scalar::Bool);
        Some(func.expr(ExprKind::Select(is_zero, e, q), t))
    }
}

/// Whether expression `e` holds a fold.
fn has_fold(func: &Func, e: ExprId) -> bool {
    matches!(func.exprs[e].kind, ExprKind::Fold { .. })
        || crate::lir::visit::expr_children(&func.exprs[e].kind)
            .iter()
            .any(|c| has_fold(func, *c))
}

#[cfg(test)]
mod tests {
    use super::FLOAT_DIV_LIMIT;

    /// The float moved by `k` units in the last place.
    fn ulps(x: f32, k: i32) -> f32 {
        f32::from_bits((x.to_bits() as i32 + k) as u32)
    }

    #[test]
    fn float_division_is_exact() {
        let lim = FLOAT_DIV_LIMIT as i64;
        let mut divisors: Vec<i64> = (1..=300).collect();
        divisors.extend([
            511,
            1000,
            4093,
            65_535,
            (1 << 20) - 1,
            1 << 20,
            (1 << 24) + 1,
            1 << 30,
            i32::MAX as i64,
        ]);
        divisors.extend(divisors.clone().iter().map(|d| -d));
        divisors.push(i32::MIN as i64);
        let mut checked = 0u64;
        for &b in &divisors {
            // Dividends around every multiple of b near 0 and near the limit, and the ends.
            let mut dividends: Vec<i64> = (0..2000).chain(lim - 2000..lim).collect();
            for q in [1, 2, 3, 7, 100, lim / b.abs(), lim / b.abs() - 1] {
                let m = q * b.abs();
                dividends.extend((m - 2..=m + 2).filter(|a| (0..lim).contains(a)));
            }
            for a in dividends {
                let want = a / b;
                let exact = (a as f32 + 0.5) / b as f32;
                for k in -3..=3 {
                    let got = ulps(exact, k) as i32 as i64;
                    assert_eq!(got, want, "{a} / {b} with the division off by {k} ulp");
                    checked += 1;
                }
            }
        }
        assert!(checked > 1_000_000);
    }
}
