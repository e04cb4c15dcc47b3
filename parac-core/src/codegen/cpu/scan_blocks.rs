//! The first pass of a scan's blocks ([`lir::Stmt::ScanTotals`], `lir::pass::scan_blocks`):
//! tasks of the CPU path's threads over the blocks but the last, each running the loop's body (its stores to
//! matrices gone) over its rows into its own copies of the carried temporaries, which start
//! at the values before the loop (the operators' identities); the copies then combine in
//! block order into the carried values at each block's start. The second pass is the row
//! chunks of a `ParallelChunks` loop, one per block (`Printer::parallel`).

use super::host::rty;
use super::{Printer, temp, temp_dims, var};
use crate::lir::{Stmt, StmtId};
use proc_macro2::TokenStream;
use quote::quote;

impl Printer<'_> {
    /// Statement `s`, a [`Stmt::ScanTotals`], appended to `out`.
    pub(super) fn scan_totals(&mut self, s: StmtId, out: &mut TokenStream) {
        let Stmt::ScanTotals {
            var: v,
            lo,
            hi,
            per,
            body,
            carried,
            totals,
        } = self.func().stmts[s].clone()
        else {
            return;
        };
        let (lo, hi) = (self.x.expr(lo, out), self.x.expr(hi, out));
        self.x.epoch += 1;
        let inner = self.braced(body);
        self.x.epoch += 1;
        let (id, per) = (var(v), var(per));
        let mut own = TokenStream::new();
        let mut types = Vec::new();
        let mut kept = Vec::new();
        let mut starts = TokenStream::new();
        for (k, (t, op, _)) in carried.iter().enumerate() {
            let (row, ty) = (temp(*t), rty(self.func().temps[*t].elem));
            own.extend(quote! {
                let mut #row = {
                    let mut __c = ::parac::__private::cpu::scratch::<#ty>(#row.len() as i64);
                    __c.copy_from_slice(&#row[..]);
                    __c
                };
            });
            types.push(quote!(::std::vec::Vec<#ty>));
            kept.push(quote!(#row.to_vec()));
            let (st, sd) = (temp(totals[k]), temp_dims(totals[k]));
            let k = syn_index(k);
            let next = super::partials::combine(
                op.update(),
                quote!(#st[__p + __i]),
                quote!(__own[__b - 1].#k[__i]),
            );
            starts.extend(quote! {
                let __n: usize = #row.len();
                let #sd: [i64; 2] = [__nb as i64, __n as i64];
                let mut #st: ::std::vec::Vec<#ty> = ::std::vec::Vec::with_capacity(__nb * __n);
                #st.extend_from_slice(&#row[..]);
                for __b in 1..__nb {
                    let __p = (__b - 1) * __n;
                    for __i in 0..__n {
                        let __v = #next;
                        #st.push(__v);
                    }
                }
            });
        }
        out.extend(quote! {
            let (__slo, __shi): (i64, i64) = ((#lo) as i64, (#hi) as i64);
            let __scount: i64 = (__shi - __slo).max(0);
            let mut __sper: i64 = ::parac::__private::cpu::block_rows(__threads, __scount);
            let __sblocks = |__p: i64| if __scount > 0 { (__scount + __p - 1) / __p } else { 0 };
            let __parts: ::std::vec::Vec<::core::result::Result<(#(#types,)*), ::parac::Error>> = {
                ::parac::__private::cpu::workers::map(__threads, (__sblocks(__sper) - 1).max(0) as usize, |__sb: usize| {
                    let __sb: i64 = __sb as i64;
                    #own
                    let mut __k: i64 = __slo + __sb * __sper;
                    let __kend: i64 = (__k + __sper).min(__shi);
                    while __k < __kend {
                        let #id: i32 = __k as i32;
                        #inner
                        __k += 1;
                    }
                    ::core::result::Result::Ok((#(#kept,)*))
                })
            };
            // A block that fails: the loop in order, as one block (its error is the loop's).
            let mut __own = ::std::vec::Vec::with_capacity(__parts.len());
            for __p in __parts {
                match __p {
                    ::core::result::Result::Ok(__v) => __own.push(__v),
                    ::core::result::Result::Err(_) => {
                        __own.clear();
                        __sper = __scount.clamp(1, i32::MAX as i64);
                        break;
                    }
                }
            }
            let #per: i32 = __sper as i32;
            let __nb: usize = __sblocks(__sper).max(1) as usize;
            #starts
        });
    }
}

/// A tuple field's index as Rust writes it (`.0`).
fn syn_index(k: usize) -> proc_macro2::Literal {
    proc_macro2::Literal::usize_unsuffixed(k)
}
