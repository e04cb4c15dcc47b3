//! Time tiling on OpenCL (a plan's `Directive::TimeBand`, `time<K>_<C>x<R>`): one launch runs
//! `K` time steps of a `parac_repeat` whose step is stencil regions `S1 .. Sn`, each writing a
//! grid `hi` from the step's grids `gj` and the regions before it, then `parac_swap(gi, hi)`
//! (the legality of `super::candidate`, in rows and columns); it is a plan of `S1`, whose
//! kernels take every matrix of the step (`codegen::opencl::program::used`).
//! Each work-group owns a tile of `C` x `R` points of the last step's grids. It computes, step
//! after step and region after region, the points its tile depends on (its own widened by what
//! the later steps and regions read, clipped to the grid) into two `__local` buffers per grid
//! used in turn, a barrier after each, and the last step's own points into the `hi` (a lone
//! region stores them directly; several copy them from their last buffers); the executor then
//! swaps once, skips the step's other regions and the repeat's next `K - 1` steps (overlapped tiling: the widened points are computed by several
//! groups; the grid is read from memory once per `K` steps). The pass rewrites the function
//! as the executor runs it, `count / K` bands then the steps left, as the CPU's tiling does:
//! the kernel is the region's first statement, and the LIR's evaluator runs the whole (its
//! work-group loops one after the other, which the barriers between whole work-item loops
//! make exact).
//!
//! ```text
//! region S {
//!   allocate local A[R + 2 w][C + 2 w], B[..]        // w: the widest halo, step 1's
//!   for b1 in groups(1): for b0 in groups(0):
//!     let r0 = b1 R, c0 = b0 C, r1 = min(r0 + R, M), c1 = min(c0 + C, N)
//!     // step s < K: rows [max(r0 - lo_s, 0), min(r1 + hi_s, M)), columns alike
//!     for t1 in items(1): for t0 in items(0):
//!       for x in [rlo + t1, rhi) step 8: for y in [clo + t0, chi) step 16:
//!         A[x - rlo][y - clo] = S's point, g read from global memory (step 1) or from the
//!                               last buffer at [row - its rlo][column - its clo]
//!     barrier
//!     ..
//!     for t1, t0: for x in [r0 + t1, r1) step 8: for y in [c0 + t0, c1) step 16: h[x][y] = ..
//! }
//! ```
//!
//! Why every read of a buffer is inside it: a step's reads are at `x + a`, `|a| <= w_s`, the
//! widening of its points into the step before; a read outside the grid takes, through its
//! border rule's index map (no wrap), a point at most `|a|` inside, which the step before
//! computed, its range clipped at that edge too.

mod split;
pub use split::{run_split, split_tile};

use super::super::tiles::B;
use super::{Band, Corner, candidate, in_bands, needs, sources, step_point};
use crate::codegen::schedule::TIME_GROUP;
use crate::ir::{BinOp, Builtin, Function, RegionId, Scalar};
use crate::lir::{Buf, ExprId, ExprKind, Func, Memory, Stmt, StmtId, Temp};

/// Makes the function's body region `rid`'s time-band kernel of `steps` steps and tiles of
/// `tile` (columns, rows), where the repeat holding it can be tiled; whether it could.
pub fn run(func: &mut Func, f: &Function, rid: RegionId, (steps, tile): (u32, [u32; 2])) -> bool {
    let Some((top, at)) = repeat_of(func, rid) else {
        return false;
    };
    if steps < 2 || !fits(tile) {
        return false;
    }
    let Some(band) = candidate(func, f, &top, at, true) else {
        return false;
    };
    if band.stages[0].id != rid {
        return false;
    }
    let Some(region) = build(func, f, &band, steps as usize, tile.map(i128::from)) else {
        return false;
    };
    // The function as the executor runs it: `count / K` bands, each one launch and the swap,
    // then the steps left. The band is the region's first statement (its kernel).
    let mut step = vec![region];
    step.extend(band.swaps.iter().copied());
    let step = func.stmt(Stmt::Block(step));
    let mut top = top;
    top[at] = in_bands(func, top[at], step, i64::from(steps));
    func.stmts[func.body] = Stmt::Block(top);
    true
}

/// Whether tiles of `tile` (columns, rows) are whole work-groups of [`TIME_GROUP`].
fn fits(tile: [u32; 2]) -> bool {
    tile.iter()
        .zip(TIME_GROUP)
        .all(|(t, g)| *t >= g && t % g == 0)
}

