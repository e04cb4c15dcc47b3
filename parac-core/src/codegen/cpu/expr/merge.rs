//! Merging and counting: equal nodes share a representative (hash-consing), and each
//! representative's fallibility, free variables, matrices read and uses are found once.

use super::{Exprs, leaf};
use crate::ir::BinOp;
use crate::lir::visit::expr_children;
use crate::lir::{Buf, ExprId, ExprKind, Func, VarId};
use std::collections::HashMap;

impl<'a> Exprs<'a> {
    /// Merges the expressions of `func` and counts the uses of those below `roots`.
    pub fn new(func: &'a Func, roots: impl Iterator<Item = ExprId>) -> Self {
        let n = func.exprs.len();
        let mut canon = vec![0; n];
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut fallible = vec![false; n];
        let mut free: Vec<Vec<VarId>> = vec![Vec::new(); n];
        let mut reads: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (h, x) in func.exprs.iter() {
            let kids: Vec<usize> = expr_children(&x.kind)
                .iter()
                .map(|c| canon[c.index()])
                .collect();
            let key = match &x.kind {
                k if leaf(k) => format!("{k:?}"),
                ExprKind::Load { buf, checked, .. } => format!("L{buf:?}{checked}"),
                ExprKind::Outside { matrix, .. } => format!("X{matrix}"),
                ExprKind::Ramp { stride, .. } => format!("R{stride}"),
                ExprKind::Broadcast(_) => "B".into(),
                ExprKind::Unary(op, _) => format!("U{op:?}"),
                ExprKind::Binary(op, ..) => format!("O{op:?}"),
                ExprKind::Cast(_) => "C".into(),
                ExprKind::Call(b, _) => format!("F{b:?}"),
                ExprKind::Select(..) => "S".into(),
                ExprKind::Let(v, ..) => format!("T{v:?}"),
                ExprKind::Fold { op, vars, .. } => format!("R{op:?}{vars:?}"),
                _ => unreachable!("leaves are handled above"),
            };
            let key = format!("{key}:{:?}:{}:{kids:?}", x.ty, x.lanes);
            let c = *seen.entry(key).or_insert(h.index());
            canon[h.index()] = c;
            let own = match &x.kind {
                ExprKind::Load { checked, .. } => *checked,
                ExprKind::Outside { .. } => true,
                // A division by a constant other than 0 cannot fail.
                ExprKind::Binary(BinOp::Div | BinOp::Rem, _, d) => {
                    !x.ty.is_float() && !matches!(func.exprs[*d].kind, ExprKind::Int(v) if v != 0)
                }
                _ => false,
            };
            fallible[c] = own || kids.iter().any(|k| fallible[*k]);
            if c == h.index() {
                let mut fv: Vec<VarId> = Vec::new();
                let mut rd: Vec<usize> = Vec::new();
                for k in &kids {
                    fv.extend(free[*k].iter().copied());
                    rd.extend(reads[*k].iter().copied());
                }
                match &x.kind {
                    ExprKind::Var(v) => fv.push(*v),
                    ExprKind::Let(v, a, _) => {
                        let a = canon[a.index()];
                        // The body's `v` is bound here: free only if the value uses it.
                        fv.retain(|w| w != v || free[a].contains(v));
                    }
                    // A fold's variables are bound in its tap alone.
                    ExprKind::Fold { vars, .. } => fv.retain(|w| !vars.contains(w)),
                    ExprKind::Load {
                        buf: Buf::Matrix(m),
                        ..
                    } => rd.push(*m),
                    ExprKind::Load {
                        buf: Buf::Temp(_), ..
                    } => rd.push(super::TEMP),
                    _ => {}
                }
                fv.sort_by_key(|v| v.index());
                fv.dedup();
                rd.sort_unstable();
                rd.dedup();
                free[c] = fv;
                reads[c] = rd;
            }
        }
        let mut uses = vec![0u32; n];
        let handles: Vec<ExprId> = func.exprs.iter().map(|(h, _)| h).collect();
        let mut stack: Vec<usize> = roots.map(|r| canon[r.index()]).collect();
        while let Some(c) = stack.pop() {
            uses[c] += 1;
            if uses[c] == 1 {
                for k in expr_children(&func.exprs[handles[c]].kind) {
                    stack.push(canon[k.index()]);
                }
            }
        }
        Exprs {
            func,
            canon,
            uses,
            fallible,
            memo: vec![HashMap::new()],
            epoch: 0,
            memo_epoch: vec![0],
            planes: vec![],
            task_row: None,
            written: vec![],
            free,
            reads,
            defs: None,
            outlined: HashMap::new(),
            params: vec![],
            temps: 0,
            hoisted: HashMap::new(),
            fast_div: HashMap::new(),
            gathered: HashMap::new(),
        }
    }
}
