//! The host side of the CPU path, shared by the function's prelude (`codegen::host`) and the
//! printer of the LIR: Rust types and literals, size expressions, the matrices' slices, the
//! global reductions, and host expressions for the host's proofs (`proof.rs`).

use crate::ir::*;
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

/// The Rust type of a scalar.
pub fn rty(s: Scalar) -> TokenStream {
    match s {
        Scalar::Bool => quote!(bool),
        Scalar::U8 => quote!(u8),
        Scalar::I8 => quote!(i8),
        Scalar::U16 => quote!(u16),
        Scalar::I16 => quote!(i16),
        Scalar::U32 => quote!(u32),
        Scalar::I32 => quote!(i32),
        Scalar::I64 => quote!(i64),
        Scalar::U64 => quote!(u64),
        Scalar::F32 => quote!(f32),
    }
}

/// A typed literal of a constant given as `f64` (a constant matrix's value, a float): an
/// integer type saturates, as the interpreter reads it (`interp::cast_f64`).
pub(crate) fn lit(v: f64, s: Scalar) -> TokenStream {
    match crate::interp::cast_f64(v, s) {
        crate::interp::Val::F32(x) => f32_lit(x),
        crate::interp::Val::Bool(b) => int_lit(b as i128, s),
        crate::interp::Val::Int(i) => int_lit(i, s),
    }
}

