//! Time tiling on the CPU path (`Options::time_steps`): split tiling, the model's choice, in
//! [`split`]; here what both tilings share, and overlapped tiles (`parac_schedule(split = 0)`,
//! `Options::time_split`): a time step made of
//! regions `S1 .. Sn`, each computing a grid `hi` (from the step's grids `g1 .. gn` and the
//! new grids of the regions before it), then `parac_swap(gi, hi)` for each, runs in bands of
//! `K` steps. A band is one region whose parallel tasks each own `rows` rows of the result: a
//! task computes, step after step and region after region, the rows its result depends on
//! (its own, widened by what the later steps and regions read, clipped to the grid) into two
//! private buffers per grid used in turn, and the last step's own rows into the grids; the
//! swaps follow once. Each grid row is read from memory once per band instead of once per
//! step, the rest stays in the task's cache; the widened rows are computed more than once
//! (overlapped tiling).
//!
//! ```text
//! let n = max(count, 0)
//! repeat n / K times {
//!   region S1 {                             // (S2 .. Sn: their host proofs, before it)
//!     parallel_chunks for sx in [0, M) step rows {
//!       let x1 = min(sx + rows, M)
//!       allocate A1[..][N], B1[..][N], .. An, Bn
//!       for x in [max(sx - lo, 0), min(x1 + hi, M)) { S1's row x into A1 }   // step 1
//!       ..                                  // each step and region: its rows, its buffers
//!       chunk_rows for x in [sx, x1) { each hi's row x from its last buffer }
//!     }
//!   }
//!   swap g1 h1; ..
//! }
//! repeat n % K times { the step as it was }
//! ```
//!
//! With one region, its last step stores its rows into `h` directly. The model's bands run
//! where the task's buffers fit the cache the machine gives a task (`Builtin::CacheBytes`,
//! tested when the repeat runs, the grid's width known), the repeat as it was otherwise; a
//! program's `parac_schedule(band = ..)` always. A read of a grid becomes
//! a read of that grid's buffer at its row (a border rule's index map included) less the
//! buffer's first row; the rows each step and region computes come from the reads' row
//! offsets, last step first. Legality, where each band gives what `K` steps give:
//! - each `Si` is a row nest of `let`s and one store `hi[x][y]` (a producer, as fusion's),
//!   writes `hi` whole (`analysis::region_writes_whole`) and nothing else, and reads of the
//!   grids only the `gj` and the `hj` of the regions before it;
//! - no `Si` can fail once its host proof passed (as fusion's producer), nor holds a fold;
//! - every read of a grid has the row `x + a`, `|a| <= MAX_RADIUS`, seen through `let`s and a
//!   border rule's index map; the rules over the grids are shorthands that map a row outside to
//!   one at most `|a|` inside (constant, replicate, reflect, reflect101: not wrap), so that
//!   each row read was computed; the grids have one shape;
//! - each `gi` swaps with `hi` alone; `hi` is a local no later step reads and no output: after
//!   a band it holds the band's first grid, where step by step it would hold the last but one
//!   (nothing reads it before `Si` writes it again).

pub mod gpu;
pub mod split;

use super::{Producer, producer, reads::row_offsets, uses};
use crate::ir::{BinOp, BorderMode, Builtin, Function, RegionId, Scalar};
use crate::lir::VarId;
use crate::lir::visit::{Mutator, rebuild_expr};
use crate::lir::{Buf, ExprId, ExprKind, Func, LoopKind, Memory, Stmt, StmtId, Temp, TempId};
use std::collections::HashMap;

/// The widest radius (rows read each side) a time step may have to be tiled.
const MAX_RADIUS: i128 = 8;

