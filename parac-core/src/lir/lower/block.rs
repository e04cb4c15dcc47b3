//! Blocks and reductions of the HAST → LIR lowering: a block value as its elements
//! (row-major), a reduction over them, the zero of a type.

use super::{At, LocalVal, Lower, Mode};
use crate::ir::{self, AccessId, BinOp, ExprKind as H, Len, ReduceOp, Scalar, Type};
use crate::lir::{ExprId, ExprKind};

impl<'a> Lower<'a> {
    pub(super) fn zero(&mut self, t: Scalar) -> ExprId {
        if t.is_float() {
            self.out.expr(ExprKind::Float(0.0), t)
        } else {
            self.out.int(0, t)
        }
    }

    /// `vals` combined in order: `((0 op v0) op v1) ..` as C would, or, where the order cannot
    /// change the value (integers wrap; `min` and `max` of integers), as a balanced tree, so that
    /// a large window's expression is log-deep, not as deep as its taps.
    pub(super) fn combine_all(&mut self, op: ReduceOp, vals: Vec<ExprId>, t: Scalar) -> ExprId {
        let sum = matches!(op, ReduceOp::Sum | ReduceOp::Mean);
        if t.is_float() || vals.len() < 4 {
            let mut s = if sum { self.zero(t) } else { vals[0] };
            for v in vals {
                s = self.out.combine(op, s, v, t);
            }
            return s;
        }
        self.out.balanced(op, vals, t)
    }

    /// The reduction of block `a` in type `t` as a fold (its taps a loop nest, not written
    /// out), where it has more than `unroll` taps, every tap can be read at a cell given by
    /// the loop's variables (windows and elementwise operators over them; not constant
    /// tables), and every path of its statement evaluates it.
    pub(super) fn fold(
        &mut self,
        op: ReduceOp,
        a: &ir::Expr,
        t: Scalar,
        mode: Mode<'a, '_>,
    ) -> Option<ExprId> {
        let Type::Block { rows, cols, .. } = a.ty else {
            return None;
        };
        // A block of host length is only ever a fold (the front end allows no other use).
        let long = a.ty.is_long();
        let taps = a.ty.shape().map_or(usize::MAX, |(r, c)| r * c);
        let slides = !long && taps > self.slide_taps && self.slidable(op, a, t);
        if !long
            && (!matches!(mode, Mode::Body)
                || self.cond > 0
                || (taps <= self.unroll && !slides)
                || !self.tappable(a))
        {
            return None;
        }
        let fold_op = match op {
            ReduceOp::Mean => ReduceOp::Sum,
            o => o,
        };
        let mut s = self.fold_of(fold_op, (rows, cols), t, |l, i, j| {
            let elem = l.tap(a, At::Tap(i, j));
            let elem = l.out.cast(elem, t);
            let init = match op {
                ReduceOp::Sum | ReduceOp::Mean => l.zero(t),
                // The first tap (taking it again changes nothing).
                ReduceOp::Min | ReduceOp::Max => {
                    let first = l.tap(a, At::Cell(0, 0));
                    l.out.cast(first, t)
                }
            };
            (init, elem)
        });
        if op == ReduceOp::Mean {
            let (r, c) = (self.extent(rows), self.extent(cols));
            let count = self.out.binary(BinOp::Mul, r, c, Scalar::I32);
            s = self.mean(s, count, t);
        }
        Some(s)
    }

    /// A convolution of window `w` with constant filter `fl` in type `t` as a fold (each tap
    /// the filter's element times the window's), where `lir::pass::slide` could compute it as
    /// two one-dimensional passes: on the CPU lowering, past `slide_taps` taps, an integer
    /// filter that is an outer product of two integer vectors (`filter_rank1`), over a window
    /// that could slide.
    pub(super) fn conv_fold(
        &mut self,
        fl: &ir::Expr,
        w: &ir::Expr,
        t: Scalar,
        mode: Mode<'a, '_>,
    ) -> Option<ExprId> {
        let Type::Block { rows, cols, .. } = w.ty else {
            return None;
        };
        let taps = w.ty.shape().map_or(0, |(r, c)| r * c);
        if !matches!(mode, Mode::Body)
            || self.cond > 0
            || taps <= self.slide_taps
            || !t.is_int()
            || !self.slidable(ReduceOp::Sum, w, t)
        {
            return None;
        }
        filter_rank1(self.f, self.block_matrix(fl)?)?;
        let fe = fl.ty.elem();
        Some(self.fold_of(ReduceOp::Sum, (rows, cols), t, |l, i, j| {
            let (a, b) = (l.tap(fl, At::Tap(i, j)), l.tap(w, At::Tap(i, j)));
            let p = l.out.binary(BinOp::Mul, a, b, fe);
            (l.zero(t), l.out.cast(p, t))
        }))
    }

