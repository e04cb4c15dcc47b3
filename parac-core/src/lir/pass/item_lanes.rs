//! Several iteration points per work-item (a schedule's `Lanes { cols, rows }`: `h<W>`,
//! `v<V>`): after [`super::gpu`], a region's innermost work-item loop steps `cols` points at a
//! time and the one around it `rows` rows at a time; a work-item's body is its points written
//! out, each point's indices bound by `let`s in a block of its own.
//!
//! Where every point is in range and every assumption of the interior holds at the work-item's
//! first point (`super::partition::point_interior`: the points' `let`s are inlined, so the
//! facts of every point are about that one point), the points run the interior body; otherwise
//! each point in range runs the checked body, as one work-item of the baseline would.

use super::gpu::nest;
use super::partition::point_interior;
use crate::ir::{BinOp, Scalar};
use crate::lir::visit::{BodyCopy, expr_children, with_children};
use crate::lir::{ExprId, ExprKind, Func, Stmt, StmtId, VarId};
use std::collections::HashMap;

/// Gives every region's work-items `cols` x `rows` points; with `partition` off, every point
/// runs the checked body (no interior).
pub fn run(func: &mut Func, cols: u32, rows: u32, partition: bool) {
    for s in func.regions() {
        if let Stmt::Region { body, .. } = func.stmts[s] {
            region(func, body, cols.max(1), rows.max(1), partition);
        }
    }
}

/// A loop of the nest: its statement, the new index of its first point, its points.
struct Lane {
    stmt: StmtId,
    var: VarId,
    first: VarId,
    lo: ExprId,
    hi: ExprId,
    step: i64,
    count: u32,
}

fn region(func: &mut Func, body: StmtId, cols: u32, rows: u32, partition: bool) {
    let loops = nest(func, body);
    let n = loops.len();
    // A nest of one point (a region run in order by one work-item, `gpu::in_order`) has no
    // lanes to share out.
    let one = |s: &StmtId| match func.stmts[*s] {
        Stmt::For { lo, hi, .. } => {
            matches!(func.exprs[lo].kind, ExprKind::Int(0))
                && matches!(func.exprs[hi].kind, ExprKind::Int(1))
        }
        _ => false,
    };
    // Nor does one whose points run loops of their own holding temporaries (a prefix's running
    // values along a row, `lir::lower`'s prefix.rs): its points share them no longer.
    let own = |s: &StmtId| match func.stmts[*s] {
        Stmt::For { body, .. } => allocates(func, body),
        _ => false,
    };
    if n == 0 || cols * rows == 1 || loops.iter().all(one) || loops.last().is_some_and(own) {
        return;
    }
    let mut lanes = Vec::new();
    for (k, count) in [(n - 1, cols), (n.wrapping_sub(2), rows)] {
        let Some(&stmt) = loops.get(k) else {
            continue;
        };
        let Stmt::For {
            var, lo, hi, step, ..
        } = func.stmts[stmt]
        else {
            return;
        };
        let name = format!("{}_first", func.vars[var].name);
        let first = func.var(&name, func.vars[var].ty);
        lanes.push(Lane {
            stmt,
            var,
            first,
            lo,
            hi,
            step,
            count,
        });
    }
    let Stmt::For { body: core, .. } = func.stmts[loops[n - 1]] else {
        return;
    };
    let (i32t, i64t, b) = (Scalar::I32, Scalar::I64, Scalar::Bool);
    // Every combination of the points (`c[i]` the point of `lanes[i]`).
    let mut combos: Vec<Vec<u32>> = vec![vec![]];
    for l in &lanes {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                (0..l.count).map(move |k| {
                    let mut c = c.clone();
                    c.push(k);
                    c
                })
            })
            .collect();
    }
    let mut fast = Vec::new();
    let mut slow = Vec::new();
    for c in &combos {
        // The point's copy of the body, every variable bound in it its own (the interior
        // inlines `let`s by variable: a variable bound once per point keeps them apart).
        let mut rename = Rename {
            func: &mut *func,
            map: HashMap::new(),
            memo: HashMap::new(),
        };
        let mut point_vars = Vec::new();
        for l in &lanes {
            point_vars.push(rename.bind(l.var));
        }
        let core = rename.copy(core);
        let mut lets = Vec::new();
        let mut in_range: Option<ExprId> = None;
        for ((l, k), var) in lanes.iter().zip(c).zip(point_vars) {
            let first = func.expr(ExprKind::Var(l.first), i32t);
            let at = match *k as i128 * l.step as i128 {
                0 => first,
                off => {
                    let off = func.int(off, i32t);
                    func.binary(BinOp::Add, first, off, i32t)
                }
            };
            lets.push(func.stmt(Stmt::Let(var, at)));
            let v = func.expr(ExprKind::Var(var), i32t);
            let inside = func.binary(BinOp::Lt, v, l.hi, b);
            in_range = Some(match in_range {
                Some(r) => func.binary(BinOp::And, r, inside, b),
                None => inside,
            });
        }
        let mut f = lets.clone();
        f.push(core);
        fast.push(func.stmt(Stmt::Block(f)));
        let mut s = lets;
        let guarded = func.stmt(Stmt::If(in_range.expect("a lane"), core, None));
        s.push(guarded);
        slow.push(func.stmt(Stmt::Block(s)));
    }
    let fast = func.stmt(Stmt::Block(fast));
    let slow = func.stmt(Stmt::Block(slow));
    // Every point in range: the last one of each loop below its end (in `i64`: no wrapping).
    let mut all: Option<ExprId> = None;
    for l in &lanes {
        let first = func.expr(ExprKind::Var(l.first), i32t);
        let first = func.cast(first, i64t);
        let off = func.int((l.count as i128 - 1) * l.step as i128, i64t);
        let last = func.binary(BinOp::Add, first, off, i64t);
        let hi = func.cast(l.hi, i64t);
        let c = func.binary(BinOp::Lt, last, hi, b);
        all = Some(match all {
            Some(a) => func.binary(BinOp::And, a, c, b),
            None => c,
        });
    }
    let inner_first = lanes[0].first;
    let interior = if partition {
        point_interior(func, inner_first, fast)
    } else {
        None
    };
    let new_core = match interior {
        Some((interior, test, _)) => {
            let mut cond = all.expect("a lane");
            if let Some(t) = test {
                cond = func.binary(BinOp::And, cond, t, b);
            }
            func.stmt(Stmt::If(cond, interior, Some(slow)))
        }
        None => slow,
    };
    // The loops step over first points; the innermost's body is the points.
    for (k, l) in lanes.iter().enumerate() {
        let Stmt::For { kind, body, .. } = func.stmts[l.stmt] else {
            return;
        };
        func.stmts[l.stmt] = Stmt::For {
            var: l.first,
            lo: l.lo,
            hi: l.hi,
            step: l.step * l.count as i64,
            kind,
            body: if k == 0 { new_core } else { body },
        };
    }
}

