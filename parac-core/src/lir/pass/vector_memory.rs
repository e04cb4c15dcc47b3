//! Vector loads and stores in a work-item's interior (a schedule's `vmem`), after
//! [`super::share_loads`]:
//! - the shared reads at the interior's head that differ only by a constant in their last
//!   index (a run of adjacent elements of a row) become one read of a ramp (`vloadN` in
//!   OpenCL C), each element a lane of it;
//! - the interior's stores of a matrix, where every one of them is proven inside, sits in the
//!   interior's blocks (not under a branch or a loop), has an index differing from the others'
//!   by the constant of its last index only, and the interior reads nothing of that matrix, are
//!   held (their values bound by `let`s in place) and written at the interior's
//!   end, adjacent elements as one store of a ramp (`vstoreN`); of two stores of one element
//!   the last is kept.
//!
//! A run is cut into vectors of 16, 8, 4, 2 lanes (OpenCL's widths, 3 left out), the widest
//! first. Every lane of a vector is an element the scalar code read or wrote, proven inside:
//! indices whose affine forms differ by `c` are `c` apart (see [`crate::lir::affine`]).

use super::gpu::map_interiors;
use super::share_loads::{Ix, ix};
use crate::lir::affine::Affine;
use crate::lir::visit::{expr_children, stmt_parts};
use crate::lir::{Buf, Expr, ExprId, ExprKind, Func, Stmt, StmtId};
use std::collections::{HashMap, HashSet};

/// Vector loads and stores in every region's interior.
pub fn run(func: &mut Func) {
    map_interiors(func, |func, t| {
        let t = loads(func, t);
        stores(func, t)
    });
}

/// The key of an access for runs: the buffer, every index but the last, the last one's
/// terms; and the last one's constant.
type RunKey = (Buf, Vec<Ix>, Vec<(crate::lir::affine::Leaf, i128)>, u32);

fn run_key(func: &Func, buf: Buf, index: &[ExprId]) -> Option<(RunKey, i128)> {
    let (last, rest) = index.split_last()?;
    let Ix::Form(Affine {
        terms,
        constant,
        bits,
    }) = ix(func, *last)
    else {
        return None;
    };
    let rest = rest.iter().map(|i| ix(func, *i)).collect();
    Some(((buf, rest, terms, bits), constant))
}

/// Runs of consecutive constants among `items` (`(key, constant, payload)`), each cut into
/// vectors of 16, 8, 4, 2 or 1 lanes: each vector's payloads in lane order.
fn vectors<T: Copy>(items: Vec<(RunKey, i128, T)>) -> Vec<Vec<T>> {
    // Items of one key, by constant; keys in order of first appearance.
    let mut groups: Vec<(RunKey, Vec<(i128, T)>)> = Vec::new();
    for (key, c, t) in items {
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push((c, t)),
            None => groups.push((key, vec![(c, t)])),
        }
    }
    let mut runs: Vec<Vec<T>> = Vec::new();
    for (_, mut g) in groups {
        g.sort_by_key(|x| x.0);
        let mut last = None;
        for (c, t) in g {
            match runs.last_mut() {
                Some(r) if last.is_some_and(|l: i128| l + 1 == c) => r.push(t),
                _ => runs.push(vec![t]),
            }
            last = Some(c);
        }
    }
    let mut out = Vec::new();
    for run in runs {
        let mut at = 0;
        while at < run.len() {
            let left = run.len() - at;
            let w = [16, 8, 4, 2, 1]
                .into_iter()
                .find(|w| *w <= left)
                .unwrap_or(1);
            out.push(run[at..at + w].to_vec());
            at += w;
        }
    }
    out
}

/// `index` with its last index a ramp of `lanes` lanes from it.
fn ramp(func: &mut Func, index: &[ExprId], lanes: u32) -> Vec<ExprId> {
    let mut index = index.to_vec();
    let last = index.last_mut().expect("an index");
    let ty = func.exprs[*last].ty;
    *last = func.exprs.push(Expr {
        kind: ExprKind::Ramp {
            base: *last,
            stride: 1,
        },
        ty,
        lanes,
        exact: false,
    });
    index
}

