//! Work-items: a region's loops become OpenCL's index space. Its nest of loops (one per
//! iterated slot, outermost first, as `lower` builds it) is marked `GpuThread(d)`, the innermost
//! loop along dimension 0 (rows run along OpenCL's first dimension, as the runtime launches
//! them). A back end prints such a loop as its work-item's index and a test that the index is
//! below the loop's end; iterations are independent points, as they are in the source.

use crate::lir::{Func, LoopKind, Stmt, StmtId};

/// Marks every region's loop nest as work-items.
pub fn run(func: &mut Func) {
    let Stmt::Block(steps) = func.stmts[func.body].clone() else {
        return;
    };
    for s in steps {
        if let Stmt::Region { body, .. } = func.stmts[s] {
            let nest = nest(func, body);
            let n = nest.len();
            for (k, l) in nest.into_iter().enumerate() {
                if let Stmt::For { kind, .. } = &mut func.stmts[l] {
                    *kind = LoopKind::GpuThread((n - 1 - k) as u8);
                }
            }
        }
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
