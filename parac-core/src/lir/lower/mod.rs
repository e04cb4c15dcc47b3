//! HAST → LIR. Every block value is written out element by element (windows, matrix products,
//! convolutions become scalar expressions over their elements); a read of a matrix with
//! border rules in force becomes, from the rules' entries alone, `let i = index in
//! select(inside, m[i], select(entry 1 matches, value 1, .. m[i]))`: the last arm is the
//! checked read, an `Error::OutOfBounds` where no entry matches.

use super::{Buf, ExprId, ExprKind, Func, Memory, Stmt, StmtId, VarId};
use crate::ir::Scalar;
use crate::ir::{
    self, AccessId, BinOp, BorderEntry, Builtin, ExprKind as H, Function, KStmt, MatrixKind,
    Region, RegionKind, Sel, Sub, Type,
};

mod block;
mod border;
mod prefix;

pub(crate) use block::filter_rank1;
pub(crate) use prefix::identity as prefix_identity;

/// A kernel local: one variable, or one per block element (row-major).
#[derive(Clone)]
enum LocalVal {
    Scalar(VarId),
    Block(Vec<VarId>),
}

/// Which element of a block a window access reads.
#[derive(Clone, Copy)]
enum At {
    /// Its first (a point access; a window's first element).
    First,
    /// Row `i`, column `j`, constants (a block written out).
    Cell(usize, usize),
    /// Row and column given by `i32` expressions (a fold's variables).
    Tap(ExprId, ExprId),
}

impl From<Option<(usize, usize)>> for At {
    fn from(at: Option<(usize, usize)>) -> At {
        at.map_or(At::First, |(i, j)| At::Cell(i, j))
    }
}

/// Where loads of an expression come from.
#[derive(Clone, Copy)]
enum Mode<'a, 'v> {
    /// The region's body: its access table, border rules in force.
    Body,
    /// A border value: the entry's access table, `*` standing for `outer`'s indices.
    Entry(&'a BorderEntry, &'v [VarId]),
}

struct Lower<'a> {
    f: &'a Function,
    out: Func,
    r: Option<&'a Region>,
    /// Loop variables by slot.
    slots: Vec<Option<VarId>>,
    locals: Vec<Option<LocalVal>>,
    /// Accesses the host proves inside before a kernel runs (`safety::guarded` false, not a
    /// bordered read) are lowered unchecked (the OpenCL lowering: the runtime runs the proof,
    /// `interp::region_check`, before every launch of a region).
    host_proofs: bool,
    /// The `if`s of the region's body around the statement being lowered.
    branch: usize,
    /// The short-circuit operands (`&&`, `||`) around the expression being lowered: no fold
    /// there (a back end runs a fold before its statement).
    cond: usize,
    /// Reductions of windows with more taps than this are folds (loops), not written out.
    unroll: usize,
    /// Reductions of windows with more taps than this that `lir::pass::slide` may compute per
    /// row (integer sums, means, minima and maxima of one matrix's window) are folds too.
    slide_taps: usize,
    /// Lowering for OpenCL: a region's loops along slots its prefixes scan are innermost.
    gpu: bool,
    /// The scans of the region's prefixes (`prefix.rs`).
    scans: Vec<prefix::Scan>,
    /// Per prefix of the region, the variable holding its value at the point.
    prefix_vals: Vec<Option<VarId>>,
}

