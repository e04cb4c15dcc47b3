//! One load for a `select` of loads: `select(c, m[a0, a1], m[b0, b1])` becomes
//! `m[select(c, a0, b0), select(c, a1, b1)]` (an index the two arms share stays as it is), the
//! same through a conversion of both arms to one type. A bordered read's chain of the rules'
//! entries, where every entry reads the matrix itself (clamp, reflect, wrap), becomes one load
//! at a selected index, with no branch: the index map the OpenCL kernels' border helpers made
//! by hand before the LIR printed them. Semantics are kept: the condition is evaluated, then
//! only the taken arm's indices (an index `select` evaluates one arm), then one load, checked
//! where either arm's was.

use crate::ir::Scalar;
use std::collections::HashMap;

use crate::lir::canon::Canon;
use crate::lir::visit::{Mutator, mutate_body, rebuild_expr};
use crate::lir::{Buf, ExprId, ExprKind, Func};

/// Merges the selects of loads of `func`, innermost first.
pub fn run(func: &mut Func) {
    mutate_body(&mut Merge::default(), func);
}

/// The mutator: the structural identity of the indices it compares, and each node's
/// replacement once (a node shared by several parents is merged once).
#[derive(Default)]
struct Merge {
    canon: Canon,
    done: HashMap<ExprId, ExprId>,
}

impl Mutator for Merge {
    fn mutate_expr(&mut self, func: &mut Func, e: ExprId) -> ExprId {
        if let Some(r) = self.done.get(&e) {
            return *r;
        }
        let r = rebuild_expr(self, func, e);
        let r = merge(func, &mut self.canon, r).unwrap_or(r);
        self.done.insert(e, r);
        r
    }
}

/// A load, possibly converted: the conversion's type, the buffer, the indices, `checked`.
type Read = (Option<Scalar>, Buf, Vec<ExprId>, bool);

fn read(func: &Func, e: ExprId) -> Option<Read> {
    let x = &func.exprs[e];
    if x.lanes != 1 {
        return None;
    }
    match &x.kind {
        ExprKind::Load {
            buf,
            index,
            checked,
        } => Some((None, *buf, index.clone(), *checked)),
        ExprKind::Cast(a) => {
            let (None, buf, index, checked) = read(func, *a)? else {
                return None;
            };
            Some((Some(x.ty), buf, index, checked))
        }
        _ => None,
    }
}

fn merge(func: &mut Func, canon: &mut Canon, e: ExprId) -> Option<ExprId> {
    let ExprKind::Select(c, a, b) = func.exprs[e].kind else {
        return None;
    };
    let (ta, ba, ia, ca) = read(func, a)?;
    let (tb, bb, ib, cb) = read(func, b)?;
    if ta != tb || ba != bb || ia.len() != ib.len() {
        return None;
    }
    let index: Vec<ExprId> = ia
        .iter()
        .zip(&ib)
        .map(|(x, y)| {
            if canon.same(func, *x, *y) {
                *x
            } else {
                let t = func.exprs[*x].ty;
                func.expr(ExprKind::Select(c, *x, *y), t)
            }
        })
        .collect();
    let elem = match ta {
        Some(_) => {
            let ExprKind::Cast(l) = func.exprs[a].kind else {
                return None;
            };
            func.exprs[l].ty
        }
        None => func.exprs[a].ty,
    };
    let load = func.expr(
        ExprKind::Load {
            buf: ba,
            index,
            checked: ca || cb,
        },
        elem,
    );
    Some(match ta {
        Some(t) => func.cast(load, t),
        None => load,
    })
}
