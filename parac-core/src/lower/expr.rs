//! Expressions: each syntax form lowered in its context, and name resolution.

use super::typing::{convert, scalar_ty};
use super::{BorderCx, Cx, Lowerer, Name};
use crate::diag::Sp;
use crate::ir::*;
use crate::syntax::ast;

/// A short rendering of a syntax expression for messages.
pub(super) fn show(e: &ast::Expr) -> String {
    match &e.kind {
        ast::ExprKind::Name(n) => n.to_string(),
        ast::ExprKind::Index(n, subs) => {
            let mut s = n.to_string();
            for sub in subs {
                s.push_str(match sub.kind {
                    ast::SubKind::Point(_) => "[..]",
                    ast::SubKind::Window { .. } => "[..:..]",
                    ast::SubKind::Star => "[*]",
                });
            }
            s
        }
        ast::ExprKind::Call(n, _) => format!("{n}(..)"),
        _ => "this expression".to_string(),
    }
}

impl Lowerer<'_> {
    /// Lowers an expression in a context; `None` after reporting an error.
    pub(super) fn expr(&mut self, e: &ast::Expr, cx: &mut Cx) -> Option<Expr> {
        let span = e.span;
        match &e.kind {
            ast::ExprKind::Int(v, suffix) => {
                let ty = if suffix.is_empty() {
                    if *v <= i32::MAX as u128 {
                        Scalar::I32
                    } else if *v <= i64::MAX as u128 {
                        Scalar::I64
                    } else {
                        self.err(span, "integer literal too large for i64");
                        return None;
                    }
                } else {
                    match Scalar::from_name(suffix) {
                        Some(t) if t.is_int() => t,
                        _ => {
                            self.err(span, format!("unsupported literal suffix `{suffix}`\nhelp: integer suffixes are u8, i8, u16, i16, u32, i32, i64, u64"));
                            return None;
                        }
                    }
                };
                let (_, hi) = ty.range().expect("integer type");
                if *v as i128 > hi || *v > i128::MAX as u128 {
                    self.err(span, format!("{v} does not fit in {ty}"));
                    return None;
                }
                Some(Expr {
                    kind: ExprKind::Int(*v as i128),
                    ty: scalar_ty(ty),
                    span,
                })
            }
            ast::ExprKind::Float(v, suffix) => {
                if matches!(cx, Cx::Dim) {
                    self.err(
                        span,
                        "a dimension must be an integer expression of sizes and constants",
                    );
                    return None;
                }
                if !(suffix.is_empty() || suffix == "f32") {
                    self.err(
                        span,
                        format!("unsupported float suffix `{suffix}`; ParaC floats are f32"),
                    );
                    return None;
                }
                Some(Expr {
                    kind: ExprKind::Float(*v),
                    ty: scalar_ty(Scalar::F32),
                    span,
                })
            }
            ast::ExprKind::Bool(b) => Some(Expr {
                kind: ExprKind::Int(*b as i128),
                ty: scalar_ty(Scalar::Bool),
                span,
            }),
            ast::ExprKind::Name(n) => self.name(n, span, cx),
            ast::ExprKind::Index(n, subs) => {
                match cx {
                    Cx::Dim => {
                        self.err(
                            span,
                            "a dimension must be an expression of size symbols and constants",
                        );
                        return None;
                    }
                    Cx::Host { .. } => {
                        self.err(span, format!("matrix elements such as `{}` can only be read inside a `parac_iterator` (or a border rule)\nhelp: to use a whole-matrix value on the host, reduce it: `let s = parac_matrix_sum({n});`", show(e)));
                        return None;
                    }
                    _ => {}
                }
                let m = self.matrix_name(n)?;
                self.index(n, m, subs, span, false, cx)
            }
            ast::ExprKind::Call(n, args) => self.call(n, args, span, cx),
            ast::ExprKind::Unary(op, a) => {
                let a = self.expr(a, cx)?;
                self.unary(*op, a, span)
            }
            ast::ExprKind::Binary(op, a, b) => {
                let a = self.expr(a, cx);
                let b = self.expr(b, cx);
                let (a, b) = (a?, b?);
                if matches!(cx, Cx::Dim)
                    && !matches!(
                        op,
                        BinOp::Add
                            | BinOp::Sub
                            | BinOp::Mul
                            | BinOp::Div
                            | BinOp::Rem
                            | BinOp::Shl
                            | BinOp::Shr
                    )
                {
                    self.err(
                        span,
                        format!("operator `{}` is not allowed in a dimension", op.symbol()),
                    );
                    return None;
                }
                let mut r = self.binary(*op, a, b, span)?;
                r.span = span;
                Some(r)
            }
            ast::ExprKind::Cast(a, t) => {
                let a = self.expr(a, cx)?;
                let t = super::names::type_of(self.diags, t, false)?;
                let mut r = convert(a, t);
                r.span = span;
                Some(r)
            }
            ast::ExprKind::Tuple(_) => {
                self.err(
                    span,
                    "a tuple is only allowed as the value of `let (a, b) = (x, y);`",
                );
                None
            }
        }
    }

    fn name(&mut self, n: &proc_macro2::Ident, span: Sp, cx: &mut Cx) -> Option<Expr> {
        let s = n.to_string();
        if let Cx::Kernel(k) = cx {
            if let Some(id) = k.scopes.iter().rev().find_map(|sc| sc.get(&s)) {
                return Some(Expr {
                    kind: ExprKind::Local(*id),
                    ty: k.region.locals[*id].ty,
                    span,
                });
            }
            if let Some(slot) = k.vars.get(&s) {
                return Some(Expr {
                    kind: ExprKind::Var(*slot),
                    ty: scalar_ty(Scalar::I32),
                    span,
                });
            }
        }
        match self.names.get(&s).copied() {
            Some(Name::Size(id)) => Some(Expr {
                kind: ExprKind::Size(id),
                ty: scalar_ty(Scalar::I32),
                span,
            }),
            Some(Name::Host(id)) => {
                if matches!(cx, Cx::Dim) {
                    self.err(
                        span,
                        format!(
                            "a dimension may use size symbols and constants, but `{s}` is a scalar"
                        ),
                    );
                    return None;
                }
                Some(Expr {
                    kind: ExprKind::Host(id),
                    ty: scalar_ty(self.f.scalars[id].ty),
                    span,
                })
            }
            Some(Name::Matrix(m)) => {
                let is_const = matches!(self.f.matrices[m].kind, MatrixKind::Const(_));
                if let (Cx::Kernel(k), true) = (&mut *cx, is_const) {
                    // A whole constant matrix is a block value (a filter, `mp`, ...).
                    let mat = &self.f.matrices[m];
                    let lens: Vec<Len> = mat
                        .dims
                        .iter()
                        .map(|d| match d.kind {
                            ExprKind::Int(v) => Len::Const(v as u32),
                            _ => Len::Const(1),
                        })
                        .collect();
                    let subs = lens
                        .iter()
                        .map(|l| Sub::Window {
                            start: Expr::int(0, span),
                            len: *l,
                            stride: 1,
                        })
                        .collect();
                    let id = k.region.accesses.len();
                    k.region.accesses.push(Access {
                        matrix: m,
                        write: false,
                        subs,
                        span,
                    });
                    let (rows, cols) = if lens.len() == 1 {
                        (Len::Const(1), lens[0])
                    } else {
                        (lens[lens.len() - 2], lens[lens.len() - 1])
                    };
                    return Some(Expr {
                        kind: ExprKind::Block(id),
                        ty: Type::Block {
                            elem: mat.elem,
                            rows,
                            cols,
                        },
                        span,
                    });
                }
                let help = match cx {
                    Cx::Host { .. } => format!(
                        "reduce it to a scalar with `parac_matrix_sum({s})` (or min, max, mean)"
                    ),
                    _ => format!(
                        "read one element, e.g. `{s}[itx][ity]`, or reduce a window to a scalar, e.g. `parac_matrix_sum({s}[itx-1:3:1][ity-1:3:1])`"
                    ),
                };
                self.err(
                    span,
                    format!("`{s}` is a whole matrix, but a scalar is expected here\nhelp: {help}"),
                );
                None
            }
            Some(Name::Rule(_)) => {
                self.err(span, format!("`{s}` is a border rule; apply it with `parac_iterator it(..) parac_border_rule({s}) {{ .. }}`"));
                None
            }
            None => {
                if let Some(owner) = self
                    .f
                    .regions
                    .iter()
                    .find(|r| r.dims.iter().flatten().any(|d| d.var == s))
                {
                    let here = match cx {
                        Cx::Kernel(k) => {
                            let mut vars: Vec<_> = k
                                .vars
                                .iter()
                                .map(|(n, slot)| (*slot, format!("`{n}`")))
                                .collect();
                            vars.sort();
                            format!(
                                "; here the index variables are {}",
                                vars.into_iter().map(|v| v.1).collect::<Vec<_>>().join(", ")
                            )
                        }
                        _ => String::new(),
                    };
                    self.err(span, format!("index variable `{s}` belongs to iterator `{}` and exists only inside it{here}", owner.name));
                    return None;
                }
                let extra: Vec<String> = match cx {
                    Cx::Kernel(k) => k
                        .vars
                        .keys()
                        .cloned()
                        .chain(k.scopes.iter().flat_map(|sc| sc.keys().cloned()))
                        .collect(),
                    _ => vec![],
                };
                self.unknown_among(n, &extra);
                None
            }
        }
    }

    /// Lowers a border value for `b`.
    pub(super) fn border_value(&mut self, e: &ast::Expr, b: &mut BorderCx) -> Option<Expr> {
        self.expr(e, &mut Cx::Border(b))
    }
}