/// Runs each tileable `parac_repeat` of the function's body in bands of `steps` time steps
/// (`modelled`: at most, the model's choice) in tasks of `rows` rows, split or overlapped as
/// `split` says (`None`: the model's choice), unless the program's `parac_schedule` says
/// otherwise; whether it tiled any.
pub fn run(
    func: &mut Func,
    f: &Function,
    (steps, rows, modelled, split): (i64, i64, bool, Option<bool>),
) -> bool {
    if steps < 1 || rows < 1 {
        return false;
    }
    let Stmt::Block(mut top) = func.stmts[func.body].clone() else {
        return false;
    };
    let mut tiled = false;
    let mut i = 0;
    while i < top.len() {
        let schedule = match func.stmts[top[i]] {
            Stmt::Repeat { schedule, .. } => schedule,
            _ => Default::default(),
        };
        if let Some(band) = candidate(func, f, &top, i, false) {
            // The program's `parac_schedule(band = .., rows = ..)` first, else the model.
            // Split tiling unless the program or the options say otherwise: no point is
            // computed twice.
            let split = schedule.split.or(split).unwrap_or(true);
            let r = schedule.rows.unwrap_or(rows);
            let (k, r) = match schedule.band {
                Some(k) => (k, r),
                None if modelled && split => {
                    let (k, model_rows) = split::model(steps, r, split::Shape::of(&band));
                    (k, schedule.rows.unwrap_or(model_rows))
                }
                None if modelled => (model(steps, r, &band), r),
                None => (steps, r),
            };
            // The model's bands run where their buffers fit the cache (the grid's width is
            // known when the repeat runs); a program's band always.
            let guard = modelled && schedule.band.is_none();
            let new = match (k >= 2, split) {
                (false, _) => None,
                (true, false) => tile(func, f, top[i], &band, (k, r), guard),
                (true, true) => split::tile(func, f, top[i], &band, (k, r), guard),
            };
            if let Some(new) = new {
                top[i] = new;
                tiled = true;
            }
        }
        i += 1;
    }
    func.stmts[func.body] = Stmt::Block(top);
    tiled
}

/// Overlapped tiles' time steps per band for tasks of `rows` rows: as many as keep the recomputed rows (`(K - 1)
/// radius` more per task and step, on average) within a quarter of the task's, at most `most`;
/// none (1) for a step whose work per byte says it is bound by its arithmetic, not by memory
/// (more than [`MAX_INTENSITY`]), where recomputing the halos costs more than the memory saved.
fn model(most: i64, rows: i64, band: &Band) -> i64 {
    if band.intensity > MAX_INTENSITY {
        return 1;
    }
    let k = 1 + i128::from(rows) / (4 * band.radius.max(1));
    k.clamp(2, i128::from(most.max(2))) as i64
}

/// The most work per byte (expression nodes of a point per byte of the grids it reads and
/// writes) of a step the model tiles. On the developers' 2-core machine (benches/time_steps.rs,
/// 4096², T = 64): heat-2D (f32, 26 nodes per byte) ran 2.1x faster in bands of 8 steps than
/// step by step; the game of life (u8, 156) 0.93x as fast.
const MAX_INTENSITY: usize = 64;

/// One region of a time step: its statement, its producer (writing grid `p.t`, its `h`) and the
/// grid `g` it swaps with.
struct Stage {
    region: StmtId,
    id: RegionId,
    name: String,
    p: Producer,
    g: usize,
}

/// A stage's reads of one grid: the stage whose grid it is, its `g` (the step's, `old`) or its
/// `h` (this step's new one), and the rows read, `x + lo ..= x + hi`.
#[derive(Clone, Copy)]
struct Read {
    grid: usize,
    old: bool,
    lo: i128,
    hi: i128,
}

/// A repeat that can be tiled.
struct Band {
    stages: Vec<Stage>,
    /// Per stage, its reads of the grids.
    reads: Vec<Vec<Read>>,
    /// The swaps, after the regions.
    swaps: Vec<StmtId>,
    /// The widest row offset read.
    radius: i128,
    /// Expression nodes of a step's point per byte it reads and writes of the grids.
    intensity: usize,
}

