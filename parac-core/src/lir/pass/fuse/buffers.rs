//! A fused task's buffers: the producer's rows computed into them ([`rows_into`]), the rows
//! computed once for all tasks ([`edges`]), a row stored from them for later readers
//! ([`store_row`], [`store_from`]), their width and columns.

use super::*;

/// The rows of `t` the consumer reads at task-invariant rows (a border rule's entries at
/// constant rows, `h[3][*]`, `h[M - 2][*]`), at most [`MAX_EDGES`], computed once before the
/// tasks into a buffer of their own, row `i` holding `rows[i]` where it is inside `t`: the
/// buffer, and its allocation then the loops computing it. Without it the exact fallback would
/// inline the producer's point at each such read (laplacian's `br1`: 60 reads, over the code
/// budget).
pub(super) fn edges(
    func: &mut Func,
    f: &Function,
    p: &Producer,
    rows: Vec<ExprId>,
    cols: Option<Columns>,
) -> Option<(Edges, Vec<StmtId>)> {
    if rows.is_empty() || rows.len() > MAX_EDGES {
        return None;
    }
    let (t, i64t) = (p.t, Scalar::I64);
    let elem = f.matrices[t].elem;
    let temp = func.temps.push(Temp {
        name: format!("{}_edges", f.matrices[t].name),
        elem,
        memory: Memory::Private,
    });
    let rows_t = func.expr(ExprKind::Dim(t, 0), i64t);
    let n = func.int(rows.len() as i128, i64t);
    let width = buffer_width(func, t, cols);
    let mut stmts = vec![func.stmt(Stmt::Allocate {
        buf: Buf::Temp(temp),
        elem,
        memory: Memory::Private,
        extents: vec![n, width],
    })];
    // One loop over the rows (so that the producer's code is there once): row `e` of the
    // buffer is row `rows[e]` of `t`.
    let e = func.var("fe", Scalar::I32);
    let ee = func.expr(ExprKind::Var(e), Scalar::I32);
    let ee = func.cast(ee, i64t);
    let mut r = func.cast(rows[rows.len() - 1], i64t);
    for (i, x) in rows.iter().enumerate().rev().skip(1) {
        let ie = func.int(i as i128, i64t);
        let is = func.binary(BinOp::Eq, ee, ie, Scalar::Bool);
        let x = func.cast(*x, i64t);
        r = func.expr(ExprKind::Select(is, x, r), i64t);
    }
    let xv = func.var("fer", i64t);
    let xe = func.expr(ExprKind::Var(xv), i64t);
    let (y, (ylo, yhi), at, col) = column_loop(func, p, cols, xe);
    let at64 = func.cast(at, i64t);
    let value = point_at(func, p, xe, at64);
    let store = func.stmt(Stmt::Store {
        buf: Buf::Temp(temp),
        index: vec![ee, col],
        value,
        checked: false,
    });
    let columns = func.for_loop(y, (ylo, yhi, 1), LoopKind::Serial, store);
    let zero = func.int(0, i64t);
    let (zero32, n32) = (
        func.int(0, Scalar::I32),
        func.int(rows.len() as i128, Scalar::I32),
    );
    let ge = func.binary(BinOp::Ge, xe, zero, Scalar::Bool);
    let lt = func.binary(BinOp::Lt, xe, rows_t, Scalar::Bool);
    let inside = func.binary(BinOp::And, ge, lt, Scalar::Bool);
    let row = [
        func.stmt(Stmt::Let(xv, r)),
        func.stmt(Stmt::If(inside, columns, None)),
    ];
    let row = func.stmt(Stmt::Block(row.to_vec()));
    stmts.push(func.for_loop(e, (zero32, n32, 1), LoopKind::Serial, row));
    Some((Edges { temp, rows }, stmts))
}

/// The producer's rows `r0 .. r1` (`i64`) into private buffer `temp`, whose first row is `r0`:
/// its loop over rows.
pub(super) fn rows_into(
    func: &mut Func,
    p: &Producer,
    temp: TempId,
    (r0, r1): (ExprId, ExprId),
    cols: Option<Columns>,
) -> StmtId {
    let i64t = Scalar::I64;
    let px = func.expr(ExprKind::Var(p.x), func.vars[p.x].ty);
    let px64 = func.cast(px, i64t);
    // The columns: `p`'s own loop, or the ones the buffer holds, `p.y` bound to each in turn.
    let (y, (ylo, yhi), head, col) = match cols {
        None => {
            let py = func.expr(ExprKind::Var(p.y), func.vars[p.y].ty);
            (p.y, p.columns, None, func.cast(py, i64t))
        }
        Some(_) => {
            let (j, bounds, at, col) = column_loop(func, p, cols, px64);
            (j, bounds, Some(func.stmt(Stmt::Let(p.y, at))), col)
        }
    };
    let row = func.binary(BinOp::Sub, px64, r0, i64t);
    let mut point: Vec<StmtId> = head.into_iter().collect();
    point.extend(p.lets.iter().map(|(v, e)| func.stmt(Stmt::Let(*v, *e))));
    point.push(func.stmt(Stmt::Store {
        buf: Buf::Temp(temp),
        index: vec![row, col],
        value: p.value,
        checked: false,
    }));
    let point = func.stmt(Stmt::Block(point));
    let y_loop = func.for_loop(y, (ylo, yhi, 1), LoopKind::Serial, point);
    let xt = func.vars[p.x].ty;
    let (plo, phi) = (func.cast(r0, xt), func.cast(r1, xt));
    func.for_loop(p.x, (plo, phi, 1), LoopKind::Serial, y_loop)
}

