//! Sliding windows (`lir::Options::slide`, the CPU lowering), in the manner of Halide's sliding
//! window and storage folding and of OpenCV's separable box, morphology and Gaussian filters. A
//! window's reduction (a fold, `ExprKind::Fold`) whose taps are one matrix's elements at
//! `[g(S(x) + i)][h(S(y) + j)]` (row and column border maps `g`, `h`; `S` a loop variable times
//! a positive constant, the stride, plus a constant: a 2:1 downsample's window moves two columns
//! per output) is computed from rows of column reductions instead of tap by tap:
//!
//! 1. **columns** (`rows.rs`): `col[k] = op over i of tap(i, k)` for every column `k` the row's
//!    outputs reach (the stride times its outputs less one, plus the window's width; a stride
//!    of at most the width, so that every column is one some output reads), each row of taps
//!    with its row index bound once, the window's rows written out in one vectorized pass;
//!    kept in the narrowest integer type that holds them;
//! 2. **down the rows** (`slide_rows`, where the region is `for x in 0..M` around the loop over
//!    the columns and every window slides along `x` too, at unit strides): the rows in chunks of
//!    `CHUNK_ROWS` per task (`LoopKind::ParallelChunks`), a sum's columns carried from one row
//!    to the next (`+ entering - leaving`), a minimum's or maximum's from van Herk and
//!    Gil-Werman's blocks down the chunk's source rows; elsewhere (`slide_loop`) the columns
//!    are computed per row;
//! 3. **across the row**: each output combines `col[s .. s + width]` (`s` the stride times the
//!    output's place in the row) directly (a vector's lanes each an output) up to
//!    `DIRECT_BYTES`, else by doubling (a pass per power of two).
//!
//! A convolution with a constant filter that is an outer product `v[i] * h[j]` of integer
//! vectors is a weighted fold: its columns are `sum of v[i] * tap`, its outputs `sum of
//! h[j] * col` (per row; no chunks).
//!
//! Exact for integers only (integer arithmetic wraps, so reassociating, carrying and
//! distributing change no bit; floats stay direct). The rewrite reads exactly the elements the
//! direct form reads (the columns `S(first) + k` are the columns `S(y) + j` of every output and
//! tap, and likewise the rows), so an access outside its matrix fails as it would. The
//! temporaries are private (`Memory::Private`), written before they are read, their accesses
//! inside by construction (`checked: false`). Where a fold does not qualify (its tap reads more
//! than one matrix, a `let` of the loop's body, a border rule's entries; it is evaluated for some
//! columns alone, under an `if` or a `select`, where the columns computed ahead would read taps
//! the direct form never reads), it is left as it is.

use super::partition::has_loop;
use crate::ir::{BinOp, Builtin, Function, ReduceOp, Scalar};
use crate::lir::visit::{Mutator, mutate_body, rebuild_expr, rebuild_stmt};
use crate::lir::{ExprId, ExprKind, Func, LoopKind, Stmt, StmtId, VarId};
use std::collections::HashMap;

mod build;
mod rows;
mod window;

use build::Build;
use window::{At, windows_of};

/// Windows whose columns take up to this many bytes at the output's type (and up to `unroll`
/// columns) combine them at each output directly; wider ones by doubling.
pub(super) const DIRECT_BYTES: i128 = 128;

/// Slides every fold that qualifies in `func`'s regions. A window of up to `unroll` rows has
/// its column reductions written out, a taller one loops over its rows; one of up to `unroll`
/// columns (and `DIRECT_BYTES`) combines them at each output directly, a wider one by
/// doubling.
pub fn run(func: &mut Func, f: &Function, unroll: usize) {
    mutate_body(&mut Slide(f, unroll as i128), func);
}

struct Slide<'a>(&'a Function, i128);

impl Mutator for Slide<'_> {
    fn mutate_expr(&mut self, _: &mut Func, e: ExprId) -> ExprId {
        e
    }

    fn mutate_stmt(&mut self, func: &mut Func, s: StmtId) -> StmtId {
        if let Some(chunked) = slide_rows(func, self.0, s, self.1, Tiles::Tasks) {
            return chunked;
        }
        if let Stmt::For {
            step: 1,
            kind: LoopKind::Serial,
            body,
            ..
        } = func.stmts[s]
            && !has_loop(func, body)
        {
            return slide_loop(func, self.0, s, self.1, None).unwrap_or(s);
        }
        rebuild_stmt(self, func, s)
    }
}

/// The row's outputs' place (`y - first`, `i64`) and count, for loop `y` from `lo` to `hi`.
fn outputs(b: &mut Build, y: VarId, lo: ExprId, hi: ExprId) -> (ExprId, ExprId) {
    let (lo64, hi64) = (b.func.cast(lo, Scalar::I64), b.func.cast(hi, Scalar::I64));
    let yv = b.var(y);
    let y64 = b.func.cast(yv, Scalar::I64);
    (b.sub(y64, lo64), b.sub(hi64, lo64))
}