/// The repeat `top[at]` as a band, where it can be tiled; `columns`: in columns too (a
/// work-group's tile on OpenCL), the grids' reads bounded by one radius in both.
fn candidate(
    func: &mut Func,
    f: &Function,
    top: &[StmtId],
    at: usize,
    columns: bool,
) -> Option<Band> {
    let Stmt::Repeat { body, .. } = func.stmts[top[at]] else {
        return None;
    };
    let Stmt::Block(b) = func.stmts[body].clone() else {
        return None;
    };
    let n = b
        .iter()
        .take_while(|s| matches!(func.stmts[**s], Stmt::Region { .. }))
        .count();
    let (regions, swaps) = b.split_at(n);
    if n == 0
        || swaps.len() != n
        || !swaps
            .iter()
            .all(|s| matches!(func.stmts[*s], Stmt::Swap(..)))
    {
        return None;
    }
    let groups = f.swap_groups();
    let mut stages: Vec<Stage> = Vec::new();
    for r in regions {
        let Stmt::Region { id, ref name, body } = func.stmts[*r] else {
            return None;
        };
        let name = name.clone();
        let p = producer(func, f, body)?;
        // A nest of planes is tiled by planes on the CPU alone (`split`).
        if columns && p.mid.is_some() {
            return None;
        }
        let h = p.t;
        // The one swap of `h`, with a grid no region writes; the two swap with each other alone.
        let g = swaps.iter().find_map(|s| match func.stmts[*s] {
            Stmt::Swap(a, c) if a == h => Some(c),
            Stmt::Swap(a, c) if c == h => Some(a),
            _ => None,
        })?;
        if !groups
            .iter()
            .any(|grp| grp.as_slice() == [g.min(h), g.max(h)])
        {
            return None;
        }
        stages.push(Stage {
            region: *r,
            id,
            name,
            p,
            g,
        });
    }
    // One shape for every grid (a swap's two matrices have one type and shape: lowering
    // checks it); each `hi` (a local: a producer's) touched by no later step.
    let first = crate::ir::display::declared(f, stages[0].p.t);
    let hs: Vec<usize> = stages.iter().map(|s| s.p.t).collect();
    let gs: Vec<usize> = stages.iter().map(|s| s.g).collect();
    let later: Vec<super::Uses> = top[at + 1..].iter().map(|t| uses(func, f, *t)).collect();
    for s in &stages {
        let (g, h) = (s.g, s.p.t);
        if hs.contains(&g)
            || crate::ir::display::declared(f, h) != first
            || later.iter().any(|u| u.touches(h))
        {
            return None;
        }
    }
    let mut reads = Vec::new();
    let mut radius = 0;
    let mut nodes = 0;
    for (i, s) in stages.iter().enumerate() {
        // `Si` writes `hi` whole, alone, reads no grid of a later region, cannot fail, holds
        // no fold.
        let r = &f.regions[s.id];
        if !crate::analysis::region_writes_whole(f, s.id, s.p.t)
            || (0..r.accesses.len()).any(|k| crate::codegen::safety::guarded(f, r, k))
        {
            return None;
        }
        let Stmt::Region { body, .. } = func.stmts[s.region] else {
            return None;
        };
        let u = uses(func, f, body);
        if u.fold
            || u.divides
            || u.alone
            || !u.reduces.is_empty()
            || u.stores.iter().any(|m| *m != s.p.t)
        {
            return None;
        }
        if hs[i..].iter().any(|h| u.loads.contains(h)) {
            return None;
        }
        // The border rules over the grids: shorthands that keep a row outside near the edge.
        for id in &r.rules {
            let rule = &f.rules[*id];
            if !rule
                .entries
                .iter()
                .any(|e| hs.contains(&e.matrix) || gs.contains(&e.matrix))
            {
                continue;
            }
            let Some(sh) = &rule.shorthand else {
                return None;
            };
            let dims = 1 + columns as usize;
            let bordered = sh.widths.iter().take(dims).any(|w| w.is_some());
            if matches!(sh.mode, BorderMode::Wrap) && bordered {
                return None;
            }
            // OpenCL's bands read the grids unchecked: a rule must border both dimensions (a
            // read past an edge it leaves unbordered is the step's checked read, an error).
            if columns && sh.widths.iter().take(2).any(|w| w.is_none()) {
                return None;
            }
        }
        // Every read of a grid at a row `x + a`.
        let Stmt::For { body: xb, .. } = func.stmts[body] else {
            return None;
        };
        let mut mine = Vec::new();
        for (j, (old, m)) in gs
            .iter()
            .map(|g| (true, *g))
            .chain(hs.iter().map(|h| (false, *h)))
            .enumerate()
        {
            if !u.loads.contains(&m) {
                continue;
            }
            // Rows (and, for work-groups' tiles, columns) `x + a`: one bound for both.
            let mut offsets = Vec::new();
            for (dim, v) in [(0, s.p.x), (1, s.p.y)]
                .into_iter()
                .take(1 + columns as usize)
            {
                // On the CPU (rows alone), an index clamped to the grid is a replicated edge.
                let clamps = (!columns).then_some(f);
                row_offsets(
                    func,
                    xb,
                    (m, dim),
                    (v, clamps),
                    &mut HashMap::new(),
                    &mut offsets,
                );
            }
            let offsets: Vec<(i128, i128)> = offsets.into_iter().collect::<Option<_>>()?;
            if offsets.iter().any(|o| o.0 != 1) {
                return None;
            }
            let lo = offsets.iter().map(|o| o.1).min()?;
            let hi = offsets.iter().map(|o| o.1).max()?;
            radius = radius.max(lo.abs()).max(hi.abs());
            mine.push(Read {
                grid: j % stages.len(),
                old,
                lo,
                hi,
            });
        }
        reads.push(mine);
        // The step's work (expression nodes of a point, border chains included).
        for e in s.p.lets.iter().map(|(_, e)| *e).chain([s.p.value]) {
            crate::lir::visit::preorder(func, e, |_| {
                nodes += 1;
                true
            });
        }
    }
    if radius > MAX_RADIUS || !reads.iter().flatten().any(|r| r.old) {
        return None;
    }
    let bytes: usize = hs.iter().map(|h| 2 * f.matrices[*h].elem.bytes()).sum();
    Some(Band {
        stages,
        reads,
        swaps: swaps.to_vec(),
        radius,
        intensity: nodes / bytes.max(1),
    })
}

