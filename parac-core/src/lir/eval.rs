//! Runs a [`Func`] on host tensors with the interpreter's values and operators
//! (`crate::interp`), so that the lowering and every pass can be compared, bit for bit, with
//! the reference interpreter on the same arguments. It makes no host proof: where the
//! interpreter's proof refuses a call before it runs, the two may differ (the tests compare
//! calls the interpreter completes). Vectors (the OpenCL lowering's vector loads and stores) run
//! lane by lane; global reductions are the interpreter's (`crate::interp::reduction`).

use super::{Buf, ExprId, ExprKind, Func, Loop, StageInto, Stmt, StmtId};
use crate::interp::{Arg, Data, InterpError, Val, binary, call, cast, cast_f64, unary};
use crate::ir::{BinOp, Builtin, Function, MatrixKind, ParamRef, ReduceOp};

struct Machine<'a> {
    func: &'a Func,
    f: &'a Function,
    sizes: Vec<i64>,
    dims: Vec<Vec<i64>>,
    mats: Vec<Data>,
    hosts: Vec<Val>,
    vars: Vec<Val>,
    /// The lanes of vector variables.
    vectors: std::collections::HashMap<usize, Vec<Val>>,
    /// Temporary buffers (local-memory tiles), by index: their extents and elements.
    temps: std::collections::HashMap<usize, (Vec<i64>, Data)>,
    /// Temporaries that are a task's rows of a matrix (`Memory::Rows`): the matrix, its first
    /// row, the temporary's extents.
    rows: std::collections::HashMap<usize, (usize, i64, Vec<i64>)>,
    /// The innermost `ParallelChunks` task running: its first row and its step.
    task: Option<(i64, i64)>,
    region: String,
}

/// Runs `func`, lowered from `f`, on `args` (as [`crate::interp::run`] takes them).
pub fn run(func: &Func, f: &Function, args: &mut [Arg]) -> Result<Option<Val>, InterpError> {
    let bad = |s: &str| InterpError::Argument(s.to_string());
    let mut sizes = vec![0i64; f.sizes.len()];
    let matrix_arg = |m: usize| f.params.iter().position(|p| *p == ParamRef::Matrix(m));
    for (i, s) in f.sizes.iter().enumerate() {
        let (m, k) = s.bound_by;
        let a = matrix_arg(m).ok_or_else(|| bad("a size without its matrix"))?;
        let Some(Arg::Matrix(t)) = args.get(a) else {
            return Err(bad("a matrix parameter without its tensor"));
        };
        sizes[i] = *t.shape.get(k).ok_or_else(|| bad("a rank"))? as i64;
    }
    let dims = crate::interp::matrix_dims(f, &sizes)?;
    let mut mats = Vec::with_capacity(f.matrices.len());
    for (m, mat) in f.matrices.iter().enumerate() {
        let n = dims[m].iter().map(|d| (*d).max(0) as usize).product();
        let mut data = Data::zeros(mat.elem, n).ok_or_else(|| bad("an element type"))?;
        match &mat.kind {
            MatrixKind::Const(values) => {
                for (i, v) in values.iter().enumerate().take(n) {
                    data.set(i, cast_f64(*v, mat.elem));
                }
            }
            MatrixKind::Input | MatrixKind::Output => {
                if let Some(Arg::Matrix(t)) = matrix_arg(m).and_then(|a| args.get(a)) {
                    data = t.data.clone();
                }
            }
            MatrixKind::Local => {}
        }
        mats.push(data);
    }
    let mut hosts = vec![Val::Int(0); f.scalars.len()];
    for (p, a) in f.params.iter().zip(args.iter()) {
        if let (ParamRef::Scalar(s), Arg::Scalar(v)) = (p, a) {
            hosts[*s] = *v;
        }
    }
    let mut m = Machine {
        func,
        f,
        sizes,
        dims,
        mats,
        hosts,
        vars: vec![Val::Int(0); func.vars.len()],
        vectors: Default::default(),
        temps: Default::default(),
        rows: Default::default(),
        task: None,
        region: "(host code)".to_string(),
    };
    let result = m.stmt(func.body);
    for (p, a) in f.params.iter().zip(args.iter_mut()) {
        if let (ParamRef::Matrix(id), Arg::Matrix(t)) = (p, a) {
            std::mem::swap(&mut t.data, &mut m.mats[*id]);
        }
    }
    result
}

