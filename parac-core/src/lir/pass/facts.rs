//! What the interior of a partitioned loop assumes (`Fact`) and how the guard checks it: each
//! assumption is about an index that is monotone in the loop's variable (`mono`), so checking
//! it at the interior's two ends (`fact_guard`, with the variable replaced by `at`) checks it
//! everywhere in between; `mono` also bounds its magnitude given leaves within ±[`LEAF`], so
//! that no index can wrap.

use crate::ir::{BinOp, Builtin, Scalar};
use crate::lir::visit::{expr_children, with_children};
use crate::lir::{ExprId, ExprKind, Func, VarId};
use std::collections::HashMap;

/// The bound of every leaf of an index the guard checks (sizes, dimensions, the loop's ends).
pub(super) const LEAF: i128 = 1 << 24;

/// How an index moves with the loop's variable.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Dir {
    Const,
    Inc,
    Dec,
}

impl Dir {
    fn flip(self) -> Dir {
        match self {
            Dir::Inc => Dir::Dec,
            Dir::Dec => Dir::Inc,
            Dir::Const => Dir::Const,
        }
    }
    /// Both together: the direction of a sum, a `min` or a `max`.
    fn join(self, o: Dir) -> Option<Dir> {
        match (self, o) {
            (Dir::Const, d) | (d, Dir::Const) => Some(d),
            (a, b) if a == b => Some(a),
            _ => None,
        }
    }
}

/// What the interior assumes of an index `e`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Fact {
    /// `0 <= e < bound`.
    Inside(ExprId, ExprId),
    /// `e >= 0`.
    NonNeg(ExprId),
    /// `e < bound`.
    Below(ExprId, ExprId),
    /// `e != c`.
    Not(ExprId, ExprId),
}

/// `c` where `e` is the loop's variable plus the constant `c` (through widening casts).
pub(crate) fn unit_offset(func: &Func, e: ExprId, var: VarId) -> Option<i128> {
    affine(func, e, var).and_then(|(s, c)| (s == 1).then_some(c))
}

/// `(stride, offset)` where `e` is `stride * var + offset` (through widening casts).
pub(crate) fn affine(func: &Func, e: ExprId, var: VarId) -> Option<(i128, i128)> {
    affine_base(func, e, var, &|_| false).map(|(s, c, _)| (s, c))
}

/// A loop-invariant part of an index and its coefficient (see [`affine_base`]).
pub(crate) type Base = (ExprId, i128);

/// `(stride, offset, base)` where `e` is `stride * var + offset + k * b` for `base` `(b, k)`,
/// `b` an expression that `invariant` accepts (one that does not change with `var`: a size, a
/// host scalar, an outer variable): `N - 1 - y` is `(-1, 0, (N - 1, 1))`, a reversed row;
/// `3 * (W - y) + 2` is `(-3, 2, (W, 3))`; `y + dx` is `(1, 0, (dx, 1))`; `y - ty` is
/// `(1, 0, (ty, -1))`. Through widening
/// casts. Where `invariant` accepts nothing, this is [`affine`].
pub(crate) fn affine_base(
    func: &Func,
    e: ExprId,
    var: VarId,
    invariant: &dyn Fn(ExprId) -> bool,
) -> Option<(i128, i128, Option<Base>)> {
    let int = |x: ExprId| match func.exprs[x].kind {
        ExprKind::Int(k) => Some(k),
        _ => None,
    };
    let go = |x: ExprId| affine_base(func, x, var, invariant);
    // `base ± (affine in var)`, where the affine side has no base of its own.
    let with_base = |b: ExprId, a: ExprId, sign: i128| match go(a)? {
        (s, c, None) if invariant(b) => Some((sign * s, sign * c, Some((b, 1)))),
        _ => None,
    };
    match &func.exprs[e].kind {
        ExprKind::Var(w) if *w == var => Some((1, 0, None)),
        ExprKind::Cast(a) => go(*a),
        ExprKind::Binary(BinOp::Add, a, b) => match (int(*a), int(*b)) {
            (_, Some(k)) => go(*a).map(|(s, c, r)| (s, c + k, r)),
            (Some(k), _) => go(*b).map(|(s, c, r)| (s, c + k, r)),
            _ => with_base(*b, *a, 1).or_else(|| with_base(*a, *b, 1)),
        },
        ExprKind::Binary(BinOp::Mul, a, b) => {
            let (k, x) = match (int(*a), int(*b)) {
                (_, Some(k)) => (k, *a),
                (Some(k), _) => (k, *b),
                _ => return None,
            };
            go(x).map(|(s, c, r)| (s * k, c * k, r.map(|(b, m)| (b, m * k))))
        }
        ExprKind::Binary(BinOp::Sub, a, b) => match int(*b) {
            Some(k) => go(*a).map(|(s, c, r)| (s, c - k, r)),
            // `base - affine`, or `affine - base` (a point's place in its tile, `y - ty`).
            None => with_base(*a, *b, -1).or_else(|| match go(*a)? {
                (s, c, None) if invariant(*b) => Some((s, c, Some((*b, -1)))),
                _ => None,
            }),
        },
        _ => None,
    }
}

