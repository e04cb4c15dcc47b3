//! The model's choice when the call runs (`Builtin::Fuses`): the fused steps under a test, the
//! steps apart otherwise ([`guarded`]), from each fused intermediate's bytes and halo.

use super::*;

/// The fused `steps` under the model's test (`Builtin::Fuses`: the run time's policy for their
/// stages, else fused where a task recomputes little, or where the intermediates `gone` (with
/// their [`Halo`]s, and whether a fused reader's tasks still store them), stored, would not
/// fit the cores' caches), the `orig` steps otherwise:
/// `let strip = fuses(bytes, span, stride, rows, row_bytes, height, stages..); if strip > 0
/// { fused } else { apart }` over the steps from the first that fusion changed to the last,
/// the allocations it did not change before the test; `strip` the tasks' rows (the fused
/// tasks' step, `LoopKind::ParallelChunks(Some(strip))`, `rows` the compiler's). Where those
/// steps hold anything but allocations and regions (a host `let`, a reduction, a repeat:
/// bindings later steps may use), the fused steps alone, in tasks of `rows` rows.
pub(super) fn guarded(
    func: &mut Func,
    f: &Function,
    orig: &[StmtId],
    steps: Vec<StmtId>,
    gone: &[(usize, Halo, bool)],
    (strip, rows): (VarId, i64),
) -> Vec<StmtId> {
    let i64t = Scalar::I64;
    let nominal = func.int(i128::from(rows), i64t);
    let alone = |func: &mut Func, steps: Vec<StmtId>| {
        let mut out = vec![func.stmt(Stmt::Let(strip, nominal))];
        out.extend(steps);
        out
    };
    let changed: Vec<usize> = (0..steps.len()).filter(|k| steps[*k] != orig[*k]).collect();
    let (Some(&lo), Some(&hi)) = (changed.first(), changed.last()) else {
        return alone(func, steps);
    };
    let plain = |s: StmtId| plain(func, s);
    if !(lo..=hi).all(|k| plain(steps[k]) && plain(orig[k])) {
        return alone(func, steps);
    }
    let kept =
        |k: &usize| steps[*k] == orig[*k] && matches!(func.stmts[steps[*k]], Stmt::Allocate { .. });
    let (before, rest): (Vec<usize>, Vec<usize>) = (lo..=hi).partition(kept);
    // The intermediates' bytes, and those of one row of each (a task's buffers per row).
    let (mut bytes, mut row_bytes) = (None, None);
    let sum = |func: &mut Func, a: Option<ExprId>, b: ExprId| match a {
        Some(a) => func.binary(BinOp::Add, a, b, i64t),
        None => b,
    };
    for &(t, _, stored) in gone {
        let mut b = func.int(f.matrices[t].elem.bytes() as i128, i64t);
        for d in (0..f.matrices[t].dims.len()).rev() {
            if d == 0 {
                row_bytes = Some(sum(func, row_bytes, b));
            }
            let e = func.expr(ExprKind::Dim(t, d), i64t);
            b = func.binary(BinOp::Mul, b, e, i64t);
        }
        // A stored intermediate still goes through memory.
        if !stored {
            bytes = Some(sum(func, bytes, b));
        }
    }
    let Some(&(first, ..)) = gone.first() else {
        return alone(func, steps);
    };
    let bytes = bytes.unwrap_or_else(|| func.int(0, i64t));
    let row_bytes = row_bytes.unwrap_or_else(|| func.int(1, i64t));
    let height = func.expr(ExprKind::Dim(first, 0), i64t);
    // The stages: the regions of those steps.
    let ids: Vec<usize> = rest
        .iter()
        .flat_map(|k| step_parts(func, steps[*k]))
        .filter_map(|s| match func.stmts[s] {
            Stmt::Region { id, .. } => Some(id),
            _ => None,
        })
        .collect();
    let (span, stride) = widest(gone.iter().map(|g| g.1));
    let (span, stride) = (func.int(span, i64t), func.int(stride, i64t));
    let mut args = vec![bytes, span, stride, nominal, row_bytes, height];
    for id in ids {
        args.push(func.int(id as i128, i64t));
    }
    let choice = func.expr(ExprKind::Call(Builtin::Fuses, args), i64t);
    let strip_e = func.expr(ExprKind::Var(strip), i64t);
    let zero = func.int(0, i64t);
    let test = func.binary(BinOp::Gt, strip_e, zero, Scalar::Bool);
    let fused = func.stmt(Stmt::Block(rest.iter().map(|k| steps[*k]).collect()));
    let apart = func.stmt(Stmt::Block(rest.iter().map(|k| orig[*k]).collect()));
    let mut out: Vec<StmtId> = steps[..lo].to_vec();
    out.extend(before.iter().map(|k| steps[*k]));
    out.push(func.stmt(Stmt::Let(strip, choice)));
    out.push(func.stmt(Stmt::If(test, fused, Some(apart))));
    out.extend_from_slice(&steps[hi + 1..]);
    out
}

/// The rows of an intermediate a task computes beyond its own (its reads' span), and its own
/// per row of its consumer (their stride): what fusion computes twice, against what it computes
/// once per row of a task. A producer computed in each of several readers' tasks (a clone,
/// [`readers`]) computes all its rows again: stride 0.
pub(super) type Halo = (i128, i128);

/// The halo whose rows computed twice are the largest share of its strip (none: `(0, 1)`).
pub(super) fn widest(halos: impl Iterator<Item = Halo>) -> Halo {
    halos
        .max_by(|a, b| (a.0 * b.1).cmp(&(b.0 * a.1)))
        .unwrap_or((0, 1))
}
