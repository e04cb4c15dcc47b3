//! A window's rows of column reductions: a row of taps, the columns of one output row, the
//! outputs across it (directly or by doubling), van Herk's blocks down a chunk.

use super::super::facts::at as subst;
use super::build::Build;
use super::window::{At, Window, column_sum, free, only_in};
use super::{DIRECT_BYTES, Replace};
use crate::ir::{BinOp, Builtin, ReduceOp, Scalar};
use crate::lir::visit::Mutator;
use crate::lir::{ExprId, ExprKind, Func, LoopKind, Stmt, StmtId, TempId, VarId};
use std::collections::HashMap;

impl Window {
    /// Row `i` of the window's taps at `at`, its row indices bound before the loop over the
    /// columns (a border map computed once per row of the window, not once per column); the
    /// tap of column `k` is that row with `j` at `k` ([`Window::tap`]).
    pub(super) fn row(&self, b: &mut Build, i: ExprId, at: At) -> ExprId {
        let mut ld = subst(b.func, self.load, self.i, i);
        ld = subst(b.func, ld, at.y, at.first);
        if let Some((x, row)) = at.x {
            ld = subst(b.func, ld, x, row);
        }
        let ExprKind::Load {
            buf,
            index,
            checked,
        } = b.func.exprs[ld].kind.clone()
        else {
            unreachable!("a load");
        };
        let last = index.len() - 1;
        let index = index
            .iter()
            .enumerate()
            .map(|(d, e)| {
                if d == last || matches!(b.func.exprs[*e].kind, ExprKind::Int(_)) {
                    return *e;
                }
                let v = b.func.var("sr", Scalar::I64);
                let s = b.func.stmt(Stmt::Let(v, *e));
                b.body.push(s);
                b.var(v)
            })
            .collect();
        let ty = b.func.exprs[ld].ty;
        let load = b.func.expr(
            ExprKind::Load {
                buf,
                index,
                checked,
            },
            ty,
        );
        let mut e = Replace(HashMap::from([(self.load, load)])).mutate_expr(b.func, self.elem);
        e = subst(b.func, e, self.i, i);
        subst(b.func, e, at.y, at.first)
    }

    /// Column `k` of a row of taps.
    pub(super) fn tap(&self, b: &mut Build, row: ExprId, k: ExprId) -> ExprId {
        subst(b.func, row, self.j, k)
    }

    /// `col[k] = op over i of tap(i, k)` for `k` in `0..n`: the window's rows written out in
    /// one pass (a balanced tree: integers), or, past `unroll` rows, the first row and then
    /// each other in a pass of its own.
    pub(super) fn columns(&self, b: &mut Build, col: TempId, n: ExprId, unroll: i128, at: At) {
        let zero64 = b.i64(0);
        if self.rows <= unroll || self.weights.is_some() {
            // A filter's rows weigh their taps (rows of weight zero left out).
            let weight = |i: i128| self.weights.as_ref().map_or(1, |(v, _)| v[i as usize]);
            let rows: Vec<(ExprId, i128)> = (0..self.rows)
                .filter(|i| weight(*i) != 0)
                .map(|i| {
                    let ie = b.func.int(i, Scalar::I32);
                    (self.row(b, ie, at), weight(i))
                })
                .collect();
            let l = b.for_loop("sk", (zero64, n), |b, k| {
                let mut vals: Vec<ExprId> = rows
                    .iter()
                    .map(|(r, w)| {
                        let tap = self.tap(b, *r, k);
                        b.weigh(tap, *w)
                    })
                    .collect();
                if vals.is_empty() {
                    vals.push(b.func.int(0, self.col_ty));
                }
                let v = b.combine_all(self.op, vals);
                vec![b.store(col, k, v)]
            });
            b.body.push(l);
            return;
        }
        let zero = b.func.int(0, Scalar::I32);
        let r0 = self.row(b, zero, at);
        let first = b.for_loop("sk", (zero64, n), |b, k| {
            let v = self.tap(b, r0, k);
            vec![b.store(col, k, v)]
        });
        b.body.push(first);
        let (one, rows) = (b.i64(1), b.i64(self.rows));
        let rest = b.for_loop("si", (one, rows), |b, i| {
            let ri = self.row(b, i, at);
            let l = b.for_loop("sk", (zero64, n), |b, k| {
                let (old, v) = (b.load(col, k), self.tap(b, ri, k));
                let v = b.combine(self.op, old, v);
                vec![b.store(col, k, v)]
            });
            vec![l]
        });
        b.body.push(rest);
    }