/// The head's shared reads as vector reads.
fn loads(func: &mut Func, t: StmtId) -> StmtId {
    let Stmt::Block(b) = func.stmts[t].clone() else {
        return t;
    };
    let mut items = Vec::new();
    let mut head = 0;
    for (k, s) in b.iter().enumerate() {
        let Stmt::Let(v, e) = func.stmts[*s] else {
            break;
        };
        let ExprKind::Load {
            buf,
            ref index,
            checked: false,
        } = func.exprs[e].kind
        else {
            break;
        };
        head = k + 1;
        if let Some((key, c)) = run_key(func, buf, &index.clone()) {
            items.push((key, c, (v, e)));
        }
    }
    let mut grouped = HashSet::new();
    let mut out = Vec::new();
    for vector in vectors(items) {
        if vector.len() < 2 {
            continue;
        }
        let (_, first) = vector[0];
        let ExprKind::Load { buf, ref index, .. } = func.exprs[first].kind else {
            continue;
        };
        let (lanes, ty) = (vector.len() as u32, func.exprs[first].ty);
        let index = ramp(func, &index.clone(), lanes);
        let load = func.exprs.push(Expr {
            kind: ExprKind::Load {
                buf,
                index,
                checked: false,
            },
            ty,
            lanes,
            exact: false,
        });
        let cv = func.vector_var("cv", ty, lanes);
        out.push(func.stmt(Stmt::Let(cv, load)));
        let whole = func.exprs.push(Expr {
            kind: ExprKind::Var(cv),
            ty,
            lanes,
            exact: false,
        });
        for (lane, (v, _)) in vector.into_iter().enumerate() {
            let x = func.expr(ExprKind::Extract(whole, lane as u32), ty);
            out.push(func.stmt(Stmt::Let(v, x)));
            grouped.insert(v);
        }
    }
    if out.is_empty() {
        return t;
    }
    for s in &b[..head] {
        if let Stmt::Let(v, _) = func.stmts[*s]
            && !grouped.contains(&v)
        {
            out.push(*s);
        }
    }
    out.extend_from_slice(&b[head..]);
    func.stmt(Stmt::Block(out))
}

/// Where a store of a matrix can be held.
enum Holdable {
    /// Every store of the matrix so far is unchecked, in the interior's blocks, of one scalar,
    /// at an index of one of these keys, any two of which are apart ([`apart`]): stores of
    /// one key differ only by the constant of their last index, so any two stores are of
    /// distinct elements, or of one element stored again, and holding them keeps their effect.
    Keys(Vec<RunKey>),
    /// Some store is not: none is held.
    No,
}

/// Whether keys `a` and `b` name disjoint elements: one buffer, the same terms of the last
/// index, and some other index whose forms differ by a constant other than 0 (two indices
/// inside a dimension below 2^31 then differ, see `lir::affine`).
fn apart(a: &RunKey, b: &RunKey) -> bool {
    a.0 == b.0
        && a.2 == b.2
        && a.3 == b.3
        && a.1.len() == b.1.len()
        && a.1.iter().zip(&b.1).any(|(x, y)| match (x, y) {
            (Ix::Form(x), Ix::Form(y)) => x.offset_from(y).is_some_and(|c| c != 0),
            _ => false,
        })
}

