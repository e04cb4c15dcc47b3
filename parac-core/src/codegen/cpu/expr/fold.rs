//! A fold (`lir::ExprKind::Fold`, a window's taps as a loop nest) as a Rust block: the
//! accumulator, the loops, the tap in a scope of its own. Where a read proven inside
//! (`checked: false`) moves along the innermost loop's variable `j` one element at a time and
//! its other indices do not move with `j` (a window's row), the row of the window is taken as
//! an array of the loop's length before the `j` loop and indexed by `j` in it, so that the loop
//! has no bound test and vectorizes; taking the row is itself checked (`get`, then
//! `try_into`), and a row a wrong proof would put outside the matrix reads zeros, as the other
//! unchecked reads read a default (never memory outside the slice).

use super::{Exprs, p};
use crate::codegen::cpu::host::{int_lit, lit, rty};
use crate::codegen::cpu::ops::{binary, call};
use crate::ir::{BinOp, Builtin, ReduceOp};
use crate::lir::visit::expr_children;
use crate::lir::{Buf, ExprId, ExprKind, VarId};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

impl Exprs<'_> {
    /// Fold `e`.
    pub(super) fn fold(&mut self, e: ExprId, out: &mut TokenStream) -> TokenStream {
        let func = self.func;
        let t = func.exprs[e].ty;
        let ExprKind::Fold {
            op,
            vars,
            counts,
            init,
            elem,
        } = &func.exprs[e].kind
        else {
            unreachable!("a fold");
        };
        let init = self.expr(*init, out);
        let counts_tt: Vec<TokenStream> = counts.iter().map(|c| self.expr(*c, out)).collect();
        let acc = format_ident!("__f{}", e.index());
        // The rows of the window along the innermost variable, taken before its loop.
        let j = *vars.last().expect("a fold has a variable");
        let len = match func.exprs[*counts.last().expect("a count")].kind {
            ExprKind::Int(n) if (1..=4096).contains(&n) => Some(n as usize),
            _ => None,
        };
        let rows = len.map_or_else(Vec::new, |_| self.rows_along(*elem, j));
        let mut take = TokenStream::new();
        let jv = self.var(j);
        for (k, load) in rows.iter().enumerate() {
            let ExprKind::Load {
                buf: Buf::Matrix(m),
                index,
                ..
            } = &func.exprs[*load].kind
            else {
                continue;
            };
            let n = len.expect("rows only with a constant length");
            let et = func.exprs[*load].ty;
            let zero = if et.is_float() {
                lit(0.0, et)
            } else {
                int_lit(0, et)
            };
            let ety = rty(et);
            // The row's first index: the indices with `j` at 0.
            self.push();
            let mut lets = quote!(let #jv: i32 = 0i32;);
            let idx: Vec<TokenStream> = index.iter().map(|i| self.expr(*i, &mut lets)).collect();
            self.pop();
            let (s, d) = (format_ident!("__m{}", m), format_ident!("__d{}", m));
            let r = format_ident!("__r{}_{}", e.index(), k);
            take.extend(quote!(
                let #r: &[#ety; #n] = {
                    #lets
                    let __s = ::parac::__private::cpu::lin([#(#idx),*], &#d);
                    #s.get(__s..__s.wrapping_add(#n))
                        .and_then(|r| <&[#ety; #n]>::try_from(r).ok())
                        .unwrap_or(&[#zero; #n])
                };
            ));
            let c = self.canon_of(*load);
            self.hoisted.insert(c, quote!(#r[#jv as usize]));
        }
        // The tap in a scope of its own (its bindings depend on the variables).
        self.push();
        let mut lets = TokenStream::new();
        let v = self.tail(*elem, &mut lets);
        self.pop();
        for load in &rows {
            let c = self.canon_of(*load);
            self.hoisted.remove(&c);
        }
        let step = match op {
            ReduceOp::Min => call(Builtin::Min, &[quote!(#acc), p(v)], t),
            ReduceOp::Max => call(Builtin::Max, &[quote!(#acc), p(v)], t),
            _ => binary(BinOp::Add, quote!(#acc), p(v), t, t),
        };
        let mut body = quote!(#lets #acc = #step;);
        let last = vars.len() - 1;
        for (k, (var, count)) in vars.iter().zip(counts_tt).enumerate().rev() {
            let var = self.var(*var);
            body = quote!(for #var in 0i32..(#count) { #body });
            if k == last {
                body = quote!(#take #body);
            }
        }
        let rt = rty(t);
        quote!({ let mut #acc: #rt = #init; #body #acc })
    }

    /// The reads proven inside in `elem` (not in a fold within it) whose last index is a value
    /// that does not move with `j`, plus `j`, and whose other indices do not move with it.
    fn rows_along(&self, elem: ExprId, j: VarId) -> Vec<ExprId> {
        let func = self.func;
        let mut found: Vec<ExprId> = Vec::new();
        let mut stack = vec![elem];
        while let Some(x) = stack.pop() {
            match &func.exprs[x].kind {
                ExprKind::Load {
                    buf: Buf::Matrix(_),
                    index,
                    checked: false,
                } if func.exprs[x].lanes == 1 => {
                    let (last, rest) = index.split_last().expect("an index");
                    let fixed = rest.iter().all(|i| !self.free_vars(*i).contains(&j));
                    if fixed
                        && self.plus_var(*last, j)
                        && !found.iter().any(|f| self.canon_of(*f) == self.canon_of(x))
                    {
                        found.push(x);
                    }
                }
                ExprKind::Fold { .. } => {}
                k => stack.extend(expr_children(k)),
            }
        }
        found
    }

    /// Whether `e` is `a + j` (`j` widened or not) with `a` free of `j`.
    fn plus_var(&self, e: ExprId, j: VarId) -> bool {
        let func = self.func;
        let is_j = |x: ExprId| match func.exprs[x].kind {
            ExprKind::Var(v) => v == j,
            ExprKind::Cast(a) => matches!(func.exprs[a].kind, ExprKind::Var(v) if v == j),
            _ => false,
        };
        match func.exprs[e].kind {
            ExprKind::Binary(BinOp::Add, a, b) if func.exprs[e].ty.is_int() => {
                (is_j(b) && !self.free_vars(a).contains(&j))
                    || (is_j(a) && !self.free_vars(b).contains(&j))
            }
            _ => false,
        }
    }
}