impl Machine<'_> {
    fn unsupported(what: &str) -> InterpError {
        InterpError::Unsupported(format!("{what} in the LIR evaluator"))
    }

    /// The linear offset of `index` in matrix `m`, or the error naming the access.
    fn offset(&self, buf: Buf, index: &[i64], what: &'static str) -> Result<usize, InterpError> {
        // A task's rows of a matrix: checked against its rows, then the matrix's element.
        let mut task_rows = None;
        let (d, name) = match buf {
            Buf::Matrix(m) => (&self.dims[m], &self.func.matrices[m]),
            Buf::Temp(t) if self.rows.contains_key(&t.index()) => {
                let (m, first, d) = &self.rows[&t.index()];
                task_rows = Some((*m, *first));
                (d, &self.func.temps[t].name)
            }
            Buf::Temp(t) => match self.temps.get(&t.index()) {
                Some((d, _)) => (d, &self.func.temps[t].name),
                None => return Err(Self::unsupported("a temporary read before its allocation")),
            },
        };
        let mut lin = 0i64;
        for (i, k) in index.iter().zip(d) {
            if *i < 0 || i >= k {
                return Err(InterpError::OutOfBounds {
                    region: self.region.clone(),
                    what,
                    matrix: name.clone(),
                    index: index.to_vec(),
                    shape: d_shape(d),
                });
            }
            lin = lin * k + i;
        }
        if let Some((m, first)) = task_rows {
            let mut row = index.to_vec();
            row[0] += first;
            return self.offset(Buf::Matrix(m), &row, what);
        }
        Ok(lin as usize)
    }

    /// The elements of a buffer.
    fn data(&mut self, buf: Buf) -> &mut Data {
        match buf {
            Buf::Matrix(m) => &mut self.mats[m],
            Buf::Temp(t) if self.rows.contains_key(&t.index()) => {
                &mut self.mats[self.rows[&t.index()].0]
            }
            Buf::Temp(t) => &mut self.temps.get_mut(&t.index()).expect("allocated").1,
        }
    }

    /// The indices of every lane of an access (a scalar index the same in every lane).
    fn lane_indices(&mut self, index: &[ExprId], lanes: u32) -> Result<Vec<Vec<i64>>, InterpError> {
        let per: Vec<Vec<Val>> = index
            .iter()
            .map(|i| self.lanes(*i))
            .collect::<Result<_, _>>()?;
        Ok((0..lanes as usize)
            .map(|l| {
                per.iter()
                    .map(|v| v[if v.len() == 1 { 0 } else { l }].as_i64())
                    .collect()
            })
            .collect())
    }

    /// Every lane of `e` (one for a scalar).
    fn lanes(&mut self, e: ExprId) -> Result<Vec<Val>, InterpError> {
        let x = &self.func.exprs[e];
        let (t, n) = (x.ty, x.lanes);
        if n == 1 {
            return Ok(vec![self.expr(e)?]);
        }
        Ok(match &x.kind {
            ExprKind::Var(v) => self
                .vectors
                .get(&v.index())
                .cloned()
                .ok_or_else(|| Self::unsupported("an unbound vector"))?,
            ExprKind::Load { buf, index, .. } => {
                let buf = *buf;
                let mut out = Vec::new();
                for idx in self.lane_indices(&index.clone(), n)? {
                    let lin = self.offset(buf, &idx, "read of")?;
                    out.push(self.data(buf).get(lin));
                }
                out
            }
            ExprKind::Ramp { base, stride } => {
                let b = self.expr(*base)?.as_i64();
                (0..n as i64)
                    .map(|k| cast(Val::Int((b + k * stride) as i128), t))
                    .collect()
            }
            ExprKind::Broadcast(a) => vec![self.expr(*a)?; n as usize],
            ExprKind::Vector(xs) => xs
                .clone()
                .iter()
                .map(|a| self.expr(*a))
                .collect::<Result<_, _>>()?,
            _ => return Err(Self::unsupported("a vector operation")),
        })
    }

    fn expr(&mut self, e: ExprId) -> Result<Val, InterpError> {
        let x = &self.func.exprs[e];
        let t = x.ty;
        if x.lanes != 1 {
            return Err(Self::unsupported("a vector"));
        }
        Ok(match &x.kind {
            ExprKind::Int(v) => cast(Val::Int(*v), t),
            ExprKind::Float(v) => cast_f64(*v, t),
            ExprKind::Var(v) => self.vars[v.index()],
            ExprKind::Size(s) => cast(Val::Int(self.sizes[*s] as i128), t),
            ExprKind::Host(s) => self.hosts[*s],
            ExprKind::Dim(m, k) => Val::Int(self.dims[*m][*k] as i128),
            ExprKind::Load { buf, index, .. } => {
                let idx = self.lane_indices(&index.clone(), 1)?.remove(0);
                let buf = *buf;
                let lin = self.offset(buf, &idx, "read of")?;
                self.data(buf).get(lin)
            }
            // Known outside: the read's error, never the element (zero where it is inside).
            ExprKind::Outside { matrix, index } => {
                let idx = self.lane_indices(&index.clone(), 1)?.remove(0);
                self.offset(Buf::Matrix(*matrix), &idx, "read of")?;
                cast(Val::Int(0), t)
            }
            ExprKind::Extract(a, k) => {
                let (a, k) = (*a, *k as usize);
                self.lanes(a)?[k]
            }
            ExprKind::Ramp { .. } | ExprKind::Broadcast(_) | ExprKind::Vector(_) => {
                return Err(Self::unsupported("a vector"));
            }
            ExprKind::Unary(op, a) => unary(*op, self.expr(*a)?, t),
            ExprKind::Binary(op, a, b) => {
                let x = self.expr(*a)?;
                match op {
                    BinOp::And if !x.truthy() => return Ok(Val::Bool(false)),
                    BinOp::Or if x.truthy() => return Ok(Val::Bool(true)),
                    _ => {}
                }
                let y = self.expr(*b)?;
                let ot = self.func.exprs[*a].ty;
                // A sum or product marked exact is one a pass proved never wraps: a proof
                // that failed is a bug of the compiler, which the tests must see.
                if self.func.exprs[e].exact {
                    let (p, q) = (x.as_i128(), y.as_i128());
                    let v = match op {
                        BinOp::Add => p.checked_add(q),
                        BinOp::Sub => p.checked_sub(q),
                        _ => p.checked_mul(q),
                    };
                    let r = t.range().expect("an integer type");
                    assert!(
                        v.is_some_and(|v| v >= r.0 && v <= r.1),
                        "lir::eval: an exact {op:?} wrapped (a broken range proof)"
                    );
                }
                binary(*op, x, y, t, ot).map_err(|_| InterpError::DivisionByZero {
                    region: self.region.clone(),
                })?
            }
            ExprKind::Cast(a) => cast(self.expr(*a)?, t),
            ExprKind::Call(b, args) => {
                let xs = args
                    .iter()
                    .map(|a| self.expr(*a))
                    .collect::<Result<Vec<_>, _>>()?;
                // `mul24` is only written where its operands are proven to fit 24 bits
                // (OpenCL leaves the product undefined otherwise): a proof that failed is a
                // bug of the compiler, which the tests running this evaluator must see.
                let (lo, hi) = crate::lir::pass::peephole::M24;
                assert!(
                    *b != Builtin::Mul24 || xs.iter().all(|x| (lo..=hi).contains(&x.as_i128())),
                    "lir::eval: mul24 of an operand past 24 bits (a broken range proof)"
                );
                call(*b, &xs, t)
            }
            ExprKind::Select(c, a, b) => {
                if self.expr(*c)?.truthy() {
                    self.expr(*a)?
                } else {
                    self.expr(*b)?
                }
            }
            ExprKind::Let(v, a, b) => {
                self.vars[v.index()] = self.expr(*a)?;
                self.expr(*b)?
            }
            ExprKind::Fold {
                op,
                vars,
                counts,
                init,
                elem,
            } => {
                let counts = counts
                    .iter()
                    .map(|c| Ok(self.expr(*c)?.as_i64()))
                    .collect::<Result<Vec<i64>, InterpError>>()?;
                let mut acc = self.expr(*init)?;
                let mut at = vec![0i64; counts.len()];
                if counts.iter().all(|c| *c > 0) {
                    'taps: loop {
                        for (v, i) in vars.iter().zip(&at) {
                            self.vars[v.index()] = Val::Int(*i as i128);
                        }
                        let x = self.expr(*elem)?;
                        acc = match op {
                            ReduceOp::Min => call(Builtin::Min, &[acc, x], t),
                            ReduceOp::Max => call(Builtin::Max, &[acc, x], t),
                            _ => binary(BinOp::Add, acc, x, t, t).expect("an addition"),
                        };
                        // The next tap, row-major.
                        for d in (0..at.len()).rev() {
                            at[d] += 1;
                            if at[d] < counts[d] {
                                continue 'taps;
                            }
                            at[d] = 0;
                        }
                        break;
                    }
                }
                acc
            }
        })
    }

    fn stmt(&mut self, s: StmtId) -> Result<Option<Val>, InterpError> {
        match &self.func.stmts[s] {
            Stmt::Block(b) => {
                for s in b {
                    if let Some(v) = self.stmt(*s)? {
                        return Ok(Some(v));
                    }
                }
            }
            Stmt::For { .. } => {
                let l = Loop::of(self.func, s).expect("a loop");
                let hi = self.expr(l.hi)?.as_i64();
                let mut c = self.expr(l.lo)?.as_i64();
                let (chunks, step) = match self.func.stmts[s] {
                    Stmt::For {
                        kind: super::LoopKind::ParallelChunks(strip),
                        ..
                    } => {
                        // A step chosen when the call runs: its variable's value, at least 1.
                        let step = match strip {
                            Some(v) => self.vars[v.index()].as_i64().clamp(1, i32::MAX.into()),
                            None => l.step as i32 as i64,
                        };
                        (true, step)
                    }
                    _ => (false, l.step as i32 as i64),
                };
                let outer = self.task;
                while c < hi {
                    self.vars[l.var.index()] = Val::Int(c as i32 as i128);
                    if chunks {
                        self.task = Some((c as i32 as i64, step));
                    }
                    self.stmt(l.body)?;
                    c = c.wrapping_add(step);
                }
                self.task = outer;
            }
            Stmt::Let(v, e) => {
                let (v, e) = (*v, *e);
                if self.func.vars[v].lanes > 1 {
                    let l = self.lanes(e)?;
                    self.vectors.insert(v.index(), l);
                } else {
                    self.vars[v.index()] = self.expr(e)?;
                }
            }
            Stmt::HostLet(h, e) => {
                let h = *h;
                self.hosts[h] = self.expr(*e)?;
            }
            Stmt::Repeat { count, body, .. } => {
                let body = *body;
                for _ in 0..self.expr(*count)?.as_i64() {
                    if let Some(v) = self.stmt(body)? {
                        return Ok(Some(v));
                    }
                }
            }
            Stmt::Swap(a, b) => self.mats.swap(*a, *b),
            Stmt::If(c, t, e) => {
                let (t, e) = (*t, *e);
                if self.expr(*c)?.truthy() {
                    self.stmt(t)?;
                } else if let Some(e) = e {
                    self.stmt(e)?;
                }
            }
            Stmt::Store {
                buf, index, value, ..
            } => {
                let (buf, value) = (*buf, *value);
                let vs = self.lanes(value)?;
                let idx = self.lane_indices(&index.clone(), vs.len() as u32)?;
                for (v, idx) in vs.into_iter().zip(idx) {
                    let lin = self.offset(buf, &idx, "write to")?;
                    self.data(buf).set(lin, v);
                }
            }
            Stmt::Update {
                buf,
                index,
                op,
                value,
                ..
            } => {
                let (buf, op) = (*buf, *op);
                let v = self.expr(*value)?;
                let idx = self.lane_indices(&index.clone(), 1)?;
                let t = self.func.exprs[*value].ty;
                for idx in idx {
                    // Outside, the update's read fails first (as `m[i] = m[i] op e` would).
                    let lin = self.offset(buf, &idx, "read of")?;
                    let old = self.data(buf).get(lin);
                    self.data(buf)
                        .set(lin, crate::interp::value::update(op, old, v, t));
                }
            }
            Stmt::Allocate {
                buf: Buf::Temp(t),
                memory: super::Memory::Rows(m),
                ..
            } => {
                // The task's rows of `m`: fewer at its end, none outside a task.
                let (first, step) = self
                    .task
                    .ok_or_else(|| Self::unsupported("a task's rows outside a task"))?;
                let d = &self.dims[*m];
                let rows = (d[0] - first).clamp(0, step.max(0));
                let mut shape = vec![rows];
                shape.extend_from_slice(&d[1..]);
                self.rows.insert(t.index(), (*m, first, shape));
            }
            Stmt::Allocate {
                buf: Buf::Temp(t),
                elem,
                extents,
                ..
            } => {
                let (t, elem) = (*t, *elem);
                let d: Vec<i64> = extents
                    .clone()
                    .iter()
                    .map(|e| self.expr(*e).map(|v| v.as_i64()))
                    .collect::<Result<_, _>>()?;
                let n = d.iter().map(|d| (*d).max(0) as usize).product();
                let data =
                    Data::zeros(elem, n).ok_or_else(|| Self::unsupported("an element type"))?;
                self.temps.insert(t.index(), (d, data));
            }
            // Matrices are allocated before the function runs; a barrier orders nothing in one
            // thread (the evaluator runs a group's work-items one after the other, each loop
            // over the group to its end before the next statement).
            Stmt::Allocate { .. } | Stmt::Barrier { .. } => {}
            Stmt::ScanTotals { .. } => self.scan_totals(s)?,
            Stmt::Stage(st) => {
                // A temporary's rows are its extents' (`stride` is their length).
                let st = st.clone();
                let (m, y_dim, y_step, x_step) = (st.buf, st.y_dim, st.y_step, st.x_step);
                let ints = |this: &mut Self, es: &[ExprId]| -> Result<Vec<i64>, InterpError> {
                    es.iter()
                        .map(|e| this.expr(*e).map(|v| v.as_i64()))
                        .collect()
                };
                let base = ints(self, &st.index)?;
                let (rows, cols) = (self.expr(st.rows)?.as_i64(), self.expr(st.cols)?.as_i64());
                let to_base = ints(self, st.into_index())?;
                let last = base.len() - 1;
                let within = |d: &[i64], k: usize, a: i64, b: i64| a.min(b) >= 0 && a.max(b) < d[k];
                let d = &self.dims[m];
                let mut all = within(d, last, base[last], base[last] + x_step * (rows - 1))
                    && within(d, y_dim, base[y_dim], base[y_dim] + y_step * (cols - 1))
                    && (0..last).all(|k| k == y_dim || within(d, k, base[k], base[k]));
                if let StageInto::Matrix { buf, .. } = st.into {
                    let d = &self.dims[buf];
                    all = all
                        && to_base.len() == 2
                        && within(d, 0, to_base[0], to_base[0] + rows - 1)
                        && within(d, 1, to_base[1], to_base[1] + cols - 1);
                }
                let all = rows <= 0 || cols <= 0 || all;
                self.vars[st.inside.index()] = Val::Bool(all);
                if all {
                    for i in 0..rows.max(0) {
                        for j in 0..cols.max(0) {
                            let mut at = base.clone();
                            at[last] += x_step * i;
                            at[y_dim] += y_step * j;
                            let from = self.offset(Buf::Matrix(m), &at, "read of")?;
                            let v = self.data(Buf::Matrix(m)).get(from);
                            // Each write its own check.
                            let (to, at) = match st.into {
                                StageInto::Temp { temp, .. } => (Buf::Temp(temp), vec![i, j]),
                                StageInto::Matrix { buf, .. } => {
                                    (Buf::Matrix(buf), vec![to_base[0] + i, to_base[1] + j])
                                }
                            };
                            let at = self.offset(to, &at, "write to")?;
                            self.data(to).set(at, v);
                        }
                    }
                }
            }
            Stmt::Speculate {
                flag,
                body,
                fallback,
            } => {
                let (flag, body, fallback) = (*flag, *body, *fallback);
                self.vars[flag.index()] = Val::Bool(true);
                if let Some(v) = self.stmt(body)? {
                    return Ok(Some(v));
                }
                if matches!(self.vars[flag.index()], Val::Bool(false)) {
                    return self.stmt(fallback);
                }
            }
            Stmt::Within(w) => {
                let w = w.clone();
                let mut at: Vec<i64> = w
                    .rows
                    .iter()
                    .map(|e| self.expr(*e).map(|v| v.as_i64()))
                    .collect::<Result<_, _>>()?;
                let d = self.dims[w.buf].clone();
                let mut held = at.iter().zip(&d).all(|(i, k)| (0..*k).contains(i));
                let n = d.last().copied().unwrap_or(0);
                if held && n > 0 {
                    at.push(0);
                    let base = self.offset(Buf::Matrix(w.buf), &at, "read of")?;
                    let data = self.data(Buf::Matrix(w.buf));
                    let range = i128::from(w.lo)..=i128::from(w.hi);
                    held = (0..n as usize)
                        .all(|i| matches!(data.get(base + i), Val::Int(v) if range.contains(&v)));
                }
                if !held {
                    self.vars[w.flag.index()] = Val::Bool(false);
                }
            }
            Stmt::ScanRow {
                row,
                lo,
                hi,
                op,
                acc,
            } => {
                let (row, op, acc) = (*row, *op, *acc);
                let (lo, hi) = (self.expr(*lo)?.as_i64(), self.expr(*hi)?.as_i64());
                let elem = self.func.temps[row].elem;
                let n = self.temps[&row.index()].1.len() as i64;
                let mut run = self.temps[&acc.index()].1.get(0);
                for i in lo.clamp(0, n)..hi.clamp(0, n) {
                    let d = &mut self.temps.get_mut(&row.index()).expect("allocated").1;
                    run = crate::interp::value::combine(op, run, d.get(i as usize), elem);
                    d.set(i as usize, run);
                }
                self.temps
                    .get_mut(&acc.index())
                    .expect("allocated")
                    .1
                    .set(0, run);
            }
            Stmt::Region { name, body, .. } => {
                self.region = name.clone();
                let r = self.stmt(*body);
                self.region = "(host code)".to_string();
                r?;
            }
            Stmt::Reduce { op, matrix, result } => {
                let (f, m) = (self.f, *matrix);
                let rt = f.scalars[*result].ty;
                self.hosts[*result] =
                    crate::interp::reduction(*op, &f.matrices[m], &self.mats[m], rt)?;
            }
            Stmt::Return(e) => {
                return match e {
                    Some(e) => Ok(Some(self.expr(*e)?)),
                    None => Ok(None),
                };
            }
        }
        Ok(None)
    }
}

