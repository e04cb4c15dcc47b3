//! Storage folding with a sliding window (Halide's `StorageFolding` and sliding windows), on
//! the CPU path's fused tasks ([`super::fuse`], [`super::chain`]): a task computed each
//! intermediate's rows for its whole strip into a buffer of all those rows, then its readers'
//! rows. Folded, the task runs one loop over its consumer's rows; before each, every
//! intermediate computes the rows its readers are about to need and have not been computed yet
//! (each row once per task), into a ring of `K` rows (row `r` at `(r - first) & (K - 1)`), `K`
//! the most rows its readers need at once (the window's span: 7 rows for a 7-tap vertical
//! pass, 1 for a point-wise read), a power of two. The buffers shrink from the strip's rows to
//! the window's, and a row is read back while it is still in the first-level cache.
//!
//! ```text
//! parallel_chunks for sx .. {
//!   let r0 = .., r1 = ..; allocate T[K][w]
//!   chunk_rows for x in [sx, x1) {
//!     let e = min(k x + amax + 1, r1)                  // T's rows needed by row x, so far
//!     for r in [x == sx ? r0 : max(r0, e(x - 1)), e) { P's row r into T[(r - r0) & (K - 1)] }
//!     let done0 = max(r0, e - K), done1 = e            // the fallback's rows of T in the ring
//!     C's row x, T[row] read at (row - r0) & (K - 1)
//!   }
//! }
//! ```
//!
//! In a chain the stages fold from the last: a stage's rows needed by row `x` are the greatest
//! over its readers (the consumer's row, the later stages' rows so far) of `k e + amax`, and its
//! ring holds the rows from the least its readers read in one iteration. Each stage's rows are
//! computed in the order and with the code of the unfolded task, so the values are the same;
//! every reader's row reads rows inside the ring: its fast rows read rows `k v + a` between the
//! least and the greatest it needs, which the ring holds (its size is their span, in rows of the
//! reader per iteration), and its fallback reads the buffer only inside `[done0, done1)`.
//! Where a task is not of this form (another statement between the loops, a reader outside
//! the task, readers whose rows advance at different rates) it is left unfolded.

use crate::ir::{BinOp, Builtin, Scalar};
use crate::lir::visit::{Mutator, rebuild_expr, rebuild_stmt};
use crate::lir::{Buf, ExprId, ExprKind, Func, LoopKind, Stmt, StmtId, TempId, VarId};
use std::collections::HashMap;

/// A fused intermediate in a task: its buffer, its producer's row loop (by variable), the
/// buffer's first row (`i64`), the variables of the rows its fallback reads from it, and the
/// rows its readers read directly.
pub(super) struct Stage {
    pub(super) temp: TempId,
    pub(super) var: VarId,
    pub(super) first: ExprId,
    pub(super) done: [VarId; 2],
    pub(super) reads: Vec<Read>,
}

/// A loop of the task (by variable) reading rows `k v + a`, `amin <= a <= amax`, of a stage.
pub(super) struct Read {
    pub(super) var: VarId,
    pub(super) k: i128,
    pub(super) amin: i128,
    pub(super) amax: i128,
}

impl Stage {
    /// The widest span of its readers' rows, against their rows per row of theirs
    /// ([`super::widest`]).
    pub(super) fn halo(&self) -> super::Halo {
        super::widest(self.reads.iter().map(|r| (r.amax - r.amin, r.k)))
    }
}

/// The most rows a ring may hold (a window's span is at most the fusion's `MAX_HALO`).
const MAX_RING: i128 = 256;

/// The rows `[r0, r1)` a buffer holds for its fallback's reads, as two variables bound in the
/// task's head (a folded task binds them per row instead): the variables, their values as
/// expressions, and the `let`s.
pub(super) fn done(func: &mut Func, (r0, r1): (ExprId, ExprId)) -> FoldDone {
    let i64t = Scalar::I64;
    let (a, b) = (func.var("fd0", i64t), func.var("fd1", i64t));
    let lets = vec![func.stmt(Stmt::Let(a, r0)), func.stmt(Stmt::Let(b, r1))];
    let ea = func.expr(ExprKind::Var(a), i64t);
    let eb = func.expr(ExprKind::Var(b), i64t);
    (([a, b], (ea, eb)), lets)
}

/// [`done`]'s variables, their expressions and their `let`s.
pub(super) type FoldDone = (([VarId; 2], (ExprId, ExprId)), Vec<StmtId>);

/// Statement `s` with every fused task below it folded where it can be.
pub(super) fn run(func: &mut Func, s: StmtId, stages: &[Stage]) -> StmtId {
    Fold { stages }.mutate_stmt(func, s)
}

struct Fold<'a> {
    stages: &'a [Stage],
}

