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
//!
//! Staged (`lir::Options::stage_transposed`): a tile row still reads its column an element
//! per cache line. So each tile of a matrix read down its columns at an index that moves by
//! one along a row and one down a column (a transpose, a rotation, a flip of either) is first
//! copied into a temporary of the task's in the order the points read it ([`Stmt::Stage`],
//! which the CPU path runs in blocks transposed in registers), and the tile's rows read the
//! temporary along their rows, as any other row:
//!
//! ```text
//! for ty .. {
//!   inside = stage src[index at (tx, ty)] into t    // every element inside the matrix?
//!   if inside { rows: body with src[..] read as t[x - tx][y - ty] } else { rows: body }
//! }
//! ```
//!
//! The tile where an element is outside runs as before, its checked reads failing as the
//! program's do. Legal because no iteration of the region writes the matrix staged.
//!
//! Directly (`lir::Options::stage_direct`): where a tile's points do nothing but store the
//! value staged at their own point of a matrix written (`dst[x][y] = src[y][x]`, a rotation
//! likewise), the temporary would be copied row by row into that matrix as it is; so the tile
//! is staged into the matrix's rows themselves ([`StageInto::Matrix`]: the task owns them),
//! and its rows run only where an element read or written is outside:
//!
//! ```text
//! for ty .. {
//!   inside = stage src[index at (tx, ty)] into dst[tx][ty]
//!   if !inside { rows: body }
//! }
//! ```

use crate::ir::{BinOp, UnOp};
use crate::lir::affine::{Leaf, affine};
use crate::lir::visit::{
    Mutator, Visitor, mentions, rebuild_expr, rebuild_stmt, substitute, walk_expr,
};
use crate::lir::{
    Buf, ExprId, ExprKind, Func, Loop, LoopKind, MatrixId, Memory, Scalar, Stage, StageInto, Stmt,
    StmtId, Temp, VarId,
};
use std::collections::HashMap;

/// The default tile (`lir::Options::tile_transposed`): 64 rows of the written matrices by 128
/// points of a row. A tile's reads are 128 rows of the read matrix, each 64 elements (one or a
/// few lines), its writes 64 rows of 128: tens of KiB, in every second-level cache, and the
/// tile rows long enough that each row's split into border and interior (`pass::partition`)
/// is paid over 128 points. (32 x 32 measured 1.4x slower on a 3840x2160 transpose, 32 x 128
/// level.)
pub const TILE: (i64, i64) = (64, 128);

/// Tiles every row-parallel region whose inner loop reads a matrix down its columns; whether
/// one was.
pub fn run(func: &mut Func, (rows, cols): (i64, i64), stage: bool, direct: bool) -> bool {
    let mut changed = false;
    for r in func.regions() {
        let Stmt::Region { body, .. } = func.stmts[r] else {
            continue;
        };
        let staging = stage.then_some(direct);
        if let Some(tiled) = tile(func, body, (rows.max(1), cols.max(1)), staging) {
            if let Stmt::Region { body, .. } = &mut func.stmts[r] {
                *body = tiled;
            }
            changed = true;
        }
    }
    changed
}

/// The loop `s` in tiles, where it is a row-parallel loop of step 1 whose body is one serial
/// loop of step 1, bounds independent of the outer variable, reading down a column; staged
/// where `stage` is some (and directly where it is `Some(true)`).
fn tile(
    func: &mut Func,
    s: StmtId,
    (rows, cols): (i64, i64),
    stage: Option<bool>,
) -> Option<StmtId> {
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
    let tile = Tile {
        x,
        y,
        tx,
        ty,
        rows: (x_hi, rows),
        cols: (row_hi, cols),
    };
    let (allocs, each) = match stage {
        Some(direct) => staged(func, &tile, outer.body, tile_rows, direct),
        None => (Vec::new(), tile_rows),
    };
    let tile_cols = func.for_loop(ty, (inner.lo, inner.hi, cols), LoopKind::Serial, each);
    let task = match allocs.is_empty() {
        true => tile_cols,
        false => func.stmt(Stmt::Block(allocs.into_iter().chain([tile_cols]).collect())),
    };
    Some(func.for_loop(
        tx,
        (outer.lo, outer.hi, rows),
        LoopKind::ParallelChunks(None),
        task,
    ))
}

