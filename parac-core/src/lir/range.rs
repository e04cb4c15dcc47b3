//! Static value ranges of integer LIR expressions: what every evaluation can give, from the
//! element types of the loads, the constants, the sizes and the ranges of the variables bound
//! so far (`None`: no bound known). Passes and back ends use them to pick an exact, cheaper
//! instruction (the CPU back end divides in `f32` where the dividend is below 2^24 in
//! magnitude; [`super::pass::peephole`] shifts, masks and divides unsigned).
//!
//! Ranges are intervals; a result that leaves its type's range (it may wrap) is the type's whole
//! range, which is always sound.

use super::{Buf, ExprId, ExprKind, Func, Memory, Stmt, VarId};
use crate::ir::{BinOp, Builtin, Scalar, UnOp};
use std::collections::HashMap;

/// Known ranges of variables.
pub type Vars = HashMap<VarId, (i128, i128)>;

/// Known ranges of the values buffers hold ([`stored`]).
pub type Stored = HashMap<Buf, (i128, i128)>;

/// The values `e` can take, as `(min, max)`, knowing nothing of variables.
pub fn range(func: &Func, e: ExprId) -> Option<(i128, i128)> {
    range_in(func, e, &Vars::new())
}

/// The values `e` can take, variables in `vars` within their ranges.
pub fn range_in(func: &Func, e: ExprId, vars: &Vars) -> Option<(i128, i128)> {
    range_with(func, e, vars, &Stored::new())
}

/// The values `e` can take, variables in `vars` within their ranges and loads of the buffers in
/// `stored` within theirs (a load of any other buffer: its element type's range).
pub fn range_with(func: &Func, e: ExprId, vars: &Vars, stored: &Stored) -> Option<(i128, i128)> {
    let range_in = |func: &Func, e: ExprId, vars: &Vars| range_with(func, e, vars, stored);
    let x = &func.exprs[e];
    let own = x.ty.range();
    let int = |a: ExprId| match func.exprs[a].kind {
        ExprKind::Int(k) => Some(k),
        _ => None,
    };
    let r = match &x.kind {
        ExprKind::Int(v) => (*v, *v),
        ExprKind::Var(v) => match vars.get(v) {
            Some(r) => *r,
            None => own?,
        },
        ExprKind::Size(_) => (0, i32::MAX as i128),
        ExprKind::Cast(a) => {
            if x.ty == Scalar::Bool {
                return Some((0, 1));
            }
            let (lo, hi) = range_in(func, *a, vars)?;
            let (tlo, thi) = own?;
            if lo < tlo || hi > thi {
                return own;
            }
            (lo, hi)
        }
        ExprKind::Unary(UnOp::Neg, a) => {
            let (lo, hi) = range_in(func, *a, vars)?;
            (-hi, -lo)
        }
        ExprKind::Unary(UnOp::Plus, a) => range_in(func, *a, vars)?,
        ExprKind::Binary(op, a, b) => {
            if matches!(
                op,
                BinOp::Eq
                    | BinOp::Ne
                    | BinOp::Lt
                    | BinOp::Le
                    | BinOp::Gt
                    | BinOp::Ge
                    | BinOp::And
                    | BinOp::Or
            ) {
                return Some((0, 1));
            }
            let (al, ah) = range_in(func, *a, vars)?;
            let (bl, bh) = range_in(func, *b, vars)?;
            let c = int(*b);
            // Bounds past `i128` (products of `u64`s) know nothing: the type's range.
            let checked = |r: Option<(i128, i128)>| r.or(own);
            match op {
                BinOp::Add => checked(add((al, ah), (bl, bh)))?,
                BinOp::Sub => checked(al.checked_sub(bh).zip(ah.checked_sub(bl)))?,
                BinOp::Mul | BinOp::ElemMul => checked(mul((al, ah), (bl, bh)))?,
                BinOp::Div if c.is_some_and(|c| c > 0) => {
                    let c = c.unwrap_or(1);
                    (al / c, ah / c)
                }
                BinOp::Rem if al >= 0 && c.is_some_and(|c| c > 0) => {
                    (0, ah.min(c.unwrap_or(1) - 1))
                }
                BinOp::Shr if c.is_some_and(|c| (0..31).contains(&c)) => {
                    let c = c.unwrap_or(0);
                    (al >> c, ah >> c)
                }
                BinOp::BitAnd if al >= 0 || bl >= 0 => (
                    0,
                    if al >= 0 && bl >= 0 {
                        ah.min(bh)
                    } else {
                        ah.max(bh)
                    },
                ),
                _ => return own,
            }
        }
        ExprKind::Select(_, a, b) => {
            let (a, b) = (range_in(func, *a, vars)?, range_in(func, *b, vars)?);
            (a.0.min(b.0), a.1.max(b.1))
        }
        ExprKind::Call(f, args) => {
            let rs: Option<Vec<(i128, i128)>> =
                args.iter().map(|a| range_in(func, *a, vars)).collect();
            match (f, rs?.as_slice()) {
                (Builtin::Min, [a, b]) => (a.0.min(b.0), a.1.min(b.1)),
                (Builtin::Max, [a, b]) => (a.0.max(b.0), a.1.max(b.1)),
                (Builtin::Clamp, [v, lo, hi]) => {
                    let m = (v.0.max(lo.0), v.1.max(lo.1));
                    (m.0.min(hi.0), m.1.min(hi.1))
                }
                (Builtin::Abs, [v]) if v.0 >= 0 => *v,
                (Builtin::Abs, [v]) => (0, v.1.max(-v.0)),
                (Builtin::Mul24, [a, b]) => mul(*a, *b)?,
                (Builtin::NonZero, [a]) => *a,
                _ => own?,
            }
        }
        ExprKind::Let(_, _, body) => range_in(func, *body, vars)?,
        ExprKind::Load { buf, .. } => match stored.get(buf) {
            Some(r) => *r,
            None => own?,
        },
        _ => own?,
    };
    // Wrapping at the type: only a range inside it is a bound.
    match own {
        Some((tlo, thi)) if r.0 < tlo || r.1 > thi => Some((tlo, thi)),
        _ => Some(r),
    }
}

