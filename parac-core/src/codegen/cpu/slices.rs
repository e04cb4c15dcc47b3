//! The interior of a partitioned loop (`LoopKind::Vectorized(0)`, made by
//! `lir::pass::partition`) as a loop over slices, which LLVM vectorizes: each access the LIR
//! proved inside (`checked: false`) whose last index is the loop's variable plus a constant and
//! whose other indices do not change in the loop reads (or writes) one slice of `n` elements,
//! taken once before the loop; the loop runs `__i` over `0..n` and indexes every slice with it,
//! so that no bound is tested inside. Taking a slice is itself checked (`cpu::span`,
//! `get`, `get_disjoint_mut`): where one would not be inside its matrix, or stores would
//! overlap, the loop runs as a plain one instead, so no proof is trusted for memory safety.
//! The loop is compiled for each level of the processor's vector instructions (`cpu::vector`).
//!
//! A row of a matrix the function only writes (`lir::Func::streamed`), where every slice runs
//! forward and no column is read, has a second form, which runs where the call found the matrix
//! large (`__stream<m>`, `Runtime::cpu_stream_bytes`): the points in blocks of 2 KiB of it,
//! each block's elements stored into a buffer and put into the row with streaming stores
//! (`cpu::put`), every other slice taken a block at a time; the blocks end on the row's lines.

use super::{Loop, Printer};
use crate::ir::{BinOp, Scalar};
use crate::lir::pass::facts::{Base, affine_base};
use crate::lir::visit::{expr_children, stmt_parts};
use crate::lir::{Buf, ExprId, ExprKind, Func, Stmt, StmtId, VarId};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use std::collections::HashMap;

/// A slice of the interior: a matrix (or a temporary row), the indices of its first element,
/// its accesses.
struct Slice {
    buf: Buf,
    /// The indices before the last; the last index is `stride * v + |stride| * block + lane`
    /// (plus `base`) for the loop variable `v` (a slice of `|stride|`-element chunks where
    /// `|stride| > 1`, the lanes of `lir::pass::lanes`; read backwards where `stride < 0`).
    prefix: Vec<ExprId>,
    stride: i128,
    block: i128,
    /// A part of the last index that does not change in the loop and its coefficient
    /// (`N - 1` in `N - 1 - y`).
    base: Option<Base>,
    /// The stores it serves (none: a slice that loads read).
    stores: Vec<StmtId>,
}

/// An access along the loop: the indices before the last, the last one's stride, constant
/// offset and loop-invariant base ([`affine_base`]).
type Access = (Vec<ExprId>, i128, i128, Option<Base>);

/// A read down a column ([`Printer::column`]): index `k` of `index` is `step * v + offset`
/// (plus `base`), the others do not change in the loop.
struct Column {
    index: Vec<ExprId>,
    k: usize,
    step: i128,
    offset: i128,
    base: Option<Base>,
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
    /// The divisors of `i32`/`u32` divisions and remainders that are not constants.
    divisors: Vec<ExprId>,
}

fn scan(func: &Func, s: StmtId, b: &mut Body) {
    let (es, ss) = stmt_parts(&func.stmts[s]);
    match &func.stmts[s] {
        Stmt::Store { .. } => b.stores.push(s),
        Stmt::Let(v, _) => b.bound.push(*v),
        _ => {}
    }
    let mut stack = es;
    while let Some(e) = stack.pop() {
        match &func.exprs[e].kind {
            ExprKind::Load { buf, .. } => {
                b.loads.push(e);
                if let Buf::Matrix(m) = buf {
                    b.read.push(*m);
                }
            }
            ExprKind::Let(v, ..) => b.bound.push(*v),
            ExprKind::Fold { vars, .. } => b.bound.extend(vars.iter().copied()),
            ExprKind::Binary(BinOp::Div | BinOp::Rem, _, d)
                if matches!(func.exprs[e].ty, Scalar::I32 | Scalar::U32)
                    && !matches!(func.exprs[*d].kind, ExprKind::Int(_)) =>
            {
                b.divisors.push(*d)
            }
            _ => {}
        }
        stack.extend(expr_children(&func.exprs[e].kind));
    }
    for c in ss {
        scan(func, c, b);
    }
}

