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
//!   over a work-group of `L`, then across groups on the host.

use crate::ir::*;

/// One plan for one region.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Variant {
    /// Adjacent columns per work-item (1: none).
    pub cols: u32,
    /// Adjacent rows per work-item (1: none).
    pub rows: u32,
    /// Unrolled constant windows.
    pub unroll: bool,
    /// Loads shared between lanes and hoisted.
    pub cse: bool,
    /// Vector loads and stores.
    pub vmem: bool,
    /// Range-proven peephole rewrites (shifts, masks, `clamp`, `abs`).
    pub peep: bool,
    /// `mul24`/`mad24` where operands are proven to fit 24 bits.
    pub m24: bool,
    /// Local-memory tiling with this work-group size (columns, rows).
    pub lds: Option<(u32, u32)>,
    /// Tree reduction with this work-group size.
    pub tree: Option<u32>,
}

impl Variant {
    /// The baseline plan: one work-item per iteration point, nothing else.
    pub fn baseline() -> Variant {
        Variant {
            cols: 1,
            rows: 1,
            ..Variant::default()
        }
    }

    /// Whether this is the baseline plan.
    pub fn is_baseline(&self) -> bool {
        *self == Variant::baseline()
    }

    /// The label, e.g. `h4+unroll+cse+vmem`: the transforms in a fixed order, `baseline` for
    /// none. Labels name candidates in kernels, in the plan cache and in `PARAC_PLAN`.
    pub fn label(&self) -> String {
        let mut p: Vec<String> = Vec::new();
        if self.cols > 1 {
            p.push(format!("h{}", self.cols));
        }
        if self.rows > 1 {
            p.push(format!("v{}", self.rows));
        }
        for (on, name) in [
            (self.unroll, "unroll"),
            (self.cse, "cse"),
            (self.vmem, "vmem"),
            (self.peep, "peep"),
            (self.m24, "m24"),
        ] {
            if on {
                p.push(name.to_string());
            }
        }
        if let Some((x, y)) = self.lds {
            p.push(format!("lds{x}x{y}"));
        }
        if let Some(l) = self.tree {
            p.push(format!("tree{l}"));
        }
        if p.is_empty() {
            "baseline".to_string()
        } else {
            p.join("+")
        }
    }

    /// Whether lanes (several iteration points per work-item) are used.
    pub fn lanes(&self) -> bool {
        self.cols > 1 || self.rows > 1
    }

    /// The fixed work-group size this plan needs (local tiles and trees), as OpenCL sizes
    /// (dimension 0 first).
    pub fn local_size(&self) -> Option<Vec<usize>> {
        if let Some((x, y)) = self.lds {
            return Some(vec![x as usize, y as usize]);
        }
        self.tree.map(|l| vec![l as usize])
    }
}

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

/// What the model needs to know of a region's reads (a stand-in for the full feature analysis
/// where it is not available): whether neighbouring iterations share data along columns and
/// along rows, and whether the region reads a matrix it writes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reuse {
    /// Some read covers several columns per iteration (or neighbours read the same columns).
    pub horizontal: bool,
    /// Some read covers several rows per iteration.
    pub vertical: bool,
    /// The widest reach in rows (for tile sizing).
    pub row_halo: u32,
    /// Some block (window) is read: unrolling applies.
    pub windows: bool,
    /// The region reads a matrix it writes: only the baseline keeps its order of effects.
    pub self_read: bool,
    /// The narrowest element size read or written, in bytes.
    pub min_elem: usize,
    /// Two iteration slots (a 2-D region).
    pub two_d: bool,
}

/// The reuse facts of region `rid`.
pub fn reuse(f: &Function, rid: RegionId) -> Reuse {
    let r = &f.regions[rid];
    let mut u = Reuse {
        min_elem: 8,
        two_d: r.dims.iter().filter(|d| d.is_some()).count() == 2,
        ..Reuse::default()
    };
    let written: Vec<MatrixId> = r
        .accesses
        .iter()
        .filter(|a| a.write)
        .map(|a| a.matrix)
        .collect();
    for (i, a) in r.accesses.iter().enumerate() {
        let m = &f.matrices[a.matrix];
        if matches!(m.kind, MatrixKind::Const(_)) {
            continue;
        }
        u.min_elem = u.min_elem.min(elem_bytes(m.elem));
        if a.write {
            continue;
        }
        if written.contains(&a.matrix) {
            u.self_read = true;
        }
        let n = a.subs.len();
        for (k, s) in a.subs.iter().enumerate() {
            if let Sub::Window { len, .. } = s {
                u.windows = true;
                if *len > 1 {
                    if k + 1 == n {
                        u.horizontal = true;
                    } else {
                        u.vertical = true;
                    }
                }
            }
        }
        if let Some(Some(reach)) = r.reach.get(i) {
            if reach.len() >= 2 {
                let (b, e) = reach[reach.len() - 2];
                u.row_halo = u.row_halo.max(b.max(e));
            }
        }
    }
    // Several point reads of one matrix at different offsets: reuse along the dimension in
    // which their subscripts differ.
    for (i, a) in r.accesses.iter().enumerate() {
        for b in &r.accesses[i + 1..] {
            if a.write || b.write || a.matrix != b.matrix || a.subs.len() != b.subs.len() {
                continue;
            }
            let n = a.subs.len();
            for k in 0..n {
                let differ = match (&a.subs[k], &b.subs[k]) {
                    (Sub::Point(x), Sub::Point(y)) => format!("{x:?}") != format!("{y:?}"),
                    _ => false,
                };
                if differ {
                    if k + 1 == n {
                        u.horizontal = true;
                    } else {
                        u.vertical = true;
                    }
                }
            }
        }
    }
    u
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
            // Narrow elements pack more lanes into one vector access.
            let w = if u.min_elem == 1 { 8 } else { 4 };
            let full = |cols: u32, rows: u32| Variant {
                cols,
                rows,
                unroll: u.windows,
                cse: true,
                vmem: true,
                peep: true,
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
        }
    }
    out
}

/// The size of a matrix element in bytes.
pub fn elem_bytes(s: Scalar) -> usize {
    match s {
        Scalar::Bool | Scalar::U8 | Scalar::I8 => 1,
        Scalar::U16 | Scalar::I16 => 2,
        Scalar::U32 | Scalar::I32 | Scalar::F32 => 4,
        Scalar::I64 | Scalar::U64 => 8,
    }
}
