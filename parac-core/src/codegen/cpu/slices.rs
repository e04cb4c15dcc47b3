//! The interior of a partitioned loop (`LoopKind::Vectorized(0)`, made by
//! `lir::pass::partition`) as a loop over slices, which LLVM vectorizes: each access the LIR
//! proved inside (`checked: false`) whose last index is the loop's variable plus a constant and
//! whose other indices do not change in the loop reads (or writes) one slice of `n` elements,
//! taken once before the loop; the loop runs `__i` over `0..n` and indexes every slice with it,
//! so that no bound is tested inside. Taking a slice is itself checked (`cpu::span`,
//! `get`, `get_disjoint_mut`): where one would not be inside its matrix, or stores would
//! overlap, the loop runs as a plain one instead, so no proof is trusted for memory safety.

use super::{Loop, Printer};
use crate::lir::pass::partition::unit_offset;
use crate::lir::visit::{expr_children, stmt_parts};
use crate::lir::{Buf, ExprId, ExprKind, Func, Stmt, StmtId, VarId};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use std::collections::HashMap;

/// A slice of the interior: a matrix, the indices of its first element, its accesses.
struct Slice {
    m: usize,
    /// The indices before the last, then the last index's offset from the loop variable.
    prefix: Vec<ExprId>,
    offset: i128,
    /// The stores it serves (none: a slice that loads read).
    stores: Vec<StmtId>,
}

/// What the body of the loop reaches.
#[derive(Default)]
struct Body {
    loads: Vec<ExprId>,
    stores: Vec<StmtId>,
    /// Variables bound in the body.
    bound: Vec<VarId>,
    /// Matrices read by any load.
    read: Vec<usize>,
}

fn scan(func: &Func, s: StmtId, b: &mut Body) {
    let (es, ss) = stmt_parts(&func.stmts[s]);
    match &func.stmts[s] {
        Stmt::Store {
            buf: Buf::Matrix(_),
            ..
        } => b.stores.push(s),
        Stmt::Let(v, _) => b.bound.push(*v),
        _ => {}
    }
    let mut stack = es;
    while let Some(e) = stack.pop() {
        match &func.exprs[e].kind {
            ExprKind::Load {
                buf: Buf::Matrix(m),
                ..
            } => {
                b.loads.push(e);
                b.read.push(*m);
            }
            ExprKind::Let(v, ..) => b.bound.push(*v),
            _ => {}
        }
        stack.extend(expr_children(&func.exprs[e].kind));
    }
    for c in ss {
        scan(func, c, b);
    }
}

