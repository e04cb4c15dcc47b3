//! Static value ranges of integer LIR expressions: what every evaluation can give, from the
//! element types of the loads and the constants (`None`: no bound known). A back end uses it to
//! pick an exact, cheaper instruction (the CPU back end divides in `f32` where the dividend is
//! below 2^24 in magnitude).

use super::{ExprId, ExprKind, Func};
use crate::ir::{BinOp, Builtin};

/// The values `e` can take, as `(min, max)`.
pub fn range(func: &Func, e: ExprId) -> Option<(i128, i128)> {
    let x = &func.exprs[e];
    let own = x.ty.range();
    let r = match &x.kind {
        ExprKind::Int(v) => (*v, *v),
        ExprKind::Load { .. } => own?,
        ExprKind::Cast(a) => {
            let (lo, hi) = range(func, *a)?;
            let (tlo, thi) = own?;
            if lo < tlo || hi > thi {
                return own;
            }
            (lo, hi)
        }
        ExprKind::Binary(op, a, b) => {
            let (al, ah) = range(func, *a)?;
            let (bl, bh) = range(func, *b)?;
            let r = match op {
                BinOp::Add => (al + bl, ah + bh),
                BinOp::Sub => (al - bh, ah - bl),
                BinOp::Mul | BinOp::ElemMul => {
                    let ps = [al * bl, al * bh, ah * bl, ah * bh];
                    (*ps.iter().min()?, *ps.iter().max()?)
                }
                _ => return own,
            };
            // Wrapping at the type: only a range inside it is a bound.
            let (tlo, thi) = own?;
            if r.0 < tlo || r.1 > thi {
                return own;
            }
            r
        }
        ExprKind::Call(Builtin::Min, args) if args.len() == 2 => {
            let (a, b) = (range(func, args[0])?, range(func, args[1])?);
            (a.0.min(b.0), a.1.min(b.1))
        }
        ExprKind::Call(Builtin::Max, args) if args.len() == 2 => {
            let (a, b) = (range(func, args[0])?, range(func, args[1])?);
            (a.0.max(b.0), a.1.max(b.1))
        }
        _ => own?,
    };
    Some(r)
}
