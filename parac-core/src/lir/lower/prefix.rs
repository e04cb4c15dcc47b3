//! Prefixes (`parac_prefix_sum(e, y)`, [`ir::ExprKind::Prefix`]) as running values: each scan
//! of a prefix along a slot keeps, in a private temporary, its value so far for each point of
//! the loops inside that slot's (one value where there are none), which each point combines
//! with its own value before the statement that holds the prefix. A float scan along two
//! slots combines along the second, then the first; an integer one along the outer loop first. The loops run in order along scanned slots;
//! the temporary sits just outside the scanned slot's loop, so the loops outside it stay free
//! (rows in parallel on the CPU, work-items on OpenCL).

use super::{Lower, Memory};
use crate::ir::{self, BinOp, Builtin, KStmt, ReduceOp, Region, Scalar};
use crate::lir::{Buf, ExprId, ExprKind, Stmt, StmtId, Temp, TempId};

/// One scan of a prefix: along `slot`, its running values in `temp`, one per point of the
/// `inner` slots (the loops inside `slot`'s, in nest order).
pub(super) struct Scan {
    id: usize,
    slot: usize,
    temp: TempId,
    inner: Vec<usize>,
}

/// The prefixes a statement holds outside its branches: id, operator, value, slots, type.
fn held(s: &KStmt) -> Vec<(usize, ReduceOp, &ir::Expr, &[usize], Scalar)> {
    s.prefixes()
        .into_iter()
        .filter_map(|x| match &x.kind {
            ir::ExprKind::Prefix {
                id,
                op,
                value,
                slots,
            } => Some((*id, *op, &**value, &slots[..], x.ty.elem())),
            _ => None,
        })
        .collect()
}

/// The region's loops in nest order, outermost first: its slots in order; on OpenCL the slots
/// no prefix scans first (its work-items), then the scanned ones (each work-item's loops).
pub(super) fn nest_order(r: &Region, gpu: bool) -> Vec<usize> {
    let present: Vec<usize> = (0..r.dims.len()).filter(|s| r.dims[*s].is_some()).collect();
    if !gpu {
        return present;
    }
    let scanned = r.prefix_slots();
    let (a, b): (Vec<usize>, Vec<usize>) = present.into_iter().partition(|s| !scanned.contains(s));
    a.into_iter().chain(b).collect()
}

/// The identity of an integer scan's operator in type `t` (none for a float one: a float sum
/// starts at the first value, so that `-0.0` stays itself).
pub(crate) fn identity(op: ReduceOp, t: Scalar) -> Option<i128> {
    t.is_int().then(|| op.update().identity(t))
}