/// `e` with the variable `var` replaced by `y` (of the variable's type). Where `y` is a
/// constant, a conversion of a constant is folded (when the value fits the target type), so
/// that the result's affine form is plain ([`affine`]). Other nodes that do not read `var` are
/// kept as they are (what is shared stays shared, each node visited once); rebuilt ones lose `exact`, which
/// was proved of the old operands.
pub(super) fn at(func: &mut Func, e: ExprId, var: VarId, y: ExprId) -> ExprId {
    fn go(
        func: &mut Func,
        e: ExprId,
        var: VarId,
        y: ExprId,
        memo: &mut HashMap<ExprId, ExprId>,
    ) -> ExprId {
        if let Some(r) = memo.get(&e) {
            return *r;
        }
        let kind = func.exprs[e].kind.clone();
        let kids = expr_children(&kind);
        let r = match kind {
            ExprKind::Var(v) if v == var => y,
            _ if kids.is_empty() => e,
            _ => {
                let new: Vec<ExprId> = kids.iter().map(|c| go(func, *c, var, y, memo)).collect();
                let t = func.exprs[e].ty;
                match (&kind, &func.exprs[new[0]].kind) {
                    (ExprKind::Cast(_), ExprKind::Int(k))
                        if t.range().is_some_and(|(lo, hi)| (lo..=hi).contains(k)) =>
                    {
                        let k = *k;
                        func.int(k, t)
                    }
                    _ if new == kids => e,
                    _ => func.expr(with_children(&kind, &new), t),
                }
            }
        };
        memo.insert(e, r);
        r
    }
    go(func, e, var, y, &mut HashMap::new())
}

/// The guard's test of one fact over `[y_first, y_last]`.
pub(super) fn fact_guard(func: &mut Func, f: Fact, var: VarId, y0: ExprId, y1: ExprId) -> ExprId {
    let b = Scalar::Bool;
    // Every fact is made about monotone indices; one that is not fails the guard (a net: the
    // two ends would prove nothing about it).
    let (e, other) = match f {
        Fact::Inside(e, d) | Fact::Below(e, d) | Fact::Not(e, d) => (e, Some(d)),
        Fact::NonNeg(e) => (e, None),
    };
    let monotone = |x: ExprId| mono(func, x, var, &HashMap::new()).is_some();
    if !monotone(e) || other.is_some_and(|d| !monotone(d)) {
        return func.int(0, b);
    }
    let dir =
        |func: &Func, e: ExprId| mono(func, e, var, &HashMap::new()).map_or(Dir::Const, |m| m.0);
    let ends = |func: &mut Func, e: ExprId| {
        let (a, z) = (at(func, e, var, y0), at(func, e, var, y1));
        match dir(func, e) {
            Dir::Dec => (z, a),
            _ => (a, z),
        }
    };
    match f {
        Fact::Inside(e, d) => {
            let (min, max) = ends(func, e);
            let zero = func.int(0, func.exprs[e].ty);
            let d = func.cast(d, func.exprs[e].ty);
            let lo = func.binary(BinOp::Ge, min, zero, b);
            let hi = func.binary(BinOp::Lt, max, d, b);
            func.binary(BinOp::And, lo, hi, b)
        }
        Fact::NonNeg(e) => {
            let (min, _) = ends(func, e);
            let zero = func.int(0, func.exprs[e].ty);
            func.binary(BinOp::Ge, min, zero, b)
        }
        Fact::Below(e, d) => {
            let (_, max) = ends(func, e);
            func.binary(BinOp::Lt, max, d, b)
        }
        Fact::Not(e, c) => {
            let (min, max) = ends(func, e);
            let below = func.binary(BinOp::Lt, c, min, b);
            let above = func.binary(BinOp::Gt, c, max, b);
            func.binary(BinOp::Or, below, above, b)
        }
    }
}

