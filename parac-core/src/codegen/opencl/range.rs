//! Value ranges of integer expressions and the peephole rewrites they prove safe (`peep`,
//! `m24`): a power-of-two division or remainder of a value proven non-negative becomes a shift
//! or a mask (another constant divisor an unsigned division), `min(max(x, lo), hi)` becomes `clamp` where `lo <= hi` is proven, an integer
//! `abs` becomes OpenCL's where the value cannot be the type's minimum, and with `m24` a product
//! (or product plus term) of operands proven to fit 24 bits, whose result fits 32, becomes
//! `mul24` (`mad24`).
//!
//! Ranges are intervals; anything not understood gets its type's whole range, which is always
//! sound.

use super::*;

type Range = (i128, i128);

const M24: Range = (-(1 << 23), (1 << 23) - 1);

/// See [`crate::lir::pass::peephole::FLOAT_DIV_LIMIT`] for why a float division is exact below it.
use crate::lir::pass::peephole::FLOAT_DIV_LIMIT;

fn within(r: Range, outer: Range) -> bool {
    r.0 >= outer.0 && r.1 <= outer.1
}

use crate::lir::range::{add, mul};

/// A constant integer, looking through casts.
fn const_int(e: &Expr) -> Option<i128> {
    match &e.kind {
        ExprKind::Int(v) => Some(*v),
        ExprKind::Cast(inner, to) if to.is_int() => const_int(inner),
        _ => None,
    }
}

