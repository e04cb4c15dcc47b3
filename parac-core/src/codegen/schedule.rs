//! A region's schedule as data: a list of [`Directive`]s, each one transform a candidate kernel
//! applies. The optimization model (`plan.rs`) ranks schedules; the printers and the runtime
//! read them; labels name them in `PARAC_PLAN`, the plan cache and kernel names.

/// One transform of a region's plan. Its label part is given with each variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Directive {
    /// Several iteration points per work-item: `cols` adjacent columns (`h<cols>`) by `rows`
    /// adjacent rows (`v<rows>`), as vector lanes; a tail path handles a partial strip.
    Lanes {
        /// Adjacent columns (1: none).
        cols: u32,
        /// Adjacent rows (1: none).
        rows: u32,
    },
    /// A work-item's points (its `h<cols>` lanes along a row, and `v<rows>` rows) slide their
    /// windows' reductions as `lir::pass::slide` does on the CPU (`slide`): column reductions
    /// in a private array, each output from its columns, sums carried down the rows.
    Slide,
    /// Constant windows unrolled, constant filters folded into the code (`unroll`).
    Unroll,
    /// Loads of one element by several lanes done once and hoisted (`cse`).
    ShareLoads,
    /// Those loads, where adjacent in a row, as vector loads, the lanes' stores as one vector
    /// store (`vmem`).
    VectorMemory,
    /// Range-proven peephole rewrites: shifts, masks, `clamp`, `abs` (`peep`).
    Peephole,
    /// `mul24`/`mad24` where the operands are proven to fit 24 bits (`m24`).
    Mul24,
    /// Loop partitioning: the kernel runs the interior box only, the baseline the border strips
    /// (`split`).
    SplitBorder,
    /// Local-memory tiles for a work-group of `cols` by `rows` work-items (`lds<cols>x<rows>`).
    LocalTile {
        /// Work-items along OpenCL dimension 0.
        cols: u32,
        /// Work-items along dimension 1.
        rows: u32,
    },
    /// A tree reduction over a work-group of `group` work-items (`tree<group>`).
    TreeReduce {
        /// The work-group size.
        group: u32,
    },
    /// Time tiling of a `parac_repeat`'s step (`time<steps>_<cols>x<rows>`): one launch runs
    /// `steps` time steps, each work-group of [`TIME_GROUP`] computing a tile of `cols` x
    /// `rows` points of the last step from the points the earlier steps need, in local memory
    /// (`lir::pass::fuse::time::gpu`).
    TimeBand {
        /// Time steps per launch.
        steps: u32,
        /// The tile's columns (a multiple of `TIME_GROUP[0]`).
        cols: u32,
        /// Its rows (a multiple of `TIME_GROUP[1]`).
        rows: u32,
    },
    /// Split tiling of a `parac_repeat`'s step (`tsplit<steps>_<cols>x<rows>`): one band of
    /// `steps` time steps (odd) runs as four launches, the phases of split tiling in rows and
    /// columns, each work-group of [`TIME_GROUP`] owning a tile of `cols` x `rows` points, in
    /// place in global memory (`lir::pass::fuse::time::gpu::run_split`).
    TimeSplit {
        /// Time steps per band.
        steps: u32,
        /// The tile's columns (a multiple of `TIME_GROUP[0]`).
        cols: u32,
        /// Its rows (a multiple of `TIME_GROUP[1]`).
        rows: u32,
    },
    /// Fusion across stages (`fuse<cols>x<rows>`): the region's producer computed by its
    /// consumer's work-groups of [`TIME_GROUP`], each for the points of the intermediate its
    /// tile of `cols` x `rows` consumer points reads, in local memory, then the tile's consumer
    /// points; the consumer's run is skipped (`lir::pass::fuse::gpu`).
    Fuse {
        /// The consumer tile's columns (a multiple of `TIME_GROUP[0]`).
        cols: u32,
        /// Its rows (a multiple of `TIME_GROUP[1]`).
        rows: u32,
    },
    /// The region's consumer with the region's point inlined at each of its reads of the
    /// intermediate (`inline`; Halide's inlined producer: the intermediate never stored); the
    /// kernel runs the consumer's space, the consumer's run is skipped
    /// (`lir::pass::fuse::gpu::inline`).
    FuseInline,
    /// Fusion across stages per work-item (`fuseitem<cols>x<rows>`): each work-item computes a
    /// tile of `rows` rows and `cols` columns of the consumer from the producer's points it
    /// reads, in private memory (no local memory, no barrier: a CPU device's, whose compiler
    /// vectorizes the tile's rows), the consumer's run skipped
    /// (`lir::pass::fuse::gpu::run_items`).
    FuseItems {
        /// The consumer's columns per work-item.
        cols: u32,
        /// Its rows.
        rows: u32,
    },
}

