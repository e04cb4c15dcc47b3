//! A plan's enqueues: the shape of a candidate's launch (its global and work-group sizes), a
//! split plan's interior launch and the baseline's border strips around it at one work-group
//! size, the work-group size a launch gets when its kernel fixes none, and the enqueueing of
//! them all with their extra arguments (a split kernel's ends, an origin kernel's offsets).

use std::ops::Range;

use super::super::device::Device;
use super::super::launch::{Arg, NdRange};
use super::super::partition::strips;
use super::super::program::Program;
use super::Candidate;
use crate::Error;
use opencl3::event::Event;

/// One enqueue of a plan: `kernel` over `global` work-items from `offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Launch<'a> {
    pub(super) kernel: &'a str,
    /// The kernel is in the candidate's own program (else in the region's).
    pub(super) own: bool,
    pub(super) offset: Vec<usize>,
    pub(super) global: Vec<usize>,
    pub(super) local: Option<Vec<usize>>,
    /// The box's end (`offset + global`) is passed after the arguments (split kernels).
    pub(super) ends: bool,
    /// The offset goes as arguments ([`Candidate::origin`]).
    pub(super) origin: bool,
}

/// The one work-group size of every border strip of a split plan (`strips`: each strip's
/// dimension and box, as [`strips`] gives them), so that the driver compiles the baseline kernel
/// for one work-group size (PoCL compiles a kernel at its first launch for each work-group
/// size, 0.2-0.4 s each for a baseline kernel; measured on PoCL for the
/// budgeted search). Along a dimension with a strip before the box, whole groups (a divisor of
/// that strip's width, so that the rounded-up launch stays outside the box); along the others,
/// as many work-items as fit (the baseline kernel recomputes, identically, what the rounding
/// adds there, or returns beyond the region).
fn strips_local(strips: &[(usize, Vec<Range<usize>>)], dims: usize, max: usize) -> Vec<usize> {
    let max = max.clamp(1, 256);
    let mut l = vec![1; dims];
    let mut budget = max;
    // The width of the strip before the box along each dimension, where there is one.
    let before: Vec<Option<usize>> = (0..dims)
        .map(|d| {
            strips
                .iter()
                .find(|(own, b)| *own == d && b[d].start == 0)
                .map(|(_, b)| b[d].len())
        })
        .collect();
    for d in 0..dims {
        if let Some(w) = before[d] {
            l[d] = (1..=w.min(16).min(budget))
                .rev()
                .find(|x| w % x == 0)
                .unwrap_or(1);
            budget = (budget / l[d]).max(1);
        }
    }
    // The budget left, whatever the strips' extents: one size for every image size (a size
    // fitted to each image's strips made PoCL compile the baseline kernel again for each).
    for d in 0..dims {
        if before[d].is_none() {
            l[d] = budget;
            budget = 1;
        }
    }
    l
}

/// The work-group size of a launch that fixes none and must not depend on the global size:
/// 32x4 (64 in 1-D, 1 along further dimensions), where the device allows it.
fn fixed_local(dims: usize, max_group: usize) -> Option<Vec<usize>> {
    if dims == 0 {
        return None;
    }
    let mut l = if dims >= 2 { vec![32, 4] } else { vec![64] };
    l.resize(dims, 1);
    (l.iter().product::<usize>() <= max_group).then_some(l)
}

/// Groups of a tree reduction over `rows` rows.
pub(super) fn tree_groups(rows: usize) -> usize {
    rows.clamp(1, 128)
}

impl Device {
    /// The global size and local size of candidate `c` for a region of `global` iteration
    /// points (for a tree: `global[0]` rows).
    fn shape(
        c: &Candidate,
        global: &[usize],
        local: &Option<Vec<usize>>,
    ) -> (Vec<usize>, Option<Vec<usize>>) {
        if c.tree {
            let l = c.local.as_deref().map_or(64, |l| l[0]);
            return (vec![tree_groups(global[0]) * l], Some(vec![l]));
        }
        let g: Vec<usize> = global
            .iter()
            .enumerate()
            .map(|(d, n)| n.div_ceil(*c.per_item.get(d).unwrap_or(&1)))
            .collect();
        let l = c
            .local
            .as_deref()
            .map(<[usize]>::to_vec)
            .or_else(|| local.clone());
        (g, l)
    }

