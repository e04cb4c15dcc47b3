//! Regions: the interval pre-check, the iteration loops, statements and stores of an iterator
//! (the CPU path's `region`, `stmts`, `store`), and global reductions (its `reduction`).

use super::data::Data;
use super::expr::{Frame, Mode, Value};
use super::value::{Val, cast, cast_f64};
use super::{InterpError, Machine};
use crate::ir::*;

impl Machine<'_> {
    /// Runs region `rid`: a global reduction, or an iterator after its interval check.
    pub(crate) fn run_region(&mut self, rid: RegionId) -> Result<(), InterpError> {
        let f = self.f;
        let r = &f.regions[rid];
        if let RegionKind::Reduction { op, matrix, result } = r.kind {
            let v = reduction(
                op,
                &f.matrices[matrix],
                &self.mats[matrix],
                f.scalars[result].ty,
            )?;
            self.hosts[result] = v;
            return Ok(());
        }
        super::intervals::region_check_in(self, rid)?;
        let mut fr = Frame {
            r: Some(r),
            name: r.name.clone(),
            vars: vec![0; r.dims.len()],
            locals: vec![None; r.locals.len()],
            prefix: vec![Val::Int(0); r.prefixes],
            scans: Default::default(),
        };
        let slots: Vec<usize> = (0..r.dims.len()).filter(|s| r.dims[*s].is_some()).collect();
        // A region the CPU path runs row-parallel runs here as any other: a store fails where
        // it executes, with all its coordinates (a store that never runs never fails).
        self.loops(&mut fr, r, &slots)
    }

    /// The loops over `slots` (outermost first) around the body.
    fn loops(&mut self, fr: &mut Frame, r: &Region, slots: &[usize]) -> Result<(), InterpError> {
        let Some((&slot, inner)) = slots.split_first() else {
            return self.stmts(fr, &r.body);
        };
        let d = r.dims[slot].as_ref().expect("a slot");
        let hi = self.scalar(fr, &d.hi, Mode::Body)?.as_i64();
        let mut c = self.scalar(fr, &d.lo, Mode::Body)?.as_i64();
        let step = d.step as i32 as i64;
        while c < hi {
            fr.vars[slot] = c as i32;
            self.loops(fr, r, inner)?;
            c = c.wrapping_add(step);
        }
        Ok(())
    }

    /// Kernel statements.
    fn stmts(&mut self, fr: &mut Frame, stmts: &[KStmt]) -> Result<(), InterpError> {
        for s in stmts {
            if !fr.prefix.is_empty() {
                self.advance(fr, s)?;
            }
            match s {
                KStmt::Let(l, e) => {
                    let v = if e.ty.is_block() {
                        Value::B(self.block(fr, e, Mode::Body)?)
                    } else {
                        Value::S(self.scalar(fr, e, Mode::Body)?)
                    };
                    fr.locals[*l] = Some(v);
                }
                KStmt::Store(a, e) => self.store(fr, *a, e)?,
                KStmt::If(c, t, e) => {
                    if self.scalar(fr, c, Mode::Body)?.truthy() {
                        self.stmts(fr, t)?;
                    } else {
                        self.stmts(fr, e)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The prefixes statement `s` holds (outside its branches), combined with this point's
    /// values: along the last slot scanned, then along the first (`ExprKind::Prefix`). The
    /// iterations run in row-major order, so every earlier point of a scan ran before.
    fn advance(&mut self, fr: &mut Frame, s: &KStmt) -> Result<(), InterpError> {
        for p in s.prefixes() {
            let ExprKind::Prefix {
                id,
                op,
                value,
                slots,
            } = &p.kind
            else {
                continue;
            };
            let (id, op, t) = (*id, *op, p.ty.elem());
            let mut v = self.scalar(fr, value, Mode::Body)?;
            for &slot in slots.iter().rev() {
                let mut line = fr.vars.clone();
                line[slot] = 0;
                let key = (id, slot, line);
                // The line's first point: its value alone.
                if let Some(acc) = fr.scans.get(&key) {
                    v = super::value::combine(op, *acc, v, t);
                }
                fr.scans.insert(key, v);
            }
            fr.prefix[id] = v;
        }
        Ok(())
    }

    /// A store: the value first, then (per block element) the indices.
    fn store(&mut self, fr: &Frame, aid: AccessId, value: &Expr) -> Result<(), InterpError> {
        let r = fr.r.expect("a region");
        let a = &r.accesses[aid];
        let m = a.matrix;
        let elem = self.f.matrices[m].elem;
        if value.ty.is_block() {
            let b = self.block(fr, value, Mode::Body)?;
            for bi in 0..b.rows {
                for bj in 0..b.cols {
                    let idx = self.indices(fr, a, Some((bi, bj)))?;
                    match self.linear(m, &idx) {
                        Some(lin) => self.mats[m].set(lin, cast(b.at(bi, bj), elem)),
                        None => return Err(self.oob(fr, "write to", m, &idx)),
                    }
                }
            }
        } else {
            let v = self.scalar(fr, value, Mode::Body)?;
            let idx = self.indices(fr, a, None)?;
            match self.linear(m, &idx) {
                Some(lin) => self.mats[m].set(lin, v),
                None => return Err(self.oob(fr, "write to", m, &idx)),
            }
        }
        Ok(())
    }
}

/// A global reduction of matrix `mat` (its elements `data`) into a host scalar of type `rt`:
/// the interpreter's, and the LIR's evaluator's (`lir::eval`).
pub(crate) fn reduction(
    op: ReduceOp,
    mat: &Matrix,
    data: &Data,
    rt: Scalar,
) -> Result<Val, InterpError> {
    let n = data.len();
    let vals = (0..n).map(|i| data.get(i));
    // The CPU path's wide sum: f64 sums of chunks of 4096 added together, or a wrapping
    // i64 sum.
    let sum = || match data {
        Data::F32(v) => Acc::F(
            v.chunks(4096)
                .map(|c| c.iter().map(|x| *x as f64).sum::<f64>())
                .sum::<f64>(),
        ),
        _ => Acc::I(vals.clone().fold(0i64, |a, v| a.wrapping_add(v.as_i64()))),
    };
    Ok(match op {
        ReduceOp::Sum => match sum() {
            Acc::I(s) => cast(Val::Int(s as i128), rt),
            Acc::F(s) => cast_f64(s, rt),
        },
        ReduceOp::Mean => {
            if n == 0 {
                return Err(InterpError::DivisionByZero {
                    region: format!("{}_{}", op.name(), mat.name),
                });
            }
            match sum() {
                Acc::I(s) => cast(Val::Int((s / n as i64) as i128), rt),
                Acc::F(s) => cast_f64(s / (n as i64 as f64), rt),
            }
        }
        ReduceOp::Min | ReduceOp::Max if mat.elem.is_float() => {
            let (init, pick): (f32, fn(f32, f32) -> f32) = if op == ReduceOp::Min {
                (f32::INFINITY, f32::min)
            } else {
                (f32::NEG_INFINITY, f32::max)
            };
            cast(Val::F32(vals.fold(init, |s, v| pick(s, v.as_f32()))), rt)
        }
        ReduceOp::Min | ReduceOp::Max => {
            let p = mat.elem.promote();
            let (lo, hi) = p.range().expect("an integer type");
            let v = if op == ReduceOp::Min {
                vals.fold(hi, |s, v| s.min(cast(v, p).as_i128()))
            } else {
                vals.fold(lo, |s, v| s.max(cast(v, p).as_i128()))
            };
            cast(Val::Int(v), rt)
        }
    })
}

/// A global sum's accumulator.
enum Acc {
    I(i64),
    F(f64),
}
