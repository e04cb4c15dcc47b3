//! Assignments: targets as write accesses, compound operators, and C's chaining of
//! `a = b = e` (each target gets the value converted through the targets to its right).

use super::{Cx, Kernel, Lowerer, expr, typing};
use crate::diag::Sp;
use crate::ir::*;
use crate::syntax::ast;

impl Lowerer<'_> {
    /// Resolves one assignment target into a write access (recorded even if the value later
    /// fails, so the data-flow check still sees the write).
    fn target(&mut self, t: &ast::Expr, k: &mut Kernel) -> Option<(AccessId, Type, Scalar)> {
        let ast::ExprKind::Index(name, subs) = &t.kind else {
            let what = match &t.kind {
                ast::ExprKind::Name(n)
                    if k.scopes.iter().any(|s| s.contains_key(&n.to_string())) =>
                {
                    format!(
                        "`{n}` is a `let` value, and those cannot be assigned\nhelp: bind a new value with `let {n} = ...;`"
                    )
                }
                ast::ExprKind::Name(n) => format!(
                    "cannot assign to `{n}` as a whole\nhelp: assign its elements, e.g. `{n}[itx][ity] = ...`"
                ),
                _ => "only matrix elements and windows can be assigned, e.g. `dst[itx][ity] = ...`"
                    .to_string(),
            };
            self.err(t.span, what);
            return None;
        };
        let m = self.matrix_name(name)?;
        let mat = &self.f.matrices[m];
        match mat.kind {
            MatrixKind::Input => {
                let msg = format!(
                    "cannot write to `{name}`: it is an input (`&{}`)\nhelp: declare it `&mut` to make it an output, or write into a local matrix (`let tmp: {}[..];`)",
                    mat.elem, mat.elem
                );
                self.err(t.span, msg);
                return None;
            }
            MatrixKind::Const(_) => {
                self.err(t.span, format!("cannot write to `{name}`: it is a constant matrix\nhelp: write into a local matrix (`let tmp: {}[..];`) or an output (`&mut`)", mat.elem));
                return None;
            }
            _ => {}
        }
        let elem = mat.elem;
        let target = self.index(name, m, subs, t.span, true, &mut Cx::Kernel(k))?;
        let (ExprKind::Load(aid) | ExprKind::Block(aid)) = target.kind else {
            return None;
        };
        if target.ty.is_long() {
            self.err(t.span, format!("a window of host length ({}) cannot be written: only reductions and matrix products read such windows (as loops)\nhelp: write each element, e.g. `dst[x][y] = ...` over an iterator of the window's range", self.shape_text(super::typing::block_shape(target.ty))));
            return None;
        }
        Some((aid, target.ty, elem))
    }

    pub(super) fn assign(
        &mut self,
        targets: &[ast::Expr],
        op: Option<ast::BinOp>,
        value: &ast::Expr,
        _span: Sp,
        k: &mut Kernel,
        out: &mut Vec<KStmt>,
    ) {
        let resolved: Vec<_> = targets.iter().map(|t| self.target(t, k)).collect();
        let Some(mut v) = self.expr(value, &mut Cx::Kernel(k)) else {
            return;
        };
        if resolved.iter().any(Option::is_none) {
            return;
        }
        // `m[i] = min(m[i], e)` / `max`: an update of the element, should iterations share it.
        if let ([t], None, Some(Some((aid, Type::Scalar(_), elem)))) =
            (targets, op, resolved.first())
            && let Some(u) = min_max_update(t, value, &v, *aid, *elem, &k.region.accesses)
        {
            k.region.compound.push(u);
        }
        // C semantics of `a = b = e`: b gets (Tb)e, a gets (Ta)(Tb)e.
        for (i, (t, r)) in targets.iter().zip(resolved).enumerate().rev() {
            let (aid, tty, elem) = r.expect("checked above");
            if let Some(op) = op {
                // `a[i] += e` reads a[i] too.
                let mut read = k.region.accesses[aid].clone();
                read.write = false;
                let rid = k.region.accesses.len();
                k.region.accesses.push(read);
                let cur = Expr {
                    kind: if tty.is_block() {
                        ExprKind::Block(rid)
                    } else {
                        ExprKind::Load(rid)
                    },
                    ty: tty,
                    span: t.span,
                };
                let Some(nv) = self.binary(op, cur, v.clone(), value.span) else {
                    return;
                };
                // A reduction into the element, should iterations share it: an integer value
                // combines in the element's type in any order (the operators wrap), a float
                // one keeps its expression (the iterations then run in order).
                let exact = elem.is_float() || (elem.is_int() && !v.ty.elem().is_float());
                if let (Some(u), false, true) = (UpdateOp::of(op), tty.is_block(), exact) {
                    let value = if elem.is_float() {
                        v.clone()
                    } else {
                        typing::convert(v.clone(), elem)
                    };
                    k.region.compound.push(Update {
                        write: aid,
                        read: rid,
                        op: u,
                        value,
                    });
                }
                v = nv;
            }
            match (tty, v.ty) {
                // A 1x1 block (a row times a column) is an element.
                (
                    Type::Scalar(_),
                    Type::Block {
                        rows: Len::Const(1),
                        cols: Len::Const(1),
                        ..
                    },
                ) => {}
                (Type::Scalar(_), Type::Block { .. }) => {
                    self.err(value.span, format!("a matrix block ({}) cannot be stored into the single element `{}`\nhelp: reduce it (e.g. `parac_matrix_sum(..)`) or assign to a window of the same shape", self.ty_text(v.ty), expr::show(t)));
                    return;
                }
                (
                    Type::Block { rows, cols, .. },
                    Type::Block {
                        rows: r2, cols: c2, ..
                    },
                ) if (rows, cols) != (r2, c2) => {
                    let (ws, vs) = (self.shape_text((rows, cols)), self.shape_text((r2, c2)));
                    self.err(
                        value.span,
                        format!(
                            "shape mismatch: the window `{}` is {ws} but the value is {vs}",
                            expr::show(t)
                        ),
                    );
                    return;
                }
                _ => {}
            }
            let stored = typing::convert(v.clone(), elem);
            if i == 0 {
                out.push(KStmt::Store(aid, stored));
            } else {
                // Keep the converted value for the next target to the left.
                let tmp = format!("__chain{}", k.region.locals.len());
                let id = Self::new_local(k, &tmp, stored.ty);
                let sp = stored.span;
                out.push(KStmt::Let(id, stored));
                let l = Expr {
                    kind: ExprKind::Local(id),
                    ty: k.region.locals[id].ty,
                    span: sp,
                };
                out.push(KStmt::Store(aid, l.clone()));
                v = l;
            }
        }
    }
}

