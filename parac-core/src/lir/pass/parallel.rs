//! Loop kinds: a region's outermost loop runs in parallel when each of its iterations owns
//! whole rows: every store's first index is exactly that loop's variable, every matrix written
//! has the same rows, and nothing the region writes is read in it.

use crate::ir::Function;
use crate::lir::visit::{Visitor, walk_expr, walk_stmt};
use crate::lir::{Buf, ExprId, ExprKind, Func, LoopKind, Stmt, StmtId, VarId};

#[derive(Default)]
struct Uses {
    /// Each store: its buffer and its first index.
    stores: Vec<(Buf, Option<ExprId>)>,
    loads: Vec<Buf>,
}

impl Visitor for Uses {
    fn visit_expr(&mut self, f: &Func, e: ExprId) {
        if let ExprKind::Load { buf, .. } = &f.exprs[e].kind {
            self.loads.push(*buf);
        }
        walk_expr(self, f, e)
    }
    fn visit_stmt(&mut self, f: &Func, s: StmtId) {
        if let Stmt::Store { buf, index, .. } = &f.stmts[s] {
            self.stores.push((*buf, index.first().copied()));
        }
        walk_stmt(self, f, s)
    }
}

/// True when `e` is `var` (or a cast of it).
fn is_var(f: &Func, e: ExprId, var: VarId) -> bool {
    match f.exprs[e].kind {
        ExprKind::Var(v) => v == var,
        ExprKind::Cast(a) => matches!(f.exprs[a].kind, ExprKind::Var(v) if v == var),
        _ => false,
    }
}

/// Marks the outer loop of every row-parallel region `Parallel`.
pub fn run(func: &mut Func, f: &Function) {
    let Stmt::Block(steps) = func.stmts[func.body].clone() else {
        return;
    };
    for s in steps {
        let Stmt::Region { body, .. } = func.stmts[s] else {
            continue;
        };
        if let Some(kind) = row_parallel(func, f, body) {
            if let Stmt::For { kind: k, .. } = &mut func.stmts[body] {
                *k = kind;
            }
        }
    }
}

fn row_parallel(func: &Func, f: &Function, s: StmtId) -> Option<LoopKind> {
    let Stmt::For { var, step, .. } = func.stmts[s] else {
        return None;
    };
    let _ = step;
    let mut uses = Uses::default();
    uses.visit_stmt(func, s);
    let first = uses.stores.first()?.0;
    let rows = |b: Buf| match b {
        Buf::Matrix(m) => f.matrices[m].dims.first().map(|d| format!("{d:?}")),
        Buf::Temp(_) => None,
    };
    for (b, i) in &uses.stores {
        if uses.loads.contains(b) || rows(*b).is_none() || rows(*b) != rows(first) {
            return None;
        }
        if !i.is_some_and(|i| is_var(func, i, var)) {
            return None;
        }
    }
    Some(LoopKind::Parallel)
}
