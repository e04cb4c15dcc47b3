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
//! holds a fold (`pass::slide`'s); `P` does not upsample its columns (see [`upsamples`]); the
//! fallback's code stays within [`MAX_INLINED`] nodes. Otherwise nothing changes.
//!
//! Before that, a cheap point producer is computed at each read of its readers instead
//! (`inline.rs`); a producer read by several regions is computed in each one's tasks
//! ([`readers`]), or where they cannot, in the first one's tasks, which store `t` for the
//! others ([`stored_readers`]); chains join fused tasks (`chain.rs`); the model chooses when the
//! call runs ([`guarded`]).

mod chain;
mod fold;
pub mod gpu;
mod inline;
mod reads;
mod tiles;
pub mod time;

use crate::codegen::safety;
use crate::ir::{BinOp, Builtin, Function, MatrixKind, RegionId, Scalar};
use crate::lir::canon::Canon;
use crate::lir::visit::{preorder, stmt_parts};
use crate::lir::{
    Buf, ExprId, ExprKind, Func, LoopKind, Memory, Stmt, StmtId, Temp, TempId, VarId,
};
use reads::{
    Columns, Edges, Rewire, Rows, columns, edge_rows, inlined_sites, plus, point_at, row_offsets,
    substitute, times,
};
use std::collections::HashMap;

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
/// ([`fold`]), a cheap point producer computed at each read where `points` ([`inline`]);
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
    let mut used: Vec<Uses> = steps.iter().map(|s| uses(func, *s)).collect();
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
                used[i] = uses(func, steps[i]);
                for (k, s) in all.into_iter().zip(new) {
                    steps[k] = s;
                    used[k] = uses(func, s);
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
                    used[i] = uses(func, ps);
                }
                if fold_p {
                    stages.push(stage);
                }
                steps[k] = cs;
                used[k] = uses(func, cs);
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

/// The fused `steps` under the model's test (`Builtin::Fuses`: the run time's policy for their
/// stages, else fused where a task recomputes little, or where the intermediates `gone` (with
/// their [`Halo`]s, and whether a fused reader's tasks still store them), stored, would not
/// fit the cores' caches), the `orig` steps otherwise:
/// `let strip = fuses(bytes, span, stride, rows, row_bytes, height, stages..); if strip > 0
/// { fused } else { apart }` over the steps from the first that fusion changed to the last,
/// the allocations it did not change before the test; `strip` the tasks' rows (the fused
/// tasks' step, `LoopKind::ParallelChunks(Some(strip))`, `rows` the compiler's). Where those
/// steps hold anything but allocations and regions (a host `let`, a reduction, a repeat:
/// bindings later steps may use), the fused steps alone, in tasks of `rows` rows.
fn guarded(
    func: &mut Func,
    f: &Function,
    orig: &[StmtId],
    steps: Vec<StmtId>,
    gone: &[(usize, Halo, bool)],
    (strip, rows): (VarId, i64),
) -> Vec<StmtId> {
    let i64t = Scalar::I64;
    let nominal = func.int(i128::from(rows), i64t);
    let alone = |func: &mut Func, steps: Vec<StmtId>| {
        let mut out = vec![func.stmt(Stmt::Let(strip, nominal))];
        out.extend(steps);
        out
    };
    let changed: Vec<usize> = (0..steps.len()).filter(|k| steps[*k] != orig[*k]).collect();
    let (Some(&lo), Some(&hi)) = (changed.first(), changed.last()) else {
        return alone(func, steps);
    };
    let plain = |s: StmtId| plain(func, s);
    if !(lo..=hi).all(|k| plain(steps[k]) && plain(orig[k])) {
        return alone(func, steps);
    }
    let kept =
        |k: &usize| steps[*k] == orig[*k] && matches!(func.stmts[steps[*k]], Stmt::Allocate { .. });
    let (before, rest): (Vec<usize>, Vec<usize>) = (lo..=hi).partition(kept);
    // The intermediates' bytes, and those of one row of each (a task's buffers per row).
    let (mut bytes, mut row_bytes) = (None, None);
    let sum = |func: &mut Func, a: Option<ExprId>, b: ExprId| match a {
        Some(a) => func.binary(BinOp::Add, a, b, i64t),
        None => b,
    };
    for &(t, _, stored) in gone {
        let mut b = func.int(f.matrices[t].elem.bytes() as i128, i64t);
        for d in (0..f.matrices[t].dims.len()).rev() {
            if d == 0 {
                row_bytes = Some(sum(func, row_bytes, b));
            }
            let e = func.expr(ExprKind::Dim(t, d), i64t);
            b = func.binary(BinOp::Mul, b, e, i64t);
        }
        // A stored intermediate still goes through memory.
        if !stored {
            bytes = Some(sum(func, bytes, b));
        }
    }
    let Some(&(first, ..)) = gone.first() else {
        return alone(func, steps);
    };
    let bytes = bytes.unwrap_or_else(|| func.int(0, i64t));
    let row_bytes = row_bytes.unwrap_or_else(|| func.int(1, i64t));
    let height = func.expr(ExprKind::Dim(first, 0), i64t);
    // The stages: the regions of those steps.
    let ids: Vec<usize> = rest
        .iter()
        .flat_map(|k| step_parts(func, steps[*k]))
        .filter_map(|s| match func.stmts[s] {
            Stmt::Region { id, .. } => Some(id),
            _ => None,
        })
        .collect();
    let (span, stride) = widest(gone.iter().map(|g| g.1));
    let (span, stride) = (func.int(span, i64t), func.int(stride, i64t));
    let mut args = vec![bytes, span, stride, nominal, row_bytes, height];
    for id in ids {
        args.push(func.int(id as i128, i64t));
    }
    let choice = func.expr(ExprKind::Call(Builtin::Fuses, args), i64t);
    let strip_e = func.expr(ExprKind::Var(strip), i64t);
    let zero = func.int(0, i64t);
    let test = func.binary(BinOp::Gt, strip_e, zero, Scalar::Bool);
    let fused = func.stmt(Stmt::Block(rest.iter().map(|k| steps[*k]).collect()));
    let apart = func.stmt(Stmt::Block(rest.iter().map(|k| orig[*k]).collect()));
    let mut out: Vec<StmtId> = steps[..lo].to_vec();
    out.extend(before.iter().map(|k| steps[*k]));
    out.push(func.stmt(Stmt::Let(strip, choice)));
    out.push(func.stmt(Stmt::If(test, fused, Some(apart))));
    out.extend_from_slice(&steps[hi + 1..]);
    out
}

