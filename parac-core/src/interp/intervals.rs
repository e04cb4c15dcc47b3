//! The host's proof before an iterator region runs (the proof `codegen::cpu::proof::region_check`
//! emits for the CPU path), evaluated directly on the IR: every access the host proves (not
//! guarded, not a bordered read) gets one [`Iv`] per subscript over the iteration space, with the
//! call's sizes and host scalars, by the same operations as `safety::interval`; an interval outside
//! its matrix is an [`InterpError::OutOfBounds`] before the region runs.

use super::value::Val;
use super::{InterpError, Machine, size_expr};
use crate::bounds::{CTy, Iv};
use crate::codegen::safety;
use crate::ir::*;

use crate::codegen::safety::lets;

/// The C integer type of an expression (`i32` for a block, `f32` counted as `i32`), as
/// `safety::interval` takes it.
fn cty(e: &Expr) -> CTy {
    let s = match e.ty {
        Type::Scalar(s) => s,
        Type::Block { .. } => Scalar::I32,
    };
    let (bits, signed) = safety::cty(s).unwrap_or((32, true));
    CTy { bits, signed }
}

struct Ctx<'a> {
    m: &'a Machine<'a>,
    lets: Vec<Option<&'a Expr>>,
    /// The index variables' intervals by slot.
    vars: Vec<Iv>,
}

impl Ctx<'_> {
    /// `safety::interval`.
    fn interval(&self, e: &Expr) -> Iv {
        let t = cty(e);
        let go = |x: &Expr| self.interval(x);
        match &e.kind {
            ExprKind::Int(v) => Iv::point(*v),
            ExprKind::Size(i) => Iv::point(self.m.z[*i] as i128),
            ExprKind::Host(h) => Iv::point(self.m.hosts[*h].as_i128()),
            ExprKind::Var(slot) => self.vars[*slot],
            ExprKind::Local(l) => match self.lets.get(*l).copied().flatten() {
                Some(x) => go(x),
                None => Iv::any(t),
            },
            ExprKind::Unary(UnOp::Neg, a) => go(a).neg(t),
            ExprKind::Unary(_, a) => go(a),
            ExprKind::Cast(a, _) => go(a).cast(t),
            ExprKind::Binary(op, a, b) => {
                let (a, b) = (go(a), go(b));
                use BinOp::*;
                match op {
                    Add => a.add(b, t),
                    Sub => a.sub(b, t),
                    Mul | ElemMul => a.mul(b, t),
                    Div => a.div(b, t),
                    Rem => a.rem(b, t),
                    Shl => a.shl(b, t),
                    Shr => a.shr(b, t),
                    BitAnd => a.and(b, t),
                    BitOr | BitXor => a.or(b, t),
                    _ => Iv::boolean(),
                }
            }
            ExprKind::Call(b, xs) => {
                let xs: Vec<Iv> = xs.iter().map(go).collect();
                match (b, xs.as_slice()) {
                    (Builtin::Min, [a, b]) => a.min(*b),
                    (Builtin::Max, [a, b]) => a.max(*b),
                    (Builtin::Clamp, [x, lo, hi]) => x.max(*lo).min(*hi),
                    (Builtin::Abs, [a]) => a.abs(t),
                    _ => Iv::any(t),
                }
            }
            _ => Iv::any(t),
        }
    }
}

/// The accesses of iterator `r` the host proves (not guarded, not bordered reads).
fn proven(f: &Function, r: &Region) -> Vec<AccessId> {
    (0..r.accesses.len())
        .filter(|a| safety::host_proven(f, r, *a))
        .collect()
}

/// The index variables' intervals by slot, from the slots' bounds as host expressions; `None`
/// when the iteration space is empty (no iteration, no access: arithmetic on an empty interval
/// is not empty).
fn vars_in(m: &Machine, r: &Region) -> Result<Option<Vec<Iv>>, InterpError> {
    let mut vars = vec![Iv { lo: 1, hi: 0 }; r.dims.len()];
    for (slot, d) in r.dims.iter().enumerate() {
        let Some(d) = d else { continue };
        let lo = m.host_expr(&d.lo)?.as_i64();
        let hi = m.host_expr(&d.hi)?.as_i64();
        vars[slot] = Iv::var(lo, hi, d.step);
    }
    let empty = r
        .dims
        .iter()
        .zip(&vars)
        .any(|(d, v)| d.is_some() && v.is_empty());
    Ok((!empty).then_some(vars))
}

