//! Outputs written with streaming stores (the CPU path). A matrix that the function only writes
//! (no load, update, reduction, swap, stage or guess reads it, and no region allocates it: an
//! output parameter) is read by no one before the call returns, so its vectorized rows may go
//! to memory past the caches: [`Func::streamed`] lists such matrices, and the CPU printer
//! writes each vectorized interior's row of one in blocks through a buffer of the task's
//! (`cpu::put`), with non-temporal stores where the call finds the matrix at least
//! `Runtime::cpu_stream_bytes` (the last-level cache by default). Which matrices may stream is
//! decided here, whether they do when the call runs; the values stored are the same either way.

use crate::lir::visit::{Visitor, walk_expr, walk_stmt};
use crate::lir::{Buf, ExprId, ExprKind, Func, MatrixId, Memory, StageInto, Stmt, StmtId};

/// Lists in [`Func::streamed`] the matrices the function only writes; whether there is one.
pub fn run(func: &mut Func) -> bool {
    let mut uses = Uses {
        stored: Vec::new(),
        other: Vec::new(),
    };
    uses.visit_stmt(func, func.body);
    let mut streamed: Vec<MatrixId> = uses
        .stored
        .into_iter()
        .filter(|m| !uses.other.contains(m))
        .collect();
    streamed.sort_unstable();
    streamed.dedup();
    func.streamed = streamed;
    !func.streamed.is_empty()
}

/// The matrices stored, and those used any other way.
struct Uses {
    stored: Vec<MatrixId>,
    other: Vec<MatrixId>,
}

impl Visitor for Uses {
    fn visit_expr(&mut self, f: &Func, e: ExprId) {
        if let ExprKind::Load {
            buf: Buf::Matrix(m),
            ..
        } = &f.exprs[e].kind
        {
            self.other.push(*m);
        }
        walk_expr(self, f, e)
    }
    fn visit_stmt(&mut self, f: &Func, s: StmtId) {
        match &f.stmts[s] {
            Stmt::Store {
                buf: Buf::Matrix(m),
                ..
            } => self.stored.push(*m),
            Stmt::Update {
                buf: Buf::Matrix(m),
                ..
            }
            | Stmt::Allocate {
                buf: Buf::Matrix(m),
                ..
            } => self.other.push(*m),
            // A task's rows of a matrix: one the function's stages pass on.
            Stmt::Allocate {
                memory: Memory::Rows(m),
                ..
            } => self.other.push(*m),
            Stmt::Swap(a, b) => self.other.extend([*a, *b]),
            Stmt::Reduce { matrix, .. } => self.other.push(*matrix),
            Stmt::Within(w) => self.other.push(w.buf),
            Stmt::Stage(st) => {
                self.other.push(st.buf);
                if let StageInto::Matrix { buf, .. } = st.into {
                    self.other.push(buf);
                }
            }
            _ => {}
        }
        walk_stmt(self, f, s)
    }
}
