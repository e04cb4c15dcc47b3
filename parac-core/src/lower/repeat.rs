//! `parac_repeat(count) { .. }` and `parac_swap(a, b);`: time steps, and the exchange of two
//! grids between them.

use super::{Cx, Lowerer, Name, typing};
use crate::diag::Sp;
use crate::ir::*;
use crate::syntax::ast;

impl Lowerer<'_> {
    /// A repeat: its count, then its body as steps of its own.
    pub(super) fn repeat(
        &mut self,
        count: &ast::Expr,
        body: &[ast::FnStmt],
        schedule: &[(proc_macro2::Ident, ast::Expr)],
        keyword: Sp,
    ) {
        if self.in_repeat {
            return self.repeat_nested(keyword);
        }
        let count = self
            .expr(count, &mut Cx::Host { global: false })
            .and_then(|e| self.scalar(e, "the number of time steps"))
            .and_then(|e| self.int(e, "the number of time steps"))
            .map(|e| typing::convert(e, Scalar::I64));
        let schedule = self.repeat_schedule(schedule);
        self.flush_runs();
        let outer = std::mem::take(&mut self.f.steps);
        self.in_repeat = true;
        for s in body {
            match s {
                ast::FnStmt::Iterator(it) => self.iterator(it),
                ast::FnStmt::Swap { names, span } => self.swap(names, *span),
                ast::FnStmt::Misplaced(_) => self.fn_stmt(s, false, &mut false),
                ast::FnStmt::Repeat { keyword, .. } => self.repeat_nested(*keyword),
                other => self.err(
                    fn_stmt_span(other),
                    "only `parac_iterator`s and `parac_swap` may be written inside `parac_repeat`\nhelp: declare matrices, border rules and host `let`s before the `parac_repeat`",
                ),
            }
        }
        self.flush_runs();
        self.in_repeat = false;
        let body = std::mem::replace(&mut self.f.steps, outer);
        if let Some(count) = count {
            self.f.steps.push(HostStep::Repeat {
                count,
                body,
                schedule,
            });
        }
    }

    fn repeat_nested(&mut self, keyword: Sp) {
        self.err(
            keyword,
            "`parac_repeat` inside `parac_repeat` is not supported\nhelp: repeat the inner statements in one block, or multiply the counts",
        );
    }

    /// `parac_swap(a, b)`: two distinct locals or outputs of one element type and shape.
    pub(super) fn swap(&mut self, names: &[proc_macro2::Ident; 2], span: Sp) {
        if !self.in_repeat {
            self.err(
                span,
                "`parac_swap` is only allowed inside `parac_repeat`, between two time steps\nhelp: write the step in `parac_repeat(T) { ... parac_swap(a, b); }`",
            );
            return;
        }
        let mut ids = [0; 2];
        for (i, n) in names.iter().enumerate() {
            let s = n.to_string();
            let m = match self.names.get(&s) {
                Some(Name::Matrix(m)) => *m,
                Some(_) => {
                    self.err(
                        n.span(),
                        format!("`{s}` is not a matrix: `parac_swap` exchanges two matrices"),
                    );
                    return;
                }
                None => {
                    self.err(n.span(), format!("cannot find matrix `{s}`"));
                    return;
                }
            };
            let what = match self.f.matrices[m].kind {
                MatrixKind::Local | MatrixKind::Output => None,
                MatrixKind::Input => Some("an input (`&`): inputs are read only"),
                MatrixKind::Const(_) => Some("a constant matrix"),
            };
            if let Some(what) = what {
                self.err(
                    n.span(),
                    format!("`{s}` is {what} and cannot be swapped\nhelp: swap local matrices (`let {s}2: T[..];`) or outputs (`&mut`); copy the input into one first"),
                );
                return;
            }
            ids[i] = m;
        }
        let [a, b] = ids;
        if a == b {
            self.err(span, format!("`parac_swap` of `{}` with itself", names[0]));
            return;
        }
        let shape = |f: &Function, m: MatrixId| {
            format!("{}{}", f.matrices[m].elem, display::declared(f, m))
        };
        let (sa, sb) = (shape(&self.f, a), shape(&self.f, b));
        if sa != sb {
            self.err(
                span,
                format!(
                    "`parac_swap` needs two matrices of one element type and shape: `{}` is {sa}, `{}` is {sb}",
                    names[0], names[1]
                ),
            );
            return;
        }
        self.f.steps.push(HostStep::Swap(a, b));
    }
}

/// Where a function-level statement was written.
pub(super) fn fn_stmt_span(s: &ast::FnStmt) -> Sp {
    match s {
        ast::FnStmt::Const { span, .. }
        | ast::FnStmt::Local { span, .. }
        | ast::FnStmt::BorderBlock { span, .. }
        | ast::FnStmt::Return(_, span)
        | ast::FnStmt::Repeat { span, .. }
        | ast::FnStmt::Swap { span, .. } => *span,
        ast::FnStmt::Let(l) => l.span,
        ast::FnStmt::BorderShorthand(sh) => sh.span,
        ast::FnStmt::Iterator(it) => it.span,
        ast::FnStmt::Misplaced(st) => match st {
            ast::Stmt::Let(l) => l.span,
            ast::Stmt::Assign { span, .. }
            | ast::Stmt::If { span, .. }
            | ast::Stmt::Border(span) => *span,
            ast::Stmt::Iterator(it) => it.span,
        },
    }
}
