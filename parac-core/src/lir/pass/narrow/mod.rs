//! Integer arithmetic in 16 bits where ranges prove it, as Halide narrows image arithmetic: in
//! the CPU path's vectorized interiors (`LoopKind::Vectorized(0)`, made by
//! [`super::partition`]), an `int` expression of `+ - *`, negations, divisions by constants,
//! right shifts by constants, `abs`, `min`, `max`, `clamp` and `select`s over pixels of 8 or 16
//! bits (widened loads), constants and `let`-bound values, whose value and every one of whose
//! operands' values fit 16 bits ([`crate::lir::range`], `let`s' ranges carried in order, and
//! loads of the function's own intermediates ranging over what is stored in them), is
//! computed in `short` or `unsigned short` and widened once. Every operation then gives the same value
//! (each result's value is one of its 16-bit type's, so its bits are that value), and the
//! loop's vectors hold twice the lanes: a 5-tap filter of `u8` pixels (laplacian's `h` and `down`) or a Sobel
//! magnitude (sharpen's `edge`) no longer in `int`. Where a guess of a task's inputs' values
//! lets more narrow (a blur of 12-bit values held in `u16`), `speculate.rs` narrows the task on
//! the guess, checked row by row as it runs, with the task as written where it fails.

mod speculate;

use crate::ir::{BinOp, Builtin, Scalar, UnOp};
use crate::lir::range::{Stored, Vars, range_with};
use crate::lir::visit::{Mutator, rebuild_expr, rebuild_stmt};
use crate::lir::{ExprId, ExprKind, Func, LoopKind, Stmt, StmtId, VarId};
use std::collections::HashMap;

/// Narrows the arithmetic of every vectorized interior of `func`; `speculate`: also of tasks
/// whose inputs' values, guessed and checked when they run, let more of it narrow
/// (`speculate.rs`).
pub fn run(func: &mut Func, speculate: bool) {
    // What the function's own buffers hold (a 16-bit intermediate of 8-bit sums), true while
    // the pass runs: it computes every stored value anew with the same value.
    let stored = crate::lir::range::stored(func);
    if speculate {
        speculate::run(func, &stored);
    }
    let body = func.body;
    func.body = interiors(func, body, &stored).0;
}

/// `s` with every vectorized interior below it narrowed, loads of the buffers in `stored`
/// ranging over their values (a speculated task's guess left as it is), and the number of
/// operations narrowed; `s` itself where none is.
fn interiors(func: &mut Func, s: StmtId, stored: &Stored) -> (StmtId, usize) {
    let mut m = Interiors { stored, ops: 0 };
    let s = m.mutate_stmt(func, s);
    (s, m.ops)
}

struct Interiors<'a> {
    stored: &'a Stored,
    ops: usize,
}

impl Mutator for Interiors<'_> {
    fn mutate_stmt(&mut self, func: &mut Func, s: StmtId) -> StmtId {
        match func.stmts[s].clone() {
            Stmt::For {
                kind: LoopKind::Vectorized(0),
                body,
                ..
            } => {
                let mut n = Narrow {
                    vars: Vars::new(),
                    stored: self.stored,
                    short_of: HashMap::new(),
                    ops: 0,
                };
                let narrowed = n.mutate_stmt(func, body);
                self.ops += n.ops;
                if narrowed == body {
                    return s;
                }
                func.loop_with_body(s, narrowed)
            }
            // Narrowed on its guess already.
            Stmt::Speculate {
                flag,
                body,
                fallback,
            } => {
                let f = self.mutate_stmt(func, fallback);
                if f == fallback {
                    return s;
                }
                func.stmt(Stmt::Speculate {
                    flag,
                    body,
                    fallback: f,
                })
            }
            _ => rebuild_stmt(self, func, s),
        }
    }

    fn mutate_expr(&mut self, _: &mut Func, e: ExprId) -> ExprId {
        e
    }
}

struct Narrow<'a> {
    /// The ranges of the `let`s bound so far.
    vars: Vars,
    /// The ranges of the values the function's own buffers hold.
    stored: &'a Stored,
    /// `int` variables bound to a narrowed value: their `short` twin.
    short_of: HashMap<VarId, VarId>,
    /// The operations narrowed so far.
    ops: usize,
}

impl Mutator for Narrow<'_> {
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