    /// The window's value at the output whose first column is `at_y` (the stride times its
    /// place in the row) from the row's columns `col` (of `n`), at the fold's type.
    pub(super) fn across(
        &self,
        b: &mut Build,
        col: TempId,
        n: ExprId,
        at_y: ExprId,
        unroll: i128,
    ) -> ExprId {
        if b.cap.is_some() && self.weights.is_none() && self.cols > 2 {
            return self.across_serial(b, col, n, at_y);
        }
        let t = self.level_ty(b.func, self.cols);
        // The model: the direct form reads `cols` elements of `t` per output, doubling
        // `log2(cols)` passes and as many terms; measured on the 2-core VM (AVX2), direct wins
        // up to about 128 bytes (a 63-wide minimum of `u8`s, a 31-wide sum in `i32`).
        let direct = self.cols * t.bytes() as i128 <= DIRECT_BYTES;
        let value = if let Some((_, h)) = &self.weights {
            // A filter's columns: `sum of h[j] * col[y + j]`, in the fold's type (the
            // columns may be narrower).
            let mut vals: Vec<ExprId> = (0..self.cols)
                .filter(|j| h[*j as usize] != 0)
                .map(|j| {
                    let c = b.load_past(col, at_y, j);
                    let c = b.func.cast(c, self.ty);
                    b.weigh(c, h[j as usize])
                })
                .collect();
            if vals.is_empty() {
                vals.push(b.func.int(0, self.ty));
            }
            b.combine_all(self.op, vals)
        } else if self.cols <= unroll && direct {
            // Each output combines its columns directly (a vector's lanes each an output).
            let vals: Vec<ExprId> = (0..self.cols)
                .map(|j| {
                    let c = b.load_past(col, at_y, j);
                    b.func.cast(c, t)
                })
                .collect();
            b.combine_all(self.op, vals)
        } else {
            doubling(b, col, n, at_y, self)
        };
        b.func.cast(value, self.ty)
    }

    /// Van Herk / Gil-Werman down a chunk's source rows (`t` in `0..T`, `T` the chunk's rows
    /// plus the window's less one; row `t` is tap row `t` of the chunk's first row `x0`), in
    /// blocks of the window's height: `g[t]` the reduction from its block's first row to `t`,
    /// `h[t]` from `t` to its block's last, each a row of `n` columns. A window starting at
    /// source row `a` spans the end of one block and the start of the next (or is one block),
    /// so its columns are `op(h[a], g[a + rows - 1])`.
    pub(super) fn down_blocks(
        &self,
        b: &mut Build,
        n: ExprId,
        x0: ExprId,
        x1: ExprId,
        at: At,
    ) -> (TempId, TempId) {
        let span = b.sub(x1, x0);
        let more = b.i64(self.rows - 1);
        let count = b.add(span, more);
        let g = b.temp_of("vg", self.col_ty, vec![count, n]);
        let h = b.temp_of("vh", self.col_ty, vec![count, n]);
        let cur = b.temp("cur", self.col_ty, n);
        // The reduction's identity: `min` starts from the type's largest value.
        let (lo, hi) = self.col_ty.range().expect("an integer type");
        let identity = if self.op == ReduceOp::Min { hi } else { lo };
        let height = b.i64(self.rows);
        let (zero64, one) = (b.i64(0), b.i64(1));
        let last = b.i64(self.rows - 1);
        let up = b.add(count, last);
        let blocks = b.func.binary(BinOp::Div, up, height, Scalar::I64);
        let reset = |b: &mut Build| {
            b.for_loop("sk", (zero64, n), |b, k| {
                let v = b.func.int(identity, self.col_ty);
                vec![b.store(cur, k, v)]
            })
        };
        // Source row `t` into the running reduction `cur`, which is then row `t` of `out`.
        let scan = |b: &mut Build, t: ExprId, out: TempId| {
            let row = self.row(b, t, at);
            let l = b.for_loop("sk", (zero64, n), |b, k| {
                let (c, v) = (b.load(cur, k), self.tap(b, row, k));
                let v = b.combine(self.op, c, v);
                let s1 = b.store(cur, k, v);
                let c = b.load(cur, k);
                vec![s1, b.store2(out, t, k, c)]
            });
            vec![l]
        };
        let l = b.for_loop("sb", (zero64, blocks), |b, blk| {
            let blk64 = b.func.cast(blk, Scalar::I64);
            let start = b.func.binary(BinOp::Mul, blk64, height, Scalar::I64);
            let past = b.add(start, height);
            let end = b
                .func
                .expr(ExprKind::Call(Builtin::Min, vec![past, count]), Scalar::I64);
            let r0 = reset(b);
            let down = b.for_loop("st", (start, end), |b, t| scan(b, t, g));
            let r1 = reset(b);
            let len = b.sub(end, start);
            let upward = b.for_loop("sq", (zero64, len), |b, q| {
                let q64 = b.func.cast(q, Scalar::I64);
                let t = b.sub(end, one);
                let t = b.sub(t, q64);
                let t32 = b.func.cast(t, Scalar::I32);
                scan(b, t32, h)
            });
            vec![r0, down, r1, upward]
        });
        b.body.push(l);
        (g, h)
    }