/// `t = min(t, e)` (or `max`, either argument order) as an update of `t`'s element, where `e`
/// fits the element's type (its type, or a conversion of a value of it), so that the minimum
/// of the converted values is the converted minimum. `v` is the lowered value.
fn min_max_update(
    t: &ast::Expr,
    value: &ast::Expr,
    v: &Expr,
    write: AccessId,
    elem: Scalar,
    accesses: &[Access],
) -> Option<Update> {
    let ast::ExprKind::Call(name, args) = &value.kind else {
        return None;
    };
    let op = match name.to_string().as_str() {
        "min" => UpdateOp::Min,
        "max" => UpdateOp::Max,
        _ => return None,
    };
    let ExprKind::Call(_, lowered) = &v.kind else {
        return None;
    };
    let target = expr::show(t);
    let own = args.iter().position(|a| expr::show(a) == target)?;
    let strip = |e: &Expr| match &e.kind {
        ExprKind::Cast(x, _) => (**x).clone(),
        _ => e.clone(),
    };
    let ExprKind::Load(read) = strip(&lowered[own]).kind else {
        return None;
    };
    // Computed in the element's type (an `i32`/`u32` element, its operands converted to it):
    // the other operand as converted. Computed in a wider one (C's promotion of a narrow
    // element): the other operand before its promotion, which must be of the element's type,
    // or the minimum of the promoted values would not be the element's.
    let other = match v.ty == Type::Scalar(elem) {
        true => lowered[1 - own].clone(),
        false => strip(&lowered[1 - own]),
    };
    let fits = other.ty == Type::Scalar(elem) && elem.is_int();
    let same = accesses[read].matrix == accesses[write].matrix;
    (fits && same).then_some(Update {
        write,
        read,
        op,
        value: other,
    })
}
