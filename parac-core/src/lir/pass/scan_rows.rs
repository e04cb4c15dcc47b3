//! A scan along a vectorized loop in three steps (the CPU path): a prefix along the row keeps
//! its running value in a one-element temporary, `let r = acc[0] op v; store acc[0] = r`, so
//! each iteration waits for the one before and the loop runs an element at a time. Where the
//! loop's statements before the step (`pre`) and after it (`post`) touch different buffers,
//! nothing in them can fail, and the operator is a 32-bit integer one, the loop becomes
//!
//! ```text
//! allocate private lanes: T[hi]                               // (where lo >= 0)
//! vectorized for y in [lo, hi) { pre; store lanes[y] = v }     // the values, vectorized
//! scan lanes[lo, hi) by op from acc[0]                         // `Stmt::ScanRow`: a vector's
//! vectorized for y in [lo, hi) { let r = lanes[y]; post }      // values in shifted steps
//! ```
//!
//! The values are the loop's: `pre` runs for every iteration before `post` for any, which no
//! buffer can tell (they share none that either writes), and an integer operator's running
//! values are the same however a vector combines them.

use crate::ir::{ReduceOp, Scalar};
use crate::lir::pass::scan_blocks::{may_fail, step};
use crate::lir::visit::{Mutator, rebuild_stmt, stmt_parts};
use crate::lir::{Buf, ExprId, ExprKind, Func, LoopKind, Memory, Stmt, StmtId, TempId, VarId};
use std::collections::HashSet;

/// Every vectorized scan of the function in three steps, where it can be; whether one was.
pub fn run(func: &mut Func) -> bool {
    let mut m = Rows { changed: false };
    crate::lir::visit::mutate_body(&mut m, func);
    m.changed
}

struct Rows {
    changed: bool,
}

impl Mutator for Rows {
    fn mutate_stmt(&mut self, f: &mut Func, s: StmtId) -> StmtId {
        let s = rebuild_stmt(self, f, s);
        match split(f, s) {
            Some(n) => {
                self.changed = true;
                n
            }
            None => s,
        }
    }
}

/// The buffers an expression reads, and the variables it mentions.
fn reads(func: &Func, e: ExprId, bufs: &mut HashSet<Buf>, vars: &mut HashSet<VarId>) {
    crate::lir::visit::preorder(func, e, |x| {
        match &func.exprs[x].kind {
            ExprKind::Load { buf, .. } => {
                bufs.insert(*buf);
            }
            ExprKind::Var(v) => {
                vars.insert(*v);
            }
            _ => {}
        }
        true
    });
}

/// What statements read and write, the variables they bind and mention; `None` where one is
/// not a `let` or a store, or may fail.
#[derive(Default)]
struct Uses {
    read: HashSet<Buf>,
    written: HashSet<Buf>,
    bound: HashSet<VarId>,
    mentioned: HashSet<VarId>,
}

fn uses(func: &Func, items: &[StmtId]) -> Option<Uses> {
    let mut u = Uses::default();
    for s in items {
        match &func.stmts[*s] {
            Stmt::Let(v, e) => {
                u.bound.insert(*v);
                reads(func, *e, &mut u.read, &mut u.mentioned);
            }
            Stmt::Store { buf, checked, .. } if !checked => {
                u.written.insert(*buf);
            }
            _ => return None,
        }
        for e in stmt_parts(&func.stmts[*s]).0 {
            if may_fail(func, e) {
                return None;
            }
            reads(func, e, &mut u.read, &mut u.mentioned);
        }
    }
    Some(u)
}