/// Loop `s` with its qualifying folds slid, or `None` where none qualifies; with `cap`, the
/// loop runs at most that many times and the temporaries have constant extents.
fn slide_loop(
    func: &mut Func,
    f: &Function,
    s: StmtId,
    unroll: i128,
    cap: Option<i128>,
) -> Option<StmtId> {
    let Stmt::For {
        var: y,
        lo,
        hi,
        body,
        ..
    } = func.stmts[s]
    else {
        return None;
    };
    let windows = windows_of(func, f, y, lo, hi, body)?;
    // A work-item's strip has temporaries of constant extent: unit strides alone.
    if cap.is_some() && windows.iter().any(|w| w.stride != 1) {
        return None;
    }
    let mut b = Build {
        func,
        body: Vec::new(),
        cap: None,
        unbounded: false,
    };
    let first = b.func.cast(lo, Scalar::I32);
    let at = At { y, first, x: None };
    let (at_y, count) = outputs(&mut b, y, lo, hi);
    b.cap = cap.map(|c| (count, c));
    let mut replace = HashMap::new();
    for w in &windows {
        // Output `y`'s columns start at `stride * (y - first)`; the row's last ends at
        // `stride * (count - 1) + cols`.
        let stride = b.i64(w.stride);
        let n = b.func.binary(BinOp::Mul, count, stride, Scalar::I64);
        let ext = b.i64(w.cols - w.stride);
        let n = b.add(n, ext);
        // Past the `n` columns, `stride - 1` elements never written nor read: the outputs'
        // reads of every `stride`-th column are then whole chunks of `stride` (the CPU
        // printer's chunked slices), the last chunk's tail inside the row.
        let slack = b.i64(w.stride - 1);
        let extent = b.add(n, slack);
        let col = b.temp("col", w.col_ty, extent);
        w.columns(&mut b, col, n, unroll, at);
        let start = b.func.binary(BinOp::Mul, at_y, stride, Scalar::I64);
        let value = w.across(&mut b, col, n, start, unroll);
        replace.insert(w.fold, value);
    }
    let new_body = Replace(replace).mutate_stmt(b.func, body);
    let l = b.func.for_loop(y, (lo, hi, 1), LoopKind::Serial, new_body);
    b.body.push(l);
    b.finish(count)
}

/// The OpenCL lowering's slide (a plan's `h<W>+slide` or `h<W>+v<R>+slide`, before
/// [`super::gpu`] makes loops work-items). With one row per work-item: in each region whose
/// innermost loop (step 1, no loop inside) has a fold that slides along it, that loop runs `w`
/// outputs at a time, `for y0 in lo..hi step w { for y in y0..min(y0 + w, hi) { .. } }`, and
/// the inner loop is slid as `slide_loop` slides a CPU row: a work-item (one `y0`) computes
/// its outputs' column reductions in a private array of `w` plus the window's width less one,
/// then each output from its columns in serial passes (`Window::across_serial`). With `rows`
/// rows: where every window slides down the rows too, a work-item's `rows` x `w` outputs
/// carry a sum's columns from row to row, a minimum's or maximum's from van Herk's blocks down
/// its source rows (`slide_rows`), a time per output independent of the window. Whether a
/// region was slid (else the function is as it was).
pub fn items(func: &mut Func, f: &Function, [w, rows]: [u32; 2], unroll: usize) -> bool {
    let mut slid = false;
    for s in func.regions() {
        let Stmt::Region { body, .. } = func.stmts[s] else {
            continue;
        };
        let nest = super::gpu::nest(func, body);
        if rows > 1 {
            // Windows carried down `rows` rows ([`slide_rows`]), else nothing.
            let Some(&xl) = nest.len().checked_sub(2).and_then(|k| nest.get(k)) else {
                continue;
            };
            let tiles = Tiles::Items { rows, cols: w };
            if let Some(new) = slide_rows(func, f, xl, unroll as i128, tiles) {
                func.stmts[xl] = func.stmts[new].clone();
                slid = true;
            }
            continue;
        }
        let Some(&inner) = nest.last() else {
            continue;
        };
        let Stmt::For {
            var,
            lo,
            hi,
            step: 1,
            kind: LoopKind::Serial,
            body: inner_body,
        } = func.stmts[inner]
        else {
            continue;
        };
        if w < 2 || has_loop(func, inner_body) {
            continue;
        }
        let (y0, y0e, end) = strip(func, var, hi, w);
        let strip = func.for_loop(var, (y0e, end, 1), LoopKind::Serial, inner_body);
        let Some(slid_strip) = slide_loop(func, f, strip, unroll as i128, Some(i128::from(w)))
        else {
            continue;
        };
        func.stmts[inner] = Stmt::For {
            var: y0,
            lo,
            hi,
            step: i64::from(w),
            kind: LoopKind::Serial,
            body: slid_strip,
        };
        slid = true;
    }
    slid
}

