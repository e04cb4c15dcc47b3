//! Exact evaluation of IR expressions on concrete sizes and index values, with C semantics.
//! The checks use it to find concrete witnesses (an element two iterations write, an access
//! outside the image) instead of guessing from symbolic forms.

use crate::ir::*;

/// A concrete value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    /// Any integer (computed in i64, wrapped to its type).
    I(i64),
    /// A float.
    F(f64),
}

impl Val {
    /// The value as an integer index, if it is one.
    pub fn int(self) -> Option<i64> {
        match self {
            Val::I(v) => Some(v),
            Val::F(_) => None,
        }
    }
}

/// What is known while evaluating.
#[derive(Clone, Debug, Default)]
pub struct Env {
    /// Size symbols.
    pub sizes: Vec<i64>,
    /// Host scalars (`None`: unknown at compile time).
    pub hosts: Vec<Option<Val>>,
    /// Index variables by slot.
    pub vars: Vec<Option<i64>>,
    /// Kernel locals.
    pub locals: Vec<Option<Val>>,
}

/// Wraps an integer to a type, as a C conversion does: the interpreter's wrap
/// ([`interp`](crate::interp)), in `i64` (`u64` keeps its bits, as `i64`; `f32` leaves `v`
/// as it is).
pub fn wrap(v: i64, t: Scalar) -> i64 {
    crate::interp::wrap(i128::from(v), t) as i64
}

fn conv(v: Val, t: Scalar) -> Val {
    match (v, t) {
        (Val::I(i), Scalar::F32) => Val::F(i as f64),
        (Val::F(f), Scalar::F32) => Val::F(f),
        (Val::F(f), t) => Val::I(wrap(f as i64, t)),
        (Val::I(i), t) => Val::I(wrap(i, t)),
    }
}

/// Evaluates a scalar expression; `None` when it depends on data or unknown host values.
pub fn eval(e: &Expr, env: &Env) -> Option<Val> {
    let t = e.ty.elem();
    let v = match &e.kind {
        ExprKind::Int(v) => Val::I(i64::try_from(*v).ok()?),
        ExprKind::Float(f) => Val::F(*f),
        ExprKind::Size(i) => Val::I(*env.sizes.get(*i)?),
        ExprKind::Host(i) => (*env.hosts.get(*i)?)?,
        ExprKind::Var(s) => Val::I((*env.vars.get(*s)?)?),
        ExprKind::Local(l) => (*env.locals.get(*l)?)?,
        ExprKind::Cast(a, t) => conv(eval(a, env)?, *t),
        ExprKind::Unary(op, a) => match (op, eval(a, env)?) {
            (UnOp::Neg, Val::I(v)) => Val::I(wrap(v.wrapping_neg(), t)),
            (UnOp::Neg, Val::F(v)) => Val::F(-v),
            (UnOp::Plus, v) => v,
            (UnOp::Not, Val::I(v)) if t == Scalar::Bool => Val::I((v == 0) as i64),
            (UnOp::Not, Val::I(v)) => Val::I(wrap(!v, t)),
            (UnOp::Not, Val::F(_)) => return None,
        },
        ExprKind::Binary(op, a, b) => {
            let (x, y) = (eval(a, env)?, eval(b, env)?);
            binary(*op, x, y, t)?
        }
        ExprKind::Call(b, args) => {
            let vals: Option<Vec<Val>> = args.iter().map(|a| eval(a, env)).collect();
            call(*b, &vals?, t)?
        }
        _ => return None,
    };
    Some(v)
}