/// Loop `s` in three steps, if it is a vectorized scan that can be.
fn split(func: &mut Func, s: StmtId) -> Option<StmtId> {
    let Stmt::For {
        var: y,
        lo,
        hi,
        step: 1,
        kind: kind @ LoopKind::Vectorized(_),
        body,
    } = func.stmts[s].clone()
    else {
        return None;
    };
    let Stmt::Block(items) = func.stmts[body].clone() else {
        return None;
    };
    // The step: `let r = acc[0] op v`, then `store acc[0] = r`.
    let (k, run, acc, op, value) = items.windows(2).enumerate().find_map(|(k, w)| {
        let Stmt::Let(r, e) = func.stmts[w[0]] else {
            return None;
        };
        let Stmt::Store {
            buf: Buf::Temp(acc),
            ref index,
            value,
            checked: false,
        } = func.stmts[w[1]]
        else {
            return None;
        };
        let zero = |i: &[ExprId]| matches!(i, [z] if matches!(func.exprs[*z].kind, ExprKind::Int(0)));
        let stored_r = matches!(func.exprs[value].kind, ExprKind::Var(v) if v == r);
        let (op, load) = step(func, e, acc)?;
        let loaded_0 = matches!(&func.exprs[load].kind, ExprKind::Load { index, checked: false, .. } if zero(index));
        let v = match &func.exprs[e].kind {
            ExprKind::Binary(_, a, b) => [*a, *b],
            ExprKind::Call(_, x) => [x[0], x[1]],
            _ => return None,
        }
        .into_iter()
        .find(|x| *x != load)?;
        (zero(index) && stored_r && loaded_0).then_some((k, r, acc, op, v))
    })?;
    let ty = func.temps[acc].elem;
    if !matches!(ty, Scalar::I32 | Scalar::U32)
        || !matches!(op, ReduceOp::Sum | ReduceOp::Min | ReduceOp::Max)
    {
        return None;
    }
    let (pre, post) = (&items[..k], &items[k + 2..]);
    let mut p = uses(func, pre)?;
    let q = uses(func, post)?;
    let mut vars = HashSet::new();
    reads(func, value, &mut p.read, &mut vars);
    if may_fail(func, value) {
        return None;
    }
    let acc_buf = Buf::Temp(acc);
    let disjoint = p.written.is_disjoint(&q.read)
        && p.written.is_disjoint(&q.written)
        && p.read.is_disjoint(&q.written)
        && ![&p.read, &p.written, &q.read, &q.written]
            .iter()
            .any(|b| b.contains(&acc_buf));
    // `post` reads nothing `pre` binds but the running value.
    if !disjoint || !p.bound.is_disjoint(&q.mentioned) {
        return None;
    }
    let lanes: TempId = func.temps.push(crate::lir::Temp {
        name: "lanes".to_string(),
        elem: ty,
        memory: Memory::Private,
    });
    let i64t = Scalar::I64;
    let ye = func.expr(ExprKind::Var(y), Scalar::I32);
    let at = func.cast(ye, i64t);
    let hi64 = func.cast(hi, i64t);
    let zero = func.int(0, i64t);
    let n = func.expr(
        ExprKind::Call(crate::ir::Builtin::Max, vec![hi64, zero]),
        i64t,
    );
    let alloc = func.stmt(Stmt::Allocate {
        buf: Buf::Temp(lanes),
        elem: ty,
        memory: Memory::Private,
        extents: vec![n],
    });
    let mut first = pre.to_vec();
    first.push(func.stmt(Stmt::Store {
        buf: Buf::Temp(lanes),
        index: vec![at],
        value,
        checked: false,
    }));
    let first = func.stmt(Stmt::Block(first));
    let first = func.stmt(Stmt::For {
        var: y,
        lo,
        hi,
        step: 1,
        kind,
        body: first,
    });
    let lo64 = func.cast(lo, i64t);
    let scan = func.stmt(Stmt::ScanRow {
        row: lanes,
        lo: lo64,
        hi: hi64,
        op,
        acc,
    });
    let load = func.expr(
        ExprKind::Load {
            buf: Buf::Temp(lanes),
            index: vec![at],
            checked: false,
        },
        ty,
    );
    let mut second = vec![func.stmt(Stmt::Let(run, load))];
    second.extend_from_slice(post);
    let second = func.stmt(Stmt::Block(second));
    let second = func.stmt(Stmt::For {
        var: y,
        lo,
        hi,
        step: 1,
        kind,
        body: second,
    });
    // The row is indexed by the loop's variable: a loop from below 0 runs as it was.
    let three = func.stmt(Stmt::Block(vec![alloc, first, scan, second]));
    let from0 = func.binary(crate::ir::BinOp::Ge, lo64, zero, Scalar::Bool);
    Some(func.stmt(Stmt::If(from0, three, Some(s))))
}