impl Lower<'_> {
    /// The statements of host steps (those of region `only` alone, if given, found in time
    /// steps too) appended to `body`.
    fn host_steps(
        &mut self,
        steps: &[ir::HostStep],
        only: Option<ir::RegionId>,
        body: &mut Vec<StmtId>,
    ) {
        let f = self.f;
        for step in steps {
            let s = match step {
                ir::HostStep::Run(r) if only.is_some_and(|o| o != *r) => continue,
                ir::HostStep::Run(r) => self.region(*r),
                ir::HostStep::Let(s, e) => {
                    let v = self.scalar(e, Mode::Body);
                    let v = self.out.cast(v, f.scalars[*s].ty);
                    self.out.stmt(Stmt::HostLet(*s, v))
                }
                ir::HostStep::Return(e) => {
                    let mut v = self.scalar(e, Mode::Body);
                    if let Some(t) = f.ret {
                        v = self.out.cast(v, t);
                    }
                    self.out.stmt(Stmt::Return(Some(v)))
                }
                ir::HostStep::Repeat { body: steps, .. } if only.is_some() => {
                    self.host_steps(steps, only, body);
                    continue;
                }
                ir::HostStep::Repeat {
                    count,
                    body: steps,
                    schedule,
                } => {
                    let count = self.scalar(count, Mode::Body);
                    let mut inner = Vec::new();
                    self.host_steps(steps, only, &mut inner);
                    let inner = self.out.stmt(Stmt::Block(inner));
                    self.out.stmt(Stmt::Repeat {
                        count,
                        body: inner,
                        schedule: *schedule,
                    })
                }
                ir::HostStep::Swap(..) if only.is_some() => continue,
                ir::HostStep::Swap(a, b) => self.out.stmt(Stmt::Swap(*a, *b)),
            };
            body.push(s);
        }
    }
}

/// A function with an empty body, its names from `f`.
fn empty(f: &Function) -> Func {
    let mut stmts = super::Arena::default();
    let body = stmts.push(Stmt::Block(vec![]));
    Func {
        name: f.name.clone(),
        exprs: Default::default(),
        stmts,
        vars: Default::default(),
        names: Default::default(),
        temps: Default::default(),
        matrices: f.matrices.iter().map(|m| m.name.clone()).collect(),
        sizes: f.sizes.iter().map(|s| s.name.clone()).collect(),
        scalars: f.scalars.iter().map(|s| s.name.clone()).collect(),
        body,
        streamed: Vec::new(),
    }
}

/// A host expression of `f` (sizes, host scalars) in a function of its own: the expression's
/// handle in it.
pub(super) fn host_expr(f: &Function, e: &ir::Expr) -> (Func, ExprId) {
    let mut l = Lower {
        f,
        out: empty(f),
        r: None,
        slots: vec![],
        locals: vec![],
        host_proofs: false,
        branch: 0,
        cond: 0,
        unroll: usize::MAX,
        slide_taps: usize::MAX,
        gpu: false,
        scans: Vec::new(),
        prefix_vals: Vec::new(),
    };
    let e = l.scalar(e, Mode::Body);
    (l.out, e)
}

/// The LIR of a checked function (of its region `only` alone, if given); reductions of
/// windows of more than `unroll` taps are folds, and those of more than `slide_taps` that
/// could slide.
pub(super) fn function(
    f: &Function,
    host_proofs: bool,
    only: Option<ir::RegionId>,
    (unroll, slide_taps): (usize, usize),
    gpu: bool,
) -> Func {
    let out = empty(f);
    let mut l = Lower {
        f,
        out,
        r: None,
        slots: vec![],
        locals: vec![],
        host_proofs,
        branch: 0,
        cond: 0,
        unroll,
        slide_taps,
        gpu,
        scans: Vec::new(),
        prefix_vals: Vec::new(),
    };
    let mut body = Vec::new();
    for (m, mat) in f.matrices.iter().enumerate() {
        if mat.kind == MatrixKind::Local {
            let extents = mat.dims.iter().map(|d| l.host_i64(d)).collect();
            body.push(l.out.stmt(Stmt::Allocate {
                buf: Buf::Matrix(m),
                elem: mat.elem,
                memory: Memory::Global,
                extents,
            }));
        }
    }
    l.host_steps(&f.steps, only, &mut body);
    let mut out = l.out;
    out.body = out.stmt(Stmt::Block(body));
    out
}

impl<'a> Lower<'a> {
    /// A host expression as `i64` (extents).
    fn host_i64(&mut self, e: &ir::Expr) -> ExprId {
        let v = self.scalar(e, Mode::Body);
        self.out.cast(v, Scalar::I64)
    }

