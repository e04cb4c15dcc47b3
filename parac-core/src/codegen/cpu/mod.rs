//! The CPU back end: Rust printed from the loop IR (`crate::lir`), emitted by the macro. It
//! does what the LIR says and decides nothing of its own; it runs where no OpenCL device exists
//! and serves the tests as a second implementation. Before each region the host's proof
//! (`proof.rs`) runs; `host.rs` holds the prelude, slices and global reductions. Guarantees:
//!
//! - C semantics as the LIR defines them: integer arithmetic wraps, `/` and `%` truncate and a
//!   zero divisor is `Error::DivisionByZero`; `select`, `&&` and `||` evaluate the arm taken
//!   only (`expr/` never hoists out of an arm);
//! - a checked load or store outside its matrix is `Error::OutOfBounds` with the function,
//!   region, matrix, index and shape (`parac::__private::cpu`); no access can panic;
//! - a region whose outer loop the `parallel` pass marked `Parallel` runs its rows as tasks of
//!   the CPU path's threads (`cpu::workers`), each owning its row of every plane written
//!   (`chunks_mut`, zipped); on a call
//!   where some iterated row is outside a written matrix (or a written matrix has empty rows)
//!   it runs in order, each row an empty slice where it is missing, so that a store fails where
//!   it runs and only there (as the interpreter).

mod expr;
mod host;
mod ops;
mod partials;
pub(crate) mod proof;
mod scan_blocks;
mod slices;

pub(crate) use host::{prelude, size_expr};

use crate::ir::{Function, MatrixKind, RegionId};
use crate::lir::visit::stmt_parts;
use crate::lir::{self, Buf, ExprId, ExprKind, Func, Loop, LoopKind, Stmt, StmtId, VarId};
use expr::{Exprs, var};
use host::{View, deliver, reduction, rty, slice_of, slot};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