/// A copy of a body with every variable it binds (and the point's indices) made new.
struct Rename<'a> {
    func: &'a mut Func,
    map: HashMap<VarId, VarId>,
    memo: HashMap<ExprId, ExprId>,
}

impl BodyCopy for Rename<'_> {
    fn func(&mut self) -> &mut Func {
        self.func
    }

    fn bind(&mut self, v: VarId) -> VarId {
        let (name, ty) = (self.func.vars[v].name.clone(), self.func.vars[v].ty);
        let w = self.func.var(&name, ty);
        self.map.insert(v, w);
        w
    }

    fn expr(&mut self, e: ExprId) -> ExprId {
        if let Some(n) = self.memo.get(&e) {
            return *n;
        }
        let x = self.func.exprs[e].clone();
        let n = match x.kind {
            ExprKind::Var(v) => match self.map.get(&v) {
                Some(w) => self.func.expr(ExprKind::Var(*w), x.ty),
                None => e,
            },
            ExprKind::Let(v, a, body) => {
                let a = self.expr(a);
                let w = self.bind(v);
                let body = self.expr(body);
                self.func.expr(ExprKind::Let(w, a, body), x.ty)
            }
            kind => {
                let kids = expr_children(&kind);
                let new: Vec<ExprId> = kids.iter().map(|c| self.expr(*c)).collect();
                if new == kids {
                    e
                } else {
                    let node = crate::lir::Expr {
                        kind: with_children(&kind, &new),
                        ..x
                    };
                    self.func.exprs.push(node)
                }
            }
        };
        self.memo.insert(e, n);
        n
    }
}

/// Whether a statement below `s` allocates a buffer.
fn allocates(func: &Func, s: StmtId) -> bool {
    matches!(func.stmts[s], Stmt::Allocate { .. })
        || crate::lir::visit::stmt_parts(&func.stmts[s])
            .1
            .iter()
            .any(|c| allocates(func, *c))
}