/// The rows each step `1 ..= k` (index `s - 1`) and stage computes, as how far above the
/// task's first and below its last (`None`: nothing reads them): the last step its own rows,
/// each earlier one what the later ones read of it, widened by each read's radius.
fn needs(band: &Band, k: usize) -> Vec<Vec<Option<(i128, i128)>>> {
    let n = band.stages.len();
    let mut need = vec![vec![None; n]; k];
    for s in (0..k).rev() {
        for i in (0..n).rev() {
            let mut want: Option<(i128, i128)> = (s + 1 == k).then_some((0, 0));
            // Widened by the read's radius on both sides: a row read outside the grid takes,
            // through its border rule's map, a row as far inside (a one-sided read of
            // `x - 2` at the first row reads row 2 under reflect101).
            let mut take = |reader: Option<(i128, i128)>, r: &Read| {
                if let Some((lo, hi)) = reader {
                    let w = r.lo.abs().max(r.hi.abs());
                    let (a, b) = (lo + w, hi + w);
                    want = Some(want.map_or((a, b), |(x, y)| (x.max(a), y.max(b))));
                }
            };
            // Later stages of the step read its new grid; the next step's stages its old one.
            for (reads, reader) in band.reads.iter().zip(&need[s]).skip(i + 1) {
                for r in reads.iter().filter(|r| r.grid == i && !r.old) {
                    take(*reader, r);
                }
            }
            if let Some(next) = need.get(s + 1) {
                for (reads, reader) in band.reads.iter().zip(next) {
                    for r in reads.iter().filter(|r| r.grid == i && r.old) {
                        take(*reader, r);
                    }
                }
            }
            need[s][i] = want;
        }
    }
    need
}

