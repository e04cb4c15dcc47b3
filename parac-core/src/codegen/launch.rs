//! The host side of a function's OpenCL path, as data: the kernel arguments of each region,
//! its candidate plans, its launch (the slots OpenCL runs, the iteration counts) and how a global
//! operator's partial results are laid out and combined. The runtime's one executor of the
//! OpenCL path (`parac_runtime::pipeline`) runs these descriptions, for pipelines compiled at
//! run time and for the code `parac!` emits alike (which embeds the function's source and emits
//! no host code of its own for devices).

use super::opencl::{arg_ty, cl_slots, hosts_used, kernel_name, local_bytes, used, variant_name};
use super::plan;
use super::schedule::Schedule;
use crate::ir::*;

/// One argument of a region's kernel, in the order of the kernel's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelArg {
    /// The device buffer of a matrix (`__global T* m<id>`).
    Matrix(MatrixId),
    /// The row pitch of that buffer in elements (`int p<id>`).
    Pitch(MatrixId),
    /// A size symbol, as `int` (`int z<i>`).
    Size(usize),
    /// A host scalar, converted (Rust's `as`) to the given kernel-argument type: `u32`, `i64`,
    /// `u64` and `f32` travel as themselves, smaller types as `i32`.
    Host(ScalarId, Scalar),
    /// The call's error flag (8 `int`s, see `codegen::safety`).
    ErrorFlag,
    /// A global operator's buffer of partial results (see [`ReduceLaunch`]).
    Partials,
}

/// The arguments of region `rid`'s kernels (every candidate of a region takes the same ones;
/// a split plan's box ends are appended by the runtime).
pub fn kernel_args(f: &Function, rid: RegionId) -> Vec<KernelArg> {
    let r = &f.regions[rid];
    let mut a = Vec::new();
    match r.kind {
        RegionKind::Iterator => {
            for (m, _) in used(f, r) {
                a.push(KernelArg::Matrix(m));
                a.push(KernelArg::Pitch(m));
            }
            a.extend((0..f.sizes.len()).map(KernelArg::Size));
            for h in hosts_used(f, r) {
                a.push(KernelArg::Host(h, arg_ty(f.scalars[h].ty)));
            }
            a.push(KernelArg::ErrorFlag);
        }
        RegionKind::Reduction { matrix, .. } => {
            a.push(KernelArg::Matrix(matrix));
            a.push(KernelArg::Pitch(matrix));
            a.extend((0..f.sizes.len()).map(KernelArg::Size));
            a.push(KernelArg::Partials);
        }
    }
    a
}

/// One candidate plan of a region, as `parac_runtime::opencl::Candidate` holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanDesc {
    /// The plan's label (`baseline` for the baseline).
    pub label: String,
    /// Its kernel in the function's program.
    pub kernel: String,
    /// Kernels launched after it, in order, with the same shape (a split band's later phases,
    /// `Directive::TimeSplit`): they work in place, reading what they write.
    pub then: Vec<String>,
    /// Iteration points per work-item along OpenCL dimensions 0 and 1.
    pub per_item: [usize; 2],
    /// Time steps one launch runs (1 but for a time band, `Directive::TimeBand`: the
    /// executor then skips the repeat's next `steps - 1` steps).
    pub steps: usize,
    /// The plan runs the region's consumer too (`Directive::Fuse`, `Directive::FuseInline`):
    /// launched over the consumer's iteration space, the executor then skips the runs of
    /// [`PlanDesc::runs`].
    pub fuses: bool,
    /// The regions a fused plan runs with its own, in order (`Function::fused_consumers`, the
    /// first or both: `lir::pass::fuse::gpu::Fused::consumers`); empty for the others.
    pub runs: Vec<RegionId>,
    /// The work-group size the kernel is written for, if it fixes one.
    pub local: Option<Vec<usize>>,
    /// Bytes of local memory the kernel declares.
    pub local_bytes: usize,
    /// A tree reduction.
    pub tree: bool,
    /// Loop partitioning (the interior box only).
    pub split: bool,
    /// The kernel takes its first work-item's index per dimension as its last arguments and is
    /// launched with no global offset (an iterator region's baseline kernel).
    pub origin: bool,
    /// Its kernel is in a program of its own, not the function's (baseline) program: every
    /// candidate but the baseline ([`PlanDesc::source`]).
    pub own: bool,
    /// The region.
    pub region: RegionId,
    /// The plan's directives.
    pub schedule: Schedule,
}

impl PlanDesc {
    /// The program holding the plan's kernel when it has one of its own
    /// ([`super::opencl::candidate_program`]; `f` is the function the plan is of). Printed on
    /// demand: a large window's candidates take a while to print, and a call needs only those
    /// it builds.
    pub fn source(&self, f: &Function) -> Option<String> {
        self.own
            .then(|| super::opencl::candidate_program(f, self.region, &self.schedule))
    }
}

