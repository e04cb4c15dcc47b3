//! Loop partitioning for border rules (the `split` plan): which iterations of a region read
//! nothing outside their matrices, as bounds the host evaluates at run time.
//!
//! A bordered read (a read of a matrix a border rule of the region extends) stays inside its
//! matrix when each subscript `s`, of affine form `coef * v + offset` in one iteration variable
//! `v` (a window `start..start + extent`), satisfies `0 <= s` and `s + extent <= dim - 1`. Each
//! such pair is one [`Bound`]; their intersection over every bordered read is the interior box
//! (`parac::opencl::interior` computes it from the sizes of the call). A region has bounds when
//! it has bordered reads and every subscript of every one of them is affine in at most one
//! iteration variable with offsets independent of the sizes; otherwise it is not partitioned.

use super::*;

/// One subscript of one bordered read: `0 <= coef * v + offset` and
/// `coef * v + offset + extent <= dim(matrix, k) - 1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    /// The OpenCL dimension of `v` (0: the innermost iteration slot), `None` when the subscript
    /// is a constant.
    pub cl: Option<usize>,
    /// The coefficient of `v`.
    pub coef: i64,
    /// The constant offset.
    pub offset: i64,
    /// The window's length minus one (0 for a point).
    pub extent: i64,
    /// The matrix read.
    pub matrix: MatrixId,
    /// The matrix dimension the subscript indexes.
    pub k: usize,
}

/// The bounds of region `rid`, or `None` if its interior assumes nothing (no bordered read) or
/// something it cannot bound (`lir_bounds`).
pub fn bounds(f: &Function, rid: RegionId) -> Option<Vec<Bound>> {
    if f.regions[rid].kind != RegionKind::Iterator {
        return None;
    }
    lir_bounds(f, rid).filter(|b| !b.is_empty())
}

/// The bounds of every assumption of the interior the OpenCL lowering makes for one point of
/// region `rid` ([`lir::pass::partition::point_interior`]): each read proven inside its matrix
/// (`Inside`), its index of affine form `coef * v + offset` in at most one work-item variable
/// `v`; a border test's assumption (`e >= 0`, `e < dim`, `e != c` for `c` below zero or past
/// a dimension) where a read's bound implies it.
/// `None` where some assumption is not of these forms: then no plan is split. The box from
/// these bounds holds only points where every assumption holds (the runtime's `interior`), so
/// a split kernel runs the interior there with no test. The forms are taken modulo `2^32`
/// where the index is computed in `int`: inside a dimension (below `2^31`) the value is the
/// form's.
pub fn lir_bounds(f: &Function, rid: RegionId) -> Option<Vec<Bound>> {
    use crate::lir::pass::facts::Fact;
    use crate::lir::{self, ExprKind, Stmt};
    let opts = lir::Options {
        partition: false,
        select_loads: false,
        region: Some(rid),
        ..lir::Options::gpu()
    };
    let mut func = lir::lower(f, &opts).func;
    let body = func
        .regions()
        .into_iter()
        .find_map(|s| match func.stmts[s] {
            Stmt::Region { id, body, .. } if id == rid => Some(body),
            _ => None,
        })?;
    let nest = lir::pass::gpu::nest(&func, body);
    let mut cl_of = Vec::new();
    for l in &nest {
        if let Stmt::For {
            var,
            kind: lir::LoopKind::GpuThread(d),
            ..
        } = func.stmts[*l]
        {
            cl_of.push((lir::affine::Leaf::Var(var.index()), d as usize));
        }
    }
    let Stmt::For { var, body, .. } = func.stmts[*nest.last()?] else {
        return None;
    };
    let (_, _, facts) = lir::pass::partition::point_interior(&mut func, var, body)?;
    // `(cl, coef, offset)` of an index.
    let form = |e| -> Option<(Option<usize>, i64, i64)> {
        let a = lir::affine::affine(&func, e)?;
        let offset = i64::try_from(a.constant).ok()?;
        match a.terms.as_slice() {
            [] => Some((None, 0, offset)),
            [(leaf, c)] => {
                let cl = cl_of.iter().find(|(l, _)| l == leaf)?.1;
                Some((Some(cl), i64::try_from(*c).ok()?, offset))
            }
            _ => None,
        }
    };
    let dim = |d| match func.exprs[d].kind {
        ExprKind::Dim(m, k) => Some((m, k)),
        _ => None,
    };
    let mut out: Vec<Bound> = Vec::new();
    for fact in &facts {
        if let Fact::Inside(e, d) = *fact {
            let ((cl, coef, offset), (matrix, k)) = (form(e)?, dim(d)?);
            let b = Bound {
                cl,
                coef,
                offset,
                extent: 0,
                matrix,
                k,
            };
            if !out.contains(&b) {
                out.push(b);
            }
        }
    }
    for fact in &facts {
        let implied = match *fact {
            Fact::Inside(..) => true,
            Fact::NonNeg(e) => {
                let (cl, coef, offset) = form(e)?;
                out.iter()
                    .any(|b| (b.cl, b.coef, b.offset) == (cl, coef, offset))
            }
            Fact::Below(e, d) => {
                let ((cl, coef, offset), (matrix, k)) = (form(e)?, dim(d)?);
                out.iter().any(|b| {
                    (b.cl, b.coef, b.offset, b.matrix, b.k) == (cl, coef, offset, matrix, k)
                })
            }
            // `e != c` with `c` below zero or a dimension plus `j >= 0`: implied by `e` inside
            // that dimension.
            Fact::Not(e, c) => {
                let f = form(e)?;
                let reads = |m: Option<(usize, usize)>| {
                    out.iter().any(|b| {
                        (b.cl, b.coef, b.offset) == f && m.is_none_or(|m| (b.matrix, b.k) == m)
                    })
                };
                match func.exprs[c].kind {
                    ExprKind::Int(k) if k < 0 => reads(None),
                    ExprKind::Binary(crate::ir::BinOp::Add, d, j) => {
                        let at_or_past = matches!(func.exprs[j].kind, ExprKind::Int(j) if j >= 0);
                        at_or_past && reads(Some(dim(d)?))
                    }
                    ExprKind::Dim(..) => reads(Some(dim(c)?)),
                    _ => false,
                }
            }
        };
        if !implied {
            return None;
        }
    }
    Some(out)
}
