//! Constant folding: integer arithmetic and casts of constants (wrapped at their type, as C
//! does), `x + 0`, `x * 1`, `(x ± c1) ± c2` as `x ± c` (wrapping sums are associative),
//! `select` on a constant, reads of a constant matrix at constant indices (a constant
//! filter's taps become literals once windows are written out), dimensions the program declares
//! constant, and the uses of a variable bound to a constant (a lane's constant index).

use crate::ir::{BinOp, Builtin, Function, MatrixKind, Scalar};
use crate::lir::canon::Canon;
use crate::lir::visit::{Mutator, mutate_body, rebuild_expr, rebuild_stmt};
use crate::lir::{Buf, ExprId, ExprKind, Func, Stmt, StmtId, VarId};
use std::collections::HashMap;

/// `v` wrapped to the integer type `t` (C's conversion; `bool`: `v != 0`).
fn wrap(v: i128, t: Scalar) -> i128 {
    crate::interp::cast(crate::interp::Val::Int(v), t).as_i128()
}

/// The truth value of integer or boolean `x` (C's: nonzero is true) as a value of type `t`: `x`
/// itself where it has that type, else `x != 0` (cast to `t` where `t` is an integer).
fn truth_as(func: &mut Func, x: ExprId, t: Scalar) -> ExprId {
    let tx = func.exprs[x].ty;
    if tx == t {
        return x;
    }
    let test = if tx == Scalar::Bool {
        x
    } else {
        let zero = func.int(0, tx);
        func.binary(BinOp::Ne, x, zero, Scalar::Bool)
    };
    if t == Scalar::Bool {
        test
    } else {
        func.cast(test, t)
    }
}

/// `(x ± c1) ± c2` (integers of one type, `c1`, `c2` constants) as `x + c` or `x - c`, or `x`;
/// any other expression as it is.
pub(crate) fn reassociate(func: &mut Func, e: ExprId) -> ExprId {
    let t = func.exprs[e].ty;
    let signed = |func: &Func, x: ExprId| -> Option<(ExprId, i128)> {
        let ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) = func.exprs[x].kind else {
            return None;
        };
        let c = Simplify::int(func, b).filter(|_| func.exprs[b].ty == t)?;
        Some((a, if op == BinOp::Add { c } else { -c }))
    };
    let Some((inner, c2)) = signed(func, e) else {
        return e;
    };
    let Some((x, c1)) = signed(func, inner).filter(|(x, _)| func.exprs[*x].ty == t) else {
        return e;
    };
    let c = wrap(c1 + c2, t);
    if c == 0 {
        return x;
    }
    let k = func.int(c, t);
    func.binary(BinOp::Add, x, k, t)
}

struct Simplify<'a> {
    f: &'a Function,
    /// Structural identity, for comparisons of an expression with itself.
    canon: Canon,
    /// Only the tests ([`logic`]).
    logic_only: bool,
    /// The variables bound to an integer constant so far (a lane's or a window's constant
    /// index), with their values: their uses are that constant. A binding to anything else
    /// removes the variable (a copied body may bind it again).
    consts: HashMap<VarId, i128>,
    /// Each expression's result while `consts` is unchanged: a DAG stays a DAG.
    memo: HashMap<ExprId, ExprId>,
}

/// Folds the constants of `func` (`f`: its HAST, for the constant matrices' values), integer
/// comparisons of constants included; also the comparisons of an integer expression that cannot
/// fail with itself (`x <= x`: true), and `&&`/`||` with a constant operand (C compilers warn
/// about both forms, which random and careless programs write).
pub fn run(func: &mut Func, f: &Function) {
    mutate_body(
        &mut Simplify {
            f,
            canon: Canon::default(),
            logic_only: false,
            consts: HashMap::new(),
            memo: HashMap::new(),
        },
        func,
    );
}

