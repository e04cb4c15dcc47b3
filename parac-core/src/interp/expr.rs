//! Expressions: scalars, blocks (small matrix values), loads with their border values, as the
//! CPU path's `expr_with`, `block`, `load`, `border_value` and `entry_expr` compute them.

use super::value::{Val, binary, call, cast, float_lit, int_lit, unary};
use super::{InterpError, Machine};
use crate::ir::*;

/// A block value: `rows x cols` elements of the block type's element type, row-major.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Blk {
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) v: Vec<Val>,
}

impl Blk {
    pub(crate) fn at(&self, i: usize, j: usize) -> Val {
        self.v[i * self.cols + j]
    }
}

/// The value of a kernel local.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    /// A scalar.
    S(Val),
    /// A block.
    B(Blk),
}

/// Where an expression is evaluated: a region's iteration (or host code, with no region).
pub(crate) struct Frame<'a> {
    /// The region (`None`: host code).
    pub(crate) r: Option<&'a Region>,
    /// The name errors carry.
    pub(crate) name: String,
    /// The index variables by slot (`i32`, as the generated code has them).
    pub(crate) vars: Vec<i32>,
    /// The kernel locals.
    pub(crate) locals: Vec<Option<Value>>,
    /// Per prefix ([`ExprKind::Prefix`]), its value at this point (set before the statement
    /// that holds it runs, `region::advance`).
    pub(crate) prefix: Vec<Val>,
    /// Per prefix, scanned slot and the point's other coordinates: the combination so far.
    pub(crate) scans: std::collections::HashMap<(usize, usize, Vec<i32>), Val>,
}

impl<'a> Frame<'a> {
    /// Host code.
    pub(crate) fn host() -> Frame<'a> {
        Frame {
            r: None,
            name: "(host code)".into(),
            vars: Vec::new(),
            locals: Vec::new(),
            prefix: Vec::new(),
            scans: Default::default(),
        }
    }
}

/// How loads resolve: the region's accesses, or a border entry's (with `*` the index of the
/// read being extended).
#[derive(Clone, Copy)]
pub(crate) enum Mode<'e> {
    Body,
    Entry(&'e BorderEntry, &'e [i64]),
}

fn unsupported<T>(what: &str) -> Result<T, InterpError> {
    Err(InterpError::Unsupported(what.to_string()))
}

