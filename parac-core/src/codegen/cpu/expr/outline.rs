//! Outlining: the `else` arm of a bordered read's `select`, printed once per region as a
//! closure shared by every arm of the same shape.

use super::Exprs;
use crate::codegen::cpu::host::rty;
use crate::lir::ExprId;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use std::collections::HashMap;

impl Exprs<'_> {
    /// The `else` arm of a `select` (a bordered read's chain of the rules' entries, taken
    /// outside the matrix only) as a call of a closure of the region, `__b<n>(i0, i1)?`, printed
    /// once for every arm of the same shape (a window's elements); its free variables are the
    /// closure's parameters. The test and the arm taken inside the matrix stay in place, so
    /// that the common case costs no call. Small arms stay in place too.
    pub(super) fn outline(&mut self, b: ExprId) -> Option<TokenStream> {
        let func = self.func;
        if self.defs.is_none() || !self.params.is_empty() {
            return None;
        }
        let cb = self.canon[b.index()];
        if self.reads[cb]
            .iter()
            .any(|m| *m == super::TEMP || self.written.get(*m).copied().unwrap_or(false))
        {
            return None;
        }
        let vars = self.free[cb].clone();
        // The arm alone: no binding of the caller is visible in it.
        let saved = (
            std::mem::replace(&mut self.memo, vec![HashMap::new()]),
            std::mem::replace(&mut self.memo_epoch, vec![self.epoch]),
        );
        self.params = vars.clone();
        self.temps = 0;
        let mut lets = TokenStream::new();
        let v = self.tail(b, &mut lets);
        self.params.clear();
        (self.memo, self.memo_epoch) = saved;
        if tokens(&lets) + tokens(&v) < OUTLINE_TOKENS {
            return None;
        }
        let t = rty(func.exprs[b].ty);
        let ps = vars.iter().enumerate().map(|(k, v)| {
            let (p, ty) = (format_ident!("__p{}", k), rty(func.vars[*v].ty));
            quote!(#p: #ty)
        });
        let def = quote!(|#(#ps),*| -> ::core::result::Result<#t, ::parac::Error> {
            #lets ::core::result::Result::Ok(#v)
        });
        let key = def.to_string();
        let name = match self.outlined.get(&key) {
            Some(n) => n.clone(),
            None => {
                let n = format_ident!("__b{}", self.outlined.len());
                self.outlined.insert(key, n.clone());
                let defs = self.defs.as_mut().expect("inside a region");
                defs.extend(quote!(let #n = #def;));
                n
            }
        };
        let args = vars.iter().map(|v| self.var(*v));
        Some(quote!(#name(#(#args),*)?))
    }

    /// Starts a region: closures are outlined into its `defs`.
    pub fn begin_region(&mut self, written: Vec<bool>) {
        self.written = written;
        self.defs = Some(TokenStream::new());
        self.outlined.clear();
    }

    /// Ends a region: its closures.
    pub fn end_region(&mut self) -> TokenStream {
        self.written.clear();
        self.defs.take().unwrap_or_default()
    }
}

/// The size of an arm from which [`Exprs::outline`] shares it.
const OUTLINE_TOKENS: usize = 200;

/// The number of tokens of `ts`, groups' contents included.
fn tokens(ts: &TokenStream) -> usize {
    ts.clone()
        .into_iter()
        .map(|t| match t {
            proc_macro2::TokenTree::Group(g) => 2 + tokens(&g.stream()),
            _ => 1,
        })
        .sum()
}
