//! Fusion across stages on the CPU path (`Options::fuse_rows`, Halide's `compute_at` of a
//! producer in its consumer's strip of rows, with a halo): a region `P` that writes a local
//! matrix `t` read by a later region `C` alone is computed, per parallel task of `C`, for
//! the rows of `t` the task's strip of `C`'s rows reads, into a private buffer (`T`), then the
//! strip runs reading `T`. `t` is then neither written nor read: each intermediate row stays
//! in the task's cache instead of going through memory.
//!
//! ```text
//! region P { }                                   // its host proof alone, in its place
//! region C {
//!   parallel_chunks for sx in [0, hi) step S {   // a task: C's rows sx .. x1
//!     let x1 = min(sx + S, hi)
//!     let r0 = max(k sx + amin, 0); let r1 = min(k (x1 - 1) + amax + 1, dim(t, 0))
//!     allocate T[r1 - r0][dim(t, 1)]
//!     for x in [r0, r1) { P's row x, its store t[x][y] = v as T[x - r0][y] = v }
//!     chunk_rows for x in [sx, x1) {
//!       if (k x + amin >= r0 && k x + amax < r1) { C's row, t[k x + a][c] as T[k x + a - r0][c] }
//!       else { C's row, every read of t through the exact fallback below }
//!     }
//!   }
//! }
//! ```
//!
//! `amin..=amax` are the offsets of `C`'s reads of `t` whose row is `k x + a` (`x` C's row, one
//! stride `k >= 1` for all: 2 where `C` downsamples; the affine forms see through `let`s, and a
//! border rule's index map of such a row counts as the row, which it is inside `t`). Any other
//! read of `t` (a row read through data, a rule's entry at a constant row) takes `T` where its
//! row was computed, else the producer's value at that point computed in place (`P`'s `let`s
//! and value, inlined), else (outside `t`) the original checked read, which fails as it did:
//! every read gives exactly what it gave unfused (`reads.rs`).
//!
//! Legality: `P` is a loop over rows and one over columns whose body is `let`s and one store to
//! `t` at `[x][y]`; `t` is a local written whole (`analysis::written_whole`) by `P` alone and
//! read by `C` alone, a later step (the steps between write nothing `P` reads); `P` cannot fail
//! once its host proof passed (no access it guards where it runs, no integer division by a
//! variable other than a `nonzero(..)` one), so computing some of its points twice or not at
//! all changes no result or error;
//! `P` reads nothing `C` writes; `C` is row-parallel from row 0 (`pass::parallel`); neither
//! holds a fold (`pass::slide`'s); `P` does not upsample its columns (see `upsamples`); the
//! fallback's code stays within `MAX_INLINED` nodes. Otherwise nothing changes.
//!
//! Before that, a cheap point producer is computed at each read of its readers instead
//! (`inline.rs`); a producer read by several regions is computed in each one's tasks
//! (`readers`), or where they cannot, in the first one's tasks, which store `t` for the
//! others (`stored_readers`); chains join fused tasks (`chain.rs`); the model chooses when the
//! call runs (`guarded`).

mod buffers;
mod chain;
mod fold;
pub mod gpu;
mod inline;
mod model;
mod reads;
mod steps;
mod tiles;
pub mod time;

use crate::codegen::safety;
use crate::ir::{BinOp, Builtin, Function, MatrixKind, RegionId, Scalar};
use crate::lir::canon::Canon;
use crate::lir::visit::{preorder, stmt_parts, substitute};
use crate::lir::{
    Buf, ExprId, ExprKind, Func, LoopKind, Memory, Stmt, StmtId, Temp, TempId, VarId,
};
use reads::{
    Columns, Edges, Rewire, Rows, columns, edge_rows, inlined_sites, plus, point_at, row_offsets,
    times,
};
use std::collections::HashMap;

use buffers::*;
use model::*;
use steps::*;

/// The widest span of rows (`amax - amin`) a strip recomputes around its own.
const MAX_HALO: i128 = 64;

/// The most expression nodes the exact fallback may add (the producer's point inlined at each
/// read of `t`), so that fusion never multiplies a function's code (a chain's second producer
/// inlined in the first's fallback rows too: `benches/own`'s unsharp7 needs 2100).
const MAX_INLINED: usize = 4096;