impl Lower<'_> {
    /// `temp[0..n] = v` (`n` an `i64` that fits an `i32`: a scan's points along an image's row).
    fn fill(&mut self, temp: TempId, n: ExprId, v: i128, t: Scalar) -> StmtId {
        let i = self.out.var("fill", Scalar::I32);
        let at = self.out.expr(ExprKind::Var(i), Scalar::I32);
        let at = self.out.cast(at, Scalar::I64);
        let value = self.out.int(v, t);
        let store = self.out.stmt(Stmt::Store {
            buf: Buf::Temp(temp),
            index: vec![at],
            value,
            checked: false,
        });
        let zero = self.out.int(0, Scalar::I32);
        let n = self.out.cast(n, Scalar::I32);
        self.out
            .for_loop(i, (zero, n, 1), crate::lir::LoopKind::Serial, store)
    }

    /// The scans of region `r`'s prefixes for loops in `order`; per nest position, the
    /// allocations of the scans along that position's slot (placed just outside its loop).
    pub(super) fn scans(&mut self, r: &Region, order: &[usize]) -> Vec<Vec<StmtId>> {
        let mut at = vec![Vec::new(); order.len()];
        self.scans.clear();
        self.prefix_vals = vec![None; r.prefixes];
        let mut seen = Vec::new();
        KStmt::walk(&r.body, &mut |s, _| seen.extend(held(s)));
        for (id, op, _, slots, ty) in seen {
            for &slot in slots {
                let Some(p) = order.iter().position(|s| *s == slot) else {
                    continue;
                };
                let inner = order[p + 1..].to_vec();
                let temp = self.out.temps.push(Temp {
                    name: format!("scan{id}"),
                    elem: ty,
                    memory: Memory::Private,
                });
                let mut n = self.out.int(1, Scalar::I64);
                for s in &inner {
                    let t = self.trips(*s);
                    n = self.out.binary(BinOp::Mul, n, t, Scalar::I64);
                }
                at[p].push(self.out.stmt(Stmt::Allocate {
                    buf: Buf::Temp(temp),
                    elem: ty,
                    memory: Memory::Private,
                    extents: vec![n],
                }));
                if let Some(id) = identity(op, ty) {
                    let fill = self.fill(temp, n, id, ty);
                    at[p].push(fill);
                }
                self.scans.push(Scan {
                    id,
                    slot,
                    temp,
                    inner,
                });
            }
        }
        at
    }

    /// Slot `s`'s trip count (`i64`, at least 0).
    fn trips(&mut self, s: usize) -> ExprId {
        let (lo, hi, step) = self.bounds(s);
        let mut n = self.out.binary(BinOp::Sub, hi, lo, Scalar::I64);
        if step != 1 {
            let more = self.out.int(step as i128 - 1, Scalar::I64);
            n = self.out.binary(BinOp::Add, n, more, Scalar::I64);
            let step = self.out.int(step as i128, Scalar::I64);
            n = self.out.binary(BinOp::Div, n, step, Scalar::I64);
        }
        let zero = self.out.int(0, Scalar::I64);
        self.out
            .expr(ExprKind::Call(Builtin::Max, vec![n, zero]), Scalar::I64)
    }

    /// Slot `s`'s bounds as `i64` and its step.
    fn bounds(&mut self, s: usize) -> (ExprId, ExprId, i64) {
        let d = self.r.and_then(|r| r.dims[s].as_ref()).expect("a slot");
        let lo = self.host_i64(&d.lo);
        let hi = self.host_i64(&d.hi);
        (lo, hi, d.step)
    }

    /// Slot `s`'s iteration at this point, from 0 (`i64`).
    fn position(&mut self, s: usize) -> ExprId {
        let (lo, _, step) = self.bounds(s);
        let v = self.slots[s].expect("a slot's variable");
        let v = self.out.expr(ExprKind::Var(v), Scalar::I32);
        let v = self.out.cast(v, Scalar::I64);
        let off = self.out.binary(BinOp::Sub, v, lo, Scalar::I64);
        match step {
            1 => off,
            _ => {
                let st = self.out.int(step as i128, Scalar::I64);
                self.out.binary(BinOp::Div, off, st, Scalar::I64)
            }
        }
    }

    /// Before statement `s`: each prefix it holds combined with this point's value, scan by
    /// scan (the last slot first), each scan's running value stored; the prefix's value bound.
    pub(super) fn advance(&mut self, s: &KStmt, out: &mut Vec<StmtId>) {
        for (id, op, value, slots, ty) in held(s) {
            let mut v = self.scalar(value, super::Mode::Body);
            v = self.out.cast(v, ty);
            // Bound once, before the scans that read it: a float scan's `select` reads it in
            // both arms, and a fold (a large window's loop) sits only where every path runs it.
            if !matches!(self.out.exprs[v].kind, ExprKind::Var(_) | ExprKind::Int(_)) {
                let var = self.out.var(&format!("val{id}"), ty);
                out.push(self.out.stmt(Stmt::Let(var, v)));
                v = self.out.expr(ExprKind::Var(var), ty);
            }
            // A float scan along two slots combines along the second slot, then the first
            // (the order of its additions is the language's). An integer one combines along the
            // outer loop first: its running values per column then read no scan along the row,
            // so a first pass over a block of rows (`pass::scan_blocks`) runs only the column
            // steps, and the row's scan reads the column's value (the same sums: an integer
            // operator's order cannot change them).
            let mut along: Vec<usize> = slots
                .iter()
                .rev()
                .filter_map(|slot| {
                    self.scans
                        .iter()
                        .position(|c| c.id == id && c.slot == *slot)
                })
                .collect();
            if identity(op, ty).is_some() {
                along.sort_by_key(|k| std::cmp::Reverse(self.scans[*k].inner.len()));
            }
            for k in along {
                let slot = self.scans[k].slot;
                let (temp, inner) = (self.scans[k].temp, self.scans[k].inner.clone());
                // Row-major over the inner slots' iterations.
                let mut index = self.out.int(0, Scalar::I64);
                for (k, s) in inner.iter().enumerate() {
                    let p = self.position(*s);
                    index = match k {
                        0 => p,
                        _ => {
                            let t = self.trips(*s);
                            let i = self.out.binary(BinOp::Mul, index, t, Scalar::I64);
                            self.out.binary(BinOp::Add, i, p, Scalar::I64)
                        }
                    };
                }
                let prev = self.out.expr(
                    ExprKind::Load {
                        buf: Buf::Temp(temp),
                        index: vec![index],
                        checked: false,
                    },
                    ty,
                );
                let both = self.out.combine(op, prev, v, ty);
                // The scan's first point: its value alone (an integer scan's running values
                // start at the operator's identity, which combines to the value).
                let now = match identity(op, ty) {
                    Some(_) => both,
                    None => {
                        let p = self.position(slot);
                        let zero = self.out.int(0, Scalar::I64);
                        let first = self.out.binary(BinOp::Eq, p, zero, Scalar::Bool);
                        self.out.expr(ExprKind::Select(first, v, both), ty)
                    }
                };
                let var = self.out.var(&format!("run{id}"), ty);
                out.push(self.out.stmt(Stmt::Let(var, now)));
                let value = self.out.expr(ExprKind::Var(var), ty);
                out.push(self.out.stmt(Stmt::Store {
                    buf: Buf::Temp(temp),
                    index: vec![index],
                    value,
                    checked: false,
                }));
                v = value;
            }
            let bound = match self.out.exprs[v].kind {
                ExprKind::Var(x) => Some(x),
                _ => None,
            };
            self.prefix_vals[id] = bound;
        }
    }

    /// A prefix's value at this point (bound by [`Lower::advance`]).
    pub(super) fn prefix_value(&mut self, id: usize, t: Scalar) -> ExprId {
        match self.prefix_vals.get(id).copied().flatten() {
            Some(v) => {
                let ty = self.out.vars[v].ty;
                let x = self.out.expr(ExprKind::Var(v), ty);
                self.out.cast(x, t)
            }
            None => self.out.int(0, t),
        }
    }
}