/// The Rust names of a buffer's elements and of its extents (`[i64; N]`).
fn buf_names(buf: Buf) -> (proc_macro2::Ident, proc_macro2::Ident) {
    match buf {
        Buf::Matrix(m) => (format_ident!("__m{}", m), format_ident!("__d{}", m)),
        Buf::Temp(t) => (super::temp(t), super::temp_dims(t)),
    }
}

impl Printer<'_> {
    /// Whether every load of temporary row `buf` in the loop reads the element a store at
    /// `index` writes, and that store is the row's only one here.
    fn temp_updated(&self, body: &Body, buf: Buf, index: &[ExprId]) -> bool {
        let func = self.x.func;
        let at = |i: &[ExprId]| i.iter().map(|e| self.x.canon_of(*e)).collect::<Vec<_>>();
        let want = at(index);
        let stores = body
            .stores
            .iter()
            .filter(|s| matches!(&func.stmts[**s], Stmt::Store { buf: b, .. } if *b == buf))
            .count();
        stores == 1
            && body.loads.iter().all(|e| match &func.exprs[*e].kind {
                ExprKind::Load { buf: b, index, .. } if *b == buf => at(index) == want,
                _ => true,
            })
    }

    /// The indices before the last, the last one's stride, offset and base, where an
    /// unchecked access at `index` reads or writes a slice along the loop's variable `v`:
    /// chunks of 1 to 8 elements, in order or reversed (a negative stride: a mirrored read,
    /// `src[x][N - 1 - y]`, `src[x][3 * (N - 1 - y) + c]`). The partition's test of the interior bounds every leaf of the
    /// index, so its arithmetic does not wrap there.
    fn sliceable(&self, index: &[ExprId], v: VarId, bound: &[VarId]) -> Option<Access> {
        let invariant = |e: ExprId| self.invariant(e, v, bound);
        let (stride, offset, base) = affine_base(self.func(), *index.last()?, v, &invariant)?;
        if !(1..=8).contains(&stride.abs()) {
            return None;
        }
        let prefix = self.row_invariant(index, v, bound)?;
        Some((prefix, stride, offset, base))
    }

    /// Whether `e` is the same in every iteration of the loop over `v` and can be evaluated
    /// before it.
    fn invariant(&self, e: ExprId, v: VarId, bound: &[VarId]) -> bool {
        self.x
            .free_vars(e)
            .iter()
            .all(|w| *w != v && !bound.contains(w))
            && !self.x.can_fail(e)
    }

    /// The indices before the last and the last (a constant), where an unchecked access of
    /// temporary `buf` at `index` does not move in the loop: a one-element slice, held in a
    /// register across the loop by the compiler (a prefix's running value).
    fn register(
        &self,
        buf: Buf,
        index: &[ExprId],
        v: VarId,
        bound: &[VarId],
    ) -> Option<(Vec<ExprId>, i128)> {
        let Buf::Temp(_) = buf else { return None };
        let ExprKind::Int(last) = self.func().exprs[*index.last()?].kind else {
            return None;
        };
        Some((self.row_invariant(index, v, bound)?, last))
    }

    /// The indices before the last of an access whose row does not change in the loop.
    fn row_invariant(&self, index: &[ExprId], v: VarId, bound: &[VarId]) -> Option<Vec<ExprId>> {
        let (_, prefix) = index.split_last()?;
        prefix
            .iter()
            .all(|e| self.invariant(*e, v, bound))
            .then(|| prefix.to_vec())
    }

    /// An unchecked read down a column along the loop's variable `v`: its indices, the one
    /// that moves (`k`, by `step` = 1 or -1 an iteration, with its offset and base) and the
    /// others unchanged in the loop, the last among them (`src[y][x]` along `y`, a transpose;
    /// `src[N - 1 - y][x]`, a rotation).
    fn column(&self, index: &[ExprId], v: VarId, bound: &[VarId]) -> Option<Column> {
        let invariant = |e: ExprId| self.invariant(e, v, bound);
        if index.len() < 2 || !invariant(*index.last()?) {
            return None;
        }
        let mut moving = None;
        for (k, e) in index.iter().enumerate() {
            if invariant(*e) {
                continue;
            }
            let (step, offset, base) = affine_base(self.func(), *e, v, &invariant)?;
            if moving.is_some() || step.abs() != 1 {
                return None;
            }
            moving = Some((k, step, offset, base));
        }
        let (k, step, offset, base) = moving?;
        Some(Column {
            index: index.to_vec(),
            k,
            step,
            offset,
            base,
        })
    }

    /// An index's loop-invariant part ([`affine_base`]'s base `b` times `k`) as the term
    /// `+ b * k` added to its first element, or nothing.
    fn base_term(&mut self, base: Option<Base>, out: &mut TokenStream) -> TokenStream {
        match base {
            Some((b, k)) => {
                let (b, k) = (self.x.expr(b, out), Literal::i64_suffixed(k as i64));
                quote!(+ (#b) as i64 * #k)
            }
            None => quote!(),
        }
    }

    /// The key of the slice an access of `buf` with these indices reads or writes: one
    /// per buffer, row, stride, base and chunk alignment.
    fn slice_key(&self, buf: Buf, a: &Access) -> String {
        let (prefix, stride, offset, base) = a;
        let rows: Vec<usize> = prefix.iter().map(|p| self.x.canon_of(*p)).collect();
        let base = base.map(|(b, k)| (self.x.canon_of(b), k));
        format!(
            "{buf:?}:{rows:?}:{stride}:{base:?}:{}",
            offset.div_euclid(stride.abs().max(1))
        )
    }

    /// The interior loop `l` over slices, falling back to a plain loop.
    pub(super) fn vectorized(&mut self, l: Loop, out: &mut TokenStream) -> TokenStream {
        let func = self.x.func;
        let mut body = Body::default();
        scan(func, l.body, &mut body);
        let mut slices: Vec<Slice> = Vec::new();
        let mut key_of: HashMap<String, usize> = HashMap::new();
        // Chunked slices (stride > 1): stores only where every lane of a chunk is written (the
        // lanes of `lir::pass::lanes`); loads always (a downsampling read: the interior ends
        // where its last chunk fits its row, `lir::pass::partition`; where one would not, the
        // slice is not taken and the loop runs plain).
        let mut lanes_seen: HashMap<String, Vec<i128>> = HashMap::new();
        let accesses = body
            .stores
            .iter()
            .filter_map(|s| match &func.stmts[*s] {
                Stmt::Store { buf, index, .. } => Some((*buf, index.clone())),
                _ => None,
            })
            .chain(
                body.loads
                    .iter()
                    .filter_map(|e| match &func.exprs[*e].kind {
                        ExprKind::Load { buf, index, .. } => Some((*buf, index.clone())),
                        _ => None,
                    }),
            );
        for (m, index) in accesses {
            if let Some(a) = self.sliceable(&index, l.var, &body.bound) {
                let (st, o) = (a.1, a.2);
                let lanes = lanes_seen.entry(self.slice_key(m, &a)).or_default();
                if !lanes.contains(&o.rem_euclid(st)) {
                    lanes.push(o.rem_euclid(st));
                }
            }
        }
        let chunked = |m: Buf, a: &Access| {
            a.1.abs() <= 1
                || lanes_seen
                    .get(&self.slice_key(m, a))
                    .is_some_and(|l| l.len() as i128 == a.1.abs())
        };
        // A slice per matrix, row and chunk alignment; each access its lane in it.
        let mut add = |slices: &mut Vec<Slice>, m: Buf, a: Access, x: &Self| {
            let key = x.slice_key(m, &a);
            let (prefix, stride, offset, base) = a;
            // Stride 0: a register (`Printer::register`), its element `offset`.
            let (block, lane) = match stride {
                0 => (offset, 0),
                _ => (
                    offset.div_euclid(stride.abs()),
                    offset.rem_euclid(stride.abs()),
                ),
            };
            let k = *key_of.entry(key).or_insert_with(|| {
                slices.push(Slice {
                    buf: m,
                    prefix,
                    stride,
                    block,
                    base,
                    stores: vec![],
                });
                slices.len() - 1
            });
            let v = format_ident!("__vs{}", k);
            let at = if stride == 0 {
                // A local across the loop (`__vk`), stored back after it.
                let r = format_ident!("__vk{}", k);
                quote!(#r)
            } else if stride == 1 {
                quote!(#v[__i])
            } else if stride == -1 {
                // A reversed slice starts at the last iteration's element.
                quote!(#v[__vn - 1 - __i])
            } else if stride < 0 {
                let lane = lane as usize;
                quote!(#v[__vn - 1 - __i][#lane])
            } else {
                let lane = lane as usize;
                quote!(#v[__i][#lane])
            };
            (k, at)
        };
        // Stores: every store of a matrix must be a slice's, and the matrix unread here.
        let mut store_slices: Vec<(StmtId, usize, TokenStream)> = Vec::new();
        let mut refused: Vec<Buf> = Vec::new();
        let mut candidates: Vec<(StmtId, Buf, Access)> = Vec::new();
        for s in &body.stores {
            let Stmt::Store {
                buf,
                index,
                checked,
                ..
            } = &func.stmts[*s]
            else {
                continue;
            };
            let unread = match buf {
                Buf::Matrix(m) => !body.read.contains(m),
                // A temporary row may be read here at the stored element alone (an update).
                Buf::Temp(_) => self.temp_updated(&body, *buf, index),
            };
            let register = || self.register(*buf, index, l.var, &body.bound);
            match (*checked, self.sliceable(index, l.var, &body.bound)) {
                (false, Some(a)) if unread && chunked(*buf, &a) => candidates.push((*s, *buf, a)),
                (false, None) if unread && register().is_some() => {
                    let (p, o) = register().expect("a register");
                    candidates.push((*s, *buf, (p, 0, o, None)))
                }
                _ => refused.push(*buf),
            }
        }
        // Temporary rows stored through a slice: their loads read the stored element.
        let mut updated: HashMap<Buf, TokenStream> = HashMap::new();
        for (s, m, a) in candidates {
            if refused.contains(&m) {
                continue;
            }
            let (k, at) = add(&mut slices, m, a, self);
            slices[k].stores.push(s);
            if let Buf::Temp(_) = m {
                updated.insert(m, at.clone());
            }
            store_slices.push((s, k, at));
        }

        // Loads of matrices this region does not write.
        let mut load_slices: Vec<(usize, TokenStream)> = Vec::new();
        // Rows that loads gather from: key, matrix, the indices before the last.
        let mut rows: Vec<(String, usize, Vec<ExprId>)> = Vec::new();
        let mut row_loads: Vec<(usize, usize)> = Vec::new();
        // Reads down columns: matrix and column.
        let mut columns: Vec<(usize, Column)> = Vec::new();
        for e in &body.loads {
            let ExprKind::Load {
                buf,
                index,
                checked,
            } = &func.exprs[*e].kind
            else {
                continue;
            };
            if let Some(at) = updated.get(buf) {
                load_slices.push((self.x.canon_of(*e), at.clone()));
                continue;
            }
            let written = match buf {
                Buf::Matrix(m) => self.x.written.get(*m).copied().unwrap_or(false),
                Buf::Temp(_) => refused.contains(buf),
            };
            if *checked || written {
                continue;
            }
            let sliced = self.sliceable(index, l.var, &body.bound);
            if let Some(a) = sliced {
                let (_, at) = add(&mut slices, *buf, a, self);
                load_slices.push((self.x.canon_of(*e), at));
            } else if let (Buf::Matrix(m), Some(c)) = (buf, self.column(index, l.var, &body.bound))
            {
                // Its elements a row apart in one range of the matrix, taken once.
                let g = columns.len();
                let (v, st) = (format_ident!("__vc{}", g), format_ident!("__vcs{}", g));
                let i = match c.step {
                    1 => quote!(__i),
                    _ => quote!((__vn - 1 - __i)),
                };
                load_slices.push((
                    self.x.canon_of(*e),
                    quote!(#v.get(#i * #st).copied().unwrap_or_default()),
                ));
                columns.push((*m, c));
            } else if let (Buf::Matrix(m), Some(p)) =
                (buf, self.row_invariant(index, l.var, &body.bound))
            {
                // A gather from one row: that row's slice, indexed with no branch.
                let key = format!(
                    "{m}:{:?}",
                    p.iter().map(|x| self.x.canon_of(*x)).collect::<Vec<_>>()
                );
                let g = match rows.iter().position(|(k2, ..)| *k2 == key) {
                    Some(g) => g,
                    None => {
                        rows.push((key, *m, p));
                        rows.len() - 1
                    }
                };
                row_loads.push((self.x.canon_of(*e), g));
            }
        }
        if slices.is_empty() && rows.is_empty() && columns.is_empty() {
            return self.serial(l, out);
        }
        // Before the loop: its range and each slice's first element.
        let (lo, hi) = (self.x.expr(l.lo, out), self.x.expr(l.hi, out));
        let mut take = TokenStream::new();
        // Registers' values stored back after the loop.
        let mut back = TokenStream::new();
        let mut by_dst: Vec<(proc_macro2::Ident, Vec<usize>)> = Vec::new();
        for (k, s) in slices.iter().enumerate() {
            let mut idx: Vec<TokenStream> = s.prefix.iter().map(|p| self.x.expr(*p, out)).collect();
            let (st, off) = (
                Literal::i64_suffixed(s.stride.abs() as i64),
                Literal::i64_suffixed((s.stride.abs() * s.block) as i64),
            );
            let base = self.base_term(s.base, out);
            // A register's element; a slice's first, from the loop's first iteration (a
            // reversed row's from its last).
            idx.push(match s.stride {
                0 => {
                    let at = Literal::i64_suffixed(s.block as i64);
                    quote!(#at)
                }
                ..0 => quote!(#off - (__va + __vn as i64 - 1) * #st #base),
                _ => quote!(__va * #st + #off #base),
            });
            let (src, d) = buf_names(s.buf);
            let r = format_ident!("__vr{}", k);
            let st_n = s.stride.abs().max(1) as usize;
            let len = match s.stride {
                0 => quote!(1usize),
                _ => quote!(__vn * #st_n),
            };
            // A store into a row a task owns: the row of its plane.
            let plane = match s.buf {
                Buf::Matrix(m) if !s.stores.is_empty() => self.x.plane_of(m, &s.prefix),
                _ => None,
            };
            let span = match plane {
                Some(j) => {
                    let from = self.x.planes[j].1.len() + 1;
                    quote!(::parac::__private::cpu::row_span([#(#idx),*], &#d, #len, #from))
                }
                None => quote!(::parac::__private::cpu::span([#(#idx),*], &#d, #len)),
            };
            take.extend(
                quote!(let ::core::option::Option::Some(#r) = #span else { return ::core::result::Result::Ok(false); };),
            );
            if s.stores.is_empty() {
                let v = format_ident!("__vs{}", k);
                let chunks = (st_n > 1).then(|| quote!(let (#v, _) = #v.as_chunks::<#st_n>();));
                take.extend(quote! {
                    let ::core::option::Option::Some(#v) = #src.get(#r) else { return ::core::result::Result::Ok(false); };
                    #chunks
                    let #v = &#v[..__vn];
                });
            } else {
                let dst = match plane {
                    Some(j) => format_ident!("__w{}", j),
                    None => src,
                };
                match by_dst.iter_mut().find(|(d, _)| *d == dst) {
                    Some((_, ks)) => ks.push(k),
                    None => by_dst.push((dst, vec![k])),
                }
            }
        }
        for (dst, ks) in &by_dst {
            let names: Vec<_> = ks.iter().map(|k| format_ident!("__vs{}", k)).collect();
            let ranges: Vec<_> = ks.iter().map(|k| format_ident!("__vr{}", k)).collect();
            take.extend(quote! {
                let ::core::result::Result::Ok([#(#names),*]) = #dst.get_disjoint_mut([#(#ranges),*]) else {
                    return ::core::result::Result::Ok(false);
                };
            });
            for k in ks {
                let v = format_ident!("__vs{}", k);
                let st_n = slices[*k].stride.unsigned_abs() as usize;
                if st_n > 1 {
                    take.extend(quote!(let (#v, _) = #v.as_chunks_mut::<#st_n>();));
                }
                take.extend(match slices[*k].stride {
                    0 => {
                        let r = format_ident!("__vk{}", k);
                        back.extend(quote!(#v[0] = #r;));
                        quote!(let #v = &mut #v[..1]; let mut #r = #v[0];)
                    }
                    _ => quote!(let #v = &mut #v[..__vn];),
                });
            }
        }
        for (g, (_, m, p)) in rows.iter().enumerate() {
            let mut idx: Vec<TokenStream> = p.iter().map(|e| self.x.expr(*e, out)).collect();
            idx.push(quote!(0i64));
            let d = format_ident!("__d{}", m);
            let (v, last, src) = (
                format_ident!("__vg{}", g),
                format_ident!("__vgl{}", g),
                format_ident!("__m{}", m),
            );
            let n = quote!(#d[#d.len() - 1].max(0) as usize);
            take.extend(quote! {
                let ::core::option::Option::Some(#v) = ::parac::__private::cpu::span([#(#idx),*], &#d, #n)
                    .and_then(|__r| #src.get(__r)) else {
                    return ::core::result::Result::Ok(false);
                };
            });
            // A row of a constant length (a lookup table's, `lut: u8[256]`) as an array: an
            // index its type bounds (a `u8`) needs neither the clamp nor a comparison.
            let row_len = self.f.matrices[*m]
                .const_dims()
                .and_then(|d| d.last().copied())
                .filter(|l| *l <= 1 << 16)
                .map(|l| l as usize);
            take.extend(match row_len {
                Some(l) => {
                    let (l, end) = (Literal::usize_unsuffixed(l), Literal::usize_suffixed(l - 1));
                    let t = super::host::rty(self.f.matrices[*m].elem);
                    quote! {
                        let ::core::result::Result::Ok(#v) = <&[#t; #l]>::try_from(#v) else {
                            return ::core::result::Result::Ok(false);
                        };
                        let #last: usize = #end;
                    }
                }
                None => quote! {
                    let ::core::option::Option::Some(#last) = #v.len().checked_sub(1) else {
                        return ::core::result::Result::Ok(false);
                    };
                },
            });
        }
        for (g, (m, c)) in columns.iter().enumerate() {
            // The column's element at the loop's first iteration.
            let idx: Vec<TokenStream> = c
                .index
                .iter()
                .enumerate()
                .map(|(j, e)| match j == c.k {
                    false => self.x.expr(*e, out),
                    true => {
                        let (st, off) = (
                            Literal::i64_suffixed(c.step as i64),
                            Literal::i64_suffixed(c.offset as i64),
                        );
                        let base = self.base_term(c.base, out);
                        quote!(__va * #st + #off #base)
                    }
                })
                .collect();
            let (k, step) = (c.k, Literal::i64_suffixed(c.step as i64));
            let (d, src) = (format_ident!("__d{}", m), format_ident!("__m{}", m));
            let (v, st) = (format_ident!("__vc{}", g), format_ident!("__vcs{}", g));
            take.extend(quote! {
                let ::core::option::Option::Some((#v, #st)) = ::parac::__private::cpu::column([#(#idx),*], &#d, #k, #step, __vn)
                    .and_then(|(__r, __s)| ::core::option::Option::Some((#src.get(__r)?, __s))) else {
                    return ::core::result::Result::Ok(false);
                };
            });
        }
        // A load left out of the slices is a gather: the AVX2 copy's vector gathers were
        // slower here than the plain copy's scalar loads (sharpen's upsampling: 25 against 15 ms).
        let gathers = body.loads.iter().any(|e| {
            let c = self.x.canon_of(*e);
            !load_slices.iter().any(|(d, _)| *d == c)
        });
        // Loop-invariant divisors: evaluated before the loop, and the loop runs plain where one
        // is zero (it fails where the plain loop divides) or -1.
        for d in &body.divisors {
            let c = self.x.canon_of(*d);
            let free_ok = self
                .x
                .free_vars(*d)
                .iter()
                .all(|w| *w != l.var && !body.bound.contains(w));
            if !free_ok || self.x.can_fail(*d) || self.x.fast_div.contains_key(&c) {
                continue;
            }
            let v = self.x.expr(*d, out);
            let (name, t) = (
                format_ident!("__vd{}", c),
                super::host::rty(func.exprs[*d].ty),
            );
            out.extend(quote!(let #name: #t = #v;));
            // -1 too: i32::MIN / -1 wraps, which the conversion from f64 would not.
            take.extend(quote!(if #name == 0 || #name == (0 as #t).wrapping_sub(1) {
                return ::core::result::Result::Ok(false);
            }));
            self.x.fast_div.insert(c, name);
        }
        // The loop over slices.
        self.x.epoch += 1;
        self.x.hoisted = load_slices.iter().cloned().collect();
        self.x.gathered = row_loads
            .iter()
            .map(|(c, g)| {
                (
                    *c,
                    (format_ident!("__vg{}", g), format_ident!("__vgl{}", g)),
                )
            })
            .collect();
        // Rows of a matrix the function only writes (`lir::pass::stream`), in blocks along the
        // row: each block's elements stored into a buffer, then put into the row (`cpu::put`),
        // with streaming stores where the call found the matrix large. Every slice is then
        // taken a block at a time (so none may run backwards, and no column be read).
        // Each streamed slice and its matrix.
        let streamed: Vec<(usize, usize)> = match slices.iter().all(|s| s.stride >= 0)
            && columns.is_empty()
        {
            true => (slices.iter().enumerate())
                .filter_map(|(k, s)| match s.buf {
                    Buf::Matrix(m)
                        if s.stride == 1 && !s.stores.is_empty() && func.streamed.contains(&m) =>
                    {
                        Some((k, m))
                    }
                    _ => None,
                })
                .collect(),
            false => Vec::new(),
        };
        let is_streamed = |k: usize| streamed.iter().any(|(j, _)| *j == k);
        // No arm is outlined into a closure of the region here: it could not see the slices.
        let defs = self.x.defs.take();
        self.hoisted_stores = store_slices
            .iter()
            .map(|(s, _, at)| (*s, at.clone()))
            .collect();
        let inner = self.braced(l.body);
        // The same points storing a streamed row's elements into its block's buffer.
        let inner_streamed = match streamed.is_empty() {
            true => TokenStream::new(),
            false => {
                for (s, k, _) in &store_slices {
                    if is_streamed(*k) {
                        let b = format_ident!("__sb{}", k);
                        self.hoisted_stores.insert(*s, quote!(#b[__i]));
                    }
                }
                self.x.epoch += 1;
                self.braced(l.body)
            }
        };
        self.x.defs = defs;
        self.x.hoisted.clear();
        self.x.gathered.clear();
        self.x.fast_div.clear();
        self.hoisted_stores.clear();
        self.x.epoch += 1;
        let id = super::expr::var(l.var);
        let plain_points = quote! {
            for __i in 0..__vn {
                let #id: i32 = (__va + __i as i64) as i32;
                #inner
            }
        };
        // The streamed form, and the flag that chooses it.
        let streamed_points = match streamed.is_empty() {
            true => None,
            false => {
                let (mut bufs, mut lens, mut puts) =
                    (TokenStream::new(), Vec::new(), TokenStream::new());
                let first = format_ident!("__vs{}", streamed[0].0);
                let flags = streamed.iter().map(|(_, m)| stream_flag(*m));
                let flags = quote!(false #(|| #flags)*);
                // The block of every other slice (a register's is its one element).
                let mut blocks = TokenStream::new();
                for (k, sl) in slices.iter().enumerate() {
                    if sl.stride == 0 || is_streamed(k) {
                        continue;
                    }
                    let v = format_ident!("__vs{}", k);
                    blocks.extend(match sl.stores.is_empty() {
                        true => quote!(let #v = &#v[__blk..__bend];),
                        false => quote!(let #v = &mut #v[__blk..__bend];),
                    });
                }
                for (k, m) in &streamed {
                    let t = super::host::rty(self.f.matrices[*m].elem);
                    let (b, v) = (format_ident!("__sb{}", k), format_ident!("__vs{}", k));
                    let len = quote!(::parac::__private::cpu::block_len::<#t>());
                    bufs.extend(quote! {
                        let mut #b = ::parac::__private::cpu::Block::new();
                        let #b: &mut [#t] = #b.of::<#t>();
                    });
                    puts.extend(quote! {
                        ::parac::__private::cpu::put(&mut #v[__blk..__bend], &#b[..__bn]);
                    });
                    blocks.extend(quote!(let #b = &mut #b[..__bn];));
                    lens.push(len);
                }
                // Streamed where the call found a streamed matrix large; the rows of smaller
                // ones as any other (a buffer's copy would cost more than the stores save).
                let points = quote! {
                        #bufs
                        let __sbn: usize = [#(#lens),*].into_iter().min().unwrap_or(1);
                        let mut __blk: usize = 0;
                        while __blk < __vn {
                            // Blocks end on the first streamed row's lines.
                            let __bend: usize = ::parac::__private::cpu::block_end(
                                #first.as_ptr(), __blk, __sbn, __vn,
                            );
                            let __bn: usize = __bend - __blk;
                            {
                                #blocks
                                for __i in 0..__bn {
                                    let #id: i32 = (__va + (__blk + __i) as i64) as i32;
                                    #inner_streamed
                                }
                            }
                            #puts
                            __blk = __bend;
                        }
                };
                Some((flags, points))
            }
        };
        let closure = |points: &TokenStream| {
            quote!(|| -> ::core::result::Result<bool, ::parac::Error> {
                #take
                #points
                #back
                ::core::result::Result::Ok(true)
            })
        };
        // Compiled once per vector level the architecture has (x86_64: AVX-512 and AVX2), the
        // level chosen when the program runs (`CpuIsa`); with none, the plain loop. The closure
        // is called from each level's copy, two call sites, which LLVM's inliner does not
        // merge into its callers on its own once the body is large: without `inline(always)`
        // every level ran one out-of-line body compiled for the baseline (SSE2).
        let run = |closure: TokenStream| match gathers {
            true => quote!((#closure)()?),
            false => {
                quote!(match ::parac::__private::cpu::vector(__isa, #[inline(always)] #closure) {
                    ::core::option::Option::Some(__r) => __r?,
                    ::core::option::Option::None => false,
                })
            }
        };
        // The streamed form in a closure of its own: the plain one compiles as without it.
        let fast = match streamed_points {
            None => run(closure(&plain_points)),
            Some((flags, points)) => {
                let (streamed, plain) = (run(closure(&points)), run(closure(&plain_points)));
                quote!(if #flags { #streamed } else { #plain })
            }
        };
        let mut plain_out = TokenStream::new();
        let plain = self.serial(l, &mut plain_out);
        quote! {{
            let __va: i64 = (#lo) as i64;
            let __vb: i64 = (#hi) as i64;
            let __vn: usize = if __vb > __va { (__vb - __va) as usize } else { 0 };
            // The closure inlined into each vector level's copy. Inside it, the slices' lengths
            // are known where the loop indexes them.
            let __fast: bool = #fast;
            if !__fast {
                #plain_out
                #plain
            }
        }}
    }
}

/// The name of the flag that says whether a call writes matrix `m` (one of
/// `lir::Func::streamed`) with streaming stores.
pub(super) fn stream_flag(m: usize) -> proc_macro2::Ident {
    format_ident!("__stream{}", m)
}
