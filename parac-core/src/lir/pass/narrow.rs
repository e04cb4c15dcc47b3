//! Integer arithmetic in 16 bits where ranges prove it, as Halide narrows image arithmetic: in
//! the CPU path's vectorized interiors (`LoopKind::Vectorized(0)`, made by
//! [`super::partition`]), an `int` expression of `+ - *`, negations, divisions by constants,
//! right shifts by constants, `abs`, `min`, `max`, `clamp` and `select`s over pixels of 8 or 16
//! bits (widened loads), constants and `let`-bound values, whose value and every one of whose
//! operands' values fit `short` ([`crate::lir::range`], `let`s' ranges carried in order), is
//! computed in `short` and widened once. Every operation then gives the same value (none
//! leaves `short`'s range, so none wraps where `int` would not), and the loop's vectors hold
//! twice the lanes: a 5-tap filter of `u8` pixels (laplacian's `h` and `down`) or a Sobel
//! magnitude (sharpen's `edge`) no longer in `int`.

use crate::ir::{BinOp, Builtin, Scalar, UnOp};
use crate::lir::range::{Vars, range_in};
use crate::lir::visit::{Mutator, rebuild_expr, rebuild_stmt, stmt_parts};
use crate::lir::{ExprId, ExprKind, Func, LoopKind, Stmt, StmtId, VarId};
use std::collections::HashMap;

/// Narrows the arithmetic of every vectorized interior of `func`.
pub fn run(func: &mut Func) {
    let mut interiors = Vec::new();
    find(func, func.body, &mut interiors);
    for s in interiors {
        let Stmt::For { body, .. } = func.stmts[s] else {
            continue;
        };
        let mut n = Narrow {
            vars: Vars::new(),
            short_of: HashMap::new(),
        };
        let body = n.mutate_stmt(func, body);
        if let Stmt::For { body: b, .. } = &mut func.stmts[s] {
            *b = body;
        }
    }
}

fn find(func: &Func, s: StmtId, out: &mut Vec<StmtId>) {
    if let Stmt::For {
        kind: LoopKind::Vectorized(0),
        ..
    } = func.stmts[s]
    {
        out.push(s);
        return;
    }
    for c in stmt_parts(&func.stmts[s]).1 {
        find(func, c, out);
    }
}

/// Whether a range is within `short`'s.
fn fits(r: Option<(i128, i128)>) -> bool {
    r.is_some_and(|(lo, hi)| lo >= i128::from(i16::MIN) && hi <= i128::from(i16::MAX))
}

struct Narrow {
    /// The ranges of the `let`s bound so far.
    vars: Vars,
    /// `int` variables bound to a narrowed value: their `short` twin.
    short_of: HashMap<VarId, VarId>,
}

impl Mutator for Narrow {
    fn mutate_stmt(&mut self, func: &mut Func, s: StmtId) -> StmtId {
        match func.stmts[s].clone() {
            Stmt::Block(b) => {
                let mut out = Vec::new();
                for c in b {
                    match func.stmts[c] {
                        Stmt::Let(v, e) => out.extend(self.bind(func, v, e)),
                        _ => out.push(self.mutate_stmt(func, c)),
                    }
                }
                func.stmt(Stmt::Block(out))
            }
            Stmt::Let(v, e) => {
                let b = self.bind(func, v, e);
                func.stmt(Stmt::Block(b))
            }
            _ => rebuild_stmt(self, func, s),
        }
    }

    fn mutate_expr(&mut self, func: &mut Func, e: ExprId) -> ExprId {
        self.expr(func, e)
    }
}

impl Narrow {
    /// `let v = e`, narrowed where it can be: `let v' = e in short; let v = int(v')`.
    fn bind(&mut self, func: &mut Func, v: VarId, e: ExprId) -> Vec<StmtId> {
        let r = range_in(func, e, &self.vars);
        if let Some(r) = r {
            self.vars.insert(v, r);
        }
        if func.vars[v].ty == Scalar::I32
            && worth(func, e)
            && let Some(n) = self.short(func, e)
        {
            let name = format!("{}_s", func.vars[v].name);
            let w = func.var(&name, Scalar::I16);
            self.short_of.insert(v, w);
            let we = func.expr(ExprKind::Var(w), Scalar::I16);
            let wide = func.cast(we, Scalar::I32);
            return vec![func.stmt(Stmt::Let(w, n)), func.stmt(Stmt::Let(v, wide))];
        }
        let e = self.expr(func, e);
        vec![func.stmt(Stmt::Let(v, e))]
    }

