//! The optimization model (paper Algorithm 1): from a region's features, the ranked candidate
//! plans ([`Schedule`]s) the OpenCL back end emits a kernel for. The runtime prunes them by the
//! device's limits and, unless told otherwise, times them and keeps the fastest.
//!
//! Every transform is a [`Directive`] of a [`Schedule`], so a test or a bench can force one alone:
//! - `h<W>` / `v<V>`: horizontal / vertical vector parallelism, each work-item computes `W`
//!   adjacent columns (`V` adjacent rows); a tail path handles the last, partial strip;
//! - `unroll`: constant-size windows (convolutions, block reductions) are unrolled, constant
//!   filters folded into the code;
//! - `cse`: loads of the same element by several lanes (data reuse) are done once per
//!   work-item, hoisted before the lanes (and loads common to both branches of an `if` before
//!   it);
//! - `vmem`: those loads, where adjacent in a row, become `vloadN`, and the lanes' stores one
//!   `vstoreN` (rows are padded to the cache line by the runtime);
//! - `peep`: peephole rewrites proven by value ranges (`>>` for power-of-two divisions of
//!   non-negative values, `mul24`/`mad24`, `clamp`, `abs`);
//! - `m24`: `mul24`/`mad24` where both factors are proven to fit 24 bits and the result 32;
//! - `lds<X>x<Y>`: a work-group of `X` by `Y` work-items loads the tile it reads of each
//!   reused matrix into local memory, cooperatively and coalesced, behind a barrier;
//! - `tree<L>`: a global reduction done per work-item serially, then as a tree in local memory
//!   over a work-group of `L`, then across groups on the host;
//! - `split`: loop partitioning for border rules. The kernel covers only the interior box (the
//!   iterations whose bordered reads are all inside their matrices, and whole work-items of
//!   lanes), with no check and no border path; the baseline kernel covers the strips around
//!   it. The box is computed on the host from the subscripts' affine forms
//!   ([`super::opencl::bounds`]).

use crate::ir::*;
use crate::lir::pass::fuse::gpu::Fused;

pub use super::schedule::{Directive, Schedule};

/// The labels of every candidate of every region of `f`, in first-seen order (`baseline`
/// first): what `PlanPolicy::Force` can name for this function.
pub fn labels(f: &Function) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for rid in 0..f.regions.len() {
        for v in candidates(f, rid) {
            let l = v.label();
            if !out.contains(&l) {
                out.push(l);
            }
        }
    }
    out
}

/// What the model needs to know of a region, read from its features ([`Region::features`],
/// the feature analysis of Algorithm 2): whether neighbouring work-items share data along the
/// horizontal and along the vertical slot, and whether the region reads a matrix it writes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reuse {
    /// Some matrix read (not a constant table) is shared by neighbouring work-items along the
    /// horizontal slot.
    pub horizontal: bool,
    /// The same along the vertical slot.
    pub vertical: bool,
    /// Some block (window) is read: unrolling applies.
    pub windows: bool,
    /// The region reads a matrix it writes: only the baseline keeps its order of effects.
    pub self_read: bool,
    /// The narrowest element size read or written, in bytes.
    pub min_elem: usize,
    /// Two parallel dimensions (`ParDim` = 2).
    pub two_d: bool,
    /// The most elements neighbouring work-items along the vertical slot share (0: none).
    pub v_reuse: u32,
    /// Neighbouring work-items along the horizontal slot touch neighbouring elements of every
    /// matrix (each access affine, its column `1 * var + c` in the horizontal slot's variable,
    /// or the same column for all): what a driver that vectorizes across work-items turns
    /// into vector loads and stores. False for strided accesses (downsampling), gathers
    /// (upsampling) and transposes.
    pub contiguous: bool,
}

