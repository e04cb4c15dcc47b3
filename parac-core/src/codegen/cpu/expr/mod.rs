//! LIR expressions as Rust, keeping the LIR a DAG: structurally equal nodes are merged
//! (hash-consing, so that copies a pass made count as one), and a node used more than once is
//! bound once with `let` where its uses can see it. Nodes that can fail (a checked load, an
//! integer division) are bound too, in evaluation order, so that no binding moves one failure
//! before another. The arms of a `select` and the right operand of `&&`/`||` are scopes of
//! their own: nothing evaluated only there is hoisted out of them. Merging and counting are in
//! `merge`, the closures shared by a region's bordered reads in `outline`, folds (a window's
//! taps as loops) in `fold`.

mod fold;
mod merge;
mod outline;

use super::host::{int_lit, lit, rty};
use super::ops::{binary, call};
use crate::ir::{BinOp, Builtin, Scalar, UnOp};
use crate::lir::{Buf, ExprId, ExprKind, Func, VarId};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use std::collections::HashMap;

/// The expressions of one function, merged and counted.
/// In [`Exprs::reads`], a read of a temporary: a task's row, declared inside the region, where
/// the region's outlined closures cannot see it (such an arm is not outlined).
const TEMP: usize = usize::MAX;

pub(crate) struct Exprs<'a> {
    pub func: &'a Func,
    /// The representative of each expression.
    canon: Vec<usize>,
    /// Parents (and statement roots) of each representative.
    uses: Vec<u32>,
    /// Whether evaluating it can fail.
    fallible: Vec<bool>,
    /// Bindings visible in the current scope: representative → (name, epoch).
    memo: Vec<HashMap<usize, Ident>>,
    /// Stores and loops end every binding of loads: they may read other values afterwards.
    pub epoch: u64,
    memo_epoch: Vec<u64>,
    /// In a row-parallel region: the planes written (a matrix and its leading constant
    /// indices), whose rows the tasks own as `__w<j>`; other matrices are `__m<m>` slices.
    pub planes: Vec<(usize, Vec<i128>)>,
    /// In a task of a row-parallel loop in chunks: its variable, the first row of the task's
    /// chunk of each plane (`__cw<j>`).
    pub task_row: Option<VarId>,
    /// The matrices the current region writes (their reads are not outlined).
    pub written: Vec<bool>,
    /// The free variables of each representative.
    free: Vec<Vec<VarId>>,
    /// Whether a representative reads a matrix, by matrix ([`TEMP`]: a temporary).
    reads: Vec<Vec<usize>>,
    /// Inside a region: the closures outlined so far (`let __b<n> = |..| ..;`), and their
    /// bodies' text → name.
    pub defs: Option<TokenStream>,
    outlined: HashMap<String, Ident>,
    /// While printing an outlined body: its variables as the closure's parameters (and the
    /// `let`s inside it after them), and the number of its bindings so far (named by position,
    /// so that bodies of one shape print the same).
    params: Vec<VarId>,
    temps: usize,
    /// Inside the interior of a partitioned loop: loads (representatives) read from slices,
    /// as `__vs<k>[__i]` (`slices.rs`).
    pub hoisted: HashMap<usize, TokenStream>,
    /// There too: loop-invariant divisors (representatives) of `i32`/`u32` divisions, checked
    /// nonzero before the loop, by the name of their value.
    pub fast_div: HashMap<usize, Ident>,
    /// There too: loads (representatives) from one row of a matrix (the row's slice and its
    /// last position), indexed with no branch.
    pub gathered: HashMap<usize, (Ident, Ident)>,
}

fn leaf(k: &ExprKind) -> bool {
    matches!(
        k,
        ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Var(_)
            | ExprKind::Size(_)
            | ExprKind::Host(_)
            | ExprKind::Dim(..)
    )
}

impl<'a> Exprs<'a> {
    /// Whether evaluating `e` can fail (a checked load, an integer division below it).
    pub fn can_fail(&self, e: ExprId) -> bool {
        self.fallible[self.canon[e.index()]]
    }