/// The buffers read below statement `s`, and whether each buffer stored to there can have its
/// stores held (`top`: `s` is reached through blocks only).
fn accesses(
    func: &Func,
    s: StmtId,
    top: bool,
    reads: &mut HashSet<Buf>,
    stores: &mut HashMap<Buf, Holdable>,
) {
    let stmt = &func.stmts[s];
    if let Stmt::Store {
        buf,
        index,
        checked,
        value,
    } = stmt
    {
        let key = run_key(func, *buf, index)
            .filter(|_| top && !*checked && func.exprs[*value].lanes == 1)
            .map(|(k, _)| k);
        let now = match (stores.remove(buf), key) {
            (None, Some(k)) => Holdable::Keys(vec![k]),
            (Some(Holdable::Keys(ks)), Some(n)) if ks.contains(&n) => Holdable::Keys(ks),
            (Some(Holdable::Keys(mut ks)), Some(n)) if ks.iter().all(|k| apart(k, &n)) => {
                ks.push(n);
                Holdable::Keys(ks)
            }
            _ => Holdable::No,
        };
        stores.insert(*buf, now);
    }
    let (es, ss) = stmt_parts(stmt);
    let mut stack = es;
    while let Some(e) = stack.pop() {
        if let ExprKind::Load { buf, .. } = func.exprs[e].kind {
            reads.insert(buf);
        }
        stack.extend(expr_children(&func.exprs[e].kind));
    }
    let top = top && matches!(stmt, Stmt::Block(_));
    for c in ss {
        accesses(func, c, top, reads, stores);
    }
}

/// Held stores: `(buf, index, held value)` in program order.
type Held = Vec<(Buf, Vec<ExprId>, ExprId)>;

/// The statements of `s`, its blocks spliced in (so that the held values' `let`s reach the
/// interior's end; every variable is bound once), the stores of `ok` matrices as `let`s and
/// in `held`.
fn hold(
    func: &mut Func,
    s: StmtId,
    ok: &dyn Fn(Buf) -> bool,
    held: &mut Held,
    out: &mut Vec<StmtId>,
) {
    match func.stmts[s].clone() {
        Stmt::Block(b) => {
            for c in b {
                hold(func, c, ok, held, out);
            }
        }
        Stmt::Store {
            buf, index, value, ..
        } if ok(buf) => {
            let ty = func.exprs[value].ty;
            let h = func.var("h", ty);
            let x = func.expr(ExprKind::Var(h), ty);
            held.push((buf, index, x));
            out.push(func.stmt(Stmt::Let(h, value)));
        }
        _ => out.push(s),
    }
}

/// The interior's stores held and written at its end as vectors.
fn stores(func: &mut Func, t: StmtId) -> StmtId {
    let (mut reads, mut stores) = (HashSet::new(), HashMap::new());
    accesses(func, t, true, &mut reads, &mut stores);
    let ok = |buf: Buf| {
        matches!(buf, Buf::Matrix(_))
            && !reads.contains(&buf)
            && matches!(stores.get(&buf), Some(Holdable::Keys(_)))
    };
    let (mut held, mut writes) = (Vec::new(), Vec::new());
    hold(func, t, &ok, &mut held, &mut writes);
    if held.is_empty() {
        return t;
    }
    // The last store of each element, in order.
    let mut items = Vec::new();
    let mut seen = HashSet::new();
    for (buf, index, x) in held.into_iter().rev() {
        let (key, c) = run_key(func, buf, &index).expect("a keyed store");
        if seen.insert((key.clone(), c)) {
            items.push((key, c, (buf, x, index)));
        }
    }
    items.reverse();
    let held: Vec<(Buf, ExprId, Vec<ExprId>)> = items.iter().map(|i| i.2.clone()).collect();
    let keyed = items
        .into_iter()
        .enumerate()
        .map(|(k, (key, c, _))| (key, c, k))
        .collect();
    for vector in vectors(keyed) {
        let (buf, x, index) = held[vector[0]].clone();
        let lanes = vector.len() as u32;
        let (index, value) = if lanes == 1 {
            (index, x)
        } else {
            let ty = func.exprs[x].ty;
            let xs = vector.iter().map(|i| held[*i].1).collect();
            let v = func.exprs.push(Expr {
                kind: ExprKind::Vector(xs),
                ty,
                lanes,
                exact: false,
            });
            (ramp(func, &index, lanes), v)
        };
        writes.push(func.stmt(Stmt::Store {
            buf,
            index,
            value,
            checked: false,
        }));
    }
    func.stmt(Stmt::Block(writes))
}