    /// Whether the window's rows slide along the region's row variable `x` as its columns do
    /// along `y`: its row index `g(S(x) + i)`, `x` nowhere else in the tap.
    pub(super) fn slides_down(&self, func: &Func, x: VarId) -> bool {
        if self.weights.is_some() {
            return false;
        }
        let ExprKind::Load { index, .. } = &func.exprs[self.load].kind else {
            return false;
        };
        let Some((last, rest)) = index.split_last() else {
            return false;
        };
        let mut vs = Vec::new();
        free(func, *last, &mut vs);
        if vs.contains(&x) || !only_in(func, self.elem, self.load, &[x]) {
            return false;
        }
        let mut rows = 0;
        for r in rest {
            let mut vs = Vec::new();
            free(func, *r, &mut vs);
            if !vs.contains(&x) && !vs.contains(&self.i) {
                continue;
            }
            rows += 1;
            match column_sum(func, *r, x, self.i) {
                Some((sum, 1)) if only_in(func, *r, sum, &[x, self.i]) => {}
                _ => return false,
            }
        }
        rows == 1
    }
}

impl Window {
    /// A work-item's outputs across its row (OpenCL, [`super::items`]), each in a time
    /// independent of the window's width, from serial passes over the row's `n` columns: a
    /// sum as the difference of two prefix sums (`p[k]`, the first `k` columns, in the output's
    /// type: exact, integers wrap); a minimum or maximum from van Herk and Gil-Werman's blocks
    /// of `cols` columns (`g[k]` from its block's first column, `h[k]` to its block's last: an
    /// output starting at column `y` is `op(h[y], g[y + cols - 1])`).
    fn across_serial(&self, b: &mut Build, col: TempId, n: ExprId, at_y: ExprId) -> ExprId {
        let (zero64, one) = (b.i64(0), b.i64(1));
        let serial = |b: &mut Build, l: StmtId| {
            if let Stmt::For { kind, .. } = &mut b.func.stmts[l] {
                *kind = LoopKind::Serial;
            }
            b.body.push(l);
        };
        let value = if self.op == ReduceOp::Sum {
            let t = self.ty;
            let n1 = b.add(n, one);
            let p = b.temp("pre", t, n1);
            let z = b.func.int(0, t);
            let s0 = b.store(p, zero64, z);
            b.body.push(s0);
            let l = b.for_loop("sk", (zero64, n), |b, k| {
                let k64 = b.func.cast(k, Scalar::I64);
                let next = b.add(k64, one);
                let (prev, c) = (b.load(p, k), b.load(col, k));
                let c = b.func.cast(c, t);
                let v = b.add(prev, c);
                vec![b.store(p, next, v)]
            });
            serial(b, l);
            let (hi, lo) = (b.load_past(p, at_y, self.cols), b.load(p, at_y));
            b.sub(hi, lo)
        } else {
            let t = self.col_ty;
            let width = b.i64(self.cols);
            let (g, h) = (b.temp("vg", t, n), b.temp("vh", t, n));
            // `g`: forward, restarting at each block's first column.
            let l = b.for_loop("sk", (zero64, n), |b, k| {
                let k64 = b.func.cast(k, Scalar::I64);
                let c = b.load(col, k);
                let place = b.func.binary(BinOp::Rem, k64, width, Scalar::I64);
                let first = b.func.binary(BinOp::Eq, place, zero64, Scalar::Bool);
                let before = b.sub(k64, one);
                let prev = b.load(g, before);
                let run = b.combine(self.op, prev, c);
                let v = b.func.expr(ExprKind::Select(first, c, run), t);
                vec![b.store(g, k, v)]
            });
            serial(b, l);
            // `h`: backward, restarting at each block's last column and at the row's last.
            let l = b.for_loop("sk", (zero64, n), |b, r| {
                let r64 = b.func.cast(r, Scalar::I64);
                let last = b.sub(n, one);
                let k = b.sub(last, r64);
                let c = b.load(col, k);
                let after = b.add(k, one);
                let place = b.func.binary(BinOp::Rem, after, width, Scalar::I64);
                let end = b.func.binary(BinOp::Eq, place, zero64, Scalar::Bool);
                let edge = b.func.binary(BinOp::Eq, r64, zero64, Scalar::Bool);
                let restart = b.func.binary(BinOp::Or, end, edge, Scalar::Bool);
                let next = b.load(h, after);
                let run = b.combine(self.op, next, c);
                let v = b.func.expr(ExprKind::Select(restart, c, run), t);
                vec![b.store(h, k, v)]
            });
            serial(b, l);
            let (x, y) = (b.load(h, at_y), b.load_past(g, at_y, self.cols - 1));
            b.combine(self.op, x, y)
        };
        b.func.cast(value, self.ty)
    }
}