/// The reuse facts of region `rid`.
pub fn reuse(f: &Function, rid: RegionId) -> Reuse {
    let r = &f.regions[rid];
    let ft = &r.features;
    let reads = || ft.matrices.iter().filter(|u| !u.def && !u.constant);
    Reuse {
        horizontal: reads().any(|u| u.h_reuse_len > 0),
        vertical: reads().any(|u| u.v_reuse_len > 0),
        windows: r
            .accesses
            .iter()
            .filter(|a| !a.write && !matches!(f.matrices[a.matrix].kind, MatrixKind::Const(_)))
            .any(|a| a.subs.iter().any(|s| matches!(s, Sub::Window { .. }))),
        self_read: reads().any(|u| ft.matrices.iter().any(|w| w.def && w.matrix == u.matrix)),
        min_elem: ft
            .matrices
            .iter()
            .filter(|u| !u.constant)
            .map(|u| f.matrices[u.matrix].elem.bytes())
            .min()
            .unwrap_or(8),
        two_d: ft.par_dim == 2,
        v_reuse: reads().map(|u| u.v_reuse_len).max().unwrap_or(0),
        contiguous: ft.matrices.iter().filter(|u| !u.constant).all(|u| {
            u.affine
                && u.col().is_some_and(|c| match c.var {
                    Some(v) => Some(v) == ft.h_slot && c.coef == 1,
                    None => true,
                })
        }),
    }
}

/// The kind of device a ranking is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A GPU: work-items are SIMD lanes of the hardware; a work-group shares local memory.
    Gpu,
    /// A CPU device (PoCL): a work-group runs as a loop over its work-items, which the
    /// driver's compiler vectorizes itself (PoCL's work-group vectorizer packs 16 work-items
    /// into one AVX-512 vector of 32-bit lanes); barriers split that loop.
    Cpu,
}

/// The model's order of region `rid`'s candidates `cands` (as [`candidates`] gives them) on
/// `target`: indices into `cands`, best first, every candidate once (the baseline included).
///
/// On a GPU it is the order of [`candidates`] (Algorithm 1's ranking), the baseline last. On a
/// CPU device the model corrects Algorithm 1 where the device differs, as the search's records
/// on PoCL show (`docs/benchmarks.md`, "Every call fast": the searched choice of 18 iterator
/// regions of ten pipelines):
/// - a large window that slides: its plan first, 32x32 tiles where they apply;
/// - otherwise Algorithm 1's wider horizontal lanes, `horizontal` with twice its lanes (16 of
///   bytes, 8 of wider elements), with every transform that comes with them: the searched
///   choice had horizontal lanes in every one of the 18 regions, 16 or 8 of them in 15, and the
///   scalar kernel, which an earlier ranking put first on contiguous accesses, was 2-7x slower
///   in each (sobel 29.3 ms against 6.0, sharpen's final stage 77 against 10.8, unsharp's
///   horizontal pass 61.9 against 15.6); Algorithm 1's vertical lanes for vertical-only reuse
///   too (unsharp's 7-row pass: v4 16.3 ms, h4 5.4);
/// - a tree reduction runs its work-group as a loop with barriers, slower than the plain
///   per-row reduction (13x for sharpen's sum), so trees come after the baseline;
/// - time bands come last (a work-item's loops run one after the other).
pub fn ranking(f: &Function, rid: RegionId, cands: &[Schedule], target: Target) -> Vec<usize> {
    let n = cands.len();
    let gpu: Vec<usize> = (1..n).chain(0..n.min(1)).collect();
    if target == Target::Gpu {
        // A work-item's fused tile (kilobytes of private memory, groups of one) is a CPU
        // device's plan: last.
        let items = |i: &usize| cands[*i].fuse_item_tile().is_some();
        let (late, rest): (Vec<usize>, Vec<usize>) = gpu.into_iter().partition(items);
        return rest.into_iter().chain(late).collect();
    }
    let mut first: Vec<usize> = Vec::new();
    match f.regions[rid].kind {
        RegionKind::Reduction { .. } => first.push(0),
        RegionKind::Iterator => {
            let u = reuse(f, rid);
            // A large window that slides: its plan first on a CPU device too, 32x32 tiles
            // where they apply (PoCL, 3840x2160 u8; docs/benchmarks.md).
            let down = slide(32, 32);
            first.extend(
                (cands.iter().position(|c| *c == down))
                    .or_else(|| cands.iter().position(Schedule::slide)),
            );
            if !u.self_read {
                let split = super::opencl::bounds(f, rid).is_some();
                let wide = horizontal(&u) * 2;
                first.extend(cands.iter().position(|c| *c == full(&u, split, wide, 1)));
            }
        }
    }
    // Time bands and fused plans last: a CPU device runs a work-item's loops one after the
    // other, and on PoCL (heat-2D 4096², T = 64) every band was 4-5x slower than one step per
    // launch; fused work-group tiles 7-25x slower than blur's two kernels, inlined ones level
    // with them, a work-item's tiles faster for blur and level for unsharp (docs/benchmarks.md,
    // "Fusion on OpenCL", "Fused work-item tiles on OpenCL"): the search weighs them.
    let band = |i: &usize| {
        cands[*i].time_band().is_some() || cands[*i].time_split().is_some() || cands[*i].fuses()
    };
    let rest = gpu.into_iter().filter(|i| !first.contains(i));
    let (late, rest): (Vec<usize>, Vec<usize>) = rest.partition(band);
    first.into_iter().chain(rest).chain(late).collect()
}

