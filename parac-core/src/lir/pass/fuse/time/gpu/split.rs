//! Split tiling on OpenCL (a plan's `Directive::TimeSplit`, `tsplit<K>_<W>x<H>`): a band of `K`
//! time steps of a repeat that can be tiled in rows and columns (the legality of
//! [`super::candidate`] with `columns`) runs as four launches, the phases of split tiling in
//! both dimensions (the CPU's scheme, `super::super::split`, as a product): each work-group of
//! [`TIME_GROUP`] owns a tile of `W` x `H` points and, per position `p = s n + i` (step,
//! region), computes the points of that position whose row and column each lie in an *upright*
//! interval (`[v + l(p), v + H - l(p))` of its tile, `l(p) = (p + 1) r`, not shrinking at the
//! grid's edges) or an *inverted* one (`[b - l(p), b + l(p))` around the boundary `b` between two
//! tiles, its tile at `b - H/2`), in the phase's kind per dimension:
//!
//! 1. rows upright, columns upright (every tile),
//! 2. rows inverted, columns upright,
//! 3. rows upright, columns inverted,
//! 4. both inverted.
//!
//! At each position the four kinds partition the grid, so every point of every step is computed
//! once. Each works in place in the grids' two matrices in global memory (step `s` writes `h`
//! for even `s`, `g` for odd), a barrier on global memory after each position. Why it is exact:
//! a point of an inverted interval at position `p` reads, at `p - 1`, points within `l(p) + r`
//! of the boundary in that dimension: the ones outside its own earlier interval are in the
//! upright intervals at `p - 1` (computed by an earlier phase, or by this one's own group), and
//! no earlier phase overwrote them, since a later position `q` of that matrix shrinks the
//! upright intervals by `l(q) >= l(p) + r`; within a phase, groups write only their own
//! intervals, which the others' reads never reach (`W, H >= 2 (n K + 1) r`). `K` is odd: the
//! executor swaps once per band, which is what `K` steps' swaps leave. A phase's groups past the
//! last boundary of an inverted dimension compute nothing (the launches all have the tiles'
//! groups). Reads of the grids are unchecked where the band's legality proves them inside (rows
//! and columns near the point, or through a rule bordering both dimensions); stores as checked
//! as the step's own (a grid's two matrices have one shape).
//!
//! ```text
//! region S1 {                                      // phase (rows, columns): U U, I U, U I, I I
//!   for g1 in groups(1): for g0 in groups(0):
//!     let v = g1 H (+ H/2), u = g0 W (+ W/2)
//!     for s in 0..K: for i in regions:
//!       let tlo, thi = rows_at(s, i) over v; clo, chi = over u   // none past the last boundary
//!       for t1, t0 in items: for x in [tlo + t1, thi) step 8: for y in [clo + t0, chi) step 16:
//!         (s even ? h_i : g_i)[x][y] = S_i's point, the grids from their matrices of step s
//!       barrier (global)
//! }
//! ```

use super::super::super::tiles::B;
use super::super::row_loop;
use super::super::split::{Shape, rows_at, task_rows};
use super::{Band, candidate, fits, in_bands, repeat_of, step_point};
use crate::codegen::schedule::TIME_GROUP;
use crate::ir::{BinOp, Function, RegionId, Scalar};
use crate::lir::{Buf, ExprId, ExprKind, Func, Stmt, StmtId};
use std::collections::HashMap;

/// Makes the function's body region `rid`'s split band of `steps` steps (odd, at least 3) in
/// tiles of `tile` (columns, rows: multiples of [`TIME_GROUP`], at least what the split needs,
/// [`split_tile`]): its four phases, as the executor runs them; whether it could.
pub fn run_split(
    func: &mut Func,
    f: &Function,
    rid: RegionId,
    (steps, tile): (u32, [u32; 2]),
) -> bool {
    let Some((top, at)) = repeat_of(func, rid) else {
        return false;
    };
    if steps < 3 || steps % 2 == 0 || !fits(tile) {
        return false;
    }
    let Some(band) = candidate(func, f, &top, at, true) else {
        return false;
    };
    let k = i64::from(steps);
    let least = task_rows(Shape::of(&band), k, 1);
    if !splits(func, &band, rid) || tile.iter().any(|t| i64::from(*t) < least) {
        return false;
    }
    let tile = tile.map(i64::from);
    let mut step = Vec::new();
    for kinds in [(false, false), (true, false), (false, true), (true, true)] {
        match phase(func, &band, (k, tile), kinds) {
            Some(p) => step.push(p),
            None => return false,
        }
    }
    // As the executor runs it: `count / K` bands, each the four launches and one swap of each
    // grid, then the steps left.
    step.extend(band.swaps.iter().copied());
    let step = func.stmt(Stmt::Block(step));
    let mut top = top;
    top[at] = in_bands(func, top[at], step, k);
    func.stmts[func.body] = Stmt::Block(top);
    true
}

/// Whether `band` (of region `rid`'s repeat) has split bands on OpenCL: `rid` is its first
/// region, its grids are 2-D and its loops start at 0 (tiles from the grid's first point, as
/// the launch's groups).
fn splits(func: &Func, band: &Band, rid: RegionId) -> bool {
    let zero = |e: ExprId| matches!(func.exprs[e].kind, ExprKind::Int(0));
    let rows_from_zero = row_loop(func, band).is_some_and(|(lo, _)| zero(lo));
    band.stages[0].id == rid
        && rows_from_zero
        && band
            .stages
            .iter()
            .all(|s| s.p.mid.is_none() && zero(s.p.columns.0))
}