/// Row `x` of `t` (the consumer's row variable) stored from the task's buffer, whose first
/// row is `r0`: `for y in P's columns { t[x][y] = T[x - r0][y] }`, where a fused reader's tasks
/// store `t` for later readers.
pub(super) fn store_row(
    func: &mut Func,
    p: &Producer,
    temp: TempId,
    x: VarId,
    r0: ExprId,
) -> StmtId {
    let i64t = Scalar::I64;
    let xe = func.expr(ExprKind::Var(x), func.vars[x].ty);
    let x64 = func.cast(xe, i64t);
    let y = func.var("fy", func.vars[p.y].ty);
    let ye = func.expr(ExprKind::Var(y), func.vars[y].ty);
    let y64 = func.cast(ye, i64t);
    let store = store_from(func, (p.t, temp), (x64, y64), (r0, None), p.checked);
    func.for_loop(y, (p.columns.0, p.columns.1, 1), LoopKind::Serial, store)
}

/// `t[x][y] = T[x - r0][y - c0]`: a point of `t` stored from `temp`, a buffer of a box of it
/// whose first row is `r0` and first column `c0` (`None`: every column, from 0), where fused
/// tasks (or an OpenCL kernel's tiles) store `t` for later readers.
pub(super) fn store_from(
    func: &mut Func,
    (t, temp): (usize, TempId),
    (x, y): (ExprId, ExprId),
    (r0, c0): (ExprId, Option<ExprId>),
    checked: bool,
) -> StmtId {
    let i64t = Scalar::I64;
    let row = func.binary(BinOp::Sub, x, r0, i64t);
    let col = match c0 {
        Some(c0) => func.binary(BinOp::Sub, y, c0, i64t),
        None => y,
    };
    let value = func.expr(
        ExprKind::Load {
            buf: Buf::Temp(temp),
            index: vec![row, col],
            checked: false,
        },
        func.temps[temp].elem,
    );
    func.stmt(Stmt::Store {
        buf: Buf::Matrix(t),
        index: vec![x, y],
        value,
        checked,
    })
}

/// A buffer's row length for `t`: its columns, or the consumer's where the buffers hold the
/// columns `k j + b` alone.
pub(super) fn buffer_width(func: &mut Func, t: usize, cols: Option<Columns>) -> ExprId {
    let i64t = Scalar::I64;
    match cols {
        None => func.expr(ExprKind::Dim(t, 1), i64t),
        Some(c) => {
            let n = func.cast(c.count, i64t);
            let zero = func.int(0, i64t);
            func.expr(ExprKind::Call(Builtin::Max, vec![n, zero]), i64t)
        }
    }
}

/// The loop over the columns a buffer of `p`'s matrix holds, at row `x` (`i64`): a new
/// variable, its bounds, and at its value the column of `t` (at `p.y`'s type) and the buffer's
/// column (`i64`). Every column of `p`'s own loop, or where the buffers hold the columns
/// `k j + b` alone ([`Columns`]), `j` over the consumer's columns whose `k j + b` is inside `t`.
pub(super) fn column_loop(
    func: &mut Func,
    p: &Producer,
    cols: Option<Columns>,
    x: ExprId,
) -> (VarId, (ExprId, ExprId), ExprId, ExprId) {
    let (i64t, yt) = (Scalar::I64, func.vars[p.y].ty);
    let v = func.var(&func.vars[p.y].name.clone(), yt);
    let ve = func.expr(ExprKind::Var(v), yt);
    let v64 = func.cast(ve, i64t);
    match cols {
        None => {
            let at_row = HashMap::from([(p.x, func.cast(x, func.vars[p.x].ty))]);
            let lo = substitute(func, p.columns.0, &at_row, false);
            let hi = substitute(func, p.columns.1, &at_row, false);
            (v, (lo, hi), ve, v64)
        }
        Some(c) => {
            // `k j + b < dim(t, 1)` for `j < (dim(t, 1) - b + k - 1) / k` (`0 <= b < k`).
            let cols_t = func.expr(ExprKind::Dim(p.t, 1), i64t);
            let up = func.int(c.k - 1 - c.b, i64t);
            let num = func.binary(BinOp::Add, cols_t, up, i64t);
            let k64 = func.int(c.k, i64t);
            let inside = func.binary(BinOp::Div, num, k64, i64t);
            let count = func.cast(c.count, i64t);
            let hi = func.expr(ExprKind::Call(Builtin::Min, vec![count, inside]), i64t);
            let hi = func.cast(hi, yt);
            let lo = func.int(0, yt);
            let (k, b) = (func.int(c.k, yt), func.int(c.b, yt));
            let kj = func.binary(BinOp::Mul, k, ve, yt);
            let at = func.binary(BinOp::Add, kj, b, yt);
            (v, (lo, hi), at, v64)
        }
    }
}