/// The window's columns combined by doubling: level `p` holds `op` over `p` consecutive
/// columns (`L[p][k] = op(L[p/2][k], L[p/2][k + p/2])`, one vectorized pass each), and an
/// output combines one level per bit of the width (`31 = 16 + 8 + 4 + 2 + 1`): exact for
/// integers, `log2` of the width passes and terms.
pub(super) fn doubling(b: &mut Build, col: TempId, n: ExprId, at_y: ExprId, w: &Window) -> ExprId {
    let mut levels = vec![(1i128, col)];
    let mut p = 2;
    while p <= w.cols {
        let (q, prev) = *levels.last().expect("level 1");
        let t = w.level_ty(b.func, p);
        let one = b.i64(1 - p);
        let len = b.add(n, one);
        let cur = b.temp("lv", t, len);
        let zero = b.i64(0);
        let l = b.for_loop("sk", (zero, len), |b, k| {
            let qe = b.i64(q);
            let k64 = b.func.cast(k, Scalar::I64);
            let far = b.add(k64, qe);
            let (x, y) = (b.load(prev, k), b.load(prev, far));
            let (x, y) = (b.func.cast(x, t), b.func.cast(y, t));
            let v = b.combine(w.op, x, y);
            vec![b.store(cur, k, v)]
        });
        b.body.push(l);
        levels.push((p, cur));
        p *= 2;
    }
    let t = w.level_ty(b.func, w.cols);
    let mut terms = Vec::new();
    let mut off = 0;
    for (p, level) in levels.iter().rev() {
        if w.cols - off >= *p {
            let v = b.load_past(*level, at_y, off);
            terms.push(b.func.cast(v, t));
            off += p;
        }
    }
    b.combine_all(w.op, terms)
}