/// Whether a step is regions and allocations alone (no binding a later step may use).
fn plain(func: &Func, s: StmtId) -> bool {
    step_parts(func, s)
        .iter()
        .all(|s| matches!(func.stmts[*s], Stmt::Allocate { .. } | Stmt::Region { .. }))
}

/// A step's statements: a block's, or the step itself.
fn step_parts(func: &Func, s: StmtId) -> Vec<StmtId> {
    match &func.stmts[s] {
        Stmt::Block(b) => b.clone(),
        _ => vec![s],
    }
}

/// The step that reads what region step `i` produces, with the producer, where the steps
/// between write nothing the producer reads (its point computed later gives the same value)
/// and do not return.
fn consumer(
    func: &Func,
    f: &Function,
    steps: &[StmtId],
    used: &[Uses],
    i: usize,
) -> Option<(usize, Producer)> {
    let Stmt::Region { body, .. } = func.stmts[steps[i]] else {
        return None;
    };
    // A stage of rows and columns (a nest of planes only as a time step's: `time::split`).
    let p = producer(func, f, body).filter(|p| p.mid.is_none())?;
    for j in i + 1..steps.len() {
        let u = &used[j];
        if u.touches(p.t) {
            return matches!(func.stmts[steps[j]], Stmt::Region { .. }).then_some((j, p));
        }
        if matches!(func.stmts[steps[j]], Stmt::Return(_))
            || u.stores.iter().any(|m| used[i].loads.contains(m))
        {
            return None;
        }
    }
    None
}

/// A producer's row nest: its row variable, its column variable and the column loop's bounds,
/// the `let`s and value of its point, the matrix it stores into and whether that store is
/// checked. In a nest of three (a 3-D matrix), `x` runs over its planes and `mid` is the loop
/// between (the rows: its variable and bounds).
struct Producer {
    x: VarId,
    mid: Option<(VarId, (ExprId, ExprId))>,
    y: VarId,
    columns: (ExprId, ExprId),
    lets: Vec<(VarId, ExprId)>,
    value: ExprId,
    t: usize,
    checked: bool,
}