/// The values each buffer `func` allocates can hold, where every write to it is a store of a
/// value with a known range (for [`range_with`]'s loads): a local
/// matrix's stores (a task's rows of it, `Memory::Rows`, included) and its zeros (an element
/// not yet written; `cpu::local` gives zeros unless every element is written before one is
/// read), a private temporary's stores (the passes read only what they wrote). Nothing for a buffer also written another way (an
/// update, a swap with another matrix, a scan), and nothing for the function's own matrices,
/// whose values come from outside. The stores' values are ranged knowing nothing of other
/// buffers, so the result holds whatever order the stores run in.
pub fn stored(func: &Func) -> Stored {
    stored_in(func, func.body, &Stored::new())
}

/// [`stored`] of the buffers allocated below statement `root`, the stores' values ranged with
/// loads of the buffers in `known` within theirs (a guess of a speculated task's inputs, and
/// what an earlier call found: each call's result holds where its `known` does).
pub(crate) fn stored_in(func: &Func, root: super::StmtId, known: &Stored) -> Stored {
    use super::visit::stmt_parts;
    let range = |func: &Func, e: ExprId| range_with(func, e, &Vars::new(), known);
    let mut allocated = Vec::new();
    let mut other = std::collections::HashSet::new();
    let mut ranges = Stored::new();
    let mut join = |b: Buf, (lo, hi): (i128, i128)| {
        let r = ranges.entry(b).or_insert((lo, hi));
        *r = (r.0.min(lo), r.1.max(hi));
    };
    // What is written to a task's rows of a matrix is written to it.
    let whose = |b: Buf| func.whose(b);
    let mut stmts = vec![root];
    while let Some(s) = stmts.pop() {
        match &func.stmts[s] {
            Stmt::Allocate { buf, memory, .. } => match (buf, memory) {
                (Buf::Matrix(_), _) => {
                    allocated.push(*buf);
                    join(*buf, (0, 0));
                }
                (Buf::Temp(_), Memory::Private) => allocated.push(*buf),
                _ => {}
            },
            Stmt::Store { buf, value, .. } => match range(func, *value) {
                Some(r) => {
                    join(*buf, r);
                    join(whose(*buf), r);
                }
                None => {
                    other.extend([*buf, whose(*buf)]);
                }
            },
            Stmt::Update { buf, .. } => {
                other.extend([*buf, whose(*buf)]);
            }
            Stmt::Swap(a, b) => {
                other.insert(Buf::Matrix(*a));
                other.insert(Buf::Matrix(*b));
            }
            Stmt::ScanTotals {
                carried, totals, ..
            } => {
                let temps = carried.iter().map(|c| c.0).chain(totals.iter().copied());
                other.extend(temps.flat_map(|t| [Buf::Temp(t), whose(Buf::Temp(t))]));
            }
            Stmt::Stage(st) => {
                let b = match st.into {
                    crate::lir::StageInto::Temp { temp, .. } => Buf::Temp(temp),
                    crate::lir::StageInto::Matrix { buf, .. } => Buf::Matrix(buf),
                };
                other.extend([b, whose(b)]);
            }
            Stmt::ScanRow { row, acc, .. } => {
                for t in [*row, *acc] {
                    other.extend([Buf::Temp(t), whose(Buf::Temp(t))]);
                }
            }
            _ => {}
        }
        stmts.extend(stmt_parts(&func.stmts[s]).1);
    }
    allocated
        .into_iter()
        .filter(|b| !other.contains(b))
        .filter_map(|b| Some((b, *ranges.get(&b)?)))
        .collect()
}