/// The tests alone, after the passes that add some (loop partitioning's guard of a constant
/// index): casts and `+ - *` of constants, comparisons of constants, constant dimensions and
/// `&&`/`||` with a constant operand, on scalars; nothing else is rewritten.
pub fn logic(func: &mut Func, f: &Function) {
    mutate_body(
        &mut Simplify {
            f,
            canon: Canon::default(),
            logic_only: true,
            consts: HashMap::new(),
            memo: HashMap::new(),
        },
        func,
    );
}

impl Simplify<'_> {
    fn int(func: &Func, e: ExprId) -> Option<i128> {
        Self::konst(func, e).filter(|_| func.exprs[e].ty.is_int())
    }

    /// An integer or boolean constant's value.
    fn konst(func: &Func, e: ExprId) -> Option<i128> {
        match func.exprs[e].kind {
            ExprKind::Int(v) if func.exprs[e].ty.is_int() || func.exprs[e].ty == Scalar::Bool => {
                Some(v)
            }
            _ => None,
        }
    }

    /// The value of constant matrix `m` at constant indices, as an expression of its type.
    fn const_read(&self, func: &mut Func, m: usize, index: &[ExprId]) -> Option<ExprId> {
        let mat = &self.f.matrices[m];
        let MatrixKind::Const(values) = &mat.kind else {
            return None;
        };
        let mut lin: i128 = 0;
        for (d, i) in mat.dims.iter().zip(index) {
            let crate::ir::ExprKind::Int(d) = d.kind else {
                return None;
            };
            let i = Self::int(func, *i)?;
            if i < 0 || i >= d {
                return None;
            }
            lin = lin * d + i;
        }
        let v = *values.get(usize::try_from(lin).ok()?)?;
        // The value as the interpreter reads a constant (`as`, saturating).
        Some(match crate::interp::cast_f64(v, mat.elem) {
            crate::interp::Val::F32(x) => func.expr(ExprKind::Float(x as f64), mat.elem),
            x => func.int(x.as_i128(), mat.elem),
        })
    }
}

impl Simplify<'_> {
    /// Records `v = x` where `x` is a scalar integer constant, else forgets `v`.
    fn bind(&mut self, func: &Func, v: VarId, x: ExprId) {
        let c = Self::int(func, x).filter(|_| func.exprs[x].lanes == 1);
        let old = match c {
            Some(c) => self.consts.insert(v, c),
            None => self.consts.remove(&v),
        };
        if old != c {
            self.memo.clear();
        }
    }
}

impl Mutator for Simplify<'_> {
    fn mutate_stmt(&mut self, func: &mut Func, s: StmtId) -> StmtId {
        if let Stmt::For { var, .. } = func.stmts[s] {
            self.consts.remove(&var);
        }
        let s = rebuild_stmt(self, func, s);
        if let Stmt::Let(v, x) = func.stmts[s] {
            self.bind(func, v, x);
        }
        s
    }

    fn mutate_expr(&mut self, func: &mut Func, e: ExprId) -> ExprId {
        if let Some(&r) = self.memo.get(&e) {
            return r;
        }
        let r = self.fold(func, e);
        self.memo.insert(e, r);
        r
    }
}