/// Algorithm 1's horizontal lanes for region facts `u`: 8 of bytes, 4 of wider elements (a
/// narrow element packs more lanes into one vector access).
fn horizontal(u: &Reuse) -> u32 {
    if u.min_elem == 1 { 8 } else { 4 }
}

/// `cols` x `rows` lanes with every transform that comes with them: windows unrolled, shared
/// and vector loads, peephole rewrites, the border split off where the host computes the
/// interior box (`split`).
fn full(u: &Reuse, split: bool, cols: u32, rows: u32) -> Schedule {
    use Directive as D;
    Schedule::baseline()
        .with(D::Lanes { cols, rows })
        .with_if(u.windows, D::Unroll)
        .with(D::ShareLoads)
        .with(D::VectorMemory)
        .with(D::Peephole)
        .with_if(split, D::SplitBorder)
}

/// The most taps of a window region `rid` reads (a window of host length: `usize::MAX`).
fn largest_window(f: &Function, rid: RegionId) -> usize {
    f.regions[rid]
        .accesses
        .iter()
        .filter(|a| !a.write)
        .map(|a| {
            a.subs.iter().fold(1usize, |n, s| match s {
                Sub::Window { len, .. } => len
                    .known()
                    .map_or(usize::MAX, |l| n.saturating_mul(l as usize)),
                _ => n,
            })
        })
        .max()
        .unwrap_or(0)
}

/// The plan that slides windows across `cols` outputs of `rows` rows per work-item, with
/// peephole rewrites (a box mean's division).
fn slide(cols: u32, rows: u32) -> Schedule {
    Schedule::baseline()
        .with(Directive::Lanes { cols, rows })
        .with(Directive::Slide)
        .with(Directive::Peephole)
}

/// The plan with every transform that makes no lanes: windows unrolled, peephole rewrites,
/// the border split off where the host can compute the interior box (`split`).
fn scalar(u: &Reuse, split: bool) -> Schedule {
    Schedule::baseline()
        .with_if(u.windows, Directive::Unroll)
        .with(Directive::Peephole)
        .with_if(split, Directive::SplitBorder)
}

/// The time bands a repeat's stencil region is a candidate for (time steps, tile columns,
/// tile rows): few steps on small tiles (little recomputed, little local memory), more steps
/// on larger ones (the halo's share falls as the tile grows).
const TIME_BANDS: [(u32, u32, u32); 4] = [(2, 32, 32), (4, 32, 32), (4, 64, 64), (8, 64, 64)];

/// Split bands' time steps (odd: one swap per band) and their tiles' side at least (more where
/// the split needs them).
const SPLIT_BANDS: [(u32, u32); 2] = [(3, 32), (7, 64)];

/// The consumer tiles (columns, rows) of a fused plan's work-groups: a GPU's (few points per
/// work-item), and larger ones for a CPU device (less of the intermediate computed twice).
const FUSE_TILES: [(u32, u32); 2] = [(32, 16), (64, 32)];

/// A work-item's tiles (columns, rows) of a fused plan per work-item (`fuseitem<C>x<R>`): a CPU
/// device's, rows long enough for its vectorizer, few enough for its private buffer to stay
/// in cache; the intermediate's rows computed twice are its reads' span per `R`. The first
/// [`ITEM_TILES`] whose private tiles fit are candidates (a chain's two tiles fit fewer rows).
/// The longest rows first: on PoCL unsharp's chain in 512x8 tiles took 11.3 ms (median of 30
/// kernels) against 13.1 in 256x8 and 12.5 in 256x16 (3840x2160, the developers' 2-core VM).
const FUSE_ITEM_TILES: [(u32, u32); 4] = [(512, 8), (256, 16), (128, 32), (256, 8)];