/// The intervals of accesses `checked` of the context's region.
fn access_intervals(cx: &Ctx, r: &Region, checked: Vec<AccessId>) -> Vec<(AccessId, Vec<Iv>)> {
    checked
        .into_iter()
        .map(|a| {
            let acc = &r.accesses[a];
            let subs = acc
                .subs
                .iter()
                .enumerate()
                .map(|(k, s)| match s {
                    Sub::Point(e) => cx.interval(e),
                    Sub::Window { start, len, stride } => {
                        // Checked (at least 1) before.
                        let len = cx.m.extent(*len).unwrap_or(1);
                        cx.interval(start).window(len, *stride)
                    }
                    Sub::Star => Iv::var(0, cx.m.d[acc.matrix][k], 1),
                })
                .collect();
            (a, subs)
        })
        .collect()
}

/// The intervals of region `rid`'s proven accesses, with the machine's sizes and scalars.
pub(crate) fn intervals_in(
    m: &Machine,
    rid: RegionId,
) -> Result<Vec<(AccessId, Vec<Iv>)>, InterpError> {
    let f = m.f;
    let r = &f.regions[rid];
    if r.kind != RegionKind::Iterator {
        return Ok(Vec::new());
    }
    let checked = proven(f, r);
    if checked.is_empty() {
        return Ok(Vec::new());
    }
    let Some(vars) = vars_in(m, r)? else {
        return Ok(Vec::new());
    };
    let cx = Ctx {
        m,
        lets: lets(r),
        vars,
    };
    Ok(access_intervals(&cx, r, checked))
}

/// The host's whole check before iterator `rid` runs (the CPU path's
/// `codegen::cpu::proof::region_check`): the windows of host length legal (`safety::host_lens`),
/// the proven accesses inside their matrices ([`check_in`]), then every divisor the host checks
/// (`safety::host_divisors`: uniform divisors of divisions that run in every iteration) not 0, by
/// its interval (an [`InterpError::DivisionByZero`] if it contains 0).
pub(crate) fn region_check_in(m: &Machine, rid: RegionId) -> Result<(), InterpError> {
    let f = m.f;
    let r = &f.regions[rid];
    if r.kind != RegionKind::Iterator {
        return Ok(());
    }
    let checked = proven(f, r);
    let divisors = safety::host_divisors(r);
    let lens = safety::host_lens(r);
    if checked.is_empty() && divisors.is_empty() && lens.is_empty() {
        return Ok(());
    }
    let Some(vars) = vars_in(m, r)? else {
        return Ok(());
    };
    for (a, ls) in lens {
        let vals = ls
            .iter()
            .map(|l| m.extent(*l))
            .collect::<Result<Vec<i64>, _>>()?;
        if !safety::lens_ok(&vals) {
            return Err(InterpError::WindowLength {
                region: r.name.clone(),
                matrix: f.matrices[r.accesses[a].matrix].name.clone(),
                lens: vals,
            });
        }
    }
    let cx = Ctx {
        m,
        lets: lets(r),
        vars,
    };
    let ivs = access_intervals(&cx, r, checked);
    check_in(m, rid, &ivs)?;
    for b in divisors {
        let q = cx.interval(b);
        if q.lo <= 0 && q.hi >= 0 {
            return Err(InterpError::DivisionByZero {
                region: r.name.clone(),
            });
        }
    }
    Ok(())
}

/// `parac_runtime::bounds::check_access` for every interval: the first access (in order) with
/// an interval outside its matrix is an error, at its first dimension outside, the index the
/// interval's lower ends with that dimension's end outside.
pub(crate) fn check_in(
    m: &Machine,
    rid: RegionId,
    ivs: &[(AccessId, Vec<Iv>)],
) -> Result<(), InterpError> {
    let r = &m.f.regions[rid];
    for (a, subs) in ivs {
        let acc = &r.accesses[*a];
        if subs.iter().any(|s| s.is_empty()) {
            continue;
        }
        let shape = &m.d[acc.matrix];
        for (k, (s, d)) in subs.iter().zip(shape).enumerate() {
            if s.lo < 0 || s.hi >= *d as i128 {
                let clamp = |v: i128| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
                let mut index: Vec<i64> = subs.iter().map(|s| clamp(s.lo)).collect();
                index[k] = clamp(if s.lo < 0 { s.lo } else { s.hi });
                return Err(InterpError::OutOfBounds {
                    region: r.name.clone(),
                    what: if acc.write { "write to" } else { "read of" },
                    matrix: m.f.matrices[acc.matrix].name.clone(),
                    index,
                    shape: shape.iter().map(|d| (*d).max(0) as usize).collect(),
                });
            }
        }
    }
    Ok(())
}