/// A work-item's strip of loop `y` (to `hi`): its first index `y0` (a new variable, and its
/// value) and its end `min(y0 + w, hi)`.
fn strip(func: &mut Func, y: VarId, hi: ExprId, w: u32) -> (VarId, ExprId, ExprId) {
    let ty = func.vars[y].ty;
    let y0 = func.var(&format!("{}_first", func.vars[y].name), ty);
    let y0e = func.expr(ExprKind::Var(y0), ty);
    let wide = func.int(i128::from(w), ty);
    let end = func.binary(BinOp::Add, y0e, wide, ty);
    let end = func.expr(ExprKind::Call(Builtin::Min, vec![end, hi]), ty);
    (y0, y0e, end)
}

/// Rows per task where the windows' column sums slide down the rows ([`slide_rows`]).
const CHUNK_ROWS: i64 = 32;

/// What runs a chunk of rows in [`slide_rows`].
#[derive(Clone, Copy)]
enum Tiles {
    /// The CPU's tasks: [`CHUNK_ROWS`] whole rows each (`ParallelChunks`).
    Tasks,
    /// OpenCL's work-items ([`items`]): `rows` rows by `cols` outputs each, their temporaries
    /// private arrays of constant extent (a minimum's blocks down the rows two-dimensional).
    Items { rows: u32, cols: u32 },
}