/// The candidates of region `rid`: the baseline first, then the optimization model's ranking.
pub fn plans(f: &Function, rid: RegionId) -> Vec<PlanDesc> {
    let (cands, fused) = plan::candidates_fused(f, rid);
    let mut runs = f.fused_consumers(rid);
    runs.truncate(fused.consumers);
    cands
        .into_iter()
        .map(|v| PlanDesc {
            runs: if v.fuses() { runs.clone() } else { Vec::new() },
            own: !v.is_baseline(),
            region: rid,
            label: v.label(),
            kernel: variant_name(f, rid, &v),
            then: super::opencl::later_phases(&variant_name(f, rid, &v), &v),
            per_item: v.per_item(),
            steps: v.steps(),
            fuses: v.fuses(),
            local: v.local_size(),
            local_bytes: v.tree().map_or(0, |l| l as usize * 8) + local_bytes(f, rid, &v),
            tree: v.tree().is_some(),
            split: v.split(),
            origin: v.is_baseline() && f.regions[rid].kind == RegionKind::Iterator,
            schedule: v,
        })
        .collect()
}

/// The name the runtime knows region `rid`'s plans by (its baseline kernel's).
pub fn plans_region(f: &Function, rid: RegionId) -> String {
    kernel_name(f, rid)
}

/// Whether region `rid`'s candidates may be timed (run more than once on the same data): it
/// reads no matrix it writes, or it is a global operator.
pub fn searchable(f: &Function, rid: RegionId) -> bool {
    let r = &f.regions[rid];
    !plan::reuse(f, rid).self_read || matches!(r.kind, RegionKind::Reduction { .. })
}

/// The slots of an iterator region that OpenCL runs, in OpenCL dimension order (the last slot,
/// along rows, is dimension 0). Their iteration counts are [`iterations`] of their bounds, and
/// the interior box of split plans starts at `(lo, step)` of each.
pub fn launch_slots(f: &Function, rid: RegionId) -> Vec<usize> {
    cl_slots(&f.regions[rid])
}

/// The number of iterations of a slot from `lo` (inclusive) to `hi` (exclusive) by `step`
/// (> 0): 0 when `hi <= lo`.
pub fn iterations(lo: i64, hi: i64, step: i64) -> usize {
    if hi > lo {
        ((hi - lo + step - 1) / step) as usize
    } else {
        0
    }
}

/// How a global operator's partial results are laid out and combined on the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partials {
    /// An integer sum or mean: each row's `i64` sum as two `u32` halves (low first),
    /// combined by [`combine_sum_int`].
    SumInt,
    /// A float sum or mean: one `f32` per row, combined by [`combine_sum_f32`] (in `f64`).
    SumF32,
    /// A float minimum or maximum: one `f32` per row ([`combine_min_f32`],
    /// [`combine_max_f32`]).
    MinMaxF32,
    /// An integer minimum or maximum: one value of this type (the element type promoted:
    /// `i32` or `u32`) per row ([`combine_min_int`], [`combine_max_int`], whose identity is
    /// the type's largest or smallest value).
    MinMaxInt(Scalar),
}

/// A global operator's launch: one work-item per row of `matrix` (all but its last dimension
/// together, [`reduction_rows`]), `per_row` partials of type `part` each, combined into host
/// scalar `result`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceLaunch {
    /// The operator.
    pub op: ReduceOp,
    /// The reduced matrix.
    pub matrix: MatrixId,
    /// The host scalar receiving the result (cast with Rust's `as` to its type; a mean divides
    /// the combined sum, in `i64` or `f64`, by the element count first: an empty matrix is a
    /// division by zero).
    pub result: ScalarId,
    /// The layout of the partials.
    pub partials: Partials,
    /// The element type of the partials buffer.
    pub part: Scalar,
    /// Partials per row.
    pub per_row: usize,
}

/// The launch of global operator `rid`; `None` for an iterator.
pub fn reduce_launch(f: &Function, rid: RegionId) -> Option<ReduceLaunch> {
    let RegionKind::Reduction { op, matrix, result } = f.regions[rid].kind else {
        return None;
    };
    let elem = f.matrices[matrix].elem;
    let (partials, part, per_row) = match (op, elem.is_float()) {
        (ReduceOp::Sum | ReduceOp::Mean, false) => (Partials::SumInt, Scalar::U32, 2),
        (ReduceOp::Sum | ReduceOp::Mean, true) => (Partials::SumF32, Scalar::F32, 1),
        (_, true) => (Partials::MinMaxF32, Scalar::F32, 1),
        (_, false) => (Partials::MinMaxInt(elem.promote()), elem.promote(), 1),
    };
    Some(ReduceLaunch {
        op,
        matrix,
        result,
        partials,
        part,
        per_row,
    })
}

/// The rows of a reduced matrix of dimensions `dims`: the product of all but the last
/// dimension (1 for a vector), 0 if negative.
pub fn reduction_rows(dims: &[i64]) -> usize {
    if dims.len() <= 1 {
        1
    } else {
        dims[..dims.len() - 1].iter().product::<i64>().max(0) as usize
    }
}

/// The element count of a reduced matrix (a mean's divisor).
pub fn element_count(dims: &[i64]) -> i64 {
    dims.iter().product::<i64>().max(0)
}

