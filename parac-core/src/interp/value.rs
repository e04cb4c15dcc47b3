//! Scalar values and the operations on them, with the CPU path's semantics (`codegen/cpu.rs`):
//! Rust `as` conversions (wrapping between integers, saturating from `f32`), wrapping integer
//! arithmetic, truncating `/` and `%`, shifts as `wrapping_shl`/`wrapping_shr` (the amount
//! masked by the left operand's width), `f32` arithmetic for floats.

use crate::ir::{BinOp, Builtin, Scalar, UnOp};

/// A scalar value. Its type is the IR expression's (or the parameter's): an integer is kept
/// wrapped to its type's range, so every integer type fits one `i128`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Val {
    /// Any integer type (`u8` .. `u64`), as its exact value.
    Int(i128),
    /// `f32`.
    F32(f32),
    /// `bool`.
    Bool(bool),
}

/// What went wrong in a scalar operation (the caller names the region).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpError {
    /// An integer division or remainder by zero.
    DivisionByZero,
}

impl Val {
    /// The value as an `i128` (`bool` as 0/1, `f32` truncated and saturated as `as` does).
    pub fn as_i128(self) -> i128 {
        match self {
            Val::Int(v) => v,
            Val::F32(f) => f as i128,
            Val::Bool(b) => b as i128,
        }
    }

    /// The value as `i64`, as Rust's `as i64` converts the typed value.
    pub fn as_i64(self) -> i64 {
        match self {
            Val::Int(v) => v as i64,
            Val::F32(f) => f as i64,
            Val::Bool(b) => b as i64,
        }
    }

    /// The value as an `f64` (exact for every integer up to 2^53 and every `f32`).
    pub fn as_f64(self) -> f64 {
        match self {
            Val::Int(v) => v as f64,
            Val::F32(f) => f as f64,
            Val::Bool(b) => b as i32 as f64,
        }
    }

    /// The value as `bool` (non-zero).
    pub fn truthy(self) -> bool {
        match self {
            Val::Int(v) => v != 0,
            Val::F32(f) => f != 0.0,
            Val::Bool(b) => b,
        }
    }

    /// The `f32` value (integers converted as `as f32` does).
    pub fn as_f32(self) -> f32 {
        match self {
            Val::Int(v) => v as f32,
            Val::F32(f) => f,
            Val::Bool(b) => b as i32 as f32,
        }
    }

    /// Whether the value is a legal value of type `t` (an integer inside its range, a float for
    /// `f32`, a `bool` for `bool`).
    pub fn fits(self, t: Scalar) -> bool {
        match (self, t) {
            (Val::Bool(_), Scalar::Bool) | (Val::F32(_), Scalar::F32) => true,
            (Val::Int(v), t) if t.is_int() => {
                let (lo, hi) = t.range().expect("an integer type");
                lo <= v && v <= hi
            }
            _ => false,
        }
    }
}

impl std::fmt::Display for Val {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Val::Int(v) => write!(f, "{v}"),
            Val::F32(v) => write!(f, "{v:?}"),
            Val::Bool(v) => write!(f, "{v}"),
        }
    }
}

/// Wraps an integer to type `t` (C's and Rust's `as` between integers).
pub(crate) fn wrap(v: i128, t: Scalar) -> i128 {
    match t {
        Scalar::Bool => (v != 0) as i128,
        Scalar::U8 => v as u8 as i128,
        Scalar::I8 => v as i8 as i128,
        Scalar::U16 => v as u16 as i128,
        Scalar::I16 => v as i16 as i128,
        Scalar::U32 => v as u32 as i128,
        Scalar::I32 => v as i32 as i128,
        Scalar::I64 => v as i64 as i128,
        Scalar::U64 => v as u64 as i128,
        Scalar::F32 => v,
    }
}