fn d_shape(d: &[i64]) -> Vec<usize> {
    d.iter().map(|d| *d as usize).collect()
}

impl Machine<'_> {
    /// The rows of a scan's blocks where no machine is asked: a third of the loop's, so that
    /// small loops have several blocks.
    fn block_rows(count: i64) -> i64 {
        (count + 2).div_euclid(3).clamp(1, i32::MAX as i64)
    }

    /// A [`Stmt::ScanTotals`]: its blocks in order, each from the carried values before it.
    fn scan_totals(&mut self, s: StmtId) -> Result<(), InterpError> {
        let Stmt::ScanTotals {
            var,
            lo,
            hi,
            per,
            body,
            carried,
            totals,
        } = &self.func.stmts[s]
        else {
            return Ok(());
        };
        let (var, per, body) = (*var, *per, *body);
        let (carried, totals) = (carried.clone(), totals.clone());
        let (lo, hi) = (self.expr(*lo)?.as_i64(), self.expr(*hi)?.as_i64());
        let count = (hi - lo).max(0);
        let before: Vec<Data> = carried
            .iter()
            .map(|(t, _, _)| self.temps[&t.index()].1.clone())
            .collect();
        let mut rows = Self::block_rows(count);
        let blocks = |rows: i64| {
            if count > 0 {
                (count + rows - 1) / rows
            } else {
                0
            }
        };
        // Each block's totals from the identity (the carried values before the loop).
        let mut own: Vec<Vec<Data>> = Vec::new();
        let mut failed = false;
        for b in 0..(blocks(rows) - 1).max(0) {
            for ((t, _, _), d) in carried.iter().zip(&before) {
                self.temps.get_mut(&t.index()).expect("allocated").1 = d.clone();
            }
            let mut c = lo + b * rows;
            let end = (c + rows).min(hi);
            while c < end {
                self.vars[var.index()] = Val::Int(c as i32 as i128);
                if self.stmt(body).is_err() {
                    failed = true;
                    break;
                }
                c += 1;
            }
            if failed {
                break;
            }
            own.push(
                carried
                    .iter()
                    .map(|(t, _, _)| self.temps[&t.index()].1.clone())
                    .collect(),
            );
        }
        for ((t, _, _), d) in carried.iter().zip(&before) {
            self.temps.get_mut(&t.index()).expect("allocated").1 = d.clone();
        }
        if failed {
            rows = count.clamp(1, i32::MAX as i64);
            own.clear();
        }
        self.vars[per.index()] = Val::Int(rows as i32 as i128);
        for (k, ((t, op, _), d)) in carried.iter().zip(&before).enumerate() {
            let n = d.len();
            let elem = self.func.temps[*t].elem;
            let nb = blocks(rows).max(1) as usize;
            let mut out = Data::zeros(elem, n * nb).ok_or_else(|| Self::unsupported("a type"))?;
            let mut row: Vec<Val> = (0..n).map(|i| d.get(i)).collect();
            for b in 0..nb {
                for (i, v) in row.iter().enumerate() {
                    out.set(b * n + i, *v);
                }
                if let Some(o) = own.get(b) {
                    for (i, v) in row.iter_mut().enumerate() {
                        *v = crate::interp::value::combine(*op, *v, o[k].get(i), elem);
                    }
                }
            }
            self.temps
                .insert(totals[k].index(), (vec![nb as i64, n as i64], out));
        }
        Ok(())
    }
}