    /// `e` with its largest narrowable `int` sub-expressions computed in `short`.
    fn expr(&mut self, func: &mut Func, e: ExprId) -> ExprId {
        if func.exprs[e].ty == Scalar::I32
            && func.exprs[e].lanes == 1
            && worth(func, e)
            && let Some(n) = self.short(func, e)
        {
            return func.cast(n, Scalar::I32);
        }
        match func.exprs[e].kind {
            // A `let` in an expression: its body is left as it is (its variable's range is
            // not tracked here).
            ExprKind::Let(..)
            | ExprKind::Load { .. }
            | ExprKind::Outside { .. }
            | ExprKind::Fold { .. } => e,
            _ => rebuild_expr(self, func, e),
        }
    }

    /// `e` (an integer of at most 32 bits whose value fits `short`) computed in `short`, or
    /// `None` where some operation could not be.
    fn short(&mut self, func: &mut Func, e: ExprId) -> Option<ExprId> {
        let x = func.exprs[e].clone();
        if x.lanes != 1
            || !x.ty.is_int()
            || x.ty.bytes() > 4
            || !fits(range_in(func, e, &self.vars))
        {
            return None;
        }
        let s = Scalar::I16;
        let int = |func: &Func, a: ExprId| match func.exprs[a].kind {
            ExprKind::Int(k) => Some(k),
            _ => None,
        };
        Some(match x.kind {
            ExprKind::Int(k) => func.int(k, s),
            ExprKind::Var(v) => match self.short_of.get(&v) {
                Some(w) => func.expr(ExprKind::Var(*w), s),
                None => func.cast(e, s),
            },
            // A conversion that keeps its operand's value (a widened pixel): the operand.
            ExprKind::Cast(a) if keeps(func, a, x.ty, &self.vars) => match func.exprs[a].ty {
                Scalar::I16 => a,
                t if t.bytes() <= 2 && t.is_int() => func.cast(a, s),
                Scalar::I32 | Scalar::U32 => self.short(func, a)?,
                _ => return None,
            },
            ExprKind::Load { .. } if x.ty.bytes() <= 2 => func.cast(e, s),
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
                let (a, b) = (self.short(func, a)?, self.short(func, b)?);
                func.binary(op, a, b, s)
            }
            ExprKind::Binary(op @ (BinOp::Div | BinOp::Shr), a, b)
                if match (op, int(func, b)) {
                    (BinOp::Div, Some(d)) => d != 0 && d != -1,
                    (BinOp::Shr, Some(k)) => (0..16).contains(&k),
                    _ => false,
                } =>
            {
                let (a, b) = (self.short(func, a)?, self.short(func, b)?);
                func.binary(op, a, b, s)
            }
            ExprKind::Unary(op @ (UnOp::Neg | UnOp::Plus), a) => {
                let a = self.short(func, a)?;
                func.expr(ExprKind::Unary(op, a), s)
            }
            ExprKind::Call(
                f @ (Builtin::Abs | Builtin::Min | Builtin::Max | Builtin::Clamp),
                args,
            ) => {
                let args = args
                    .iter()
                    .map(|a| self.short(func, *a))
                    .collect::<Option<Vec<_>>>()?;
                func.expr(ExprKind::Call(f, args), s)
            }
            ExprKind::Select(c, a, b) => {
                let (a, b) = (self.short(func, a)?, self.short(func, b)?);
                func.expr(ExprKind::Select(c, a, b), s)
            }
            _ => return None,
        })
    }
}

/// Whether converting integer `a` to `t` keeps its value (every value `a` can take is one of
/// `t`'s).
fn keeps(func: &Func, a: ExprId, t: Scalar, vars: &Vars) -> bool {
    let (Some((lo, hi)), Some((tlo, thi))) = (range_in(func, a, vars), t.range()) else {
        return false;
    };
    func.exprs[a].ty.is_int() && tlo <= lo && hi <= thi
}

/// Whether `e` holds an operation to narrow (not a lone pixel, constant or variable).
fn worth(func: &Func, e: ExprId) -> bool {
    matches!(
        func.exprs[e].kind,
        ExprKind::Binary(..) | ExprKind::Unary(..) | ExprKind::Call(..) | ExprKind::Select(..)
    )
}
