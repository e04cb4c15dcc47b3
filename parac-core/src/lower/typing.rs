//! C typing: conversions, truth values, and the operators, typed with C's promotion and usual
//! arithmetic conversions (blocks elementwise, the matrix product).

use super::Lowerer;
use crate::diag::Sp;
use crate::ir::*;

/// Converts a value to `t` (a cast node if the type differs; elementwise for blocks).
pub(super) fn convert(e: Expr, t: Scalar) -> Expr {
    if e.ty.elem() == t {
        return e;
    }
    let ty = match e.ty {
        Type::Scalar(_) => Type::Scalar(t),
        Type::Block { rows, cols, .. } => Type::Block {
            elem: t,
            rows,
            cols,
        },
    };
    let span = e.span;
    Expr {
        kind: ExprKind::Cast(Box::new(e), t),
        ty,
        span,
    }
}

/// The truth value of a scalar (C: non-zero is true).
pub(super) fn truth(e: Expr) -> Expr {
    if e.ty == Type::Scalar(Scalar::Bool) {
        return e;
    }
    let span = e.span;
    let t = e.ty.elem();
    let zero = if t.is_float() {
        Expr {
            kind: ExprKind::Float(0.0),
            ty: Type::Scalar(Scalar::F32),
            span,
        }
    } else {
        convert(Expr::int(0, span), t)
    };
    Expr {
        kind: ExprKind::Binary(BinOp::Ne, Box::new(e), Box::new(zero)),
        ty: Type::Scalar(Scalar::Bool),
        span,
    }
}

/// A block type's extents.
pub(super) fn block_shape(t: Type) -> (Len, Len) {
    match t {
        Type::Block { rows, cols, .. } => (rows, cols),
        Type::Scalar(_) => (Len::Const(1), Len::Const(1)),
    }
}

pub(super) fn scalar_ty(s: Scalar) -> Type {
    Type::Scalar(s)
}