impl Simplify<'_> {
    /// `e` simplified (its children first).
    fn fold(&mut self, func: &mut Func, e: ExprId) -> ExprId {
        // A `let` binds its variable before its body is simplified.
        if let ExprKind::Let(v, a, body) = func.exprs[e].kind {
            let a2 = self.mutate_expr(func, a);
            self.bind(func, v, a2);
            let body2 = self.mutate_expr(func, body);
            if (a2, body2) == (a, body) {
                return e;
            }
            let node = crate::lir::Expr {
                kind: ExprKind::Let(v, a2, body2),
                ..func.exprs[e].clone()
            };
            return func.exprs.push(node);
        }
        if let ExprKind::Var(v) = func.exprs[e].kind
            && let Some(&c) = self.consts.get(&v)
            && func.exprs[e].lanes == 1
        {
            let t = func.exprs[e].ty;
            return func.int(wrap(c, t), t);
        }
        let e = rebuild_expr(self, func, e);
        let t = func.exprs[e].ty;
        let int = |x: ExprId| Self::int(func, x);
        let same = |x: ExprId| func.exprs[x].ty == t;
        match func.exprs[e].kind.clone() {
            ExprKind::Cast(a)
                if (t.is_int() || t == Scalar::Bool)
                    && !(self.logic_only && func.exprs[e].lanes != 1) =>
            {
                match int(a) {
                    Some(v) => func.int(wrap(v, t), t),
                    // A value widened, then cast back to its own type: the value (an index
                    // `i32(i64(x - 1))` of an inlined producer's point, `fuse::inline`).
                    None if func.exprs[e].lanes == 1 => match func.widening(a) {
                        Some(b) if func.exprs[b].ty == t => b,
                        _ => e,
                    },
                    None => e,
                }
            }
            ExprKind::Binary(op, a, b)
                if t.is_int()
                    && same(a)
                    && same(b)
                    && !(self.logic_only && func.exprs[e].lanes != 1) =>
            {
                match (op, int(a), int(b)) {
                    (BinOp::Add, Some(x), Some(y)) => func.int(wrap(x.wrapping_add(y), t), t),
                    (BinOp::Sub, Some(x), Some(y)) => func.int(wrap(x.wrapping_sub(y), t), t),
                    (BinOp::Mul, Some(x), Some(y)) => func.int(wrap(x.wrapping_mul(y), t), t),
                    // The tests alone: constants folded, nothing reassociated.
                    _ if self.logic_only => e,
                    (BinOp::Add, Some(0), _) | (BinOp::Mul, Some(1), _) => b,
                    (BinOp::Add | BinOp::Sub, _, Some(0)) | (BinOp::Mul, _, Some(1)) => a,
                    (BinOp::Add | BinOp::Sub, _, Some(_)) => reassociate(func, e),
                    _ => e,
                }
            }
            ExprKind::Binary(op, a, b)
                if t == Scalar::Bool
                    && func.exprs[e].lanes == 1
                    && func.exprs[a].ty == func.exprs[b].ty
                    && int(a).is_some()
                    && int(b).is_some() =>
            {
                let (x, y) = (int(a).unwrap_or(0), int(b).unwrap_or(0));
                let holds = match op {
                    BinOp::Eq => Some(x == y),
                    BinOp::Ne => Some(x != y),
                    BinOp::Lt => Some(x < y),
                    BinOp::Le => Some(x <= y),
                    BinOp::Gt => Some(x > y),
                    BinOp::Ge => Some(x >= y),
                    _ => None,
                };
                holds.map_or(e, |h| func.int(h as i128, Scalar::Bool))
            }
            ExprKind::Binary(op, a, b)
                if t == Scalar::Bool
                    && func.exprs[e].lanes == 1
                    && matches!(
                        op,
                        BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
                    )
                    && func.exprs[a].ty.is_int()
                    && self.canon.same(func, a, b)
                    && crate::lir::total(func, a, &|_| true) =>
            {
                let holds = matches!(op, BinOp::Eq | BinOp::Le | BinOp::Ge);
                func.int(holds as i128, Scalar::Bool)
            }
            // A constant operand of `&&`/`||` (which C compilers warn about): `1 && x`,
            // `x && 1`, `0 || x`, `x || 0` are `x`; `0 && x` and `1 || x` are the constant
            // (C does not evaluate `x`); `x && 0` and `x || 1` the constant once `x` is
            // evaluated (a `select` of `x` where it may fail).
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b)
                if func.exprs[e].lanes == 1
                    && [t, func.exprs[a].ty, func.exprs[b].ty]
                        .iter()
                        .all(|t| t.is_int() || *t == Scalar::Bool)
                    && (Self::konst(func, a).is_some() || Self::konst(func, b).is_some()) =>
            {
                let neutral = i128::from(op == BinOp::And);
                let truth = |v: i128| i128::from(v != 0);
                let (ka, kb) = (Self::konst(func, a), Self::konst(func, b));
                match (ka.map(truth), kb.map(truth)) {
                    (Some(v), _) if v == neutral => truth_as(func, b, t),
                    (_, Some(v)) if v == neutral => truth_as(func, a, t),
                    (Some(v), _) => func.int(v, t),
                    (None, Some(v)) if crate::lir::total(func, a, &|_| true) => func.int(v, t),
                    (None, Some(v)) => {
                        let k = func.int(v, t);
                        func.expr(ExprKind::Select(a, k, k), t)
                    }
                    (None, None) => e,
                }
            }
            ExprKind::Select(c, a, b) => match func.exprs[c].kind {
                ExprKind::Int(v) if func.exprs[c].ty == Scalar::Bool => {
                    if v != 0 {
                        a
                    } else {
                        b
                    }
                }
                _ => e,
            },
            // A dimension the program declares constant (the printers write it as its literal).
            ExprKind::Dim(m, k) => match self.f.matrices[m].dims.get(k).map(|d| &d.kind) {
                Some(crate::ir::ExprKind::Int(d)) if t.is_int() => func.int(wrap(*d, t), t),
                _ => e,
            },
            ExprKind::Load {
                buf: Buf::Matrix(m),
                index,
                ..
            } if !self.logic_only => self.const_read(func, m, &index).unwrap_or(e),
            ExprKind::Call(op @ (Builtin::Min | Builtin::Max), args)
                if !self.logic_only && func.exprs[e].lanes == 1 && args.len() == 2 =>
            {
                narrow_extremum(func, op, (args[0], args[1])).unwrap_or(e)
            }
            _ => e,
        }
    }
}

