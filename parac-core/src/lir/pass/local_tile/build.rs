//! The construction of a tiled region (see the module above): work-groups, the fill, the
//! barrier, the work-items, and the reads the tiles serve.

use super::Tile;
use super::bins::{Bin, ToBins};
use crate::ir::{BinOp, Function, Scalar};
use crate::lir::visit::{Mutator, rebuild_expr};
use crate::lir::{Buf, ExprId, ExprKind, Func, Loop, LoopKind, Memory, Stmt, StmtId, VarId};
use std::collections::HashMap;

pub(super) struct Build<'a> {
    pub(super) func: &'a mut Func,
}

impl Build<'_> {
    fn int(&mut self, v: i128) -> ExprId {
        self.func.int(v, Scalar::I32)
    }
    fn var(&mut self, v: VarId) -> ExprId {
        let t = self.func.vars[v].ty;
        self.func.expr(ExprKind::Var(v), t)
    }
    fn op(&mut self, op: BinOp, a: ExprId, b: ExprId) -> ExprId {
        let t = match op {
            BinOp::Lt | BinOp::Ge | BinOp::And => Scalar::Bool,
            _ => self.func.exprs[a].ty,
        };
        self.func.binary(op, a, b, t)
    }
    fn stmt(&mut self, s: Stmt) -> StmtId {
        self.func.stmt(s)
    }
    fn block(&mut self, ss: Vec<StmtId>) -> StmtId {
        self.func.stmt(Stmt::Block(ss))
    }
    /// The variables of a nest of thread loops (outer first).
    fn places(&mut self) -> [VarId; 2] {
        [
            self.func.var("local1", Scalar::I32),
            self.func.var("local0", Scalar::I32),
        ]
    }

    /// A nest of thread loops over the group (outer: dimension 1, variables `t`) around
    /// `body(t)`.
    fn threads(
        &mut self,
        group: [u32; 2],
        t: [VarId; 2],
        body: impl FnOnce(&mut Self, [VarId; 2]) -> StmtId,
    ) -> StmtId {
        let inner = body(self, t);
        let (z, h0, h1) = (
            self.int(0),
            self.int(group[1] as i128),
            self.int(group[0] as i128),
        );
        let l0 = self
            .func
            .for_loop(t[1], (z, h0, 1), LoopKind::GpuThread(0), inner);
        self.func
            .for_loop(t[0], (z, h1, 1), LoopKind::GpuThread(1), l0)
    }

    /// Work-item `t`'s place in its group of `group` (`t1 * cols + t0`).
    fn place(&mut self, t: [VarId; 2], group: [u32; 2]) -> ExprId {
        let (t1, t0, cols) = (self.var(t[0]), self.var(t[1]), self.int(group[1] as i128));
        let row = self.op(BinOp::Mul, t1, cols);
        self.op(BinOp::Add, row, t0)
    }

    pub(super) fn groups(
        mut self,
        f: &Function,
        loops: [Loop; 2],
        group: [u32; 2],
        (tiles, bins): (&[Tile], &[Bin]),
        served: &HashMap<ExprId, (usize, [i128; 2])>,
    ) -> StmtId {
        let size = (group[0] * group[1]) as i64;
        let (i32t, i64t) = (Scalar::I32, Scalar::I64);
        let blocks = [self.func.var("group1", i32t), self.func.var("group0", i32t)];
        let firsts = [self.func.var("first1", i32t), self.func.var("first0", i32t)];
        // The group's first point, per loop.
        let mut head = Vec::new();
        for k in 0..2 {
            let per = loops[k].step as i128 * group[k] as i128;
            let (b, lo, per_e) = (self.var(blocks[k]), loops[k].lo, self.int(per));
            let off = self.op(BinOp::Mul, b, per_e);
            let first = self.op(BinOp::Add, lo, off);
            head.push(self.stmt(Stmt::Let(firsts[k], first)));
        }
        // Each tile's origin.
        for t in tiles {
            for d in 0..2 {
                let (k, coef) = t.place.at[d];
                let (g, c, o) = (self.var(firsts[k]), self.int(coef), self.int(t.place.lo[d]));
                let scaled = self.op(BinOp::Mul, c, g);
                let origin = self.op(BinOp::Add, scaled, o);
                head.push(self.stmt(Stmt::Let(t.origin[d], origin)));
            }
        }
        // The fill: work-item `t1 * cols + t0` loads every `cols * rows`-th element.
        let t = self.places();
        let fill = self.threads(group, t, |b, t| {
            let mut ss = Vec::new();
            for tile in tiles {
                ss.push(b.fill(f, tile, t, group));
            }
            for bin in bins {
                let first = b.place(t, group);
                ss.push(b.clear(f, bin, first, size));
            }
            b.block(ss)
        });
        head.push(fill);
        head.push(self.stmt(Stmt::Barrier { global: false }));
        // The work-items: the loops' variables from the group's first point.
        let places = self.places();
        let mut rewrite = Reads {
            tiles,
            served,
            places,
            steps: [loops[0].step as i128, loops[1].step as i128],
        };
        let core = rewrite.mutate_stmt(self.func, loops[1].body);
        let core = ToBins { bins }.mutate_stmt(self.func, core);
        let compute = self.threads(group, places, |b, t| {
            let mut body = core;
            for k in [1, 0] {
                let (first, tk, step) =
                    (b.var(firsts[k]), b.var(t[k]), b.int(loops[k].step as i128));
                let off = b.op(BinOp::Mul, tk, step);
                let v = b.op(BinOp::Add, first, off);
                let set = b.stmt(Stmt::Let(loops[k].var, v));
                let (vk, hi) = (b.var(loops[k].var), loops[k].hi);
                let test = b.op(BinOp::Lt, vk, hi);
                let guarded = b.stmt(Stmt::If(test, body, None));
                body = b.block(vec![set, guarded]);
            }
            body
        });
        head.push(compute);
        if !bins.is_empty() {
            head.push(self.stmt(Stmt::Barrier { global: false }));
            let t = self.places();
            let merge = self.threads(group, t, |b, t| {
                let ss = bins
                    .iter()
                    .map(|bin| {
                        let first = b.place(t, group);
                        b.merge(f, bin, first, size)
                    })
                    .collect();
                b.block(ss)
            });
            head.push(merge);
        }
        let mut body = self.block(head);
        // The blocks: enough groups for every point (the launch rounds the work-items up to
        // whole groups).
        for k in [1, 0] {
            let per = loops[k].step as i128 * group[k] as i128;
            let lo = self.func.cast(loops[k].lo, i64t);
            let hi = self.func.cast(loops[k].hi, i64t);
            let span = self.op(BinOp::Sub, hi, lo);
            let up = self.func.int(per - 1, i64t);
            let span = self.op(BinOp::Add, span, up);
            let per_e = self.func.int(per, i64t);
            let n = self.op(BinOp::Div, span, per_e);
            let n = self.func.cast(n, i32t);
            let z = self.int(0);
            body = self
                .func
                .for_loop(blocks[k], (z, n, 1), LoopKind::GpuBlock(1 - k as u8), body);
        }
        let mut top: Vec<StmtId> = tiles
            .iter()
            .map(|t| {
                let n = self.func.int(t.size[0] * t.size[1], i64t);
                self.stmt(Stmt::Allocate {
                    buf: t.temp,
                    elem: f.matrices[t.m].elem,
                    memory: Memory::Local,
                    extents: vec![n],
                })
            })
            .collect();
        for b in bins {
            let n = self.func.int(b.len(), i64t);
            top.push(self.stmt(Stmt::Allocate {
                buf: b.temp,
                elem: f.matrices[b.m].elem,
                memory: Memory::Local,
                extents: vec![n],
            }));
        }
        top.push(body);
        self.block(top)
    }

    /// One work-item's share of filling `tile`.
    fn fill(&mut self, f: &Function, tile: &Tile, t: [VarId; 2], group: [u32; 2]) -> StmtId {
        let (i32t, i64t) = (Scalar::I32, Scalar::I64);
        let w = tile.size[1];
        let i = self.func.var("i", i32t);
        let first = self.place(t, group);
        let end = self.int(tile.size[0] * w);
        // The place's matrix indices.
        let (iv, we) = (self.var(i), self.int(w));
        let q = self.op(BinOp::Div, iv, we);
        let r = self.op(BinOp::Rem, iv, we);
        let (tr, tc) = (self.var(tile.origin[0]), self.var(tile.origin[1]));
        let gr = self.op(BinOp::Add, tr, q);
        let gc = self.op(BinOp::Add, tc, r);
        let (gr, gc) = (self.func.cast(gr, i64t), self.func.cast(gc, i64t));
        let mut inside = None;
        for (k, g) in [gr, gc].into_iter().enumerate() {
            let z = self.func.int(0, i64t);
            let dim = self.func.expr(ExprKind::Dim(tile.m, k), i64t);
            let ge = self.op(BinOp::Ge, g, z);
            let lt = self.op(BinOp::Lt, g, dim);
            let both = self.op(BinOp::And, ge, lt);
            inside = Some(match inside {
                Some(a) => self.op(BinOp::And, a, both),
                None => both,
            });
        }
        let elem = f.matrices[tile.m].elem;
        let load = self.func.expr(
            ExprKind::Load {
                buf: Buf::Matrix(tile.m),
                index: vec![gr, gc],
                checked: false,
            },
            elem,
        );
        let zero = if elem.is_int() {
            self.func.int(0, elem)
        } else {
            self.func.expr(ExprKind::Float(0.0), elem)
        };
        let value = self.func.expr(
            ExprKind::Select(inside.expect("two dimensions"), load, zero),
            elem,
        );
        let iv = self.var(i);
        let store = self.stmt(Stmt::Store {
            buf: tile.temp,
            index: vec![iv],
            value,
            checked: false,
        });
        let step = (group[0] * group[1]) as i64;
        self.func
            .for_loop(i, (first, end, step), LoopKind::Serial, store)
    }
}

