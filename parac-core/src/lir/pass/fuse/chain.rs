//! Chains (blur → blur → difference; unsharp's `gray` → `by` → `h`): a producer `Q` of a
//! local `u` whose one consumer is a region already fused with its own producer (its tasks
//! compute that producer's rows, then its own rows: [`super::fuse`]) joins those tasks. Each
//! task computes the rows of `u` that its loops read (the union over the loops that read `u`
//! of their rows `k v + a`, clipped to `u`) into a private buffer, before the first of them;
//! each such loop's row then reads the buffer directly where its rows of `u` were computed,
//! else through the exact fallback ([`super::reads::Rewire`]), as a consumer's rows do:
//!
//! ```text
//! parallel_chunks for sx .. {
//!   let r0 = .., r1 = ..                         // the first fusion's rows
//!   let u0 = max(min over loops L (k lo_L + amin_L), 0)
//!   let u1 = min(max over loops L (k (hi_L - 1) + amax_L + 1), dim(u, 0))
//!   allocate U[u1 - u0][dim(u, 1)]
//!   for x in [u0, u1) { Q's row x into U }
//!   for x in [r0, r1) { if (rows of u inside [u0, u1)) { P's row, u from U } else { .. } }
//!   chunk_rows for cx .. { if (..) { C's row, u from U } else { .. } }
//! }
//! ```
//!
//! The legality is the fusion's ([`super::fuse`]: `Q` cannot fail, `u` is written whole by `Q`
//! alone and read by this region alone, ...); every loop of the task that reads `u` must be a
//! row loop of the task's statements with reads of rows `k v + a` of one stride.

use super::fold::{Read, Stage};
use super::reads::{Rewire, Rows, edge_rows, inlined_sites, plus, row_offsets, times};
use super::{MAX_HALO, Producer, budget, edges, rows_into, uses};
use crate::ir::{BinOp, Builtin, Function, Scalar};
use crate::lir::canon::Canon;
use crate::lir::{Buf, ExprId, ExprKind, Func, LoopKind, Memory, Stmt, StmtId, Temp, VarId};
use std::collections::HashMap;

/// A loop of the task reading `u`: its place in the task's statements, its variable, bounds
/// and body, the stride and offsets of its rows of `u` (`None`: no read of a row `k v + a`,
/// every read through the exact fallback: a consumer's row reading the first producer's point
/// where its rows were not computed).
struct Reader {
    at: usize,
    var: VarId,
    lo: ExprId,
    hi: ExprId,
    kind: LoopKind,
    body: StmtId,
    rows: Option<(i128, i128, i128)>,
}