/// At most this many rows of an intermediate computed once for all tasks ([`edges`]).
const MAX_EDGES: usize = 16;

/// Fuses each producer into its consumer where legal, `rows` rows of the consumer per task,
/// each intermediate's buffer folded to the rows its readers still need where `folds`
/// (`fold`), a cheap point producer computed at each read where `points` (`inline`);
/// whether it fused any.
pub fn run(func: &mut Func, f: &Function, rows: i64, (folds, points): (bool, bool)) -> bool {
    let Stmt::Block(mut steps) = func.stmts[func.body].clone() else {
        return false;
    };
    let mut fused = false;
    let orig = steps.clone();
    // The fused intermediates, their halos, and whether their readers' tasks store them.
    let mut gone = Vec::new();
    let whole = crate::analysis::written_whole(f);
    // What each step reads and writes, brought up to date where a fusion changes a step.
    let mut used: Vec<Uses> = steps.iter().map(|s| uses(func, f, *s)).collect();
    // The last producers first, so that an earlier one joins its consumer's fused tasks (a
    // chain: `chain.rs`); again while a pass fuses (a producer read by two regions until its
    // second reader was fused into the first).
    let mut again = true;
    // Each fused intermediate to fold: its buffer, its producer's loop and its readers' rows.
    let mut stages = Vec::new();
    // The tasks' rows, chosen when the call runs (`guarded`).
    let strip = func.var("fs", Scalar::I64);
    while std::mem::take(&mut again) {
        for i in (0..steps.len()).rev() {
            let Some((j, p)) = consumer(func, f, &steps, &used, i) else {
                continue;
            };
            let Stmt::Region {
                id: pid, ref name, ..
            } = func.stmts[steps[i]].clone()
            else {
                continue;
            };
            // Its buffers folded to rings (`parac_schedule(fold = ..)`, else `folds`).
            let fold_p = f.regions[pid].fold.unwrap_or(folds);
            // A cheap point producer: computed at each read of each reader (`inline.rs`).
            if points
                && f.regions[pid].inline != Some(false)
                && (f.regions[pid].inline == Some(true) || inline::cheap(func, &p))
                && !upsamples(func, &p)
                && let Some(all) = readers(func, &steps, &used, (i, j), p.t)
                && let Some(new) =
                    inline::readers(func, f, (&whole, &steps, &used), (i, pid), &p, &all)
            {
                let body = func.stmt(Stmt::Block(Vec::new()));
                let name = name.clone();
                steps[i] = func.stmt(Stmt::Region {
                    id: pid,
                    name,
                    body,
                });
                used[i] = uses(func, f, steps[i]);
                for (k, s) in all.into_iter().zip(new) {
                    steps[k] = s;
                    used[k] = uses(func, f, s);
                }
                // Nothing recomputed per row of a task: the model keeps it (the policy aside).
                gone.push((p.t, (0, 1), false));
                unallocate(func, &mut steps, p.t);
                (fused, again) = (true, true);
                continue;
            }
            // Every region reading `t`: `C`, and later readers that each compute `P` in their
            // own tasks too (Halide's `clone_in`, [`readers`]); else `C` alone, its tasks
            // storing their rows of `t` for the later readers ([`stored_readers`]).
            let clones = readers(func, &steps, &used, (i, j), p.t).and_then(|all| {
                let made = all
                    .iter()
                    .map(|&k| {
                        let shared = (&whole[..], &steps[..], &used[..]);
                        fuse(func, f, shared, (i, k), &p, (rows, strip, false), &all)
                            .map(|m| (k, m))
                    })
                    .collect::<Option<Vec<_>>>()?;
                // A clone's producer keeps its region's host proof alone (no edge rows).
                let plain = |m: &(usize, (StmtId, StmtId, fold::Stage))| match func.stmts[m.1.0] {
                    Stmt::Region { body, .. } => {
                        matches!(&func.stmts[body], Stmt::Block(b) if b.is_empty())
                    }
                    _ => false,
                };
                (all.len() == 1 || made.iter().all(plain)).then_some((all, made))
            });
            let (all, made, stored) = match clones {
                Some((all, made)) => (all, made, false),
                None => {
                    // Not with storage folding: a row is stored from the task's whole buffer.
                    let Some(all) =
                        stored_readers(func, &steps, &used, (i, j), p.t).filter(|_| !fold_p)
                    else {
                        continue;
                    };
                    let shared = (&whole[..], &steps[..], &used[..]);
                    let Some(m) = fuse(func, f, shared, (i, j), &p, (rows, strip, true), &all)
                    else {
                        continue;
                    };
                    (vec![j], vec![(j, m)], true)
                }
            };
            // A clone computes `t` once per reader, and a stored `t` still goes through
            // memory (its fusion saves one read of it, and measured slower than apart:
            // docs/benchmarks.md): for the model, a task recomputes more than its rows (stride
            // 0), fused only where the intermediates no longer stored would not fit the
            // caches (where `t` is stored, and no other, only where the policy forces it).
            let halo = widest(made.iter().map(|m| m.1.2.halo()));
            let halo = match (all.len(), stored) {
                (1, false) => halo,
                _ => (halo.0.max(1), 0),
            };
            gone.push((p.t, halo, stored));
            for (n, (k, (ps, cs, stage))) in made.into_iter().enumerate() {
                if n == 0 {
                    steps[i] = ps;
                    used[i] = uses(func, f, ps);
                }
                if fold_p {
                    stages.push(stage);
                }
                steps[k] = cs;
                used[k] = uses(func, f, cs);
            }
            (fused, again) = (true, true);
            if !stored {
                unallocate(func, &mut steps, p.t);
            }
        }
    }
    if !stages.is_empty() {
        for s in steps.iter_mut() {
            *s = fold::run(func, *s, &stages);
        }
    }
    if fused {
        steps = guarded(func, f, &orig, steps, &gone, (strip, rows));
    }
    func.stmts[func.body] = Stmt::Block(steps);
    fused
}