/// The least tile (columns, rows: multiples of [`TIME_GROUP`]) of a split band of `steps` steps
/// of region `rid`'s repeat, where it has split bands (not `parac_schedule(band = 1)` nor
/// `split = 0`).
pub fn split_tile(f: &Function, rid: RegionId, steps: u32) -> Option<[u32; 2]> {
    let (_, schedule) = f.time_step(rid)?;
    if schedule.band == Some(1) || schedule.split == Some(false) {
        return None;
    }
    // The function as the passes before time bands leave it.
    let opts = crate::lir::Options::gpu();
    let taps = (opts.unroll_taps, usize::MAX);
    let mut func = crate::lir::lower::function(f, opts.host_proofs, None, taps, true);
    crate::lir::pass::simplify::run(&mut func, f);
    let (top, at) = repeat_of(&func, rid)?;
    let band = candidate(&mut func, f, &top, at, true)?;
    if !splits(&func, &band, rid) {
        return None;
    }
    let least = task_rows(Shape::of(&band), i64::from(steps), 1);
    let tile = TIME_GROUP.map(|g| {
        let g = i64::from(g);
        u32::try_from((least + g - 1) / g * g).ok()
    });
    Some([tile[0]?, tile[1]?])
}

/// One phase of a split band: inverted rows and columns as `kinds` says (module documentation).
fn phase(
    func: &mut Func,
    band: &Band,
    (k, [tw, th]): (i64, [i64; 2]),
    (rows_inverted, cols_inverted): (bool, bool),
) -> Option<StmtId> {
    let first = &band.stages[0];
    let (_, xhi) = row_loop(func, band)?;
    let mut b = B { func };
    let i32t = Scalar::I32;
    let blocks = [b.func.var("group1", i32t), b.func.var("group0", i32t)];
    let mut group = Vec::new();
    let m = b.long(xhi);
    let n = b.long(first.p.columns.1);
    // The tile's first row and column, half a tile on along an inverted dimension (whose
    // boundary is then the middle of the phase's group).
    let mut corner = |b: &mut B, block: usize, size: i64, inverted: bool, name: &str| {
        let g = b.var(blocks[block]);
        let g = b.long(g);
        let se = b.int(i128::from(size));
        let mut v = b.op(BinOp::Mul, g, se);
        if inverted {
            let half = b.int(i128::from(size / 2));
            v = b.op(BinOp::Add, v, half);
        }
        b.bind(name, v, &mut group)
    };
    let v = corner(&mut b, 0, th, rows_inverted, "tv");
    let u = corner(&mut b, 1, tw, cols_inverted, "tu");
    let shape = Shape::of(band);
    // Every read of a grid is inside it (the band's legality: rows and columns near the point,
    // or through a border rule bordering both dimensions), whichever of its matrices it reads.
    let grids: Vec<usize> = band.stages.iter().flat_map(|s| [s.g, s.p.t]).collect();
    for s in 0..k {
        // Step `s` writes each grid's `h` for even `s`, its `g` for odd (new, old).
        let storage = |st: &super::super::Stage| match s % 2 {
            0 => (st.p.t, st.g),
            _ => (st.g, st.p.t),
        };
        let mut from = HashMap::new();
        for sj in &band.stages {
            let (new, old) = storage(sj);
            from.insert(sj.g, (Buf::Matrix(old), None, None));
            from.insert(sj.p.t, (Buf::Matrix(new), None, None));
        }
        for (i, st) in band.stages.iter().enumerate() {
            let se = b.int(i128::from(s));
            let mut bounds = Vec::new();
            for (at, extent, size, inverted) in
                [(v, m, th, rows_inverted), (u, n, tw, cols_inverted)]
            {
                let (mut lo, hi) = rows_at(b.func, shape, (se, i), (at, extent, size, inverted));
                if inverted {
                    // Past the last boundary: nothing.
                    let half = b.int(i128::from(size / 2));
                    let edge = b.op(BinOp::Add, at, half);
                    let inside = b.func.binary(BinOp::Lt, edge, extent, Scalar::Bool);
                    lo = b
                        .func
                        .expr(ExprKind::Select(inside, lo, extent), Scalar::I64);
                }
                bounds.push(super::super::bind_rows(b.func, (lo, hi), &mut group));
            }
            let (to, checked) = (storage(st).0, st.p.checked);
            let p = step_point(b.func, &st.p, (&from, &grids), |func, x, _, y| {
                let (x64, y64) = (func.cast(x, Scalar::I64), func.cast(y, Scalar::I64));
                (Buf::Matrix(to), vec![x64, y64], checked)
            });
            let [(rlo, rhi), (clo, chi)] = [bounds[0], bounds[1]];
            group.push(b.cover((p.x, p.y, p.body), [rlo, rhi], [clo, chi]));
            group.push(b.func.stmt(Stmt::Barrier { global: true }));
        }
    }
    let body = b.func.stmt(Stmt::Block(group));
    let (tw, th) = (i128::from(tw), i128::from(th));
    let body = b.tiles(body, [(0, blocks[1], n, tw), (1, blocks[0], m, th)]);
    Some(b.func.stmt(Stmt::Region {
        id: first.id,
        name: first.name.clone(),
        body,
    }))
}