/// The work-group of a [`Directive::TimeBand`], [`Directive::TimeSplit`] or
/// [`Directive::Fuse`] plan (dimension 0 first).
pub const TIME_GROUP: [u32; 2] = [16, 8];

impl Directive {
    /// The label part, `None` for lanes of one column and one row.
    fn label(self) -> Option<String> {
        Some(match self {
            Directive::Lanes { cols, rows } => {
                let mut p = Vec::new();
                if cols > 1 {
                    p.push(format!("h{cols}"));
                }
                if rows > 1 {
                    p.push(format!("v{rows}"));
                }
                if p.is_empty() {
                    return None;
                }
                p.join("+")
            }
            Directive::Slide => "slide".into(),
            Directive::Unroll => "unroll".into(),
            Directive::ShareLoads => "cse".into(),
            Directive::VectorMemory => "vmem".into(),
            Directive::Peephole => "peep".into(),
            Directive::Mul24 => "m24".into(),
            Directive::SplitBorder => "split".into(),
            Directive::LocalTile { cols, rows } => format!("lds{cols}x{rows}"),
            Directive::TreeReduce { group } => format!("tree{group}"),
            Directive::TimeBand { steps, cols, rows } => format!("time{steps}_{cols}x{rows}"),
            Directive::TimeSplit { steps, cols, rows } => format!("tsplit{steps}_{cols}x{rows}"),
            Directive::Fuse { cols, rows } => format!("fuse{cols}x{rows}"),
            Directive::FuseInline => "inline".into(),
            Directive::FuseItems { cols, rows } => format!("fuseitem{cols}x{rows}"),
        })
    }

    /// Whether `self` and `other` are the same kind of directive (whatever their parameters).
    fn same_kind(self, other: Directive) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }
}

/// One plan for one region: its directives, at most one of each kind, in a canonical order
/// (so that two schedules with the same directives are equal and have one label). The empty
/// list is the baseline: one work-item per iteration point.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Schedule {
    directives: Vec<Directive>,
}

impl Schedule {
    /// The baseline plan: one work-item per iteration point, nothing else.
    pub fn baseline() -> Schedule {
        Schedule::default()
    }

    /// This schedule with directive `d` (replacing one of its kind).
    pub fn with(mut self, d: Directive) -> Schedule {
        self.directives.retain(|x| !x.same_kind(d));
        if d != (Directive::Lanes { cols: 1, rows: 1 }) {
            self.directives.push(d);
            self.directives.sort();
        }
        self
    }

    /// This schedule with directive `d` where `on`.
    pub fn with_if(self, on: bool, d: Directive) -> Schedule {
        if on { self.with(d) } else { self }
    }

    /// This schedule without directives of `d`'s kind.
    pub fn without(mut self, d: Directive) -> Schedule {
        self.directives.retain(|x| !x.same_kind(d));
        self
    }

    /// The directives, in their canonical order.
    pub fn directives(&self) -> &[Directive] {
        &self.directives
    }

