//! A scan along a region's outer loop in parallel blocks of rows (the CPU path): the loop
//! carries running values from row to row in temporaries allocated outside it (a prefix
//! along the rows, `parac_prefix_sum(e, x)`, or the second of a 2-D prefix: one value per
//! column), so it cannot run its rows in parallel as they are. Where each carried value only
//! combines with the row's own by an integer operator (a sum, a minimum, a maximum: the
//! order of its combinations cannot change it), the rows run in blocks, in two passes:
//!
//! ```text
//! per; totals = block totals of (carried) for x in [lo, hi) {   // blocks but the last, in
//!     body without its stores to matrices                       // parallel, each from the
//! }                                                             // identity
//! parallel chunks of per for xc in [lo, hi) {                   // every block, in parallel
//!     allocate carried; carried[k] = totals[(xc - lo) / per, k] // its values at the start
//!     chunk rows for x in [xc, min(xc + per, hi)) { body }
//! }
//! ```
//!
//! The first pass reads what the loop reads but writes no matrix, and computes only what the
//! carried values need (`Live`), so a block costs it less than the second; the blocks' values at their starts combine in order, so each block's rows
//! see the running values the loop in order gives them. Which loops: the region's last
//! statement, a loop of step 1 whose every store to a matrix is at a row of the loop's
//! variable (each block owns its rows), that updates nothing and reads no matrix it writes;
//! carried temporaries allocated before it in the region at their operators' identities
//! (`lower::prefix`), each read only as `let r = t[k] op v; store t[k] = r`.

use crate::ir::{BinOp, Builtin, ReduceOp, Scalar};
use crate::lir::pass::parallel::plane_rank;
use crate::lir::visit::{Mutator, rebuild_stmt, stmt_parts};
use crate::lir::{Buf, ExprId, ExprKind, Func, Loop, LoopKind, Memory, Stmt, StmtId, TempId};

/// Runs every region's outer scan in blocks, where it can; whether one did.
pub fn run(func: &mut Func) -> bool {
    let mut changed = false;
    for s in func.regions() {
        let Stmt::Region { id, name, body } = func.stmts[s].clone() else {
            continue;
        };
        if let Some(body) = region(func, body) {
            func.stmts[s] = Stmt::Region { id, name, body };
            changed = true;
        }
    }
    changed
}

/// The operator of `e` where it is `t[k] op v` (or `v op t[k]`) for temporary `t`: the load.
pub(crate) fn step(func: &Func, e: ExprId, t: TempId) -> Option<(ReduceOp, ExprId)> {
    let is_load = |a: ExprId| matches!(&func.exprs[a].kind, ExprKind::Load { buf: Buf::Temp(x), .. } if *x == t);
    let (op, a, b) = match &func.exprs[e].kind {
        ExprKind::Binary(BinOp::Add, a, b) => (ReduceOp::Sum, *a, *b),
        ExprKind::Call(Builtin::Min, x) if x.len() == 2 => (ReduceOp::Min, x[0], x[1]),
        ExprKind::Call(Builtin::Max, x) if x.len() == 2 => (ReduceOp::Max, x[0], x[1]),
        _ => return None,
    };
    match (is_load(a), is_load(b)) {
        (true, false) => Some((op, a)),
        (false, true) => Some((op, b)),
        _ => None,
    }
}

/// What the loop's body does with a carried temporary `t`: its operator where every read of
/// it is the load of a `let r = t[k] op v` whose `r` is stored back at `t[k]`, and nothing
/// else touches it.
fn carried(func: &Func, body: StmtId, t: TempId) -> Option<ReduceOp> {
    // The lets that step it (their variable, load and operator) and the stores into it.
    let mut steps = Vec::new();
    let mut stores = Vec::new();
    let mut loads = Vec::new();
    let mut stack = vec![body];
    while let Some(s) = stack.pop() {
        let (es, ss) = stmt_parts(&func.stmts[s]);
        match &func.stmts[s] {
            Stmt::Let(v, e) => {
                if let Some((op, load)) = step(func, *e, t) {
                    steps.push((*v, load, op));
                }
            }
            Stmt::Store {
                buf: Buf::Temp(x),
                index,
                value,
                ..
            } if *x == t => stores.push((index.clone(), *value)),
            Stmt::Update {
                buf: Buf::Temp(x), ..
            }
            | Stmt::Allocate {
                buf: Buf::Temp(x), ..
            } if *x == t => {
                return None;
            }
            _ => {}
        }
        for e in es {
            crate::lir::visit::preorder(func, e, |x| {
                if matches!(&func.exprs[x].kind, ExprKind::Load { buf: Buf::Temp(b), .. } if *b == t)
                {
                    loads.push(x);
                }
                true
            });
        }
        stack.extend(ss);
    }
    let op = steps.first()?.2;
    let int = func.temps[t].elem.is_int();
    let mut canon = crate::lir::canon::Canon::new();
    let mut same = |a: &[ExprId], b: &[ExprId]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| canon.same(func, *x, *y))
    };
    let each_load_steps = loads.iter().all(|l| steps.iter().any(|s| s.1 == *l));
    let each_store_steps = stores.iter().all(|(index, value)| {
        let ExprKind::Var(v) = func.exprs[*value].kind else {
            return false;
        };
        steps.iter().any(|(r, load, _)| {
            *r == v
                && matches!(&func.exprs[*load].kind, ExprKind::Load { index: li, .. } if same(li, index))
        })
    });
    let one_op = steps.iter().all(|s| s.2 == op);
    (int && each_load_steps && each_store_steps && one_op && !stores.is_empty()).then_some(op)
}