/// A tile's variables: the points' `x` (rows) and `y`, the tile's first `tx` and `ty`, and
/// each side's end (an expression of the variable's type) and greatest length.
struct Tile {
    x: VarId,
    y: VarId,
    tx: VarId,
    ty: VarId,
    rows: (ExprId, i64),
    cols: (ExprId, i64),
}

/// The greatest number of matrices' tiles one tile stages.
const MOST_STAGED: usize = 2;

/// The tile's rows `tile_rows` (the points of `body`, the region's) with each matrix read
/// down its columns staged ([`Stmt::Stage`]): the temporaries' allocations (for the task),
/// and the statements for each tile. `(vec![], tile_rows)` where nothing is staged. Where
/// `direct` and the points only copy the one matrix staged into a matrix written at the
/// point, the tile is staged there ([`StageInto::Matrix`]), the rows run only where it was
/// not.
fn staged(
    func: &mut Func,
    t: &Tile,
    body: StmtId,
    tile_rows: StmtId,
    direct: bool,
) -> (Vec<StmtId>, StmtId) {
    let reads = column_reads(func, t, body);
    if reads.is_empty() {
        return (Vec::new(), tile_rows);
    }
    let i64_of = |func: &mut Func, v: VarId| {
        let e = func.expr(ExprKind::Var(v), func.vars[v].ty);
        func.cast(e, Scalar::I64)
    };
    let count = |func: &mut Func, end: ExprId, first: VarId| {
        let end = func.cast(end, Scalar::I64);
        let first = i64_of(func, first);
        func.binary(BinOp::Sub, end, first, Scalar::I64)
    };
    let (rows, cols) = (count(func, t.rows.0, t.tx), count(func, t.cols.0, t.ty));
    let at = [
        {
            let (x, tx) = (i64_of(func, t.x), i64_of(func, t.tx));
            func.binary(BinOp::Sub, x, tx, Scalar::I64)
        },
        {
            let (y, ty) = (i64_of(func, t.y), i64_of(func, t.ty));
            func.binary(BinOp::Sub, y, ty, Scalar::I64)
        },
    ];
    // An index at the tile's first point: `x` and `y` replaced by `tx` and `ty`.
    let first: HashMap<VarId, ExprId> = [(t.x, t.tx), (t.y, t.ty)]
        .into_iter()
        .map(|(v, w)| (v, func.expr(ExprKind::Var(w), func.vars[w].ty)))
        .collect();
    if direct
        && let [read] = &reads[..]
        && let Some(dst) = copied_into(func, t, body, read)
    {
        let index = vec![i64_of(func, t.tx), i64_of(func, t.ty)];
        let into = StageInto::Matrix { buf: dst, index };
        let (stage, v) = stage_of(func, read, &first, into, (rows, cols));
        let not = func.expr(ExprKind::Unary(UnOp::Not, v), Scalar::Bool);
        let rest = func.stmt(Stmt::If(not, tile_rows, None));
        return (Vec::new(), func.stmt(Stmt::Block(vec![stage, rest])));
    }
    let (mut allocs, mut stages, mut replace) = (Vec::new(), Vec::new(), Vec::new());
    let mut all: Option<ExprId> = None;
    for read in reads {
        // A load's type is its matrix's element type.
        let elem = func.exprs[read.loads[0]].ty;
        let name = format!("{}_tile", func.matrices[read.matrix]);
        let temp = func.temps.push(Temp {
            name,
            elem,
            memory: Memory::Private,
        });
        let extents = vec![
            func.int(i128::from(t.rows.1), Scalar::I64),
            func.int(i128::from(t.cols.1), Scalar::I64),
        ];
        allocs.push(func.stmt(Stmt::Allocate {
            buf: Buf::Temp(temp),
            elem,
            memory: Memory::Private,
            extents,
        }));
        let into = StageInto::Temp {
            temp,
            stride: t.cols.1,
        };
        let (stage, v) = stage_of(func, &read, &first, into, (rows, cols));
        stages.push(stage);
        all = Some(match all {
            None => v,
            Some(a) => func.binary(BinOp::And, a, v, Scalar::Bool),
        });
        let load = func.expr(
            ExprKind::Load {
                buf: Buf::Temp(temp),
                index: at.to_vec(),
                checked: false,
            },
            elem,
        );
        replace.push((read.loads, load));
    }
    let mut copy = Staged { replace };
    let fast = copy.mutate_stmt(func, tile_rows);
    let choice = func.stmt(Stmt::If(all.expect("a read"), fast, Some(tile_rows)));
    stages.push(choice);
    (allocs, func.stmt(Stmt::Block(stages)))
}

