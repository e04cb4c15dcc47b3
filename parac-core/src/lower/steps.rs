//! Host steps: the function's statements in order (constant and local matrices, host `let`s,
//! border rules, iterators, `return`), constant initializers, pending reduction runs.

use super::names::type_of;
use super::{Cx, Lowerer, Name, consts, typing};
use crate::diag::Sp;
use crate::ir::*;
use crate::syntax::ast;

impl Lowerer<'_> {
    pub(super) fn run(&mut self, f: &ast::Function) {
        self.params(f);
        if let Some(t) = &f.ret {
            self.f.ret = type_of(self.diags, t, false);
        }
        let n = f.body.len();
        let mut returned = false;
        for (i, s) in f.body.iter().enumerate() {
            self.fn_stmt(s, i + 1 == n, &mut returned);
        }
        if self.f.ret.is_some() && !returned {
            self.err(
                f.ret.as_ref().map_or(f.span, |t| t.span),
                format!(
                    "`{}` declares a return type but never returns a value\nhelp: end the function with `return expr;`",
                    self.f.name
                ),
            );
        }
    }

    pub(super) fn fn_stmt(&mut self, s: &ast::FnStmt, last: bool, returned: &mut bool) {
        match s {
            ast::FnStmt::Const {
                name,
                elem,
                dims,
                init,
                span,
            } => {
                // After an error the constant is still declared (zeros), so its uses raise no
                // "cannot find" cascade; the function is rejected anyway.
                let elem = type_of(self.diags, elem, true);
                let d = self.dims(dims, name);
                let shape: Option<Vec<i64>> = dims.iter().map(consts::const_int).collect();
                // Constant matrices are small (filters, weights): at most 4096 values.
                let shape = shape.filter(|s| {
                    s.iter().all(|d| *d > 0)
                        && s.iter()
                            .try_fold(1i64, |a, d| a.checked_mul(*d))
                            .is_some_and(|t| t <= 4096)
                });
                let values = match (elem, shape) {
                    (Some(elem), Some(shape)) => {
                        let total = shape.iter().product::<i64>() as usize;
                        self.const_values(name, elem, &shape, init)
                            .unwrap_or_else(|| vec![0.0; total])
                    }
                    (_, None) => {
                        self.err(*span, format!("constant matrix `{name}` needs constant, positive dimensions such as `[1][5]`, with at most 4096 values"));
                        vec![]
                    }
                    (None, Some(shape)) => vec![0.0; shape.iter().product::<i64>() as usize],
                };
                let id = self.f.matrices.len();
                self.f.matrices.push(Matrix {
                    name: name.to_string(),
                    elem: elem.unwrap_or(Scalar::I32),
                    dims: d,
                    kind: MatrixKind::Const(values),
                    span: *span,
                });
                self.declare(name, Name::Matrix(id));
            }
            ast::FnStmt::Local {
                name,
                elem,
                dims,
                span,
            } => {
                let elem = type_of(self.diags, elem, true).unwrap_or(Scalar::I32);
                let d = self.dims(dims, name);
                let id = self.f.matrices.len();
                self.f.matrices.push(Matrix {
                    name: name.to_string(),
                    elem,
                    dims: d,
                    kind: MatrixKind::Local,
                    span: *span,
                });
                self.declare(name, Name::Matrix(id));
            }
            ast::FnStmt::Let(l) => self.host_let(l),
            ast::FnStmt::BorderBlock { name, stmts, span } => {
                let rule = self.border_block(name, stmts, *span);
                self.add_rule(name, *span, rule);
            }
            ast::FnStmt::BorderShorthand(sh) => {
                let rule = self.shorthand(sh);
                self.add_rule(&sh.name, sh.span, rule);
            }
            ast::FnStmt::Iterator(it) => self.iterator(it),
            ast::FnStmt::Return(e, span) => {
                *returned = true;
                let Some(ret) = self.f.ret else {
                    self.err(
                        *span,
                        format!(
                            "`{}` has no return type\nhelp: declare it, e.g. `fn {}(...) -> i64`",
                            self.f.name, self.f.name
                        ),
                    );
                    return;
                };
                if !last {
                    self.err(*span, "`return` must be the last statement of the function");
                }
                if let Some(v) = self.expr(e, &mut Cx::Host { global: true })
                    && let Some(v) = self.scalar(v, "the returned value")
                {
                    let v = typing::convert(v, ret);
                    self.flush_runs();
                    self.f.steps.push(HostStep::Return(v));
                }
            }
            ast::FnStmt::Repeat {
                count,
                body,
                schedule,
                keyword,
                ..
            } => self.repeat(count, body, schedule, *keyword),
            ast::FnStmt::Swap { names, span } => self.swap(names, *span),
            ast::FnStmt::Misplaced(_) => {
                self.err(
                    super::repeat::fn_stmt_span(s),
                    "this statement must be inside a `parac_iterator`: at function level only declarations, host `let`s, border rules, iterators and `return` are allowed\nhelp: wrap it, e.g. `parac_iterator it(0:M:1; 0:N:1) { ... }`",
                );
            }
        }
    }

    fn const_values(
        &mut self,
        name: &proc_macro2::Ident,
        elem: Scalar,
        shape: &[i64],
        init: &ast::ArrayLit,
    ) -> Option<Vec<f64>> {
        // Flatten to the declared shape; a 1-D list fills a [1][n] or [n][1] matrix too (the
        // paper's `{1,4,6,4,1}` style).
        let total: i64 = shape.iter().product();
        let mut flat = Vec::new();
        let mut nested_ok = true;
        fn walk(
            a: &ast::ArrayLit,
            depth: usize,
            shape: &[i64],
            out: &mut Vec<(f64, bool, Sp)>,
            ok: &mut bool,
            bad: &mut Option<Sp>,
        ) {
            match a {
                ast::ArrayLit::Elem(e) => match consts::const_num(e) {
                    Some((v, f)) => out.push((v, f, e.span)),
                    None => *bad = Some(e.span),
                },
                ast::ArrayLit::List(items, _) => {
                    if depth < shape.len() && items.len() as i64 != shape[depth] {
                        *ok = false;
                    }
                    if depth >= shape.len() {
                        *ok = false;
                    }
                    for it in items {
                        walk(it, depth + 1, shape, out, ok, bad);
                    }
                }
            }
        }
        let mut bad = None;
        walk(init, 0, shape, &mut flat, &mut nested_ok, &mut bad);
        if let Some(sp) = bad {
            self.err(sp, "constant matrix elements must be constant expressions (literals, arithmetic, `sqrt`, `exp`)");
            return None;
        }
        let is_flat_list = matches!(init, ast::ArrayLit::List(items, _) if items.iter().all(|i| matches!(i, ast::ArrayLit::Elem(_))));
        if !(nested_ok || is_flat_list && flat.len() as i64 == total) || flat.len() as i64 != total
        {
            let sp = match init {
                ast::ArrayLit::List(_, sp) => *sp,
                ast::ArrayLit::Elem(e) => e.span,
            };
            let dims: String = shape.iter().map(|d| format!("[{d}]")).collect();
            self.err(sp, format!("the initializer of `{name}` has {} values, but `{name}` is {elem}{dims} ({total} values)\nhelp: write one nested list per dimension, e.g. `[[1, 2], [3, 4]]` for [2][2]", flat.len()));
            return None;
        }
        let mut out = Vec::with_capacity(flat.len());
        for (v, is_float, sp) in flat {
            if let Some((lo, hi)) = elem.range() {
                if is_float || v.fract() != 0.0 {
                    self.err(sp, format!("`{name}` holds {elem}, but this value is a float\nhelp: declare `{name}` as f32, or write an integer"));
                    return None;
                }
                if v < lo as f64 || v > hi as f64 {
                    self.err(
                        sp,
                        format!(
                            "{v} does not fit in {elem} (the element type of `{name}`)\nhelp: {}",
                            if v < 0.0 {
                                "declare the constant with a signed type, e.g. `i8` or `i16`"
                            } else {
                                "declare the constant with a wider type, e.g. `u16` or `i32`"
                            }
                        ),
                    );
                    return None;
                }
            }
            out.push(v);
        }
        Some(out)
    }

    /// Declares a rule; a rule whose lowering failed is still declared (marked incomplete) so
    /// the iterators that use it raise no cascade.
    fn add_rule(&mut self, name: &proc_macro2::Ident, span: Sp, rule: Option<BorderRule>) {
        let rule = rule.unwrap_or_else(|| BorderRule {
            name: name.to_string(),
            span,
            entries: vec![],
            shorthand: None,
            incomplete: true,
        });
        let id = self.f.rules.len();
        self.f.rules.push(rule);
        self.declare(name, Name::Rule(id));
    }

    pub(super) fn flush_runs(&mut self) {
        for r in std::mem::take(&mut self.pending_runs) {
            self.f.steps.push(HostStep::Run(r));
        }
    }

    /// The value of each name a `let` binds: one, or the items of a tuple of the same arity.
    pub(super) fn let_values<'l>(&mut self, l: &'l ast::LetStmt) -> Option<Vec<&'l ast::Expr>> {
        match (&l.value.kind, l.tuple) {
            (ast::ExprKind::Tuple(items), true) if items.len() == l.names.len() => {
                Some(items.iter().collect())
            }
            (_, false) => Some(vec![&l.value]),
            _ => {
                let n = l.names.len();
                self.err(l.value.span, format!("the pattern binds {n} names; the value must be a tuple of {n} values, e.g. `({})`", vec!["..."; n].join(", ")));
                None
            }
        }
    }

    fn host_let(&mut self, l: &ast::LetStmt) {
        let ty = l.ty.as_ref().and_then(|t| type_of(self.diags, t, false));
        let Some(values) = self.let_values(l) else {
            return;
        };
        for (name, v) in l.names.iter().zip(values) {
            let e = self.expr(v, &mut Cx::Host { global: true });
            let Some(mut e) = e.and_then(|e| self.scalar(e, &format!("host value `{name}`")))
            else {
                // Keep the name bound so that later uses raise no cascade.
                let id = self.f.scalars.len();
                self.f.scalars.push(HostScalar {
                    name: name.to_string(),
                    ty: ty.unwrap_or(Scalar::I32),
                    kind: HostScalarKind::Let,
                });
                self.declare(name, Name::Host(id));
                continue;
            };
            if let Some(t) = ty {
                e = typing::convert(e, t);
            }
            let id = self.f.scalars.len();
            self.f.scalars.push(HostScalar {
                name: name.to_string(),
                ty: e.ty.elem(),
                kind: HostScalarKind::Let,
            });
            self.flush_runs();
            self.f.steps.push(HostStep::Let(id, e));
            self.declare(name, Name::Host(id));
        }
    }
}
