//! A region's schedule as data: the [`Variant`] of the OpenCL back end (which transforms a
//! candidate kernel applies). The optimization model (`plan.rs`) ranks them; the printers and
//! the runtime read them; labels name them in `PARAC_PLAN`, the plan cache and kernel names.

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
    /// Loop partitioning: the kernel runs the interior box only, the baseline the border strips.
    pub split: bool,
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
            (self.split, "split"),
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
