//! Transposed reads in tiles (the CPU lowering). A row-parallel region whose inner loop reads a
//! matrix down its columns (`dst[x][y] = src[y][x]`: along the inner variable `y` the read
//! steps a whole row of `src`, along the outer `x` one element) touches a new cache line at
//! every point, and each line again for each of the next rows of `x`, by then evicted: a
//! transpose or a rotation of a large image runs at the memory's latency, not its bandwidth.
//!
//! In tiles of `rows` x `cols` points, the lines of `cols` rows of the read matrix that one
//! tile uses stay in the first-level cache while its `rows` rows of `x` use them:
//!
//! ```text
//! parallel for x in [lo, hi) {            parallel chunks for tx in [lo, hi) step rows {
//!   for y in [ylo, yhi) { body }    =>      for ty in [ylo, yhi) step cols {
//! }                                           chunk rows for x in [tx, min(tx + rows, hi)) {
//!                                               for y in [ty, min(ty + cols, yhi)) { body }
//!                                           } } }
//! ```
//!
//! Legal because the region is row-parallel (`pass::parallel`): no iteration of `x` reads what
//! another writes, so the tiles may interleave the rows, each row's points still in order.
//! The body is unchanged (its accesses keep their checks; `pass::partition` then splits each
//! tile row's loop as it splits a whole row's).

use crate::lir::affine::affine;
use crate::lir::visit::{Visitor, mentions, walk_expr};
use crate::lir::{Buf, ExprId, ExprKind, Func, Loop, LoopKind, Scalar, Stmt, StmtId, VarId};

/// The default tile (`lir::Options::tile_transposed`): 64 rows of the written matrices by 128
/// points of a row. A tile's reads are 128 rows of the read matrix, each 64 elements (one or a
/// few lines), its writes 64 rows of 128: tens of KiB, in every second-level cache, and the
/// tile rows long enough that each row's split into border and interior (`pass::partition`)
/// is paid over 128 points. (32 x 32 measured 1.4x slower on a 3840x2160 transpose, 32 x 128
/// level.)
pub const TILE: (i64, i64) = (64, 128);

/// Tiles every row-parallel region whose inner loop reads a matrix down its columns; whether
/// one was.
pub fn run(func: &mut Func, (rows, cols): (i64, i64)) -> bool {
    let mut changed = false;
    for r in func.regions() {
        let Stmt::Region { body, .. } = func.stmts[r] else {
            continue;
        };
        if let Some(tiled) = tile(func, body, (rows.max(1), cols.max(1))) {
            if let Stmt::Region { body, .. } = &mut func.stmts[r] {
                *body = tiled;
            }
            changed = true;
        }
    }
    changed
}

/// The loop `s` in tiles, where it is a row-parallel loop of step 1 whose body is one serial
/// loop of step 1, bounds independent of the outer variable, reading down a column.
fn tile(func: &mut Func, s: StmtId, (rows, cols): (i64, i64)) -> Option<StmtId> {
    let outer = loop_of_kind(func, s, LoopKind::Parallel)?;
    let inner_at = match &func.stmts[outer.body] {
        Stmt::Block(b) if b.len() == 1 => b[0],
        _ => outer.body,
    };
    let inner = loop_of_kind(func, inner_at, LoopKind::Serial)?;
    let (x, y) = (outer.var, inner.var);
    let free = |e: ExprId| !mentions(func, e, |v| v == x);
    if outer.step != 1 || inner.step != 1 || !free(inner.lo) || !free(inner.hi) {
        return None;
    }
    if !down_columns(func, inner.body, x, y) {
        return None;
    }
    let (xt, yt) = (func.vars[x].ty, func.vars[y].ty);
    let tx = func.var("tile_x", xt);
    let ty = func.var("tile_y", yt);
    // The tile's rows and columns end at `min(start + size, end)`, in `long` (no wrap).
    let end = |func: &mut Func, start: VarId, size: i64, hi: ExprId, t: Scalar| {
        let v = func.expr(ExprKind::Var(start), t);
        let n = func.int(i128::from(size), Scalar::I64);
        let e = func.chunk_end(v, n, hi);
        func.cast(e, t)
    };
    let row_lo = func.expr(ExprKind::Var(ty), yt);
    let row_hi = end(func, ty, cols, inner.hi, yt);
    let points = func.for_loop(y, (row_lo, row_hi, 1), LoopKind::Serial, inner.body);
    let x_lo = func.expr(ExprKind::Var(tx), xt);
    let x_hi = end(func, tx, rows, outer.hi, xt);
    let tile_rows = func.for_loop(x, (x_lo, x_hi, 1), LoopKind::ChunkRows, points);
    let tile_cols = func.for_loop(ty, (inner.lo, inner.hi, cols), LoopKind::Serial, tile_rows);
    Some(func.for_loop(
        tx,
        (outer.lo, outer.hi, rows),
        LoopKind::ParallelChunks(None),
        tile_cols,
    ))
}

/// The loop `s`, where it is a loop of `kind`.
fn loop_of_kind(func: &Func, s: StmtId, kind: LoopKind) -> Option<Loop> {
    match &func.stmts[s] {
        Stmt::For { kind: k, .. } if *k == kind => Loop::of(func, s),
        _ => None,
    }
}

/// Whether the statements `s` read a matrix down its columns: a load whose last index moves
/// with `x` and not with `y`, and an earlier one with `y`.
fn down_columns(func: &Func, s: StmtId, x: VarId, y: VarId) -> bool {
    struct Loads(Vec<Vec<ExprId>>);
    impl Visitor for Loads {
        fn visit_expr(&mut self, f: &Func, e: ExprId) {
            if let ExprKind::Load {
                buf: Buf::Matrix(_),
                index,
                ..
            } = &f.exprs[e].kind
            {
                self.0.push(index.clone());
            }
            walk_expr(self, f, e)
        }
    }
    let mut loads = Loads(Vec::new());
    loads.visit_stmt(func, s);
    loads.0.iter().any(|index| {
        let Some((last, lead)) = index.split_last() else {
            return false;
        };
        let Some(last) = affine(func, *last) else {
            return false;
        };
        last.coef(x) != 0
            && last.coef(y) == 0
            && lead
                .iter()
                .any(|i| affine(func, *i).is_some_and(|a| a.coef(y) != 0))
    })
}