/// The statements of a function's CPU path after the prelude (`codegen::cpu::prelude`):
/// parameters as contiguous slices, locals, host steps, regions; evaluates to its result.
pub fn cpu_body(f: &Function) -> TokenStream {
    let lowered = lir::lower(f, &lir::Options::default());
    let func = &lowered.func;
    let mut roots = Vec::new();
    collect_roots(func, func.body, &mut roots);
    let mut p = Printer {
        f,
        x: Exprs::new(func, roots.into_iter()),
        hoisted_stores: Default::default(),
        whole: crate::analysis::written_whole(f),
        swapped: f.swapped(),
    };
    let fname = &f.name;
    let mut out = quote! {
        let __fname: &'static str = #fname;
        let __rname: &'static str = "(host code)";
        // The vector instructions of the interiors (`slices`), chosen once per call.
        let __isa: ::parac::CpuIsa = rt.cpu_isa();
        let _ = __isa;
        // The most threads a parallel loop runs on.
        let __threads: usize = rt.cpu_threads();
        let _ = __threads;
    };
    for (m, (mat, id)) in f
        .matrices
        .iter()
        .map(|m| (m, format_ident!("{}", m.name)))
        .enumerate()
    {
        let n = &mat.name;
        out.extend(match mat.kind {
            MatrixKind::Input => quote!(let #id = ::parac::__private::contiguous(#id, #n)?;),
            MatrixKind::Output => {
                quote!(let mut #id = ::parac::__private::contiguous_mut(#id, #n)?;)
            }
            _ => continue,
        });
        if p.swapped[m] {
            out.extend(slot(m, mat.elem, quote!(#id.as_mut_slice())));
        }
    }
    // Whether each matrix the function only writes is large enough to stream (`slices`).
    for m in &func.streamed {
        let flag = slices::stream_flag(*m);
        let mat = &f.matrices[*m];
        let id = format_ident!("{}", mat.name);
        out.extend(match mat.kind {
            MatrixKind::Output if !p.swapped[*m] => quote! {
                let #flag: bool =
                    ::core::mem::size_of_val(#id.as_mut_slice()) >= rt.cpu_stream_bytes();
            },
            _ => quote!(let #flag: bool = false;),
        });
        out.extend(quote!(let _ = #flag;));
    }
    if !func.streamed.is_empty() {
        let flags = func.streamed.iter().map(|m| slices::stream_flag(*m));
        out.extend(quote!(let __streams: bool = false #(|| #flags)*;));
    }
    p.stmts(func.body, &mut out);
    let returned = match &func.stmts[func.body] {
        Stmt::Block(b) => b
            .last()
            .is_some_and(|s| matches!(func.stmts[*s], Stmt::Return(_))),
        _ => false,
    };
    if !returned {
        out.extend(deliver(f));
        out.extend(quote!(::core::result::Result::Ok(())));
    }
    out
}

/// Every expression a statement below `s` holds directly.
fn collect_roots(func: &Func, s: StmtId, out: &mut Vec<ExprId>) {
    let (es, ss) = stmt_parts(&func.stmts[s]);
    out.extend(es);
    for s in ss {
        collect_roots(func, s, out);
    }
}

struct Printer<'a> {
    f: &'a Function,
    x: Exprs<'a>,
    /// Inside the interior of a partitioned loop: stores written to slices (`slices.rs`).
    hoisted_stores: std::collections::HashMap<StmtId, TokenStream>,
    /// Per matrix: written whole before it is read (its buffer need not be cleared).
    whole: Vec<bool>,
    /// Per matrix: a `parac_swap` names it (it is reached through its slot, `host::slot`).
    swapped: Vec<bool>,
}

impl Printer<'_> {
    fn func(&self) -> &Func {
        self.x.func
    }

    /// `s` in a Rust block of its own.
    fn braced(&mut self, s: StmtId) -> TokenStream {
        self.x.push();
        let mut out = TokenStream::new();
        self.stmts(s, &mut out);
        self.x.pop();
        quote!({ #out })
    }

    /// `s` appended to `out`.
    fn stmts(&mut self, s: StmtId, out: &mut TokenStream) {
        let func = self.x.func;
        match &func.stmts[s] {
            Stmt::Block(b) => {
                for s in b {
                    self.stmts(*s, out);
                }
            }
            Stmt::For { kind, .. } => {
                let l = Loop::of(func, s).expect("a loop");
                let code = match kind {
                    LoopKind::Vectorized(_) => self.vectorized(l, out),
                    LoopKind::ChunkRows => self.chunk_rows(l, out),
                    LoopKind::Partials => self.partials(l, out),
                    _ => self.serial(l, out),
                };
                out.extend(code);
            }
            Stmt::Let(v, e) => {
                let e = self.x.tail(*e, out);
                let (id, t) = (var(*v), rty(func.vars[*v].ty));
                out.extend(quote!(let #id: #t = #e;));
            }
            Stmt::If(c, t, e) => {
                let c = self.x.tail(*c, out);
                self.x.epoch += 1;
                let t = self.braced(*t);
                let e = e.map(|e| self.braced(e));
                self.x.epoch += 1;
                out.extend(match e {
                    Some(e) => quote!(if #c #t else #e),
                    None => quote!(if #c #t),
                });
            }
            Stmt::Store {
                buf, index, value, ..
            } => {
                let v = self.x.expr(*value, out);
                if let Some(target) = self.hoisted_stores.get(&s) {
                    out.extend(quote!(#target = #v;));
                    self.x.epoch += 1;
                    return;
                }
                let idx: Vec<TokenStream> = index.iter().map(|i| self.x.expr(*i, out)).collect();
                let m = match *buf {
                    Buf::Matrix(m) => m,
                    Buf::Temp(t) => {
                        out.extend(temp_store(t, &idx, v));
                        self.x.epoch += 1;
                        return;
                    }
                };
                let plane = self.x.plane_of(m, index);
                out.extend(self.x.store(m, &idx, v, plane));
                self.x.epoch += 1;
            }
            Stmt::Update {
                buf,
                index,
                op,
                value,
                checked,
            } => {
                let v = self.x.expr(*value, out);
                let idx: Vec<TokenStream> = index.iter().map(|i| self.x.expr(*i, out)).collect();
                let Buf::Matrix(m) = *buf else {
                    out.extend(quote!(::core::compile_error!("parac: an update of a temporary");));
                    return;
                };
                let name = &self.f.matrices[m].name;
                out.extend(partials::update(name, m, &idx, *op, v, *checked));
                self.x.epoch += 1;
            }
            Stmt::Allocate {
                buf: Buf::Matrix(m),
                elem,
                extents,
                ..
            } => {
                let (own, d, t) = (
                    format_ident!("__own{}", m),
                    format_ident!("__d{}", m),
                    rty(*elem),
                );
                let whole = self.whole.get(*m).copied().unwrap_or(false);
                // No extents: a fused intermediate, whose elements nothing reads or writes.
                let dims = match extents.is_empty() {
                    true => quote!([0i64]),
                    false => quote!(#d),
                };
                out.extend(quote! {
                    let mut #own = ::parac::__private::cpu::local::<#t>(rt, &#dims, #whole);
                });
                if self.swapped[*m] {
                    out.extend(slot(*m, *elem, quote!(#own.as_mut_slice())));
                }
            }
            Stmt::Allocate {
                buf: Buf::Temp(t),
                elem,
                memory: lir::Memory::Private,
                extents,
            } => {
                // Rows of the task's own (`lir::pass::slide`), from the thread's pool: their
                // elements are unspecified until written.
                let ns: Vec<TokenStream> = extents.iter().map(|e| self.x.expr(*e, out)).collect();
                let (id, d, ty) = (temp(*t), temp_dims(*t), rty(*elem));
                out.extend(quote! {
                    let #d = [#((#ns).max(0) as i64),*];
                    let mut #id = ::parac::__private::cpu::scratch::<#ty>(#d.iter().product::<i64>());
                });
            }
            Stmt::Allocate {
                buf: Buf::Temp(t),
                memory: lir::Memory::Rows(m),
                ..
            } => {
                // The task's rows of `m` (its chunk of the plane, `parallel`), in place.
                let Some(j) = self
                    .x
                    .planes
                    .iter()
                    .position(|p| p.0 == *m && p.1.is_empty())
                else {
                    out.extend(
                        quote!(::core::compile_error!("parac: a task's rows outside a task");),
                    );
                    return;
                };
                let (id, d, ty) = (temp(*t), temp_dims(*t), rty(self.f.matrices[*m].elem));
                let (cw, len, dm) = (
                    format_ident!("__cw{}", j),
                    format_ident!("__len{}", j),
                    format_ident!("__d{}", m),
                );
                let rank = self.f.matrices[*m].dims.len();
                let rest = (1..rank).map(|k| quote!(#dm[#k]));
                out.extend(quote! {
                    let #d = [(#cw.len().checked_div(#len).unwrap_or(0)) as i64, #(#rest),*];
                    let #id: &mut [#ty] = #cw;
                });
            }
            Stmt::Allocate { .. } => {
                out.extend(quote!(::core::compile_error!("parac: temporary buffers on the CPU");));
            }
            Stmt::Barrier { .. } => {}
            Stmt::ScanTotals { .. } => self.scan_totals(s, out),
            Stmt::Stage(st) => {
                let at: Vec<TokenStream> = st.index.iter().map(|e| self.x.expr(*e, out)).collect();
                let (rows, cols) = (self.x.expr(st.rows, out), self.x.expr(st.cols, out));
                let (src, d) = (
                    format_ident!("__m{}", st.buf),
                    format_ident!("__d{}", st.buf),
                );
                let v = var(st.inside);
                let (y_dim, y_step, x_step) = (st.y_dim, st.y_step, st.x_step);
                let call = match &st.into {
                    lir::StageInto::Temp { temp: t, stride } => {
                        let t = temp(*t);
                        quote! {
                            ::parac::__private::cpu::stage(
                                __isa, #src, &#d, [#((#at) as i64),*], #y_dim, #y_step, #x_step,
                                (#rows) as i64, (#cols) as i64, &mut #t[..], #stride,
                            )
                        }
                    }
                    lir::StageInto::Matrix { buf, index } => {
                        let to: Vec<TokenStream> =
                            index.iter().map(|e| self.x.expr(*e, out)).collect();
                        self.stage_rows(*buf, index).map_or(quote!(false), |(cw, len, first)| {
                            let (r, c) = (&to[0], &to[1]);
                            quote! {
                                ::parac::__private::cpu::stage_rows(
                                    __isa, #src, &#d, [#((#at) as i64),*], #y_dim, #y_step, #x_step,
                                    (#rows) as i64, (#cols) as i64, #cw, #len,
                                    [((#r) as i64).wrapping_sub(#first as i64), (#c) as i64],
                                )
                            }
                        })
                    }
                };
                out.extend(quote!(let #v: bool = #call;));
            }
            Stmt::Speculate {
                flag,
                body,
                fallback,
            } => {
                let v = var(*flag);
                self.x.epoch += 1;
                let body = self.braced(*body);
                self.x.epoch += 1;
                let fallback = self.braced(*fallback);
                self.x.epoch += 1;
                out.extend(quote! {
                    #[allow(unused_mut)]
                    let mut #v: bool = true;
                    #body
                    if !#v #fallback
                });
            }
            Stmt::Within(w) => {
                let at: Vec<TokenStream> = w.rows.iter().map(|e| self.x.expr(*e, out)).collect();
                let (src, d) = (format_ident!("__m{}", w.buf), format_ident!("__d{}", w.buf));
                let (v, lo, hi) = (var(w.flag), w.lo, w.hi);
                out.extend(quote! {
                    #v &= ::parac::__private::cpu::within(
                        __isa, #src, &#d, &[#((#at) as i64),*], #lo, #hi,
                    );
                });
            }
            Stmt::ScanRow {
                row,
                lo,
                hi,
                op,
                acc,
            } => {
                let (r, a) = (temp(*row), temp(*acc));
                let (lo, hi) = (self.x.expr(*lo, out), self.x.expr(*hi, out));
                let op = match op {
                    crate::ir::ReduceOp::Sum => quote!(Sum),
                    crate::ir::ReduceOp::Min => quote!(Min),
                    crate::ir::ReduceOp::Max => quote!(Max),
                    crate::ir::ReduceOp::Mean => {
                        out.extend(quote!(::core::compile_error!("parac: a scan by a mean");));
                        return;
                    }
                };
                out.extend(quote! {
                    #a[0] = ::parac::__private::cpu::scan_row(
                        __isa, &mut #r[..], (#lo) as i64, (#hi) as i64, #a[0],
                        ::parac::__private::cpu::ScanOp::#op,
                    );
                });
                self.x.epoch += 1;
            }
            Stmt::Region { id, name, body } => {
                let code = self.region(*id, name, *body);
                out.extend(code);
                self.x.epoch += 1;
            }
            Stmt::Reduce { op, matrix, result } => {
                out.extend(reduction(
                    self.f,
                    *op,
                    *matrix,
                    *result,
                    self.swapped[*matrix],
                ));
            }
            Stmt::HostLet(s, e) => {
                let e = self.x.tail(*e, out);
                let (id, t) = (format_ident!("__s{}", s), rty(self.f.scalars[*s].ty));
                out.extend(quote!(let #id: #t = #e;));
            }
            Stmt::Return(e) => {
                let e = match e {
                    Some(e) => self.x.tail(*e, out),
                    None => quote!(()),
                };
                out.extend(deliver(self.f));
                out.extend(quote!(return ::core::result::Result::Ok(#e);));
            }
            Stmt::Repeat { count, body, .. } => {
                let n = self.x.expr(*count, out);
                self.x.epoch += 1;
                let inner = self.braced(*body);
                self.x.epoch += 1;
                out.extend(quote! {{
                    let __steps: i64 = (#n) as i64;
                    let mut __step: i64 = 0;
                    while __step < __steps {
                        #inner
                        __step += 1;
                    }
                }});
            }
            Stmt::Swap(a, b) => {
                let (a, b) = (format_ident!("__slot{}", a), format_ident!("__slot{}", b));
                out.extend(quote!(::core::mem::swap(&mut #a, &mut #b);));
            }
        }
    }

    /// Where a stage goes into rows of matrix `m` (`lir::StageInto::Matrix`): the task's rows
    /// of its plane, their length and the first one's index. `None` outside a task of chunks
    /// (the stage then fails and its tile's rows run, each store checked).
    fn stage_rows(&self, m: usize, index: &[ExprId]) -> Option<(Ident, Ident, TokenStream)> {
        let task = self.x.task_row?;
        let j = self.x.plane_of(m, index)?;
        Some((
            format_ident!("__cw{}", j),
            format_ident!("__len{}", j),
            var(task),
        ))
    }

    /// A loop run in order (bounds evaluated once, at `i64`; the variable is `i32`).
    fn serial(&mut self, l: Loop, out: &mut TokenStream) -> TokenStream {
        let (v, lo, hi, step, body) = (l.var, l.lo, l.hi, l.step, l.body);
        let (lo, hi) = (self.x.expr(lo, out), self.x.expr(hi, out));
        self.x.epoch += 1;
        let inner = self.braced(body);
        self.x.epoch += 1;
        let id = var(v);
        let (c, h) = (
            format_ident!("__c{}", v.index()),
            format_ident!("__hi{}", v.index()),
        );
        quote! {{
            let #h: i64 = (#hi) as i64;
            let mut #c: i64 = (#lo) as i64;
            while #c < #h {
                let #id: i32 = #c as i32;
                #inner
                #c += #step;
            }
        }}
    }

    /// The rows of a task's chunk (`LoopKind::ChunkRows`), in order: each iteration's row of
    /// every plane written (`__w<j>`) taken from the chunk's rows (`__cw<j>`), an empty slice
    /// where the plane has no such row (a store to it fails its bounds check).
    fn chunk_rows(&mut self, l: Loop, out: &mut TokenStream) -> TokenStream {
        let (lo, hi) = (self.x.expr(l.lo, out), self.x.expr(l.hi, out));
        self.x.epoch += 1;
        let inner = self.braced(l.body);
        self.x.epoch += 1;
        let id = var(l.var);
        let mut rows = TokenStream::new();
        for (j, (m, _)) in self.x.planes.iter().enumerate() {
            let (w, cw, len) = (
                format_ident!("__w{}", j),
                format_ident!("__cw{}", j),
                format_ident!("__len{}", j),
            );
            let t = rty(self.f.matrices[*m].elem);
            rows.extend(quote! {
                let #w: &mut [#t] = {
                    // Wrapping: a plane whose rows' length overflows has none (a store fails).
                    let __o = ((__cr - __crlo) as usize).wrapping_mul(#len);
                    #cw.get_mut(__o..__o.wrapping_add(#len)).unwrap_or(&mut [])
                };
            });
        }
        quote! {{
            let __crhi: i64 = (#hi) as i64;
            let __crlo: i64 = (#lo) as i64;
            let mut __cr: i64 = __crlo;
            while __cr < __crhi {
                let #id: i32 = __cr as i32;
                #rows
                #inner
                __cr += 1;
            }
        }}
    }

    /// A region: the host's proof, the slices it reaches, its loops.
    fn region(&mut self, id: RegionId, name: &str, body: StmtId) -> TokenStream {
        let f = self.f;
        let check = proof::region_check(f, id);
        let mut stores = Vec::new();
        let mut loads = Vec::new();
        buffers(self.func(), body, &mut stores, &mut loads);
        let is_parallel = |s: StmtId| {
            matches!(
                self.func().stmts[s],
                Stmt::For {
                    kind: LoopKind::Parallel | LoopKind::ParallelChunks(_),
                    ..
                }
            )
        };
        // A parallel loop after statements that store no matrix (a scan's first pass and the
        // allocations before it, `lir::pass::scan_blocks`, which makes no other): those
        // first, then the loop.
        let (prefix, body) = match &self.func().stmts[body] {
            Stmt::Block(b) if b.last().is_some_and(|l| is_parallel(*l)) => {
                (b[..b.len() - 1].to_vec(), b[b.len() - 1])
            }
            _ => (Vec::new(), body),
        };
        let parallel = match is_parallel(body) {
            true => Loop::of(self.func(), body),
            false => None,
        };
        let mut slices = TokenStream::new();
        for m in 0..f.matrices.len() {
            let view = if stores.contains(&m) {
                if parallel.is_some() {
                    continue;
                }
                View::Write
            } else if loads.contains(&m) {
                View::Read
            } else {
                continue;
            };
            let s = format_ident!("__m{}", m);
            let sl = slice_of(f, m, view, self.swapped[m]);
            slices.extend(quote!(let #s = #sl;));
        }
        let mut out = TokenStream::new();
        let written: Vec<bool> = (0..f.matrices.len()).map(|m| stores.contains(&m)).collect();
        self.x.begin_region(written.clone());
        for s in &prefix {
            self.stmts(*s, &mut out);
        }
        if !prefix.is_empty() {
            // Their closures before them; the loop's after.
            let defs = self.x.end_region();
            out = quote!(#defs #out);
            self.x.begin_region(written);
        }
        let code = match parallel {
            None => {
                self.stmts(body, &mut out);
                let defs = self.x.end_region();
                quote!(#defs #out)
            }
            Some(l) => {
                let mut planes = Vec::new();
                // A chunk's rows are its inner loop's.
                let row = chunk_rows(self.func(), l.body).map_or(l.var, |r| r.var);
                store_planes(self.func(), l.body, row, &mut planes);
                self.x.planes = planes;
                let strip = match self.func().stmts[body] {
                    Stmt::For {
                        kind: LoopKind::ParallelChunks(strip),
                        ..
                    } => strip,
                    _ => None,
                };
                let code = self.parallel(l, strip, &mut out);
                self.x.planes.clear();
                code
            }
        };
        let fence = self.fence();
        quote! {{
            let __rname: &'static str = #name;
            #check
            #slices
            #code
            #fence
        }}
    }

    /// Where the function may write a matrix with streaming stores (`lir::pass::stream`): a
    /// store fence after a task and after a region, where the call streams, so that every
    /// other thread then sees the stores.
    fn fence(&self) -> TokenStream {
        match self.func().streamed.is_empty() {
            true => TokenStream::new(),
            false => quote!(if __streams {
                ::parac::__private::cpu::fence();
            }),
        }
    }

    /// A row-parallel loop: tasks of the CPU path's pool (`cpu::workers`) over the rows of every plane written (a matrix, or the
    /// plane of its leading constant indices), or in order where some iterated row is missing.
    fn parallel(&mut self, l: Loop, strip: Option<VarId>, out: &mut TokenStream) -> TokenStream {
        let (v, lo, hi, step, body) = (l.var, l.lo, l.hi, l.step, l.body);
        let f = self.f;
        // In chunks of `step` rows (`LoopKind::ParallelChunks`): a task's slices hold its rows,
        // the first from the loop's start.
        let chunked = chunk_rows(self.func(), body).is_some() || task_rows(self.func(), body);
        // A step chosen when the call runs (`LoopKind::ParallelChunks(Some(v))`): `v`'s value.
        let (rows_per, step, strip) = match strip {
            Some(v) => {
                let v = var(v);
                (
                    quote!((__strip as usize)),
                    quote!(__strip),
                    quote!(let __strip: i32 = (#v as i64).clamp(1, i32::MAX as i64) as i32;),
                )
            }
            None => {
                let rows_per = Literal::usize_suffixed(if chunked { step as usize } else { 1 });
                let step = Literal::i32_suffixed(step as i32);
                (quote!(#rows_per), quote!(#step), quote!())
            }
        };
        let (lo, hi) = (self.x.expr(lo, out), self.x.expr(hi, out));
        self.x.epoch += 1;
        self.x.push();
        let mut inner = TokenStream::new();
        self.x.task_row = chunked.then_some(v);
        self.stmts(body, &mut inner);
        self.x.task_row = None;
        self.x.pop();
        self.x.epoch += 1;
        let defs = self.x.end_region();
        let id = var(v);
        let planes = self.x.planes.clone();
        let fence = self.fence();
        // Each matrix's planes, split apart (`planes_mut`: an empty slice for a plane outside).
        let mut split = TokenStream::new();
        let mut lens = TokenStream::new();
        let mut matrices: Vec<usize> = planes.iter().map(|p| p.0).collect();
        matrices.sort_unstable();
        matrices.dedup();
        for m in matrices {
            let js: Vec<usize> = (0..planes.len()).filter(|j| planes[*j].0 == m).collect();
            let names = js.iter().map(|j| format_ident!("__p{}", j));
            let ranges = js.iter().map(|j| format_ident!("__pr{}", j));
            let sl = slice_of(f, m, View::Write, self.swapped[m]);
            split.extend(quote! {
                let [#(mut #names),*] = ::parac::__private::cpu::planes_mut(#sl, [#(#ranges.clone()),*]);
            });
        }
        // Zip the row chunks of every plane; the same names, typed, are the body's parameters,
        // and the serial fallback binds them to one row each.
        let mut iter = TokenStream::new();
        let mut pat = TokenStream::new();
        let mut pat_ty = TokenStream::new();
        let mut have_rows = quote!(true);
        let mut serial_rows = TokenStream::new();
        for (j, (m, consts)) in planes.iter().enumerate() {
            let k = consts.len();
            let d = format_ident!("__d{}", m);
            let w = match chunked {
                true => format_ident!("__cw{}", j),
                false => format_ident!("__w{}", j),
            };
            let pl = format_ident!("__p{}", j);
            let (len, pr) = (format_ident!("__len{}", j), format_ident!("__pr{}", j));
            let t = rty(f.matrices[*m].elem);
            let cs = consts.iter().map(|c| Literal::i64_suffixed(*c as i64));
            let skip = match chunked {
                true => {
                    quote!(#pl.get_mut((__lo as usize).saturating_mul(#len)..).unwrap_or(&mut []))
                }
                false => quote!(#pl),
            };
            let chunks = quote!(#skip.chunks_mut(#len.saturating_mul(#rows_per).max(1)));
            if j == 0 {
                iter = chunks;
                pat = quote!(#w);
                pat_ty = quote!(&mut [#t]);
            } else {
                iter = quote!(#iter.zip(#chunks));
                pat = quote!((#pat, #w));
                pat_ty = quote!((#pat_ty, &mut [#t]));
            }
            have_rows = quote!(#have_rows && #pr.is_some() && #len > 0 && __last < #d[#k]);
            // A row outside the plane (or of a plane with empty rows) is an empty slice: every
            // store to it fails its bounds check, with its index.
            serial_rows.extend(quote! {
                let #w: &mut [#t] = if __r >= 0 && __r < #d[#k] {
                    let __end = (__r + #rows_per as i64).min(#d[#k]) as usize;
                    #pl.get_mut((__r as usize) * #len..__end * #len)
                        .unwrap_or(&mut [])
                } else {
                    &mut []
                };
            });
            lens.extend(quote! {
                let #len: usize = #d[#k + 1..].iter().product::<i64>() as usize;
                let #pr = ::parac::__private::cpu::plane(&[#(#cs),*], &#d);
            });
        }
        // Chunks are counted from the loop's first row, rows from the plane's.
        let first = match chunked {
            true => quote!(__lo as usize +),
            false => quote!(),
        };
        // The last row iterated: a chunk's rows run to the loop's end.
        let last = match chunked {
            true => quote!(__hi as i64 - 1),
            false => quote! {
                __lo as i64 + ((__hi as i64 - __lo as i64 - 1) / #step as i64) * #step as i64
            },
        };
        quote! {
            #out
            let (__lo, __hi): (i32, i32) = (#lo, #hi);
            #strip
            #lens
            #split
            #defs
            let __body = |#id: i32, #pat: #pat_ty| -> ::core::result::Result<(), ::parac::Error> {
                #inner
                #fence
                ::core::result::Result::Ok(())
            };
            // In parallel when every iteration owns an existing row; otherwise in order, so
            // that a store fails where it runs and only there.
            let __parallel = __hi <= __lo || {
                let __last: i64 = #last;
                __lo >= 0 && #have_rows
            };
            if __parallel {
                ::parac::__private::cpu::workers::try_for_each(__threads, #iter.enumerate(), |(__row, #pat)| -> ::core::result::Result<(), ::parac::Error> {
                    let #id: i32 = (#first __row * #rows_per) as i32;
                    if #id < __lo || #id >= __hi || (#id - __lo) % #step != 0 {
                        return ::core::result::Result::Ok(());
                    }
                    __body(#id, #pat)
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

/// The Rust name of a temporary row.
pub(super) fn temp(t: lir::TempId) -> proc_macro2::Ident {
    format_ident!("__row{}", t.index())
}

/// The Rust name of a temporary's extents (`[i64; N]`).
pub(super) fn temp_dims(t: lir::TempId) -> proc_macro2::Ident {
    format_ident!("__rowd{}", t.index())
}

/// A store into a temporary row at an index a pass proved inside (a wrong proof writes
/// nothing; nothing can panic).
fn temp_store(t: lir::TempId, idx: &[TokenStream], v: TokenStream) -> TokenStream {
    let (id, d) = (temp(t), temp_dims(t));
    quote! {
        let __v = #v;
        if let ::core::option::Option::Some(__r) =
            #id.get_mut(::parac::__private::cpu::lin([#(#idx),*], &#d))
        {
            *__r = __v;
        }
    }
}

/// The `LoopKind::ChunkRows` loop below `s` (a chunk's body, or its tile's columns), if any.
fn chunk_rows(func: &Func, s: StmtId) -> Option<Loop> {
    match &func.stmts[s] {
        Stmt::For {
            kind: LoopKind::ChunkRows,
            ..
        } => Loop::of(func, s),
        Stmt::Block(b) => b.iter().find_map(|c| chunk_rows(func, *c)),
        // A staged tile's rows and its rows as they are (`lir::pass::tile`) share a variable.
        Stmt::If(_, t, _) => chunk_rows(func, *t),
        // A speculated task's guess and its fallback share the rows' variable.
        Stmt::Speculate { body, .. } => chunk_rows(func, *body),
        // A tile's columns around its rows (`lir::pass::tile`).
        Stmt::For {
            kind: LoopKind::Serial,
            body,
            ..
        } => chunk_rows(func, *body),
        _ => None,
    }
}

/// Whether the task body `s` holds a task's rows of a matrix (`lir::Memory::Rows`).
fn task_rows(func: &Func, s: StmtId) -> bool {
    match &func.stmts[s] {
        Stmt::Allocate {
            memory: lir::Memory::Rows(_),
            ..
        } => true,
        Stmt::Block(b) => b.iter().any(|c| task_rows(func, *c)),
        Stmt::Speculate { body, .. } => task_rows(func, *body),
        _ => false,
    }
}

/// The planes the stores below `s` write, each once: a matrix and the constants of its leading
/// indices before `var` (`lir::pass::parallel::plane_rank`); a task's rows of a matrix
/// (`lir::Memory::Rows`) are its whole plane's.
fn store_planes(func: &Func, s: StmtId, v: VarId, out: &mut Vec<(usize, Vec<i128>)>) {
    if let Stmt::Allocate {
        memory: lir::Memory::Rows(m),
        ..
    } = &func.stmts[s]
        && !out.iter().any(|(n, c)| n == m && c.is_empty())
    {
        out.push((*m, Vec::new()));
    }
    if let Stmt::Store {
        buf: Buf::Matrix(m),
        index,
        ..
    } = &func.stmts[s]
        && let Some(k) = lir::pass::parallel::plane_rank(func, index, v)
    {
        let consts: Vec<i128> = index[..k]
            .iter()
            .map(|i| match func.exprs[*i].kind {
                ExprKind::Int(c) => c,
                _ => 0,
            })
            .collect();
        if !out.iter().any(|(n, c)| n == m && *c == consts) {
            out.push((*m, consts));
        }
    }
    for c in stmt_parts(&func.stmts[s]).1 {
        store_planes(func, c, v, out);
    }
}

/// The matrices stored to and loaded from below `s`, each once, in order.
fn buffers(func: &Func, s: StmtId, stores: &mut Vec<usize>, loads: &mut Vec<usize>) {
    let (es, ss) = stmt_parts(&func.stmts[s]);
    if let Stmt::Store {
        buf: Buf::Matrix(m),
        ..
    }
    | Stmt::Update {
        buf: Buf::Matrix(m),
        ..
    } = func.stmts[s]
        && !stores.contains(&m)
    {
        stores.push(m);
    }
    if let Stmt::Stage(lir::Stage { buf, .. }) | Stmt::Within(lir::Within { buf, .. }) =
        &func.stmts[s]
        && !loads.contains(buf)
    {
        loads.push(*buf);
    }
    let mut stack = es;
    let mut seen = std::collections::HashSet::new();
    while let Some(e) = stack.pop() {
        if !seen.insert(e) {
            continue;
        }
        if let ExprKind::Load {
            buf: Buf::Matrix(m),
            ..
        } = func.exprs[e].kind
            && !loads.contains(&m)
        {
            loads.push(m);
        }
        stack.extend(lir::visit::expr_children(&func.exprs[e].kind));
    }
    for s in ss {
        buffers(func, s, stores, loads);
    }
}