/// Rewrites the reads a tile serves: a read at `coef * v + c` (per dimension) of the tile at
/// `coef * g + omin` reads its element `coef * step * t + (c - omin)`, `t` the work-item's
/// place in its group along `v`'s loop (`v = g + t * step`). In range by the tile's size, so
/// the arithmetic is exact.
struct Reads<'a> {
    tiles: &'a [Tile],
    /// Per read served: its tile and its offsets.
    served: &'a HashMap<ExprId, (usize, [i128; 2])>,
    /// The work-item's place in its group, per loop (outer first), and the loops' steps.
    places: [VarId; 2],
    steps: [i128; 2],
}

impl Reads<'_> {
    /// `a * x + b` in exact `int` arithmetic.
    fn line(f: &mut Func, a: i128, x: ExprId, b: i128) -> ExprId {
        let i32t = Scalar::I32;
        let exact = |f: &mut Func, op, p, q| {
            f.exprs.push(crate::lir::Expr {
                kind: ExprKind::Binary(op, p, q),
                ty: i32t,
                lanes: 1,
                exact: true,
            })
        };
        let a = f.int(a, i32t);
        let ax = exact(f, BinOp::Mul, a, x);
        let b = f.int(b, i32t);
        exact(f, BinOp::Add, ax, b)
    }
}

