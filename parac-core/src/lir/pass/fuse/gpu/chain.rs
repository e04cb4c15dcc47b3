//! A chain on OpenCL (`fuseitem<C>x<R>` of a producer with two consumers, unsharp's `gray`):
//! a region `Q` writing a local matrix `u` that the next two host steps, `P` and `C`, read,
//! where `P` fuses into `C` ([`super::legal`]), is computed by the fused kernel's work-items
//! too. Each work-item computes the points of `u` its tile's loops read (`P`'s box and `C`'s
//! tile, each widened by its reads' offsets of `u`) into a private tile of its own, then `P`'s
//! box reading it, then `C`'s points reading both. Neither `t` nor `u` goes through global
//! memory; the kernel is `Q`'s, and the executor skips `P`'s and `C`'s runs after it
//! (`Function::fused_consumers`).
//!
//! ```text
//! region Q {
//!   for each work-item's tile of C (rows r0 .. r1, columns c0 .. c1):
//!     let glo = max(r0 + gmin, 0), ghi = min(r1 + gmax, dim(u, 0)), gclo, gchi alike
//!     for x in [glo, ghi), y in [gclo, gchi): U[x - glo][y - gclo] = Q's point
//!     for x in [rlo, rhi), y in [clo, chi): T[..] = P's point, u[a][b] read as U[a - glo][b - gclo]
//!     for x in [r0, r1), y in [c0, c1): C's point, t from T, u from U
//! }
//! region P { }
//! region C { }
//! ```
//!
//! Legality, beside `P`'s into `C` (so that every fused read gives what the unfused one
//! gives): `Q` is a row nest of two loops from 0 whose body is `let`s and one store `u[x][y]`
//! (`fuse::producer`), with nothing but allocations between it and `P`; `u` a local `Q` writes
//! whole and alone, read by `P` and `C` alone; `Q` cannot fail (no access it guards, no
//! division that may fail, no fold) and reads nothing `P` or `C` writes; `P`'s and `C`'s reads
//! of `u` are at `x + a`, `y + b`, proven inside `u` or through a border rule as
//! [`super::spans`] asks, not under a constant border. A point of `u` in the box is inside `u`,
//! which `Q`'s space covers: its reads are proven there.

use super::super::time::{Origin, step_point};
use super::super::{Producer, producer, serial, single, uses};
use super::{Fusion, ItemTile, into_tile, spans};
use crate::codegen::safety;
use crate::ir::{BinOp, Builtin, Function, RegionId, Scalar};
use crate::lir::pass::fuse::tiles::B;
use crate::lir::{Buf, ExprId, ExprKind, Func, Memory, Stmt, StmtId, Temp};
use std::collections::HashMap;

/// A chain's first producer and the box of its matrix a consumer tile reads.
pub(super) struct Chain {
    pub(super) q: Producer,
    pub(super) qid: RegionId,
    pub(super) qname: String,
    /// `Q`'s place among the function's top-level statements.
    at: usize,
    /// The box of `u` a tile's loops read: the least and greatest offsets of its rows
    /// (columns) from the consumer tile's first and last.
    rows: (i128, i128),
    cols: (i128, i128),
}

/// The chain of region `qid` with its two consumers, where legal (the module's documentation).
pub(super) fn legal(func: &mut Func, f: &Function, qid: RegionId) -> Option<(Fusion, Chain)> {
    let [pid, cid] = f.fused_consumers(qid)[..] else {
        return None;
    };
    let fusion = super::pair(func, f, pid).filter(|fu| fu.cid == cid)?;
    let Stmt::Block(top) = func.stmts[func.body].clone() else {
        return None;
    };
    let at = top
        .iter()
        .position(|s| matches!(func.stmts[*s], Stmt::Region { id, .. } if id == qid))?;
    let (pi, ci) = fusion.at;
    if at >= pi
        || top[at + 1..pi]
            .iter()
            .any(|s| !matches!(func.stmts[*s], Stmt::Allocate { .. }))
    {
        return None;
    }
    let Stmt::Region {
        name: qname,
        body: qbody,
        ..
    } = func.stmts[top[at]].clone()
    else {
        return None;
    };
    let q = producer(func, f, qbody).filter(|q| q.mid.is_none())?;
    if !matches!(func.exprs[q.columns.0].kind, ExprKind::Int(0)) {
        return None;
    }
    let u = q.t;
    let used: Vec<_> = top.iter().map(|s| uses(func, f, *s)).collect();
    let whole = crate::analysis::written_whole(f);
    let r = &f.regions[qid];
    let (qu, pu, cu) = (&used[at], &used[pi], &used[ci]);
    let writes_read = |x: &super::super::Uses| {
        x.stores.contains(&u) || x.stores.iter().any(|m| qu.loads.contains(m))
    };
    if !r.fuse
        || !whole[u]
        || (0..r.accesses.len()).any(|a| safety::guarded(f, r, a))
        || qu.fold
        || qu.divides
        || qu.loads.contains(&u)
        || qu.stores.iter().any(|m| *m != u)
        || writes_read(pu)
        || writes_read(cu)
        || (0..used.len()).any(|k| ![at, pi, ci].contains(&k) && used[k].touches(u))
    {
        return None;
    }
    // `P`'s reads of `u` (its point's loops) and `C`'s.
    let Stmt::Region { body: pbody, .. } = func.stmts[top[pi]] else {
        return None;
    };
    let (px, _, xb) = serial(func, pbody)?;
    let (py, _, pbody) = serial(func, single(func, xb)?)?;
    let (ps, pguard) = spans(func, f, (pid, pbody), (px, py), u)?;
    // `C` reads `u` too (unsharp's `gray`), or not (three stages in a row).
    let (cs, cguard) = match cu.loads.contains(&u) {
        true => {
            let (cs, g) = spans(func, f, (cid, fusion.cbody), (fusion.cx, fusion.cy), u)?;
            (Some(cs), g)
        }
        false => (None, false),
    };
    if pguard || cguard {
        return None;
    }
    // `P`'s box (offsets of `t`'s rows from the tile's) widened by its reads of `u`, and the
    // tile widened by `C`'s.
    let widen = |d: usize, (lo, hi): (i128, i128)| {
        let (lo, hi) = (lo + ps[d].0, hi - 1 + ps[d].1);
        cs.map_or((lo, hi), |c| (lo.min(c[d].0), hi.max(c[d].1)))
    };
    let rows = widen(0, fusion.box_rows);
    let cols = widen(1, fusion.box_cols);
    let chain = Chain {
        q,
        qid,
        qname,
        at,
        rows,
        cols,
    };
    Some((fusion, chain))
}

