//! Loop kinds: a region's outermost loop runs in parallel when each of its iterations owns
//! whole rows: every store's indices are constants, then exactly that loop's variable (the
//! first index, or the row of a plane: `out[0][x][y]`), every plane written has the same rows,
//! and nothing the region writes is read in it.

use crate::ir::Function;
use crate::lir::visit::{Visitor, walk_expr, walk_stmt};
use crate::lir::{Buf, ExprId, ExprKind, Func, LoopKind, Stmt, StmtId, VarId};

#[derive(Default)]
struct Uses {
    /// Each store: its buffer and its indices.
    stores: Vec<(Buf, Vec<ExprId>)>,
    /// Each update's buffer.
    updates: Vec<Buf>,
    loads: Vec<Buf>,
    /// The temporaries allocated inside (each iteration's own: a prefix's running values).
    own: Vec<Buf>,
}

impl Visitor for Uses {
    fn visit_expr(&mut self, f: &Func, e: ExprId) {
        if let ExprKind::Load { buf, .. } = &f.exprs[e].kind {
            self.loads.push(*buf);
        }
        walk_expr(self, f, e)
    }
    fn visit_stmt(&mut self, f: &Func, s: StmtId) {
        match &f.stmts[s] {
            Stmt::Store { buf, index, .. } => self.stores.push((*buf, index.clone())),
            Stmt::Update { buf, .. } => self.updates.push(*buf),
            Stmt::Allocate {
                buf: buf @ Buf::Temp(_),
                ..
            } => self.own.push(*buf),
            _ => {}
        }
        walk_stmt(self, f, s)
    }
}

/// True when `e` is `var` (or a cast of it).
pub(crate) fn is_var(f: &Func, e: ExprId, var: VarId) -> bool {
    match f.exprs[e].kind {
        ExprKind::Var(v) => v == var,
        ExprKind::Cast(a) => matches!(f.exprs[a].kind, ExprKind::Var(v) if v == var),
        _ => false,
    }
}

/// Marks the outer loop of every row-parallel region `Parallel`, and with `partials` that of
/// every region whose only writes are integer updates of matrices `Partials`.
pub fn run(func: &mut Func, f: &Function, partials: bool) {
    for s in func.regions() {
        let Stmt::Region { body, .. } = func.stmts[s] else {
            continue;
        };
        // A loop a pass made already (`fuse`'s tasks) keeps its kind.
        let serial = matches!(
            func.stmts[body],
            Stmt::For {
                kind: LoopKind::Serial,
                ..
            }
        );
        let kind = row_parallel(func, f, body)
            .or_else(|| partials.then(|| updates_only(func, body)).flatten());
        if let Some(kind) = kind.filter(|_| serial)
            && let Stmt::For { kind: k, .. } = &mut func.stmts[body]
        {
            *k = kind;
        }
    }
}

/// `Partials` where the loop `s`'s only writes are [`Stmt::Update`]s of matrices (integer ones:
/// the lowering makes no other) and it reads none of them but through its updates.
fn updates_only(func: &Func, s: StmtId) -> Option<LoopKind> {
    let mut uses = Uses::default();
    uses.visit_stmt(func, s);
    let ok = uses.stores.is_empty()
        && !uses.updates.is_empty()
        && uses
            .updates
            .iter()
            .all(|b| matches!(b, Buf::Matrix(_)) && !uses.loads.contains(b));
    ok.then_some(LoopKind::Partials)
}

pub(crate) fn row_parallel(func: &Func, f: &Function, s: StmtId) -> Option<LoopKind> {
    let Stmt::For { var, .. } = func.stmts[s] else {
        return None;
    };
    let mut uses = Uses::default();
    uses.visit_stmt(func, s);
    if !uses.updates.is_empty() {
        return None;
    }
    let mut rows: Option<String> = None;
    for (b, index) in &uses.stores {
        if uses.own.contains(b) {
            continue;
        }
        let Buf::Matrix(m) = b else {
            return None;
        };
        if uses.loads.contains(b) {
            return None;
        }
        let k = plane_rank(func, index, var)?;
        let r = format!("{:?}", f.matrices[*m].dims.get(k)?);
        if rows.get_or_insert_with(|| r.clone()) != &r {
            return None;
        }
    }
    rows.map(|_| LoopKind::Parallel)
}

/// The number of constant indices before `var` in a store's `index` (its plane's rank), where
/// `var` follows them.
pub fn plane_rank(func: &Func, index: &[ExprId], var: VarId) -> Option<usize> {
    let k = index
        .iter()
        .take_while(|i| matches!(func.exprs[**i].kind, ExprKind::Int(_)))
        .count();
    index
        .get(k)
        .is_some_and(|i| is_var(func, *i, var))
        .then_some(k)
}