/// The function's top-level statements and the place of the repeat whose step holds region
/// `rid`.
fn repeat_of(func: &Func, rid: RegionId) -> Option<(Vec<StmtId>, usize)> {
    let Stmt::Block(top) = func.stmts[func.body].clone() else {
        return None;
    };
    let holds = |s: StmtId| match func.stmts[s] {
        Stmt::Repeat { body, .. } => match &func.stmts[body] {
            Stmt::Block(b) => b
                .iter()
                .any(|r| matches!(func.stmts[*r], Stmt::Region { id, .. } if id == rid)),
            _ => false,
        },
        _ => false,
    };
    let at = top.iter().position(|s| holds(*s))?;
    Some((top, at))
}

/// Whether region `rid` of `f` has time-band plans: it is the first region of a repeat's
/// step, which can be tiled in rows and columns, and the repeat's `parac_schedule` is not `band = 1`.
pub fn bandable(f: &Function, rid: RegionId) -> bool {
    bands(f, rid).is_some()
}

/// The time steps per band region `rid`'s repeat asks for (`parac_schedule(band = K)`:
/// `Some(Some(K))`; `Some(None)`: the compiler's choice), where it has time bands.
pub fn bands(f: &Function, rid: RegionId) -> Option<Option<i64>> {
    // The first region of a time step (whose shape, regions then swaps, `candidate` checks).
    let (_, schedule) = f.time_step(rid)?;
    if schedule.band == Some(1) {
        return None;
    }
    let tiled = {
        let opts = crate::lir::Options {
            region: Some(rid),
            time_band: Some((2, [32, 32])),
            ..crate::lir::Options::gpu()
        };
        let lowered = crate::lir::lower(f, &opts);
        lowered
            .func
            .temps
            .iter()
            .any(|(_, t)| t.memory == Memory::Local)
    };
    tiled.then_some(schedule.band)
}

