//! The CPU back end: plain Rust for every region, emitted by the macro. It runs where no OpenCL
//! device exists and serves the tests as a second implementation.
//!
//! - C semantics: the IR's explicit casts become `as`, integer arithmetic wraps, `/` truncates
//!   and a division by zero is an `Error::DivisionByZero`, never a panic.
//! - Every access is bounds-checked; outside a matrix, the border rules in force give the value
//!   (entering the expression at its own type, not wrapped to the element type), and an access
//!   no rule covers is an `Error::OutOfBounds`.
//! - A region runs its first iteration dimension in parallel (rayon) when every write's first
//!   subscript is exactly that index variable and the region reads nothing it writes: each task
//!   then owns whole rows. Other regions run sequentially, and so does a row-parallel region on a
//!   call where some iteration's row is outside a matrix it writes (or a written matrix has
//!   empty rows): its body is one closure, called on each task's row or, in order, on each row
//!   (an empty slice for a missing one), so that a store fails where it runs and only there.

pub(crate) mod proof;

use crate::check::relative::affine;
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

/// A typed literal.
pub(crate) fn lit(v: f64, s: Scalar) -> TokenStream {
    let l = match s {
        Scalar::Bool => {
            return if v != 0.0 {
                quote!(true)
            } else {
                quote!(false)
            };
        }
        Scalar::U8 => Literal::u8_suffixed(v as u8),
        Scalar::I8 => Literal::i8_suffixed(v as i8),
        Scalar::U16 => Literal::u16_suffixed(v as u16),
        Scalar::I16 => Literal::i16_suffixed(v as i16),
        Scalar::U32 => Literal::u32_suffixed(v as u32),
        Scalar::I32 => Literal::i32_suffixed(v as i32),
        Scalar::I64 => Literal::i64_suffixed(v as i64),
        Scalar::U64 => Literal::u64_suffixed(v as u64),
        Scalar::F32 => Literal::f32_suffixed(v as f32),
    };
    quote!(#l)
}

pub(crate) fn int_lit(v: i128, s: Scalar) -> TokenStream {
    match s {
        Scalar::F32 => lit(v as f64, s),
        Scalar::Bool => lit((v != 0) as i32 as f64, s),
        _ => {
            let l = match s {
                Scalar::U8 => Literal::u8_suffixed(v as u8),
                Scalar::I8 => Literal::i8_suffixed(v as i8),
                Scalar::U16 => Literal::u16_suffixed(v as u16),
                Scalar::I16 => Literal::i16_suffixed(v as i16),
                Scalar::U32 => Literal::u32_suffixed(v as u32),
                Scalar::I32 => Literal::i32_suffixed(v as i32),
                Scalar::U64 => Literal::u64_suffixed(v as u64),
                _ => Literal::i64_suffixed(v as i64),
            };
            quote!(#l)
        }
    }
}

/// How the code of a region reaches one matrix.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum View {
    /// A shared slice of the whole matrix.
    Read,
    /// A mutable slice of the whole matrix (sequential regions).
    Write,
    /// The task's own row (row-parallel regions): the first subscript is the task's index.
    Row,
}

struct Gen<'a> {
    f: &'a Function,
    /// The region being generated (None for host code).
    r: Option<&'a Region>,
    region_name: String,
    views: Vec<Option<View>>,
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

/// The generated statements of a function's CPU path (after the [`prelude`]): locals, host
/// steps, regions; evaluates to the function's result.
pub fn cpu_body(f: &Function) -> TokenStream {
    let mut out = TokenStream::new();
    // Parameters as contiguous slices (a strided view or a region of interest is copied in,
    // and an output back when the call ends).
    for (mat, p) in f.matrices.iter().map(|m| (m, format_ident!("{}", m.name))) {
        let n = &mat.name;
        out.extend(match mat.kind {
            MatrixKind::Input => quote!(let #p = ::parac::__private::contiguous(#p, #n)?;),
            MatrixKind::Output => quote!(let mut #p = ::parac::__private::contiguous_mut(#p, #n)?;),
            _ => continue,
        });
    }
    for (m, mat) in f.matrices.iter().enumerate() {
        if mat.kind == MatrixKind::Local {
            let d = format_ident!("__d{}", m);
            let own = format_ident!("__own{}", m);
            let t = rty(mat.elem);
            out.extend(quote!(let mut #own: ::parac::Matrix<#t> = ::parac::Matrix::zeros(#d.iter().map(|d| (*d).max(0) as usize).collect::<::std::vec::Vec<usize>>());));
        }
    }
    let mut returned = false;
    for step in &f.steps {
        let host = Gen {
            f,
            r: None,
            region_name: "(host code)".to_string(),
            views: vec![],
        };
        match step {
            HostStep::Run(r) => {
                out.extend(proof::region_check(f, *r));
                out.extend(region(f, &f.regions[*r]));
            }
            HostStep::Let(s, e) => {
                let v = format_ident!("__s{}", s);
                let t = rty(f.scalars[*s].ty);
                let e = host.expr(e);
                out.extend(quote!(let #v: #t = #e;));
            }
            HostStep::Return(e) => {
                let e = host.expr(e);
                out.extend(quote!(return ::core::result::Result::Ok(#e);));
                returned = true;
            }
        }
    }
    if !returned {
        out.extend(quote!(::core::result::Result::Ok(())));
    }
    out
}

/// Host expressions (sizes, scalars, arithmetic) as Rust, for the device path's host code.
pub fn host_expr_gen(f: &Function) -> impl Fn(&Expr) -> TokenStream + '_ {
    move |e| {
        Gen {
            f,
            r: None,
            region_name: "(host code)".to_string(),
            views: vec![],
        }
        .expr(e)
    }
}

/// The expression giving a matrix's slice of the kind `view`.
pub(crate) fn slice_of(f: &Function, m: MatrixId, view: View) -> TokenStream {
    let mat = &f.matrices[m];
    let t = rty(mat.elem);
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

/// The slot a row-parallel region is split on, if it can be.
pub(crate) fn row_parallel(f: &Function, r: &Region) -> Option<usize> {
    let slot = r.dims.iter().position(Option::is_some)?;
    let written: Vec<MatrixId> = r
        .accesses
        .iter()
        .filter(|a| a.write)
        .map(|a| a.matrix)
        .collect();
    if written.is_empty() {
        return None;
    }
    let rows = |m: MatrixId| f.matrices[m].dims.first().map(|d| format!("{d:?}"));
    let first_rows = rows(written[0]);
    for a in &r.accesses {
        if !a.write {
            if written.contains(&a.matrix) {
                return None;
            }
            continue;
        }
        // Same number of rows in every matrix written (the row chunks are zipped).
        if rows(a.matrix) != first_rows {
            return None;
        }
        let Some(Sub::Point(e)) = a.subs.first() else {
            return None;
        };
        let aff = affine(f, r, e)?;
        let only_slot = aff
            .coefs
            .iter()
            .enumerate()
            .all(|(s, c)| if s == slot { *c == 1 } else { *c == 0 });
        if !only_slot || aff.offset != 0 {
            return None;
        }
    }
    // Writes under an `if` are fine: the row still belongs to the task.
    Some(slot)
}

fn region(f: &Function, r: &Region) -> TokenStream {
    let name = r.name.as_str();
    if let RegionKind::Reduction { op, matrix, result } = r.kind {
        return reduction(f, op, matrix, result);
    }
    let par = row_parallel(f, r);
    let mut views: Vec<Option<View>> = vec![None; f.matrices.len()];
    for a in r.accesses.iter().filter(|a| a.write) {
        views[a.matrix] = Some(if par.is_some() {
            View::Row
        } else {
            View::Write
        });
    }
    for a in r.accesses.iter().filter(|a| !a.write) {
        views[a.matrix].get_or_insert(View::Read);
    }
    // Border values read the matrix they extend.
    for id in &r.rules {
        for e in &f.rules[*id].entries {
            if views[e.matrix].is_none() {
                views[e.matrix] = Some(View::Read);
            }
        }
    }
    let g = Gen {
        f,
        r: Some(r),
        region_name: name.to_string(),
        views,
    };
    let mut prelude = TokenStream::new();
    for (m, v) in g.views.iter().enumerate() {
        if let Some(View::Read | View::Write) = v {
            let s = format_ident!("__m{}", m);
            let sl = slice_of(f, m, v.expect("some"));
            prelude.extend(quote!(let #s = #sl;));
        }
    }
    let body = g.stmts(&r.body);
    // Loops over the slots (all but the parallel one).
    let mut inner = body;
    for (slot, d) in r.dims.iter().enumerate().rev() {
        let Some(d) = d else { continue };
        if Some(slot) == par {
            continue;
        }
        let v = format_ident!("__v{}", slot);
        let lo = g.expr(&d.lo);
        let hi = g.expr(&d.hi);
        let step = Literal::i32_suffixed(d.step as i32);
        // One counter per slot: a shared name would be shadowed by the inner loop.
        let (c, h) = (format_ident!("__c{}", slot), format_ident!("__hi{}", slot));
        inner = quote! {
            let #h: i64 = (#hi) as i64;
            let mut #c: i64 = (#lo) as i64;
            while #c < #h {
                let #v: i32 = #c as i32;
                #inner
                #c += #step as i64;
            }
        };
    }
    match par {
        None => quote! {
            {
                #prelude
                #inner
            }
        },
        Some(slot) => {
            let d = r.dims[slot].as_ref().expect("parallel slot");
            let v = format_ident!("__v{}", slot);
            let lo = g.expr(&d.lo);
            let hi = g.expr(&d.hi);
            let step = Literal::i32_suffixed(d.step as i32);
            let written: Vec<MatrixId> = g
                .views
                .iter()
                .enumerate()
                .filter(|(_, v)| **v == Some(View::Row))
                .map(|(m, _)| m)
                .collect();
            // Zip the row chunks of every matrix written; the same names, typed, are the body's
            // parameters, and the serial fallback binds them to one row each.
            let mut iter = TokenStream::new();
            let mut pat = TokenStream::new();
            let mut pat_ty = TokenStream::new();
            let mut have_rows = quote!(true);
            let mut serial_rows = TokenStream::new();
            for (i, m) in written.iter().enumerate() {
                let sl = slice_of(f, *m, View::Write);
                let d = format_ident!("__d{}", m);
                let w = format_ident!("__w{}", m);
                let len = format_ident!("__len{}", m);
                let t = rty(f.matrices[*m].elem);
                let chunks = quote!(#sl.par_chunks_mut(#len.max(1)));
                if i == 0 {
                    iter = chunks;
                    pat = quote!(#w);
                    pat_ty = quote!(&mut [#t]);
                } else {
                    iter = quote!(#iter.zip(#chunks));
                    pat = quote!((#pat, #w));
                    pat_ty = quote!((#pat_ty, &mut [#t]));
                }
                have_rows = quote!(#have_rows && #len > 0);
                // A row outside the matrix (or of a matrix with empty rows) is an empty slice:
                // every store to it fails its bounds check, with its index.
                serial_rows.extend(quote! {
                    let #w: &mut [#t] = if __r >= 0 && __r < #d[0] {
                        #sl.get_mut((__r as usize) * #len..(__r as usize + 1) * #len)
                            .unwrap_or(&mut [])
                    } else {
                        &mut []
                    };
                });
            }
            let lens = written.iter().map(|m| {
                let d = format_ident!("__d{}", m);
                let len = format_ident!("__len{}", m);
                quote!(let #len: usize = #d[1..].iter().product::<i64>() as usize;)
            });
            let d0 = format_ident!("__d{}", written[0]);
            quote! {
                {
                    use ::parac::__private::rayon::prelude::*;
                    #prelude
                    let (__lo, __hi): (i32, i32) = (#lo, #hi);
                    #(#lens)*
                    let __body = |#v: i32, #pat: #pat_ty| -> ::core::result::Result<(), ::parac::Error> {
                        #inner
                        ::core::result::Result::Ok(())
                    };
                    // In parallel when every iteration owns an existing row; otherwise in order,
                    // so that a store fails where it runs and only there.
                    let __parallel = __hi <= __lo || {
                        let __last = __lo as i64 + ((__hi as i64 - __lo as i64 - 1) / #step as i64) * #step as i64;
                        __lo >= 0 && __last < #d0[0] && #have_rows
                    };
                    if __parallel {
                        #iter.enumerate().try_for_each(|(__row, #pat)| -> ::core::result::Result<(), ::parac::Error> {
                            let #v: i32 = __row as i32;
                            if #v < __lo || #v >= __hi || (#v - __lo) % #step != 0 {
                                return ::core::result::Result::Ok(());
                            }
                            __body(#v, #pat)
                        })?;
                    } else {
                        let mut __r: i64 = __lo as i64;
                        while __r < __hi as i64 {
                            #serial_rows
                            __body(__r as i32, #pat)?;
                            __r += #step as i64;
                        }
                    }
                }
            }
        }
    }
}

pub(crate) fn reduction(f: &Function, op: ReduceOp, m: MatrixId, result: ScalarId) -> TokenStream {
    let mat = &f.matrices[m];
    let sl = slice_of(f, m, View::Read);
    let s = format_ident!("__s{}", result);
    let rt = rty(f.scalars[result].ty);
    let float = mat.elem.is_float();
    let p = rty(mat.elem.promote());
    let fname = &f.name;
    let rname = format!("{}_{}", op.name(), mat.name);
    let sum = if float {
        quote!(
            __m.par_chunks(4096)
                .map(|c| c.iter().map(|v| *v as f64).sum::<f64>())
                .sum::<f64>()
        )
    } else {
        quote!(
            __m.par_iter()
                .map(|v| *v as i64)
                .reduce(|| 0i64, |a, b| a.wrapping_add(b))
        )
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
            quote!(__m.par_iter().map(|v| *v).reduce(|| f32::INFINITY, f32::min) as #rt)
        }
        ReduceOp::Max if float => {
            quote!(__m.par_iter().map(|v| *v).reduce(|| f32::NEG_INFINITY, f32::max) as #rt)
        }
        ReduceOp::Min => {
            quote!(__m.par_iter().map(|v| *v as #p).reduce(|| #p::MAX, ::core::cmp::Ord::min) as #rt)
        }
        ReduceOp::Max => {
            quote!(__m.par_iter().map(|v| *v as #p).reduce(|| #p::MIN, ::core::cmp::Ord::max) as #rt)
        }
    };
    quote! {
        let #s: #rt = {
            use ::parac::__private::rayon::prelude::*;
            let __m = #sl;
            #value
        };
    }
}

impl Gen<'_> {
    fn stmts(&self, stmts: &[KStmt]) -> TokenStream {
        let mut out = TokenStream::new();
        for s in stmts {
            out.extend(match s {
                KStmt::Let(l, e) => {
                    let v = format_ident!("__l{}", l);
                    let value = if e.ty.is_block() {
                        self.block(e)
                    } else {
                        self.expr(e)
                    };
                    quote!(let #v = #value;)
                }
                KStmt::Store(a, e) => self.store(*a, e),
                KStmt::If(c, t, e) => {
                    let c = self.expr(c);
                    let t = self.stmts(t);
                    let e = self.stmts(e);
                    quote!(if #c { #t } else { #e })
                }
            });
        }
        out
    }

    fn accesses(&self) -> &[Access] {
        self.r.map_or(&[], |r| &r.accesses)
    }

    fn oob(&self, what: &str, m: MatrixId, n: usize) -> TokenStream {
        let fname = &self.f.name;
        let rname = &self.region_name;
        let mname = &self.f.matrices[m].name;
        let d = format_ident!("__d{}", m);
        let idx = (0..n).map(|k| format_ident!("__i{}", k));
        quote! {
            return ::core::result::Result::Err(::parac::Error::OutOfBounds {
                function: #fname, region: #rname, what: #what, matrix: #mname,
                index: ::std::vec![#(#idx),*],
                shape: #d.iter().map(|d| *d as usize).collect(),
            })
        }
    }

    /// `let __i0 = ..; let __i1 = ..;` for an access, with window offsets `__bi`, `__bj`.
    fn indices(&self, a: &Access, in_block: bool) -> TokenStream {
        let n = a.subs.len();
        let mut out = TokenStream::new();
        for (k, s) in a.subs.iter().enumerate() {
            let i = format_ident!("__i{}", k);
            let e = match s {
                Sub::Point(e) => {
                    let e = self.expr(e);
                    quote!((#e) as i64)
                }
                Sub::Window { start, stride, .. } => {
                    let e = self.expr(start);
                    // The last dimension follows the block's column, the one before its row.
                    let off = if !in_block {
                        quote!(0i64)
                    } else if k + 1 == n {
                        quote!((__bj as i64))
                    } else {
                        quote!((__bi as i64))
                    };
                    quote!((#e) as i64 + #off * #stride)
                }
                Sub::Star => quote!(0i64),
            };
            out.extend(quote!(let #i: i64 = #e;));
        }
        out
    }

    fn in_bounds(m: MatrixId, n: usize) -> TokenStream {
        let d = format_ident!("__d{}", m);
        let conds = (0..n).map(|k| {
            let i = format_ident!("__i{}", k);
            quote!(#i >= 0 && #i < #d[#k])
        });
        quote!(#(#conds)&&*)
    }

    fn linear(m: MatrixId, from: usize, n: usize) -> TokenStream {
        let d = format_ident!("__d{}", m);
        let mut e = quote!(0i64);
        for k in from..n {
            let i = format_ident!("__i{}", k);
            e = quote!((#e * #d[#k] + #i));
        }
        quote!((#e as usize))
    }

    /// Reads element (or block element) of access `a`, as type `want`.
    fn load(&self, aid: AccessId, want: Scalar, in_block: bool) -> TokenStream {
        let a = &self.accesses()[aid];
        let m = a.matrix;
        let n = a.subs.len();
        let idx = self.indices(a, in_block);
        let ok = Self::in_bounds(m, n);
        let s = format_ident!("__m{}", m);
        let lin = Self::linear(m, 0, n);
        let w = rty(want);
        let mut chain = quote!(if #ok { #s[#lin] as #w });
        // Border entries of the rules in force, in order.
        if let Some(r) = self.r {
            for id in &r.rules {
                for e in f_entries(self.f, *id, m) {
                    let d = format_ident!("__d{}", m);
                    let conds = e.sels.iter().enumerate().map(|(k, sel)| {
                        let i = format_ident!("__i{}", k);
                        match sel {
                            Sel::Star => quote!(#i >= 0 && #i < #d[#k]),
                            Sel::Before(j) => {
                                let j = *j as i64;
                                quote!(#i == -#j)
                            }
                            Sel::After(j) => {
                                let j = *j as i64;
                                quote!(#i == #d[#k] - 1 + #j)
                            }
                        }
                    });
                    let value = self.border_value(e, want);
                    chain = quote!(#chain else if #(#conds)&&* { #value });
                }
            }
        }
        let err = self.oob("read of", m, n);
        quote!({ #idx #chain else { #err } })
    }

    /// A border entry's value, its reads at the access's own index for `*`.
    fn border_value(&self, e: &BorderEntry, want: Scalar) -> TokenStream {
        let sub = Gen {
            f: self.f,
            r: None,
            region_name: self.region_name.clone(),
            views: self.views.clone(),
        };
        let v = sub.entry_expr(e, &e.value);
        let w = rty(want);
        quote!((#v) as #w)
    }

    fn entry_expr(&self, entry: &BorderEntry, e: &Expr) -> TokenStream {
        // Loads inside a border value: `*` keeps the outer index `__iK`.
        match &e.kind {
            ExprKind::Cast(inner, to) if matches!(inner.kind, ExprKind::Load(_)) => {
                let x = self.entry_expr(entry, inner);
                let t = rty(*to);
                quote!(((#x) as #t))
            }
            ExprKind::Load(a) => {
                let acc = &entry.accesses[*a];
                let m = acc.matrix;
                let n = acc.subs.len();
                let mut idx = TokenStream::new();
                for (k, s) in acc.subs.iter().enumerate() {
                    let i = format_ident!("__i{}", k);
                    let j = format_ident!("__j{}", k);
                    let v = match s {
                        Sub::Point(p) => {
                            let p = self.expr(p);
                            quote!((#p) as i64)
                        }
                        _ => quote!(#i),
                    };
                    idx.extend(quote!(let #j: i64 = #v;));
                }
                let js: Vec<_> = (0..n).map(|k| format_ident!("__j{}", k)).collect();
                let shadow = (0..n).map(|k| {
                    let i = format_ident!("__i{}", k);
                    let j = &js[k];
                    quote!(let #i: i64 = #j;)
                });
                let ok = Self::in_bounds(m, n);
                let s = format_ident!("__m{}", m);
                let lin = Self::linear(m, 0, n);
                let t = rty(e.ty.elem());
                let err = self.oob("read of", m, n);
                quote!({ #idx #(#shadow)* if #ok { #s[#lin] as #t } else { #err } })
            }
            _ => self.expr_with(e, &mut |g, x| g.entry_expr(entry, x)),
        }
    }

    fn store(&self, aid: AccessId, value: &Expr) -> TokenStream {
        let a = &self.accesses()[aid];
        let m = a.matrix;
        let n = a.subs.len();
        let view = self.views[m].unwrap_or(View::Write);
        let elem = rty(self.f.matrices[m].elem);
        let err = self.oob("write to", m, n);
        let (target, ok) = if view == View::Row {
            // The row may be outside the matrix (an empty slice) when the region runs in order.
            let w = format_ident!("__w{}", m);
            let lin = Self::linear(m, 1, n);
            let ok = Self::in_bounds(m, n);
            (quote!(#w[#lin]), quote!(!#w.is_empty() && #ok))
        } else {
            let s = format_ident!("__m{}", m);
            let lin = Self::linear(m, 0, n);
            (quote!(#s[#lin]), Self::in_bounds(m, n))
        };
        if let Type::Block { rows, cols, .. } = value.ty {
            let b = self.block(value);
            let idx = self.indices(a, true);
            let (rows, cols) = (rows as usize, cols as usize);
            quote! {{
                let __val = #b;
                for __bi in 0..#rows {
                    for __bj in 0..#cols {
                        #idx
                        if #ok { #target = __val[__bi][__bj] as #elem; } else { #err }
                    }
                }
            }}
        } else {
            let v = self.expr(value);
            let idx = self.indices(a, false);
            quote!({
                let __val = #v;
                #idx
                if #ok { #target = __val; } else { #err }
            })
        }
    }

    /// A block-valued expression as a `[[T; C]; R]` array.
    fn block(&self, e: &Expr) -> TokenStream {
        let Type::Block { elem, rows, cols } = e.ty else {
            return self.expr(e);
        };
        let (r, c) = (rows as usize, cols as usize);
        let t = rty(elem);
        let fill = |elem_code: TokenStream, pre: TokenStream| {
            quote!({
                #pre
                let mut __r = [[<#t as ::core::default::Default>::default(); #c]; #r];
                for __bi in 0..#r {
                    for __bj in 0..#c {
                        __r[__bi][__bj] = #elem_code;
                    }
                }
                __r
            })
        };
        match &e.kind {
            ExprKind::Block(a) => fill(self.load(*a, elem, true), quote!()),
            ExprKind::Cast(inner, to) => {
                if let ExprKind::Block(a) = inner.kind {
                    // A window read straight at the wider type (border values are not wrapped).
                    return fill(self.load(a, *to, true), quote!());
                }
                let b = self.block(inner);
                fill(quote!(__a[__bi][__bj] as #t), quote!(let __a = #b;))
            }
            ExprKind::Local(l) => {
                let v = format_ident!("__l{}", l);
                quote!(#v)
            }
            ExprKind::Unary(op, a) => {
                let b = self.block(a);
                let code = self.unary_code(*op, quote!(__a[__bi][__bj]), elem);
                fill(code, quote!(let __a = #b;))
            }
            ExprKind::Binary(op, a, b) => {
                let part = |x: &Expr| {
                    if x.ty.is_block() {
                        (self.block(x), quote!([__bi][__bj]))
                    } else {
                        (self.expr(x), quote!())
                    }
                };
                let (xa, ia) = part(a);
                let (xb, ib) = part(b);
                let code =
                    self.binary_code(*op, quote!(__a #ia), quote!(__b #ib), elem, a.ty.elem());
                fill(code, quote!(let __a = #xa; let __b = #xb;))
            }
            ExprKind::MatMul(a, b) => {
                let (xa, xb) = (self.block(a), self.block(b));
                let inner = match a.ty {
                    Type::Block { cols, .. } => cols as usize,
                    _ => 1,
                };
                let acc = if elem.is_float() {
                    quote!(__s += __a[__bi][__k] * __b[__k][__bj];)
                } else {
                    quote!(__s = __s.wrapping_add(__a[__bi][__k].wrapping_mul(__b[__k][__bj]));)
                };
                fill(
                    quote!({ let mut __s = <#t as ::core::default::Default>::default(); for __k in 0..#inner { #acc } __s }),
                    quote!(let __a = #xa; let __b = #xb;),
                )
            }
            ExprKind::Transpose(a) => {
                let b = self.block(a);
                fill(quote!(__a[__bj][__bi]), quote!(let __a = #b;))
            }
            _ => self.expr(e),
        }
    }

    fn unary_code(&self, op: UnOp, x: TokenStream, t: Scalar) -> TokenStream {
        match op {
            UnOp::Plus => x,
            UnOp::Neg if t.is_float() => quote!((-(#x))),
            UnOp::Neg => quote!((#x).wrapping_neg()),
            UnOp::Not => quote!((!(#x))),
        }
    }

    /// `op` on two values of type `t` (operand type `ot` for comparisons).
    fn binary_code(
        &self,
        op: BinOp,
        a: TokenStream,
        b: TokenStream,
        t: Scalar,
        ot: Scalar,
    ) -> TokenStream {
        use BinOp::*;
        let float = t.is_float() || ot.is_float();
        let fname = &self.f.name;
        let rname = &self.region_name;
        match op {
            Add | Sub | Mul | ElemMul if float => {
                let o = match op {
                    Add => quote!(+),
                    Sub => quote!(-),
                    _ => quote!(*),
                };
                quote!((#a #o #b))
            }
            Add => quote!((#a).wrapping_add(#b)),
            Sub => quote!((#a).wrapping_sub(#b)),
            Mul | ElemMul => quote!((#a).wrapping_mul(#b)),
            Div if float => quote!((#a / #b)),
            Div | Rem => {
                let f = if op == Div {
                    quote!(wrapping_div)
                } else {
                    quote!(wrapping_rem)
                };
                quote!({
                    let (__x, __y) = (#a, #b);
                    if __y == 0 {
                        return ::core::result::Result::Err(::parac::Error::DivisionByZero { function: #fname, region: #rname });
                    }
                    __x.#f(__y)
                })
            }
            Shl => quote!((#a).wrapping_shl((#b) as u32)),
            Shr => quote!((#a).wrapping_shr((#b) as u32)),
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

    /// A scalar expression.
    fn expr(&self, e: &Expr) -> TokenStream {
        self.expr_with(e, &mut |g, x| g.expr(x))
    }

    /// A scalar expression whose sub-expressions are generated by `sub`.
    fn expr_with(&self, e: &Expr, sub: &mut dyn FnMut(&Self, &Expr) -> TokenStream) -> TokenStream {
        let t = e.ty.elem();
        match &e.kind {
            ExprKind::Int(v) => int_lit(*v, t),
            ExprKind::Float(v) => lit(*v, t),
            ExprKind::Size(i) => {
                let z = format_ident!("__z{}", i);
                quote!(#z)
            }
            ExprKind::Host(i) => {
                let s = format_ident!("__s{}", i);
                quote!(#s)
            }
            ExprKind::Var(s) => {
                let v = format_ident!("__v{}", s);
                quote!(#v)
            }
            ExprKind::Local(l) => {
                let v = format_ident!("__l{}", l);
                quote!(#v)
            }
            ExprKind::Load(a) => self.load(*a, t, false),
            ExprKind::Cast(inner, to) => {
                if let ExprKind::Load(a) = inner.kind {
                    return self.load(a, *to, false);
                }
                let x = sub(self, inner);
                match (inner.ty.elem(), to) {
                    (from, Scalar::Bool) if from.is_float() => quote!(((#x) != 0.0)),
                    (Scalar::Bool, Scalar::Bool) => x,
                    (_, Scalar::Bool) => quote!(((#x) != 0)),
                    _ => {
                        let rt = rty(*to);
                        quote!(((#x) as #rt))
                    }
                }
            }
            ExprKind::Unary(op, a) => {
                let x = sub(self, a);
                self.unary_code(*op, x, t)
            }
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (sub(self, a), sub(self, b));
                self.binary_code(*op, x, y, t, a.ty.elem())
            }
            ExprKind::Call(b, args) => {
                let xs: Vec<TokenStream> = args.iter().map(|a| sub(self, a)).collect();
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
                    // `abs` has the type of its promoted operand: of an unsigned type
                    // (`u32`, `u64`) it is the value itself, as in C and the interpreter.
                    (Builtin::Abs, false) if t.range().is_some_and(|r| r.0 == 0) => {
                        let x = &xs[0];
                        quote!((#x))
                    }
                    (Builtin::Abs, false) => {
                        let x = &xs[0];
                        quote!((#x).wrapping_abs())
                    }
                    (Builtin::Abs, true) => {
                        let x = &xs[0];
                        quote!(f32::abs(#x))
                    }
                    (b, _) => {
                        let x = &xs[0];
                        let m = format_ident!("{}", b.name());
                        quote!(f32::#m(#x))
                    }
                }
            }
            ExprKind::Reduce(op, a) => {
                let b = self.block(a);
                let (r, c) = match a.ty {
                    Type::Block { rows, cols, .. } => (rows as usize, cols as usize),
                    _ => (1, 1),
                };
                let rt = rty(t);
                let float = t.is_float();
                let count = Literal::usize_unsuffixed(r * c);
                let fold = match op {
                    ReduceOp::Sum | ReduceOp::Mean if float => quote!(__s + (__v as #rt)),
                    ReduceOp::Sum | ReduceOp::Mean => quote!(__s.wrapping_add(__v as #rt)),
                    ReduceOp::Min if float => quote!(f32::min(__s, __v as #rt)),
                    ReduceOp::Max if float => quote!(f32::max(__s, __v as #rt)),
                    ReduceOp::Min => quote!(::core::cmp::Ord::min(__s, __v as #rt)),
                    ReduceOp::Max => quote!(::core::cmp::Ord::max(__s, __v as #rt)),
                };
                let init = match op {
                    ReduceOp::Sum | ReduceOp::Mean => {
                        quote!(<#rt as ::core::default::Default>::default())
                    }
                    _ => quote!(__a[0][0] as #rt),
                };
                let finish = match op {
                    ReduceOp::Mean if float => quote!(__s / (#count as #rt)),
                    ReduceOp::Mean => quote!(__s.wrapping_div(#count as #rt)),
                    _ => quote!(__s),
                };
                quote!({
                    let __a = #b;
                    let mut __s: #rt = #init;
                    for __row in __a.iter() {
                        for __v in __row.iter().copied() {
                            __s = #fold;
                        }
                    }
                    #finish
                })
            }
            ExprKind::Conv(fl, w) => {
                let (xf, xw) = (self.block(fl), self.block(w));
                let rt = rty(t);
                let acc = if t.is_float() {
                    quote!(__s += __f[__i][__j] * __w[__i][__j];)
                } else {
                    quote!(__s = __s.wrapping_add(__f[__i][__j].wrapping_mul(__w[__i][__j]));)
                };
                quote!({
                    let __f = #xf;
                    let __w = #xw;
                    let mut __s: #rt = <#rt as ::core::default::Default>::default();
                    for __i in 0..__f.len() {
                        for __j in 0..__f[0].len() {
                            #acc
                        }
                    }
                    __s
                })
            }
            ExprKind::Block(_) | ExprKind::MatMul(..) | ExprKind::Transpose(_) => self.block(e),
        }
    }
}

fn f_entries(f: &Function, rule: RuleId, m: MatrixId) -> impl Iterator<Item = &BorderEntry> {
    f.rules[rule].entries.iter().filter(move |e| e.matrix == m)
}