    /// `ExprKind::Fold` of `op` in type `t` over a `rows x cols` loop nest; `make` gives its
    /// first value and its tap from the loop's variables.
    fn fold_of(
        &mut self,
        op: ReduceOp,
        (rows, cols): (Len, Len),
        t: Scalar,
        make: impl FnOnce(&mut Self, ExprId, ExprId) -> (ExprId, ExprId),
    ) -> ExprId {
        let i32t = Scalar::I32;
        let vars = [self.out.var("wi", i32t), self.out.var("wj", i32t)];
        let [i, j] = vars.map(|v| self.out.expr(ExprKind::Var(v), i32t));
        let (init, elem) = make(self, i, j);
        let counts = vec![self.extent(rows), self.extent(cols)];
        self.out.expr(
            ExprKind::Fold {
                op,
                vars: vars.to_vec(),
                counts,
                init,
                elem,
            },
            t,
        )
    }

    /// A block extent as an `i32` expression (a host length: its expression; the host checks
    /// it is from 1 to `i32::MAX`, `safety::host_lens`).
    fn extent(&mut self, l: Len) -> ExprId {
        match l {
            Len::Const(n) => self.out.int(n as i128, Scalar::I32),
            Len::Host(i) => {
                let e = self.scalar(&self.f.lens[i].expr, Mode::Body);
                self.out.cast(e, Scalar::I32)
            }
        }
    }

    /// A mean from its sum `s` of `count` elements (an `i32` expression), in type `t`.
    fn mean(&mut self, s: ExprId, count: ExprId, t: Scalar) -> ExprId {
        let c = match self.out.exprs[count].kind {
            ExprKind::Int(n) if t.is_float() => self.out.expr(ExprKind::Float(n as f64), t),
            ExprKind::Int(n) => self.out.int(n, t),
            _ => self.out.cast(count, t),
        };
        self.out.binary(BinOp::Div, s, c, t)
    }

    /// The matrix of a block that is one window (or a conversion of one).
    fn block_matrix(&self, a: &ir::Expr) -> Option<usize> {
        let access = match &a.kind {
            H::Block(x) => *x,
            H::Cast(inner, _) => match inner.kind {
                H::Block(x) => x,
                _ => return None,
            },
            _ => return None,
        };
        Some(self.accesses()[access].matrix)
    }

    /// Whether `lir::pass::slide` could compute the reduction `op` of block `a` in type `t`
    /// per row: an integer sum, mean, minimum or maximum of one window of a matrix read
    /// plainly or through a shorthand border rule (the pass decides the rest).
    fn slidable(&self, op: ReduceOp, a: &ir::Expr, t: Scalar) -> bool {
        let Some(m) = self.block_matrix(a) else {
            return false;
        };
        let plain = self.r.is_some_and(|r| match self.f.shorthand_for(r, m) {
            Some(sh) => !matches!(sh.mode, ir::BorderMode::Constant(_)),
            None => r
                .rules
                .iter()
                .all(|id| self.f.rules[*id].entries.iter().all(|e| e.matrix != m)),
        });
        let wide = matches!(a.ty, Type::Block { cols: Len::Const(c), .. } if c >= 2);
        let op_ok = matches!(
            op,
            ReduceOp::Sum | ReduceOp::Mean | ReduceOp::Min | ReduceOp::Max
        );
        t.is_int() && op_ok && wide && plain
    }

    /// Whether every element of block `e` can be read at a symbolic cell ([`Lower::tap`]).
    fn tappable(&self, e: &ir::Expr) -> bool {
        let constant = |a: AccessId| {
            let m = self.accesses()[a].matrix;
            matches!(self.f.matrices[m].kind, ir::MatrixKind::Const(_))
        };
        ir::tappable(e, &constant)
    }

    /// Element `at` of block `e` (a scalar operand: itself).
    fn tap(&mut self, e: &ir::Expr, at: At) -> ExprId {
        let Type::Block { elem, .. } = e.ty else {
            return self.scalar(e, Mode::Body);
        };
        match &e.kind {
            H::Block(a) => self.load(*a, elem, at),
            H::Cast(inner, to) => {
                if let H::Block(a) = inner.kind {
                    return self.load(a, *to, at);
                }
                let x = self.tap(inner, at);
                self.out.cast(x, elem)
            }
            H::Unary(op, a) => {
                let x = self.tap(a, at);
                self.out.expr(ExprKind::Unary(*op, x), elem)
            }
            H::Binary(op, a, b) => {
                let x = self.tap(a, at);
                let y = self.tap(b, at);
                self.out.binary(*op, x, y, elem)
            }
            H::Transpose(a) => {
                let at = match at {
                    At::First => At::First,
                    At::Cell(i, j) => At::Cell(j, i),
                    At::Tap(i, j) => At::Tap(j, i),
                };
                self.tap(a, at)
            }
            _ => unreachable!("checked by tappable"),
        }
    }

    /// A block's reduction in type `t`.
    pub(super) fn reduce(&mut self, op: ReduceOp, vals: Vec<ExprId>, t: Scalar) -> ExprId {
        let count = vals.len();
        let vals: Vec<ExprId> = vals.into_iter().map(|v| self.out.cast(v, t)).collect();
        let mut s = self.combine_all(op, vals, t);
        if op == ReduceOp::Mean {
            let count = self.out.int(count as i128, Scalar::I32);
            s = self.mean(s, count, t);
        }
        s
    }

