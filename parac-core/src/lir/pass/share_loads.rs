//! Loads shared by a work-item's points (a schedule's `cse`): in the interior of a work-item
//! (`super::gpu::map_interiors`), every read proven inside (`checked: false`) of a matrix the
//! region does not write, at an index made of values bound before the interior, is done once,
//! as a `let` at the interior's head, and every read of the same element (the same affine
//! form, [`crate::lir::affine`]) uses it. The points of `h<W>` plans over a window read mostly
//! the same elements; the `let`s, in the order of their elements, are what
//! [`super::vector_memory`] merges into vector loads.
//!
//! Sound because a read proven inside is inside at every path of the interior (its facts are
//! tested at the work-item's point, whatever branch reads it), and no store of the region can
//! change what it reads.

use super::gpu::map_interiors;
use crate::ir::MatrixKind;
use crate::lir::affine::{Affine, affine};
use crate::lir::visit::{Mutator, expr_children, rebuild_expr, rebuild_stmt, stmt_parts};
use crate::lir::{Buf, ExprId, ExprKind, Func, Stmt, StmtId, VarId};
use std::collections::{HashMap, HashSet};

/// One index of a shared read: its affine form, or the (interned) expression itself.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(super) enum Ix {
    Form(Affine),
    Expr(ExprId),
}

/// The key of an index: equal keys, equal values.
pub(super) fn ix(func: &Func, e: ExprId) -> Ix {
    affine(func, e).map_or(Ix::Expr(e), Ix::Form)
}

/// Shares the interior reads of every region of `func` (`f` its HAST: constant matrices are
/// not shared, their reads are folded or cheap).
pub fn run(func: &mut Func, f: &crate::ir::Function) {
    map_interiors(func, |func, t| share(func, f, t));
}

/// The variables bound below `s` and the matrices stored to there.
fn bound_and_stored(func: &Func, s: StmtId, vars: &mut HashSet<VarId>, stored: &mut HashSet<Buf>) {
    let stmt = &func.stmts[s];
    match stmt {
        Stmt::Let(v, _) | Stmt::For { var: v, .. } => {
            vars.insert(*v);
        }
        Stmt::Store { buf, .. } => {
            stored.insert(*buf);
        }
        _ => {}
    }
    let (es, ss) = stmt_parts(stmt);
    let mut stack = es;
    while let Some(e) = stack.pop() {
        match &func.exprs[e].kind {
            ExprKind::Let(v, ..) => {
                vars.insert(*v);
            }
            // A fold's taps move with its variables: not shared.
            ExprKind::Fold { vars: fv, .. } => vars.extend(fv.iter().copied()),
            _ => {}
        }
        stack.extend(expr_children(&func.exprs[e].kind));
    }
    for c in ss {
        bound_and_stored(func, c, vars, stored);
    }
}

fn share(func: &mut Func, f: &crate::ir::Function, t: StmtId) -> StmtId {
    let (mut inner, mut stored) = (HashSet::new(), HashSet::new());
    bound_and_stored(func, t, &mut inner, &mut stored);
    // Every shareable read below `t`, in order of first appearance.
    let mut keys: Vec<(Buf, Vec<Ix>)> = Vec::new();
    let mut of: HashMap<ExprId, usize> = HashMap::new();
    let mut stack = vec![t];
    let mut exprs = Vec::new();
    while let Some(s) = stack.pop() {
        let (es, ss) = stmt_parts(&func.stmts[s]);
        exprs.extend(es.into_iter().rev());
        stack.extend(ss.into_iter().rev());
        while let Some(e) = exprs.pop() {
            let x = &func.exprs[e];
            if let ExprKind::Load {
                buf: buf @ Buf::Matrix(m),
                ref index,
                checked: false,
            } = x.kind
                && x.lanes == 1
                && !stored.contains(&buf)
                && !matches!(f.matrices[m].kind, MatrixKind::Const(_))
                && index
                    .iter()
                    .all(|i| crate::lir::total(func, *i, &|v| !inner.contains(&v)))
            {
                let key = (buf, index.iter().map(|i| ix(func, *i)).collect::<Vec<_>>());
                let k = match keys.iter().position(|k| *k == key) {
                    Some(k) => k,
                    None => {
                        keys.push(key);
                        keys.len() - 1
                    }
                };
                of.insert(e, k);
                continue;
            }
            exprs.extend(expr_children(&x.kind).into_iter().rev());
        }
    }
    if keys.is_empty() {
        return t;
    }
    // One `let` per element, at the head of the interior.
    let mut lets = Vec::new();
    let mut vars = Vec::new();
    let mut first: Vec<Option<ExprId>> = vec![None; keys.len()];
    for (e, k) in &of {
        if first[*k].is_none_or(|f| f.index() > e.index()) {
            first[*k] = Some(*e);
        }
    }
    for load in first.into_iter().flatten() {
        let ty = func.exprs[load].ty;
        let v = func.var("c", ty);
        lets.push(func.stmt(Stmt::Let(v, load)));
        vars.push(func.expr(ExprKind::Var(v), ty));
    }
    let mut by = Share {
        to: of.into_iter().map(|(e, k)| (e, vars[k])).collect(),
    };
    let rest = by.mutate_stmt(func, t);
    lets.push(rest);
    func.stmt(Stmt::Block(lets))
}

/// Replaces shared reads by their variables.
struct Share {
    to: HashMap<ExprId, ExprId>,
}

impl Mutator for Share {
    fn mutate_expr(&mut self, f: &mut Func, e: ExprId) -> ExprId {
        match self.to.get(&e) {
            Some(v) => *v,
            None => rebuild_expr(self, f, e),
        }
    }
    fn mutate_stmt(&mut self, f: &mut Func, s: StmtId) -> StmtId {
        rebuild_stmt(self, f, s)
    }
}