fn binary(op: BinOp, x: Val, y: Val, t: Scalar) -> Option<Val> {
    use BinOp::*;
    Some(match (x, y) {
        (Val::I(a), Val::I(b)) => {
            let unsigned = matches!(t, Scalar::U32 | Scalar::U64);
            let r = match op {
                Add => a.wrapping_add(b),
                Sub => a.wrapping_sub(b),
                Mul | ElemMul => a.wrapping_mul(b),
                Div if b == 0 => return None,
                Div if unsigned => ((a as u64) / (b as u64)) as i64,
                Div => a.wrapping_div(b),
                Rem if b == 0 => return None,
                Rem if unsigned => ((a as u64) % (b as u64)) as i64,
                Rem => a.wrapping_rem(b),
                Shl => a.wrapping_shl(b as u32),
                Shr if unsigned => ((a as u64) >> (b as u32 & 63)) as i64,
                Shr => a.wrapping_shr(b as u32),
                BitAnd => a & b,
                BitOr => a | b,
                BitXor => a ^ b,
                Eq => (a == b) as i64,
                Ne => (a != b) as i64,
                Lt => (a < b) as i64,
                Le => (a <= b) as i64,
                Gt => (a > b) as i64,
                Ge => (a >= b) as i64,
                And => (a != 0 && b != 0) as i64,
                Or => (a != 0 || b != 0) as i64,
            };
            Val::I(wrap(r, t))
        }
        (x, y) => {
            let f = |v: Val| match v {
                Val::I(i) => i as f64,
                Val::F(f) => f,
            };
            let (a, b) = (f(x), f(y));
            match op {
                Add => Val::F(a + b),
                Sub => Val::F(a - b),
                Mul | ElemMul => Val::F(a * b),
                Div => Val::F(a / b),
                Eq => Val::I((a == b) as i64),
                Ne => Val::I((a != b) as i64),
                Lt => Val::I((a < b) as i64),
                Le => Val::I((a <= b) as i64),
                Gt => Val::I((a > b) as i64),
                Ge => Val::I((a >= b) as i64),
                _ => return None,
            }
        }
    })
}

fn call(b: Builtin, v: &[Val], t: Scalar) -> Option<Val> {
    let ints: Option<Vec<i64>> = v.iter().map(|x| x.int()).collect();
    if let (Some(i), false) = (ints, t.is_float()) {
        return Some(Val::I(match b {
            Builtin::Min => i[0].min(i[1]),
            Builtin::Max => i[0].max(i[1]),
            Builtin::Clamp => i[0].max(i[1]).min(i[2]),
            // Unsigned (`u32`, `u64`: a `u64` above `i64::MAX` is held negative): the value.
            Builtin::Abs if t.range().is_some_and(|r| r.0 == 0) => wrap(i[0], t),
            Builtin::Abs => wrap(i[0].wrapping_abs(), t),
            Builtin::Mul24 => wrap(i[0].wrapping_mul(i[1]), t),
            Builtin::NonZero => i[0],
            Builtin::CacheBytes => crate::ir::CACHE_BYTES,
            _ => return None,
        }));
    }
    let f: Vec<f64> = v
        .iter()
        .map(|x| match x {
            Val::I(i) => *i as f64,
            Val::F(f) => *f,
        })
        .collect();
    Some(Val::F(match b {
        Builtin::Min => f[0].min(f[1]),
        Builtin::Max => f[0].max(f[1]),
        Builtin::Clamp => f[0].max(f[1]).min(f[2]),
        Builtin::Abs => f[0].abs(),
        Builtin::Sqrt => f[0].sqrt(),
        Builtin::Exp => f[0].exp(),
        Builtin::Floor => f[0].floor(),
        Builtin::Ceil => f[0].ceil(),
        Builtin::Round => f[0].round(),
        Builtin::Mul24 | Builtin::CacheBytes | Builtin::Fuses => return None,
        Builtin::NonZero => f[0],
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_semantics() {
        assert_eq!(
            binary(BinOp::Div, Val::I(-7), Val::I(2), Scalar::I32),
            Some(Val::I(-3))
        );
        assert_eq!(
            binary(BinOp::Shr, Val::I(-7), Val::I(1), Scalar::I32),
            Some(Val::I(-4))
        );
        assert_eq!(conv(Val::I(300), Scalar::U8), Val::I(44));
        assert_eq!(conv(Val::F(-1.7), Scalar::I32), Val::I(-1));
        assert_eq!(binary(BinOp::Div, Val::I(1), Val::I(0), Scalar::I32), None);
    }
}