/// The width of an integer type in bits (`bool`: 8, as Rust stores it; unused for shifts).
pub(crate) fn bits(t: Scalar) -> u32 {
    match t {
        Scalar::Bool | Scalar::U8 | Scalar::I8 => 8,
        Scalar::U16 | Scalar::I16 => 16,
        Scalar::U32 | Scalar::I32 | Scalar::F32 => 32,
        Scalar::I64 | Scalar::U64 => 64,
    }
}

/// An integer result of type `t`: wrapped, or `bool` for `bool`.
fn int_of(v: i128, t: Scalar) -> Val {
    match t {
        Scalar::Bool => Val::Bool(v != 0),
        Scalar::F32 => Val::F32(v as f32),
        t => Val::Int(wrap(v, t)),
    }
}

/// `v as t`: Rust's conversion (the CPU path's `as`; to `bool`, `!= 0`).
pub fn cast(v: Val, t: Scalar) -> Val {
    match (v, t) {
        (v, Scalar::Bool) => Val::Bool(v.truthy()),
        (v, Scalar::F32) => Val::F32(v.as_f32()),
        (Val::Int(i), t) => Val::Int(wrap(i, t)),
        (Val::Bool(b), _) => Val::Int(b as i128),
        (Val::F32(f), t) => {
            // Saturating, NaN to 0, as Rust's `as`.
            let (lo, hi) = t.range().expect("an integer type");
            Val::Int((f as i128).clamp(lo, hi))
        }
    }
}

/// An `f64` (a reduction's wide accumulator) `as t`.
pub fn cast_f64(v: f64, t: Scalar) -> Val {
    match t {
        Scalar::F32 => Val::F32(v as f32),
        Scalar::Bool => Val::Bool(v != 0.0),
        t => {
            let (lo, hi) = t.range().expect("an integer type");
            Val::Int((v as i128).clamp(lo, hi))
        }
    }
}

/// An integer literal of type `t`, as the CPU path prints it (`int_lit`): a float literal goes
/// through `f64`.
pub(crate) fn int_lit(v: i128, t: Scalar) -> Val {
    match t {
        Scalar::F32 => Val::F32(v as f64 as f32),
        Scalar::Bool => Val::Bool(v != 0),
        t => Val::Int(wrap(v, t)),
    }
}

/// A float literal (or a constant matrix's value) of type `t`, as the CPU path prints it
/// (`lit`): `v as T`.
pub(crate) fn float_lit(v: f64, t: Scalar) -> Val {
    cast_f64(v, t)
}

/// A unary operator on a value of type `t`.
pub(crate) fn unary(op: UnOp, x: Val, t: Scalar) -> Val {
    match (op, x) {
        (UnOp::Plus, x) => x,
        (UnOp::Neg, Val::F32(f)) => Val::F32(-f),
        (UnOp::Neg, x) => int_of(x.as_i128().wrapping_neg(), t),
        (UnOp::Not, Val::Bool(b)) => Val::Bool(!b),
        (UnOp::Not, x) => int_of(!x.as_i128(), t),
    }
}

/// Compares two values (`None`: unordered, a NaN).
fn compare(a: Val, b: Val) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => Some(x.cmp(&y)),
        (Val::Bool(x), Val::Bool(y)) => Some(x.cmp(&y)),
        (Val::F32(x), Val::F32(y)) => x.partial_cmp(&y),
        (x, y) => x.as_f64().partial_cmp(&y.as_f64()),
    }
}