impl Mutator for Fold<'_> {
    fn mutate_expr(&mut self, _: &mut Func, e: ExprId) -> ExprId {
        e
    }

    fn mutate_stmt(&mut self, func: &mut Func, s: StmtId) -> StmtId {
        if let Stmt::For {
            var,
            lo,
            hi,
            step,
            kind: kind @ LoopKind::ParallelChunks(_),
            body,
        } = func.stmts[s]
        {
            return match task(func, body, self.stages) {
                Some(body) => func.for_loop(var, (lo, hi, step), kind, body),
                None => s,
            };
        }
        rebuild_stmt(self, func, s)
    }
}

/// The folded body of a task (`body`), or `None` where it is not of the form folded.
fn task(func: &mut Func, body: StmtId, stages: &[Stage]) -> Option<StmtId> {
    let Stmt::Block(items) = func.stmts[body].clone() else {
        return None;
    };
    let mut loops = Vec::new();
    for (at, s) in items.iter().enumerate() {
        match func.stmts[*s] {
            Stmt::For { .. } => loops.push(at),
            Stmt::Let(..) | Stmt::Allocate { .. } => {}
            _ => return None,
        }
    }
    let (&c_at, producers) = loops.split_last()?;
    if c_at + 1 != items.len() || producers.is_empty() {
        return None;
    }
    let Stmt::For {
        var: cx,
        lo: clo,
        hi: chi,
        step: 1,
        kind: LoopKind::ChunkRows,
        body: cbody,
    } = func.stmts[items[c_at]]
    else {
        return None;
    };
    // The producers' loops in the task's order, each a stage's.
    let mut order = Vec::new();
    for at in producers {
        let Stmt::For {
            var,
            step: 1,
            kind: LoopKind::Serial,
            ..
        } = func.stmts[items[*at]]
        else {
            return None;
        };
        order.push((stages.iter().find(|st| st.var == var)?, items[*at]));
    }
    // From the last stage: the rows of each needed by the iteration at `x` are `s x + c` past
    // its last, its readers' least `s x + c - n`: the ring holds `n` (at least the `s` rows
    // an iteration computes). The consumer's row: `x + 1` past it, one row.
    let mut lin: HashMap<VarId, (i128, i128, i128)> = HashMap::from([(cx, (1, 1, 1))]);
    let mut rings = vec![0; order.len()];
    for (at, (st, _)) in order.iter().enumerate().rev() {
        let mut slope = None;
        let (mut c, mut low) = (i128::MIN, i128::MAX);
        for r in &st.reads {
            let &(s, cr, n) = lin.get(&r.var)?;
            if *slope.get_or_insert(r.k * s) != r.k * s {
                return None;
            }
            c = c.max(r.k * (cr - 1) + r.amax + 1);
            low = low.min(r.k * (cr - n) + r.amin);
        }
        let s = slope?;
        let n = (c - low).max(s);
        if !(1..=MAX_RING).contains(&n) {
            return None;
        }
        rings[at] = (n as u128).next_power_of_two() as i128;
        lin.insert(st.var, (s, c, n));
    }

    let i64t = Scalar::I64;
    let xt = func.vars[cx].ty;
    let xe = func.expr(ExprKind::Var(cx), xt);
    let x64 = func.cast(xe, i64t);
    let one = func.int(1, i64t);
    let x_prev = func.binary(BinOp::Sub, x64, one, i64t);
    let now = ends(func, cx, &order, x64);
    let before = ends(func, cx, &order, x_prev);
    let clo64 = func.cast(clo, i64t);
    let first_row = func.binary(BinOp::Eq, x64, clo64, Scalar::Bool);
    let mut row = Vec::new();
    let mut masks = HashMap::new();
    for (at, (st, l)) in order.iter().enumerate() {
        let Stmt::For {
            var, lo, body: lb, ..
        } = func.stmts[*l]
        else {
            return None;
        };
        let vt = func.vars[var].ty;
        let lo64 = func.cast(lo, i64t);
        let ev = func.var("fe", i64t);
        row.push(func.stmt(Stmt::Let(ev, now[at])));
        let end = func.expr(ExprKind::Var(ev), i64t);
        let resume = func.expr(ExprKind::Call(Builtin::Max, vec![lo64, before[at]]), i64t);
        let begin = func.expr(ExprKind::Select(first_row, lo64, resume), i64t);
        let (b, e) = (func.cast(begin, vt), func.cast(end, vt));
        row.push(func.for_loop(var, (b, e, 1), LoopKind::Serial, lb));
        let k = func.int(rings[at], i64t);
        let back = func.binary(BinOp::Sub, end, k, i64t);
        let kept = func.expr(ExprKind::Call(Builtin::Max, vec![st.first, back]), i64t);
        row.push(func.stmt(Stmt::Let(st.done[0], kept)));
        row.push(func.stmt(Stmt::Let(st.done[1], end)));
        masks.insert(st.temp, rings[at] - 1);
    }
    row.push(cbody);
    let row = func.stmt(Stmt::Block(row));
    let mut ring = Ring {
        masks: &masks,
        memo: HashMap::new(),
    };
    let row = ring.mutate_stmt(func, row);
    let consumer = func.for_loop(cx, (clo, chi, 1), LoopKind::ChunkRows, row);
    // The head: the tasks' `let`s and allocations, the rings `K` rows each, the fallback's
    // rows bound per row instead.
    let mut head = Vec::new();
    for s in &items[..c_at] {
        match func.stmts[*s].clone() {
            Stmt::For { .. } => {}
            Stmt::Let(v, _) if order.iter().any(|(st, _)| st.done.contains(&v)) => {}
            Stmt::Allocate {
                buf: Buf::Temp(t),
                elem,
                memory,
                mut extents,
            } if masks.contains_key(&t) => {
                extents[0] = func.int(masks[&t] + 1, i64t);
                head.push(func.stmt(Stmt::Allocate {
                    buf: Buf::Temp(t),
                    elem,
                    memory,
                    extents,
                }));
            }
            _ => head.push(*s),
        }
    }
    head.push(consumer);
    Some(func.stmt(Stmt::Block(head)))
}