/// [`Partials::SumInt`]: the rows' `i64` sums, from their `u32` halves, added with wrapping.
pub fn combine_sum_int(p: &[u32]) -> i64 {
    p.chunks(2).fold(0i64, |a, c| {
        a.wrapping_add((c[0] as u64 | (c.get(1).copied().unwrap_or(0) as u64) << 32) as i64)
    })
}

/// [`Partials::SumF32`]: the rows' sums added in `f64`.
pub fn combine_sum_f32(p: &[f32]) -> f64 {
    p.iter().map(|v| *v as f64).sum::<f64>()
}

/// [`Partials::MinMaxF32`], minimum (`f32::min`: a NaN partial is skipped).
pub fn combine_min_f32(p: &[f32]) -> f32 {
    p.iter().copied().fold(f32::INFINITY, f32::min)
}

/// [`Partials::MinMaxF32`], maximum.
pub fn combine_max_f32(p: &[f32]) -> f32 {
    p.iter().copied().fold(f32::NEG_INFINITY, f32::max)
}

/// [`Partials::MinMaxInt`], minimum; an empty matrix gives `identity` (the type's largest
/// value), as on the CPU path.
pub fn combine_min_int<T: Ord + Copy>(p: &[T], identity: T) -> T {
    p.iter().copied().min().unwrap_or(identity)
}

/// [`Partials::MinMaxInt`], maximum; an empty matrix gives `identity` (the type's smallest
/// value).
pub fn combine_max_int<T: Ord + Copy>(p: &[T], identity: T) -> T {
    p.iter().copied().max().unwrap_or(identity)
}

/// The program a call under the model or the search builds first on a `target` device: the
/// baseline's kernels and, for each iterator region with candidates, the model's first-ranked
/// plan's kernel there ([`plan::ranking`]; it also has a program of its own,
/// [`super::opencl::candidate_program`]). One build instead of one per region: a driver's cost
/// per program (PoCL runs its front end once per program) is paid once. The runtime falls back
/// to the baseline's program and the candidates' own programs when this one does not build, so
/// that the baseline never depends on a candidate.
pub fn first_program(f: &Function, target: plan::Target) -> String {
    let mut out = super::opencl::program(f);
    out.push_str(
        "\n// The model's first-ranked plan of each region (each also has its own program).\n",
    );
    for (rid, r) in f.regions.iter().enumerate() {
        if r.kind != RegionKind::Iterator {
            continue;
        }
        let cands = plan::candidates(f, rid);
        let Some(v) = plan::ranking(f, rid, &cands, target)
            .first()
            .filter(|i| **i != 0)
            .map(|i| &cands[*i])
        else {
            continue;
        };
        super::opencl::append_candidate(&mut out, f, rid, v);
    }
    out
}

/// One program holding every kernel of `f`: the baseline's and every candidate's of every
/// region (each also has its own program). For forcing candidates one by one (the tests): one
/// build of the driver's front end instead of one per candidate. The runtime falls back to the
/// baseline's program and the candidates' own programs when this one does not build.
pub fn every_candidate_program(f: &Function) -> String {
    let mut out = super::opencl::program(f);
    out.push_str("\n// Every candidate plan of every region (each also has its own program).\n");
    for rid in 0..f.regions.len() {
        for v in plan::candidates(f, rid).iter().skip(1) {
            super::opencl::append_candidate(&mut out, f, rid, v);
        }
    }
    out
}

/// Every program of `f`, the baseline's then each candidate's, for reading (`parac emit opencl`).
pub fn all_programs(f: &Function) -> String {
    let mut out = super::opencl::program(f);
    for rid in 0..f.regions.len() {
        let cands = plan::candidates(f, rid);
        if cands.len() < 2 {
            continue;
        }
        for v in cands.iter().skip(1) {
            out.push('\n');
            out.push_str(&super::opencl::candidate_program(f, rid, v));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_combines() {
        assert_eq!(iterations(0, 5, 1), 5);
        assert_eq!(iterations(0, 5, 2), 3);
        assert_eq!(iterations(3, 3, 1), 0);
        assert_eq!(iterations(4, -2, 1), 0);
        assert_eq!(reduction_rows(&[7]), 1);
        assert_eq!(reduction_rows(&[3, 4, 5]), 12);
        assert_eq!(reduction_rows(&[-1, 4]), 0);
        let halves = [u32::MAX, 0, 1, 1];
        assert_eq!(
            combine_sum_int(&halves),
            u32::MAX as i64 + (1 + (1i64 << 32))
        );
        assert_eq!(combine_sum_int(&[0, u32::MAX]), -(1i64 << 32));
        assert_eq!(combine_min_int::<i32>(&[], i32::MAX), i32::MAX);
        assert_eq!(combine_max_int(&[3u32, 9, 1], 0), 9);
        assert_eq!(combine_min_f32(&[2.0, f32::NAN, -1.0]), -1.0);
        assert_eq!(combine_max_f32(&[]), f32::NEG_INFINITY);
    }
}