/// The repeat at `at` as a repeat of bands then one of the steps left (a block), where the
/// model's `guard` asks under a test of the buffers' size, the repeat as it was otherwise.
fn tile(
    func: &mut Func,
    f: &Function,
    at: StmtId,
    band: &Band,
    (k, rows): (i64, i64),
    guard: bool,
) -> Option<StmtId> {
    if !matches!(func.stmts[at], Stmt::Repeat { .. }) {
        return None;
    }
    let first = &band.stages[0];
    let Stmt::Region { body: rbody, .. } = func.stmts[first.region] else {
        return None;
    };
    let Stmt::For { hi: xhi, .. } = func.stmts[rbody] else {
        return None;
    };
    let (n, steps) = (band.stages.len(), k as usize);
    let need = needs(band, steps);
    let i64t = Scalar::I64;
    let xt = func.vars[first.p.x].ty;
    let int = |func: &mut Func, v: i128| func.int(v, i64t);
    let zero = int(func, 0);

    // The task: rows `sx .. x1` of the result.
    let sx = func.var("tx", xt);
    let sxe = func.expr(ExprKind::Var(sx), xt);
    let sx64 = func.cast(sxe, i64t);
    let m = func.cast(xhi, i64t);
    let task = int(func, i128::from(rows));
    let x1 = func.chunk_end(sx64, task, m);
    let x1v = func.var("tx1", i64t);
    let x1e = func.expr(ExprKind::Var(x1v), i64t);
    let mut chunk = vec![func.stmt(Stmt::Let(x1v, x1))];
    // Two buffers per grid, of the most rows a step computes of it.
    let mut temps: Vec<Vec<TempId>> = Vec::new();
    // Bytes of the task's buffers per column of the grids.
    let mut per_col: i128 = 0;
    for (i, s) in band.stages.iter().enumerate() {
        let g = s.g;
        let elem = f.matrices[g].elem;
        let most = need
            .iter()
            .filter_map(|st| st[i])
            .map(|(a, b)| a + b)
            .max()?;
        per_col += 2 * (i128::from(rows) + most) * elem.bytes() as i128;
        let height = int(func, i128::from(rows) + most);
        // Buffers of whole rows (planes of a 3-D grid).
        let mut extents = vec![height];
        for d in 1..f.matrices[g].dims.len() {
            extents.push(func.expr(ExprKind::Dim(g, d), i64t));
        }
        let pair = [0, 1].map(|j| {
            func.temps.push(Temp {
                name: format!("{}_step{j}", f.matrices[g].name),
                elem,
                memory: Memory::Private,
            })
        });
        for t in pair {
            chunk.push(func.stmt(Stmt::Allocate {
                buf: Buf::Temp(t),
                elem,
                memory: Memory::Private,
                extents: extents.clone(),
            }));
        }
        temps.push(pair.to_vec());
    }
    // Each step and stage: its rows into its buffer (the last step of a lone region: into `h`).
    let mut first_row: Vec<Vec<Option<Corner>>> = vec![vec![None; n]; steps];
    for s in 0..steps {
        for (i, st) in band.stages.iter().enumerate() {
            let Some((lo_off, hi_off)) = need[s][i] else {
                continue;
            };
            let from = sources(band, (i, s), &temps, &first_row)?;
            if n == 1 && s + 1 == steps {
                // The task's own rows into `h`.
                let (h, checked) = (st.p.t, st.p.checked);
                let pt = step_point(func, &st.p, (&from, &[]), |func, x, mid, y| {
                    let x64 = func.cast(x, i64t);
                    (Buf::Matrix(h), point_index(func, x64, mid, y), checked)
                });
                let (x, inner) = (pt.x, row_loops(func, &st.p, &pt));
                let x1x = func.cast(x1e, xt);
                chunk.push(func.for_loop(x, (sxe, x1x, 1), LoopKind::ChunkRows, inner));
                continue;
            }
            let (a, b) = (int(func, lo_off), int(func, hi_off));
            let lo = func.binary(BinOp::Sub, sx64, a, i64t);
            let lo = func.expr(ExprKind::Call(Builtin::Max, vec![lo, zero]), i64t);
            let hi = func.binary(BinOp::Add, x1e, b, i64t);
            let hi = func.expr(ExprKind::Call(Builtin::Min, vec![hi, m]), i64t);
            let (lo, hi) = bind_rows(func, (lo, hi), &mut chunk);
            let temp = temps[i][s % 2];
            chunk.push(points_into(func, &st.p, &from, (temp, lo), (lo, hi)));
            first_row[s][i] = Some((lo, None));
        }
    }
    if n > 1 {
        // The task's own rows of each grid, from its last buffer.
        let x = func.var("tx_row", xt);
        let xe = func.expr(ExprKind::Var(x), xt);
        let x64 = func.cast(xe, i64t);
        let mut rows_out = Vec::new();
        for (i, st) in band.stages.iter().enumerate() {
            let (base, _) = first_row[steps - 1][i]?;
            let y = func.var("ty", func.vars[st.p.y].ty);
            let ye = func.expr(ExprKind::Var(y), func.vars[y].ty);
            let mid = st.p.mid.map(|(v, _)| func.var("tm", func.vars[v].ty));
            let me = mid.map(|v| func.expr(ExprKind::Var(v), func.vars[v].ty));
            let row = func.binary(BinOp::Sub, x64, base, i64t);
            let elem = f.matrices[st.p.t].elem;
            let index = point_index(func, row, me, ye);
            let v = func.expr(
                ExprKind::Load {
                    buf: Buf::Temp(temps[i][(steps - 1) % 2]),
                    index,
                    checked: false,
                },
                elem,
            );
            let index = point_index(func, x64, me, ye);
            let store = func.stmt(Stmt::Store {
                buf: Buf::Matrix(st.p.t),
                index,
                value: v,
                checked: st.p.checked,
            });
            let pt = Point {
                x,
                mid,
                y,
                body: store,
            };
            rows_out.push(row_loops(func, &st.p, &pt));
        }
        let inner = func.stmt(Stmt::Block(rows_out));
        let x1x = func.cast(x1e, xt);
        chunk.push(func.for_loop(x, (sxe, x1x, 1), LoopKind::ChunkRows, inner));
    }
    let chunk = func.stmt(Stmt::Block(chunk));
    let x0 = func.int(0, xt);
    let tasks = func.for_loop(sx, (x0, xhi, rows), LoopKind::ParallelChunks(None), chunk);
    let region = func.stmt(Stmt::Region {
        id: first.id,
        name: first.name.clone(),
        body: tasks,
    });
    let guard = guard.then_some(per_col);
    Some(banded(
        func,
        f,
        (at, band),
        (vec![region], true),
        (k, guard),
    ))
}

