//! A producer computed at each of its readers' reads (Halide's `compute_inline`): every read
//! of its matrix `t` becomes the producer's point at the read's index (`reads::point_at`, every
//! variable new), and `t` is never stored. On OpenCL a plan of the producer (`inline`,
//! `gpu::inline`), its reads proven inside `t` by the pair's legality; on the CPU path a cheap
//! point producer ([`cheap`]), in each reader ([`readers`]), a read not proven inside `t` taking
//! the point where its index is inside `t` and the original checked read (which fails) where
//! not: what each read gave unfused.

use super::reads::{point_at, within};
use super::{MAX_INLINED, Producer, Uses, separable};
use crate::ir::{BinOp, Function, Scalar};
use crate::lir::visit::{Mutator, expr_children, rebuild_expr};
use crate::lir::{Buf, ExprId, ExprKind, Func, StmtId};
use std::collections::HashMap;

/// The most operations (loads, arithmetic, built-ins, selects; casts and indices free) of a
/// producer's point the CPU path computes at each read rather than per task: a pixel scaled
/// or offset, a cast (`t = src * 2 - 7` into a 5-point stencil: 0.65-0.95 ms inlined against
/// 1.13-1.53 computed per task, 3840x2160, docs/benchmarks.md).
const MAX_OPS: usize = 4;

/// Reads of the producer's matrix as its point at their index; `exact`: a read not proven
/// inside the matrix as `select(inside, point, read)` (the CPU path; on OpenCL the fusion's
/// legality proves every read inside, through a border rule or the host).
pub(super) struct Inline<'a> {
    p: &'a Producer,
    exact: bool,
    memo: HashMap<ExprId, ExprId>,
}

impl<'a> Inline<'a> {
    pub(super) fn new(p: &'a Producer, exact: bool) -> Self {
        Inline {
            p,
            exact,
            memo: HashMap::new(),
        }
    }
}

impl Mutator for Inline<'_> {
    fn mutate_expr(&mut self, func: &mut Func, e: ExprId) -> ExprId {
        if let Some(r) = self.memo.get(&e) {
            return *r;
        }
        let r = match func.exprs[e].kind.clone() {
            ExprKind::Load {
                buf: Buf::Matrix(m),
                index,
                checked,
            } if m == self.p.t && index.len() == 2 => {
                let i = self.mutate_expr(func, index[0]);
                let j = self.mutate_expr(func, index[1]);
                let ty = func.exprs[e].ty;
                if self.exact && checked {
                    // Bound once: the index is tested, then read.
                    let i64t = Scalar::I64;
                    let (rv, cv) = (func.var("ir", i64t), func.var("ic", i64t));
                    let (re, ce) = (
                        func.expr(ExprKind::Var(rv), i64t),
                        func.expr(ExprKind::Var(cv), i64t),
                    );
                    let inside = [(re, 0), (ce, 1)].map(|(x, d)| {
                        let zero = func.int(0, i64t);
                        let dim = func.expr(ExprKind::Dim(m, d), i64t);
                        within(func, x, zero, dim)
                    });
                    let inside = func.binary(BinOp::And, inside[0], inside[1], Scalar::Bool);
                    let point = point_at(func, self.p, re, ce);
                    let point = func.cast(point, ty);
                    let original = func.expr(
                        ExprKind::Load {
                            buf: Buf::Matrix(m),
                            index: vec![re, ce],
                            checked: true,
                        },
                        ty,
                    );
                    let v = func.expr(ExprKind::Select(inside, point, original), ty);
                    let v = func.expr(ExprKind::Let(cv, j, v), ty);
                    func.expr(ExprKind::Let(rv, i, v), ty)
                } else {
                    // The point's value in the load's type (the producer's store converts to
                    // it).
                    let value = point_at(func, self.p, i, j);
                    func.cast(value, ty)
                }
            }
            _ => rebuild_expr(self, func, e),
        };
        self.memo.insert(e, r);
        r
    }
}

/// Whether a producer's point is cheap enough for the CPU path to compute at each read: at
/// most [`MAX_OPS`] operations outside indices.
pub(super) fn cheap(func: &Func, p: &Producer) -> bool {
    fn ops(func: &Func, e: ExprId) -> usize {
        let kind = &func.exprs[e].kind;
        let own = match kind {
            // Its indices are free.
            ExprKind::Load { .. } => return 1,
            ExprKind::Unary(..)
            | ExprKind::Binary(..)
            | ExprKind::Call(..)
            | ExprKind::Select(..)
            | ExprKind::Fold { .. } => 1,
            _ => 0,
        };
        own + expr_children(kind)
            .into_iter()
            .map(|c| ops(func, c))
            .sum::<usize>()
    }
    let total: usize = p
        .lets
        .iter()
        .map(|(_, e)| *e)
        .chain([p.value])
        .map(|e| ops(func, e))
        .sum();
    total <= MAX_OPS
}

/// The reader steps `readers` (regions reading `t`, [`super::readers`]) with the producer at
/// step `i` computed at each of their reads, where legal for each (`separable`) and within the
/// code budget; `None` otherwise.
pub(super) fn readers(
    func: &mut Func,
    f: &Function,
    (whole, steps, used): (&[bool], &[StmtId], &[Uses]),
    (i, pid): (usize, crate::ir::RegionId),
    p: &Producer,
    readers: &[usize],
) -> Option<Vec<StmtId>> {
    let t = p.t;
    if !readers
        .iter()
        .all(|&k| separable(f, whole, used, (i, k), (pid, t), readers))
    {
        return None;
    }
    let sites: usize = readers
        .iter()
        .map(|&k| {
            let mut n = 0;
            super::gpu::accesses(func, steps[k], &mut |buf, _| {
                n += usize::from(buf == Buf::Matrix(t));
                false
            });
            n
        })
        .sum();
    if p.size(func).saturating_mul(sites) > MAX_INLINED {
        return None;
    }
    let mut inline = Inline::new(p, true);
    Some(
        readers
            .iter()
            .map(|&k| inline.mutate_stmt(func, steps[k]))
            .collect(),
    )
}