/// `t`'s allocation among `steps` holding no element (its dimensions remain, for the checked
/// reads outside it): its elements are never read or written.
fn unallocate(func: &mut Func, steps: &mut [StmtId], t: usize) {
    for s in steps.iter_mut() {
        if let Stmt::Allocate {
            buf: Buf::Matrix(m),
            elem,
            memory,
            ..
        } = func.stmts[*s]
            && m == t
        {
            *s = func.stmt(Stmt::Allocate {
                buf: Buf::Matrix(m),
                elem,
                memory,
                extents: Vec::new(),
            });
        }
    }
}

/// The edge rows to compute ([`edges`]), where the exact fallback's code, the producer's point
/// inlined at `sites` reads ([`reads::inlined_sites`]: without edge rows, then with them), must
/// stay within [`MAX_INLINED`] nodes: none where it does without them, `rows` where it does only
/// with them (at most [`MAX_EDGES`]), else `None`.
fn budget(func: &Func, p: &Producer, rows: Vec<ExprId>, sites: [usize; 2]) -> Option<Vec<ExprId>> {
    let size = p.size(func);
    let within = |n: usize| size.saturating_mul(n) <= MAX_INLINED;
    if within(sites[0]) {
        return Some(Vec::new());
    }
    (rows.len() <= MAX_EDGES && within(sites[1])).then_some(rows)
}

