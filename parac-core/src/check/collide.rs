//! Writes to places that several iterations may share. An iterator's iterations run in
//! parallel and in no particular order, so a store whose element another iteration may write
//! too would race: the answer would depend on the order. Such a store is either an update the
//! compiler runs as a reduction (`m[i] += e`, `-=`, `|=`, `&=`, `^=`, `m[i] = min(m[i], e)`,
//! `max`: [`crate::ir::Update`]) or an error at its token. An element is taken as shared when
//! its index comes from data (a load, or a local computed from one), or when the samples show
//! two iterations writing it (a branch on data included: `if (..) { count[0] += 1; }`).

use crate::diag::Diagnostics;
use crate::ir::*;

/// Per local of `r`: its value depends on a matrix's element.
fn data_locals(r: &Region) -> Vec<bool> {
    let mut out = vec![false; r.locals.len()];
    KStmt::walk(&r.body, &mut |s, _| {
        if let KStmt::Let(l, e) = s {
            out[*l] = depends(e, &out);
        }
    });
    out
}

/// Whether `e` reads a matrix or a local that does.
fn depends(e: &Expr, data: &[bool]) -> bool {
    let mut yes = false;
    e.walk(&mut |x| match x.kind {
        ExprKind::Load(_) | ExprKind::Block(_) | ExprKind::Prefix { .. } => yes = true,
        ExprKind::Local(l) => yes |= data.get(l).copied().unwrap_or(false),
        _ => {}
    });
    yes
}

/// Per access of `r`: some subscript depends on data.
fn data_indexed(r: &Region) -> Vec<bool> {
    let data = data_locals(r);
    r.accesses
        .iter()
        .map(|a| {
            a.subs.iter().any(|s| match s {
                Sub::Point(e) => depends(e, &data),
                Sub::Window { start, .. } => depends(start, &data),
                Sub::Star => false,
            })
        })
        .collect()
}

/// The constant a value is, through conversions (`1`, `1 as u8`).
fn constant(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Cast(x, _) => constant(x),
        ExprKind::Int(v) => Some(v.to_string()),
        ExprKind::Float(v) => Some(format!("{v:?}")),
        _ => None,
    }
}

/// Whether every store of region `r` into matrix `m` stores one and the same constant: then
/// iterations that share an element write it the same value, in whatever order (`seen[v] = 1`).
pub(super) fn uniform(r: &Region, m: MatrixId) -> bool {
    let mut values = Vec::new();
    KStmt::walk(&r.body, &mut |s, _| {
        if let KStmt::Store(a, e) = s
            && r.accesses[*a].matrix == m
        {
            values.push(constant(e));
        }
    });
    values
        .first()
        .is_some_and(|v| v.is_some() && values.iter().all(|w| w == v))
}

/// The help of an error at a store into `m` that other iterations may write too.
pub(super) fn reduce_help(m: &str) -> String {
    format!(
        "help: iterations run in parallel and in no particular order; to accumulate into `{m}`, write `{m}[..] += e` (or `-=`, `|=`, `&=`, `^=`, `{m}[..] = min({m}[..], e)`, `max`), which runs as a reduction"
    )
}

/// Decides region `rid`'s updates ([`Region::updates`]) from the writes the samples showed
/// shared (`shared`, per access) and the indices from data; reports every other store or read
/// that may race.
pub fn decide(f: &mut Function, rid: RegionId, shared: &[bool], diags: &mut Diagnostics) {
    let r = &f.regions[rid];
    if r.kind != RegionKind::Iterator {
        return;
    }
    let data = data_indexed(r);
    let name = |m: MatrixId| f.matrices[m].name.clone();
    let mut updates: Vec<Update> = Vec::new();
    for (a, acc) in r.accesses.iter().enumerate() {
        if !acc.write || !(data[a] || shared.get(a).copied().unwrap_or(false)) {
            continue;
        }
        if let Some(u) = r.compound.iter().find(|u| u.write == a) {
            updates.push(u.clone());
            continue;
        }
        if data[a] && !uniform(r, acc.matrix) {
            diags.error(
                acc.span,
                format!(
                    "two iterations of `{}` may write the same element of `{}`: its index comes from data\n{}",
                    r.name,
                    name(acc.matrix),
                    reduce_help(&name(acc.matrix))
                ),
            );
        }
    }
    // A matrix reduced into is touched by its updates alone, all with one operator.
    let mut bad = false;
    for u in &updates {
        let m = r.accesses[u.write].matrix;
        let ours = |a: AccessId| {
            updates
                .iter()
                .any(|v| (v.write == a || v.read == a) && v.op == u.op)
        };
        if let Some((_, acc)) = r
            .accesses
            .iter()
            .enumerate()
            .find(|(a, acc)| acc.matrix == m && !ours(*a))
        {
            bad = true;
            diags.error(
                acc.span,
                format!(
                    "`{}` is reduced into by `{}` in `{}` (iterations share its elements), so the iterator cannot {} it otherwise\nhelp: {}",
                    name(m),
                    u.op.text(),
                    r.name,
                    if acc.write { "write" } else { "read" },
                    if acc.write {
                        "update it with one operator only, or write it in another iterator"
                    } else {
                        "read it in a later iterator, once every update is done"
                    }
                ),
            );
            break;
        }
    }
    // A read at a place from data of what the region writes may see another iteration's store.
    for (a, acc) in r.accesses.iter().enumerate() {
        let written = r.accesses.iter().any(|w| w.write && w.matrix == acc.matrix);
        let own = updates.iter().any(|u| u.read == a);
        if !acc.write && data[a] && written && !own {
            diags.error(
                acc.span,
                format!(
                    "`{}` is read at a place from data in `{}`, which writes it: another iteration may have written that element, or not yet\nhelp: iterations run in parallel; write `{}` in one iterator and read it in a later one",
                    name(acc.matrix),
                    r.name,
                    name(acc.matrix)
                ),
            );
        }
    }
    if !bad {
        f.regions[rid].updates = updates;
    }
}