/// `x` before its widening to `t`: the operand of a cast to `t` that keeps every value of its
/// own integer type, seen through `let`s (a bordered read's index bindings).
fn widened(func: &mut Func, x: ExprId, t: Scalar) -> Option<ExprId> {
    match func.exprs[x].kind {
        ExprKind::Cast(_) if func.exprs[x].ty == t => func.widening(x),
        ExprKind::Let(v, value, body) => {
            let inner = widened(func, body, t)?;
            let s = func.exprs[inner].ty;
            Some(func.expr(ExprKind::Let(v, value, inner), s))
        }
        _ => None,
    }
}

/// `min`/`max` of two widened values of one narrower integer type (or of one and a constant
/// of that type) as the widening of their `min`/`max` in that type: widening keeps order, so
/// the value is the same, and a window's extremum of `u8` pixels (`parac_matrix_min`, as
/// `sharpen`'s overshoot control) runs in bytes, four times the vector lanes of `int`.
fn narrow_extremum(func: &mut Func, op: Builtin, (a, b): (ExprId, ExprId)) -> Option<ExprId> {
    let t = func.exprs[a].ty;
    if func.exprs[b].ty != t {
        return None;
    }
    let (wa, wb) = (widened(func, a, t), widened(func, b, t));
    let s = func.exprs[wa.or(wb)?].ty;
    let within = |func: &mut Func, w: Option<ExprId>, x: ExprId| -> Option<ExprId> {
        if let Some(y) = w.filter(|y| func.exprs[*y].ty == s) {
            return Some(y);
        }
        let c = Simplify::int(func, x)?;
        let (lo, hi) = s.range()?;
        (lo <= c && c <= hi).then(|| func.int(c, s))
    };
    let (x, y) = (within(func, wa, a)?, within(func, wb, b)?);
    let m = func.expr(ExprKind::Call(op, vec![x, y]), s);
    Some(func.cast(m, t))
}