/// Repeat `at` in bands of `k` steps ([`in_bands`]), a band being every region's host proof in
/// order (where there are several; the first's again with the band's regions), the band's
/// `regions`, and the swaps where `swaps`; where `guard` gives a task's bytes per element of a
/// row of the first grid, under the cache test ([`fits_cache`]).
fn banded(
    func: &mut Func,
    f: &Function,
    (at, band): (StmtId, &Band),
    (regions, swaps): (Vec<StmtId>, bool),
    (k, guard): (i64, Option<i128>),
) -> StmtId {
    let mut step = Vec::new();
    if band.stages.len() > 1 {
        for st in &band.stages {
            let empty = func.stmt(Stmt::Block(Vec::new()));
            step.push(func.stmt(Stmt::Region {
                id: st.id,
                name: st.name.clone(),
                body: empty,
            }));
        }
    }
    step.extend(regions);
    if swaps {
        step.extend(band.swaps.iter().copied());
    }
    let step = func.stmt(Stmt::Block(step));
    let tiled = in_bands(func, at, step, k);
    match guard {
        Some(per_col) => fits_cache(func, f, (band.stages[0].g, per_col), tiled, at),
        None => tiled,
    }
}

/// `if dim(g, 1) * .. * per_col <= cache_bytes() { tiled } else { at }`: a band's tiles where
/// a task's buffers (`per_col` bytes per element of a row, or plane, of grid `g`) fit the cache
/// the machine gives a task (`Builtin::CacheBytes`: heat-2D 4096² f32 holds 1.1 MB in a split
/// task, 1.5 MB in an overlapped one, FDTD-2D 4.3 and 4.5 MB, all faster tiled), else step by
/// step.
fn fits_cache(
    func: &mut Func,
    f: &Function,
    (g, per_col): (usize, i128),
    tiled: StmtId,
    at: StmtId,
) -> StmtId {
    let i64t = Scalar::I64;
    let mut bytes = func.int(per_col, i64t);
    for k in 1..f.matrices[g].dims.len() {
        let d = func.expr(ExprKind::Dim(g, k), i64t);
        bytes = func.binary(BinOp::Mul, d, bytes, i64t);
    }
    let most = func.expr(ExprKind::Call(Builtin::CacheBytes, Vec::new()), i64t);
    let fits = func.binary(BinOp::Le, bytes, most, Scalar::Bool);
    func.stmt(Stmt::If(fits, tiled, Some(at)))
}

/// A buffer's first row and, where it holds a work-group's tile (OpenCL), first column.
type Corner = (ExprId, Option<ExprId>);

/// Where stage `i`'s reads of each grid come from at step `s` (from 0): the buffer in which the
/// step that computed the grid left it, `bufs[grid][step % 2]`, whose corner is
/// `corners[step][grid]`; step 1's reads of the step's old grids are from memory (not in the
/// map). `None` where a grid read was not computed.
fn sources(
    band: &Band,
    (i, s): (usize, usize),
    bufs: &[Vec<TempId>],
    corners: &[Vec<Option<Corner>>],
) -> Option<HashMap<usize, Origin>> {
    let mut from = HashMap::new();
    for r in &band.reads[i] {
        let grid = &band.stages[r.grid];
        let (m, at) = match (r.old, s) {
            (true, 0) => continue,
            (true, _) => (grid.g, s - 1),
            (false, _) => (grid.p.t, s),
        };
        let (row, col) = corners[at][r.grid]?;
        from.insert(m, (Buf::Temp(bufs[r.grid][at % 2]), Some(row), col));
    }
    Some(from)
}

/// The first and last bounds (`lo`, `hi`) of the row loop of `band`'s first region.
fn row_loop(func: &Func, band: &Band) -> Option<(ExprId, ExprId)> {
    let Stmt::Region { body, .. } = func.stmts[band.stages[0].region] else {
        return None;
    };
    match func.stmts[body] {
        Stmt::For { lo, hi, .. } => Some((lo, hi)),
        _ => None,
    }
}

/// Repeat `at` (`count` steps of `body`) as `count / k` runs of `band` (its `k` steps at once,
/// swaps included), then `count % k` steps.
fn in_bands(func: &mut Func, at: StmtId, band: StmtId, k: i64) -> StmtId {
    let Stmt::Repeat { count, body, .. } = func.stmts[at] else {
        unreachable!("a repeat")
    };
    let i64t = Scalar::I64;
    let zero = func.int(0, i64t);
    let n = func.cast(count, i64t);
    let n = func.expr(ExprKind::Call(Builtin::Max, vec![n, zero]), i64t);
    let ke = func.int(i128::from(k), i64t);
    let bands = func.binary(BinOp::Div, n, ke, i64t);
    let rest = func.binary(BinOp::Rem, n, ke, i64t);
    let tiled = vec![
        func.stmt(Stmt::Repeat {
            count: bands,
            body: band,
            schedule: Default::default(),
        }),
        func.stmt(Stmt::Repeat {
            count: rest,
            body,
            schedule: Default::default(),
        }),
    ];
    func.stmt(Stmt::Block(tiled))
}