    /// Whether it has a directive of `d`'s kind.
    pub fn has(&self, d: Directive) -> bool {
        self.directives.iter().any(|x| x.same_kind(d))
    }

    /// Whether this is the baseline plan.
    pub fn is_baseline(&self) -> bool {
        self.directives.is_empty()
    }

    /// The label, e.g. `h4+unroll+cse+vmem`: the directives' parts in order, `baseline` for
    /// none. Labels name candidates in kernels, in the plan cache and in `PARAC_PLAN`.
    pub fn label(&self) -> String {
        let p: Vec<String> = self.directives.iter().filter_map(|d| d.label()).collect();
        if p.is_empty() {
            "baseline".to_string()
        } else {
            p.join("+")
        }
    }

    fn lanes_of(&self) -> (u32, u32) {
        self.directives
            .iter()
            .find_map(|d| match d {
                Directive::Lanes { cols, rows } => Some((*cols, *rows)),
                _ => None,
            })
            .unwrap_or((1, 1))
    }

    /// Adjacent columns per work-item (1: none).
    pub fn cols(&self) -> u32 {
        self.lanes_of().0
    }

    /// Adjacent rows per work-item (1: none).
    pub fn rows(&self) -> u32 {
        self.lanes_of().1
    }

    /// Whether lanes (several iteration points per work-item) are used.
    pub fn lanes(&self) -> bool {
        self.cols() > 1 || self.rows() > 1
    }

    /// [`Directive::Slide`].
    pub fn slide(&self) -> bool {
        self.has(Directive::Slide)
    }

    /// [`Directive::Unroll`].
    pub fn unroll(&self) -> bool {
        self.has(Directive::Unroll)
    }

    /// [`Directive::ShareLoads`].
    pub fn cse(&self) -> bool {
        self.has(Directive::ShareLoads)
    }

    /// [`Directive::VectorMemory`].
    pub fn vmem(&self) -> bool {
        self.has(Directive::VectorMemory)
    }

    /// [`Directive::Peephole`].
    pub fn peep(&self) -> bool {
        self.has(Directive::Peephole)
    }

    /// [`Directive::Mul24`].
    pub fn m24(&self) -> bool {
        self.has(Directive::Mul24)
    }

    /// [`Directive::SplitBorder`].
    pub fn split(&self) -> bool {
        self.has(Directive::SplitBorder)
    }

    /// The local tile's work-group size ([`Directive::LocalTile`]).
    pub fn lds(&self) -> Option<(u32, u32)> {
        self.directives.iter().find_map(|d| match d {
            Directive::LocalTile { cols, rows } => Some((*cols, *rows)),
            _ => None,
        })
    }

    /// The tree reduction's work-group size ([`Directive::TreeReduce`]).
    pub fn tree(&self) -> Option<u32> {
        self.directives.iter().find_map(|d| match d {
            Directive::TreeReduce { group } => Some(*group),
            _ => None,
        })
    }

    /// The time band ([`Directive::TimeBand`]): time steps per launch, and the tile's columns
    /// and rows.
    pub fn time_band(&self) -> Option<(u32, [u32; 2])> {
        self.directives.iter().find_map(|d| match d {
            Directive::TimeBand { steps, cols, rows } => Some((*steps, [*cols, *rows])),
            _ => None,
        })
    }

    /// The split band ([`Directive::TimeSplit`]): time steps per band, and the tile's columns
    /// and rows.
    pub fn time_split(&self) -> Option<(u32, [u32; 2])> {
        self.directives.iter().find_map(|d| match d {
            Directive::TimeSplit { steps, cols, rows } => Some((*steps, [*cols, *rows])),
            _ => None,
        })
    }

    /// The fused consumer's tile ([`Directive::Fuse`]): its columns and rows.
    pub fn fuse_tile(&self) -> Option<[u32; 2]> {
        self.directives.iter().find_map(|d| match d {
            Directive::Fuse { cols, rows } => Some([*cols, *rows]),
            _ => None,
        })
    }