/// Each stage's rows needed by the consumer's row `x` (`i64`) so far (one past the last),
/// clipped to its loop's end: the greatest over its readers of `k (e - 1) + amax + 1`, `e`
/// the reader's (the consumer's: `x + 1`).
fn ends(func: &mut Func, cx: VarId, order: &[(&Stage, StmtId)], x: ExprId) -> Vec<ExprId> {
    let i64t = Scalar::I64;
    let one = func.int(1, i64t);
    let mut e: HashMap<VarId, ExprId> =
        HashMap::from([(cx, func.binary(BinOp::Add, x, one, i64t))]);
    let mut out = vec![x; order.len()];
    for (at, (st, l)) in order.iter().enumerate().rev() {
        let mut need: Option<ExprId> = None;
        for r in &st.reads {
            let last = func.binary(BinOp::Sub, e[&r.var], one, i64t);
            let k = func.int(r.k, i64t);
            let row = func.binary(BinOp::Mul, k, last, i64t);
            let past = func.int(r.amax + 1, i64t);
            let row = func.binary(BinOp::Add, row, past, i64t);
            need = Some(match need {
                Some(n) => func.expr(ExprKind::Call(Builtin::Max, vec![n, row]), i64t),
                None => row,
            });
        }
        let Stmt::For { hi, .. } = func.stmts[*l] else {
            unreachable!("a stage's loop")
        };
        let hi64 = func.cast(hi, i64t);
        let need = need.expect("a stage has readers in its task");
        let end = func.expr(ExprKind::Call(Builtin::Min, vec![need, hi64]), i64t);
        e.insert(st.var, end);
        out[at] = end;
    }
    out
}

/// The buffers' row indices taken modulo their rings (`& (K - 1)`).
struct Ring<'a> {
    masks: &'a HashMap<TempId, i128>,
    memo: HashMap<ExprId, ExprId>,
}

impl Ring<'_> {
    fn wrap(&self, func: &mut Func, t: TempId, index: &[ExprId]) -> Vec<ExprId> {
        let mut index = index.to_vec();
        let ty = func.exprs[index[0]].ty;
        let mask = func.int(self.masks[&t], ty);
        index[0] = func.binary(BinOp::BitAnd, index[0], mask, ty);
        index
    }
}

impl Mutator for Ring<'_> {
    fn mutate_expr(&mut self, func: &mut Func, e: ExprId) -> ExprId {
        if let Some(r) = self.memo.get(&e) {
            return *r;
        }
        let r = rebuild_expr(self, func, e);
        let r = match func.exprs[r].kind.clone() {
            ExprKind::Load {
                buf: Buf::Temp(t),
                index,
                checked,
            } if self.masks.contains_key(&t) => {
                let ty = func.exprs[r].ty;
                let index = self.wrap(func, t, &index);
                func.expr(
                    ExprKind::Load {
                        buf: Buf::Temp(t),
                        index,
                        checked,
                    },
                    ty,
                )
            }
            _ => r,
        };
        self.memo.insert(e, r);
        r
    }

    fn mutate_stmt(&mut self, func: &mut Func, s: StmtId) -> StmtId {
        let s = rebuild_stmt(self, func, s);
        match func.stmts[s].clone() {
            Stmt::Store {
                buf: Buf::Temp(t),
                index,
                value,
                checked,
            } if self.masks.contains_key(&t) => {
                let index = self.wrap(func, t, &index);
                func.stmt(Stmt::Store {
                    buf: Buf::Temp(t),
                    index,
                    value,
                    checked,
                })
            }
            _ => s,
        }
    }
}