/// One step's point: the producer's `let`s and value with fresh variables, its reads of each
/// grid in `from` from that grid's buffer (its first row given), and its store `at` the new
/// row and column variables (and, for a nest of planes, the row's between); the variables and
/// the point's block. `inside`: grids whose other reads are lowered unchecked (each proven
/// inside by the host, or a border rule's index map: the band's legality).
pub(super) fn step_point(
    func: &mut Func,
    p: &Producer,
    (from, inside): (&HashMap<usize, Origin>, &[usize]),
    at: impl FnOnce(&mut Func, ExprId, Option<ExprId>, ExprId) -> (Buf, Vec<ExprId>, bool),
) -> Point {
    let mut copy = Copy::new(from, inside);
    let x = copy.fresh(func, p.x);
    let mid = p.mid.map(|(v, _)| copy.fresh(func, v));
    let y = copy.fresh(func, p.y);
    let mut point = Vec::new();
    for (v, e) in &p.lets {
        let e = copy.mutate_expr(func, *e);
        let w = copy.fresh(func, *v);
        point.push(func.stmt(Stmt::Let(w, e)));
    }
    let value = copy.mutate_expr(func, p.value);
    let (xe, ye) = (
        func.expr(ExprKind::Var(x), func.vars[x].ty),
        func.expr(ExprKind::Var(y), func.vars[y].ty),
    );
    let me = mid.map(|v| func.expr(ExprKind::Var(v), func.vars[v].ty));
    let (buf, index, checked) = at(func, xe, me, ye);
    point.push(func.stmt(Stmt::Store {
        buf,
        index,
        value,
        checked,
    }));
    Point {
        x,
        mid,
        y,
        body: func.stmt(Stmt::Block(point)),
    }
}

/// `let lo = ..; let hi = ..` (the rows a stage computes, `i64`s) into `out`: the variables.
fn bind_rows(
    func: &mut Func,
    (lo, hi): (ExprId, ExprId),
    out: &mut Vec<StmtId>,
) -> (ExprId, ExprId) {
    let i64t = Scalar::I64;
    let (lov, hiv) = (func.var("tlo", i64t), func.var("thi", i64t));
    out.push(func.stmt(Stmt::Let(lov, lo)));
    out.push(func.stmt(Stmt::Let(hiv, hi)));
    (
        func.expr(ExprKind::Var(lov), i64t),
        func.expr(ExprKind::Var(hiv), i64t),
    )
}

/// Rows `lo .. hi` of a stage's points (its grids read as `from` says) into `temp`, row `x` at
/// `x - base`: the loop.
fn points_into(
    func: &mut Func,
    p: &Producer,
    from: &HashMap<usize, Origin>,
    (temp, base): (TempId, ExprId),
    (lo, hi): (ExprId, ExprId),
) -> StmtId {
    let i64t = Scalar::I64;
    let xt = func.vars[p.x].ty;
    let pt = step_point(func, p, (from, &[]), |func, x, mid, y| {
        let x64 = func.cast(x, i64t);
        let row = func.binary(BinOp::Sub, x64, base, i64t);
        (Buf::Temp(temp), point_index(func, row, mid, y), false)
    });
    let inner = row_loops(func, p, &pt);
    let (lo, hi) = (func.cast(lo, xt), func.cast(hi, xt));
    func.for_loop(pt.x, (lo, hi, 1), LoopKind::Serial, inner)
}

/// A point's index: its first (`row`, an `i64`), its row in a nest of planes (`mid`), its
/// column, in `i64`s.
fn point_index(func: &mut Func, row: ExprId, mid: Option<ExprId>, y: ExprId) -> Vec<ExprId> {
    let mid = mid.map(|m| func.cast(m, Scalar::I64));
    let y = func.cast(y, Scalar::I64);
    [row].into_iter().chain(mid).chain([y]).collect()
}

