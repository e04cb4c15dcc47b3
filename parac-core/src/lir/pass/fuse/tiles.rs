//! Work-groups that own tiles (OpenCL): expression helpers over `i64` indices, the loops over
//! the tiles' work-groups, a group's work-items sharing the points of a box. Shared by the time
//! bands (`time::gpu`, overlapped and split) and fusion across stages (`fuse::gpu`).

use crate::codegen::schedule::TIME_GROUP;
use crate::ir::{BinOp, Builtin, Scalar};
use crate::lir::{ExprId, ExprKind, Func, LoopKind, Stmt, StmtId, VarId};

/// Expression helpers over `i64` indices.
pub(super) struct B<'a> {
    pub(super) func: &'a mut Func,
}

impl B<'_> {
    pub(super) fn int(&mut self, v: i128) -> ExprId {
        self.func.int(v, Scalar::I64)
    }
    pub(super) fn var(&mut self, v: VarId) -> ExprId {
        let t = self.func.vars[v].ty;
        self.func.expr(ExprKind::Var(v), t)
    }
    pub(super) fn long(&mut self, e: ExprId) -> ExprId {
        self.func.cast(e, Scalar::I64)
    }
    pub(super) fn op(&mut self, op: BinOp, a: ExprId, b: ExprId) -> ExprId {
        self.func.binary(op, a, b, Scalar::I64)
    }
    pub(super) fn call(&mut self, b: Builtin, a: ExprId, c: ExprId) -> ExprId {
        self.func.expr(ExprKind::Call(b, vec![a, c]), Scalar::I64)
    }
    /// `let name = e` (an `i64`): the statement and the variable's value.
    pub(super) fn bind(&mut self, name: &str, e: ExprId, out: &mut Vec<StmtId>) -> ExprId {
        let v = self.func.var(name, Scalar::I64);
        out.push(self.func.stmt(Stmt::Let(v, e)));
        self.var(v)
    }
    /// `let name = clip(a op k, at)`: a box's bound, clipped to the grid (or the tile).
    pub(super) fn bound(
        &mut self,
        name: &str,
        (a, op, k): (ExprId, BinOp, ExprId),
        (clip, at): (Builtin, ExprId),
        out: &mut Vec<StmtId>,
    ) -> ExprId {
        let e = self.op(op, a, k);
        let e = self.call(clip, e, at);
        self.bind(name, e, out)
    }

    /// `body` in loops over the work-groups of tiles covering the grid, exactly the groups the
    /// launch has (never tested): per loop, innermost first, its OpenCL dimension, variable,
    /// the grid's extent along it and the tile's.
    pub(super) fn tiles(&mut self, body: StmtId, loops: [(u8, VarId, ExprId, i128); 2]) -> StmtId {
        self.tiled(body, loops, LoopKind::GpuBlock)
    }

    /// [`B::tiles`], each tile a work-item's (`GpuThread` loops: the launch's index space).
    pub(super) fn item_tiles(
        &mut self,
        body: StmtId,
        loops: [(u8, VarId, ExprId, i128); 2],
    ) -> StmtId {
        self.tiled(body, loops, LoopKind::GpuThread)
    }

    fn tiled(
        &mut self,
        mut body: StmtId,
        loops: [(u8, VarId, ExprId, i128); 2],
        kind: fn(u8) -> LoopKind,
    ) -> StmtId {
        let i32t = Scalar::I32;
        for (d, v, extent, size) in loops {
            let up = self.int(size - 1);
            let span = self.op(BinOp::Add, extent, up);
            let se = self.int(size);
            let count = self.op(BinOp::Div, span, se);
            let count = self.func.cast(count, i32t);
            let z = self.func.int(0, i32t);
            body = self.func.for_loop(v, (z, count, 1), kind(d), body);
        }
        body
    }

    /// The work-items of a group (dimension 1 outer) around `body(t1, t0)`.
    pub(super) fn items(
        &mut self,
        body: impl FnOnce(&mut Self, ExprId, ExprId) -> StmtId,
    ) -> StmtId {
        let i32t = Scalar::I32;
        let t = [self.func.var("item1", i32t), self.func.var("item0", i32t)];
        let (t1, t0) = (self.var(t[0]), self.var(t[1]));
        let (t1, t0) = (self.long(t1), self.long(t0));
        let inner = body(self, t1, t0);
        let z = self.func.int(0, i32t);
        let [g0, g1] = TIME_GROUP.map(|g| self.func.int(i128::from(g), i32t));
        let l0 = self
            .func
            .for_loop(t[1], (z, g0, 1), LoopKind::GpuThread(0), inner);
        self.func
            .for_loop(t[0], (z, g1, 1), LoopKind::GpuThread(1), l0)
    }
    /// The group's work-items sharing the points of a box (rows `rows[0] .. rows[1]`, columns
    /// alike): each its share ([`B::share`]) from its place in the group.
    pub(super) fn cover(
        &mut self,
        point: (VarId, VarId, StmtId),
        rows: [ExprId; 2],
        cols: [ExprId; 2],
    ) -> StmtId {
        self.items(|b, t1, t0| {
            let rs = b.op(BinOp::Add, rows[0], t1);
            let cs = b.op(BinOp::Add, cols[0], t0);
            b.share(point, [rs, rows[1]], [cs, cols[1]])
        })
    }

    /// `for x in [lo, hi) step s { for y in [clo, chi) step c { point } }`, the work-item's
    /// share of a box (its first row and column given), `x` and `y` of their own types.
    pub(super) fn share(
        &mut self,
        point: (VarId, VarId, StmtId),
        rows: [ExprId; 2],
        cols: [ExprId; 2],
    ) -> StmtId {
        self.nest(point, rows, cols, TIME_GROUP.map(i64::from))
    }

    /// Every point of a box, one work-item's alone (steps of 1).
    pub(super) fn each(
        &mut self,
        point: (VarId, VarId, StmtId),
        rows: [ExprId; 2],
        cols: [ExprId; 2],
    ) -> StmtId {
        self.nest(point, rows, cols, [1, 1])
    }

    /// The loops of [`B::share`], steps `[columns, rows]`.
    fn nest(
        &mut self,
        (x, y, point): (VarId, VarId, StmtId),
        rows: [ExprId; 2],
        cols: [ExprId; 2],
        [sc, sr]: [i64; 2],
    ) -> StmtId {
        let (xt, yt) = (self.func.vars[x].ty, self.func.vars[y].ty);
        let (ylo, yhi) = (self.func.cast(cols[0], yt), self.func.cast(cols[1], yt));
        let inner = self
            .func
            .for_loop(y, (ylo, yhi, sc), LoopKind::Serial, point);
        let (xlo, xhi) = (self.func.cast(rows[0], xt), self.func.cast(rows[1], xt));
        self.func
            .for_loop(x, (xlo, xhi, sr), LoopKind::Serial, inner)
    }
}