/// The tests of one fact at a single point (the loop's variable as it is), each a comparison:
/// what the GPU form of partitioning checks per work-item. No monotonicity is needed there, and
/// no bound on the leaves: a test computes the very index the interior uses, with the same
/// arithmetic.
pub(super) fn point_tests(func: &mut Func, f: Fact) -> Vec<ExprId> {
    let b = Scalar::Bool;
    let zero = |func: &mut Func, e: ExprId| func.int(0, func.exprs[e].ty);
    match f {
        Fact::Inside(e, d) => {
            let z = zero(func, e);
            let d = func.cast(d, func.exprs[e].ty);
            vec![
                func.binary(BinOp::Ge, e, z, b),
                func.binary(BinOp::Lt, e, d, b),
            ]
        }
        Fact::NonNeg(e) => {
            let z = zero(func, e);
            vec![func.binary(BinOp::Ge, e, z, b)]
        }
        Fact::Below(e, d) => vec![func.binary(BinOp::Lt, e, d, b)],
        Fact::Not(e, c) => vec![func.binary(BinOp::Ne, e, c, b)],
    }
}

/// How `e` moves with `var`, and a bound on its magnitude given leaves within ±[`LEAF`];
/// `None` where it is not monotone, could wrap, or reads memory. `lets` maps inlined
/// variables (none left after the interior's rewriting).
pub(super) fn mono(
    func: &Func,
    e: ExprId,
    var: VarId,
    lets: &HashMap<VarId, ExprId>,
) -> Option<(Dir, i128)> {
    let x = &func.exprs[e];
    let t = x.ty;
    if !matches!(t, Scalar::I32 | Scalar::I64) {
        return None;
    }
    let cap = if t == Scalar::I32 {
        i32::MAX as i128
    } else {
        1i128 << 62
    };
    let go = |a: ExprId| mono(func, a, var, lets);
    let r = match &x.kind {
        ExprKind::Int(v) => (Dir::Const, v.abs()),
        ExprKind::Var(v) if *v == var => (Dir::Inc, LEAF),
        ExprKind::Var(v) => match lets.get(v) {
            Some(a) => go(*a)?,
            None => (Dir::Const, LEAF),
        },
        ExprKind::Size(_) | ExprKind::Dim(..) => (Dir::Const, LEAF),
        ExprKind::Cast(a) => {
            let from = func.exprs[*a].ty;
            if !matches!(from, Scalar::I32 | Scalar::I64) || from.bytes() > t.bytes() {
                return None;
            }
            go(*a)?
        }
        ExprKind::Binary(op, a, c) => {
            let (da, ma) = go(*a)?;
            let (dc, mc) = go(*c)?;
            let k = match func.exprs[*c].kind {
                ExprKind::Int(k) => Some(k),
                _ => None,
            };
            match op {
                BinOp::Add => (da.join(dc)?, ma + mc),
                BinOp::Sub => (da.join(dc.flip())?, ma + mc),
                BinOp::Mul => match (k, func.exprs[*a].kind.clone()) {
                    (Some(k), _) => (
                        if k >= 0 { da } else { da.flip() },
                        ma.checked_mul(k.abs())?,
                    ),
                    (None, ExprKind::Int(k)) => (
                        if k >= 0 { dc } else { dc.flip() },
                        mc.checked_mul(k.abs())?,
                    ),
                    _ if da == Dir::Const && dc == Dir::Const => (Dir::Const, ma.checked_mul(mc)?),
                    _ => return None,
                },
                BinOp::Div | BinOp::Shr if k.is_some_and(|k| k > 0) => {
                    if *op == BinOp::Shr && k.is_some_and(|k| k >= 31) {
                        return None;
                    }
                    (da, ma)
                }
                _ => return None,
            }
        }
        ExprKind::Call(Builtin::Min | Builtin::Max | Builtin::Clamp, args) => {
            let mut r = (Dir::Const, 0);
            for a in args {
                let (d, m) = go(*a)?;
                r = (r.0.join(d)?, r.1.max(m));
            }
            r
        }
        _ => return None,
    };
    (r.1 <= cap).then_some(r)
}