    fn region(&mut self, id: ir::RegionId) -> StmtId {
        let r = &self.f.regions[id];
        if let RegionKind::Reduction { op, matrix, result } = r.kind {
            return self.out.stmt(Stmt::Reduce { op, matrix, result });
        }
        self.r = Some(r);
        self.locals = vec![None; r.locals.len()];
        self.slots = r
            .dims
            .iter()
            .map(|d| d.as_ref().map(|d| self.out.var(&d.var, Scalar::I32)))
            .collect();
        let order = prefix::nest_order(r, self.gpu);
        let allocs = self.scans(r, &order);
        let mut inner = self.stmts(&r.body);
        for (p, &slot) in order.iter().enumerate().rev() {
            let (Some(d), Some(var)) = (&r.dims[slot], self.slots[slot]) else {
                continue;
            };
            let lo = self.scalar(&d.lo, Mode::Body);
            let lo = self.out.cast(lo, Scalar::I32);
            let hi = self.scalar(&d.hi, Mode::Body);
            let hi = self.out.cast(hi, Scalar::I32);
            inner = self.out.stmt(Stmt::For {
                var,
                lo,
                hi,
                step: d.step,
                kind: super::LoopKind::Serial,
                body: inner,
            });
            if !allocs[p].is_empty() {
                let b = allocs[p].iter().copied().chain([inner]).collect();
                inner = self.out.stmt(Stmt::Block(b));
            }
        }
        self.r = None;
        self.out.stmt(Stmt::Region {
            id,
            name: r.name.clone(),
            body: inner,
        })
    }

    fn stmts(&mut self, body: &[KStmt]) -> StmtId {
        let mut out = Vec::new();
        for s in body {
            if self.branch == 0 && !self.scans.is_empty() {
                self.advance(s, &mut out);
            }
            match s {
                KStmt::Let(l, e) => {
                    let name = self.r.map_or("l", |r| r.locals[*l].name.as_str());
                    let name = name.to_string();
                    if let Type::Block { .. } = e.ty {
                        let vals = self.block(e, Mode::Body);
                        let mut vars = Vec::new();
                        for (k, v) in vals.into_iter().enumerate() {
                            let ty = self.out.exprs[v].ty;
                            let var = self.out.var(&format!("{name}.e{k}"), ty);
                            out.push(self.out.stmt(Stmt::Let(var, v)));
                            vars.push(var);
                        }
                        self.locals[*l] = Some(LocalVal::Block(vars));
                    } else {
                        let v = self.scalar(e, Mode::Body);
                        let var = self.out.var(&name, self.out.exprs[v].ty);
                        out.push(self.out.stmt(Stmt::Let(var, v)));
                        self.locals[*l] = Some(LocalVal::Scalar(var));
                    }
                }
                KStmt::Store(a, e) => out.extend(self.store(*a, e)),
                KStmt::If(c, t, e) => {
                    let c = self.scalar(c, Mode::Body);
                    self.branch += 1;
                    let t = self.stmts(t);
                    let e = (!e.is_empty()).then(|| self.stmts(e));
                    self.branch -= 1;
                    out.push(self.out.stmt(Stmt::If(c, t, e)));
                }
            }
        }
        self.out.stmt(Stmt::Block(out))
    }