impl Narrow<'_> {
    /// The values `e` can take here.
    fn range(&self, func: &Func, e: ExprId) -> Option<(i128, i128)> {
        range_with(func, e, &self.vars, self.stored)
    }

    /// `let v = e`, narrowed where it can be: `let v' = e in short; let v = int(v')`.
    fn bind(&mut self, func: &mut Func, v: VarId, e: ExprId) -> Vec<StmtId> {
        let r = self.range(func, e);
        if let Some(r) = r {
            self.vars.insert(v, r);
        }
        if func.vars[v].ty == Scalar::I32
            && worth(func, e)
            && let Some(n) = self.short(func, e)
        {
            self.ops += operations(func, e);
            let name = format!("{}_s", func.vars[v].name);
            let t = func.exprs[n].ty;
            let w = func.var(&name, t);
            self.short_of.insert(v, w);
            let we = func.expr(ExprKind::Var(w), t);
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
            self.ops += operations(func, e);
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

    /// `e` (an integer of at most 32 bits whose value fits 16 bits) computed in 16 bits, or
    /// `None` where some operation could not be. The result is `short` where the value fits
    /// it, else `unsigned short` (a value in `0..=65535`, a sum of 8-bit products). `+ - *`
    /// give the same bits in either (they wrap alike), so their operands are converted to the
    /// result's type, a conversion that moves no bit; a division, a shift, a comparison
    /// (`min`, `max`, `clamp`) and `abs` take the signedness their operands' values have.
    fn short(&mut self, func: &mut Func, e: ExprId) -> Option<ExprId> {
        let x = func.exprs[e].clone();
        if x.lanes != 1 || !x.ty.is_int() || x.ty.bytes() > 4 {
            return None;
        }
        let s = ty16(self.range(func, e))?;
        let int = |func: &Func, a: ExprId| match func.exprs[a].kind {
            ExprKind::Int(k) => Some(k),
            _ => None,
        };
        Some(match x.kind {
            ExprKind::Int(k) => func.int(k, s),
            ExprKind::Var(v) => match self.short_of.get(&v) {
                Some(w) => {
                    let t = func.vars[*w].ty;
                    let we = func.expr(ExprKind::Var(*w), t);
                    as16(func, we, s)
                }
                None => func.cast(e, s),
            },
            // A conversion that keeps its operand's value (a widened pixel): the operand.
            ExprKind::Cast(a) if keeps(func, a, x.ty, self.range(func, a)) => {
                match func.exprs[a].ty {
                    t if t.bytes() <= 2 && t.is_int() => as16(func, a, s),
                    Scalar::I32 | Scalar::U32 => {
                        let n = self.short(func, a)?;
                        as16(func, n, s)
                    }
                    _ => return None,
                }
            }
            ExprKind::Load { .. } if x.ty.bytes() <= 2 => func.cast(e, s),
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
                let (a, b) = (self.short(func, a)?, self.short(func, b)?);
                let (a, b) = (as16(func, a, s), as16(func, b, s));
                func.binary(op, a, b, s)
            }
            ExprKind::Binary(op @ (BinOp::Div | BinOp::Shr), a, b) => {
                let d = int(func, b)?;
                // The dividend's signedness: unsigned where it is never negative (a division
                // then needs no correction for a negative dividend: a multiply-high and a
                // shift), else signed (its value then fits `short`).
                let t = match self.range(func, a)? {
                    (lo, _) if lo >= 0 => Scalar::U16,
                    _ => Scalar::I16,
                };
                let ok = match op {
                    BinOp::Div => {
                        (1..=32767).contains(&d) || (t == Scalar::I16 && (-32768..-1).contains(&d))
                    }
                    _ => (0..16).contains(&d),
                };
                if !ok {
                    return None;
                }
                let a = self.short(func, a)?;
                let a = as16(func, a, t);
                let d = func.int(d, t);
                let q = func.binary(op, a, d, t);
                as16(func, q, s)
            }
            ExprKind::Unary(op @ (UnOp::Neg | UnOp::Plus), a) => {
                let a = self.short(func, a)?;
                let a = as16(func, a, s);
                func.expr(ExprKind::Unary(op, a), s)
            }
            ExprKind::Call(
                f @ (Builtin::Abs | Builtin::Min | Builtin::Max | Builtin::Clamp),
                args,
            ) => {
                // Compared as what every argument's value is: all unsigned or all signed.
                let rs = args
                    .iter()
                    .map(|a| self.range(func, *a))
                    .collect::<Option<Vec<_>>>()?;
                let i16r = |r: &(i128, i128)| ty16(Some(*r)) == Some(Scalar::I16);
                let t = if f != Builtin::Abs && rs.iter().all(|r| r.0 >= 0) {
                    Scalar::U16
                } else if rs.iter().all(i16r) && !(f == Builtin::Abs && rs[0].0 <= -32768) {
                    Scalar::I16
                } else {
                    return None;
                };
                let mut out = Vec::new();
                for a in args {
                    let n = self.short(func, a)?;
                    out.push(as16(func, n, t));
                }
                let c = func.expr(ExprKind::Call(f, out), t);
                as16(func, c, s)
            }
            ExprKind::Select(c, a, b) => {
                let (a, b) = (self.short(func, a)?, self.short(func, b)?);
                let (a, b) = (as16(func, a, s), as16(func, b, s));
                func.expr(ExprKind::Select(c, a, b), s)
            }
            _ => return None,
        })
    }
}

/// The 16-bit type a value in range `r` is computed in: `short` where it fits, else `unsigned
/// short` where it fits that.
fn ty16(r: Option<(i128, i128)>) -> Option<Scalar> {
    let (lo, hi) = r?;
    if lo >= i128::from(i16::MIN) && hi <= i128::from(i16::MAX) {
        Some(Scalar::I16)
    } else if lo >= 0 && hi <= i128::from(u16::MAX) {
        Some(Scalar::U16)
    } else {
        None
    }
}

/// `e`, a 16-bit integer, as type `t` (the same bits).
fn as16(func: &mut Func, e: ExprId, t: Scalar) -> ExprId {
    if func.exprs[e].ty == t {
        e
    } else {
        func.cast(e, t)
    }
}

/// Whether converting integer `a`, whose values are in `r`, to `t` keeps its value (every value
/// `a` can take is one of `t`'s).
fn keeps(func: &Func, a: ExprId, t: Scalar, r: Option<(i128, i128)>) -> bool {
    let (Some((lo, hi)), Some((tlo, thi))) = (r, t.range()) else {
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

/// The operations of `e` (what narrowing it computes in 16 bits).
fn operations(func: &Func, e: ExprId) -> usize {
    let mut n = 0;
    crate::lir::visit::preorder(func, e, |x| {
        n += usize::from(worth(func, x));
        true
    });
    n
}