    /// The representative of `e` (equal expressions have one).
    pub fn canon_of(&self, e: ExprId) -> usize {
        self.canon[e.index()]
    }

    /// The free variables of `e`.
    pub fn free_vars(&self, e: ExprId) -> &[VarId] {
        &self.free[self.canon[e.index()]]
    }

    /// Opens a scope (a Rust block).
    pub fn push(&mut self) {
        self.memo.push(HashMap::new());
        self.memo_epoch.push(self.epoch);
    }

    /// Closes the innermost scope.
    pub fn pop(&mut self) {
        self.memo.pop();
        self.memo_epoch.pop();
    }

    fn lookup(&self, c: usize) -> Option<Ident> {
        self.memo
            .iter()
            .zip(&self.memo_epoch)
            .rev()
            .find_map(|(m, e)| (*e == self.epoch).then(|| m.get(&c).cloned()).flatten())
    }

    fn bind(&mut self, c: usize, id: Ident) {
        let top = self.memo.len() - 1;
        if self.memo_epoch[top] != self.epoch {
            self.memo[top].clear();
            self.memo_epoch[top] = self.epoch;
        }
        self.memo[top].insert(c, id);
    }

    /// `e` as a Rust expression; the `let`s it needs first are appended to `out`.
    pub fn expr(&mut self, e: ExprId, out: &mut TokenStream) -> TokenStream {
        self.expr_at(e, out, false)
    }

    /// `e` as the last thing its scope evaluates (a statement's only expression, an arm's
    /// value): then nothing can fail after it, and it is bound only if used again.
    pub fn tail(&mut self, e: ExprId, out: &mut TokenStream) -> TokenStream {
        self.expr_at(e, out, true)
    }

