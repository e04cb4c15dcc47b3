//! The host's proof before a region of the CPU path runs (the decisions are
//! `codegen::safety`'s): every access the host proves, as Rust statements over the prelude's
//! `__z`, `__s` and `__d` bindings that return `Error::OutOfBounds` (or `DivisionByZero` for a
//! uniform divisor) before the region touches memory. The OpenCL path makes the same proof in
//! the runtime, with the interpreter's evaluator (`interp::region_check`).

use crate::codegen::safety::{cty, guarded, has_rule, host_divisors, lets, scalar_of};
use crate::ir::*;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The `parac_runtime::bounds::Iv` of a followed expression, as Rust.
fn interval(e: &Expr, lets: &[Option<&Expr>]) -> TokenStream {
    let s = scalar_of(e).unwrap_or(Scalar::I32);
    let (bits, signed) = cty(s).unwrap_or((32, true));
    let t = quote!(::parac::__private::bounds::CTy { bits: #bits, signed: #signed });
    let go = |x: &Expr| interval(x, lets);
    match &e.kind {
        ExprKind::Int(v) => {
            let v = *v;
            quote!(::parac::__private::bounds::Iv::point(#v))
        }
        ExprKind::Size(i) => {
            let z = format_ident!("__z{}", i);
            quote!(::parac::__private::bounds::Iv::point(#z as i128))
        }
        ExprKind::Host(h) => {
            let v = format_ident!("__s{}", h);
            quote!(::parac::__private::bounds::Iv::point(#v as i128))
        }
        ExprKind::Var(slot) => {
            let v = format_ident!("__iv{}", slot);
            quote!(#v)
        }
        ExprKind::Local(l) => match lets.get(*l).copied().flatten() {
            Some(x) => go(x),
            None => quote!(::parac::__private::bounds::Iv::any(#t)),
        },
        ExprKind::Unary(UnOp::Neg, a) => {
            let a = go(a);
            quote!(#a.neg(#t))
        }
        ExprKind::Unary(_, a) => go(a),
        ExprKind::Cast(a, _) => {
            let a = go(a);
            quote!(#a.cast(#t))
        }
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (go(a), go(b));
            use BinOp::*;
            let m = match op {
                Add => quote!(add),
                Sub => quote!(sub),
                Mul | ElemMul => quote!(mul),
                Div => quote!(div),
                Rem => quote!(rem),
                Shl => quote!(shl),
                Shr => quote!(shr),
                BitAnd => quote!(and),
                BitOr | BitXor => quote!(or),
                _ => return quote!(::parac::__private::bounds::Iv::boolean()),
            };
            quote!(#a.#m(#b, #t))
        }
        ExprKind::Call(b, xs) => {
            let xs: Vec<TokenStream> = xs.iter().map(go).collect();
            match (b, xs.as_slice()) {
                (Builtin::Min, [a, b]) => quote!(#a.min(#b)),
                (Builtin::Max, [a, b]) => quote!(#a.max(#b)),
                (Builtin::Clamp, [x, lo, hi]) => quote!(#x.max(#lo).min(#hi)),
                (Builtin::Abs, [a]) => quote!(#a.abs(#t)),
                _ => quote!(::parac::__private::bounds::Iv::any(#t)),
            }
        }
        _ => quote!(::parac::__private::bounds::Iv::any(#t)),
    }
}

/// The host's proof, before region `rid` runs, that every access it proves (see the module's
/// documentation) is inside its matrix: Rust statements that return `Error::OutOfBounds`
/// otherwise. Uses the prelude's `__z`, `__s` and `__d` bindings.
pub fn region_check(f: &Function, rid: RegionId) -> TokenStream {
    let r = &f.regions[rid];
    if r.kind != RegionKind::Iterator {
        return TokenStream::new();
    }
    let lets = lets(r);
    let host = |e: &Expr| super::expr::host_expr(f, e);
    let mut vars = TokenStream::new();
    for (slot, d) in r.dims.iter().enumerate() {
        let Some(d) = d else { continue };
        let v = format_ident!("__iv{}", slot);
        let (lo, hi, step) = (host(&d.lo), host(&d.hi), d.step);
        vars.extend(quote!(let #v = ::parac::__private::bounds::Iv::var((#lo) as i64, (#hi) as i64, #step as i64);));
    }
    let (fname, rname) = (&f.name, &r.name);
    let extent = |l: Len| match l {
        Len::Const(n) => quote!(#n as i64),
        Len::Host(i) => {
            let h = host(&f.lens[i].expr);
            quote!((#h) as i64)
        }
    };
    let mut checks = TokenStream::new();
    for (a, lens) in crate::codegen::safety::host_lens(r) {
        let mname = &f.matrices[r.accesses[a].matrix].name;
        let lens = lens.into_iter().map(extent);
        checks.extend(
            quote!(::parac::__private::bounds::check_lens(#fname, #rname, #mname, &[#(#lens),*])?;),
        );
    }
    for (a, acc) in r.accesses.iter().enumerate() {
        if guarded(f, r, a) || (!acc.write && has_rule(f, r, acc.matrix)) {
            continue;
        }
        let subs = acc.subs.iter().enumerate().map(|(k, s)| match s {
            Sub::Point(e) => interval(e, &lets),
            Sub::Window { start, len, stride } => {
                let st = interval(start, &lets);
                let len = extent(*len);
                quote!(#st.window(#len, #stride))
            }
            Sub::Star => {
                let d = format_ident!("__d{}", acc.matrix);
                quote!(::parac::__private::bounds::Iv::var(0, #d[#k], 1))
            }
        });
        let d = format_ident!("__d{}", acc.matrix);
        let what = if acc.write { "write to" } else { "read of" };
        let mname = &f.matrices[acc.matrix].name;
        checks.extend(quote!(::parac::__private::bounds::check_access(#fname, #rname, #what, #mname, &[#(#subs),*], &#d)?;));
    }
    for b in host_divisors(r) {
        let iv = interval(b, &lets);
        checks.extend(quote! {
            let __q = #iv;
            if __q.lo <= 0 && __q.hi >= 0 {
                return ::core::result::Result::Err(::parac::Error::DivisionByZero { function: #fname, region: #rname });
            }
        });
    }
    if checks.is_empty() {
        return checks;
    }
    // No iteration, no access (arithmetic on an empty interval is not empty).
    let empty = r
        .dims
        .iter()
        .enumerate()
        .filter(|(_, d)| d.is_some())
        .map(|(slot, _)| {
            let v = format_ident!("__iv{}", slot);
            quote!(#v.is_empty())
        });
    quote!({ #vars if !(false #(|| #empty)*) { #checks } })
}
