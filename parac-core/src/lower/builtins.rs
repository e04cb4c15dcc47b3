//! Calls: reductions of windows, global operators (a whole matrix reduced by a region of its
//! own), convolution, `transe` and the scalar built-ins.

use super::typing::{convert, scalar_ty};
use super::{Cx, Lowerer, Name};
use crate::diag::Sp;
use crate::ir::*;
use crate::syntax::ast;

const REDUCTIONS: [(&str, ReduceOp); 4] = [
    ("parac_matrix_sum", ReduceOp::Sum),
    ("parac_matrix_min", ReduceOp::Min),
    ("parac_matrix_max", ReduceOp::Max),
    ("parac_matrix_mean", ReduceOp::Mean),
];

fn reduce_type(op: ReduceOp, elem: Scalar, global: bool) -> Scalar {
    match op {
        ReduceOp::Min | ReduceOp::Max => elem.promote(),
        ReduceOp::Sum | ReduceOp::Mean if elem.is_float() => Scalar::F32,
        ReduceOp::Sum | ReduceOp::Mean if global => Scalar::I64,
        ReduceOp::Sum | ReduceOp::Mean => elem.promote(),
    }
}

impl Lowerer<'_> {
    /// `parac_prefix_sum(e, y)` and the like ([`ExprKind::Prefix`]).
    fn prefix(
        &mut self,
        s: &str,
        op: ReduceOp,
        args: &[ast::Expr],
        span: Sp,
        cx: &mut Cx,
    ) -> Option<Expr> {
        let usage = format!(
            "`{s}(e, y)` scans `e` along the iterator's variable `y` (or `(e, x, y)`: along two)"
        );
        if !matches!(cx, Cx::Kernel(_)) {
            self.err(span, format!("{usage}, inside a `parac_iterator`"));
            return None;
        }
        if !(2..=3).contains(&args.len()) {
            self.err(
                span,
                format!(
                    "{usage}; it takes 2 or 3 arguments, but {} were given",
                    args.len()
                ),
            );
            return None;
        }
        let mut slots = Vec::new();
        for a in &args[1..] {
            let v = self.expr(a, cx)?;
            match v.kind {
                ExprKind::Var(slot) if !slots.contains(&slot) => slots.push(slot),
                _ => {
                    self.err(
                        a.span,
                        format!("{usage}: this must be one of the iterator's variables, each once"),
                    );
                    return None;
                }
            }
        }
        let value = self.expr(&args[0], cx)?;
        let Type::Scalar(elem) = value.ty else {
            self.err(
                args[0].span,
                format!(
                    "{usage}: `e` must be a scalar, but this is a block {}",
                    self.ty_text(value.ty)
                ),
            );
            return None;
        };
        let mut nested = false;
        value.walk(&mut |x| nested |= matches!(x.kind, ExprKind::Prefix { .. }));
        if nested {
            self.err(
                args[0].span,
                format!("a prefix of a prefix is written with both variables: `{s}(e, x, y)`"),
            );
            return None;
        }
        if elem == Scalar::Bool {
            self.err(
                args[0].span,
                format!(
                    "{usage}: `e` must be a number, not a `bool`\nhelp: convert it: `(..) as i32`"
                ),
            );
            return None;
        }
        let t = reduce_type(op, elem, false);
        let Cx::Kernel(k) = cx else { return None };
        let id = k.region.prefixes;
        k.region.prefixes += 1;
        // In order of the slots, outermost first.
        slots.sort_unstable();
        Some(Expr {
            kind: ExprKind::Prefix {
                id,
                op,
                value: Box::new(convert(value, t)),
                slots,
            },
            ty: scalar_ty(t),
            span,
        })
    }

    pub(super) fn call(
        &mut self,
        n: &proc_macro2::Ident,
        args: &[ast::Expr],
        span: Sp,
        cx: &mut Cx,
    ) -> Option<Expr> {
        let s = n.to_string();
        if matches!(cx, Cx::Dim) {
            self.err(
                span,
                "a dimension must be an expression of size symbols and constants",
            );
            return None;
        }
        let arity = |this: &mut Self, want: usize| {
            if args.len() != want {
                this.err(
                    span,
                    format!(
                        "`{s}` takes {want} argument{}, but {} {} given",
                        if want == 1 { "" } else { "s" },
                        args.len(),
                        if args.len() == 1 { "was" } else { "were" }
                    ),
                );
                false
            } else {
                true
            }
        };
        if let Some((_, op)) = REDUCTIONS.iter().find(|(name, _)| *name == s) {
            if !arity(self, 1) {
                return None;
            }
            // A whole (non-constant) matrix: a global operator.
            if let ast::ExprKind::Name(mname) = &args[0].kind {
                if !self.names.contains_key(&mname.to_string()) && !matches!(cx, Cx::Kernel(_)) {
                    self.unknown(mname);
                    return None;
                }
                if let Some(Name::Matrix(m)) = self.names.get(&mname.to_string()).copied()
                    && !matches!(self.f.matrices[m].kind, MatrixKind::Const(_))
                {
                    return match cx {
                        Cx::Host { global: true } => Some(self.global_region(*op, m, span)),
                        Cx::Kernel(k) => {
                            let it = k.region.name.clone();
                            self.err(span, format!("`{s}({mname})` reduces the whole matrix, which is a global operation; inside iterator `{it}` every work-item would recompute it\nhelp: compute it before the iterator: `let total = {s}({mname});`, then use `total`"));
                            None
                        }
                        _ => {
                            self.err(span, format!("a global operator is only allowed in a host `let`: `let total = {s}({mname});`"));
                            None
                        }
                    };
                }
            }
            if let Cx::Host { .. } = cx {
                self.err(args[0].span, format!("on the host, `{s}` takes a whole matrix: `{s}(m)`; windows are reduced inside a `parac_iterator`"));
                return None;
            }
            let a = self.expr(&args[0], cx)?;
            let Type::Block { elem, .. } = a.ty else {
                self.err(args[0].span, format!("`{s}` takes a window (`m[x:3:1][y:3:1]`) or a whole matrix, but this is a scalar of type {}", self.ty_text(a.ty)));
                return None;
            };
            if !self.long_read(&a, &format!("`{s}`")) {
                return None;
            }
            let t = reduce_type(*op, elem, false);
            // The window is read at the reduction's type, as C promotes each element before
            // adding it: border values outside the element type's range stay whole.
            let a = convert(a, t);
            return Some(Expr {
                kind: ExprKind::Reduce(*op, Box::new(a)),
                ty: scalar_ty(t),
                span,
            });
        }
        let prefix = match s.as_str() {
            "parac_prefix_sum" => Some(ReduceOp::Sum),
            "parac_prefix_min" => Some(ReduceOp::Min),
            "parac_prefix_max" => Some(ReduceOp::Max),
            _ => None,
        };
        if let Some(op) = prefix {
            return self.prefix(&s, op, args, span, cx);
        }
        match s.as_str() {
            "parac_convolution" => {
                if !arity(self, 2) {
                    return None;
                }
                let f = self.expr(&args[0], cx);
                let w = self.expr(&args[1], cx);
                let (f, w) = (f?, w?);
                match (f.ty, w.ty) {
                    (
                        Type::Block {
                            rows: r1,
                            cols: c1,
                            elem: e1,
                        },
                        Type::Block {
                            rows: r2,
                            cols: c2,
                            elem: e2,
                        },
                    ) => {
                        if (r1, c1) != (r2, c2) {
                            let (fs, ws) = (self.shape_text((r1, c1)), self.shape_text((r2, c2)));
                            self.err(args[1].span, format!("the filter is {fs} but the window is {ws}; `parac_convolution` needs equal shapes\nhelp: a window `[a:len:1]` has `len` elements in that dimension, and a single index counts as 1"));
                            return None;
                        }
                        let t = Scalar::arith(e1, e2);
                        Some(Expr {
                            kind: ExprKind::Conv(Box::new(convert(f, t)), Box::new(convert(w, t))),
                            ty: scalar_ty(t),
                            span,
                        })
                    }
                    _ => {
                        let bad = if f.ty.is_block() { &args[1] } else { &args[0] };
                        self.err(bad.span, "`parac_convolution(filter, window)` takes two blocks: a constant matrix and a window such as `src[itx][ity-2:5:1]`");
                        None
                    }
                }
            }
            "transe" => {
                if !arity(self, 1) {
                    return None;
                }
                let a = self.expr(&args[0], cx)?;
                let Type::Block { elem, rows, cols } = a.ty else {
                    self.err(
                        args[0].span,
                        "`transe` transposes a block (a window or a constant matrix), not a scalar",
                    );
                    return None;
                };
                Some(Expr {
                    kind: ExprKind::Transpose(Box::new(a)),
                    ty: Type::Block {
                        elem,
                        rows: cols,
                        cols: rows,
                    },
                    span,
                })
            }
            _ => {
                let Some((b, want)) = Builtin::from_name(&s) else {
                    self.err(n.span(), format!("unknown function `{s}`\nhelp: the built-ins are parac_matrix_sum/min/max/mean, parac_convolution, transe, min, max, clamp, abs, sqrt, exp, floor, ceil, round"));
                    return None;
                };
                if !arity(self, want) {
                    return None;
                }
                let mut xs = Vec::new();
                for a in args {
                    let e = self.expr(a, cx);
                    xs.push(e);
                }
                let mut vals = Vec::new();
                for x in xs {
                    let x = x?;
                    if x.ty.is_block() {
                        self.err(
                            x.span,
                            format!(
                                "`{s}` works on scalars, but this is a {} block",
                                self.ty_text(x.ty)
                            ),
                        );
                        return None;
                    }
                    vals.push(x);
                }
                let t = if b.is_float_fn() {
                    Scalar::F32
                } else {
                    vals.iter()
                        .map(|v| v.ty.elem())
                        .fold(Scalar::Bool, Scalar::arith)
                };
                let vals = vals.into_iter().map(|v| convert(v, t)).collect();
                Some(Expr {
                    kind: ExprKind::Call(b, vals),
                    ty: scalar_ty(t),
                    span,
                })
            }
        }
    }

    fn global_region(&mut self, op: ReduceOp, m: MatrixId, span: Sp) -> Expr {
        let mat = &self.f.matrices[m];
        let base = format!("{}_{}", op.name(), mat.name);
        let count = self
            .f
            .regions
            .iter()
            .filter(|r| r.name == base || r.name.starts_with(&format!("{base}_")))
            .count();
        let name = if count == 0 {
            base
        } else {
            format!("{base}_{count}")
        };
        let rid = self.f.regions.len();
        let sid = self.f.scalars.len();
        let ty = reduce_type(op, mat.elem, true);
        let nd = mat.dims.len();
        let dims = mat
            .dims
            .iter()
            .enumerate()
            .map(|(d, hi)| {
                Some(IterDim {
                    var: format!("{name}_{}", ["x", "y", "z"][d]),
                    lo: Expr::int(0, span),
                    hi: hi.clone(),
                    step: 1,
                    span,
                })
            })
            .collect();
        let subs = (0..nd)
            .map(|d| {
                Sub::Point(Expr {
                    kind: ExprKind::Var(d),
                    ty: scalar_ty(Scalar::I32),
                    span,
                })
            })
            .collect();
        self.f.regions.push(Region {
            name: name.clone(),
            span,
            kind: RegionKind::Reduction {
                op,
                matrix: m,
                result: sid,
            },
            dims,
            body: vec![],
            accesses: vec![Access {
                matrix: m,
                write: false,
                subs,
                span,
            }],
            locals: vec![],
            rules: vec![],
            reach: vec![],
            features: Features::default(),
            fuse: true,
            inline: None,
            fold: None,
            compound: Vec::new(),
            updates: Vec::new(),
            prefixes: 0,
        });
        self.f.scalars.push(HostScalar {
            name: format!("__{name}"),
            ty,
            kind: HostScalarKind::Reduction(rid),
        });
        self.pending_runs.push(rid);
        Expr {
            kind: ExprKind::Host(sid),
            ty: scalar_ty(ty),
            span,
        }
    }
}