/// Whether a carried value's step reads another carried value (`out = prefix(prefix(v, x),
/// x)`, through a `let`): a block's first pass starts every carried value at the identity, so
/// a value fed by another's running value would miss the blocks before it. The variables that
/// depend on a carried load, transitively through `let`s, may not be a step's operand.
fn independent(func: &Func, body: StmtId, carry: &[TempId]) -> bool {
    let loads_carried = |e: ExprId| {
        !crate::lir::visit::preorder(
            func,
            e,
            |x| !matches!(&func.exprs[x].kind, ExprKind::Load { buf: Buf::Temp(t), .. } if carry.contains(t)),
        )
    };
    let mut lets = Vec::new();
    let mut stack = vec![body];
    while let Some(s) = stack.pop() {
        if let Stmt::Let(v, e) = func.stmts[s] {
            lets.push((v, e));
        }
        stack.extend(stmt_parts(&func.stmts[s]).1);
    }
    let mut tainted: std::collections::HashSet<crate::lir::VarId> =
        std::collections::HashSet::new();
    loop {
        let before = tainted.len();
        for (v, e) in &lets {
            let reads = loads_carried(*e)
                || crate::lir::visit::mentions(func, *e, |w| tainted.contains(&w));
            if reads {
                tainted.insert(*v);
            }
        }
        if tainted.len() == before {
            break;
        }
    }
    lets.iter().all(|(_, e)| {
        carry.iter().all(|t| match step(func, *e, *t) {
            // The operand beside the step's load.
            Some((_, load)) => {
                let other = match &func.exprs[*e].kind {
                    ExprKind::Binary(_, a, b) => [*a, *b],
                    ExprKind::Call(_, x) => [x[0], x[1]],
                    _ => return false,
                };
                other.iter().filter(|o| **o != load).all(|o| {
                    !loads_carried(*o)
                        && !crate::lir::visit::mentions(func, *o, |w| tainted.contains(&w))
                })
            }
            None => true,
        })
    })
}

/// Whether the loop `l` owns its rows: every store to a matrix at a row of `l.var`, no update,
/// no read of a matrix it writes, no temporary written but those allocated inside or `carry`.
fn owns_rows(func: &Func, l: &Loop, carry: &[TempId]) -> bool {
    let mut stored = Vec::new();
    let mut loaded = Vec::new();
    let mut own = Vec::new();
    let mut stack = vec![l.body];
    while let Some(s) = stack.pop() {
        if let Stmt::Allocate {
            buf: Buf::Temp(t), ..
        } = func.stmts[s]
        {
            own.push(t);
        }
        stack.extend(stmt_parts(&func.stmts[s]).1);
    }
    let mut stack = vec![l.body];
    let mut ok = true;
    while let Some(s) = stack.pop() {
        let (es, ss) = stmt_parts(&func.stmts[s]);
        match &func.stmts[s] {
            Stmt::Store {
                buf: Buf::Matrix(m),
                index,
                ..
            } => {
                ok &= plane_rank(func, index, l.var) == Some(0);
                stored.push(*m);
            }
            Stmt::Store {
                buf: Buf::Temp(t), ..
            } => ok &= carry.contains(t) || own.contains(t),
            Stmt::For { kind, .. } => {
                ok &= matches!(kind, LoopKind::Serial | LoopKind::Vectorized(_))
            }
            Stmt::Block(_)
            | Stmt::Let(..)
            | Stmt::If(..)
            | Stmt::Allocate {
                buf: Buf::Temp(_),
                memory: Memory::Private,
                ..
            } => {}
            _ => ok = false,
        }
        for e in es {
            crate::lir::visit::preorder(func, e, |x| {
                if let ExprKind::Load {
                    buf: Buf::Matrix(m),
                    ..
                } = func.exprs[x].kind
                {
                    loaded.push(m);
                }
                true
            });
        }
        stack.extend(ss);
    }
    ok && !stored.is_empty() && stored.iter().all(|m| !loaded.contains(m))
}

