//! Unrolled windows (`unroll`): block elements, reductions and convolutions written out
//! element by element, constant matrices' elements as literals.

use super::*;

impl K<'_> {
    /// A constant matrix's element at constant indices, as a literal (`unroll`).
    pub(super) fn const_literal(
        &self,
        a: AccessId,
        want: Scalar,
        block_ix: Option<(&str, &str)>,
    ) -> Option<String> {
        if !self.v.unroll() {
            return None;
        }
        let acc = &self.r.accesses[a];
        let mat = &self.f.matrices[acc.matrix];
        let MatrixKind::Const(vals) = &mat.kind else {
            return None;
        };
        let n = acc.subs.len();
        let mut lin: i64 = 0;
        for (k, s) in acc.subs.iter().enumerate() {
            let i = match s {
                Sub::Point(Expr {
                    kind: ExprKind::Int(v),
                    ..
                }) => *v as i64,
                Sub::Window {
                    start:
                        Expr {
                            kind: ExprKind::Int(v),
                            ..
                        },
                    stride,
                    ..
                } => {
                    let (bi, bj) = block_ix?;
                    let off: i64 = if k + 1 == n { bj } else { bi }.parse().ok()?;
                    *v as i64 + off * stride
                }
                _ => return None,
            };
            let dim = match &mat.dims[k].kind {
                ExprKind::Int(d) => *d as i64,
                _ => return None,
            };
            if i < 0 || i >= dim {
                return None;
            }
            lin = lin * dim + i;
        }
        let v = *vals.get(lin as usize)?;
        let lit = if mat.elem.is_float() {
            c_float(v)
        } else {
            c_int(v as i128, mat.elem)
        };
        Some(format!("(({}){lit})", cty(want)))
    }

    /// Element `(i, j)` of a block-valued expression, unrolled (`unroll`): the same value and
    /// type as the baseline's array element.
    pub(super) fn belem(&self, e: &Expr, i: u32, j: u32, pre: &mut Vec<String>) -> String {
        let Type::Block { elem, .. } = e.ty else {
            return self.scalar(e, pre);
        };
        let t = cty(elem);
        let (si, sj) = (i.to_string(), j.to_string());
        let code = match &e.kind {
            ExprKind::Local(l) => return format!("l{l}{}[{i}][{j}]", self.sfx),
            ExprKind::Block(a) => return self.load(*a, elem, Some((&si, &sj)), pre),
            ExprKind::Cast(inner, to) => {
                if let ExprKind::Block(a) = inner.kind {
                    return self.load(a, *to, Some((&si, &sj)), pre);
                }
                self.belem(inner, i, j, pre)
            }
            ExprKind::Unary(op, a) => {
                let x = self.belem(a, i, j, pre);
                match op {
                    UnOp::Neg => format!("(-{x})"),
                    UnOp::Plus => x,
                    UnOp::Not => format!("(~{x})"),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let side = |x: &Expr, pre: &mut Vec<String>| {
                    if x.ty.is_block() {
                        self.belem(x, i, j, pre)
                    } else {
                        format!("({})", self.scalar(x, pre))
                    }
                };
                let (x, y) = (side(a, pre), side(b, pre));
                let o = c_op(*op);
                format!("({x} {o} {y})")
            }
            ExprKind::MatMul(a, b) => {
                let (_, inner) = shape(a.ty);
                let s = self.fresh();
                let mut st = format!("{t} {s} = 0;");
                for k in 0..inner {
                    let (x, y) = (self.belem(a, i, k, pre), self.belem(b, k, j, pre));
                    let _ = write!(st, " {s} += {x} * {y};");
                }
                pre.push(st);
                s
            }
            ExprKind::Transpose(a) => return self.belem(a, j, i, pre),
            _ => {
                let b = self.block(e, pre);
                return format!("{b}[{i}][{j}]");
            }
        };
        format!("(({t})({code}))")
    }

    /// A block reduction or convolution, unrolled: the baseline's loop, statement for
    /// statement, so integer and float results are identical.
    pub(super) fn unrolled(&self, e: &Expr, pre: &mut Vec<String>) -> Option<String> {
        if !self.v.unroll() {
            return None;
        }
        let t = e.ty.elem();
        let ty = cty(t);
        let v = self.fresh();
        match &e.kind {
            ExprKind::Reduce(op, a) => {
                let (r, c) = shape(a.ty);
                let mut els = Vec::new();
                for i in 0..r {
                    for j in 0..c {
                        els.push(self.belem(a, i, j, pre));
                    }
                }
                let mut st = match op {
                    ReduceOp::Sum | ReduceOp::Mean => format!("{ty} {v} = 0;"),
                    _ => format!("{ty} {v} = ({ty}){};", els[0]),
                };
                let f = if t.is_float() { "f" } else { "" };
                for x in &els {
                    let _ = match op {
                        ReduceOp::Sum | ReduceOp::Mean => write!(st, " {v} += ({ty}){x};"),
                        ReduceOp::Min => write!(st, " {v} = {f}min({v}, ({ty}){x});"),
                        ReduceOp::Max => write!(st, " {v} = {f}max({v}, ({ty}){x});"),
                    };
                }
                pre.push(st);
                Some(if *op == ReduceOp::Mean {
                    format!("({v} / ({ty}){})", r * c)
                } else {
                    v
                })
            }
            ExprKind::Conv(fl, w) => {
                let (r, c) = shape(fl.ty);
                let mut st = format!("{ty} {v} = 0;");
                for i in 0..r {
                    for j in 0..c {
                        let (x, y) = (self.belem(fl, i, j, pre), self.belem(w, i, j, pre));
                        let _ = write!(st, " {v} += {x} * {y};");
                    }
                }
                pre.push(st);
                Some(v)
            }
            _ => None,
        }
    }
}