/// Makes region `qid`'s fused kernel with its two consumers, each work-item its own group and
/// a tile of `tile` (columns, rows) points of the last, where legal and its private tiles fit;
/// whether it did.
pub(super) fn run_items(
    func: &mut Func,
    f: &Function,
    (fusion, chain): (Fusion, Chain),
    tile: [u32; 2],
) -> bool {
    if !chain.item_tile(f, &fusion).fits(tile) {
        return false;
    }
    let tile = tile.map(i128::from);
    let kernel = super::build(func, f, (&fusion, Some(&chain)), (tile, true));
    let empty = [
        (fusion.at.0, fusion.pid, fusion.pname.clone()),
        (fusion.at.1, fusion.cid, fusion.cname.clone()),
    ];
    super::replace_with(func, (chain.at, kernel), &empty)
}

impl Chain {
    /// A work-item's private tiles: `P`'s intermediate's and `u`'s.
    pub(super) fn item_tile(&self, f: &Function, fusion: &Fusion) -> ItemTile {
        let span = [self.cols.1 - self.cols.0, self.rows.1 - self.rows.0];
        let bytes = f.matrices[self.q.t].elem.bytes() as i128;
        ItemTile {
            parts: [(fusion.span(), fusion.bytes(f)), (span, bytes)],
        }
    }

    /// The statements (into `out`) computing `Q`'s points of the box of `u` that the
    /// consumer's tile `[r0, r1)` x `[c0, c1)` of at most `tc` x `tr` points reads, into a
    /// private tile: where `u`'s reads then come from.
    pub(super) fn tile(
        &self,
        b: &mut B,
        f: &Function,
        (tc, tr): (i128, i128),
        (r0, r1, c0, c1): (ExprId, ExprId, ExprId, ExprId),
        out: &mut Vec<StmtId>,
    ) -> Origin {
        let (u, i64t) = (self.q.t, Scalar::I64);
        let elem = f.matrices[u].elem;
        let memory = Memory::Private;
        let temp = b.func.temps.push(Temp {
            name: format!("{}_tile", f.matrices[u].name),
            elem,
            memory,
        });
        let h = b.int(tr + self.rows.1 - self.rows.0);
        let w = b.int(tc + self.cols.1 - self.cols.0);
        out.push(b.func.stmt(Stmt::Allocate {
            buf: Buf::Temp(temp),
            elem,
            memory,
            extents: vec![h, w],
        }));
        let mu = b.func.expr(ExprKind::Dim(u, 0), i64t);
        let nu = b.func.expr(ExprKind::Dim(u, 1), i64t);
        let zero = b.int(0);
        let (lo, hi) = (b.int(self.rows.0), b.int(self.rows.1));
        let glo = b.bound("glo", (r0, BinOp::Add, lo), (Builtin::Max, zero), out);
        let ghi = b.bound("ghi", (r1, BinOp::Add, hi), (Builtin::Min, mu), out);
        let (lo, hi) = (b.int(self.cols.0), b.int(self.cols.1));
        let gclo = b.bound("gclo", (c0, BinOp::Add, lo), (Builtin::Max, zero), out);
        let gchi = b.bound("gchi", (c1, BinOp::Add, hi), (Builtin::Min, nu), out);
        let none = HashMap::new();
        let pt = step_point(b.func, &self.q, (&none, &[]), into_tile(temp, (glo, gclo)));
        out.push(b.each((pt.x, pt.y, pt.body), [glo, ghi], [gclo, gchi]));
        (Buf::Temp(temp), Some(glo), Some(gclo))
    }
}