/// The first pass's body: the loop's without its stores to matrices.
struct NoStores;

impl Mutator for NoStores {
    fn mutate_stmt(&mut self, f: &mut Func, s: StmtId) -> StmtId {
        match f.stmts[s] {
            Stmt::Store {
                buf: Buf::Matrix(_),
                ..
            } => f.stmt(Stmt::Block(Vec::new())),
            _ => rebuild_stmt(self, f, s),
        }
    }
}

/// Whether evaluating `e` can fail: a checked load, a read outside, an integer division by
/// anything but a constant other than 0.
pub(crate) fn may_fail(func: &Func, e: ExprId) -> bool {
    !crate::lir::visit::preorder(func, e, |x| !match &func.exprs[x].kind {
        ExprKind::Load { checked, .. } => *checked,
        ExprKind::Outside { .. } => true,
        ExprKind::Binary(BinOp::Div | BinOp::Rem, _, d) => {
            !func.exprs[x].ty.is_float()
                && !matches!(func.exprs[*d].kind, ExprKind::Int(v) if v != 0)
        }
        _ => false,
    })
}

/// The first pass's body less what no carried value needs: the lets and the stores into
/// temporaries that feed neither a carried temporary nor a loop's range or a branch's
/// condition (a 2-D prefix's scan along the row, once its stores are gone). A let that may
/// fail stays, so the first pass fails where the loop would, and runs it in order.
struct Live {
    vars: std::collections::HashSet<crate::lir::VarId>,
    temps: std::collections::HashSet<TempId>,
}

impl Live {
    /// What the carried temporaries `carry` need in `body`.
    fn of(func: &Func, body: StmtId, carry: &[TempId]) -> Live {
        let mut live = Live {
            vars: Default::default(),
            temps: carry.iter().copied().collect(),
        };
        let mut all = Vec::new();
        let mut stack = vec![body];
        while let Some(s) = stack.pop() {
            all.push(s);
            stack.extend(stmt_parts(&func.stmts[s]).1);
        }
        loop {
            let before = (live.vars.len(), live.temps.len());
            for s in &all {
                let roots: Vec<ExprId> = match &func.stmts[*s] {
                    Stmt::Store {
                        buf: Buf::Temp(t),
                        index,
                        value,
                        ..
                    } if live.temps.contains(t) => index.iter().copied().chain([*value]).collect(),
                    Stmt::Store { .. } => Vec::new(),
                    Stmt::Let(v, e) if live.vars.contains(v) || may_fail(func, *e) => vec![*e],
                    Stmt::Let(..) => Vec::new(),
                    other => stmt_parts(other).0,
                };
                for e in roots {
                    crate::lir::visit::preorder(func, e, |x| {
                        match &func.exprs[x].kind {
                            ExprKind::Var(v) => {
                                live.vars.insert(*v);
                            }
                            ExprKind::Load {
                                buf: Buf::Temp(t), ..
                            } => {
                                live.temps.insert(*t);
                            }
                            _ => {}
                        }
                        true
                    });
                }
            }
            if (live.vars.len(), live.temps.len()) == before {
                return live;
            }
        }
    }
}

impl Mutator for Live {
    fn mutate_stmt(&mut self, f: &mut Func, s: StmtId) -> StmtId {
        match &f.stmts[s] {
            Stmt::Let(v, _) if !self.vars.contains(v) => f.stmt(Stmt::Block(Vec::new())),
            Stmt::Store {
                buf: Buf::Temp(t), ..
            } if !self.temps.contains(t) => f.stmt(Stmt::Block(Vec::new())),
            _ => rebuild_stmt(self, f, s),
        }
    }
}