/// A loop of step 1 in order: its variable, bounds and body.
fn serial(func: &Func, s: StmtId) -> Option<(VarId, (ExprId, ExprId), StmtId)> {
    match func.stmts[s] {
        Stmt::For {
            var,
            lo,
            hi,
            step: 1,
            kind: LoopKind::Serial,
            body,
        } => Some((var, (lo, hi), body)),
        _ => None,
    }
}

impl Producer {
    /// Expression nodes of its point (`let`s and value): what inlining it costs.
    fn size(&self, func: &Func) -> usize {
        self.lets
            .iter()
            .map(|(_, e)| *e)
            .chain([self.value])
            .map(|e| {
                let mut n = 0;
                preorder(func, e, |_| {
                    n += 1;
                    true
                });
                n
            })
            .sum()
    }
}

fn producer(func: &Func, f: &Function, body: StmtId) -> Option<Producer> {
    let serial = |s: StmtId| serial(func, s);
    let (x, (lo, _), xb) = serial(body)?;
    let (mut y, mut columns, mut yb) = serial(single(func, xb)?)?;
    // A nest of three: the middle loop's body is the column loop alone.
    let mut mid = None;
    if let Some(inner) = single(func, yb).and_then(serial) {
        mid = Some((y, columns));
        (y, columns, yb) = inner;
    }
    if !matches!(func.exprs[lo].kind, ExprKind::Int(0)) {
        return None;
    }
    let stmts = match &func.stmts[yb] {
        Stmt::Block(b) => b.clone(),
        _ => vec![yb],
    };
    let (last, lets) = stmts.split_last()?;
    let lets = lets
        .iter()
        .map(|s| match func.stmts[*s] {
            Stmt::Let(v, e) => Some((v, e)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let Stmt::Store {
        buf: Buf::Matrix(t),
        ref index,
        value,
        checked,
    } = func.stmts[*last]
    else {
        return None;
    };
    let at = |k: usize, v: VarId| crate::lir::pass::parallel::is_var(func, index[k], v);
    let vars: Vec<VarId> = [x].into_iter().chain(mid.map(|m| m.0)).chain([y]).collect();
    if index.len() != vars.len()
        || !vars.iter().enumerate().all(|(k, v)| at(k, *v))
        || f.matrices[t].kind != MatrixKind::Local
    {
        return None;
    }
    Some(Producer {
        x,
        mid,
        y,
        columns,
        lets,
        value,
        t,
        checked,
    })
}

/// Whether a read of the producer's point has an index that divides its column variable (its
/// `let`s seen through).
fn upsamples(func: &mut Func, p: &Producer) -> bool {
    let env: HashMap<VarId, ExprId> = p.lets.iter().copied().collect();
    let roots: Vec<ExprId> = p.lets.iter().map(|(_, e)| *e).chain([p.value]).collect();
    let mut indices = Vec::new();
    for e in roots {
        crate::lir::visit::preorder(func, e, |x| {
            if let ExprKind::Load { index, .. } = &func.exprs[x].kind {
                indices.extend(index.iter().copied());
            }
            true
        });
    }
    indices.into_iter().any(|i| {
        let i = substitute(func, i, &env, true);
        !crate::lir::visit::preorder(func, i, |x| match func.exprs[x].kind {
            ExprKind::Binary(BinOp::Div | BinOp::Rem | BinOp::Shr, a, _) => {
                !crate::lir::visit::mentions(func, a, |v| v == p.y)
            }
            _ => true,
        })
    })
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

/// The one statement `s` is (a block of one).
fn single(func: &Func, s: StmtId) -> Option<StmtId> {
    match &func.stmts[s] {
        Stmt::Block(b) if b.len() == 1 => Some(b[0]),
        Stmt::Block(_) => None,
        _ => Some(s),
    }
}

/// What a statement tree loads and stores (matrices), and whether it holds a fold or an
/// integer division that may fail.
#[derive(Default)]
struct Uses {
    loads: Vec<usize>,
    stores: Vec<usize>,
    reduces: Vec<usize>,
    fold: bool,
    divides: bool,
}

impl Uses {
    /// Whether matrix `m` is read, written or reduced.
    fn touches(&self, m: usize) -> bool {
        self.loads.contains(&m) || self.stores.contains(&m) || self.reduces.contains(&m)
    }
}

fn uses(func: &Func, s: StmtId) -> Uses {
    fn walk(func: &Func, s: StmtId, u: &mut Uses) {
        let (es, ss) = stmt_parts(&func.stmts[s]);
        match func.stmts[s] {
            Stmt::Store {
                buf: Buf::Matrix(m),
                ..
            } => u.stores.push(m),
            Stmt::Reduce { matrix, .. } => u.reduces.push(matrix),
            _ => {}
        }
        for e in es {
            preorder(func, e, |x| {
                let node = &func.exprs[x];
                match node.kind {
                    ExprKind::Load {
                        buf: Buf::Matrix(m),
                        ..
                    } => u.loads.push(m),
                    ExprKind::Fold { .. } => u.fold = true,
                    // A divisor `nonzero(..)` is not zero where it is evaluated (a border
                    // map's period, or one the host's proof checked before the region runs).
                    ExprKind::Binary(BinOp::Div | BinOp::Rem, _, d) if node.ty.is_int() => {
                        u.divides |= !crate::lir::safe_divisor(func, d)
                            && !matches!(func.exprs[d].kind, ExprKind::Call(Builtin::NonZero, _));
                    }
                    _ => {}
                }
                true
            });
        }
        for c in ss {
            walk(func, c, u);
        }
    }
    let mut u = Uses::default();
    walk(func, s, &mut u);
    u
}

/// The rows of an intermediate a task computes beyond its own (its reads' span), and its own
/// per row of its consumer (their stride): what fusion computes twice, against what it computes
/// once per row of a task. A producer computed in each of several readers' tasks (a clone,
/// [`readers`]) computes all its rows again: stride 0.
type Halo = (i128, i128);

/// The halo whose rows computed twice are the largest share of its strip (none: `(0, 1)`).
fn widest(halos: impl Iterator<Item = Halo>) -> Halo {
    halos
        .max_by(|a, b| (a.0 * b.1).cmp(&(b.0 * a.1)))
        .unwrap_or((0, 1))
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
    if store && (k != 1 || amin > 0 || amax < 0 || cols.is_some() || !same_rows(func, f, chi, t)) {
        return None;
    }

    // The task: rows `sx .. x1` of `C`, rows `r0 .. r1` of `t`.
    let i64t = Scalar::I64;
    let sx = func.var("fx", func.vars[cx].ty);
    let sxe = func.expr(ExprKind::Var(sx), func.vars[sx].ty);
    let sx64 = func.cast(sxe, i64t);
    let hi64 = func.cast(chi, i64t);
    let strip_e = func.expr(ExprKind::Var(strip), i64t);
    let least = func.int(1, i64t);
    let task = func.expr(ExprKind::Call(Builtin::Max, vec![strip_e, least]), i64t);
    let past = func.binary(BinOp::Add, sx64, task, i64t);
    let x1 = func.expr(ExprKind::Call(Builtin::Min, vec![past, hi64]), i64t);
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

/// Whether producer step `i` (region `pid`, writing `t`) may be computed in consumer step `j`
/// at any of its points, any number of times, on both back ends: the program lets it
/// (`parac_schedule(fuse = 0)` keeps a stage apart), `t` is written whole, by `P` alone, and read
/// by `C` alone; `P` cannot fail once its host proof passed (no access it guards, no division
/// that may fail), reads neither `t` nor what `C` writes, and writes `t` alone; neither holds
/// a fold.
fn separable(
    f: &Function,
    whole: &[bool],
    used: &[Uses],
    (i, j): (usize, usize),
    (pid, t): (RegionId, usize),
    readers: &[usize],
) -> bool {
    let r = &f.regions[pid];
    let (pu, cu) = (&used[i], &used[j]);
    r.fuse
        && whole[t]
        && !(0..r.accesses.len()).any(|a| safety::guarded(f, r, a))
        && !(pu.fold || cu.fold || pu.divides || pu.loads.contains(&t) || cu.stores.contains(&t))
        && !pu.loads.iter().any(|m| cu.stores.contains(m))
        && pu.stores.iter().all(|m| *m == t)
        && !(0..used.len()).any(|k| k != i && k != j && !readers.contains(&k) && used[k].touches(t))
}

/// The steps reading `t` (written by producer step `i`, first read by step `j`): `j`, and the
/// later regions that read it, where each may have `P` computed in its own tasks: none writes
/// `t`, and no step from `P` to the last of them writes what `P` reads or returns (each reader
/// then sees `P`'s values, as `consumer` asks of `j`), and those steps are regions and
/// allocations alone (so that the model chooses between the clones and the steps apart:
/// [`guarded`]). `None` where a later step reads `t` otherwise.
fn readers(
    func: &Func,
    steps: &[StmtId],
    used: &[Uses],
    (i, j): (usize, usize),
    t: usize,
) -> Option<Vec<usize>> {
    let later = later_readers(used, j, t)?;
    if later
        .iter()
        .any(|k| !matches!(func.stmts[steps[*k]], Stmt::Region { .. }))
    {
        return None;
    }
    let out: Vec<usize> = [j].into_iter().chain(later).collect();
    let last = *out.last()?;
    let clean = (i + 1..last).all(|k| {
        plain(func, steps[k]) && !used[k].stores.iter().any(|m| used[i].loads.contains(m))
    });
    (out.len() == 1 || clean).then_some(out)
}

/// The steps reading `t` (written by producer step `i`) where its first reader, step `j`,
/// stores it for the later ones: `j` and those ([`later_readers`]), where there are some, and
/// the steps from `P` to `C` are regions and allocations alone (so that the model chooses:
/// [`guarded`]).
fn stored_readers(
    func: &Func,
    steps: &[StmtId],
    used: &[Uses],
    (i, j): (usize, usize),
    t: usize,
) -> Option<Vec<usize>> {
    let later = later_readers(used, j, t).filter(|l| !l.is_empty())?;
    (i..=j)
        .all(|k| plain(func, steps[k]))
        .then(|| [j].into_iter().chain(later).collect())
}

/// The steps after step `j` that read `t`, where none writes it (each then reads the values
/// `t`'s producer stored, or a fused reader's tasks stored for it); `None` where one writes it.
fn later_readers(used: &[Uses], j: usize, t: usize) -> Option<Vec<usize>> {
    let later: Vec<usize> = (j + 1..used.len())
        .filter(|k| used[*k].touches(t))
        .collect();
    (!later.iter().any(|k| used[*k].stores.contains(&t))).then_some(later)
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

/// The rows of `t` the consumer reads at task-invariant rows (a border rule's entries at
/// constant rows, `h[3][*]`, `h[M - 2][*]`), at most [`MAX_EDGES`], computed once before the
/// tasks into a buffer of their own, row `i` holding `rows[i]` where it is inside `t`: the
/// buffer, and its allocation then the loops computing it. Without it the exact fallback would
/// inline the producer's point at each such read (laplacian's `br1`: 60 reads, over the code
/// budget).
fn edges(
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
fn rows_into(
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
fn store_row(func: &mut Func, p: &Producer, temp: TempId, x: VarId, r0: ExprId) -> StmtId {
    let i64t = Scalar::I64;
    let xe = func.expr(ExprKind::Var(x), func.vars[x].ty);
    let x64 = func.cast(xe, i64t);
    let y = func.var("fy", func.vars[p.y].ty);
    let ye = func.expr(ExprKind::Var(y), func.vars[y].ty);
    let y64 = func.cast(ye, i64t);
    let row = func.binary(BinOp::Sub, x64, r0, i64t);
    let elem = func.temps[temp].elem;
    let value = func.expr(
        ExprKind::Load {
            buf: Buf::Temp(temp),
            index: vec![row, y64],
            checked: false,
        },
        elem,
    );
    let store = func.stmt(Stmt::Store {
        buf: Buf::Matrix(p.t),
        index: vec![x64, y64],
        value,
        checked: p.checked,
    });
    func.for_loop(y, (p.columns.0, p.columns.1, 1), LoopKind::Serial, store)
}

/// Whether a loop's bound `hi` (from 0) is the row count of `t`: `dim(t, 0)`, or the size
/// symbol `t` was declared with (seen through integer casts).
fn same_rows(func: &Func, f: &Function, hi: ExprId, t: usize) -> bool {
    match func.exprs[hi].kind {
        ExprKind::Cast(a) if func.exprs[a].ty.is_int() => same_rows(func, f, a, t),
        ExprKind::Dim(m, 0) => m == t,
        ExprKind::Size(s) => matches!(
            f.matrices[t].dims.first().map(|d| &d.kind),
            Some(crate::ir::ExprKind::Size(z)) if *z == s
        ),
        _ => false,
    }
}

/// A buffer's row length for `t`: its columns, or the consumer's where the buffers hold the
/// columns `k j + b` alone.
fn buffer_width(func: &mut Func, t: usize, cols: Option<Columns>) -> ExprId {
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
fn column_loop(
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