    /// The enqueues of candidate `c` (of `cands`, baseline first) on `global` iteration points
    /// with work-group size `local`: one, or for a split plan with a non-empty interior box
    /// (whole work-items of its lanes), the interior and the baseline's strips around it.
    pub(super) fn launches<'a>(
        cands: &'a [Candidate],
        c: &'a Candidate,
        global: &[usize],
        local: &Option<Vec<usize>>,
        interior: Option<&[Range<usize>]>,
        max_group: usize,
    ) -> Vec<Launch<'a>> {
        let whole = |c: &'a Candidate, local: &Option<Vec<usize>>| {
            let (g, l) = Self::shape(c, global, local);
            Launch {
                kernel: &c.kernel,
                own: c.source.is_some(),
                offset: vec![0; g.len()],
                global: g,
                local: l,
                ends: false,
                origin: c.origin,
            }
        };
        if !c.split {
            let first = whole(c, local);
            // A split band's later phases, launched as the first.
            let then = c.then.iter().map(|k| Launch {
                kernel: k,
                ..first.clone()
            });
            return std::iter::once(first.clone()).chain(then).collect();
        }
        let base = &cands[0];
        let inner: Option<Vec<(usize, usize)>> = interior.and_then(|b| {
            (0..global.len())
                .map(|d| {
                    let p = *c.per_item.get(d).unwrap_or(&1);
                    let r = b.get(d)?;
                    let (o, e) = (r.start.div_ceil(p), r.end.min(global[d]) / p);
                    (e > o).then_some((o, e))
                })
                .collect()
        });
        let Some(inner) = inner else {
            // No interior: the baseline runs everything, at one work-group size whatever the
            // size (a driver's choice varies with it, and PoCL compiles a kernel per size).
            return vec![whole(base, &fixed_local(global.len(), max_group))];
        };
        let mut out = vec![Launch {
            kernel: &c.kernel,
            own: c.source.is_some(),
            offset: inner.iter().map(|x| x.0).collect(),
            global: inner.iter().map(|x| x.1 - x.0).collect(),
            local: local.clone(),
            ends: true,
            origin: c.origin,
        }];
        let boxed: Vec<Range<usize>> = inner
            .iter()
            .enumerate()
            .map(|(d, (o, e))| {
                let p = *c.per_item.get(d).unwrap_or(&1);
                o * p..e * p
            })
            .collect();
        let strips = strips(global, &boxed);
        // One work-group size for every strip, and (`Candidate::origin`) their offsets passed
        // as arguments: PoCL compiles the baseline kernel once for all of them, not once per
        // strip shape and again for a zero global offset.
        let local = strips_local(&strips, global.len(), max_group);
        for (_, s) in strips {
            out.push(Launch {
                kernel: &base.kernel,
                own: false,
                offset: s.iter().map(|r| r.start).collect(),
                global: s.iter().map(|r| r.len()).collect(),
                local: Some(local.clone()),
                ends: false,
                origin: base.origin,
            });
        }
        out
    }

    /// Enqueues `launches` with `args` (plus the box's end where asked); their events.
    pub(super) fn enqueue(
        &self,
        program: &Program,
        own: Option<&Program>,
        launches: &[Launch<'_>],
        args: &[Arg<'_>],
        exact: bool,
    ) -> Result<Vec<Event>, Error> {
        let mut events = Vec::new();
        for l in launches {
            let mut a = args.to_vec();
            if l.ends {
                a.extend(
                    l.offset
                        .iter()
                        .zip(&l.global)
                        .map(|(o, g)| Arg::I32((o + g) as i32)),
                );
            }
            if l.origin {
                a.extend(l.offset.iter().map(|o| Arg::I32(*o as i32)));
            }
            let offset = (!l.origin && l.offset.iter().any(|o| *o > 0)).then_some(&l.offset[..]);
            let prog = match own {
                Some(p) if l.own => p,
                _ => program,
            };
            let range = NdRange {
                global: &l.global,
                local: l.local.as_deref(),
                offset,
                exact,
            };
            let e = self.launch_event(prog, l.kernel, range, &a)?;
            events.extend(e);
        }
        Ok(events)
    }

    /// The work-group size a candidate whose kernel fixes none is launched with outside the
    /// search's second round: the driver's (`None`) where the work-items' first dimension is a
    /// multiple of 16, else 32x4 (64 in 1-D), the global size rounded up to it. A driver that
    /// needs the global size to be a multiple of the work-group size (PoCL, OpenCL 1.2) picks a
    /// divisor of it, as small as 2 for blur's 6406 columns (2 x 3203), which starves its
    /// work-group vectorizer: the baseline kernel of blur's first stage took 60 ms with it and
    /// 5.7 ms at 32x4 (the kernels check their bounds, so rounding up is free). The baseline
    /// policy keeps the driver's size: it is the plain launch the plans are measured against.
    ///
    /// On a CPU device (PoCL) every global size gets 32x4: its compiler specializes a kernel
    /// for each work-group size it is launched with (seconds each for a bordered kernel), and
    /// the driver's own choice is a divisor of the global size, so a region run on many image
    /// sizes was compiled again for most of them (`borders reflect101::opencl`, 22 sizes, cold
    /// cache: 107 compilations and 388 s before, 45 and 308 s with this and the fixed sizes of
    /// split plans' strips).
    pub(super) fn default_local(&self, c: &Candidate, global: &[usize]) -> Option<Vec<usize>> {
        if c.local.is_some() || c.tree || global.is_empty() {
            return None;
        }
        let (g, _) = Self::shape(c, global, &None);
        if g[0] % 16 == 0 && !self.info().is_cpu {
            return None;
        }
        fixed_local(g.len(), self.info().max_work_group_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    const BASE: Candidate = Candidate {
        label: Cow::Borrowed("baseline"),
        kernel: Cow::Borrowed("k"),
        then: Vec::new(),
        source: None,
        per_item: [1, 1],
        steps: 1,
        fuses: false,
        local: None,
        local_bytes: 0,
        tree: false,
        split: false,
        origin: true,
    };

    /// Every border strip of a split plan runs at one work-group size, so that the driver
    /// compiles the baseline kernel for one work-group size (PoCL compiles per work-group size
    /// at a kernel's first launch).
    #[test]
    fn split_strips_share_one_work_group_size() {
        let c = Candidate {
            label: Cow::Borrowed("split"),
            kernel: Cow::Borrowed("s"),
            then: Vec::new(),
            per_item: [8, 1],
            split: true,
            origin: false,
            ..BASE
        };
        let cands = [BASE, c.clone()];
        for (global, inner) in [
            ([512usize, 512usize], [1..511, 1..511]),
            ([3840, 2160], [3..3837, 2..2158]),
            ([100, 9], [0..100, 2..7]),
            ([100, 9], [5..90, 0..9]),
        ] {
            let ls = Device::launches(&cands, &c, &global, &None, Some(&inner), 256);
            let strips: Vec<&Launch> = ls.iter().filter(|l| l.kernel == "k").collect();
            assert!(!strips.is_empty());
            let local = strips[0].local.clone();
            assert!(local.is_some());
            assert!(strips.iter().all(|l| l.local == local), "{ls:?}");
            // Their offsets go as arguments: every strip is a zero-offset launch for the driver.
            assert!(strips.iter().all(|l| l.origin), "{ls:?}");
        }
        // The sharpen stencil's strips (h8, a border of one): 8 columns wide, 1 row high.
        let ls = Device::launches(&cands, &c, &[512, 512], &None, Some(&[1..511, 1..511]), 256);
        assert_eq!(ls[1].local, Some(vec![8, 1]));
    }

    /// The iteration points each launch of a split plan computes (a work-item of the interior
    /// kernel covers its lanes), with the launch's rounding up to its work-group size: every
    /// point of the domain exactly once before rounding, and the rounding never reaching into
    /// the interior box.
    #[test]
    fn split_launches_tile_the_domain() {
        for (gx, gy) in [
            (1usize, 1usize),
            (5, 3),
            (17, 9),
            (64, 7),
            (33, 40),
            (64, 50),
        ] {
            for (px, py) in [(1, 1), (4, 1), (8, 2), (1, 4)] {
                for (lo, hi) in [(0usize, 0usize), (1, 1), (2, 3), (0, 5), (3, 0), (20, 19)] {
                    let c = Candidate {
                        label: Cow::Borrowed("split"),
                        kernel: Cow::Borrowed("s"),
                        then: Vec::new(),
                        per_item: [px, py],
                        split: true,
                        origin: false,
                        ..BASE
                    };
                    let global = [gx, gy];
                    let inner = [lo..gx.saturating_sub(hi), lo.min(gy)..gy.saturating_sub(hi)];
                    let cands = [BASE, c.clone()];
                    let ls = Device::launches(&cands, &c, &global, &None, Some(&inner), 256);
                    let mut hits = vec![vec![0; gy]; gx];
                    let mut interior = Vec::new();
                    for l in &ls {
                        let p = if l.kernel == "s" { [px, py] } else { [1, 1] };
                        let rounded: Vec<usize> = match &l.local {
                            Some(loc) => (0..2)
                                .map(|d| l.global[d].div_ceil(loc[d]) * loc[d])
                                .collect(),
                            None => l.global.clone(),
                        };
                        for ix in 0..rounded[0] {
                            for iy in 0..rounded[1] {
                                let extra = ix >= l.global[0] || iy >= l.global[1];
                                for (qx, qy) in
                                    (0..p[0]).flat_map(|a| (0..p[1]).map(move |b| (a, b)))
                                {
                                    let x = (l.offset[0] + ix) * p[0] + qx;
                                    let y = (l.offset[1] + iy) * p[1] + qy;
                                    if x >= gx || y >= gy {
                                        continue;
                                    }
                                    if l.kernel == "s" {
                                        assert!(
                                            !extra || l.ends,
                                            "the interior kernel checks its end"
                                        );
                                        if !extra {
                                            interior.push((x, y));
                                        }
                                    } else if extra {
                                        assert!(
                                            !interior.contains(&(x, y)),
                                            "{global:?} {inner:?} {ls:?}: rounding reaches ({x}, {y})"
                                        );
                                    }
                                    if !extra {
                                        hits[x][y] += 1;
                                    }
                                }
                            }
                        }
                    }
                    for (x, col) in hits.iter().enumerate() {
                        for (y, h) in col.iter().enumerate() {
                            assert_eq!(
                                *h,
                                1,
                                "{global:?} {:?} {inner:?}: ({x}, {y}) in {ls:?}",
                                [px, py]
                            );
                            if interior.contains(&(x, y)) {
                                assert!(inner[0].contains(&x) && inner[1].contains(&y));
                            }
                        }
                    }
                }
            }
        }
    }
}
