//! Sub-histograms in local memory: a work-group's private bins for the matrices its work-items
//! reduce into ([`Stmt::Update`], a histogram's `hist[src[x][y]] += 1`). Each group starts its
//! bins at the operator's identity (the fill), its work-items update them with local atomics,
//! and after a barrier each work-item merges a share of the bins into the matrix with global
//! atomics, skipping the bins still at the identity. A group thus makes at most one global
//! update per bin where the baseline makes one per point, all of them on the same few
//! elements (PoCL's threads and a GPU's groups contend for them). Integer updates wrap, so
//! any order gives the result of the loop in order.
//!
//! Which matrices: those every update of which in the work-item's body is proven inside
//! (`checked: false`, so that no error is lost), with one operator, of an element OpenCL
//! updates atomically, and of constant dimensions of at most [`MOST`] elements.

use super::build::Build;
use crate::ir::{BinOp, Function, MatrixId, UpdateOp};
use crate::lir::visit::{Mutator, rebuild_stmt, stmt_parts};
use crate::lir::{Buf, ExprId, ExprKind, Func, Memory, Stmt, StmtId, Temp, VarId};

/// The most elements of one matrix's bins (16 KiB of 32-bit integers).
const MOST: i128 = 1 << 12;

/// One matrix's bins: its local buffer, operator and constant dimensions.
pub(super) struct Bin {
    pub(super) temp: Buf,
    pub(super) m: MatrixId,
    pub(super) op: UpdateOp,
    pub(super) dims: Vec<i128>,
}

impl Bin {
    pub(super) fn len(&self) -> i128 {
        self.dims.iter().product()
    }
}

/// The updates below `s`: matrix, operator, proven inside.
fn updates(func: &Func, s: StmtId, out: &mut Vec<(MatrixId, UpdateOp, bool)>) {
    if let Stmt::Update {
        buf: Buf::Matrix(m),
        op,
        checked,
        ..
    } = func.stmts[s]
    {
        out.push((m, op, checked));
    }
    for c in stmt_parts(&func.stmts[s]).1 {
        updates(func, c, out);
    }
}

/// The bins of the work-item body `body`'s reductions.
pub(super) fn find(func: &mut Func, f: &Function, body: StmtId) -> Vec<Bin> {
    let mut ups = Vec::new();
    updates(func, body, &mut ups);
    let mut mats: Vec<MatrixId> = ups.iter().map(|u| u.0).collect();
    mats.sort();
    mats.dedup();
    let mut out = Vec::new();
    for m in mats {
        let mine: Vec<_> = ups.iter().filter(|u| u.0 == m).collect();
        let op = mine[0].1;
        let mat = &f.matrices[m];
        let Some(dims) = mat.const_dims() else {
            continue;
        };
        let fits = dims
            .iter()
            .try_fold(1i128, |n, d| n.checked_mul(*d))
            .is_some_and(|n| n <= MOST);
        if !fits
            || !crate::lir::pass::gpu::atomic(mat.elem)
            || mine.iter().any(|u| u.2 || u.1 != op)
        {
            continue;
        }
        let temp = Buf::Temp(func.temps.push(Temp {
            name: format!("bins_{}", mat.name),
            elem: mat.elem,
            memory: Memory::Local,
        }));
        out.push(Bin { temp, m, op, dims });
    }
    out
}

/// The updates of binned matrices as updates of their bins, at the element's row-major place.
pub(super) struct ToBins<'a> {
    pub(super) bins: &'a [Bin],
}

impl Mutator for ToBins<'_> {
    fn mutate_stmt(&mut self, f: &mut Func, s: StmtId) -> StmtId {
        let Stmt::Update {
            buf: Buf::Matrix(m),
            index,
            op,
            value,
            ..
        } = f.stmts[s].clone()
        else {
            return rebuild_stmt(self, f, s);
        };
        let Some(b) = self.bins.iter().find(|b| b.m == m) else {
            return s;
        };
        let i64t = crate::ir::Scalar::I64;
        let mut at = index[0];
        for (i, d) in index.iter().zip(&b.dims).skip(1) {
            let d = f.int(*d, i64t);
            let scaled = f.binary(BinOp::Mul, at, d, i64t);
            at = f.binary(BinOp::Add, scaled, *i, i64t);
        }
        f.stmt(Stmt::Update {
            buf: b.temp,
            index: vec![at],
            op,
            value,
            checked: false,
        })
    }
}

impl Build<'_> {
    /// A work-item's share (every `group`-th element from its place `first`) of the bins: `each`
    /// of the element's index (`int`).
    fn share(
        &mut self,
        b: &Bin,
        first: ExprId,
        group: i64,
        each: impl FnOnce(&mut Self, VarId) -> StmtId,
    ) -> StmtId {
        let i = self.func.var("bin", crate::ir::Scalar::I32);
        let body = each(self, i);
        let end = self.func.int(b.len(), crate::ir::Scalar::I32);
        self.func
            .for_loop(i, (first, end, group), crate::lir::LoopKind::Serial, body)
    }

    /// A work-item's share of starting bins `b` at the operator's identity.
    pub(super) fn clear(&mut self, f: &Function, b: &Bin, first: ExprId, group: i64) -> StmtId {
        let elem = f.matrices[b.m].elem;
        let temp = b.temp;
        let id = b.op.identity(elem);
        self.share(b, first, group, |s, i| {
            let at = s.func.expr(ExprKind::Var(i), crate::ir::Scalar::I32);
            let at = s.func.cast(at, crate::ir::Scalar::I64);
            let value = s.func.int(id, elem);
            s.func.stmt(Stmt::Store {
                buf: temp,
                index: vec![at],
                value,
                checked: false,
            })
        })
    }

    /// A work-item's share of merging bins `b` into the matrix: each bin not at the identity
    /// as one (atomic) update of its element.
    pub(super) fn merge(&mut self, f: &Function, b: &Bin, first: ExprId, group: i64) -> StmtId {
        let (elem, i64t) = (f.matrices[b.m].elem, crate::ir::Scalar::I64);
        let id = b.op.identity(elem);
        self.share(b, first, group, |s, i| {
            let at = s.func.expr(ExprKind::Var(i), crate::ir::Scalar::I32);
            let at = s.func.cast(at, i64t);
            let value = s.func.expr(
                ExprKind::Load {
                    buf: b.temp,
                    index: vec![at],
                    checked: false,
                },
                elem,
            );
            // The element's index, row-major.
            let mut index = Vec::new();
            let mut rest = at;
            for d in b.dims[1..].iter().rev() {
                let d = s.func.int(*d, i64t);
                index.push(s.func.binary(BinOp::Rem, rest, d, i64t));
                rest = s.func.binary(BinOp::Div, rest, d, i64t);
            }
            index.push(rest);
            index.reverse();
            let update = s.func.stmt(Stmt::Update {
                buf: Buf::Matrix(b.m),
                index,
                // How the bins combine into the element (`-=`'s bins hold its negated sum).
                op: b.op.merge(),
                value,
                checked: false,
            });
            let idv = s.func.int(id, elem);
            let some = s
                .func
                .binary(BinOp::Ne, value, idv, crate::ir::Scalar::Bool);
            s.func.stmt(Stmt::If(some, update, None))
        })
    }
}
