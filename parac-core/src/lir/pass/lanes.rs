//! Lanes by divisor, a step of `partition` on an interior: where indices divide the loop's
//! variable by a constant `K` (`(y + c) / K`, `(y + c) >> s`: upsampling), the interior runs
//! `i` over `K` points at a time, its body written out `K` times (`y = K i + p`, lane `p`), so
//! that each such index becomes `i + floor((p + c) / K)`: the variable plus a constant, a slice a
//! back end reads with no gather. A `min`, `max` or `clamp` of such an index with a
//! loop-invariant bound is dropped where the interior keeps it inactive (the last column of an
//! upsampling clamps): the interior's range shrinks so that it is, and the facts that say so are
//! checked by the partition's guard like every other. The interior starts at a multiple of `K`,
//! at or above 0, so that `y / K` is `i` (`/` truncates; for `/`, `y + c >= 0` is a fact too).

use super::facts::{Dir, Fact, at, mono, unit_offset};
use crate::ir::{BinOp, Builtin, Scalar};
use crate::lir::visit::{BodyCopy, expr_children, mentions, preorder, stmt_parts, with_children};
use crate::lir::{ExprId, ExprKind, Func, Stmt, StmtId, VarId};
use std::collections::{HashMap, HashSet};

/// The interior written out in lanes.
pub(super) struct Lanes {
    /// The number of lanes.
    pub k: i64,
    /// The new loop variable: `y = k i + p`.
    pub var: VarId,
    /// The `k` copies of the body.
    pub body: StmtId,
    /// What the copies assume, about `y`.
    pub facts: Vec<Fact>,
    /// Loop-invariant leaves of those facts (the guard bounds them).
    pub leaves: Vec<ExprId>,
    /// Bounds of the interior: `y >= lower` and `y < upper` (`i64`).
    pub lower: Vec<ExprId>,
    pub upper: Vec<ExprId>,
}

/// The divisor of `e` where it is `u / K` or `u >> s` with `u` the variable plus a constant.
fn divides(func: &Func, e: ExprId, y: VarId) -> Option<(i64, ExprId, bool)> {
    match func.exprs[e].kind {
        ExprKind::Binary(op @ (BinOp::Div | BinOp::Shr), u, d)
            if matches!(func.exprs[e].ty, Scalar::I32 | Scalar::I64)
                && unit_offset(func, u, y).is_some() =>
        {
            let ExprKind::Int(v) = func.exprs[d].kind else {
                return None;
            };
            let k = match op {
                BinOp::Div if (2..=8).contains(&v) => v as i64,
                BinOp::Shr if (1..=3).contains(&v) => 1i64 << v,
                _ => return None,
            };
            Some((k, u, op == BinOp::Div))
        }
        _ => None,
    }
}

fn scan(func: &Func, s: StmtId, y: VarId, ks: &mut Vec<i64>) {
    let (es, ss) = stmt_parts(&func.stmts[s]);
    for e in es {
        preorder(func, e, |x| {
            if let Some((k, ..)) = divides(func, x, y)
                && !ks.contains(&k)
            {
                ks.push(k);
            }
            true
        });
    }
    for c in ss {
        scan(func, c, y, ks);
    }
}

struct Lane<'a> {
    func: &'a mut Func,
    y: VarId,
    i: VarId,
    k: i64,
    p: i64,
    /// Variables the body binds, renamed in this lane.
    renamed: HashMap<VarId, VarId>,
    /// Variables bound in the body (not loop-invariant).
    inner: &'a HashSet<VarId>,
    memo: HashMap<ExprId, ExprId>,
    out: &'a mut Lanes,
}

/// The interior `body` (its loop's variable `y`, the variables it binds `inner`) in lanes, or
/// `None` where no index divides `y` by one constant.
pub(super) fn split(
    func: &mut Func,
    y: VarId,
    body: StmtId,
    inner: &HashSet<VarId>,
) -> Option<Lanes> {
    let mut ks = Vec::new();
    scan(func, body, y, &mut ks);
    let [k] = ks[..] else {
        return None;
    };
    let i = func.var("lane", Scalar::I32);
    let mut out = Lanes {
        k,
        var: i,
        body,
        facts: vec![],
        leaves: vec![],
        lower: vec![],
        upper: vec![],
    };
    let mut copies = Vec::new();
    for p in 0..k {
        let mut lane = Lane {
            func,
            y,
            i,
            k,
            p,
            renamed: HashMap::new(),
            inner,
            memo: HashMap::new(),
            out: &mut out,
        };
        copies.push(lane.copy(body));
    }
    out.body = func.stmt(Stmt::Block(copies));
    Some(out)
}