/// The loops of a point's row below its first index: its columns and, in a nest of planes, the
/// plane's rows around them (the producer's bounds).
fn row_loops(func: &mut Func, p: &Producer, pt: &Point) -> StmtId {
    let (ylo, yhi) = p.columns;
    let mut inner = func.for_loop(pt.y, (ylo, yhi, 1), LoopKind::Serial, pt.body);
    if let (Some(v), Some((_, (lo, hi)))) = (pt.mid, p.mid) {
        inner = func.for_loop(v, (lo, hi, 1), LoopKind::Serial, inner);
    }
    inner
}

/// A step's point ([`step_point`]): its plane or row variable, its row variable in a nest of
/// planes, its column variable, its block.
pub(super) struct Point {
    pub(super) x: VarId,
    pub(super) mid: Option<VarId>,
    pub(super) y: VarId,
    pub(super) body: StmtId,
}

/// Where a grid's values of a step are: its buffer, the buffer's first row and, where it holds
/// a tile's columns (OpenCL), its first column.
pub(super) type Origin = (Buf, Option<ExprId>, Option<ExprId>);

/// A copy of a step's expressions: variables renamed, reads of the grids in `from` from their
/// buffers.
pub(super) struct Copy<'a> {
    from: &'a HashMap<usize, Origin>,
    /// Grids whose other reads are proven inside (`checked: false`).
    inside: &'a [usize],
    vars: HashMap<VarId, ExprId>,
    memo: HashMap<ExprId, ExprId>,
}

impl<'a> Copy<'a> {
    /// A copy reading the grids in `from` from their buffers, the other reads of the grids in
    /// `inside` unchecked.
    pub(super) fn new(from: &'a HashMap<usize, Origin>, inside: &'a [usize]) -> Copy<'a> {
        Copy {
            from,
            inside,
            vars: HashMap::new(),
            memo: HashMap::new(),
        }
    }

    /// `v` stands for `e` in this copy.
    pub(super) fn bind(&mut self, v: VarId, e: ExprId) {
        self.vars.insert(v, e);
        self.memo.clear();
    }

    /// A new variable standing for `v` in this copy.
    pub(super) fn fresh(&mut self, func: &mut Func, v: VarId) -> VarId {
        let (name, ty) = (func.vars[v].name.clone(), func.vars[v].ty);
        let w = func.var(&name, ty);
        let we = func.expr(ExprKind::Var(w), ty);
        self.vars.insert(v, we);
        self.memo.clear();
        w
    }
}

impl Mutator for Copy<'_> {
    fn mutate_expr(&mut self, func: &mut Func, e: ExprId) -> ExprId {
        if let Some(r) = self.memo.get(&e) {
            return *r;
        }
        let r = match func.exprs[e].kind.clone() {
            ExprKind::Var(v) if self.vars.contains_key(&v) => self.vars[&v],
            ExprKind::Let(v, a, b) => {
                let a = self.mutate_expr(func, a);
                let w = self.fresh(func, v);
                let b = self.mutate_expr(func, b);
                func.expr(ExprKind::Let(w, a, b), func.exprs[e].ty)
            }
            ExprKind::Load {
                buf: Buf::Matrix(m),
                index,
                checked,
            } if index.len() >= 2 && self.from.contains_key(&m) => {
                // The first index less the buffer's first row (plane), the last less its first
                // column, where it has them. A temporary's reads are inside it; a matrix's as
                // proven as the read it stands for.
                let (to, first, first_col) = self.from[&m];
                let mut at: Vec<ExprId> = Vec::new();
                for (k, i) in index.iter().enumerate() {
                    let i = self.mutate_expr(func, *i);
                    let mut i64e = func.cast(i, Scalar::I64);
                    let from = match k {
                        0 => first,
                        _ if k + 1 == index.len() => first_col,
                        _ => None,
                    };
                    if let Some(from) = from {
                        i64e = func.binary(BinOp::Sub, i64e, from, Scalar::I64);
                    }
                    at.push(i64e);
                }
                let checked = match to {
                    Buf::Matrix(_) => checked && !self.inside.contains(&m),
                    _ => false,
                };
                func.expr(
                    ExprKind::Load {
                        buf: to,
                        index: at,
                        checked,
                    },
                    func.exprs[e].ty,
                )
            }
            ExprKind::Load {
                buf: Buf::Matrix(m),
                index,
                checked: true,
            } if self.inside.contains(&m) => {
                let index = index.iter().map(|i| self.mutate_expr(func, *i)).collect();
                func.expr(
                    ExprKind::Load {
                        buf: Buf::Matrix(m),
                        index,
                        checked: false,
                    },
                    func.exprs[e].ty,
                )
            }
            _ => rebuild_expr(self, func, e),
        };
        self.memo.insert(e, r);
        r
    }
}
