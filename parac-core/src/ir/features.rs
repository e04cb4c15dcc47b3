//! What the feature analysis (the paper's Algorithm 2) records about each parallel region: its
//! class, its parallel dimensions, and per matrix how one iteration reads or writes it (which
//! elements, relative to the index variables) and whether neighbouring work-items share data.
//! The optimization model (Algorithm 1) decides vectorization, local memory and tree
//! reductions from these facts alone.
//!
//! Directions follow the OpenCL mapping of the back end: the last non-empty iteration slot is
//! OpenCL dimension 0, the *horizontal* one (neighbouring work-items read neighbouring columns);
//! the non-empty slot before it is the *vertical* one.

use super::MatrixId;

/// The features of one region, [`Region::features`](super::Region::features).
///
/// `Default` is the value of a region the analysis has not run on (no dimension, no matrix).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Features {
    /// What kind of parallel work the region is.
    pub class: RegionClass,
    /// The number of non-empty iteration slots (the paper's `ParDim`); the global size of each
    /// is given by [`Region::dims`](super::Region::dims).
    pub par_dim: usize,
    /// The horizontal slot: the last non-empty one (OpenCL dimension 0).
    pub h_slot: Option<usize>,
    /// The vertical slot: the non-empty slot before the horizontal one, if any.
    pub v_slot: Option<usize>,
    /// How each matrix is used: one entry for its reads and one for its writes (when it has
    /// any), ordered by matrix, reads first.
    pub matrices: Vec<MatrixUse>,
}

/// What kind of parallel work a region is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum RegionClass {
    /// Elementwise: every matrix that is not a constant table is touched at one element per
    /// plane per iteration, at affine subscripts, and no two neighbouring work-items touch the
    /// same element (no reuse to exploit, nothing to stage in local memory).
    #[default]
    Point,
    /// Some matrix is read or written as a block per iteration (a window, several offsets, or
    /// subscripts that are not affine, which may touch any neighbourhood), or neighbouring
    /// work-items read overlapping data.
    LocalBlock,
    /// A global operator: a reduction of a whole matrix to one host scalar
    /// ([`RegionKind::Reduction`](super::RegionKind::Reduction)).
    Global,
}

impl RegionClass {
    /// `point`, `local-block`, `global`.
    pub fn name(self) -> &'static str {
        match self {
            RegionClass::Point => "point",
            RegionClass::LocalBlock => "local-block",
            RegionClass::Global => "global",
        }
    }
}

/// The subscripts of one dimension of a matrix, over all the accesses of a [`MatrixUse`], as
/// `coef * var + c` with `c` in `min..=max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AxisUse {
    /// The iteration slot whose index variable the subscripts follow; `None` for constant
    /// subscripts (`img[0][x][y]`'s plane, a constant table).
    pub var: Option<usize>,
    /// The coefficient of the variable (2 for `h[2*it1x-2:5:1]`: a downsample); 0 when `var`
    /// is `None`.
    pub coef: i64,
    /// The smallest offset read or written (a window counts from its first to its last element).
    pub min: i64,
    /// The largest offset.
    pub max: i64,
}

impl AxisUse {
    /// The number of positions from `min` to `max`.
    pub fn span(&self) -> u64 {
        self.max.abs_diff(self.min) + 1
    }
}

/// How one iteration of a region reads (or writes) one matrix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatrixUse {
    /// The matrix.
    pub matrix: MatrixId,
    /// True: the writes (definitions) of the matrix; false: its reads (uses).
    pub def: bool,
    /// The matrix is a constant table (`const`, in constant memory and the same for every
    /// work-item): it does not decide the region's class and no reuse is reported for it.
    pub constant: bool,
    /// The number of accesses (entries of the region's access table) this entry summarizes.
    pub accesses: u32,
    /// Distinct elements touched per iteration, planes included (an upper bound where subscripts
    /// are not affine, or where a footprint of more than 65536 elements is approximated by its
    /// bounding box; accesses in both branches of an `if` all count).
    pub elems: u32,
    /// The paper's *chunk*: an iteration touches more than one element of the matrix's rows and
    /// columns (a window, or point accesses at different offsets); false: *point*. Planes
    /// selected by constant leading subscripts (`img[0][x][y]`, `img[1][x][y]`) do not count.
    pub chunk: bool,
    /// Every subscript of every access is `coef * var + c` in at most one index variable, with
    /// the same variable and coefficient in all the accesses, and `c` independent of the sizes
    /// (evaluated through the kernel's `let`s). False marks a *gather*: floor divisions and
    /// clamps of upsampling (`down[it2x / 2]`), indices read from data or host parameters.
    pub affine: bool,
    /// Per dimension of the matrix (outermost first), the subscripts as an [`AxisUse`]; `None`
    /// where they are not uniformly affine.
    pub axes: Vec<Option<AxisUse>>,
    /// Horizontal reuse: the most elements that two work-items along the horizontal slot both
    /// touch (0: none). For contiguous footprints these are neighbours: 2 for
    /// `src[itx][ity-1:3:1]`; `src[itx][ity-2:3:2]` shares nothing with its neighbour but 2
    /// elements with the work-item after it. A matrix whose subscripts do not follow the slot
    /// is read whole by every work-item along it: all its elements count.
    pub h_reuse_len: u32,
    /// Vertical reuse: the same along the vertical slot.
    pub v_reuse_len: u32,
}

impl MatrixUse {
    /// The column subscripts: the last dimension.
    pub fn col(&self) -> Option<&AxisUse> {
        self.axes.last()?.as_ref()
    }

    /// The row subscripts: the dimension before the last (`None` for a vector).
    pub fn row(&self) -> Option<&AxisUse> {
        let n = self.axes.len();
        self.axes.get(n.checked_sub(2)?)?.as_ref()
    }

    /// Work-items along the horizontal slot touch overlapping data (the paper's `HReuse`).
    pub fn h_reuse(&self) -> bool {
        self.h_reuse_len > 0
    }

    /// Work-items along the vertical slot touch overlapping data (`VReuse`).
    pub fn v_reuse(&self) -> bool {
        self.v_reuse_len > 0
    }
}

impl Features {
    /// The entry for the reads (`def == false`) or writes of a matrix.
    pub fn use_of(&self, matrix: MatrixId, def: bool) -> Option<&MatrixUse> {
        self.matrices
            .iter()
            .find(|u| u.matrix == matrix && u.def == def)
    }
}