impl Lane<'_> {
    fn int(&mut self, v: i64, t: Scalar) -> ExprId {
        self.func.int(v as i128, t)
    }

    /// `i` plus `a`, at type `t`.
    fn i_plus(&mut self, a: i64, t: Scalar) -> ExprId {
        let i = self.func.expr(ExprKind::Var(self.i), Scalar::I32);
        let i = self.func.cast(i, t);
        if a == 0 {
            return i;
        }
        let c = self.int(a, t);
        self.func.binary(BinOp::Add, i, c, t)
    }

    /// `e` (about `i`) as an expression of `y` (`i = y / k`), for a fact.
    fn of_y(&mut self, e: ExprId) -> ExprId {
        let yv = self.func.expr(ExprKind::Var(self.y), Scalar::I32);
        let k = self.int(self.k, Scalar::I32);
        let q = self.func.binary(BinOp::Div, yv, k, Scalar::I32);
        at(self.func, e, self.i, q)
    }

    /// Whether `b` is a bound the guard can check (monotone, invariant, small).
    fn bound(&self, b: ExprId) -> bool {
        mono(self.func, b, self.y, &HashMap::new()).is_some_and(|m| m.0 == Dir::Const)
            && invariant(self.func, b, self.inner, self.y)
    }

    /// `min(e, b)` dropped to `e` (`less`) or `max(e, b)` to `e`: the fact, the interior's
    /// bound; false where `e` is not `i` plus a constant or `b` is not a checkable bound.
    fn drop_bound(&mut self, e: ExprId, b: ExprId, less: bool) -> bool {
        let Some(a) = unit_offset(self.func, e, self.i) else {
            return false;
        };
        if !self.bound(b) {
            return false;
        }
        let t = self.func.exprs[e].ty;
        let ey = self.of_y(e);
        let (i64t, k) = (Scalar::I64, self.k);
        let b64 = self.func.cast(b, i64t);
        let a64 = self.int(a as i64, i64t);
        let ba = self.func.binary(BinOp::Sub, b64, a64, i64t);
        let kk = self.int(k, i64t);
        if less {
            // e <= b, i.e. e < b + 1; y < k (b - a + 1).
            let one = self.int(1, t);
            let b1 = self.func.binary(BinOp::Add, b, one, t);
            if mono(self.func, ey, self.y, &HashMap::new()).is_none() || !self.bound(b1) {
                return false;
            }
            self.out.facts.push(Fact::Below(ey, b1));
            let one64 = self.int(1, i64t);
            let ba1 = self.func.binary(BinOp::Add, ba, one64, i64t);
            let u = self.func.binary(BinOp::Mul, kk, ba1, i64t);
            self.out.upper.push(u);
        } else {
            // e >= b, i.e. e - b >= 0; y >= k (b - a).
            let d = self.func.binary(BinOp::Sub, ey, b, t);
            if mono(self.func, d, self.y, &HashMap::new()).is_none() {
                return false;
            }
            self.out.facts.push(Fact::NonNeg(d));
            let l = self.func.binary(BinOp::Mul, kk, ba, i64t);
            self.out.lower.push(l);
        }
        self.leaves(b);
        true
    }

    fn leaves(&mut self, e: ExprId) {
        let func = &*self.func;
        let leaves = &mut self.out.leaves;
        preorder(func, e, |x| {
            if matches!(
                func.exprs[x].kind,
                ExprKind::Var(_) | ExprKind::Size(_) | ExprKind::Dim(..)
            ) {
                leaves.push(x);
            }
            true
        });
    }

    fn expr(&mut self, e: ExprId) -> ExprId {
        if let Some(n) = self.memo.get(&e) {
            return *n;
        }
        let n = self.expr_new(e);
        self.memo.insert(e, n);
        n
    }

    fn expr_new(&mut self, e: ExprId) -> ExprId {
        let t = self.func.exprs[e].ty;
        // Rewritten only where `u` is an index the guard can check (monotone, cannot wrap): its
        // fact `u >= 0` needs that; elsewhere `y` is substituted below, which is exact too.
        let checkable = |l: &Self, u: ExprId| mono(l.func, u, l.y, &HashMap::new()).is_some();
        if let Some((k, u, div)) =
            divides(self.func, e, self.y).filter(|(_, u, _)| checkable(self, *u))
        {
            debug_assert_eq!(k, self.k);
            let c = unit_offset(self.func, u, self.y).expect("a unit offset") as i64;
            if div {
                self.out.facts.push(Fact::NonNeg(u));
            }
            return self.i_plus((self.p + c).div_euclid(self.k), t);
        }
        let kind = self.func.exprs[e].kind.clone();
        match kind {
            ExprKind::Var(v) if v == self.y => {
                let k = self.int(self.k, Scalar::I32);
                let i = self.func.expr(ExprKind::Var(self.i), Scalar::I32);
                let ki = self.func.binary(BinOp::Mul, k, i, Scalar::I32);
                let p = self.int(self.p, Scalar::I32);
                let y = self.func.binary(BinOp::Add, ki, p, Scalar::I32);
                self.func.cast(y, t)
            }
            ExprKind::Var(v) => match self.renamed.get(&v) {
                Some(w) => self.func.expr(ExprKind::Var(*w), t),
                None => e,
            },
            ExprKind::Let(v, a, b) => {
                let a = self.expr(a);
                let w = self.rename(v);
                let b = self.expr(b);
                self.func.expr(ExprKind::Let(w, a, b), t)
            }
            ExprKind::Call(f @ (Builtin::Min | Builtin::Max), args) if args.len() == 2 => {
                let (x, b) = (self.expr(args[0]), self.expr(args[1]));
                if self.drop_bound(x, b, f == Builtin::Min) {
                    return x;
                }
                self.func.expr(ExprKind::Call(f, vec![x, b]), t)
            }
            ExprKind::Call(Builtin::Clamp, args) if args.len() == 3 => {
                let (x, lo, hi) = (self.expr(args[0]), self.expr(args[1]), self.expr(args[2]));
                // Both bounds or neither, so that the facts match what is dropped.
                if unit_offset(self.func, x, self.i).is_some() && self.bound(lo) && self.bound(hi) {
                    let o = &self.out;
                    let mark = (o.facts.len(), o.leaves.len(), o.lower.len(), o.upper.len());
                    if self.drop_bound(x, lo, false) && self.drop_bound(x, hi, true) {
                        return x;
                    }
                    let o = &mut self.out;
                    o.facts.truncate(mark.0);
                    o.leaves.truncate(mark.1);
                    o.lower.truncate(mark.2);
                    o.upper.truncate(mark.3);
                }
                self.func
                    .expr(ExprKind::Call(Builtin::Clamp, vec![x, lo, hi]), t)
            }
            kind => {
                let kids = expr_children(&kind);
                let new: Vec<ExprId> = kids.iter().map(|c| self.expr(*c)).collect();
                if new == kids {
                    return e;
                }
                self.func.expr(with_children(&kind, &new), t)
            }
        }
    }

    fn rename(&mut self, v: VarId) -> VarId {
        if let Some(w) = self.renamed.get(&v) {
            return *w;
        }
        let (name, ty) = (self.func.vars[v].name.clone(), self.func.vars[v].ty);
        let w = self.func.var(&name, ty);
        self.renamed.insert(v, w);
        w
    }
}

impl BodyCopy for Lane<'_> {
    fn func(&mut self) -> &mut Func {
        self.func
    }
    fn expr(&mut self, e: ExprId) -> ExprId {
        Lane::expr(self, e)
    }
    fn bind(&mut self, v: VarId) -> VarId {
        self.rename(v)
    }
}

/// Whether `e` names no variable the body binds, nor `y`.
fn invariant(func: &Func, e: ExprId, inner: &HashSet<VarId>, y: VarId) -> bool {
    !mentions(func, e, |v| v == y || inner.contains(&v))
}