impl Lowerer<'_> {
    pub(super) fn unary(&mut self, op: UnOp, a: Expr, span: Sp) -> Option<Expr> {
        let t = a.ty.elem();
        let rt = match op {
            UnOp::Not if t == Scalar::Bool => Scalar::Bool,
            UnOp::Not if t.is_float() => {
                self.err(
                    span,
                    "`!` needs a bool (logical not) or an integer (bitwise not), not f32",
                );
                return None;
            }
            _ => t.promote(),
        };
        let a = convert(a, rt);
        let ty = match a.ty {
            Type::Block { rows, cols, .. } => Type::Block {
                elem: rt,
                rows,
                cols,
            },
            _ => scalar_ty(rt),
        };
        Some(Expr {
            kind: ExprKind::Unary(op, Box::new(a)),
            ty,
            span,
        })
    }

    /// Types a binary operator (scalars, blocks, matrix product).
    pub(super) fn binary(&mut self, op: BinOp, a: Expr, b: Expr, span: Sp) -> Option<Expr> {
        match (a.ty, b.ty) {
            (Type::Scalar(x), Type::Scalar(y)) => self.scalar_binary(op, a, b, x, y, span),
            (ta, tb) => {
                let elem = Scalar::arith(ta.elem(), tb.elem());
                let shape = |t: Type| match t {
                    Type::Block { rows, cols, .. } => Some((rows, cols)),
                    _ => None,
                };
                let (sa, sb) = (shape(ta), shape(tb));
                let result = match (op, sa, sb) {
                    (BinOp::Add | BinOp::Sub | BinOp::ElemMul, Some(p), Some(q)) if p != q => {
                        self.err(span, format!("shape mismatch: `{}` needs blocks of one shape, but they are {} and {}", op.symbol(), self.shape_text(p), self.shape_text(q)));
                        return None;
                    }
                    (BinOp::Add | BinOp::Sub | BinOp::ElemMul, Some(p), _)
                    | (BinOp::Add | BinOp::Sub, None, Some(p)) => p,
                    (BinOp::Mul, Some(p), None)
                    | (BinOp::Mul, None, Some(p))
                    | (BinOp::Div, Some(p), None) => p,
                    (BinOp::Mul, Some(p), Some(q)) => {
                        if p.1 != q.0 {
                            self.err(span, format!("matrix product of a {} and a {} block: the inner sizes differ ({} and {})\nhelp: for an elementwise product write `.*`", self.shape_text(p), self.shape_text(q), self.f.len_text(p.1), self.f.len_text(q.0)));
                            return None;
                        }
                        if !self.long_product(&a, &b, (p.0, q.1), span) {
                            return None;
                        }
                        let (a, b) = (convert(a, elem), convert(b, elem));
                        return Some(Expr {
                            kind: ExprKind::MatMul(Box::new(a), Box::new(b)),
                            ty: Type::Block {
                                elem,
                                rows: p.0,
                                cols: q.1,
                            },
                            span,
                        });
                    }
                    _ => {
                        self.err(span, format!("operator `{}` is not defined between {} and {}\nhelp: blocks support `+ - .*` with a block of the same shape, `*` (matrix product or scaling) and `/` by a scalar", op.symbol(), self.ty_text(ta), self.ty_text(tb)));
                        return None;
                    }
                };
                let (a, b) = (convert(a, elem), convert(b, elem));
                let op = if op == BinOp::ElemMul && (sa.is_none() || sb.is_none()) {
                    BinOp::Mul
                } else {
                    op
                };
                Some(Expr {
                    kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
                    ty: Type::Block {
                        elem,
                        rows: result.0,
                        cols: result.1,
                    },
                    span,
                })
            }
        }
    }

    /// A block shape as written: `3x5`, `1xK`.
    pub(super) fn shape_text(&self, (rows, cols): (Len, Len)) -> String {
        format!("{}x{}", self.f.len_text(rows), self.f.len_text(cols))
    }

    /// A type as written, a block's host lengths by their text: `f32[1][K]`.
    pub(super) fn ty_text(&self, t: Type) -> String {
        match t {
            Type::Block { elem, rows, cols } => {
                format!(
                    "{elem}[{}][{}]",
                    self.f.len_text(rows),
                    self.f.len_text(cols)
                )
            }
            Type::Scalar(s) => s.to_string(),
        }
    }

    /// Whether a matrix product of `a` and `b` (result `shape`) can be computed where an
    /// operand's extents are host lengths (`Len::Host`): its shape constant, each of its
    /// elements a loop over the inner extent of operands read tap by tap. Reports it if not.
    fn long_product(&mut self, a: &Expr, b: &Expr, shape: (Len, Len), span: Sp) -> bool {
        if !a.ty.is_long() && !b.ty.is_long() {
            return true;
        }
        let constant = shape.0.known().is_some() && shape.1.known().is_some();
        if constant && tappable(a, &|_| false) && tappable(b, &|_| false) {
            return true;
        }
        self.err(span, format!("a matrix product with a window of host length is computed as a loop per element: its result must have a constant shape (here {}), and its operands must be windows or elementwise expressions of windows\nhelp: e.g. `a[x][0:K] * b[0:K][y]` is a 1x1 block", self.shape_text(shape)));
        false
    }

    /// Whether block `e`, reduced or stored as `what`, can be read tap by tap where it has a
    /// host length (`Len::Host`). Reports it if not.
    pub(super) fn long_read(&mut self, e: &Expr, what: &str) -> bool {
        // A local of host length exists only after its `let` was reported.
        let mut reported = false;
        e.walk(&mut |x| reported |= matches!(x.kind, ExprKind::Local(_)) && x.ty.is_long());
        if !e.ty.is_long() || reported || tappable(e, &|_| false) {
            return true;
        }
        self.err(e.span, format!("{what} of a block of host length ({}) must read windows directly, or elementwise expressions of them: such a block is computed as a loop, not kept\nhelp: write the windows inside the reduction, e.g. `parac_matrix_sum(a[x][0:K] .* transe(b[0:K][y]))`", self.shape_text(block_shape(e.ty))));
        false
    }

    fn scalar_binary(
        &mut self,
        op: BinOp,
        a: Expr,
        b: Expr,
        x: Scalar,
        y: Scalar,
        span: Sp,
    ) -> Option<Expr> {
        use BinOp::*;
        let op = if op == ElemMul { Mul } else { op };
        let (a, b, t) = match op {
            And | Or => {
                let mut long = None;
                b.walk(&mut |e| {
                    let loops = match &e.kind {
                        ExprKind::Reduce(_, w) => w.ty.is_long(),
                        ExprKind::MatMul(x, y) => x.ty.is_long() || y.ty.is_long(),
                        _ => false,
                    };
                    if loops && long.is_none() {
                        long = Some(e.span);
                    }
                });
                if let Some(at) = long {
                    self.err(at, format!("a reduction over a window of host length is a loop, which runs before its statement: it cannot be the right operand of `{}`, which may skip it\nhelp: compute it in a `let` before the condition", op.symbol()));
                    return None;
                }
                (truth(a), truth(b), Scalar::Bool)
            }
            Eq | Ne | Lt | Le | Gt | Ge => {
                let t = Scalar::arith(x, y);
                return Some(Expr {
                    kind: ExprKind::Binary(op, Box::new(convert(a, t)), Box::new(convert(b, t))),
                    ty: scalar_ty(Scalar::Bool),
                    span,
                });
            }
            Shl | Shr | BitAnd | BitOr | BitXor | Rem if x.is_float() || y.is_float() => {
                self.err(span, format!("`{}` needs integer operands, but one is f32\nhelp: convert with `as i32` first", op.symbol()));
                return None;
            }
            BitAnd | BitOr | BitXor if x == Scalar::Bool && y == Scalar::Bool => {
                (a, b, Scalar::Bool)
            }
            Shl | Shr => {
                let t = x.promote();
                (convert(a, t), convert(b, t), t)
            }
            _ => {
                let t = Scalar::arith(x, y);
                (convert(a, t), convert(b, t), t)
            }
        };
        Some(Expr {
            kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
            ty: scalar_ty(t),
            span,
        })
    }

    pub(super) fn scalar(&mut self, e: Expr, what: &str) -> Option<Expr> {
        if e.ty.is_block() {
            self.err(e.span, format!("{what} must be a scalar, but this is a matrix block of type {}\nhelp: reduce it, e.g. with `parac_matrix_sum(..)`", self.ty_text(e.ty)));
            None
        } else {
            Some(e)
        }
    }

    pub(super) fn int(&mut self, e: Expr, what: &str) -> Option<Expr> {
        match e.ty {
            Type::Scalar(s) if s.is_int() => Some(e),
            Type::Scalar(Scalar::Bool) => Some(convert(e, Scalar::I32)),
            t => {
                self.err(
                    e.span,
                    format!(
                        "{what} must be an integer, but this is {t}\nhelp: convert it with `as i32`"
                    ),
                );
                None
            }
        }
    }
}