/// The stage of `read`'s tile at the tile's first point (`first`: the points' variables by
/// the tile's) `into` a buffer, and the flag it binds, read.
fn stage_of(
    func: &mut Func,
    read: &ColumnRead,
    first: &HashMap<VarId, ExprId>,
    into: StageInto,
    (rows, cols): (ExprId, ExprId),
) -> (StmtId, ExprId) {
    let index = read
        .index
        .iter()
        .map(|i| substitute(func, *i, first, false))
        .collect();
    let inside = func.var("staged", Scalar::Bool);
    let stage = func.stmt(Stmt::Stage(Stage {
        into,
        buf: read.matrix,
        index,
        y_dim: read.y_dim,
        y_step: read.y_step,
        x_step: read.x_step,
        rows,
        cols,
        inside,
    }));
    (stage, func.expr(ExprKind::Var(inside), Scalar::Bool))
}

/// The matrix that the points of `body` (a row's loop) copy `read` into, where they do only
/// that: one store,
/// at `[x][y]` of a matrix of two dimensions, of the value read.
fn copied_into(func: &Func, t: &Tile, body: StmtId, read: &ColumnRead) -> Option<MatrixId> {
    let one = |s: StmtId| match &func.stmts[s] {
        Stmt::Block(b) if b.len() == 1 => b[0],
        _ => s,
    };
    let points = loop_of_kind(func, one(body), LoopKind::Serial).filter(|l| l.var == t.y)?;
    let store = one(points.body);
    let Stmt::Store {
        buf: Buf::Matrix(dst),
        index,
        value,
        ..
    } = &func.stmts[store]
    else {
        return None;
    };
    // The variable itself: one term, no constant, exact at its width.
    let at = |e: ExprId, v: VarId| {
        affine(func, e).is_some_and(|a| {
            a.terms == [(Leaf::Var(v.index()), 1)] && a.constant == 0 && a.bits >= 32
        })
    };
    // A store's value is at its matrix's element type: the load's, the read matrix's.
    (read.loads.contains(value) && index.len() == 2 && at(index[0], t.x) && at(index[1], t.y))
        .then_some(*dst)
}

/// A matrix read down its columns at one index: its loads (of that index), the dimension
/// and direction of the index that moves with `y` and the direction of the last with `x`.
struct ColumnRead {
    matrix: MatrixId,
    index: Vec<ExprId>,
    loads: Vec<ExprId>,
    y_dim: usize,
    y_step: i64,
    x_step: i64,
}

