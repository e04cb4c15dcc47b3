//! Subscripts: `m[..][..]` as an access of the region's (or border rule's) table, points,
//! windows (the shape of a block) and a border rule's `*`.

use super::typing::scalar_ty;
use super::{Cx, Lowerer};
use crate::diag::Sp;
use crate::ir::*;
use crate::syntax::ast;

impl Lowerer<'_> {
    /// Lowers `m[..][..]` into an access of the current table.
    pub(super) fn index(
        &mut self,
        n: &proc_macro2::Ident,
        m: MatrixId,
        subs: &[ast::Subscript],
        span: Sp,
        write: bool,
        cx: &mut Cx,
    ) -> Option<Expr> {
        let ndims = self.f.matrices[m].dims.len();
        let elem = self.f.matrices[m].elem;
        if subs.len() != ndims {
            if self.bad_rank.contains(&n.to_string()) {
                // Its declaration was already rejected; no second error.
                return None;
            }
            self.err(
                span,
                format!(
                    "`{n}` has {ndims} dimension{}, but {} subscript{} given\nhelp: write one subscript per dimension, e.g. `{n}{}`",
                    if ndims == 1 { "" } else { "s" },
                    subs.len(),
                    if subs.len() == 1 { " is" } else { "s are" },
                    ["[itx]", "[itx][ity]", "[c][itx][ity]"][ndims.clamp(1, 3) - 1]
                ),
            );
            return None;
        }
        if let Cx::Border(b) = cx
            && b.matrix != m
        {
            let other = self.f.matrices[b.matrix].name.clone();
            self.err(
                    span,
                    format!(
                        "a border value of `{other}` may read only `{other}` itself, not `{n}`\nhelp: border values are computed from `{other}`'s own pixels, constants and scalars; to combine matrices, compute the combination in an iterator first"
                    ),
                );
            return None;
        }
        let mut out = Vec::new();
        let mut lens = Vec::new();
        let mut ok = true;
        for (d, sub) in subs.iter().enumerate() {
            match &sub.kind {
                ast::SubKind::Star => match cx {
                    Cx::Border(b) if b.sels[d] == Sel::Star => {
                        out.push(Sub::Star);
                        lens.push(Len::Const(1));
                    }
                    Cx::Border(_) => {
                        self.err(sub.span, format!("a border value depends on another border value: `*` here stands for the out-of-image index of this position in dimension {d}\nhelp: read an index inside the image, e.g. `{n}[0]` for the first row/column"));
                        ok = false;
                    }
                    _ => {
                        self.err(sub.span, "`*` (every index) is only meaningful in a border rule\nhelp: use an index variable, e.g. `[itx]`");
                        ok = false;
                    }
                },
                ast::SubKind::Point(e) => {
                    let mut hcx = Cx::Host { global: false };
                    let c: &mut Cx = if matches!(cx, Cx::Border(_)) {
                        &mut hcx
                    } else {
                        cx
                    };
                    match self.expr(e, c).and_then(|e| self.int(e, "an index")) {
                        Some(e) => {
                            out.push(Sub::Point(e));
                            lens.push(Len::Const(1));
                        }
                        None => ok = false,
                    }
                }
                ast::SubKind::Window { start, len, stride } => {
                    if matches!(cx, Cx::Border(_)) {
                        self.err(
                            sub.span,
                            "a border value reads single elements, not windows",
                        );
                        ok = false;
                        continue;
                    }
                    let st = self
                        .expr(start, cx)
                        .and_then(|e| self.int(e, "a window start"));
                    let l = self.window_len(len, cx);
                    let s = match stride.as_ref().map(super::const_int) {
                        None => Some(1),
                        Some(Some(s)) if s > 0 => Some(s),
                        Some(_) => {
                            self.err(
                                stride.as_ref().map_or(sub.span, |s| s.span),
                                "a window stride must be a positive constant",
                            );
                            None
                        }
                    };
                    match (st, l, s) {
                        (Some(start), Some(len), Some(stride)) => {
                            out.push(Sub::Window { start, len, stride });
                            lens.push(len);
                        }
                        _ => ok = false,
                    }
                }
            }
        }
        if !ok {
            return None;
        }
        if ndims == 3 && lens[0] != Len::Const(1) {
            self.err(subs[0].span, "a window cannot span the channel dimension; index one channel, e.g. `img[c][..][..]`");
            return None;
        }
        let long = lens.iter().any(|l| l.known().is_none());
        if long && matches!(self.f.matrices[m].kind, MatrixKind::Const(_)) {
            self.err(span, format!("a window of the constant matrix `{n}` has a constant length from 1 to 64\nhelp: read the whole constant, `{n}`, or a window of it such as `{n}[0:3:1][0:3:1]`"));
            return None;
        }
        let is_block = out.iter().any(|s| matches!(s, Sub::Window { .. }));
        let access = Access {
            matrix: m,
            write,
            subs: out,
            span,
        };
        let id = match cx {
            Cx::Kernel(k) => {
                k.region.accesses.push(access);
                k.region.accesses.len() - 1
            }
            Cx::Border(b) => {
                b.accesses.push(access);
                b.accesses.len() - 1
            }
            _ => unreachable!("index lowered only in kernels and border rules"),
        };
        if is_block {
            let (rows, cols) = if lens.len() == 1 {
                (Len::Const(1), lens[0])
            } else {
                (lens[lens.len() - 2], lens[lens.len() - 1])
            };
            Some(Expr {
                kind: ExprKind::Block(id),
                ty: Type::Block { elem, rows, cols },
                span,
            })
        } else {
            Some(Expr {
                kind: ExprKind::Load(id),
                ty: scalar_ty(elem),
                span,
            })
        }
    }

    /// A window's length: a constant from 1 to 64 as it is; a longer constant, or an integer
    /// expression of sizes and host scalars, as a `Len::Host` (one per text).
    fn window_len(&mut self, len: &ast::Expr, cx: &mut Cx) -> Option<Len> {
        let e = match super::const_int(len) {
            Some(l) if (1..=64).contains(&l) => return Some(Len::Const(l as u32)),
            Some(l) if l > 64 && l <= i32::MAX as i64 => Expr {
                kind: ExprKind::Int(l as i128),
                ty: Type::Scalar(Scalar::I64),
                span: len.span,
            },
            Some(l) => {
                self.err(
                    len.span,
                    format!(
                        "a window length must be between 1 and {}, not {l}",
                        i32::MAX
                    ),
                );
                return None;
            }
            None => {
                let e = self.expr(len, cx)?;
                let mut varies = false;
                e.walk(&mut |x| {
                    varies |= matches!(
                        x.kind,
                        ExprKind::Var(_)
                            | ExprKind::Local(_)
                            | ExprKind::Load(_)
                            | ExprKind::Block(_)
                    )
                });
                if varies {
                    self.err(len.span, "a window's length is the same at every point: an expression of sizes, scalar parameters and constants, not of index variables, `let`s or matrix elements");
                    return None;
                }
                self.int(e, "a window length")?
            }
        };
        let text = crate::ir::display::host_text(&self.f, &e);
        let id = match self.f.lens.iter().position(|l| l.text == text) {
            Some(id) => id,
            None => {
                self.f.lens.push(HostLen { expr: e, text });
                self.f.lens.len() - 1
            }
        };
        Some(Len::Host(id))
    }
}
