//! Constant evaluation of syntax-level expressions: steps, window lengths, initializers.

use crate::syntax::ast::{BinOp, Expr, ExprKind, UnOp};

/// Evaluates an integer constant expression (literals and arithmetic); `None` if it is not one
/// or overflows.
pub fn const_int(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int(v, _) => i64::try_from(*v).ok(),
        ExprKind::Unary(UnOp::Neg, a) => const_int(a)?.checked_neg(),
        ExprKind::Unary(UnOp::Plus, a) => const_int(a),
        ExprKind::Tuple(v) if v.len() == 1 => const_int(&v[0]),
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (const_int(a)?, const_int(b)?);
            match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                BinOp::Div => a.checked_div(b),
                BinOp::Rem => a.checked_rem(b),
                BinOp::Shl => u32::try_from(b)
                    .ok()
                    .filter(|s| *s < 63)
                    .and_then(|s| a.checked_shl(s)),
                BinOp::Shr => u32::try_from(b).ok().filter(|s| *s < 63).map(|s| a >> s),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Evaluates a numeric constant expression in `f64` (literals, arithmetic, `sqrt`, `exp`);
/// integer division truncates as in C when both sides are integers.
pub fn const_num(e: &Expr) -> Option<(f64, bool)> {
    // (value, is_float)
    match &e.kind {
        ExprKind::Int(v, _) => Some((*v as f64, false)),
        ExprKind::Float(v, _) => Some((*v, true)),
        ExprKind::Unary(UnOp::Neg, a) => const_num(a).map(|(v, f)| (-v, f)),
        ExprKind::Unary(UnOp::Plus, a) => const_num(a),
        ExprKind::Cast(a, t) => {
            let (v, _) = const_num(a)?;
            if t.name == "f32" {
                Some((v, true))
            } else {
                Some((v.trunc(), false))
            }
        }
        ExprKind::Call(name, args) if args.len() == 1 => {
            let (v, _) = const_num(&args[0])?;
            let r = match name.to_string().as_str() {
                "sqrt" => v.sqrt(),
                "exp" => v.exp(),
                "floor" => v.floor(),
                "ceil" => v.ceil(),
                "round" => v.round(),
                "abs" => return Some((v.abs(), const_num(&args[0])?.1)),
                _ => return None,
            };
            Some((r, true))
        }
        ExprKind::Binary(op, a, b) => {
            let (x, fa) = const_num(a)?;
            let (y, fb) = const_num(b)?;
            let float = fa || fb;
            let v = match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x * y,
                BinOp::Div if float => x / y,
                BinOp::Div if y != 0.0 => (x / y).trunc(),
                BinOp::Shl | BinOp::Shr if !float => {
                    let (a, b) = (x as i64, y as i64);
                    let b = u32::try_from(b).ok().filter(|b| *b < 63)?;
                    if *op == BinOp::Shl {
                        a.checked_shl(b)? as f64
                    } else {
                        (a >> b) as f64
                    }
                }
                _ => return None,
            };
            v.is_finite().then_some((v, float))
        }
        _ => None,
    }
}
