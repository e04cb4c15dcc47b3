//! Work-items: a region's loops become OpenCL's index space. Its nest of loops (one per
//! iterated slot, outermost first, as `lower` builds it) is marked `GpuThread(d)`, the innermost
//! loop along dimension 0 (rows run along OpenCL's first dimension, as the runtime launches
//! them). A back end prints such a loop as its work-item's index and a test that the index is
//! below the loop's end; iterations are independent points, as they are in the source.

use crate::ir::{Function, RegionId, Scalar};
use crate::lir::{Func, LoopKind, Stmt, StmtId};

/// Whether OpenCL C updates an element of type `t` atomically (`atomic_add` and the like,
/// OpenCL 1.1's 32-bit integer atomics on global memory), so that work-items may share it.
pub fn atomic(t: Scalar) -> bool {
    matches!(t, Scalar::I32 | Scalar::U32)
}

/// Whether region `rid` runs its iterations in order, in one work-item: it reduces into shared
/// elements ([`crate::ir::Region::updates`]) that OpenCL cannot update atomically (a float
/// one, whose sum must be the interpreter's, or one of another width).
pub fn in_order(f: &Function, rid: RegionId) -> bool {
    let r = &f.regions[rid];
    r.updates
        .iter()
        .any(|u| !atomic(f.matrices[r.accesses[u.write].matrix].elem))
}

/// Marks every region's loop nest as work-items, but for the regions that run [`in_order`].
pub fn run(func: &mut Func, f: &Function) {
    for s in func.regions() {
        if let Stmt::Region { body, id, .. } = func.stmts[s] {
            let nest = nest(func, body);
            // In order, or prefixes along every slot (the nest holds no loop then).
            if in_order(f, id) || nest.is_empty() {
                one_item(func, s, body, f.regions[id].launch_slots().len());
                continue;
            }
            let n = nest.len();
            for (k, l) in nest.into_iter().enumerate() {
                if let Stmt::For { kind, .. } = &mut func.stmts[l] {
                    *kind = LoopKind::GpuThread((n - 1 - k) as u8);
                }
            }
        }
    }
}

/// Region statement `s`'s loop nest `body` run in order by the first work-item alone: wrapped
/// in one work-item loop of one iteration per dimension of its launch (`n`,
/// `ir::Region::launch_slots`), so that the launch over the region's iterations (as every
/// region's) leaves the others idle.
fn one_item(func: &mut Func, s: StmtId, body: StmtId, n: usize) {
    // In a block: the work-item's nest ends at the wrapper (`nest`), the loops inside stay
    // the work-item's own, in order.
    let mut inner = func.stmt(Stmt::Block(vec![body]));
    for d in 0..n {
        let var = func.var("item", Scalar::I32);
        let (lo, hi) = (func.int(0, Scalar::I32), func.int(1, Scalar::I32));
        inner = func.stmt(Stmt::For {
            var,
            lo,
            hi,
            step: 1,
            kind: LoopKind::GpuThread(d as u8),
            body: inner,
        });
    }
    if let Stmt::Region { body, .. } = &mut func.stmts[s] {
        *body = inner;
    }
}

/// The loops directly nested from `s`, outermost first.
pub(crate) fn nest(func: &Func, mut s: StmtId) -> Vec<StmtId> {
    let mut out = Vec::new();
    while let Stmt::For { body, .. } = func.stmts[s] {
        out.push(s);
        s = body;
    }
    out
}

/// The interior tests of every region's work-items: the `if (test) interior else body` that
/// [`super::partition::points`] and [`super::item_lanes`] make the innermost work-item loop's
/// body (by statement).
fn interior_tests(func: &Func) -> Vec<StmtId> {
    func.regions()
        .into_iter()
        .filter_map(|s| {
            let Stmt::Region { body, .. } = func.stmts[s] else {
                return None;
            };
            let Stmt::For { body, .. } = func.stmts[*nest(func, body).last()?] else {
                return None;
            };
            matches!(func.stmts[body], Stmt::If(_, _, Some(_))).then_some(body)
        })
        .collect()
}

/// Rewrites the interior of every region's work-item (the `then` arm of its interior test)
/// with `f`, which returns the new interior.
pub(crate) fn map_interiors(func: &mut Func, mut f: impl FnMut(&mut Func, StmtId) -> StmtId) {
    for s in interior_tests(func) {
        if let Stmt::If(c, t, Some(e)) = func.stmts[s] {
            let t = f(func, t);
            func.stmts[s] = Stmt::If(c, t, Some(e));
        }
    }
}

/// A `split` plan's work-items (launched over the interior box only, the runtime computing the
/// box from the facts of `super::partition::point_interior`, see
/// `codegen::opencl::partition::bounds`): the interior alone, its test and the border body
/// gone; where no interior was made the body stays as it is (checked).
pub fn split(func: &mut Func) {
    for s in interior_tests(func) {
        if let Stmt::If(_, t, Some(_)) = func.stmts[s] {
            func.stmts[s] = func.stmts[t].clone();
        }
    }
}
