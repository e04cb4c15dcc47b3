//! C's operators and built-ins on values of the LIR's types, as Rust: wrapping integer
//! arithmetic, a zero divisor's `Error::DivisionByZero`, `min`/`max`/`clamp`, `abs` as C has it.

use crate::ir::{BinOp, Builtin, Scalar};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// `op` on two values of type `t` (operands of type `ot`), as C computes it.
pub(super) fn binary(
    op: BinOp,
    a: TokenStream,
    b: TokenStream,
    t: Scalar,
    ot: Scalar,
) -> TokenStream {
    use BinOp::*;
    let float = t.is_float() || ot.is_float();
    match op {
        Add if float => quote!((#a + #b)),
        Sub if float => quote!((#a - #b)),
        Mul | ElemMul if float => quote!((#a * #b)),
        Div if float => quote!((#a / #b)),
        Add => quote!(#a.wrapping_add(#b)),
        Sub => quote!(#a.wrapping_sub(#b)),
        Mul | ElemMul => quote!(#a.wrapping_mul(#b)),
        Div | Rem => {
            let f = if op == Div {
                quote!(wrapping_div)
            } else {
                quote!(wrapping_rem)
            };
            quote!({
                let __y = #b;
                if __y == 0 {
                    return ::core::result::Result::Err(
                        ::parac::__private::cpu::division_by_zero(__fname, __rname));
                }
                #a.#f(__y)
            })
        }
        Shl => quote!(#a.wrapping_shl(#b as u32)),
        Shr => quote!(#a.wrapping_shr(#b as u32)),
        BitAnd => quote!((#a & #b)),
        BitOr => quote!((#a | #b)),
        BitXor => quote!((#a ^ #b)),
        Eq => quote!((#a == #b)),
        Ne => quote!((#a != #b)),
        Lt => quote!((#a < #b)),
        Le => quote!((#a <= #b)),
        Gt => quote!((#a > #b)),
        Ge => quote!((#a >= #b)),
        And => quote!((#a && #b)),
        Or => quote!((#a || #b)),
    }
}

/// A built-in function of type `t`.
pub(super) fn call(b: Builtin, xs: &[TokenStream], t: Scalar) -> TokenStream {
    let float = t.is_float();
    match (b, float) {
        (Builtin::Min, false) => quote!(::core::cmp::Ord::min(#(#xs),*)),
        (Builtin::Max, false) => quote!(::core::cmp::Ord::max(#(#xs),*)),
        (Builtin::Min, true) => quote!(f32::min(#(#xs),*)),
        (Builtin::Max, true) => quote!(f32::max(#(#xs),*)),
        (Builtin::Clamp, _) => {
            let (x, lo, hi) = (&xs[0], &xs[1], &xs[2]);
            if float {
                quote!(f32::min(f32::max(#x, #lo), #hi))
            } else {
                quote!(::core::cmp::Ord::min(::core::cmp::Ord::max(#x, #lo), #hi))
            }
        }
        // `abs` of an unsigned type is the value itself, as in C and the interpreter.
        (Builtin::Abs, false) if t.range().is_some_and(|r| r.0 == 0) => xs[0].clone(),
        (Builtin::Abs, false) => {
            let x = &xs[0];
            quote!(#x.wrapping_abs())
        }
        (Builtin::Abs, true) => {
            let x = &xs[0];
            quote!(f32::abs(#x))
        }
        (Builtin::NonZero, _) => xs[0].clone(),
        (Builtin::CacheBytes, _) => quote!(::parac::__private::cpu::cache_bytes()),
        // Printed with its stages' names by `Exprs::expr` (here: the compiler's rows).
        (Builtin::Fuses, _) => xs.get(3).cloned().unwrap_or(quote!(1i64)),
        (Builtin::Mul24, _) => {
            let (a, b) = (&xs[0], &xs[1]);
            quote!(#a.wrapping_mul(#b))
        }
        (b, _) => {
            let x = &xs[0];
            let m = format_ident!("{}", b.name());
            quote!(f32::#m(#x))
        }
    }
}