/// The producer at step `i` fused into the consumer at step `j`: the two new steps and the
/// fused intermediate's [`fold::Stage`] (its readers' rows, whence its [`Halo`]).
fn fuse(
    func: &mut Func,
    f: &Function,
    (whole, steps, used): (&[bool], &[StmtId], &[Uses]),
    (i, j): (usize, usize),
    p: &Producer,
    (rows, strip, store): (i64, VarId, bool),
    readers: &[usize],
) -> Option<(StmtId, StmtId, fold::Stage)> {
    let Stmt::Region {
        id: pid,
        name: ref pname,
        ..
    } = func.stmts[steps[i]]
    else {
        return None;
    };
    let pname = pname.clone();
    let Stmt::Region {
        id: cid,
        name: ref cname,
        body: cbody,
    } = func.stmts[steps[j]]
    else {
        return None;
    };
    let cname = cname.clone();
    let t = p.t;
    // A producer whose reads divide its column (upsampling) is written in lanes to its
    // matrix row's slices (`pass::lanes`); into a private buffer its stores went element by
    // element (sharpen's last stage 2.5x slower fused), and with the buffer's rows written as
    // slices too it was still slower fused (sharpen 5.5-6.1 ms against 5.0-5.3, 3840x2160 on
    // the developers' VM): left unfused.
    if upsamples(func, p) {
        return None;
    }
    if !separable(f, whole, used, (i, j), (pid, t), readers) {
        return None;
    }
    // A consumer fused with its own producer already: `P` joins its tasks (a chain), where it
    // is `t`'s one reader.
    if let Stmt::For {
        kind: LoopKind::ParallelChunks(_),
        ..
    } = func.stmts[cbody]
    {
        if readers.len() > 1 || store {
            return None;
        }
        let (c, head, stage) = chain::fuse(func, f, p, cbody)?;
        let (ps, cs) = fused_steps(func, (pid, pname), (cid, cname), c, head);
        return Some((ps, cs, stage));
    }
    let Stmt::For {
        var: cx,
        lo: clo,
        hi: chi,
        step: 1,
        kind: LoopKind::Serial,
        body: cxb,
    } = func.stmts[cbody]
    else {
        return None;
    };
    if !matches!(func.exprs[clo].kind, ExprKind::Int(0))
        || crate::lir::pass::parallel::row_parallel(func, f, cbody).is_none()
    {
        return None;
    }
    // The rows `C` reads of `t` as `x + a`.
    let mut offsets = Vec::new();
    let mut env = HashMap::new();
    row_offsets(func, cxb, (t, 0), (cx, None), &mut env, &mut offsets);
    let offsets: Vec<(i128, i128)> = offsets.into_iter().flatten().collect();
    // One stride `k` (`k x + a`: 2 where `C` downsamples), the offsets' span.
    let k = offsets.first()?.0;
    if offsets.iter().any(|o| o.0 != k) {
        return None;
    }
    // The code the exact fallback adds, within a budget (with edge rows where it is not).
    let mut canon = Canon::new();
    let edge_rows = edge_rows(func, cxb, t, &mut canon);
    let sites = inlined_sites(func, cxb, (t, cx, k));
    let edge_rows = budget(func, p, edge_rows, sites)?;
    let amin = offsets.iter().map(|o| o.1).min()?;
    let amax = offsets.iter().map(|o| o.1).max()?;
    if amax - amin > MAX_HALO || k > MAX_HALO {
        return None;
    }
    // Storing `t` for later readers, each task stores its own rows of `t` from its buffer:
    // `C`'s rows are `t`'s, each among those it reads, the buffer's columns all of `t`'s.
    let cols = columns(func, cxb, t);
    if store && (k != 1 || amin > 0 || amax < 0 || cols.is_some() || !spans_dim(f, cid, t, 0)) {
        return None;
    }

    // The task: rows `sx .. x1` of `C`, rows `r0 .. r1` of `t`.
    let i64t = Scalar::I64;
    let sx = func.var("fx", func.vars[cx].ty);
    let sxe = func.expr(ExprKind::Var(sx), func.vars[sx].ty);
    let sx64 = func.cast(sxe, i64t);
    let strip_e = func.expr(ExprKind::Var(strip), i64t);
    let least = func.int(1, i64t);
    let task = func.expr(ExprKind::Call(Builtin::Max, vec![strip_e, least]), i64t);
    let x1 = func.chunk_end(sx64, task, chi);
    let (lo_off, hi_off) = (func.int(amin, i64t), func.int(amax, i64t));
    let zero = func.int(0, i64t);
    let rows_t = func.expr(ExprKind::Dim(t, 0), i64t);
    let cols_t = func.expr(ExprKind::Dim(t, 1), i64t);
    // Rows `k sx + amin ..= k (x1 - 1) + amax` of `t`, inside it.
    let ke = func.int(k, i64t);
    let one = func.int(1, i64t);
    let ksx = times(func, k, ke, sx64);
    let first = plus(func, ksx, amin, lo_off);
    let r0e = func.expr(ExprKind::Call(Builtin::Max, vec![first, zero]), i64t);
    let x_last = func.binary(BinOp::Sub, x1, one, i64t);
    let k_last = times(func, k, ke, x_last);
    let end = func.int(amax + 1, i64t);
    let last = plus(func, k_last, amax + 1, end);
    let r1e = func.expr(ExprKind::Call(Builtin::Min, vec![last, rows_t]), i64t);
    let (r0v, r1v) = (func.var("fr0", i64t), func.var("fr1", i64t));
    let (r0, r1) = (
        func.expr(ExprKind::Var(r0v), i64t),
        func.expr(ExprKind::Var(r1v), i64t),
    );
    let (done, done_lets) = fold::done(func, (r0, r1));
    let mut chunk = vec![
        func.stmt(Stmt::Let(r0v, r0e)),
        func.stmt(Stmt::Let(r1v, r1e)),
    ];
    chunk.extend(done_lets);
    let span = func.binary(BinOp::Sub, r1, r0, i64t);
    let n = func.expr(ExprKind::Call(Builtin::Max, vec![span, zero]), i64t);
    let elem = f.matrices[t].elem;
    // Where the consumer reads only the columns `k y + b` of `t`, the buffers hold those alone.
    let width = buffer_width(func, t, cols);
    let temp = func.temps.push(Temp {
        name: format!("{}_rows", f.matrices[t].name),
        elem,
        memory: Memory::Private,
    });
    chunk.push(func.stmt(Stmt::Allocate {
        buf: Buf::Temp(temp),
        elem,
        memory: Memory::Private,
        extents: vec![n, width],
    }));

    // P's rows `r0 .. r1` into the temporary.
    chunk.push(rows_into(func, p, temp, (r0, r1), cols));

    // C's rows, each through the temporary directly where its rows `x + amin ..= x + amax`
    // were computed, else through the exact fallback.
    let cxe = func.expr(ExprKind::Var(cx), func.vars[cx].ty);
    let cx64 = func.cast(cxe, i64t);
    let kx = times(func, k, ke, cx64);
    let top = plus(func, kx, amin, lo_off);
    let bottom = plus(func, kx, amax, hi_off);
    let ge = func.binary(BinOp::Ge, top, r0, Scalar::Bool);
    let lt = func.binary(BinOp::Lt, bottom, r1, Scalar::Bool);
    let fast = func.binary(BinOp::And, ge, lt, Scalar::Bool);
    let (edges, head) = edges(func, f, p, edge_rows, cols).unzip();
    let mut rewire = Rewire {
        t,
        temp,
        cx,
        r0,
        done: done.1,
        rows_t,
        cols_t,
        p,
        k,
        mode: Rows::Exact,
        bound: Vec::new(),
        maps: false,
        env: HashMap::new(),
        memo: HashMap::new(),
        edges: edges.as_ref(),
        canon,
        cols,
        stored: store,
    };
    let mut row_body = rewire.row(func, cxb, Some(fast));
    if store {
        let copy = store_row(func, p, temp, cx, r0);
        row_body = func.stmt(Stmt::Block(vec![copy, row_body]));
    }
    let x0 = func.cast(sxe, func.vars[cx].ty);
    chunk.push(func.for_loop(cx, (x0, x1, 1), LoopKind::ChunkRows, row_body));
    let chunk = func.stmt(Stmt::Block(chunk));
    let tasks = func.for_loop(
        sx,
        (clo, chi, rows),
        LoopKind::ParallelChunks(Some(strip)),
        chunk,
    );
    let (ps, cs) = fused_steps(
        func,
        (pid, pname),
        (cid, cname),
        tasks,
        head.unwrap_or_default(),
    );
    let stage = fold::Stage {
        temp,
        var: p.x,
        first: r0,
        done: done.0,
        reads: vec![fold::Read {
            var: cx,
            k,
            amin,
            amax,
        }],
    };
    Some((ps, cs, stage))
}

/// The two steps of a fusion: the producer's region with its host proof alone in its place
/// (and its edge rows, `head`: their allocation before the region, their loops in it), the
/// consumer's with its new `body`.
fn fused_steps(
    func: &mut Func,
    (pid, pname): (RegionId, String),
    (cid, cname): (RegionId, String),
    body: StmtId,
    head: Vec<StmtId>,
) -> (StmtId, StmtId) {
    let (allocate, rows) = match head.split_first() {
        Some((a, rows)) => (Some(*a), rows.to_vec()),
        None => (None, Vec::new()),
    };
    let rows = func.stmt(Stmt::Block(rows));
    let region = func.stmt(Stmt::Region {
        id: pid,
        name: pname,
        body: rows,
    });
    let p_step = match allocate {
        Some(a) => func.stmt(Stmt::Block(vec![a, region])),
        None => region,
    };
    let c_step = func.stmt(Stmt::Region {
        id: cid,
        name: cname,
        body,
    });
    (p_step, c_step)
}