/// `a op b` for values of operand type `ot` giving type `t`, as the CPU path's `binary_code`.
/// `&&` and `||` are evaluated here on both values (the caller short-circuits scalars).
pub(crate) fn binary(op: BinOp, a: Val, b: Val, t: Scalar, ot: Scalar) -> Result<Val, OpError> {
    use BinOp::*;
    use std::cmp::Ordering as O;
    let float = t.is_float() || ot.is_float();
    Ok(match op {
        Add | Sub | Mul | ElemMul | Div | Rem if float => {
            let (x, y) = (a.as_f32(), b.as_f32());
            Val::F32(match op {
                Add => x + y,
                Sub => x - y,
                Div => x / y,
                Rem => x % y,
                _ => x * y,
            })
        }
        Add => int_of(a.as_i128().wrapping_add(b.as_i128()), t),
        Sub => int_of(a.as_i128().wrapping_sub(b.as_i128()), t),
        // Both operands are below 2^64 in magnitude: the low 64 bits of the i128 product
        // are exact.
        Mul | ElemMul => int_of(a.as_i128().wrapping_mul(b.as_i128()), t),
        Div | Rem => {
            let (x, y) = (a.as_i128(), b.as_i128());
            if y == 0 {
                return Err(OpError::DivisionByZero);
            }
            // Exact in i128; wrapping back to `t` gives `MIN / -1 == MIN`, `MIN % -1 == 0`.
            int_of(if op == Div { x / y } else { x % y }, t)
        }
        Shl | Shr => {
            // `wrapping_shl((b) as u32)`: the amount masked by the left operand's width.
            let amount = (cast(b, Scalar::U32).as_i128() as u32) & (bits(ot) - 1);
            let x = a.as_i128();
            int_of(if op == Shl { x << amount } else { x >> amount }, t)
        }
        BitAnd | BitOr | BitXor => match (a, b) {
            (Val::Bool(x), Val::Bool(y)) => Val::Bool(match op {
                BitAnd => x & y,
                BitOr => x | y,
                _ => x ^ y,
            }),
            _ => {
                let (x, y) = (a.as_i128(), b.as_i128());
                int_of(
                    match op {
                        BitAnd => x & y,
                        BitOr => x | y,
                        _ => x ^ y,
                    },
                    t,
                )
            }
        },
        Eq => Val::Bool(compare(a, b) == Some(O::Equal)),
        Ne => Val::Bool(compare(a, b) != Some(O::Equal)),
        Lt => Val::Bool(compare(a, b) == Some(O::Less)),
        Le => Val::Bool(matches!(compare(a, b), Some(O::Less | O::Equal))),
        Gt => Val::Bool(compare(a, b) == Some(O::Greater)),
        Ge => Val::Bool(matches!(compare(a, b), Some(O::Greater | O::Equal))),
        And => Val::Bool(a.truthy() && b.truthy()),
        Or => Val::Bool(a.truthy() || b.truthy()),
    })
}

/// `Ord::min`/`f32::min` on values of type `t`.
pub(crate) fn min(a: Val, b: Val, t: Scalar) -> Val {
    if t.is_float() {
        Val::F32(f32::min(a.as_f32(), b.as_f32()))
    } else if compare(b, a) == Some(std::cmp::Ordering::Less) {
        b
    } else {
        a
    }
}

/// `Ord::max`/`f32::max` on values of type `t`.
pub(crate) fn max(a: Val, b: Val, t: Scalar) -> Val {
    if t.is_float() {
        Val::F32(f32::max(a.as_f32(), b.as_f32()))
    } else if compare(b, a) == Some(std::cmp::Ordering::Less) {
        a
    } else {
        b
    }
}

/// A built-in function of result type `t` (`clamp` is `min(max(x, lo), hi)`, an integer
/// `abs` wraps and keeps its type).
pub(crate) fn call(b: Builtin, xs: &[Val], t: Scalar) -> Val {
    let float = t.is_float();
    match b {
        Builtin::Min => min(xs[0], xs[1], t),
        Builtin::Max => max(xs[0], xs[1], t),
        Builtin::Clamp => min(max(xs[0], xs[1], t), xs[2], t),
        Builtin::Abs if !float => int_of(xs[0].as_i128().wrapping_abs(), t),
        Builtin::Mul24 => int_of(xs[0].as_i128().wrapping_mul(xs[1].as_i128()), t),
        Builtin::NonZero => xs[0],
        Builtin::CacheBytes => int_of(i128::from(crate::ir::CACHE_BYTES), t),
        // The compiler's rows per task (`lir::pass::fuse::guarded`'s fourth argument).
        Builtin::Fuses => xs.get(3).copied().unwrap_or(Val::Int(1)),
        b => {
            let x = xs[0].as_f32();
            Val::F32(match b {
                Builtin::Abs => x.abs(),
                Builtin::Sqrt => x.sqrt(),
                Builtin::Exp => x.exp(),
                Builtin::Floor => x.floor(),
                Builtin::Ceil => x.ceil(),
                _ => x.round(),
            })
        }
    }
}