/// The most expression nodes a plan's work-item may hold (its body's, times its points): a
/// plan of `cols` x `rows` points writes the body out that many times, and a large body (a
/// 2-D border rule of 21 entries around an 81-tap window and a 65-tap convolution: 43,000
/// nodes) written out 8 or 16 times took minutes and gigabytes to build. The APPS regions hold
/// about 1,000 at most (unsharp's `v`: 1,040).
const LANE_NODES: usize = 200_000;

/// The most work-item tiles of [`FUSE_ITEM_TILES`] a fused region has as candidates.
const ITEM_TILES: usize = 3;

/// The candidate plans of region `rid`: the baseline first, then the model's ranking (the
/// first of those is what runs with the search off), then each transform alone, so that the
/// search and the benches can weigh them.
pub fn candidates(f: &Function, rid: RegionId) -> Vec<Schedule> {
    candidates_fused(f, rid).0
}

/// [`candidates`], with which fused plans the region has (`lir::pass::fuse::gpu::plans`, the
/// default where it has none): the regions they run come from it (`launch::plans`).
pub fn candidates_fused(f: &Function, rid: RegionId) -> (Vec<Schedule>, Fused) {
    use Directive as D;
    let r = &f.regions[rid];
    let base = Schedule::baseline();
    let mut out = vec![base.clone()];
    let mut gate = Fused::default();
    // Reductions into shared elements: work-groups with their own bins in local memory
    // (sub-histograms, `lir::pass::local_tile`) where the matrices they reduce into are small
    // enough, after the baseline (global atomics, or its loops in order), so that the model's
    // ranking puts them first.
    if matches!(r.kind, RegionKind::Iterator) && !r.updates.is_empty() && r.prefixes == 0 {
        for (cols, rows) in [(16, 16), (64, 4)] {
            let v = Schedule::baseline().with(D::LocalTile { cols, rows });
            if super::opencl::local_bytes(f, rid, &v) > 0 {
                out.push(v);
            }
        }
    }
    // The body's size as lowered with and without its windows written out, once each.
    let mut sizes: [Option<usize>; 2] = [None; 2];
    let mut add = |v: Schedule| {
        if out.contains(&v) {
            return;
        }
        let points = v.cols() as usize * v.rows() as usize;
        if points > 1 && !v.slide() {
            let n = *sizes[v.unroll() as usize]
                .get_or_insert_with(|| super::opencl::body_nodes(f, rid, &v));
            if n.saturating_mul(points) > LANE_NODES {
                return;
            }
        }
        out.push(v);
    };
    let alone = |d: Directive| Schedule::baseline().with(d);
    let lanes = |cols: u32, rows: u32| D::Lanes { cols, rows };
    match r.kind {
        RegionKind::Reduction { .. } => {
            add(alone(D::TreeReduce { group: 256 }));
            add(alone(D::TreeReduce { group: 64 }));
        }
        RegionKind::Iterator => {
            let u = reuse(f, rid);
            // Reductions into shared elements: the candidates above; scans: the baseline
            // alone (each work-item's scans in order).
            if u.self_read || !r.updates.is_empty() || r.prefixes > 0 {
                return (out, gate);
            }
            // Border rules whose box of safe iterations the host can compute: the interior
            // runs without checks (loop partitioning).
            let split = super::opencl::bounds(f, rid).is_some();
            let w = horizontal(&u);
            let full = |cols: u32, rows: u32| full(&u, split, cols, rows);
            // A window's reduction that slides along the rows (past `lir::SLIDE_TAPS` taps):
            // each work-item slides it across its outputs of a row, from column reductions
            // in a private array, and down its rows too (`lir::pass::slide::items`): tiles of
            // 8x8 outputs (a GPU's, many work-items) and 32x32 (a CPU device's) where the
            // windows slide down the rows, else rows of 32; first (on a CPU device too,
            // `ranking`). Only past `lir::UNROLL_TAPS` taps: smaller windows' slid kernels are
            // large to build (their rows written out) for a gain of 1.3-2.8x on PoCL.
            let large = u.windows && largest_window(f, rid) > crate::lir::UNROLL_TAPS;
            let mut slid: Vec<Schedule> = [slide(8, 8), slide(32, 32)]
                .into_iter()
                .filter(|v| large && super::opencl::slides(f, rid, v))
                .collect();
            if large && slid.is_empty() && super::opencl::slides(f, rid, &slide(32, 1)) {
                slid.push(slide(32, 1));
            }
            if let Some(v) = slid.first() {
                add(v.clone());
            }
            // Algorithm 1: horizontal reuse (or plain streaming) → horizontal vector
            // parallelism; vertical-only reuse → vertical vector parallelism first.
            if u.vertical && !u.horizontal && u.two_d {
                add(full(1, 4));
                add(full(w, 1));
            } else {
                add(full(w, 1));
                if u.vertical && u.two_d {
                    add(full(w, 2));
                }
            }
            // A repeat's one stencil: several time steps per launch, tiles in local memory
            // (the program's `parac_schedule(band = K)`: bands of `K` steps).
            if let Some(band) = crate::lir::pass::fuse::time::gpu::bands(f, rid) {
                for (steps, cols, rows) in TIME_BANDS {
                    match band {
                        None => add(alone(D::TimeBand { steps, cols, rows })),
                        Some(k) if cols == rows && k <= 1024 => add(alone(D::TimeBand {
                            steps: k as u32,
                            cols,
                            rows,
                        })),
                        _ => {}
                    }
                }
            }
            // Split bands: a band's four phases, no point computed twice (a program's `band =
            // K` where `K` is odd: one, of K steps).
            let asked = f.time_step(rid).and_then(|(_, s)| s.band);
            for (at, (steps, least)) in SPLIT_BANDS.into_iter().enumerate() {
                let steps = match asked {
                    Some(k) if at == 0 && k % 2 == 1 && k <= 1024 => k as u32,
                    Some(_) => continue,
                    None => steps,
                };
                if let Some([w, h]) = crate::lir::pass::fuse::time::gpu::split_tile(f, rid, steps) {
                    let (cols, rows) = (w.max(least), h.max(least));
                    add(alone(D::TimeSplit { steps, cols, rows }));
                }
            }
            // Fusion across stages: the consumer's tiles computed in this region's kernel,
            // from the intermediate's points in local memory (`lir::pass::fuse::gpu`).
            let fused = crate::lir::pass::fuse::gpu::plans(f, rid);
            gate = fused;
            if fused.tiles {
                for (cols, rows) in FUSE_TILES {
                    add(alone(D::Fuse { cols, rows }));
                }
            }
            if fused.items {
                let fits = FUSE_ITEM_TILES
                    .into_iter()
                    .filter(|(c, r)| fused.item.fits([*c, *r]));
                for (cols, rows) in fits.take(ITEM_TILES) {
                    add(alone(D::FuseItems { cols, rows }));
                }
            }
            // The producer inlined in its consumer's points (no intermediate at all), alone
            // and with the model's transforms (not the border split: its box is the region's).
            if fused.inline {
                let inline = |v: Schedule| v.with(D::FuseInline).without(D::SplitBorder);
                add(alone(D::FuseInline));
                add(inline(full(1, 1)));
            }
            add(full(if w == 8 { 16 } else { 8 }, 1));
            add(full(1, 1));
            add(scalar(&u, split));
            // Vertical reuse → local memory.
            if u.vertical && u.two_d {
                for v in [
                    Schedule::baseline()
                        .with(D::LocalTile { cols: 32, rows: 8 })
                        .with_if(u.windows, D::Unroll)
                        .with(D::Peephole),
                    full(w, 1)
                        .with(D::LocalTile { cols: 16, rows: 8 })
                        .without(D::SplitBorder),
                ] {
                    if super::opencl::local_bytes(f, rid, &v) > 0 {
                        add(v);
                    }
                }
            }
            // Each transform alone.
            add(alone(lanes(w, 1)));
            if u.two_d {
                add(alone(lanes(1, 2)));
            }
            if u.windows {
                add(alone(D::Unroll));
            }
            add(alone(lanes(w, 1)).with(D::ShareLoads));
            add(alone(lanes(w, 1)).with(D::VectorMemory));
            add(alone(D::Peephole));
            add(alone(D::Mul24));
            if split {
                add(alone(D::SplitBorder));
            }
            for v in slid {
                add(v);
            }
        }
    }
    (out, gate)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The label of the model's first choice for each region of the one function of `src`.
    fn firsts(src: &str, target: Target) -> Vec<String> {
        let c = crate::compile_str(src);
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
        let f = &c.module.functions[0];
        (0..f.regions.len())
            .map(|rid| {
                let cands = candidates(f, rid);
                cands[ranking(f, rid, &cands, target)[0]].label()
            })
            .collect()
    }

    #[test]
    fn windows_that_slide_get_the_slide_plan_first_where_it_pays() {
        let sum = |n: u32| {
            let r = n / 2;
            format!(
                "fn b(src: &u8[M][N], out: &mut i32[M][N]) {{
                    parac_border_rule b = reflect101(src[{r}][{r}]);
                    parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {{
                        out[itx][ity] = parac_matrix_sum(src[itx-{r}:{n}:1][ity-{r}:{n}:1]);
                    }}
                }}"
            )
        };
        // Windows slide down the rows too: 8x8 outputs per work-item on a GPU, 32x32 on a CPU
        // device.
        assert_eq!(firsts(&sum(31), Target::Gpu), ["h8+v8+slide+peep"]);
        assert_eq!(firsts(&sum(31), Target::Cpu), ["h32+v32+slide+peep"]);
        // Windows of up to 64 taps are written out in the fast plans: no slide candidate.
        let c = crate::compile_str(&sum(7));
        assert!(
            !candidates(&c.module.functions[0], 0)
                .iter()
                .any(Schedule::slide)
        );
        let min31 = sum(31).replace("parac_matrix_sum", "parac_matrix_min");
        assert_eq!(firsts(&min31, Target::Gpu), ["h8+v8+slide+peep"]);
        assert_eq!(firsts(&min31, Target::Cpu), ["h32+v32+slide+peep"]);
        // 3x3 is written out: nothing to slide.
        let c = crate::compile_str(&sum(3));
        let f = &c.module.functions[0];
        assert!(!candidates(f, 0).iter().any(Schedule::slide));
    }

    #[test]
    fn a_cpu_device_gets_the_wider_horizontal_lanes() {
        let blur = "fn blur(src: &u16[M][N], out: &mut u16[M-2][N-2]) {
            let bx: u16[M][N-2];
            parac_iterator it(0:M:1; 0:N-2:1) {
                bx[itx][ity] = (src[itx][ity] + src[itx][ity+1] + src[itx][ity+2]) / 3;
            }
            parac_iterator it1(0:M-2:1; 0:N-2:1) {
                out[it1x][it1y] = (bx[it1x][it1y] + bx[it1x+1][it1y] + bx[it1x+2][it1y]) / 3;
            }
        }";
        assert_eq!(
            firsts(blur, Target::Gpu),
            ["h4+cse+vmem+peep", "v4+cse+vmem+peep"]
        );
        assert_eq!(
            firsts(blur, Target::Cpu),
            ["h8+cse+vmem+peep", "h8+cse+vmem+peep"]
        );
        // Seven rows shared, no horizontal reuse: vertical lanes on a GPU, horizontal ones on a
        // CPU device.
        let v7 = "fn v7(g: &f32[M][N], by: &mut f32[M][N]) {
            parac_border_rule rows = clamp(g[3][*]);
            parac_iterator v(x in 0:M:1; y in 0:N:1) parac_border_rule(rows) {
                by[x][y] = g[x-3][y] + g[x-2][y] + g[x-1][y] + g[x][y]
                    + g[x+1][y] + g[x+2][y] + g[x+3][y];
            }
        }";
        assert_eq!(firsts(v7, Target::Gpu), ["v4+cse+vmem+peep+split"]);
        assert_eq!(firsts(v7, Target::Cpu), ["h8+cse+vmem+peep+split"]);
        // Bytes: 16 lanes on a CPU device, 8 on a GPU.
        let bytes = "fn b(src: &u8[M][N], out: &mut u8[M][N-2]) {
            parac_iterator it(0:M:1; 0:N-2:1) {
                out[itx][ity] = (src[itx][ity] + src[itx][ity+1] + src[itx][ity+2]) / 3;
            }
        }";
        assert_eq!(firsts(bytes, Target::Gpu), ["h8+cse+vmem+peep"]);
        assert_eq!(firsts(bytes, Target::Cpu), ["h16+cse+vmem+peep"]);
        // A downsample (stride 2) and an upsample (a gather): horizontal lanes on both.
        let strided = "fn d(src: &u8[M][N], out: &mut u8[M/2][N/2]) {
            parac_iterator it(0:M/2:1; 0:N/2:1) {
                out[itx][ity] = (src[2*itx][2*ity] + src[2*itx][2*ity+1]) / 2;
            }
        }";
        assert!(firsts(strided, Target::Cpu)[0].starts_with("h16"));
        let gather = "fn u(down: &u8[M][N], out: &mut u8[2*M][2*N]) {
            parac_iterator it(0:2*M:1; 0:2*N:1) {
                out[itx][ity] = down[itx / 2][ity / 2];
            }
        }";
        assert!(firsts(gather, Target::Cpu)[0].starts_with("h16"));
        // Global sums: a tree on a GPU, the per-row reduction elsewhere.
        let sum = "fn s(src: &u8[M][N]) -> i64 { return parac_matrix_sum(src); }";
        assert_eq!(firsts(sum, Target::Gpu), ["tree256"]);
        assert_eq!(firsts(sum, Target::Cpu), ["baseline"]);
    }

    #[test]
    fn a_ranking_orders_every_candidate_once() {
        let c = crate::compile_str(
            "fn h(src: &f32[M][N], out: &mut f32[M][N]) {
                parac_border_rule cols = clamp(src[*][1]);
                parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(cols) {
                    out[x][y] = src[x][y-1] + src[x][y] + src[x][y+1];
                }
            }",
        );
        let f = &c.module.functions[0];
        for target in [Target::Gpu, Target::Cpu] {
            let mut r = ranking(f, 0, &candidates(f, 0), target);
            r.sort_unstable();
            assert_eq!(r, (0..candidates(f, 0).len()).collect::<Vec<_>>());
        }
        assert_eq!(
            candidates(f, 0)[ranking(f, 0, &candidates(f, 0), Target::Cpu)[0]].label(),
            "h8+cse+vmem+peep+split"
        );
    }

    /// A repeat's one stencil region has time bands (the program's `band = K`: of `K` steps;
    /// `band = 1`: none), ranked last on a CPU device; a region outside a repeat, or a step of
    /// two regions, has none.
    #[test]
    fn a_producer_read_by_the_next_stage_has_fused_plans() {
        let blur = |schedule: &str| {
            format!(
                "fn b(src: &u16[M][N], out: &mut u16[M-2][N-2]) {{
                    let bx: u16[M][N-2];
                    parac_iterator it(0:M:1; 0:N-2:1) {schedule} {{
                        bx[itx][ity] = (src[itx][ity] + src[itx][ity+1] + src[itx][ity+2]) / 3;
                    }}
                    parac_iterator it1(0:M-2:1; 0:N-2:1) {{
                        out[it1x][it1y] = (bx[it1x][it1y] + bx[it1x+1][it1y] + bx[it1x+2][it1y]) / 3;
                    }}
                }}"
            )
        };
        let fused = |src: &str| -> Vec<String> {
            let c = crate::compile_str(src);
            assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
            let f = &c.module.functions[0];
            // The consumer has none (nothing after it reads what it writes).
            assert!(candidates(f, 1).iter().all(|v| !v.fuses()));
            let cands = candidates(f, 0);
            // Ranked last on a CPU device.
            let cpu = ranking(f, 0, &cands, Target::Cpu);
            let n = cands.iter().filter(|v| v.fuses()).count();
            assert!(cpu[cpu.len() - n..].iter().all(|i| cands[*i].fuses()));
            // A work-item's tiles last on a GPU.
            let gpu = ranking(f, 0, &cands, Target::Gpu);
            let items = cands
                .iter()
                .filter(|v| v.fuse_item_tile().is_some())
                .count();
            assert!(
                gpu[gpu.len() - items..]
                    .iter()
                    .all(|i| cands[*i].fuse_item_tile().is_some())
            );
            let fused: Vec<&Schedule> = cands.iter().filter(|v| v.fuses()).collect();
            for v in &fused {
                // Launched over the consumer's space: a work-group's tile, a work-item's rows.
                match (v.fuse_tile(), v.fuse_item_tile()) {
                    (Some([c, r]), _) => {
                        assert_eq!(v.per_item(), [c as usize / 16, r as usize / 8])
                    }
                    (None, Some([c, r])) => assert_eq!(v.per_item(), [c as usize, r as usize]),
                    (None, None) => assert!(v.fuse_inline()),
                }
            }
            fused.iter().map(|v| v.label()).collect()
        };
        assert_eq!(
            fused(&blur("")),
            [
                "fuse32x16",
                "fuse64x32",
                "fuseitem512x8",
                "fuseitem256x16",
                "fuseitem128x32",
                "inline",
                "cse+vmem+peep+inline"
            ]
        );
        // `fuse = 0`: the stage stays apart.
        assert!(fused(&blur("parac_schedule(fuse = 0)")).is_empty());
    }

    #[test]
    fn a_repeated_stencil_has_time_bands() {
        let heat = |schedule: &str| {
            format!(
                "fn h(src: &f32[M][N], out: &mut f32[M][N], t: i32) {{
                    let next: f32[M][N];
                    parac_border_rule e = replicate(out[1][1]);
                    parac_iterator i(0:M:1; 0:N:1) {{ out[ix][iy] = src[ix][iy]; }}
                    parac_repeat(t) {schedule} {{
                        parac_iterator s(x in 0:M:1; y in 0:N:1) parac_border_rule(e) {{
                            next[x][y] = 0.25 * (out[x-1][y] + out[x+1][y] + out[x][y-1]
                                + out[x][y+1]);
                        }}
                        parac_swap(out, next);
                    }}
                }}"
            )
        };
        let bands = |src: &str| -> Vec<String> {
            let c = crate::compile_str(src);
            assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
            let f = &c.module.functions[0];
            assert!(candidates(f, 0).iter().all(|v| v.time_band().is_none()));
            let cands = candidates(f, 1);
            let cpu = ranking(f, 1, &cands, Target::Cpu);
            let banded = |v: &Schedule| v.time_band().is_some() || v.time_split().is_some();
            let n = cands.iter().filter(|v| banded(v)).count();
            assert!(cpu[cpu.len() - n..].iter().all(|i| banded(&cands[*i])));
            cands
                .iter()
                .filter(|v| banded(v))
                .map(Schedule::label)
                .collect()
        };
        // Split bands of 3 and 7 steps on tiles of at least 32 and 64 points a side (heat's
        // radius 1: a split of 7 steps needs 16).
        assert_eq!(
            bands(&heat("")),
            [
                "time2_32x32",
                "time4_32x32",
                "time4_64x64",
                "time8_64x64",
                "tsplit3_32x32",
                "tsplit7_64x64"
            ]
        );
        assert_eq!(
            bands(&heat("parac_schedule(band = 3)")),
            ["time3_32x32", "time3_64x64", "tsplit3_32x32"]
        );
        // An even band has no split (one swap per band), `split = 0` none either.
        assert_eq!(
            bands(&heat("parac_schedule(band = 4)")),
            ["time4_32x32", "time4_64x64"]
        );
        assert_eq!(
            bands(&heat("parac_schedule(band = 3, split = 0)")),
            ["time3_32x32", "time3_64x64"]
        );
        assert!(bands(&heat("parac_schedule(band = 1)")).is_empty());
    }

    /// A region whose body is large (an 81-tap window sum and a 65-tap convolution through a
    /// 2-D border rule of 21 entries: about 43,000 nodes, found by the random programs, whose
    /// candidates took two minutes and 7 GB to build) gets no plan that writes its body out
    /// more than the budget allows, and every plan it gets fits the budget.
    #[test]
    fn a_large_body_is_not_written_out_per_point() {
        let c = crate::compile_str(include_str!("large_body.parac"));
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
        let f = &c.module.functions[0];
        let cands = candidates(f, 1);
        for v in &cands {
            let points = (v.cols() * v.rows()) as usize;
            let n = super::super::opencl::body_nodes(f, 1, v);
            assert!(n * points <= LANE_NODES, "{}: {n} x {points}", v.label());
        }
        assert!(!cands.iter().any(|v| v.cols() >= 8), "{cands:?}");
        // The small region beside it keeps its horizontal lanes.
        assert!(candidates(f, 0).iter().any(|v| v.cols() >= 8));
    }
}