    /// A block-valued expression, its elements row-major.
    pub(super) fn block(&mut self, e: &ir::Expr, mode: Mode<'a, '_>) -> Vec<ExprId> {
        let Type::Block { elem, .. } = e.ty else {
            return vec![self.scalar(e, mode)];
        };
        let (rows, cols) = e.ty.shape().expect("a block of host length is only folded");
        let cells = || (0..rows).flat_map(move |i| (0..cols).map(move |j| (i, j)));
        match &e.kind {
            H::Block(a) => cells()
                .map(|at| self.load(*a, elem, Some(at).into()))
                .collect(),
            H::Cast(inner, to) => {
                if let H::Block(a) = inner.kind {
                    return cells()
                        .map(|at| self.load(a, *to, Some(at).into()))
                        .collect();
                }
                let b = self.block(inner, mode);
                b.into_iter().map(|x| self.out.cast(x, elem)).collect()
            }
            H::Local(l) => match self.locals.get(*l).cloned().flatten() {
                Some(LocalVal::Block(vars)) => vars
                    .iter()
                    .map(|v| {
                        let ty = self.out.vars[*v].ty;
                        self.out.expr(ExprKind::Var(*v), ty)
                    })
                    .collect(),
                _ => cells().map(|_| self.out.int(0, elem)).collect(),
            },
            H::Unary(op, a) => {
                let b = self.block(a, mode);
                b.into_iter()
                    .map(|x| self.out.expr(ExprKind::Unary(*op, x), elem))
                    .collect()
            }
            H::Binary(op, a, b) => {
                let xa = self.block(a, mode);
                let xb = self.block(b, mode);
                let pick = |x: &[ExprId], k: usize| if x.len() == 1 { x[0] } else { x[k] };
                (0..rows * cols)
                    .map(|k| self.out.binary(*op, pick(&xa, k), pick(&xb, k), elem))
                    .collect()
            }
            H::MatMul(a, b) if a.ty.is_long() || b.ty.is_long() => {
                // The front end allows a constant shape only: each element a fold over the
                // inner extent.
                let Type::Block { cols: inner, .. } = a.ty else {
                    unreachable!("a block operand")
                };
                let one = Len::Const(1);
                cells()
                    .map(|(i, j)| {
                        self.fold_of(ReduceOp::Sum, (one, inner), elem, |l, _, k| {
                            let [ci, cj] = [i, j].map(|c| l.out.int(c as i128, Scalar::I32));
                            let x = l.tap(a, At::Tap(ci, k));
                            let y = l.tap(b, At::Tap(k, cj));
                            (l.zero(elem), l.out.binary(BinOp::Mul, x, y, elem))
                        })
                    })
                    .collect()
            }
            H::MatMul(a, b) => {
                let inner = a.ty.shape().map_or(1, |(_, c)| c);
                let (xa, xb) = (self.block(a, mode), self.block(b, mode));
                cells()
                    .map(|(i, j)| {
                        let mut s = self.zero(elem);
                        for k in 0..inner {
                            let p = self.out.binary(
                                BinOp::Mul,
                                xa[i * inner + k],
                                xb[k * cols + j],
                                elem,
                            );
                            s = self.out.binary(BinOp::Add, s, p, elem);
                        }
                        s
                    })
                    .collect()
            }
            H::Transpose(a) => {
                let b = self.block(a, mode);
                cells().map(|(i, j)| b[j * rows + i]).collect()
            }
            _ => vec![self.scalar(e, mode)],
        }
    }
}

/// The constant integer matrix `m` of `f` as an outer product `v[i] * h[j]` of two integer
/// vectors, where it is one (and not all zero).
pub(crate) fn filter_rank1(f: &ir::Function, m: usize) -> Option<(Vec<i128>, Vec<i128>)> {
    let mat = &f.matrices[m];
    let ir::MatrixKind::Const(values) = &mat.kind else {
        return None;
    };
    if !mat.elem.is_int() || mat.dims.len() != 2 {
        return None;
    }
    let dim = |k: usize| match mat.dims[k].kind {
        H::Int(d) => usize::try_from(d).ok(),
        _ => None,
    };
    let (rows, cols) = (dim(0)?, dim(1)?);
    if values.len() != rows * cols || values.iter().any(|v| v.fract() != 0.0 || v.abs() > 1e15) {
        return None;
    }
    let at = |i: usize, j: usize| values[i * cols + j] as i128;
    let (r0, c0) = (0..rows * cols)
        .map(|k| (k / cols, k % cols))
        .find(|(i, j)| at(*i, *j) != 0)?;
    let gcd = |mut a: i128, mut b: i128| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a.abs()
    };
    let g = (0..cols).fold(0, |g, j| gcd(g, at(r0, j)));
    let h: Vec<i128> = (0..cols).map(|j| at(r0, j) / g).collect();
    let v: Vec<i128> = (0..rows)
        .map(|i| {
            let (x, d) = (at(i, c0), h[c0]);
            (x % d == 0).then_some(x / d)
        })
        .collect::<Option<_>>()?;
    let exact = (0..rows).all(|i| (0..cols).all(|j| v[i] * h[j] == at(i, j)));
    exact.then_some((v, h))
}