/// The band's region: its local buffers, its work-groups and their steps.
fn build(
    func: &mut Func,
    f: &Function,
    band: &Band,
    k: usize,
    [tc, tr]: [i128; 2],
) -> Option<StmtId> {
    let first = &band.stages[0];
    let (xlo, xhi) = super::row_loop(func, band)?;
    let zero_based = |e: ExprId| matches!(func.exprs[e].kind, ExprKind::Int(0));
    if !zero_based(xlo) || band.stages.iter().any(|st| !zero_based(st.p.columns.0)) {
        return None;
    }
    let (n, lone) = (band.stages.len(), band.stages.len() == 1);
    let need = needs(band, k);
    let grids: Vec<usize> = band.stages.iter().map(|st| st.g).collect();
    let mut b = B { func };
    // Per stage, two buffers of its widest points (a lone region's last step goes to `h`).
    let mut head = Vec::new();
    let mut temps: Vec<Vec<crate::lir::TempId>> = Vec::new();
    for (i, st) in band.stages.iter().enumerate() {
        let steps = if lone { k - 1 } else { k };
        let halo = (0..steps)
            .filter_map(|s| need[s][i])
            .map(|(a, c)| a + c)
            .max();
        let Some(halo) = halo else {
            temps.push(Vec::new());
            continue;
        };
        let elem = f.matrices[st.g].elem;
        let (h, w) = (b.int(tr + halo), b.int(tc + halo));
        let mut pair = Vec::new();
        for j in 0..steps.min(2) {
            let t = b.func.temps.push(Temp {
                name: format!("{}_step{j}", f.matrices[st.g].name),
                elem,
                memory: Memory::Local,
            });
            head.push(b.func.stmt(Stmt::Allocate {
                buf: Buf::Temp(t),
                elem,
                memory: Memory::Local,
                extents: vec![h, w],
            }));
            pair.push(t);
        }
        temps.push(pair);
    }
    // The group's tile.
    let i32t = Scalar::I32;
    let blocks = [b.func.var("group1", i32t), b.func.var("group0", i32t)];
    let mut group = Vec::new();
    let (m, cols) = (b.long(xhi), b.long(first.p.columns.1));
    let (b1, b0) = (b.var(blocks[0]), b.var(blocks[1]));
    let (b1, b0) = (b.long(b1), b.long(b0));
    let (tre, tce) = (b.int(tr), b.int(tc));
    let r0 = b.op(BinOp::Mul, b1, tre);
    let r0 = b.bind("r0", r0, &mut group);
    let c0 = b.op(BinOp::Mul, b0, tce);
    let c0 = b.bind("c0", c0, &mut group);
    let r1 = b.bound("r1", (r0, BinOp::Add, tre), (Builtin::Min, m), &mut group);
    let c1 = b.bound(
        "c1",
        (c0, BinOp::Add, tce),
        (Builtin::Min, cols),
        &mut group,
    );
    let zero = b.int(0);
    // Per step and stage: the first row and column of its buffer.
    let mut origin: Vec<Vec<Option<Corner>>> = vec![vec![None; n]; k];
    for s in 0..k {
        for (i, st) in band.stages.iter().enumerate() {
            let Some((lo, hi)) = need[s][i] else {
                continue;
            };
            let from = sources(band, (i, s), &temps, &origin)?;
            if lone && s + 1 == k {
                // The tile's own points into `h`.
                let (hm, checked) = (st.p.t, st.p.checked);
                let p = step_point(b.func, &st.p, (&from, &grids), |func, x, _, y| {
                    let (x64, y64) = (func.cast(x, Scalar::I64), func.cast(y, Scalar::I64));
                    (Buf::Matrix(hm), vec![x64, y64], checked)
                });
                group.push(b.cover((p.x, p.y, p.body), [r0, r1], [c0, c1]));
                continue;
            }
            let (loe, hie) = (b.int(lo), b.int(hi));
            let rlo = b.bound(
                "rlo",
                (r0, BinOp::Sub, loe),
                (Builtin::Max, zero),
                &mut group,
            );
            let rhi = b.bound("rhi", (r1, BinOp::Add, hie), (Builtin::Min, m), &mut group);
            let clo = b.bound(
                "clo",
                (c0, BinOp::Sub, loe),
                (Builtin::Max, zero),
                &mut group,
            );
            let chi = b.bound(
                "chi",
                (c1, BinOp::Add, hie),
                (Builtin::Min, cols),
                &mut group,
            );
            let temp = temps[i][s % 2];
            let p = step_point(b.func, &st.p, (&from, &grids), |func, x, _, y| {
                let x64 = func.cast(x, Scalar::I64);
                let row = func.binary(BinOp::Sub, x64, rlo, Scalar::I64);
                let y64 = func.cast(y, Scalar::I64);
                let col = func.binary(BinOp::Sub, y64, clo, Scalar::I64);
                (Buf::Temp(temp), vec![row, col], false)
            });
            let point = (p.x, p.y, p.body);
            group.push(b.cover(point, [rlo, rhi], [clo, chi]));
            group.push(b.func.stmt(Stmt::Barrier { global: false }));
            origin[s][i] = Some((rlo, Some(clo)));
        }
    }
    if !lone {
        // Each grid's tile from its last buffer.
        for (i, st) in band.stages.iter().enumerate() {
            let (rlo, Some(clo)) = origin[k - 1][i]? else {
                return None;
            };
            let (x, y) = (
                b.func.var("tile_row", b.func.vars[st.p.x].ty),
                b.func.var("tile_col", b.func.vars[st.p.y].ty),
            );
            let (xe, ye) = (b.var(x), b.var(y));
            let (x64, y64) = (b.long(xe), b.long(ye));
            let row = b.op(BinOp::Sub, x64, rlo);
            let col = b.op(BinOp::Sub, y64, clo);
            let elem = f.matrices[st.p.t].elem;
            let v = b.func.expr(
                ExprKind::Load {
                    buf: Buf::Temp(temps[i][(k - 1) % 2]),
                    index: vec![row, col],
                    checked: false,
                },
                elem,
            );
            let store = b.func.stmt(Stmt::Store {
                buf: Buf::Matrix(st.p.t),
                index: vec![x64, y64],
                value: v,
                checked: st.p.checked,
            });
            group.push(b.cover((x, y, store), [r0, r1], [c0, c1]));
        }
    }
    let body = b.func.stmt(Stmt::Block(group));
    let body = b.tiles(body, [(1, blocks[0], m, tr), (0, blocks[1], cols, tc)]);
    head.push(body);
    let body = b.func.stmt(Stmt::Block(head));
    Some(b.func.stmt(Stmt::Region {
        id: first.id,
        name: first.name.clone(),
        body,
    }))
}