impl K<'_> {
    /// The range of an integer expression (of a block's elements for a block); `None` for
    /// floats.
    pub(super) fn range(&self, e: &Expr) -> Option<Range> {
        let t = e.ty.elem();
        let whole = t.range()?;
        let fit = |r: Range| if within(r, whole) { r } else { whole };
        // An interval arithmetic that overflows `i128` knows nothing: the whole range.
        let fit_or_whole = |r: Option<Range>| r.map_or(whole, fit);
        let both = |a: &Expr, b: &Expr| Some((self.range(a)?, self.range(b)?));
        let r = match &e.kind {
            ExprKind::Int(v) => (*v, *v),
            ExprKind::Load(a) | ExprKind::Block(a) => {
                let mat = &self.f.matrices[self.r.accesses[*a].matrix];
                match &mat.kind {
                    MatrixKind::Const(vals) if !mat.elem.is_float() && !vals.is_empty() => {
                        let lo = vals.iter().fold(f64::INFINITY, |m, v| m.min(*v));
                        let hi = vals.iter().fold(f64::NEG_INFINITY, |m, v| m.max(*v));
                        (lo as i128, hi as i128)
                    }
                    _ => mat.elem.range()?,
                }
            }
            ExprKind::Local(l) => self.ranges.borrow().get(l).copied().unwrap_or(whole),
            ExprKind::Var(s) => match self.r.dims[*s].as_ref().map(|d| &d.lo.kind) {
                Some(ExprKind::Int(lo)) => (*lo, i32::MAX as i128),
                _ => whole,
            },
            ExprKind::Size(_) => (0, i32::MAX as i128),
            ExprKind::Cast(inner, to) => {
                if *to == Scalar::Bool {
                    (0, 1)
                } else {
                    match self.range(inner) {
                        Some(r) => fit(r),
                        None => whole,
                    }
                }
            }
            ExprKind::Unary(UnOp::Neg, a) => match self.range(a) {
                Some((lo, hi)) => fit_or_whole(hi.checked_neg().zip(lo.checked_neg())),
                None => whole,
            },
            ExprKind::Unary(UnOp::Plus, a) => self.range(a).unwrap_or(whole),
            ExprKind::Binary(op, a, b) => {
                let Some(((al, ah), (bl, bh))) = both(a, b) else {
                    return Some(whole);
                };
                let c = const_int(b);
                match op {
                    BinOp::Add => fit_or_whole(add((al, ah), (bl, bh))),
                    BinOp::Sub => fit_or_whole(al.checked_sub(bh).zip(ah.checked_sub(bl))),
                    BinOp::Mul | BinOp::ElemMul => fit_or_whole(mul((al, ah), (bl, bh))),
                    BinOp::Div if c.is_some_and(|c| c > 0) => {
                        let c = c.unwrap_or(1);
                        (al / c, ah / c)
                    }
                    BinOp::Rem if al >= 0 && c.is_some_and(|c| c > 0) => (0, c.unwrap_or(1) - 1),
                    BinOp::Shr if c.is_some_and(|c| (0..31).contains(&c)) => {
                        let c = c.unwrap_or(0);
                        (al >> c, ah >> c)
                    }
                    BinOp::BitAnd if al >= 0 || bl >= 0 => (
                        0,
                        if al >= 0 && bl >= 0 {
                            ah.min(bh)
                        } else {
                            ah.max(bh)
                        },
                    ),
                    BinOp::Eq
                    | BinOp::Ne
                    | BinOp::Lt
                    | BinOp::Le
                    | BinOp::Gt
                    | BinOp::Ge
                    | BinOp::And
                    | BinOp::Or => (0, 1),
                    _ => whole,
                }
            }
            ExprKind::Call(b, args) => {
                let rs: Option<Vec<Range>> = args.iter().map(|a| self.range(a)).collect();
                let Some(rs) = rs else {
                    return Some(whole);
                };
                match (b, rs.as_slice()) {
                    (Builtin::Min, [x, y]) => (x.0.min(y.0), x.1.min(y.1)),
                    (Builtin::Max, [x, y]) => (x.0.max(y.0), x.1.max(y.1)),
                    (Builtin::Clamp, [x, lo, hi]) => {
                        let m = (x.0.max(lo.0), x.1.max(lo.1));
                        (m.0.min(hi.0), m.1.min(hi.1))
                    }
                    (Builtin::Abs, [x]) if x.0 >= 0 => *x,
                    (Builtin::Abs, [x]) => fit_or_whole(x.0.checked_neg().map(|n| (0, x.1.max(n)))),
                    _ => whole,
                }
            }
            ExprKind::Reduce(op, a) => {
                let Some((lo, hi)) = self.range(a) else {
                    return Some(whole);
                };
                let (rows, cols) = shape(a.ty);
                let n = rows as i128 * cols as i128;
                match op {
                    ReduceOp::Sum => fit_or_whole(
                        lo.checked_mul(n)
                            .zip(hi.checked_mul(n))
                            .map(|(nl, nh)| (lo.min(nl), hi.max(nh))),
                    ),
                    _ => fit((lo, hi)),
                }
            }
            ExprKind::Conv(fl, w) => {
                let Some((wl, wh)) = self.range(w) else {
                    return Some(whole);
                };
                let (rows, cols) = shape(fl.ty);
                let mut acc = Some((0i128, 0i128));
                for i in 0..rows {
                    for j in 0..cols {
                        let c = match self.filter_value(fl, i, j) {
                            Some(c) => (c, c),
                            None => match self.range(fl) {
                                Some(r) => r,
                                None => return Some(whole),
                            },
                        };
                        acc = acc.zip(mul(c, (wl, wh))).and_then(|(s, p)| add(s, p));
                    }
                }
                fit_or_whole(acc)
            }
            _ => whole,
        };
        Some(r)
    }

    /// Element `(i, j)` of a constant filter (a constant matrix, maybe cast).
    fn filter_value(&self, e: &Expr, i: u32, j: u32) -> Option<i128> {
        match &e.kind {
            ExprKind::Cast(inner, to) if to.is_int() => self.filter_value(inner, i, j),
            ExprKind::Block(a) => {
                let acc = &self.r.accesses[*a];
                let mat = &self.f.matrices[acc.matrix];
                let MatrixKind::Const(vals) = &mat.kind else {
                    return None;
                };
                let mut lin = 0i64;
                let n = acc.subs.len();
                for (k, s) in acc.subs.iter().enumerate() {
                    let idx = match s {
                        Sub::Window { start, stride, .. } => {
                            let st = const_int(start)? as i64;
                            st + if k + 1 == n { j } else { i } as i64 * stride
                        }
                        Sub::Point(p) => const_int(p)? as i64,
                        Sub::Star => return None,
                    };
                    let dim = const_int(&mat.dims[k])? as i64;
                    lin = lin * dim + idx;
                }
                vals.get(lin as usize).map(|v| *v as i128)
            }
            _ => None,
        }
    }

    /// Records the range of a scalar `let` for later rewrites.
    pub(super) fn note_local_range(&self, l: LocalId, e: &Expr) {
        if self.v.peep() || self.v.m24() {
            if let Some(r) = self.range(e) {
                self.ranges.borrow_mut().insert(l, r);
            }
        }
    }

    /// The peephole form of a binary operation, if one is proven safe.
    pub(super) fn peep_binary(
        &self,
        e: &Expr,
        op: BinOp,
        a: &Expr,
        b: &Expr,
        x: &str,
        y: &str,
    ) -> Option<String> {
        let t = e.ty.elem();
        if !t.is_int() || e.ty.is_block() {
            return None;
        }
        if self.v.peep() {
            if let (BinOp::Div | BinOp::Rem, Some(c)) = (op, const_int(b)) {
                if c > 0 && c & (c - 1) == 0 && self.range(a).is_some_and(|r| r.0 >= 0) {
                    let k = c.trailing_zeros();
                    return Some(if op == BinOp::Div {
                        format!("(({x}) >> {k})")
                    } else {
                        format!("(({x}) & {})", c - 1)
                    });
                }
                // Other divisors: unsigned division (no sign fix-up) of a value proven
                // non-negative.
                if c > 0 && t == Scalar::I32 && self.range(a).is_some_and(|r| r.0 >= 0) {
                    let o = if op == BinOp::Div { "/" } else { "%" };
                    return Some(format!("((int)(((uint)({x})) {o} {c}u))"));
                }
            }
            // A division by a variable: no vector unit divides integers, so the lanes of a
            // vectorized loop each run a scalar `idiv`. Where the dividend is proven in
            // [0, 2^20), a float division is exact (see `FLOAT_DIV`).
            if op == BinOp::Div
                && t == Scalar::I32
                && const_int(b).is_none()
                && self
                    .range(a)
                    .is_some_and(|r| r.0 >= 0 && r.1 < FLOAT_DIV_LIMIT)
            {
                let div = format!("(int)((((float)({x})) + 0.5f) / ((float)({y})))");
                // A divisor the host checked is not 0; another raises the call's error flag at
                // 0, as the guarded division does.
                if super::super::safety::host_divisor(self.r, b, self.branch.get()) {
                    return Some(format!("({div})"));
                }
                let code = super::super::safety::division_code(self.r_id());
                return Some(format!(
                    "(({y}) == 0 ? pc_oob(err, {code}, 0, 0, 0) : {div})"
                ));
            }
        }
        if self.v.m24() && t == Scalar::I32 {
            let fits = |a: &Expr| self.range(a).is_some_and(|r| within(r, M24));
            let int32 = (i32::MIN as i128, i32::MAX as i128);
            let exact = |e: &Expr| {
                // The interval before clamping to the type: recompute for products.
                self.range(e).is_some_and(|r| r != int32)
            };
            if matches!(op, BinOp::Mul | BinOp::ElemMul) && fits(a) && fits(b) && exact(e) {
                return Some(format!("mul24({x}, {y})"));
            }
            if op == BinOp::Add && exact(e) {
                if let ExprKind::Binary(BinOp::Mul, p, q) = &a.kind {
                    if fits(p) && fits(q) && exact(a) {
                        let mut pre = Vec::new();
                        let (px, qx) = (self.scalar(p, &mut pre), self.scalar(q, &mut pre));
                        if pre.is_empty() {
                            return Some(format!("mad24({px}, {qx}, {y})"));
                        }
                    }
                }
            }
        }
        None
    }

    /// The peephole form of a built-in call, if one is proven safe.
    pub(super) fn peep_call(
        &self,
        e: &Expr,
        b: Builtin,
        args: &[Expr],
        xs: &[String],
    ) -> Option<String> {
        let t = e.ty.elem();
        if !self.v.peep() || !t.is_int() {
            return None;
        }
        let ty = cty(t);
        match b {
            Builtin::Clamp => {
                let (lo, hi) = (self.range(&args[1])?, self.range(&args[2])?);
                (lo.1 <= hi.0).then(|| {
                    format!(
                        "clamp(({ty})({}), ({ty})({}), ({ty})({}))",
                        xs[0], xs[1], xs[2]
                    )
                })
            }
            Builtin::Abs if matches!(t, Scalar::I32 | Scalar::I64) => {
                let r = self.range(&args[0])?;
                (r.0 > t.range()?.0).then(|| format!("(({ty})abs({}))", xs[0]))
            }
            _ => None,
        }
    }
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