/// `a op b` of an [`crate::ir::UpdateOp`] on integers of type `t` (wrapping), as every back
/// end combines an update with its element.
pub(crate) fn update(op: crate::ir::UpdateOp, a: Val, b: Val, t: Scalar) -> Val {
    use crate::ir::UpdateOp as U;
    let (x, y) = (a.as_i128(), b.as_i128());
    int_of(
        match op {
            U::Add => x.wrapping_add(y),
            U::Sub => x.wrapping_sub(y),
            U::Or => x | y,
            U::And => x & y,
            U::Xor => x ^ y,
            U::Min => x.min(y),
            U::Max => x.max(y),
        },
        t,
    )
}

/// `a op b` of a reduction's operator at type `t` (a sum or a mean's sum wraps; `min`/`max` as
/// [`min`] and [`max`]): a window's taps, a prefix's points.
pub(crate) fn combine(op: crate::ir::ReduceOp, a: Val, b: Val, t: Scalar) -> Val {
    use crate::ir::ReduceOp as R;
    match op {
        R::Min => min(a, b, t),
        R::Max => max(a, b, t),
        // An addition never fails (only a division does).
        R::Sum | R::Mean => binary(BinOp::Add, a, b, t, t).unwrap_or(a),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_semantics() {
        let i32t = Scalar::I32;
        let min = Val::Int(i32::MIN as i128);
        assert_eq!(binary(BinOp::Div, min, Val::Int(-1), i32t, i32t), Ok(min));
        assert_eq!(
            binary(BinOp::Rem, min, Val::Int(-1), i32t, i32t),
            Ok(Val::Int(0))
        );
        assert_eq!(
            binary(BinOp::Div, Val::Int(-7), Val::Int(2), i32t, i32t),
            Ok(Val::Int(-3))
        );
        assert_eq!(
            binary(BinOp::Div, Val::Int(1), Val::Int(0), i32t, i32t),
            Err(OpError::DivisionByZero)
        );
        assert_eq!(
            binary(BinOp::Shr, Val::Int(-5), Val::Int(1), i32t, i32t),
            Ok(Val::Int(-3))
        );
        assert_eq!(
            binary(BinOp::Shl, Val::Int(1), Val::Int(33), i32t, i32t),
            Ok(Val::Int(2))
        );
        assert_eq!(
            binary(
                BinOp::Add,
                Val::Int(i32::MAX as i128),
                Val::Int(1),
                i32t,
                i32t
            ),
            Ok(min)
        );
        let u64max = Val::Int(u64::MAX as i128);
        assert_eq!(
            binary(BinOp::Mul, u64max, u64max, Scalar::U64, Scalar::U64),
            Ok(Val::Int(1))
        );
        assert_eq!(cast(Val::F32(300.5), Scalar::U8), Val::Int(255));
        assert_eq!(cast(Val::F32(-3.7), Scalar::I32), Val::Int(-3));
        assert_eq!(cast(Val::F32(f32::NAN), Scalar::I32), Val::Int(0));
        assert_eq!(cast(Val::Int(-1), Scalar::U8), Val::Int(255));
        assert_eq!(call(Builtin::Abs, &[min], i32t), min);
        assert_eq!(
            call(
                Builtin::Clamp,
                &[Val::Int(5), Val::Int(7), Val::Int(3)],
                i32t
            ),
            Val::Int(3)
        );
        assert_eq!(unary(UnOp::Not, Val::Int(0), Scalar::U8), Val::Int(255));
        assert_eq!(int_lit(-1, Scalar::U32), Val::Int(u32::MAX as i128));
        assert_eq!(float_lit(2.9, Scalar::I32), Val::Int(2));
    }
}