/// The consumer's tasks (`tasks`, its `ParallelChunks` loop) with `p` computed in each, where
/// legal; with the statements computing `u`'s edge rows before the tasks ([`super::edges`]).
pub(super) fn fuse(
    func: &mut Func,
    f: &Function,
    p: &Producer,
    tasks: StmtId,
) -> Option<(StmtId, Vec<StmtId>, Stage)> {
    let Stmt::For {
        var: sx,
        lo,
        hi,
        step,
        kind: tasks_kind @ LoopKind::ParallelChunks(_),
        body: chunk,
    } = func.stmts[tasks]
    else {
        return None;
    };
    let Stmt::Block(items) = func.stmts[chunk].clone() else {
        return None;
    };
    let u = p.t;
    let mut readers = Vec::new();
    for (at, s) in items.iter().enumerate() {
        if !uses(func, f, *s).touches(u) {
            continue;
        }
        let Stmt::For {
            var,
            lo,
            hi,
            step: 1,
            kind: kind @ (LoopKind::Serial | LoopKind::ChunkRows),
            body,
        } = func.stmts[*s]
        else {
            return None;
        };
        let mut offsets = Vec::new();
        row_offsets(
            func,
            body,
            (u, 0),
            (var, None),
            &mut HashMap::new(),
            &mut offsets,
        );
        let direct: Vec<(i128, i128)> = offsets.into_iter().flatten().collect();
        let rows = match direct.first() {
            None => None,
            Some(&(k, _)) => {
                let amin = direct.iter().map(|o| o.1).min()?;
                let amax = direct.iter().map(|o| o.1).max()?;
                if direct.iter().any(|o| o.0 != k) || amax - amin > MAX_HALO || k > MAX_HALO {
                    return None;
                }
                Some((k, amin, amax))
            }
        };
        readers.push(Reader {
            at,
            var,
            lo,
            hi,
            kind,
            body,
            rows,
        });
    }
    if !readers.iter().any(|r| r.rows.is_some()) {
        return None;
    }
    let edge_rows = edge_rows(func, chunk, u, &mut Canon::new());
    let mut sites = [0; 2];
    for r in &readers {
        let k = r.rows.map_or(0, |(k, ..)| k);
        let [plain, edged] = inlined_sites(func, r.body, (u, r.var, k));
        sites = [sites[0] + plain, sites[1] + edged];
    }
    let edge_rows = budget(func, p, edge_rows, sites)?;
    let i64t = Scalar::I64;
    let zero = func.int(0, i64t);
    let one = func.int(1, i64t);
    let rows_u = func.expr(ExprKind::Dim(u, 0), i64t);
    let cols_u = func.expr(ExprKind::Dim(u, 1), i64t);
    // The rows of `u` the loops read: from the least first row to the greatest last one.
    let (mut first, mut last): (Option<ExprId>, Option<ExprId>) = (None, None);
    for r in &readers {
        let Some((k, amin, amax)) = r.rows else {
            continue;
        };
        let ke = func.int(k, i64t);
        let (lo, hi) = (func.cast(r.lo, i64t), func.cast(r.hi, i64t));
        let top = times(func, k, ke, lo);
        let amin_e = func.int(amin, i64t);
        let top = plus(func, top, amin, amin_e);
        let end = func.binary(BinOp::Sub, hi, one, i64t);
        let end = times(func, k, ke, end);
        let past = func.int(amax + 1, i64t);
        let end = plus(func, end, amax + 1, past);
        let min = |func: &mut Func, a: Option<ExprId>, b: ExprId, op: Builtin| match a {
            None => b,
            Some(a) => func.expr(ExprKind::Call(op, vec![a, b]), i64t),
        };
        first = Some(min(func, first, top, Builtin::Min));
        last = Some(min(func, last, end, Builtin::Max));
    }
    let u0e = func.expr(ExprKind::Call(Builtin::Max, vec![first?, zero]), i64t);
    let u1e = func.expr(ExprKind::Call(Builtin::Min, vec![last?, rows_u]), i64t);
    let (u0v, u1v) = (func.var("fu0", i64t), func.var("fu1", i64t));
    let (u0, u1) = (
        func.expr(ExprKind::Var(u0v), i64t),
        func.expr(ExprKind::Var(u1v), i64t),
    );
    let (done, done_lets) = super::fold::done(func, (u0, u1));
    let span = func.binary(BinOp::Sub, u1, u0, i64t);
    let n = func.expr(ExprKind::Call(Builtin::Max, vec![span, zero]), i64t);
    let elem = f.matrices[u].elem;
    let temp = func.temps.push(Temp {
        name: format!("{}_rows", f.matrices[u].name),
        elem,
        memory: Memory::Private,
    });
    // `Q`'s rows `u0 .. u1` into the buffer.
    let q_loop = rows_into(func, p, temp, (u0, u1), None);
    let (edges, edge_head) = edges(func, f, p, edge_rows, None).unzip();
    // Each reading loop: its row through the buffer where its rows of `u` were computed.
    let mut out = items.clone();
    for r in &readers {
        let mut rewire = Rewire {
            t: u,
            temp,
            cx: r.var,
            r0: u0,
            done: done.1,
            rows_t: rows_u,
            cols_t: cols_u,
            p,
            k: r.rows.map_or(1, |(k, ..)| k),
            mode: Rows::Exact,
            bound: Vec::new(),
            maps: false,
            env: HashMap::new(),
            memo: HashMap::new(),
            edges: edges.as_ref(),
            canon: Canon::new(),
            cols: None,
            stored: false,
        };
        let fast = r.rows.map(|(k, amin, amax)| {
            let v = func.expr(ExprKind::Var(r.var), func.vars[r.var].ty);
            let v64 = func.cast(v, i64t);
            let ke = func.int(k, i64t);
            let kv = times(func, k, ke, v64);
            let (amin_e, amax_e) = (func.int(amin, i64t), func.int(amax, i64t));
            let top = plus(func, kv, amin, amin_e);
            let bottom = plus(func, kv, amax, amax_e);
            let ge = func.binary(BinOp::Ge, top, u0, Scalar::Bool);
            let lt = func.binary(BinOp::Lt, bottom, u1, Scalar::Bool);
            func.binary(BinOp::And, ge, lt, Scalar::Bool)
        });
        let body = rewire.row(func, r.body, fast);
        out[r.at] = func.for_loop(r.var, (r.lo, r.hi, 1), r.kind, body);
    }
    let mut head = vec![
        func.stmt(Stmt::Let(u0v, u0e)),
        func.stmt(Stmt::Let(u1v, u1e)),
    ];
    head.extend(done_lets);
    head.extend([
        func.stmt(Stmt::Allocate {
            buf: Buf::Temp(temp),
            elem,
            memory: Memory::Private,
            extents: vec![n, cols_u],
        }),
        q_loop,
    ]);
    let at = readers.first()?.at;
    out.splice(at..at, head);
    let chunk = func.stmt(Stmt::Block(out));
    let tasks = func.for_loop(sx, (lo, hi, step), tasks_kind, chunk);
    let stage = Stage {
        temp,
        var: p.x,
        first: u0,
        done: done.0,
        reads: readers
            .iter()
            .filter_map(|r| {
                let (k, amin, amax) = r.rows?;
                Some(Read {
                    var: r.var,
                    k,
                    amin,
                    amax,
                })
            })
            .collect(),
    };
    Some((tasks, edge_head.unwrap_or_default(), stage))
}