/// The range of the sums of values in `a` and `b`; `None` past `i128`.
pub(crate) fn add(a: (i128, i128), b: (i128, i128)) -> Option<(i128, i128)> {
    Some((a.0.checked_add(b.0)?, a.1.checked_add(b.1)?))
}

/// The range of the products of values in `a` and `b`; `None` past `i128` (two `u64`
/// ranges): the caller takes the type's whole range.
pub(crate) fn mul(a: (i128, i128), b: (i128, i128)) -> Option<(i128, i128)> {
    let p = [
        a.0.checked_mul(b.0)?,
        a.0.checked_mul(b.1)?,
        a.1.checked_mul(b.0)?,
        a.1.checked_mul(b.1)?,
    ];
    Some((*p.iter().min()?, *p.iter().max()?))
}

/// The variables bound once in `func` (by one `let` or one loop): a variable bound again (a
/// source variable assigned anew) may hold a later binding's value where it is read, so only
/// these carry a range.
pub fn bound_once(func: &Func) -> std::collections::HashSet<VarId> {
    use super::Stmt;
    use super::visit::{expr_children, stmt_parts};
    // What the body reaches (passes leave replaced nodes in the arenas).
    let mut count: HashMap<VarId, usize> = HashMap::new();
    let mut seen = std::collections::HashSet::new();
    let mut stmts = vec![func.body];
    let mut exprs = Vec::new();
    while let Some(s) = stmts.pop() {
        let stmt = &func.stmts[s];
        if let Stmt::Let(v, _) | Stmt::For { var: v, .. } = stmt {
            *count.entry(*v).or_default() += 1;
        }
        let (es, ss) = stmt_parts(stmt);
        exprs.extend(es);
        stmts.extend(ss);
    }
    while let Some(e) = exprs.pop() {
        if !seen.insert(e) {
            continue;
        }
        let kind = &func.exprs[e].kind;
        if let ExprKind::Let(v, ..) = kind {
            *count.entry(*v).or_default() += 1;
        }
        exprs.extend(expr_children(kind));
    }
    count
        .into_iter()
        .filter(|(_, n)| *n == 1)
        .map(|(v, _)| v)
        .collect()
}