    /// Whether the region's consumer runs in its kernel, the region's point inlined
    /// ([`Directive::FuseInline`]).
    pub fn fuse_inline(&self) -> bool {
        self.has(Directive::FuseInline)
    }

    /// A work-item's tile (columns, rows) of the fused consumer ([`Directive::FuseItems`]).
    pub fn fuse_item_tile(&self) -> Option<[u32; 2]> {
        self.directives.iter().find_map(|d| match d {
            Directive::FuseItems { cols, rows } => Some([*cols, *rows]),
            _ => None,
        })
    }

    /// Whether the plan runs the region's consumer too: fused tiles, a work-item's rows or an
    /// inlined producer.
    pub fn fuses(&self) -> bool {
        self.fuse_tile().is_some() || self.fuse_item_tile().is_some() || self.fuse_inline()
    }

    /// The tile of a plan whose work-groups of [`TIME_GROUP`] own tiles: a time band's, a
    /// split band's or a fused plan's.
    fn group_tile(&self) -> Option<[u32; 2]> {
        self.time_band()
            .or(self.time_split())
            .map(|(_, t)| t)
            .or(self.fuse_tile())
    }

    /// Time steps one run of this plan's launches makes (1 but for a time band or split band).
    pub fn steps(&self) -> usize {
        self.time_band()
            .or(self.time_split())
            .map_or(1, |(k, _)| k as usize)
    }

    /// Iteration points per work-item along OpenCL dimensions 0 and 1: its lanes, or a time
    /// band's, split band's or fused plan's tile shared by its work-group.
    pub fn per_item(&self) -> [usize; 2] {
        match (self.group_tile(), self.fuse_item_tile()) {
            (Some(tile), _) => [0, 1].map(|d| (tile[d] / TIME_GROUP[d]).max(1) as usize),
            (None, Some(tile)) => tile.map(|t| t as usize),
            (None, None) => [self.cols() as usize, self.rows() as usize],
        }
    }

    /// The fixed work-group size this plan needs (local tiles, trees, time bands, fusion), as
    /// OpenCL sizes (dimension 0 first).
    pub fn local_size(&self) -> Option<Vec<usize>> {
        if let Some((x, y)) = self.lds() {
            return Some(vec![x as usize, y as usize]);
        }
        if self.group_tile().is_some() {
            return Some(TIME_GROUP.map(|g| g as usize).to_vec());
        }
        if self.fuse_item_tile().is_some() {
            // Each work-item its own group: its tile is a CPU device's loop, and a group of
            // many would hold as many private tiles.
            return Some(vec![1, 1]);
        }
        self.tree().map(|l| vec![l as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_the_canonical_order() {
        let s = Schedule::baseline()
            .with(Directive::SplitBorder)
            .with(Directive::Peephole)
            .with(Directive::Lanes { cols: 8, rows: 2 })
            .with(Directive::Unroll);
        assert_eq!(s.label(), "h8+v2+unroll+peep+split");
        assert_eq!((s.cols(), s.rows()), (8, 2));
        // One directive of a kind: a second replaces the first.
        let s = s.with(Directive::Lanes { cols: 4, rows: 1 });
        assert_eq!(s.label(), "h4+unroll+peep+split");
        assert_eq!(
            Schedule::baseline().with(Directive::Lanes { cols: 1, rows: 1 }),
            Schedule::baseline()
        );
        assert_eq!(Schedule::baseline().label(), "baseline");
        let t = Schedule::baseline().with(Directive::TreeReduce { group: 64 });
        assert_eq!(
            (t.label(), t.local_size()),
            ("tree64".into(), Some(vec![64]))
        );
        assert_eq!(s.without(Directive::SplitBorder).label(), "h4+unroll+peep");
    }
}