/// An `f32` literal (`proc_macro2` refuses non-finite ones).
fn f32_lit(x: f32) -> TokenStream {
    if x.is_nan() {
        quote!(f32::NAN)
    } else if x == f32::INFINITY {
        quote!(f32::INFINITY)
    } else if x == f32::NEG_INFINITY {
        quote!(f32::NEG_INFINITY)
    } else {
        let l = Literal::f32_suffixed(x);
        quote!(#l)
    }
}

/// A typed literal of an integer constant, wrapped to its type (to `f32` through `f64`).
pub(crate) fn int_lit(v: i128, s: Scalar) -> TokenStream {
    let l = match s {
        Scalar::F32 => return f32_lit(v as f64 as f32),
        Scalar::Bool if v != 0 => return quote!(true),
        Scalar::Bool => return quote!(false),
        Scalar::U8 => Literal::u8_suffixed(v as u8),
        Scalar::I8 => Literal::i8_suffixed(v as i8),
        Scalar::U16 => Literal::u16_suffixed(v as u16),
        Scalar::I16 => Literal::i16_suffixed(v as i16),
        Scalar::U32 => Literal::u32_suffixed(v as u32),
        Scalar::I32 => Literal::i32_suffixed(v as i32),
        Scalar::U64 => Literal::u64_suffixed(v as u64),
        Scalar::I64 => Literal::i64_suffixed(v as i64),
    };
    quote!(#l)
}

/// How the code of a region reaches one matrix.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    /// A shared slice of the whole matrix.
    Read,
    /// A mutable slice of the whole matrix.
    Write,
}

/// A size expression as Rust (`i64` arithmetic over the bound size variables).
pub(crate) fn size_expr(f: &Function, e: &Expr) -> TokenStream {
    match &e.kind {
        ExprKind::Int(v) => {
            let v = *v as i64;
            quote!(#v)
        }
        ExprKind::Size(i) => {
            let id = format_ident!("{}", f.sizes[*i].name);
            quote!(#id)
        }
        ExprKind::Cast(a, _) => size_expr(f, a),
        ExprKind::Unary(UnOp::Neg, a) => {
            let a = size_expr(f, a);
            quote!((-#a))
        }
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (size_expr(f, a), size_expr(f, b));
            let op: TokenStream = op.symbol().parse().expect("operator token");
            quote!((#a #op #b))
        }
        _ => quote!(0i64),
    }
}

/// What both paths start with: sizes as `i32` (`__zK`), every matrix's dimensions as `i64`
/// (`__dK`), scalar parameters (`__sK`).
pub fn prelude(f: &Function) -> TokenStream {
    let mut out = TokenStream::new();
    for (i, s) in f.sizes.iter().enumerate() {
        let z = format_ident!("__z{}", i);
        let name = format_ident!("{}", s.name);
        out.extend(quote!(let #z: i32 = #name as i32;));
    }
    for (m, mat) in f.matrices.iter().enumerate() {
        let d = format_ident!("__d{}", m);
        let dims = mat.dims.iter().map(|e| size_expr(f, e));
        let n = mat.dims.len();
        out.extend(quote!(let #d: [i64; #n] = [#(#dims),*];));
    }
    for p in &f.params {
        if let ParamRef::Scalar(s) = p {
            let v = format_ident!("__s{}", s);
            let name = format_ident!("{}", f.scalars[*s].name);
            out.extend(quote!(let #v = #name;));
        }
    }
    out
}

/// The expression giving a matrix's slice of the kind `view` (`swapped`: through its slot).
pub(crate) fn slice_of(f: &Function, m: MatrixId, view: View, swapped: bool) -> TokenStream {
    let mat = &f.matrices[m];
    let t = rty(mat.elem);
    if swapped {
        // Its storage changes: the slot (`slot`) holds the storage of the moment.
        let slot = format_ident!("__slot{}", m);
        return match view {
            View::Read => quote!((&*#slot)),
            View::Write => quote!((&mut *#slot)),
        };
    }
    match &mat.kind {
        MatrixKind::Const(values) => {
            let vals = values.iter().map(|v| lit(*v, mat.elem));
            quote!(&[#(#vals),*] as &[#t])
        }
        MatrixKind::Local => {
            let own = format_ident!("__own{}", m);
            if view == View::Read {
                quote!(#own.as_slice())
            } else {
                quote!(#own.as_mut_slice())
            }
        }
        _ => {
            let p = format_ident!("{}", mat.name);
            if view == View::Read {
                quote!(#p.as_slice())
            } else {
                quote!(#p.as_mut_slice())
            }
        }
    }
}

/// For a matrix `parac_swap` names, after its storage `home` (a mutable slice) is bound: its
/// slot, the storage its name holds at each moment (swaps exchange slots), and the address of
/// its own storage (where an output's values must be when the function returns, [`deliver`]).
pub(crate) fn slot(m: MatrixId, elem: Scalar, home: TokenStream) -> TokenStream {
    let (slot, addr, t) = (
        format_ident!("__slot{}", m),
        format_ident!("__home{}", m),
        rty(elem),
    );
    quote! {
        let mut #slot: &mut [#t] = #home;
        let #addr: usize = #slot.as_ptr() as usize;
    }
}

/// Before the function returns: every output `parac_swap` names gets its values into its own
/// storage (one copy, or one exchange where the other matrix is an output too), when its last
/// swap left them in another's.
pub(crate) fn deliver(f: &Function) -> TokenStream {
    let mut out = TokenStream::new();
    for g in f.swap_groups() {
        if !g.iter().any(|m| f.matrices[*m].kind == MatrixKind::Output) {
            continue;
        }
        let slots = g.iter().map(|m| format_ident!("__slot{}", m));
        let homes = g.iter().map(|m| format_ident!("__home{}", m));
        let live = g.iter().map(|m| f.matrices[*m].kind == MatrixKind::Output);
        out.extend(quote! {
            ::parac::__private::cpu::deliver(&mut [#(&mut *#slots),*], &[#(#homes),*], &[#(#live),*]);
        });
    }
    out
}

pub(crate) fn reduction(
    f: &Function,
    op: ReduceOp,
    m: MatrixId,
    result: ScalarId,
    swapped: bool,
) -> TokenStream {
    let mat = &f.matrices[m];
    let sl = slice_of(f, m, View::Read, swapped);
    let s = format_ident!("__s{}", result);
    let rt = rty(f.scalars[result].ty);
    let float = mat.elem.is_float();
    let p = rty(mat.elem.promote());
    let fname = &f.name;
    let rname = format!("{}_{}", op.name(), mat.name);
    let sum = if float {
        quote!(
            ::parac::__private::cpu::workers::chunk_map(__threads, __m, 4096, |c| c
                .iter()
                .map(|v| *v as f64)
                .sum::<f64>())
            .into_iter()
            .sum::<f64>()
        )
    } else {
        quote!(::parac::__private::cpu::int_sum(__isa, __threads, __m))
    };
    // The sum's type: f64 for floats, i64 for integers.
    let acc = if float { quote!(f64) } else { quote!(i64) };
    let value = match op {
        ReduceOp::Sum => quote!((#sum) as #rt),
        ReduceOp::Mean => quote! {{
            if __m.is_empty() {
                return ::core::result::Result::Err(::parac::Error::DivisionByZero { function: #fname, region: #rname });
            }
            ((#sum) / (__m.len() as i64 as #acc)) as #rt
        }},
        ReduceOp::Min if float => {
            quote!(::parac::__private::cpu::workers::chunk_map(__threads, __m, 4096, |c| c.iter().fold(f32::INFINITY, |a, v| a.min(*v))).into_iter().fold(f32::INFINITY, f32::min) as #rt)
        }
        ReduceOp::Max if float => {
            quote!(::parac::__private::cpu::workers::chunk_map(__threads, __m, 4096, |c| c.iter().fold(f32::NEG_INFINITY, |a, v| a.max(*v))).into_iter().fold(f32::NEG_INFINITY, f32::max) as #rt)
        }
        ReduceOp::Min => {
            quote!(::parac::__private::cpu::workers::chunk_map(__threads, __m, 4096, |c| c.iter().fold(#p::MAX, |a, v| a.min(*v as #p))).into_iter().fold(#p::MAX, ::core::cmp::Ord::min) as #rt)
        }
        ReduceOp::Max => {
            quote!(::parac::__private::cpu::workers::chunk_map(__threads, __m, 4096, |c| c.iter().fold(#p::MIN, |a, v| a.max(*v as #p))).into_iter().fold(#p::MIN, ::core::cmp::Ord::max) as #rt)
        }
    };
    quote! {
        let #s: #rt = {
            let __m = #sl;
            #value
        };
    }
}
