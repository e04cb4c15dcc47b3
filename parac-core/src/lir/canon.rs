//! Structural identity of expressions: two expressions get the same canonical handle when they
//! have the same kind, type, lanes and exactness, and children of the same canonical handles.
//! Each node is keyed once (by its own fields and its children's canonical handles), so
//! comparing deep shared expressions (a bordered read's chain of rule entries, whose arms share
//! their index arithmetic) costs their number of nodes once, not their size as trees at every
//! comparison (printing them to text to compare them did: minutes for a 7x7 reflect-101
//! window).
//!
//! The handles stay valid while the nodes already keyed are not changed in place (passes only
//! push new nodes); make one per walk.

use std::collections::HashMap;

use super::visit::{expr_children, with_children};
use super::{ExprId, Func};

/// Canonical handles of the expressions seen so far.
#[derive(Default)]
pub struct Canon {
    of: HashMap<ExprId, ExprId>,
    by_key: HashMap<String, ExprId>,
}

impl Canon {
    /// An empty table.
    pub fn new() -> Canon {
        Canon::default()
    }

    /// The canonical handle of `e`: the first node seen with its structure.
    pub fn of(&mut self, func: &Func, e: ExprId) -> ExprId {
        if let Some(c) = self.of.get(&e) {
            return *c;
        }
        let x = &func.exprs[e];
        let children: Vec<ExprId> = expr_children(&x.kind)
            .into_iter()
            .map(|k| self.of(func, k))
            .collect();
        let x = &func.exprs[e];
        let key = format!(
            "{:?}|{:?}|{}|{}",
            with_children(&x.kind, &children),
            x.ty,
            x.lanes,
            x.exact
        );
        let c = *self.by_key.entry(key).or_insert(e);
        self.of.insert(e, c);
        c
    }

    /// Whether `a` and `b` are the same expression.
    pub fn same(&mut self, func: &Func, a: ExprId, b: ExprId) -> bool {
        a == b || self.of(func, a) == self.of(func, b)
    }
}
