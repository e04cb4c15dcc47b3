//! Updates of shared elements ([`lir::Stmt::Update`]) and the loops that run them in parallel
//! tasks with private partial results ([`LoopKind::Partials`]): a histogram's per-thread bins.
//! Each task runs a block of consecutive iterations into its own copies of the matrices its
//! updates reach, each element starting at the operator's identity; the copies are then
//! combined into the matrices in task order. The updates are integer ones, which wrap, so the
//! result is the loop's in order; an error is the first in task order, so the first in
//! iteration order too.

use super::host::rty;
use super::{Printer, var};
use crate::ir::UpdateOp;
use crate::lir::{Buf, Func, Loop, Stmt, StmtId};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

/// `a op b` in Rust on elements of one integer type, wrapping.
pub(super) fn combine(op: UpdateOp, a: TokenStream, b: TokenStream) -> TokenStream {
    match op {
        UpdateOp::Add => quote!((#a).wrapping_add(#b)),
        UpdateOp::Sub => quote!((#a).wrapping_sub(#b)),
        UpdateOp::Or => quote!((#a) | (#b)),
        UpdateOp::And => quote!((#a) & (#b)),
        UpdateOp::Xor => quote!((#a) ^ (#b)),
        UpdateOp::Min => quote!(::core::cmp::Ord::min(#a, #b)),
        UpdateOp::Max => quote!(::core::cmp::Ord::max(#a, #b)),
    }
}

/// An update of matrix `m` (through its slice `__m<m>`) at `idx` by `v`: checked (outside, the
/// `Error::OutOfBounds` of its read, which `m[i] = m[i] op e` runs first), or at an index a pass proved inside (where a wrong proof
/// would update nothing; nothing can panic).
pub(super) fn update(
    name: &str,
    m: usize,
    idx: &[TokenStream],
    op: UpdateOp,
    v: TokenStream,
    checked: bool,
) -> TokenStream {
    let (s, d) = (format_ident!("__m{}", m), format_ident!("__d{}", m));
    if !checked {
        let new = combine(op, quote!(*__e), quote!(__v));
        return quote! {
            let __v = #v;
            if let ::core::option::Option::Some(__e) =
                #s.get_mut(::parac::__private::cpu::lin([#(#idx),*], &#d))
            {
                *__e = #new;
            }
        };
    }
    let new = combine(op, quote!(#s[__l]), quote!(__v));
    quote! {
        let __v = #v;
        match ::parac::__private::cpu::at([#(#idx),*], &#d) {
            ::core::result::Result::Ok(__l) => #s[__l] = #new,
            ::core::result::Result::Err(__i) => return ::core::result::Result::Err(
                ::parac::__private::cpu::out_of_bounds(__fname, __rname, "read of", #name, &__i, &#d)),
        };
    }
}

/// The number of elements of a matrix whose dimensions are all constants, up to 4,096 (bins
/// a task holds as one array, built on the stack in a debug build).
fn fixed_len(m: &crate::ir::Matrix) -> Option<usize> {
    let n = m
        .const_dims()?
        .iter()
        .try_fold(1i128, |n, d| n.checked_mul(*d))?;
    (n <= 1 << 12).then_some(n as usize)
}

/// The matrices the updates below `s` reach, each with its operator, in order of first use.
fn updated(func: &Func, s: StmtId, out: &mut Vec<(usize, UpdateOp)>) {
    if let Stmt::Update {
        buf: Buf::Matrix(m),
        op,
        ..
    } = func.stmts[s]
        && !out.iter().any(|(n, _)| *n == m)
    {
        out.push((m, op));
    }
    for c in crate::lir::visit::stmt_parts(&func.stmts[s]).1 {
        updated(func, c, out);
    }
}

impl Printer<'_> {
    /// A `LoopKind::Partials` loop `l` (a region's outer loop; the matrices' slices bound).
    pub(super) fn partials(&mut self, l: Loop, out: &mut TokenStream) -> TokenStream {
        let mut mats = Vec::new();
        updated(self.func(), l.body, &mut mats);
        let (lo, hi) = (self.x.expr(l.lo, out), self.x.expr(l.hi, out));
        self.x.epoch += 1;
        self.x.push();
        let mut inner = TokenStream::new();
        self.stmts(l.body, &mut inner);
        self.x.pop();
        self.x.epoch += 1;
        let defs = self.x.end_region();
        let (id, step) = (var(l.var), Literal::i64_suffixed(l.step));
        let mut own = TokenStream::new();
        let mut shadow = TokenStream::new();
        let mut merge = TokenStream::new();
        let mut bytes = TokenStream::new();
        let names: Vec<_> = (0..mats.len()).map(|j| format_ident!("__q{}", j)).collect();
        let mut types = Vec::new();
        for ((m, op), q) in mats.iter().zip(&names) {
            let elem = self.f.matrices[*m].elem;
            let t = rty(elem);
            let s = format_ident!("__m{}", m);
            let len = format_ident!("__qlen{}", m);
            let first = Literal::i128_suffixed(op.identity(elem));
            bytes.extend(quote!(+ #len * ::core::mem::size_of::<#t>()));
            // The dimensions copied into the task: a local the stores cannot alias, which the
            // compiler keeps in registers. Bins of a constant length are an array of that
            // length, so an index the pixel's type bounds (`hist[src[x][y]]` into 256) needs
            // no comparison.
            let d = format_ident!("__d{}", m);
            match fixed_len(&self.f.matrices[*m]) {
                Some(n) => {
                    let n = Literal::usize_unsuffixed(n);
                    own.extend(quote! {
                        let mut #q: ::std::boxed::Box<[#t; #n]> =
                            ::std::boxed::Box::new([(#first) as #t; #n]);
                    });
                    shadow.extend(quote!(let #s: &mut [#t; #n] = &mut #q; let #d = #d;));
                    types.push(quote!(::std::boxed::Box<[#t; #n]>));
                }
                None => {
                    own.extend(quote! {
                        let mut #q: ::std::vec::Vec<#t> = ::std::vec![(#first) as #t; #len];
                    });
                    shadow.extend(quote!(let #s: &mut [#t] = &mut #q; let #d = #d;));
                    types.push(quote!(::std::vec::Vec<#t>));
                }
            }
            let new = combine(op.merge(), quote!(*__a), quote!(*__b));
            merge.extend(quote! {
                for (__a, __b) in #s.iter_mut().zip(#q.iter()) {
                    *__a = #new;
                }
            });
        }
        let lens = mats.iter().map(|(m, _)| {
            let (s, len) = (format_ident!("__m{}", m), format_ident!("__qlen{}", m));
            quote!(let #len: usize = #s.len();)
        });
        quote! {
            #out
            let (__lo, __hi): (i64, i64) = ((#lo) as i64, (#hi) as i64);
            let __count: i64 = if __hi > __lo { (__hi - __lo + #step - 1) / #step } else { 0 };
            #(#lens)*
            #defs
            let __tasks: i64 = ::parac::__private::cpu::partial_tasks(__threads, __count, 0usize #bytes);
            let __per: i64 = if __tasks > 0 { (__count + __tasks - 1) / __tasks } else { 0 };
            let __parts: ::std::vec::Vec<::core::result::Result<(#(#types,)*), ::parac::Error>> =
                ::parac::__private::cpu::workers::map(__threads, __tasks.max(0) as usize, |__t: usize| {
                    let __t: i64 = __t as i64;
                    #own
                    {
                        #shadow
                        let mut __k: i64 = __t * __per;
                        let __kend: i64 = (__k + __per).min(__count);
                        while __k < __kend {
                            let #id: i32 = (__lo + __k * #step) as i32;
                            #inner
                            __k += 1;
                        }
                    }
                    ::core::result::Result::Ok((#(#names,)*))
                });
            for __p in __parts {
                let (#(#names,)*) = __p?;
                #merge
            }
        }
    }
}