/// Region body `body` with its outer scan in blocks, if it has one that can.
fn region(func: &mut Func, body: StmtId) -> Option<StmtId> {
    let Stmt::Block(items) = func.stmts[body].clone() else {
        return None;
    };
    let (&last, before) = items.split_last()?;
    let l = Loop::of(func, last)?;
    let serial = matches!(
        func.stmts[last],
        Stmt::For {
            kind: LoopKind::Serial,
            step: 1,
            ..
        }
    );
    if !serial || func.vars[l.var].ty != Scalar::I32 {
        return None;
    }
    // The temporaries allocated before the loop (with their elements), each carried.
    let mut carry = Vec::new();
    for s in before {
        match &func.stmts[*s] {
            Stmt::Allocate {
                buf: Buf::Temp(t),
                memory: Memory::Private,
                extents,
                ..
            } if extents.len() == 1 => {
                let op = carried(func, l.body, *t)?;
                carry.push((*t, op, extents[0]));
            }
            // The fills of their identities.
            Stmt::For { body, .. }
                if matches!(
                    func.stmts[*body],
                    Stmt::Store {
                        buf: Buf::Temp(_),
                        ..
                    }
                ) => {}
            _ => return None,
        }
    }
    let temps: Vec<TempId> = carry.iter().map(|c| c.0).collect();
    if carry.is_empty() || !owns_rows(func, &l, &temps) || !independent(func, l.body, &temps) {
        return None;
    }
    // Each carried value starts at its operator's identity (`lower::prefix`'s fill).
    for s in before {
        if let Stmt::For { lo, body, .. } = func.stmts[*s] {
            let Stmt::Store {
                buf: Buf::Temp(t),
                value,
                ..
            } = func.stmts[body]
            else {
                return None;
            };
            let (_, op, _) = carry.iter().find(|c| c.0 == t)?;
            let want = crate::lir::lower::prefix_identity(*op, func.temps[t].elem)?;
            let is = |e: ExprId, v: i128| matches!(func.exprs[e].kind, ExprKind::Int(x) if x == v);
            if !is(value, want) || !is(lo, 0) {
                return None;
            }
        }
    }
    // Each carried temporary filled (its allocation followed by its fill).
    let filled = |t: TempId| {
        before.iter().any(|s| match func.stmts[*s] {
            Stmt::For { body, .. } => {
                matches!(func.stmts[body], Stmt::Store { buf: Buf::Temp(x), .. } if x == t)
            }
            _ => false,
        })
    };
    if !temps.iter().all(|t| filled(*t)) {
        return None;
    }
    let i32t = Scalar::I32;
    let i64t = Scalar::I64;
    let per = func.var("per", i32t);
    let totals: Vec<TempId> = carry
        .iter()
        .map(|(t, _, _)| {
            let temp = func.temps[*t].clone();
            func.temps.push(crate::lir::Temp {
                name: format!("{}_start", temp.name),
                ..temp
            })
        })
        .collect();
    let first = NoStores.mutate_stmt(func, l.body);
    let first = Live::of(func, first, &temps).mutate_stmt(func, first);
    let pass1 = func.stmt(Stmt::ScanTotals {
        var: l.var,
        lo: l.lo,
        hi: l.hi,
        per,
        body: first,
        carried: carry.clone(),
        totals: totals.clone(),
    });
    // A block: its carried values at its start, then its rows.
    let xc = func.var("block", i32t);
    // In `i64`: a block's index and end cannot wrap.
    let xce = func.expr(ExprKind::Var(xc), i32t);
    let pere = func.expr(ExprKind::Var(per), i32t);
    let (xc64, per64, lo64) = (
        func.cast(xce, i64t),
        func.cast(pere, i64t),
        func.cast(l.lo, i64t),
    );
    let off = func.binary(BinOp::Sub, xc64, lo64, i64t);
    let b = func.binary(BinOp::Div, off, per64, i64t);
    let mut chunk = Vec::new();
    for ((t, _, n), start) in carry.iter().zip(&totals) {
        let elem = func.temps[*t].elem;
        chunk.push(func.stmt(Stmt::Allocate {
            buf: Buf::Temp(*t),
            elem,
            memory: Memory::Private,
            extents: vec![*n],
        }));
        let k = func.var("carry", i32t);
        let ke = func.expr(ExprKind::Var(k), i32t);
        let ke = func.cast(ke, i64t);
        let value = func.expr(
            ExprKind::Load {
                buf: Buf::Temp(*start),
                index: vec![b, ke],
                checked: false,
            },
            elem,
        );
        let store = func.stmt(Stmt::Store {
            buf: Buf::Temp(*t),
            index: vec![ke],
            value,
            checked: false,
        });
        let (z, n) = (func.int(0, i32t), func.cast(*n, i32t));
        chunk.push(func.for_loop(k, (z, n, 1), LoopKind::Serial, store));
    }
    let end = func.binary(BinOp::Add, xc64, per64, i64t);
    let hi64 = func.cast(l.hi, i64t);
    let end = func.expr(ExprKind::Call(Builtin::Min, vec![end, hi64]), i64t);
    let end = func.cast(end, i32t);
    chunk.push(func.for_loop(l.var, (xce, end, 1), LoopKind::ChunkRows, l.body));
    let chunk = func.stmt(Stmt::Block(chunk));
    let pass2 = func.for_loop(
        xc,
        (l.lo, l.hi, 1),
        LoopKind::ParallelChunks(Some(per)),
        chunk,
    );
    let mut out = before.to_vec();
    out.push(pass1);
    out.push(pass2);
    Some(func.stmt(Stmt::Block(out)))
}