impl Mutator for Reads<'_> {
    fn mutate_expr(&mut self, f: &mut Func, e: ExprId) -> ExprId {
        let Some(&(k, off)) = self.served.get(&e) else {
            return rebuild_expr(self, f, e);
        };
        let t = &self.tiles[k];
        let ExprKind::Load { index, .. } = f.exprs[e].kind.clone() else {
            return e;
        };
        let i32t = Scalar::I32;
        let mut at = [None; 2];
        for d in 0..2 {
            let (lp, coef) = t.place.at[d];
            let place = f.expr(ExprKind::Var(self.places[lp]), i32t);
            at[d] = Some(Reads::line(
                f,
                coef * self.steps[lp],
                place,
                off[d] - t.place.lo[d],
            ));
        }
        let [Some(row), Some(col)] = at else {
            return e;
        };
        let w = f.int(t.size[1], i32t);
        let row_w = f.exprs.push(crate::lir::Expr {
            kind: ExprKind::Binary(BinOp::Mul, row, w),
            ty: i32t,
            lanes: 1,
            exact: true,
        });
        let flat = f.exprs.push(crate::lir::Expr {
            kind: ExprKind::Binary(BinOp::Add, row_w, col),
            ty: i32t,
            lanes: 1,
            exact: true,
        });
        let (lanes, ty) = (f.exprs[e].lanes, f.exprs[e].ty);
        let flat = match f.exprs[index[1]].kind {
            ExprKind::Ramp { stride, .. } => f.exprs.push(crate::lir::Expr {
                kind: ExprKind::Ramp { base: flat, stride },
                ty: i32t,
                lanes,
                exact: false,
            }),
            _ => flat,
        };
        f.exprs.push(crate::lir::Expr {
            kind: ExprKind::Load {
                buf: t.temp,
                index: vec![flat],
                checked: false,
            },
            ty,
            lanes,
            exact: false,
        })
    }
}
