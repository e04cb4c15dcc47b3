//! The optimization model (paper Algorithm 1): from a region's features, the ranked candidate
//! plans ([`Variant`]s) the OpenCL back end emits a kernel for. The runtime prunes them by the
//! device's limits and, unless told otherwise, times them and keeps the fastest.
//!
//! Every transform is a switch of [`Variant`], so a test or a bench can force one alone:
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

pub use super::schedule::Variant;

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
    }
}

/// The candidate plans of region `rid`: the baseline first, then the model's ranking (the
/// first of those is what runs with the search off), then each transform alone, so that the
/// search and the benches can weigh them.
pub fn candidates(f: &Function, rid: RegionId) -> Vec<Variant> {
    let r = &f.regions[rid];
    let base = Variant::baseline();
    let mut out = vec![base.clone()];
    let mut add = |v: Variant| {
        if !out.contains(&v) {
            out.push(v);
        }
    };
    match r.kind {
        RegionKind::Reduction { .. } => {
            add(Variant {
                tree: Some(256),
                ..base.clone()
            });
            add(Variant {
                tree: Some(64),
                ..base.clone()
            });
        }
        RegionKind::Iterator => {
            let u = reuse(f, rid);
            if u.self_read {
                return out;
            }
            // Border rules whose box of safe iterations the host can compute: the interior
            // runs without checks (loop partitioning).
            let split = super::opencl::bounds(f, rid).is_some();
            // Narrow elements pack more lanes into one vector access.
            let w = if u.min_elem == 1 { 8 } else { 4 };
            let full = |cols: u32, rows: u32| Variant {
                cols,
                rows,
                unroll: u.windows,
                cse: true,
                vmem: true,
                peep: true,
                split,
                ..base.clone()
            };
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
            add(full(if w == 8 { 16 } else { 8 }, 1));
            add(full(1, 1));
            // Vertical reuse → local memory.
            if u.vertical && u.two_d {
                for v in [
                    Variant {
                        lds: Some((32, 8)),
                        unroll: u.windows,
                        peep: true,
                        ..base.clone()
                    },
                    Variant {
                        lds: Some((16, 8)),
                        split: false,
                        ..full(w, 1)
                    },
                ] {
                    if super::opencl::local_bytes(f, rid, &v) > 0 {
                        add(v);
                    }
                }
            }
            // Each transform alone.
            add(Variant {
                cols: w,
                ..base.clone()
            });
            if u.two_d {
                add(Variant {
                    rows: 2,
                    ..base.clone()
                });
            }
            if u.windows {
                add(Variant {
                    unroll: true,
                    ..base.clone()
                });
            }
            add(Variant {
                cols: w,
                cse: true,
                ..base.clone()
            });
            add(Variant {
                cols: w,
                vmem: true,
                ..base.clone()
            });
            add(Variant {
                peep: true,
                ..base.clone()
            });
            add(Variant {
                m24: true,
                ..base.clone()
            });
            if split {
                add(Variant {
                    split: true,
                    ..base.clone()
                });
            }
        }
    }
    out
}