impl Machine<'_> {
    pub(crate) fn div0(fr: &Frame) -> InterpError {
        InterpError::DivisionByZero {
            region: fr.name.clone(),
        }
    }

    pub(crate) fn oob(
        &self,
        fr: &Frame,
        what: &'static str,
        m: MatrixId,
        idx: &[i64],
    ) -> InterpError {
        InterpError::OutOfBounds {
            region: fr.name.clone(),
            what,
            matrix: self.f.matrices[m].name.clone(),
            index: idx.to_vec(),
            shape: self.d[m].iter().map(|d| *d as usize).collect(),
        }
    }

    /// The row-major offset of `idx` in matrix `m`, if every index is inside its dimension.
    pub(crate) fn linear(&self, m: MatrixId, idx: &[i64]) -> Option<usize> {
        let d = &self.d[m];
        let mut lin = 0i64;
        for (k, i) in idx.iter().enumerate() {
            if *i < 0 || *i >= d[k] {
                return None;
            }
            lin = lin * d[k] + i;
        }
        Some(lin as usize)
    }

    /// A block extent's value (a host length evaluated with the call's sizes and scalars).
    pub(crate) fn extent(&self, l: Len) -> Result<i64, InterpError> {
        match l {
            Len::Const(n) => Ok(i64::from(n)),
            Len::Host(i) => Ok(self.host_expr(&self.f.lens[i].expr)?.as_i64()),
        }
    }

    /// A host expression (host steps).
    pub(crate) fn host_expr(&self, e: &Expr) -> Result<Val, InterpError> {
        self.scalar(&Frame::host(), e, Mode::Body)
    }

    /// The indices of an access, with the window offsets of block element `blk` (`(row,
    /// column)`: a window in the last dimension follows the column, any other the row).
    pub(crate) fn indices(
        &self,
        fr: &Frame,
        acc: &Access,
        blk: Option<(usize, usize)>,
    ) -> Result<Vec<i64>, InterpError> {
        let n = acc.subs.len();
        let mut idx = Vec::with_capacity(n);
        for (k, s) in acc.subs.iter().enumerate() {
            idx.push(match s {
                Sub::Point(e) => self.scalar(fr, e, Mode::Body)?.as_i64(),
                Sub::Window { start, stride, .. } => {
                    let st = self.scalar(fr, start, Mode::Body)?.as_i64();
                    let off = match blk {
                        None => 0,
                        Some((_, bj)) if k + 1 == n => bj as i64,
                        Some((bi, _)) => bi as i64,
                    };
                    st.wrapping_add(off.wrapping_mul(*stride))
                }
                Sub::Star => 0,
            });
        }
        Ok(idx)
    }

    /// Access `aid` of the region read as type `want` (block element `blk` of a window):
    /// inside its matrix the element, else the value of the first border entry in force
    /// whose selectors match (at its own type, then converted to `want`), else an error.
    pub(crate) fn load(
        &self,
        fr: &Frame,
        aid: AccessId,
        want: Scalar,
        blk: Option<(usize, usize)>,
    ) -> Result<Val, InterpError> {
        let Some(r) = fr.r else {
            return unsupported("a matrix read in host code");
        };
        let acc = &r.accesses[aid];
        let m = acc.matrix;
        let idx = self.indices(fr, acc, blk)?;
        if let Some(lin) = self.linear(m, &idx) {
            return Ok(cast(self.mats[m].get(lin), want));
        }
        let d = &self.d[m];
        if let Some(sh) = self.f.shorthand_for(r, m) {
            // Each bordered dimension through the mode, whatever the size.
            let out = |k: usize| !(0..d[k]).contains(&idx[k]);
            let bordered = |k: usize| sh.widths[k].is_some();
            if let BorderMode::Constant(v) = &sh.mode {
                let n = idx.len();
                if (0..n).any(|k| bordered(k) && out(k)) && (0..n).all(|k| bordered(k) || !out(k)) {
                    let v = self.scalar(fr, v, Mode::Body)?;
                    return Ok(cast(v, want));
                }
            }
            let at: Vec<i64> = (0..idx.len())
                .map(|k| match bordered(k) {
                    true => sh.mode.index(idx[k], d[k]).unwrap_or(idx[k]),
                    false => idx[k],
                })
                .collect();
            return match self.linear(m, &at) {
                Some(lin) => Ok(cast(self.mats[m].get(lin), want)),
                None => Err(self.oob(fr, "read of", m, &idx)),
            };
        }
        for id in &r.rules {
            for e in self.f.rules[*id].entries.iter().filter(|e| e.matrix == m) {
                let hit = e
                    .sels
                    .iter()
                    .zip(&idx)
                    .zip(d)
                    .all(|((sel, i), d)| match sel {
                        Sel::Star => *i >= 0 && *i < *d,
                        Sel::Before(j) => *i == -(*j as i64),
                        Sel::After(j) => *i == d - 1 + *j as i64,
                    });
                if hit {
                    let v = self.scalar(fr, &e.value, Mode::Entry(e, &idx))?;
                    return Ok(cast(v, want));
                }
            }
        }
        Err(self.oob(fr, "read of", m, &idx))
    }

    /// A read inside a border value: `*` is the extended read's index `outer`; not extended
    /// itself (outside its matrix it is an error).
    fn entry_load(
        &self,
        fr: &Frame,
        entry: &BorderEntry,
        aid: AccessId,
        outer: &[i64],
        t: Scalar,
    ) -> Result<Val, InterpError> {
        let acc = &entry.accesses[aid];
        let m = acc.matrix;
        let mut idx = Vec::with_capacity(acc.subs.len());
        for (k, s) in acc.subs.iter().enumerate() {
            idx.push(match s {
                Sub::Point(p) => self.scalar(fr, p, Mode::Body)?.as_i64(),
                _ => outer.get(k).copied().unwrap_or(0),
            });
        }
        match self.linear(m, &idx) {
            Some(lin) => Ok(cast(self.mats[m].get(lin), t)),
            None => Err(self.oob(fr, "read of", m, &idx)),
        }
    }

    /// A scalar expression.
    pub(crate) fn scalar(&self, fr: &Frame, e: &Expr, mode: Mode) -> Result<Val, InterpError> {
        let t = e.ty.elem();
        Ok(match &e.kind {
            ExprKind::Int(v) => int_lit(*v, t),
            ExprKind::Float(v) => float_lit(*v, t),
            ExprKind::Size(i) => cast(Val::Int(self.z[*i] as i128), t),
            ExprKind::Host(i) => cast(self.hosts[*i], t),
            ExprKind::Var(s) => match (fr.r, fr.vars.get(*s)) {
                (Some(_), Some(v)) => cast(Val::Int(*v as i128), t),
                _ => return unsupported("an index variable outside its region"),
            },
            ExprKind::Local(l) => match fr.locals.get(*l) {
                Some(Some(Value::S(v))) => *v,
                _ => return unsupported("a local read as a scalar before its `let`"),
            },
            ExprKind::Load(a) => match mode {
                Mode::Body => self.load(fr, *a, t, None)?,
                Mode::Entry(entry, outer) => self.entry_load(fr, entry, *a, outer, t)?,
            },
            ExprKind::Cast(inner, to) => {
                if let (ExprKind::Load(a), Mode::Body) = (&inner.kind, mode) {
                    // Read straight at the wider type: border values are not wrapped.
                    return self.load(fr, *a, *to, None);
                }
                cast(self.scalar(fr, inner, mode)?, *to)
            }
            ExprKind::Unary(op, a) => unary(*op, self.scalar(fr, a, mode)?, t),
            ExprKind::Binary(op, a, b) => {
                let x = self.scalar(fr, a, mode)?;
                // `&&` and `||` short-circuit, as Rust's and C's do.
                match op {
                    BinOp::And if !x.truthy() => return Ok(Val::Bool(false)),
                    BinOp::Or if x.truthy() => return Ok(Val::Bool(true)),
                    _ => {}
                }
                let y = self.scalar(fr, b, mode)?;
                binary(*op, x, y, t, a.ty.elem()).map_err(|_| Self::div0(fr))?
            }
            ExprKind::Call(b, args) => {
                let mut xs = Vec::with_capacity(args.len());
                for a in args {
                    xs.push(self.scalar(fr, a, mode)?);
                }
                call(*b, &xs, t)
            }
            ExprKind::Reduce(op, a) => {
                let b = self.block(fr, a, mode)?;
                self.reduce_block(fr, *op, &b, t)?
            }
            ExprKind::Prefix { id, .. } => fr.prefix.get(*id).copied().unwrap_or(Val::Int(0)),
            ExprKind::Conv(fl, w) => {
                let (bf, bw) = (self.block(fr, fl, mode)?, self.block(fr, w, mode)?);
                let fe = fl.ty.elem();
                let mut s = int_lit(0, t);
                for i in 0..bf.rows {
                    for j in 0..bf.cols {
                        let p = binary(BinOp::Mul, bf.at(i, j), bw.at(i, j), fe, fe)
                            .map_err(|_| Self::div0(fr))?;
                        s = binary(BinOp::Add, s, p, t, t).map_err(|_| Self::div0(fr))?;
                    }
                }
                s
            }
            ExprKind::Block(_) | ExprKind::MatMul(..) | ExprKind::Transpose(_) => {
                return unsupported("a block where a scalar is expected");
            }
        })
    }

    /// `parac_matrix_sum/min/max/mean` of a block, in the result type `t` (the mean divides
    /// the sum by the element count, truncating for integers).
    fn reduce_block(
        &self,
        fr: &Frame,
        op: ReduceOp,
        b: &Blk,
        t: Scalar,
    ) -> Result<Val, InterpError> {
        let d0 = |_| Self::div0(fr);
        let mut s = match op {
            ReduceOp::Sum | ReduceOp::Mean => int_lit(0, t),
            _ => cast(b.at(0, 0), t),
        };
        for v in &b.v {
            s = super::value::combine(op, s, cast(*v, t), t);
        }
        if op == ReduceOp::Mean {
            let count = cast(Val::Int(b.v.len() as i128), t);
            s = binary(BinOp::Div, s, count, t, t).map_err(d0)?;
        }
        Ok(s)
    }

    /// The value of a scalar or block operand of a block operator.
    fn operand(&self, fr: &Frame, e: &Expr, mode: Mode) -> Result<Value, InterpError> {
        Ok(if e.ty.is_block() {
            Value::B(self.block(fr, e, mode)?)
        } else {
            Value::S(self.scalar(fr, e, mode)?)
        })
    }

    /// A block-valued expression.
    pub(crate) fn block(&self, fr: &Frame, e: &Expr, mode: Mode) -> Result<Blk, InterpError> {
        let Type::Block { elem, rows, cols } = e.ty else {
            return unsupported("a scalar where a block is expected");
        };
        // Host lengths were checked (at least 1) before the region ran.
        let (rows, cols) = (self.extent(rows)? as usize, self.extent(cols)? as usize);
        let fill = |f: &mut dyn FnMut(usize, usize) -> Result<Val, InterpError>| {
            let mut v = Vec::with_capacity(rows * cols);
            for bi in 0..rows {
                for bj in 0..cols {
                    v.push(f(bi, bj)?);
                }
            }
            Ok(Blk { rows, cols, v })
        };
        let window = |a: AccessId, want: Scalar| match mode {
            Mode::Body => fill(&mut |bi, bj| self.load(fr, a, want, Some((bi, bj)))),
            Mode::Entry(..) => unsupported("a window read in a border value"),
        };
        match &e.kind {
            ExprKind::Block(a) => window(*a, elem),
            ExprKind::Cast(inner, to) => {
                if let ExprKind::Block(a) = inner.kind {
                    // A window read straight at the wider type (border values not wrapped).
                    return window(a, *to);
                }
                let b = self.block(fr, inner, mode)?;
                fill(&mut |i, j| Ok(cast(b.at(i, j), elem)))
            }
            ExprKind::Local(l) => match fr.locals.get(*l) {
                Some(Some(Value::B(b))) => Ok(b.clone()),
                _ => unsupported("a local read as a block before its `let`"),
            },
            ExprKind::Unary(op, a) => {
                let b = self.block(fr, a, mode)?;
                fill(&mut |i, j| Ok(unary(*op, b.at(i, j), elem)))
            }
            ExprKind::Binary(op, a, b) => {
                let (xa, xb) = (self.operand(fr, a, mode)?, self.operand(fr, b, mode)?);
                let el = |x: &Value, i, j| match x {
                    Value::B(b) => b.at(i, j),
                    Value::S(v) => *v,
                };
                let ot = a.ty.elem();
                fill(&mut |i, j| {
                    binary(*op, el(&xa, i, j), el(&xb, i, j), elem, ot).map_err(|_| Self::div0(fr))
                })
            }
            ExprKind::MatMul(a, b) => {
                let (xa, xb) = (self.block(fr, a, mode)?, self.block(fr, b, mode)?);
                fill(&mut |i, j| {
                    let mut s = int_lit(0, elem);
                    for k in 0..xa.cols {
                        let p = binary(BinOp::Mul, xa.at(i, k), xb.at(k, j), elem, elem)
                            .map_err(|_| Self::div0(fr))?;
                        s = binary(BinOp::Add, s, p, elem, elem).map_err(|_| Self::div0(fr))?;
                    }
                    Ok(s)
                })
            }
            ExprKind::Transpose(a) => {
                let b = self.block(fr, a, mode)?;
                fill(&mut |i, j| Ok(b.at(j, i)))
            }
            _ => unsupported("this block expression"),
        }
    }
}