/// A region loop `s` (`for x in 0..hi`, its body one loop over the columns) whose windows
/// all slide down its rows as well: its rows in chunks ([`Tiles`]: [`CHUNK_ROWS`] whole rows
/// per CPU task, or a work-item's tile), a sum's columns computed for the chunk's first row and
/// then carried from one row to the next (`col += the row entering - the row leaving`, exact
/// in the column's integer type, which wraps), a minimum's or maximum's from van Herk's blocks
/// down the chunk's source rows. `None` where the loop does not qualify.
fn slide_rows(
    func: &mut Func,
    f: &Function,
    s: StmtId,
    unroll: i128,
    tiles: Tiles,
) -> Option<StmtId> {
    let Stmt::For {
        var: x,
        lo: xlo,
        hi: xhi,
        step: 1,
        kind,
        body,
    } = func.stmts[s]
    else {
        return None;
    };
    let (chunk_rows, row_kind) = match tiles {
        Tiles::Tasks if kind == LoopKind::Parallel => (CHUNK_ROWS, LoopKind::ChunkRows),
        Tiles::Items { rows, .. } if kind == LoopKind::Serial => {
            (i64::from(rows), LoopKind::Serial)
        }
        _ => return None,
    };
    if !matches!(func.exprs[xlo].kind, ExprKind::Int(0)) {
        return None;
    }
    let ys = match &func.stmts[body] {
        Stmt::For { .. } => body,
        Stmt::Block(b) if b.len() == 1 => b[0],
        _ => return None,
    };
    let Stmt::For {
        var: y,
        lo,
        hi,
        step: 1,
        kind: LoopKind::Serial,
        body: ybody,
    } = func.stmts[ys]
    else {
        return None;
    };
    if has_loop(func, ybody) {
        return None;
    }
    // A work-item's outputs: `y0 .. min(y0 + cols, hi)`.
    let (ylo, yhi) = (lo, hi);
    let strip = match tiles {
        Tiles::Items { cols, .. } => {
            let (y0, y0e, end) = strip(func, y, hi, cols);
            Some((y0, y0e, end, cols))
        }
        Tiles::Tasks => None,
    };
    let (lo, hi) = strip.map_or((lo, hi), |(_, a, z, _)| (a, z));
    let windows = windows_of(func, f, y, lo, hi, ybody)?;
    if !windows
        .iter()
        .all(|w| w.stride == 1 && w.slides_down(func, x))
    {
        return None;
    }
    let mut b = Build {
        func,
        body: Vec::new(),
        cap: None,
        unbounded: false,
    };
    // The chunk: rows `x0..x1`.
    let xo = b.func.var("sx", Scalar::I32);
    let x0 = b.var(xo);
    let x0_64 = b.func.cast(x0, Scalar::I64);
    let k = b.i64(chunk_rows as i128);
    let x1 = b.func.chunk_end(x0_64, k, xhi);
    let first = b.func.cast(lo, Scalar::I32);
    let (at_y, count) = outputs(&mut b, y, lo, hi);
    b.cap = strip.map(|(.., cols)| (count, i128::from(cols)));
    // Sums: the columns of the chunk's first row. Minima and maxima: van Herk's blocks down
    // the chunk's source rows.
    let mut cols = Vec::new();
    let at0 = At {
        y,
        first,
        x: Some((x, x0)),
    };
    for w in &windows {
        let ext = b.i64(w.cols - 1);
        let n = b.add(count, ext);
        let col = b.temp("col", w.col_ty, n);
        let blocks = match w.op {
            ReduceOp::Sum => {
                w.columns(&mut b, col, n, unroll, at0);
                None
            }
            _ => Some(w.down_blocks(&mut b, n, x0_64, x1, at0)),
        };
        cols.push((col, n, blocks));
    }
    // Each row: past the first, the row leaving and the row entering; then its outputs.
    let xv = b.var(x);
    let outer = std::mem::take(&mut b.body);
    let mut replace = HashMap::new();
    for (w, (col, n, blocks)) in windows.iter().zip(&cols) {
        let (col, n) = (*col, *n);
        if let Some((g, h)) = *blocks {
            // The row's columns: `op(h[a], g[a + rows - 1])`, `a` the row's place in the chunk.
            let x64 = b.func.cast(xv, Scalar::I64);
            let a = b.sub(x64, x0_64);
            let far = b.i64(w.rows - 1);
            let far = b.add(a, far);
            let zero64 = b.i64(0);
            let l = b.for_loop("sk", (zero64, n), |b, k| {
                let (p, q) = (b.load2(h, a, k), b.load2(g, far, k));
                let v = b.combine(w.op, p, q);
                vec![b.store(col, k, v)]
            });
            b.body.push(l);
            let value = w.across(&mut b, col, n, at_y, unroll);
            replace.insert(w.fold, value);
            continue;
        }
        let saved = std::mem::take(&mut b.body);
        let one = b.func.int(1, Scalar::I32);
        let prev = b.sub(xv, one);
        let zero = b.func.int(0, Scalar::I32);
        let last = b.func.int(w.rows - 1, Scalar::I32);
        let leaving = w.row(
            &mut b,
            zero,
            At {
                y,
                first,
                x: Some((x, prev)),
            },
        );
        let entering = w.row(
            &mut b,
            last,
            At {
                y,
                first,
                x: Some((x, xv)),
            },
        );
        let zero64 = b.i64(0);
        let l = b.for_loop("sk", (zero64, n), |b, k| {
            let old = b.load(col, k);
            let (out, inn) = (w.tap(b, leaving, k), w.tap(b, entering, k));
            let v = b.sub(old, out);
            let v = b.add(v, inn);
            vec![b.store(col, k, v)]
        });
        b.body.push(l);
        let update = b
            .func
            .stmt(Stmt::Block(std::mem::replace(&mut b.body, saved)));
        let later = b.func.binary(BinOp::Gt, xv, x0, Scalar::Bool);
        let s = b.func.stmt(Stmt::If(later, update, None));
        b.body.push(s);
        let value = w.across(&mut b, col, n, at_y, unroll);
        replace.insert(w.fold, value);
    }
    let new_body = Replace(replace).mutate_stmt(b.func, ybody);
    let yl = b.func.for_loop(y, (lo, hi, 1), LoopKind::Serial, new_body);
    b.body.push(yl);
    let row_body = b
        .func
        .stmt(Stmt::Block(std::mem::replace(&mut b.body, outer)));
    let x0_as_x = b.func.cast(x0, b.func.vars[x].ty);
    let rows = b.func.for_loop(x, (x0_as_x, x1, 1), row_kind, row_body);
    b.body.push(rows);
    let chunk = b.finish(count)?;
    Some(match strip {
        // The work-items' loops, `gpu::run`'s nest: rows, then outputs.
        Some((y0, _, _, cols)) => {
            let step = i64::from(cols);
            let outs = b
                .func
                .for_loop(y0, (ylo, yhi, step), LoopKind::Serial, chunk);
            b.func
                .for_loop(xo, (xlo, xhi, chunk_rows), LoopKind::Serial, outs)
        }
        None => b.func.for_loop(
            xo,
            (xlo, xhi, chunk_rows),
            LoopKind::ParallelChunks(None),
            chunk,
        ),
    })
}

/// Replaces expressions by others, rebuilding what holds them.
pub(super) struct Replace(HashMap<ExprId, ExprId>);

impl Mutator for Replace {
    fn mutate_expr(&mut self, f: &mut Func, e: ExprId) -> ExprId {
        if let Some(r) = self.0.get(&e) {
            return *r;
        }
        let r = rebuild_expr(self, f, e);
        self.0.insert(e, r);
        r
    }
}