/// The reads in `body` that a tile may stage: of a matrix the region never writes, at an
/// index whose last dimension moves by 1 or -1 with `x` alone, one leading dimension by 1 or
/// -1 with `y` alone, the others with neither, and nothing bound inside the region's rows;
/// at most [`MOST_STAGED`] indices, the most read first.
fn column_reads(func: &Func, t: &Tile, body: StmtId) -> Vec<ColumnRead> {
    struct Scan {
        loads: Vec<ExprId>,
        written: Vec<MatrixId>,
        bound: Vec<VarId>,
    }
    impl Visitor for Scan {
        fn visit_expr(&mut self, f: &Func, e: ExprId) {
            if let ExprKind::Load {
                buf: Buf::Matrix(_),
                ..
            } = &f.exprs[e].kind
            {
                self.loads.push(e);
            }
            walk_expr(self, f, e)
        }
        fn visit_stmt(&mut self, f: &Func, s: StmtId) {
            match &f.stmts[s] {
                Stmt::Store {
                    buf: Buf::Matrix(m),
                    ..
                }
                | Stmt::Update {
                    buf: Buf::Matrix(m),
                    ..
                } => self.written.push(*m),
                Stmt::Let(v, _) | Stmt::For { var: v, .. } => self.bound.push(*v),
                _ => {}
            }
            crate::lir::visit::walk_stmt(self, f, s)
        }
    }
    let mut scan = Scan {
        loads: Vec::new(),
        written: Vec::new(),
        bound: Vec::new(),
    };
    scan.visit_stmt(func, body);
    let mut reads: Vec<ColumnRead> = Vec::new();
    for e in scan.loads {
        let ExprKind::Load {
            buf: Buf::Matrix(m),
            index,
            ..
        } = &func.exprs[e].kind
        else {
            continue;
        };
        if scan.written.contains(m) {
            continue;
        }
        if let Some(r) = reads
            .iter_mut()
            .find(|r| r.matrix == *m && same_index(func, &r.index, index))
        {
            r.loads.push(e);
            continue;
        }
        let Some((y_dim, y_step, x_step)) = moves(func, t, index, &scan.bound) else {
            continue;
        };
        reads.push(ColumnRead {
            matrix: *m,
            index: index.clone(),
            loads: vec![e],
            y_dim,
            y_step,
            x_step,
        });
    }
    reads.sort_by_key(|r| std::cmp::Reverse(r.loads.len()));
    reads.truncate(MOST_STAGED);
    reads
}

/// Whether two indices are the same affine forms.
fn same_index(func: &Func, a: &[ExprId], b: &[ExprId]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(a, b)| {
            a == b || matches!((affine(func, *a), affine(func, *b)), (Some(p), Some(q)) if p == q)
        })
}

/// For an index read down a column: the dimension moving with `y`, its step, and the last
/// dimension's step with `x`.
fn moves(func: &Func, t: &Tile, index: &[ExprId], bound: &[VarId]) -> Option<(usize, i64, i64)> {
    let lead = index.len().checked_sub(1)?;
    let forms: Vec<_> = index
        .iter()
        .map(|i| affine(func, *i))
        .collect::<Option<_>>()?;
    if index
        .iter()
        .any(|i| mentions(func, *i, |v| bound.contains(&v) && v != t.x && v != t.y))
    {
        return None;
    }
    let step = |c: i128| match c {
        1 => Some(1i64),
        -1 => Some(-1),
        _ => None,
    };
    let lastf = forms.last()?;
    let x_step = step(lastf.coef(t.x))?;
    if lastf.coef(t.y) != 0 {
        return None;
    }
    let mut y_dim = None;
    for (k, f) in forms[..lead].iter().enumerate() {
        if f.coef(t.x) != 0 {
            return None;
        }
        match f.coef(t.y) {
            0 => {}
            c if y_dim.is_none() => y_dim = Some((k, step(c)?)),
            _ => return None,
        }
    }
    let (y_dim, y_step) = y_dim?;
    Some((y_dim, y_step, x_step))
}

/// A deep copy of the tile's rows with each staged load replaced by its temporary's.
struct Staged {
    replace: Vec<(Vec<ExprId>, ExprId)>,
}

impl Mutator for Staged {
    fn mutate_expr(&mut self, f: &mut Func, e: ExprId) -> ExprId {
        if let Some((_, by)) = self.replace.iter().find(|(loads, _)| loads.contains(&e)) {
            return *by;
        }
        rebuild_expr(self, f, e)
    }
    fn mutate_stmt(&mut self, f: &mut Func, s: StmtId) -> StmtId {
        // Every statement anew: the copy shares none with the rows it stands beside.
        let n = rebuild_stmt(self, f, s);
        match n == s {
            true => {
                let stmt = f.stmts[s].clone();
                f.stmts.push(stmt)
            }
            false => n,
        }
    }
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