impl Printer<'_> {
    /// The indices before the last and the last one's offset, where an unchecked access at
    /// `index` reads or writes a slice along the loop's variable `v`.
    fn sliceable(
        &self,
        index: &[ExprId],
        v: VarId,
        bound: &[VarId],
    ) -> Option<(Vec<ExprId>, i128)> {
        let func = self.func();
        let (last, prefix) = index.split_last()?;
        let offset = unit_offset(func, *last, v)?;
        let invariant = |e: &ExprId| {
            self.x
                .free_vars(*e)
                .iter()
                .all(|w| *w != v && !bound.contains(w))
                && !self.x.can_fail(*e)
        };
        prefix
            .iter()
            .all(invariant)
            .then(|| (prefix.to_vec(), offset))
    }

    /// The interior loop `l` over slices, falling back to a plain loop.
    pub(super) fn vectorized(&mut self, l: Loop, out: &mut TokenStream) -> TokenStream {
        let func = self.x.func;
        let mut body = Body::default();
        scan(func, l.body, &mut body);
        let mut slices: Vec<Slice> = Vec::new();
        let mut key_of: HashMap<String, usize> = HashMap::new();
        let mut add =
            |slices: &mut Vec<Slice>, m: usize, prefix: Vec<ExprId>, offset: i128, x: &Self| {
                let key = format!(
                    "{m}:{:?}:{offset}",
                    prefix.iter().map(|p| x.x.canon_of(*p)).collect::<Vec<_>>()
                );
                *key_of.entry(key).or_insert_with(|| {
                    slices.push(Slice {
                        m,
                        prefix,
                        offset,
                        stores: vec![],
                    });
                    slices.len() - 1
                })
            };
        // Stores: every store of a matrix must be a slice's, and the matrix unread here.
        let mut store_slices: Vec<(StmtId, usize)> = Vec::new();
        let mut refused: Vec<usize> = Vec::new();
        let mut candidates: Vec<(StmtId, usize, Vec<ExprId>, i128)> = Vec::new();
        for s in &body.stores {
            let Stmt::Store {
                buf: Buf::Matrix(m),
                index,
                checked,
                ..
            } = &func.stmts[*s]
            else {
                continue;
            };
            match (*checked, self.sliceable(index, l.var, &body.bound)) {
                (false, Some((p, o))) if !body.read.contains(m) => candidates.push((*s, *m, p, o)),
                _ => refused.push(*m),
            }
        }
        for (s, m, p, o) in candidates {
            if refused.contains(&m) {
                continue;
            }
            let k = add(&mut slices, m, p, o, self);
            slices[k].stores.push(s);
            store_slices.push((s, k));
        }
        // Loads of matrices this region does not write.
        let mut load_slices: Vec<(usize, usize)> = Vec::new();
        for e in &body.loads {
            let ExprKind::Load {
                buf: Buf::Matrix(m),
                index,
                checked,
            } = &func.exprs[*e].kind
            else {
                continue;
            };
            if *checked || self.x.written.get(*m).copied().unwrap_or(false) {
                continue;
            }
            if let Some((p, o)) = self.sliceable(index, l.var, &body.bound) {
                let k = add(&mut slices, *m, p, o, self);
                load_slices.push((self.x.canon_of(*e), k));
            }
        }
        if slices.is_empty() {
            return self.serial(l, out);
        }
        // Before the loop: its range and each slice's first element.
        let (lo, hi) = (self.x.expr(l.lo, out), self.x.expr(l.hi, out));
        let mut take = TokenStream::new();
        let mut by_matrix: Vec<(usize, Vec<usize>)> = Vec::new();
        for (k, s) in slices.iter().enumerate() {
            let mut idx: Vec<TokenStream> = s.prefix.iter().map(|p| self.x.expr(*p, out)).collect();
            let off = Literal::i64_suffixed(s.offset as i64);
            idx.push(quote!(__va + #off));
            let d = format_ident!("__d{}", s.m);
            let r = format_ident!("__vr{}", k);
            let rows = self.x.rows.get(s.m).copied().unwrap_or(false);
            let span = if rows {
                quote!(::parac::__private::cpu::row_span([#(#idx),*], &#d, __vn))
            } else {
                quote!(::parac::__private::cpu::span([#(#idx),*], &#d, __vn))
            };
            take.extend(
                quote!(let ::core::option::Option::Some(#r) = #span else { break '__fast false; };),
            );
            if s.stores.is_empty() {
                let (v, src) = (format_ident!("__vs{}", k), format_ident!("__m{}", s.m));
                take.extend(quote! {
                    let ::core::option::Option::Some(#v) = #src.get(#r) else { break '__fast false; };
                    let #v = &#v[..__vn];
                });
            } else {
                match by_matrix.iter_mut().find(|(m, _)| *m == s.m) {
                    Some((_, ks)) => ks.push(k),
                    None => by_matrix.push((s.m, vec![k])),
                }
            }
        }
        for (m, ks) in &by_matrix {
            let rows = self.x.rows.get(*m).copied().unwrap_or(false);
            let dst = if rows {
                format_ident!("__w{}", m)
            } else {
                format_ident!("__m{}", m)
            };
            let names: Vec<_> = ks.iter().map(|k| format_ident!("__vs{}", k)).collect();
            let ranges: Vec<_> = ks.iter().map(|k| format_ident!("__vr{}", k)).collect();
            take.extend(quote! {
                let ::core::result::Result::Ok([#(#names),*]) = #dst.get_disjoint_mut([#(#ranges),*]) else {
                    break '__fast false;
                };
                #(let #names = &mut #names[..__vn];)*
            });
        }
        // The loop over slices.
        self.x.epoch += 1;
        self.x.hoisted = load_slices
            .iter()
            .map(|(c, k)| {
                let v = format_ident!("__vs{}", k);
                (*c, quote!(#v[__i]))
            })
            .collect();
        self.hoisted_stores = store_slices
            .iter()
            .map(|(s, k)| {
                let v = format_ident!("__vs{}", k);
                (*s, quote!(#v[__i]))
            })
            .collect();
        let inner = self.braced(l.body);
        self.x.hoisted.clear();
        self.hoisted_stores.clear();
        self.x.epoch += 1;
        let id = super::expr::var(l.var);
        let mut plain_out = TokenStream::new();
        let plain = self.serial(l, &mut plain_out);
        quote! {{
            let __va: i64 = (#lo) as i64;
            let __vb: i64 = (#hi) as i64;
            let __vn: usize = if __vb > __va { (__vb - __va) as usize } else { 0 };
            let __fast: bool = '__fast: {
                #take
                for __i in 0..__vn {
                    let #id: i32 = (__va + __i as i64) as i32;
                    #inner
                }
                true
            };
            if !__fast {
                #plain_out
                #plain
            }
        }}
    }
}
