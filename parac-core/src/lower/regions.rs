//! Iterators: the header (index variables, bounds, steps, border rules) as a region, and its
//! body's statements in kernel scopes.

use super::names::type_of;
use super::{Cx, Kernel, Lowerer, Name, const_int, typing};
use crate::ir::{self, *};
use crate::syntax::ast;
use std::collections::HashMap;

impl Lowerer<'_> {
    pub(super) fn iterator(&mut self, it: &ast::IterStmt) {
        let name = it.name.to_string();
        if it.dims.len() > 3 {
            self.err(
                it.dims_span,
                format!(
                    "iterator `{name}` has {} dimensions; at most 3 are supported",
                    it.dims.len()
                ),
            );
            return;
        }
        if it.dims.iter().all(|d| d.is_none()) {
            self.err(it.dims_span, format!("iterator `{name}` has no dimension\nhelp: give at least one `lower:upper:step`, e.g. `(0:M:1; 0:N:1)`"));
            return;
        }
        let mut k = Kernel {
            region: Region {
                name: name.clone(),
                span: it.span,
                kind: RegionKind::Iterator,
                dims: vec![],
                body: vec![],
                accesses: vec![],
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
            },
            vars: HashMap::new(),
            scopes: vec![HashMap::new()],
        };
        (k.region.fuse, k.region.inline, k.region.fold) = self.iterator_schedule(&it.schedule);
        let mut ok = true;
        for (slot, d) in it.dims.iter().enumerate() {
            let Some(d) = d else {
                k.region.dims.push(None);
                continue;
            };
            let var = d.var.as_ref().map_or_else(
                || format!("{name}{}", ["x", "y", "z"][slot]),
                |v| v.to_string(),
            );
            let lo = self
                .expr(&d.lo, &mut Cx::Host { global: false })
                .and_then(|e| self.int(e, "an iteration bound"));
            let hi = self
                .expr(&d.hi, &mut Cx::Host { global: false })
                .and_then(|e| self.int(e, "an iteration bound"));
            let step = match &d.step {
                None => Some(1),
                Some(s) => match const_int(s) {
                    Some(v) if v > 0 => Some(v),
                    Some(v) => {
                        self.err(
                            s.span,
                            format!("the step of an iterator must be positive, not {v}"),
                        );
                        None
                    }
                    None => {
                        self.err(s.span, "the step of an iterator must be a constant (the compiler divides the global size by it)\nhelp: write an integer literal such as `1` or `4`");
                        None
                    }
                },
            };
            if k.vars.insert(var.clone(), slot).is_some() {
                self.err(
                    d.span,
                    format!("index variable `{var}` is declared twice in `{name}`"),
                );
            }
            match (lo, hi, step) {
                (Some(lo), Some(hi), Some(step)) => k.region.dims.push(Some(IterDim {
                    var,
                    lo,
                    hi,
                    step,
                    span: d.span,
                })),
                _ => ok = false,
            }
        }
        for r in &it.rules {
            match self.names.get(&r.to_string()) {
                Some(Name::Rule(id)) => k.region.rules.push(*id),
                _ => {
                    self.err(r.span(), format!("no border rule named `{r}` is defined before this iterator\nhelp: define it first with `parac_border_rule {r} {{ ... }}`"));
                }
            }
        }
        let body = self.block(&it.body, &mut k);
        k.region.body = body;
        if ok {
            let id = self.f.regions.len();
            self.f.regions.push(k.region);
            self.flush_runs();
            self.f.steps.push(HostStep::Run(id));
        } else {
            self.regions_dropped = true;
        }
    }

    fn block(&mut self, stmts: &[ast::Stmt], k: &mut Kernel) -> Vec<KStmt> {
        let mut out = Vec::new();
        for s in stmts {
            self.stmt(s, k, &mut out);
        }
        out
    }

    pub(super) fn new_local(k: &mut Kernel, name: &str, ty: Type) -> LocalId {
        let id = k.region.locals.len();
        k.region.locals.push(ir::Local {
            name: name.to_string(),
            ty,
        });
        k.scopes
            .last_mut()
            .expect("a scope")
            .insert(name.to_string(), id);
        id
    }

    fn stmt(&mut self, s: &ast::Stmt, k: &mut Kernel, out: &mut Vec<KStmt>) {
        match s {
            ast::Stmt::Let(l) => {
                let ty = l.ty.as_ref().and_then(|t| type_of(self.diags, t, false));
                let Some(values) = self.let_values(l) else {
                    return;
                };
                let mut lowered = Vec::new();
                for v in values {
                    lowered.push(self.expr(v, &mut Cx::Kernel(k)));
                }
                for (name, v) in l.names.iter().zip(lowered) {
                    // After an error the name is still bound (with its declared type, or i32),
                    // so its later uses raise no "cannot find" cascade.
                    let fallback = Type::Scalar(ty.unwrap_or(Scalar::I32));
                    let Some(mut v) = v else {
                        Self::new_local(k, &name.to_string(), fallback);
                        continue;
                    };
                    if v.ty.is_long() {
                        self.err(l.value.span, format!("a block of host length ({}) is computed as a loop where it is reduced, not kept: it cannot be bound by `let`\nhelp: write the window inside its reduction or matrix product", self.shape_text(typing::block_shape(v.ty))));
                        // Bound with its type (no `let` kept), so that its uses raise no
                        // second error (`long_read`).
                        Self::new_local(k, &name.to_string(), v.ty);
                        continue;
                    }
                    if let Some(t) = ty {
                        if v.ty.is_block() {
                            self.err(l.value.span, format!("a matrix block ({}) cannot be stored into the scalar `{name}: {t}`\nhelp: reduce it (e.g. `parac_matrix_sum(..)`), or drop the type to keep a block", self.ty_text(v.ty)));
                            Self::new_local(k, &name.to_string(), fallback);
                            continue;
                        }
                        v = typing::convert(v, t);
                    }
                    let id = Self::new_local(k, &name.to_string(), v.ty);
                    out.push(KStmt::Let(id, v));
                }
            }
            ast::Stmt::Assign {
                targets,
                op,
                value,
                span,
            } => self.assign(targets, *op, value, *span, k, out),
            ast::Stmt::If {
                cond, then, els, ..
            } => {
                let c = self
                    .expr(cond, &mut Cx::Kernel(k))
                    .and_then(|c| self.scalar(c, "an `if` condition"));
                k.scopes.push(HashMap::new());
                let t = self.block(then, k);
                k.scopes.pop();
                k.scopes.push(HashMap::new());
                let e = els.as_ref().map(|e| self.block(e, k)).unwrap_or_default();
                k.scopes.pop();
                if let Some(c) = c {
                    out.push(KStmt::If(typing::truth(c), t, e));
                }
            }
            ast::Stmt::Iterator(inner) => {
                self.err(inner.span, format!("iterators do not nest: `{}` is inside `{}`\nhelp: an iterator already runs every point in parallel; move `{}` after `{}`, or add a dimension to `{}` (up to 3)", inner.name, k.region.name, inner.name, k.region.name, k.region.name));
            }
            ast::Stmt::Border(span) => {
                self.err(*span, "border rules are declared at function level, before the iterator that uses them");
            }
        }
    }
}