    fn expr_at(&mut self, e: ExprId, out: &mut TokenStream, tail: bool) -> TokenStream {
        let c = self.canon[e.index()];
        let x = &self.func.exprs[e];
        if leaf(&x.kind) {
            return self.leaf(e);
        }
        if let Some(id) = self.lookup(c) {
            return quote!(#id);
        }
        let code = self.node(e, out);
        if self.uses[c] > 1 || (self.fallible[c] && !tail) {
            let id = if self.params.is_empty() {
                format_ident!("__t{}", c)
            } else {
                self.temps += 1;
                format_ident!("__q{}", self.temps)
            };
            let t = rty(x.ty);
            out.extend(quote!(let #id: #t = #code;));
            self.bind(c, id.clone());
            return quote!(#id);
        }
        code
    }

    /// `e` in a scope of its own: a block when it needs `let`s.
    fn scoped(&mut self, e: ExprId) -> TokenStream {
        self.push();
        let mut lets = TokenStream::new();
        let v = self.tail(e, &mut lets);
        self.pop();
        if lets.is_empty() {
            v
        } else {
            quote!({ #lets #v })
        }
    }

    fn leaf(&self, e: ExprId) -> TokenStream {
        let x = &self.func.exprs[e];
        match &x.kind {
            ExprKind::Int(v) => int_lit(*v, x.ty),
            ExprKind::Float(v) => lit(*v, x.ty),
            ExprKind::Var(v) => self.var(*v),
            ExprKind::Size(i) => {
                let z = format_ident!("__z{}", i);
                quote!(#z)
            }
            ExprKind::Host(i) => {
                let s = format_ident!("__s{}", i);
                quote!(#s)
            }
            ExprKind::Dim(m, k) => {
                let d = format_ident!("__d{}", m);
                quote!(#d[#k])
            }
            _ => unreachable!("not a leaf"),
        }
    }

    fn node(&mut self, e: ExprId, out: &mut TokenStream) -> TokenStream {
        let func = self.func;
        let x = &func.exprs[e];
        let t = x.ty;
        match &x.kind {
            ExprKind::Load {
                buf,
                index,
                checked,
            } => {
                if let Some(t) = self.hoisted.get(&self.canon[e.index()]) {
                    return t.clone();
                }
                if let Some((row, last)) = self.gathered.get(&self.canon[e.index()]).cloned() {
                    // Proven inside its row; `min` keeps a wrong proof inside the slice.
                    let i = self.expr(*index.last().expect("an index"), out);
                    return quote!(#row[((#i) as usize).min(#last)]);
                }
                let idx: Vec<TokenStream> = index.iter().map(|i| self.expr(*i, out)).collect();
                let m = match *buf {
                    Buf::Matrix(m) => m,
                    Buf::Temp(t) => {
                        // A temporary row (`lir::pass::slide`), read inside by construction:
                        // a wrong proof reads a default, never outside.
                        let (id, d) = (super::temp(t), super::temp_dims(t));
                        return quote!(#id.get(::parac::__private::cpu::lin([#(#idx),*], &#d))
                            .copied().unwrap_or_default());
                    }
                };
                let (s, d) = (format_ident!("__m{}", m), format_ident!("__d{}", m));
                if !checked {
                    // Proven inside: no branch (a wrong proof would read a default, never
                    // outside the slice).
                    return quote!(#s.get(::parac::__private::cpu::lin([#(#idx),*], &#d))
                        .copied().unwrap_or_default());
                }
                checked_read(&func.matrices[m], &d, &idx, quote!(#s[__l]))
            }
            ExprKind::Outside { matrix, index } => {
                // Known outside: the read's error; never reads the matrix (which a task
                // storing its rows holds no view of), zero where the index is inside.
                let idx: Vec<TokenStream> = index.iter().map(|i| self.expr(*i, out)).collect();
                let d = format_ident!("__d{}", matrix);
                let zero = match t.is_float() {
                    true => lit(0.0, t),
                    false => int_lit(0, t),
                };
                checked_read(
                    &func.matrices[*matrix],
                    &d,
                    &idx,
                    quote!({ let _ = __l; #zero }),
                )
            }
            ExprKind::Ramp { .. }
            | ExprKind::Broadcast(_)
            | ExprKind::Extract(..)
            | ExprKind::Vector(_) => {
                quote!(::core::compile_error!("parac: vector lanes on the CPU"))
            }
            ExprKind::Unary(op, a) => {
                let a = p(self.expr(*a, out));
                match op {
                    UnOp::Plus => a,
                    UnOp::Neg if t.is_float() => quote!((-#a)),
                    UnOp::Neg => quote!(#a.wrapping_neg()),
                    UnOp::Not => quote!((!#a)),
                }
            }
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
                let a = p(self.expr(*a, out));
                let b = p(self.scoped(*b));
                if *op == BinOp::And {
                    quote!((#a && #b))
                } else {
                    quote!((#a || #b))
                }
            }
            ExprKind::Binary(op @ (BinOp::Div | BinOp::Rem), a, b)
                if self.fast_div.contains_key(&self.canon[b.index()]) =>
            {
                // A divisor of at most 32 bits, neither 0 nor -1: the quotient of the operands as
                // `f64` is correctly rounded, so its truncation is C's quotient (|a| < 2^53);
                // this vectorizes where an integer division does not.
                let d = self.fast_div[&self.canon[b.index()]].clone();
                // In `f32` (twice the lanes) where the dividend is below 2^22 in magnitude: the
                // same argument holds with `f32`'s 24-bit significand (and a divisor past 2^24
                // then gives a quotient below 1 either way). The truncated quotient becomes an
                // integer by adding 1.5 * 2^23 (1.5 * 2^52) and reading the bits, exact for a
                // quotient below 2^22 (2^51): `as` would saturate, which does not vectorize.
                let small = crate::lir::range::range(func, *a)
                    .is_some_and(|(lo, hi)| lo > -(1 << 22) && hi < (1 << 22));
                let a = p(self.expr(*a, out));
                let rt = rty(t);
                let q = if small {
                    quote!((((((__a as f32) / (#d as f32)).trunc() + 12582912.0f32).to_bits() as i32)
                        .wrapping_sub(0x4B40_0000) as #rt))
                } else {
                    quote!((((((__a as f64) / (#d as f64)).trunc() + 6755399441055744.0f64).to_bits() as i64)
                        .wrapping_sub(0x4338_0000_0000_0000) as #rt))
                };
                if *op == BinOp::Div {
                    quote!({ let __a: #rt = #a; #q })
                } else {
                    quote!({ let __a: #rt = #a; __a.wrapping_sub(#q.wrapping_mul(#d)) })
                }
            }
            ExprKind::Binary(op, a, b) => {
                let ot = func.exprs[*a].ty;
                let (a, b) = (p(self.expr(*a, out)), p(self.expr(*b, out)));
                binary(*op, a, b, t, ot)
            }
            ExprKind::Cast(a) => {
                let from = func.exprs[*a].ty;
                let a = p(self.expr(*a, out));
                match (from, t) {
                    (f, Scalar::Bool) if f.is_float() => quote!((#a != 0.0)),
                    (Scalar::Bool, Scalar::Bool) => a,
                    (_, Scalar::Bool) => quote!((#a != 0)),
                    (Scalar::Bool, Scalar::F32) => quote!((#a as i32 as f32)),
                    _ => {
                        let rt = rty(t);
                        quote!((#a as #rt))
                    }
                }
            }
            ExprKind::Call(Builtin::Fuses, args) if args.len() >= 6 => {
                // The run time's choice for the fused stages, by their plans' names.
                let [bytes, span, stride, rows, row_bytes, height] =
                    [0, 1, 2, 3, 4, 5].map(|k| p(self.expr(args[k], out)));
                let names: Vec<String> = args[6..]
                    .iter()
                    .filter_map(|a| match self.func.exprs[*a].kind {
                        ExprKind::Int(id) => {
                            let name = self.func.region_name(id as usize)?;
                            Some(crate::codegen::plans_name(id as usize, &name))
                        }
                        _ => None,
                    })
                    .collect();
                quote!(::parac::__private::cpu::fuses(
                    rt,
                    &[#(#names),*],
                    #bytes,
                    (#span, #stride),
                    (#rows, #row_bytes, #height),
                ))
            }
            ExprKind::Call(b, args) => {
                let xs: Vec<TokenStream> = args.iter().map(|a| p(self.expr(*a, out))).collect();
                call(*b, &xs, t)
            }
            ExprKind::Select(c, a, b) => {
                let c = self.expr(*c, out);
                let a = self.scoped(*a);
                let b = match self.outline(*b) {
                    Some(call) => call,
                    None => self.scoped(*b),
                };
                // `else if` for a chain of selects (border rules), not a nesting.
                let chain = matches!(b.clone().into_iter().next(),
                    Some(proc_macro2::TokenTree::Ident(i)) if i == "if");
                if chain {
                    quote!(if #c { #a } else #b)
                } else {
                    quote!(if #c { #a } else { #b })
                }
            }
            ExprKind::Fold { .. } => self.fold(e, out),
            ExprKind::Let(v, a, b) => {
                let ty = rty(func.vars[*v].ty);
                let a = self.expr(*a, out);
                if !self.params.is_empty() {
                    self.params.push(*v);
                }
                let id = self.var(*v);
                out.extend(quote!(let #id: #ty = #a;));
                self.expr(*b, out)
            }
            _ => self.leaf(e),
        }
    }

    /// The Rust name of a variable (a closure's parameter inside an outlined body).
    pub fn var(&self, v: VarId) -> TokenStream {
        match self.params.iter().position(|p| *p == v) {
            Some(k) => {
                let id = format_ident!("__p{}", k);
                quote!(#id)
            }
            None => var(v),
        }
    }

    /// The plane (its position in `planes`) a store at `index` of matrix `m` writes.
    pub fn plane_of(&self, m: usize, index: &[ExprId]) -> Option<usize> {
        self.planes.iter().position(|(n, consts)| {
            *n == m
                && index.len() > consts.len()
                && consts
                    .iter()
                    .zip(index)
                    .all(|(c, i)| matches!(self.func.exprs[*i].kind, ExprKind::Int(v) if v == *c))
        })
    }

    /// A checked store of `value` (already an expression) at `index` of matrix `m`, into the
    /// row `__w<j>` of plane `j` where a task owns it.
    pub fn store(
        &mut self,
        m: usize,
        index: &[TokenStream],
        value: TokenStream,
        plane: Option<usize>,
    ) -> TokenStream {
        let name = &self.func.matrices[m];
        let d = format_ident!("__d{}", m);
        let (target, pos) = match plane {
            Some(j) => {
                let w = format_ident!("__w{}", j);
                let from = self.planes[j].1.len() + 1;
                (
                    quote!(#w),
                    quote!(::parac::__private::cpu::row_at([#(#index),*], &#d, #from, !#w.is_empty())),
                )
            }
            None => {
                let s = format_ident!("__m{}", m);
                (
                    quote!(#s),
                    quote!(::parac::__private::cpu::at([#(#index),*], &#d)),
                )
            }
        };
        quote!(match #pos {
            ::core::result::Result::Ok(__l) => #target[__l] = #value,
            ::core::result::Result::Err(__i) => return ::core::result::Result::Err(
                ::parac::__private::cpu::out_of_bounds(__fname, __rname, "write to", #name, &__i, &#d)),
        };)
    }
}

/// `e` as an operand of a method call or an operator: in parentheses unless it is one token
/// (a name, a positive literal, a parenthesized group).
fn p(e: TokenStream) -> TokenStream {
    let mut it = e.clone().into_iter();
    match (it.next(), it.next()) {
        (Some(proc_macro2::TokenTree::Ident(_)), None) => e,
        (Some(proc_macro2::TokenTree::Literal(l)), None) if !l.to_string().starts_with('-') => e,
        (Some(proc_macro2::TokenTree::Group(g)), None)
            if g.delimiter() == proc_macro2::Delimiter::Parenthesis =>
        {
            e
        }
        _ => quote!((#e)),
    }
}

/// The Rust name of a LIR variable.
pub(super) fn var(v: crate::lir::VarId) -> TokenStream {
    let id = format_ident!("__x{}", v.index());
    quote!(#id)
}

/// A host expression of the HAST (a region's bounds) as a Rust expression, printed from its
/// LIR; a division by zero in it is the host code's (`region: "(host code)"`).
pub(crate) fn host_expr(f: &crate::ir::Function, e: &crate::ir::Expr) -> TokenStream {
    let (func, id) = crate::lir::host_expr(f, e);
    let mut x = Exprs::new(&func, std::iter::once(id));
    let mut lets = TokenStream::new();
    let v = x.tail(id, &mut lets);
    match (x.can_fail(id), lets.is_empty()) {
        (false, true) => v,
        (false, false) => quote!({ #lets #v }),
        (true, _) => quote!({ let __rname: &'static str = "(host code)"; #lets #v }),
    }
}

/// A checked read of matrix `name` (dimensions `d`) at `idx`: `ok` where it is inside (`__l`
/// its offset), else `Error::OutOfBounds` naming the read.
fn checked_read(
    name: &str,
    d: &proc_macro2::Ident,
    idx: &[TokenStream],
    ok: TokenStream,
) -> TokenStream {
    quote!(match ::parac::__private::cpu::at([#(#idx),*], &#d) {
        ::core::result::Result::Ok(__l) => #ok,
        ::core::result::Result::Err(__i) => return ::core::result::Result::Err(
            ::parac::__private::cpu::out_of_bounds(__fname, __rname, "read of", #name, &__i, &#d)),
    })
}