/// A machine with sizes and scalars but no matrices (enough for host expressions).
fn machine<'a>(
    f: &'a Function,
    sizes: &[i64],
    scalars: &[Val],
) -> Result<Machine<'a>, InterpError> {
    if sizes.len() != f.sizes.len() {
        return Err(InterpError::Argument(format!(
            "`{}` has {} sizes, got {}",
            f.name,
            f.sizes.len(),
            sizes.len()
        )));
    }
    let mut d = Vec::with_capacity(f.matrices.len());
    for mat in &f.matrices {
        let dims: Result<Vec<i64>, InterpError> =
            mat.dims.iter().map(|e| size_expr(sizes, e)).collect();
        d.push(dims?);
    }
    let mut hosts = scalars.to_vec();
    hosts.resize(f.scalars.len(), Val::Int(0));
    Ok(Machine {
        f,
        z: sizes.iter().map(|s| *s as i32).collect(),
        d,
        hosts,
        mats: Vec::new(),
    })
}

/// The intervals the host computes before iterator region `rid` runs: for each access it
/// proves (`codegen::safety::guarded` false and not a bordered read), in access order, one
/// [`Iv`] per subscript (a window's covering its elements) over the region's iteration space.
/// `sizes` are the size symbols' values ([`Function::sizes`] order), `scalars` the host
/// scalars' values so far ([`Function::scalars`] order; missing ones count as 0). Empty for a
/// global operator, when no access is proven (the slots' bounds are then not evaluated), and
/// when the iteration space is empty (nothing runs, nothing is checked).
/// Fails where evaluating a slot's bounds does (a division by zero).
pub fn region_intervals(
    f: &Function,
    rid: RegionId,
    sizes: &[i64],
    scalars: &[Val],
) -> Result<Vec<(AccessId, Vec<Iv>)>, InterpError> {
    intervals_in(&machine(f, sizes, scalars)?, rid)
}

/// Checks [`region_intervals`]' result against the matrices' shapes with those sizes, as the
/// generated code does (`parac_runtime::bounds::check_access`): an access with an empty
/// interval never executes; otherwise the first dimension whose interval leaves its matrix
/// is an [`InterpError::OutOfBounds`].
pub fn check_intervals(
    f: &Function,
    rid: RegionId,
    sizes: &[i64],
    intervals: &[(AccessId, Vec<Iv>)],
) -> Result<(), InterpError> {
    check_in(&machine(f, sizes, &[])?, rid, intervals)
}

/// The host's whole check before iterator region `rid` runs, as the generated code does it
/// (`codegen::cpu::proof::region_check`): [`region_intervals`] checked as [`check_intervals`]
/// does, then each divisor the host checks (uniform divisors of integer divisions that run in
/// every iteration, `codegen::safety::host_divisors`) by its interval: one containing 0 is an
/// [`InterpError::DivisionByZero`] of the region. Nothing is checked when the iteration space
/// is empty. `sizes` and `scalars` as for [`region_intervals`].
pub fn region_check(
    f: &Function,
    rid: RegionId,
    sizes: &[i64],
    scalars: &[Val],
) -> Result<(), InterpError> {
    region_check_in(&machine(f, sizes, scalars)?, rid)
}

/// A host expression (a host step's value, a slot's bound, a returned value) with the call's
/// sizes ([`Function::sizes`] order) and host scalars so far ([`Function::scalars`] order;
/// missing ones count as 0), as the generated host code computes it: its value at the
/// expression's type, not yet converted to the scalar it is assigned to (see [`cast`]).
///
/// [`cast`]: super::cast
pub fn host_expr(
    f: &Function,
    sizes: &[i64],
    scalars: &[Val],
    e: &Expr,
) -> Result<Val, InterpError> {
    machine(f, sizes, scalars)?.host_expr(e)
}

/// Every matrix's dimensions with the call's sizes, in `i64`, as the generated host code
/// computes them (`__d<m>`; a dimension may be negative).
pub fn matrix_dims(f: &Function, sizes: &[i64]) -> Result<Vec<Vec<i64>>, InterpError> {
    Ok(machine(f, sizes, &[])?.d)
}