    fn accesses(&self) -> &'a [ir::Access] {
        self.r.map_or(&[], |r| &r.accesses)
    }

    fn store(&mut self, aid: AccessId, value: &ir::Expr) -> Vec<StmtId> {
        let a = &self.accesses()[aid];
        let elem = self.f.matrices[a.matrix].elem;
        // An integer reduction into a shared element: the update alone (a float one keeps its
        // store, its region's iterations running in order).
        let update = self
            .r
            .and_then(|r| r.updates.iter().find(|u| u.write == aid));
        if let Some(u) = update.filter(|_| !elem.is_float()) {
            let v = self.scalar(&u.value, Mode::Body);
            let value = self.out.cast(v, elem);
            let index = self.indices(a, At::First, None);
            let checked = !self.host_proven(aid) && !self.within(a.matrix, &index);
            return vec![self.out.stmt(Stmt::Update {
                buf: Buf::Matrix(a.matrix),
                index,
                op: u.op,
                value,
                checked,
            })];
        }
        let (vals, cols) = match value.ty {
            Type::Block { .. } => {
                let cols = value.ty.shape().map_or(1, |(_, c)| c);
                (self.block(value, Mode::Body), cols)
            }
            Type::Scalar(_) => (vec![self.scalar(value, Mode::Body)], 1),
        };
        let blk = value.ty.is_block();
        let mut out = Vec::new();
        // A block is computed whole before its first element is stored.
        let vals: Vec<ExprId> = if blk {
            vals.into_iter()
                .map(|v| {
                    let ty = self.out.exprs[v].ty;
                    let var = self.out.var("blk", ty);
                    out.push(self.out.stmt(Stmt::Let(var, v)));
                    self.out.expr(ExprKind::Var(var), ty)
                })
                .collect()
        } else {
            vals
        };
        for (k, v) in vals.into_iter().enumerate() {
            let at = blk.then_some((k / cols, k % cols));
            let index = self.indices(a, at.into(), None);
            let value = self.out.cast(v, elem);
            let checked = !self.host_proven(aid);
            out.push(self.out.stmt(Stmt::Store {
                buf: Buf::Matrix(a.matrix),
                index,
                value,
                checked,
            }));
        }
        out
    }

    /// Whether indices `index` of matrix `m` are inside it whatever they read: each one's
    /// values (`lir::range`, a pixel's type bounding a bin's index) within a dimension that is
    /// a constant (`hist[src[x][y]]` of `i32[256]`).
    fn within(&self, m: usize, index: &[ExprId]) -> bool {
        let dims = &self.f.matrices[m].dims;
        index.len() == dims.len()
            && index.iter().zip(dims).all(|(i, d)| {
                let ir::ExprKind::Int(n) = d.kind else {
                    return false;
                };
                super::range::range(&self.out, *i).is_some_and(|(lo, hi)| lo >= 0 && hi < n)
            })
    }

    /// The `i64` indices of an access at block element `at` (a window in the last dimension
    /// follows the column, any other the row); `*` is `outer`'s index.
    fn indices(&mut self, a: &ir::Access, at: At, outer: Option<&[VarId]>) -> Vec<ExprId> {
        let n = a.subs.len();
        let mut out = Vec::with_capacity(n);
        for (k, s) in a.subs.iter().enumerate() {
            let i = match s {
                Sub::Point(e) => {
                    let e = self.scalar(e, Mode::Body);
                    self.out.cast(e, Scalar::I64)
                }
                Sub::Window { start, stride, .. } => {
                    let e = self.scalar(start, Mode::Body);
                    let e = self.out.cast(e, Scalar::I64);
                    let off = match at {
                        At::First => 0,
                        At::Cell(_, bj) if k + 1 == n => bj as i64,
                        At::Cell(bi, _) => bi as i64,
                        At::Tap(bi, bj) => {
                            // The tap's row or column, times the stride.
                            let b = if k + 1 == n { bj } else { bi };
                            let mut b = self.out.cast(b, Scalar::I64);
                            if *stride != 1 {
                                let s = self.out.int(*stride as i128, Scalar::I64);
                                b = self.out.binary(BinOp::Mul, b, s, Scalar::I64);
                            }
                            out.push(self.out.binary(BinOp::Add, e, b, Scalar::I64));
                            continue;
                        }
                    };
                    if off == 0 {
                        e
                    } else {
                        let c = self.out.int((off * stride) as i128, Scalar::I64);
                        self.out.binary(BinOp::Add, e, c, Scalar::I64)
                    }
                }
                Sub::Star => match outer.and_then(|o| o.get(k)) {
                    Some(v) => self.out.expr(ExprKind::Var(*v), Scalar::I64),
                    None => self.out.int(0, Scalar::I64),
                },
            };
            out.push(i);
        }
        out
    }

    /// `lo <= i && i < hi` style conjunction of `conds` (`true` when empty).
    fn all(&mut self, conds: Vec<ExprId>) -> ExprId {
        let mut it = conds.into_iter();
        let Some(first) = it.next() else {
            return self.out.int(1, Scalar::Bool);
        };
        it.fold(first, |acc, c| {
            self.out.binary(BinOp::And, acc, c, Scalar::Bool)
        })
    }

    fn cmp(&mut self, op: BinOp, a: ExprId, b: ExprId) -> ExprId {
        self.out.binary(op, a, b, Scalar::Bool)
    }

    /// `0 <= i < dim(m, k)`.
    fn inside(&mut self, m: usize, k: usize, i: ExprId) -> ExprId {
        let zero = self.out.int(0, Scalar::I64);
        let d = self.out.expr(ExprKind::Dim(m, k), Scalar::I64);
        let a = self.cmp(BinOp::Ge, i, zero);
        let b = self.cmp(BinOp::Lt, i, d);
        self.out.binary(BinOp::And, a, b, Scalar::Bool)
    }

    /// Access `aid` read as type `want` (block element `at` of a window), border rules in
    /// force lowered as a `select` chain.
    fn load(&mut self, aid: AccessId, want: Scalar, at: At) -> ExprId {
        let a = &self.accesses()[aid];
        let m = a.matrix;
        let elem = self.f.matrices[m].elem;
        if let Some(sh) = self.r.and_then(|r| self.f.shorthand_for(r, m)) {
            let index = self.indices(a, at, None);
            return self.shorthand_load(sh, m, index, want);
        }
        let entries: Vec<&'a BorderEntry> = match self.r {
            Some(r) => r
                .rules
                .iter()
                .flat_map(|id| self.f.rules[*id].entries.iter())
                .filter(|e| e.matrix == m)
                .collect(),
            None => vec![],
        };
        let index = self.indices(a, at, None);
        if entries.is_empty() {
            let checked = !self.host_proven(aid) && !self.within(m, &index);
            let l = self.out.expr(
                ExprKind::Load {
                    buf: Buf::Matrix(m),
                    index,
                    checked,
                },
                elem,
            );
            return self.out.cast(l, want);
        }
        // Bind the indices once; every arm reads them.
        let vars: Vec<VarId> = (0..index.len())
            .map(|k| self.out.var(&format!("i{k}"), Scalar::I64))
            .collect();
        let uses: Vec<ExprId> = vars
            .iter()
            .map(|v| self.out.expr(ExprKind::Var(*v), Scalar::I64))
            .collect();
        let read = self.out.expr(
            ExprKind::Load {
                buf: Buf::Matrix(m),
                index: uses.clone(),
                checked: true,
            },
            elem,
        );
        let read = self.out.cast(read, want);
        // From the last entry back: the fallback is the checked read itself.
        let mut chain = read;
        for e in entries.iter().rev() {
            let conds = e
                .sels
                .iter()
                .enumerate()
                .map(|(k, sel)| {
                    let i = uses[k];
                    match sel {
                        Sel::Star => self.inside(m, k, i),
                        Sel::Before(j) => {
                            let c = self.out.int(-(*j as i128), Scalar::I64);
                            self.cmp(BinOp::Eq, i, c)
                        }
                        Sel::After(j) => {
                            let d = self.out.expr(ExprKind::Dim(m, k), Scalar::I64);
                            let c = self.out.int(*j as i128 - 1, Scalar::I64);
                            let last = self.out.binary(BinOp::Add, d, c, Scalar::I64);
                            self.cmp(BinOp::Eq, i, last)
                        }
                    }
                })
                .collect();
            let hit = self.all(conds);
            let v = self.scalar(&e.value, Mode::Entry(e, &vars));
            let v = self.out.cast(v, want);
            chain = self.out.expr(ExprKind::Select(hit, v, chain), want);
        }
        let inb = (0..uses.len())
            .map(|k| self.inside(m, k, uses[k]))
            .collect();
        let inb = self.all(inb);
        let mut e = self.out.expr(ExprKind::Select(inb, read, chain), want);
        for (v, i) in vars.iter().zip(index).rev() {
            e = self.out.expr(ExprKind::Let(*v, i, e), want);
        }
        e
    }

    /// Whether the host proves access `aid` of the region inside before it runs (and this
    /// lowering relies on it).
    fn host_proven(&self, aid: AccessId) -> bool {
        let Some(r) = self.r else {
            return false;
        };
        self.host_proofs && crate::codegen::safety::host_proven(self.f, r, aid)
    }

    /// Whether the host checks integer divisor `b` of the region's body, at the statement being
    /// lowered, is not zero before the region runs (and this lowering relies on it).
    fn host_divisor(&self, b: &ir::Expr) -> bool {
        let Some(r) = self.r else {
            return false;
        };
        self.host_proofs
            && b.ty.elem().is_int()
            && !b.ty.is_block()
            && crate::codegen::safety::host_divisor(r, b, self.branch)
    }

    /// A read inside a border value: not extended itself.
    fn entry_load(&mut self, entry: &BorderEntry, aid: AccessId, outer: &[VarId]) -> ExprId {
        let a = &entry.accesses[aid];
        let index = self.indices(a, At::First, Some(outer));
        let elem = self.f.matrices[a.matrix].elem;
        self.out.expr(
            ExprKind::Load {
                buf: Buf::Matrix(a.matrix),
                index,
                checked: true,
            },
            elem,
        )
    }

    /// A scalar expression.
    fn scalar(&mut self, e: &ir::Expr, mode: Mode<'a, '_>) -> ExprId {
        let t = e.ty.elem();
        match &e.kind {
            H::Int(v) => {
                if t.is_float() {
                    self.out.expr(ExprKind::Float(*v as f64), t)
                } else {
                    self.out.int(*v, t)
                }
            }
            H::Float(v) => self.out.expr(ExprKind::Float(*v), t),
            H::Size(i) => {
                let s = self.out.expr(ExprKind::Size(*i), Scalar::I32);
                self.out.cast(s, t)
            }
            H::Host(i) => {
                let s = self.out.expr(ExprKind::Host(*i), self.f.scalars[*i].ty);
                self.out.cast(s, t)
            }
            H::Var(slot) => match self.slots.get(*slot).copied().flatten() {
                Some(v) => {
                    let x = self.out.expr(ExprKind::Var(v), Scalar::I32);
                    self.out.cast(x, t)
                }
                None => self.out.int(0, t),
            },
            H::Local(l) => match self.locals.get(*l).cloned().flatten() {
                Some(LocalVal::Scalar(v)) => self.out.expr(ExprKind::Var(v), t),
                _ => self.out.int(0, t),
            },
            H::Load(a) => match mode {
                Mode::Body => self.load(*a, t, At::First),
                Mode::Entry(entry, outer) => {
                    let l = self.entry_load(entry, *a, outer);
                    self.out.cast(l, t)
                }
            },
            H::Cast(inner, to) => {
                if let (H::Load(a), Mode::Body) = (&inner.kind, mode) {
                    return self.load(*a, *to, At::First);
                }
                let x = self.scalar(inner, mode);
                self.out.cast(x, *to)
            }
            H::Unary(op, a) => {
                let x = self.scalar(a, mode);
                self.out.expr(ExprKind::Unary(*op, x), t)
            }
            H::Binary(op, a, b) => {
                let x = self.scalar(a, mode);
                let short = matches!(op, BinOp::And | BinOp::Or);
                self.cond += usize::from(short);
                let mut y = self.scalar(b, mode);
                self.cond -= usize::from(short);
                if matches!(op, BinOp::Div | BinOp::Rem) && self.host_divisor(b) {
                    let yt = self.out.exprs[y].ty;
                    y = self.out.expr(ExprKind::Call(Builtin::NonZero, vec![y]), yt);
                }
                self.out.binary(*op, x, y, t)
            }
            H::Call(b, args) => {
                let xs = args.iter().map(|a| self.scalar(a, mode)).collect();
                self.out.expr(ExprKind::Call(*b, xs), t)
            }
            H::Prefix { id, .. } => self.prefix_value(*id, t),
            H::Reduce(op, a) => {
                if let Some(fold) = self.fold(*op, a, t, mode) {
                    return fold;
                }
                let vals = self.block(a, mode);
                self.reduce(*op, vals, t)
            }
            H::Conv(fl, w) => {
                if let Some(f) = self.conv_fold(fl, w, t, mode) {
                    return f;
                }
                let fe = fl.ty.elem();
                let (xf, xw) = (self.block(fl, mode), self.block(w, mode));
                let products = xf
                    .into_iter()
                    .zip(xw)
                    .map(|(a, b)| {
                        let p = self.out.binary(BinOp::Mul, a, b, fe);
                        self.out.cast(p, t)
                    })
                    .collect();
                self.combine_all(ir::ReduceOp::Sum, products, t)
            }
            H::Block(_) | H::MatMul(..) | H::Transpose(_) => self.out.int(0, t),
        }
    }
}
