//! The high-level IR (the paper's HAST): names resolved, every expression typed, every parallel
//! region with its dimensions, global size, accesses and border rules.

mod border;
pub mod display;
mod features;
mod types;

pub use crate::syntax::ast::{BinOp, Sel, UnOp};
pub use border::{BorderMode, Shorthand};
pub use features::{AxisUse, Features, MatrixUse, RegionClass};
pub use types::{Len, Scalar, Type};

use crate::diag::Sp;

/// Index of a matrix in [`Function::matrices`].
pub type MatrixId = usize;
/// Index of a host scalar in [`Function::scalars`].
pub type ScalarId = usize;
/// Index of a size symbol in [`Function::sizes`].
pub type SizeId = usize;
/// Index of a region in [`Function::regions`].
pub type RegionId = usize;
/// Index of a border rule in [`Function::rules`].
pub type RuleId = usize;
/// Index of an access in the access table of its region or border entry.
pub type AccessId = usize;
/// Index of a kernel-local value in [`Region::locals`].
pub type LocalId = usize;

/// Everything one `parac!` invocation defines.
#[derive(Debug, Default)]
pub struct Module {
    /// The pipeline functions.
    pub functions: Vec<Function>,
}

/// One pipeline function.
#[derive(Debug)]
pub struct Function {
    /// Its name.
    pub name: String,
    /// Its signature.
    pub span: Sp,
    /// Size symbols (`M`, `N`, ...), bound at run time from the arguments.
    pub sizes: Vec<SizeSym>,
    /// Parameters, locals and constants.
    pub matrices: Vec<Matrix>,
    /// Scalar parameters, host `let`s and results of global operators.
    pub scalars: Vec<HostScalar>,
    /// Border rules, shorthands desugared.
    pub rules: Vec<BorderRule>,
    /// The parallel regions: iterators and global operators.
    pub regions: Vec<Region>,
    /// What the host does, in program order.
    pub steps: Vec<HostStep>,
    /// The return type, if the function returns a scalar.
    pub ret: Option<Scalar>,
    /// The parameters in order: matrices and scalars.
    pub params: Vec<ParamRef>,
    /// The window lengths that are host expressions or constants past 64 (`Len::Host`).
    pub lens: Vec<HostLen>,
}

/// A window length given by a host expression (`Len::Host`).
#[derive(Debug, Clone)]
pub struct HostLen {
    /// The integer expression, of sizes, host scalars and constants.
    pub expr: Expr,
    /// As written (one entry per text).
    pub text: String,
}

/// A parameter of the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamRef {
    /// A matrix parameter.
    Matrix(MatrixId),
    /// A scalar parameter.
    Scalar(ScalarId),
}

/// A size symbol and where its value comes from.
#[derive(Debug)]
pub struct SizeSym {
    /// `M`.
    pub name: String,
    /// The matrix parameter and dimension that binds it.
    pub bound_by: (MatrixId, usize),
}

/// What a matrix is.
#[derive(Clone, Debug, PartialEq)]
pub enum MatrixKind {
    /// `&T[..]`: read only.
    Input,
    /// `&mut T[..]`: written, returned to the caller.
    Output,
    /// `let m: T[..];`: an intermediate.
    Local,
    /// `const M: T[..] = ...;` with its values, row-major.
    Const(Vec<f64>),
}

/// A matrix (or vector) of 1 to 3 dimensions.
#[derive(Debug)]
pub struct Matrix {
    /// Its name.
    pub name: String,
    /// Its element type.
    pub elem: Scalar,
    /// Its dimensions (expressions of sizes and constants), outermost first.
    pub dims: Vec<Expr>,
    /// What it is.
    pub kind: MatrixKind,
    /// Where it was declared.
    pub span: Sp,
}

/// A scalar known on the host.
#[derive(Debug)]
pub struct HostScalar {
    /// Its name (`__sum_edge` for an anonymous global operator result).
    pub name: String,
    /// Its type.
    pub ty: Scalar,
    /// Where its value comes from.
    pub kind: HostScalarKind,
}

/// Where a host scalar comes from.
#[derive(Debug, PartialEq, Eq)]
pub enum HostScalarKind {
    /// A parameter.
    Param,
    /// A host `let`.
    Let,
    /// The result of a global operator region.
    Reduction(RegionId),
}

/// A host step, in program order.
#[derive(Debug)]
pub enum HostStep {
    /// Run a parallel region.
    Run(RegionId),
    /// Compute a host scalar.
    Let(ScalarId, Expr),
    /// Return a value.
    Return(Expr),
    /// `parac_repeat(count) { .. }`: run `body` `count` times (none when `count <= 0`).
    Repeat {
        /// The number of time steps, an `i64` host expression evaluated once, before the first.
        count: Expr,
        /// One time step: runs and swaps.
        body: Vec<HostStep>,
        /// `parac_schedule(..)`: what the program asks of the CPU path's time tiling.
        schedule: RepeatSchedule,
    },
    /// `parac_swap(a, b)`: the two matrices (locals or outputs of one element type and shape)
    /// exchange their contents. Back ends exchange storage, not elements; an output whose
    /// contents are in another matrix's storage when the function ends is copied home then
    /// ([`Function::swap_groups`]).
    Swap(MatrixId, MatrixId),
}

/// A `parac_repeat`'s schedule directive (`parac_schedule(band = 8, rows = 16)`): unset
/// values are the compiler's choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RepeatSchedule {
    /// Time steps per band of the CPU path's time tiling (1: step by step).
    pub band: Option<i64>,
    /// Rows of a band's task.
    pub rows: Option<i64>,
    /// Split tiling (`Some(true)`: no point computed twice) or overlapped tiles
    /// (`Some(false)`).
    pub split: Option<bool>,
}

impl Function {
    /// Every host step in program order, those inside `parac_repeat` included (after the
    /// repeat itself), with how many repeats enclose it.
    pub fn each_step(&self, mut visit: impl FnMut(&HostStep, usize)) {
        fn walk(steps: &[HostStep], depth: usize, visit: &mut impl FnMut(&HostStep, usize)) {
            for s in steps {
                visit(s, depth);
                if let HostStep::Repeat { body, .. } = s {
                    walk(body, depth + 1, visit);
                }
            }
        }
        walk(&self.steps, 0, &mut visit);
    }

    /// The time step region `rid` begins: the regions a `parac_repeat`'s body runs before its
    /// first other step (`rid` first, in order) and the repeat's schedule; `None` where `rid`
    /// begins no repeat's body. What a time band runs (`lir::pass::fuse::time::gpu`).
    pub fn time_step(&self, rid: RegionId) -> Option<(Vec<RegionId>, RepeatSchedule)> {
        self.steps.iter().find_map(|s| {
            let HostStep::Repeat { body, schedule, .. } = s else {
                return None;
            };
            let runs: Vec<RegionId> = body
                .iter()
                .map_while(|s| match s {
                    HostStep::Run(r) => Some(*r),
                    _ => None,
                })
                .collect();
            (runs.first() == Some(&rid)).then_some((runs, *schedule))
        })
    }

    /// The regions a fused plan of iterator region `rid` may run with it, in order: the host
    /// step right after `rid`'s run, at the function's top level, when it runs an iterator that
    /// reads a matrix `rid` writes; and the step after that one too when it runs an iterator
    /// that reads a matrix `rid` or that first one writes (a producer with two consumers,
    /// unsharp's `gray`, or the first of three stages in a row, blur -> blur -> difference,
    /// fused with both: `lir::pass::fuse::gpu::chain`). `lir::pass::fuse::gpu` decides whether
    /// they can be fused and which of them its plans run (`gpu::Fused::consumers`: both, or the
    /// first alone); a region's kernels take all their matrices and host scalars, and the executor
    /// skips the runs of those a fused plan ran.
    pub fn fused_consumers(&self, rid: RegionId) -> Vec<RegionId> {
        let Some(at) = self
            .steps
            .iter()
            .position(|s| matches!(s, HostStep::Run(r) if *r == rid))
        else {
            return Vec::new();
        };
        let feeds = |p: RegionId, step: Option<&HostStep>| {
            let Some(HostStep::Run(c)) = step else {
                return None;
            };
            let (p, cr) = (&self.regions[p], &self.regions[*c]);
            // Reductions into shared elements and scans run alone.
            let iterators = [p, cr].iter().all(|r| {
                matches!(r.kind, RegionKind::Iterator) && r.updates.is_empty() && r.prefixes == 0
            });
            let reads = |m: MatrixId| cr.accesses.iter().any(|a| !a.write && a.matrix == m);
            let feeds = p.accesses.iter().any(|a| a.write && reads(a.matrix));
            (iterators && feeds).then_some(*c)
        };
        let Some(first) = feeds(rid, self.steps.get(at + 1)) else {
            return Vec::new();
        };
        let mut out = vec![first];
        let next = self.steps.get(at + 2);
        out.extend(feeds(rid, next).or_else(|| feeds(first, next)));
        out
    }

    /// Per matrix: whether a `parac_swap` names it (its storage changes during the call).
    pub fn swapped(&self) -> Vec<bool> {
        let mut out = vec![false; self.matrices.len()];
        self.each_step(|s, _| {
            if let HostStep::Swap(a, b) = s {
                out[*a] = true;
                out[*b] = true;
            }
        });
        out
    }

    /// The matrices that swaps connect, each group in increasing order (one element type and
    /// shape per group): the storages a group's names move between.
    pub fn swap_groups(&self) -> Vec<Vec<MatrixId>> {
        let mut group: Vec<usize> = (0..self.matrices.len()).collect();
        fn root(g: &mut [usize], mut m: usize) -> usize {
            while g[m] != m {
                g[m] = g[g[m]];
                m = g[m];
            }
            m
        }
        self.each_step(|s, _| {
            if let HostStep::Swap(a, b) = s {
                let (ra, rb) = (root(&mut group, *a), root(&mut group, *b));
                group[ra.max(rb)] = ra.min(rb);
            }
        });
        let swapped = self.swapped();
        let mut out: Vec<Vec<MatrixId>> = Vec::new();
        let mut index = vec![usize::MAX; self.matrices.len()];
        for m in (0..self.matrices.len()).filter(|m| swapped[*m]) {
            let r = root(&mut group, m);
            if index[r] == usize::MAX {
                index[r] = out.len();
                out.push(vec![]);
            }
            out[index[r]].push(m);
        }
        out
    }
}

/// A border rule: values of positions outside one or more matrices.
#[derive(Debug)]
pub struct BorderRule {
    /// Its name.
    pub name: String,
    /// Where it was declared.
    pub span: Sp,
    /// Its entries.
    pub entries: Vec<BorderEntry>,
    /// The shorthand it was desugared from (`replicate(src[1][1])`, ...), if any.
    pub shorthand: Option<Shorthand>,
    /// Lowering reported an error in this rule (some entries are missing); the border checks
    /// of iterators using it are skipped to avoid a cascade.
    pub incomplete: bool,
}

/// `m[sel][sel] = value`.
#[derive(Debug)]
pub struct BorderEntry {
    /// The matrix.
    pub matrix: MatrixId,
    /// One selector per dimension.
    pub sels: Vec<Sel>,
    /// The value; its loads are in `accesses`.
    pub value: Expr,
    /// Reads of the matrix (`Sub::Star` stands for the index of the access).
    pub accesses: Vec<Access>,
    /// Where it was written.
    pub span: Sp,
}

/// A parallel region.
#[derive(Debug)]
pub struct Region {
    /// The iterator's name, or `sum_edge`-like for a global operator.
    pub name: String,
    /// Where it was written.
    pub span: Sp,
    /// Iterator or global operator.
    pub kind: RegionKind,
    /// The iteration dimensions by slot (`None` for an empty slot).
    pub dims: Vec<Option<IterDim>>,
    /// The body (empty for a global operator).
    pub body: Vec<KStmt>,
    /// Every access of every matrix.
    pub accesses: Vec<Access>,
    /// Kernel-local values.
    pub locals: Vec<Local>,
    /// Border rules in force.
    pub rules: Vec<RuleId>,
    /// Filled by the checks, parallel to `accesses`: how far each access reaches outside its
    /// matrix per dimension, as (before the first, after the last); `None` when an index
    /// depends on data.
    pub reach: Vec<Option<Vec<(u32, u32)>>>,
    /// Filled by the feature analysis after the checks ([`crate::analysis`]): the region's
    /// class, parallel dimensions and per-matrix access patterns and reuse.
    pub features: Features,
    /// Whether the CPU path may compute this region in its consumer's tasks where legal
    /// (`lir::pass::fuse`; `parac_schedule(fuse = 0)`: never, the intermediate stored whole).
    pub fuse: bool,
    /// Whether its point is computed at each read of its readers (Halide's `compute_inline`,
    /// `lir::pass::fuse`'s `inline`): `parac_schedule(inline = 1)` on the CPU path wherever
    /// legal, `inline = 0` never (on OpenCL neither: no `inline` plan); `None`, the default:
    /// the CPU path inlines a cheap point stage, OpenCL's search times the `inline` plan.
    pub inline: Option<bool>,
    /// Whether the CPU path's fused buffers of this producer are folded to rings of the rows
    /// its readers still need (storage folding, Halide's sliding window; `lir::pass::fuse`'s
    /// `fold`): `parac_schedule(fold = 1)` yes, `fold = 0` no; `None`, the default:
    /// `lir::Options::fuse_fold` (on).
    pub fold: Option<bool>,
    /// Filled by lowering: every `m[..] op= e` (and `m[..] = min(m[..], e)`, `max`) of a single
    /// element, a reduction should iterations share the element.
    pub compound: Vec<Update>,
    /// Filled by lowering: the prefixes of the body ([`ExprKind::Prefix`]), by id.
    pub prefixes: usize,
    /// Filled by the checks: the updates of [`Region::compound`] whose element several
    /// iterations may share (an index from data, or one the samples show shared): reductions,
    /// run so that no update is lost ([`Update`]).
    pub updates: Vec<Update>,
}

/// `m[i] = m[i] op e` as a reduction into the element: every iteration's update is applied,
/// whatever the order they run in. Integer updates (`+ - | & ^ min max`, the value an
/// integer of the element's type after conversion) give one result in any order; a float
/// update runs the iterations in order, as the interpreter does.
#[derive(Debug, Clone)]
pub struct Update {
    /// The store's access.
    pub write: AccessId,
    /// The read of the same element the update combines with.
    pub read: AccessId,
    /// How the value combines with the element.
    pub op: UpdateOp,
    /// The value combined (`e`, converted to the element type for the integer operators).
    pub value: Expr,
}

/// How an [`Update`] combines its value with the element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UpdateOp {
    /// `+=`.
    Add,
    /// `-=`.
    Sub,
    /// `|=`.
    Or,
    /// `&=`.
    And,
    /// `^=`.
    Xor,
    /// `m[i] = min(m[i], e)`.
    Min,
    /// `m[i] = max(m[i], e)`.
    Max,
}

impl UpdateOp {
    /// The compound operator of a binary operator.
    pub fn of(op: BinOp) -> Option<UpdateOp> {
        Some(match op {
            BinOp::Add => UpdateOp::Add,
            BinOp::Sub => UpdateOp::Sub,
            BinOp::BitOr => UpdateOp::Or,
            BinOp::BitAnd => UpdateOp::And,
            BinOp::BitXor => UpdateOp::Xor,
            _ => return None,
        })
    }

    /// How partial results of this update combine (a sum of `-=` updates is added).
    pub fn merge(self) -> UpdateOp {
        match self {
            UpdateOp::Sub => UpdateOp::Add,
            op => op,
        }
    }

    /// The partial result no update has changed yet, for integer type `t`: 0, all ones for
    /// `&=`, `t`'s largest value for `min`, its smallest for `max`.
    pub fn identity(self, t: Scalar) -> i128 {
        let (lo, hi) = t.range().unwrap_or((0, 0));
        match self {
            UpdateOp::Add | UpdateOp::Sub | UpdateOp::Or | UpdateOp::Xor => 0,
            UpdateOp::And if lo < 0 => -1,
            UpdateOp::And => hi,
            UpdateOp::Min => hi,
            UpdateOp::Max => lo,
        }
    }

    /// As written: `+=`, `min=`.
    pub fn text(self) -> &'static str {
        match self {
            UpdateOp::Add => "+=",
            UpdateOp::Sub => "-=",
            UpdateOp::Or => "|=",
            UpdateOp::And => "&=",
            UpdateOp::Xor => "^=",
            UpdateOp::Min => "= min(..)",
            UpdateOp::Max => "= max(..)",
        }
    }
}

/// What a region is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionKind {
    /// `parac_iterator`.
    Iterator,
    /// A global operator over a whole matrix; its result is a host scalar.
    Reduction {
        /// The operator.
        op: ReduceOp,
        /// The matrix reduced.
        matrix: MatrixId,
        /// Where the result goes.
        result: ScalarId,
    },
}

/// A reduction operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `parac_matrix_sum`.
    Sum,
    /// `parac_matrix_min`.
    Min,
    /// `parac_matrix_max`.
    Max,
    /// `parac_matrix_mean`.
    Mean,
}

impl ReduceOp {
    /// `sum`, `min`, `max`, `mean`.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::Mean => "mean",
        }
    }

    /// The update that combines as this reduction does (a sum or mean: `+=`; `min`, `max`).
    pub fn update(self) -> UpdateOp {
        match self {
            ReduceOp::Sum | ReduceOp::Mean => UpdateOp::Add,
            ReduceOp::Min => UpdateOp::Min,
            ReduceOp::Max => UpdateOp::Max,
        }
    }
}

impl Matrix {
    /// Its dimensions where every one is a positive constant (a lookup table's, a histogram's
    /// bins), outermost first.
    pub fn const_dims(&self) -> Option<Vec<i128>> {
        self.dims
            .iter()
            .map(|d| match d.kind {
                ExprKind::Int(v) if v > 0 => Some(v),
                _ => None,
            })
            .collect()
    }
}

/// One iteration dimension.
#[derive(Debug)]
pub struct IterDim {
    /// The index variable's name.
    pub var: String,
    /// Lower bound, inclusive (a host expression).
    pub lo: Expr,
    /// Upper bound, exclusive (a host expression).
    pub hi: Expr,
    /// Constant step, > 0.
    pub step: i64,
    /// Where it was written.
    pub span: Sp,
}

/// A kernel-local value.
#[derive(Debug)]
pub struct Local {
    /// Its name (hidden temporaries start with `__`).
    pub name: String,
    /// Its type.
    pub ty: Type,
}

/// A read or write of a matrix.
#[derive(Debug, Clone)]
pub struct Access {
    /// The matrix.
    pub matrix: MatrixId,
    /// True for a write.
    pub write: bool,
    /// One subscript per dimension.
    pub subs: Vec<Sub>,
    /// Where it was written.
    pub span: Sp,
}

/// A subscript.
#[derive(Debug, Clone)]
pub enum Sub {
    /// A single index.
    Point(Expr),
    /// `start:len:stride`.
    Window {
        /// First index.
        start: Expr,
        /// Number of elements.
        len: Len,
        /// Distance between elements (constant, > 0).
        stride: i64,
    },
    /// `*` in a border value: the index of the access being extended.
    Star,
}

/// A kernel statement.
#[derive(Debug)]
pub enum KStmt {
    /// Define a local.
    Let(LocalId, Expr),
    /// Store into a matrix (a write access).
    Store(AccessId, Expr),
    /// Branch.
    If(Expr, Vec<KStmt>, Vec<KStmt>),
}

/// A typed expression.
#[derive(Debug, Clone)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Its type.
    pub ty: Type,
    /// Where it was written.
    pub span: Sp,
}

/// A built-in scalar function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Builtin {
    /// `min(a, b)`.
    Min,
    /// `max(a, b)`.
    Max,
    /// `clamp(x, lo, hi)`.
    Clamp,
    /// `abs(x)`.
    Abs,
    /// `sqrt(x)`.
    Sqrt,
    /// `exp(x)`.
    Exp,
    /// `floor(x)`.
    Floor,
    /// `ceil(x)`.
    Ceil,
    /// `round(x)`.
    Round,
    /// `mul24(a, b)`: the product of two `int`s each proven to fit 24 bits, the product
    /// proven to fit 32 (no program names it: the LIR's `m24` pass writes it,
    /// `lir::pass::mul24`).
    Mul24,
    /// `nonzero(b)`: `b`, a divisor the host checks is not zero before the region runs (no
    /// program names it: the OpenCL lowering wraps such divisors, `lir::lower`, so that its
    /// kernels divide without a test; the LIR's evaluator still raises the division error).
    NonZero,
    /// `cache_bytes()`: the bytes of cache a CPU task may hold (the machine's second-level cache
    /// of a core and its share of the last level; no program names it: the CPU path's time
    /// tiling tests a task's rows against it when the repeat runs, `lir::pass::fuse::time`).
    /// Where no machine is asked (the interpreter, the LIR's evaluator), [`CACHE_BYTES`].
    CacheBytes,
    /// `fuses(bytes, span, stride, rows, row_bytes, height, r..)`: the rows of the CPU path's
    /// fused tasks, or 0 where its fused stages run apart (no program names it:
    /// `lir::pass::fuse` guards its fused steps with it, `bytes` the intermediates' size,
    /// `span` the rows of one a task recomputes, `stride` its rows per row of the task,
    /// `rows` the compiler's rows per task, `row_bytes` the intermediates' bytes per row,
    /// `height` their rows, `r..` the regions' ids): the run time's policy for those stages
    /// where it names one (forced or forbidden per stage, `PARAC_PLAN`), else the model
    /// (`parac_runtime::caches::fuses`). Where no machine is asked (the interpreter, the LIR's
    /// evaluator), `rows`.
    Fuses,
}

/// What [`Builtin::CacheBytes`] is where the machine does not say.
pub const CACHE_BYTES: i64 = 8 << 20;

impl Builtin {
    /// Looks a built-in up by name, with its arity.
    pub fn from_name(name: &str) -> Option<(Builtin, usize)> {
        Some(match name {
            "min" => (Builtin::Min, 2),
            "max" => (Builtin::Max, 2),
            "clamp" => (Builtin::Clamp, 3),
            "abs" => (Builtin::Abs, 1),
            "sqrt" => (Builtin::Sqrt, 1),
            "exp" => (Builtin::Exp, 1),
            "floor" => (Builtin::Floor, 1),
            "ceil" => (Builtin::Ceil, 1),
            "round" => (Builtin::Round, 1),
            _ => return None,
        })
    }

    /// The name.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Min => "min",
            Builtin::Max => "max",
            Builtin::Clamp => "clamp",
            Builtin::Abs => "abs",
            Builtin::Sqrt => "sqrt",
            Builtin::Exp => "exp",
            Builtin::Floor => "floor",
            Builtin::Ceil => "ceil",
            Builtin::Round => "round",
            Builtin::Mul24 => "mul24",
            Builtin::NonZero => "nonzero",
            Builtin::CacheBytes => "cache_bytes",
            Builtin::Fuses => "fuses",
        }
    }

    /// True for the float-only functions.
    pub fn is_float_fn(self) -> bool {
        matches!(
            self,
            Builtin::Sqrt | Builtin::Exp | Builtin::Floor | Builtin::Ceil | Builtin::Round
        )
    }
}

/// The kinds of expression.
#[derive(Debug, Clone)]
pub enum ExprKind {
    /// An integer constant.
    Int(i128),
    /// A float constant.
    Float(f64),
    /// A size symbol.
    Size(SizeId),
    /// A host scalar.
    Host(ScalarId),
    /// The index variable of an iteration slot.
    Var(usize),
    /// A kernel local.
    Local(LocalId),
    /// A point read (all subscripts points): a scalar.
    Load(AccessId),
    /// A window read (or a whole constant matrix): a block.
    Block(AccessId),
    /// Unary operator.
    Unary(UnOp, Box<Expr>),
    /// Binary operator on scalars, or elementwise / scaling on blocks.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Matrix product of two blocks.
    MatMul(Box<Expr>, Box<Expr>),
    /// `transe(b)`.
    Transpose(Box<Expr>),
    /// Conversion.
    Cast(Box<Expr>, Scalar),
    /// Built-in function.
    Call(Builtin, Vec<Expr>),
    /// Reduction of a block to a scalar.
    Reduce(ReduceOp, Box<Expr>),
    /// `parac_convolution(filter, window)`.
    Conv(Box<Expr>, Box<Expr>),
    /// `parac_prefix_sum(e, y)` (`_min`, `_max`; `(e, x, y)`): `e` combined over the region's
    /// points up to this one along the slots, the other slots as this point's (an inclusive
    /// scan). Along two slots, the scan along the second's at each point of the first, then
    /// those along the first (a float sum in that order: a row's running sum, then the rows').
    /// Computed at every point of the region ([`Region::prefixes`]).
    Prefix {
        /// Its index in [`Region::prefixes`].
        id: usize,
        /// How the values combine (`Sum`, `Min`, `Max`).
        op: ReduceOp,
        /// The value at each point, of the prefix's type.
        value: Box<Expr>,
        /// The slots scanned, outermost first.
        slots: Vec<usize>,
    },
}

impl Expr {
    /// An `i32` constant (for synthesized expressions).
    pub fn int(v: i128, span: Sp) -> Expr {
        Expr {
            kind: ExprKind::Int(v),
            ty: Type::Scalar(Scalar::I32),
            span,
        }
    }

    /// Calls `f` on every sub-expression, pre-order.
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        f(self);
        match &self.kind {
            ExprKind::Unary(_, a)
            | ExprKind::Transpose(a)
            | ExprKind::Cast(a, _)
            | ExprKind::Reduce(_, a)
            | ExprKind::Prefix { value: a, .. } => a.walk(f),
            ExprKind::Binary(_, a, b) | ExprKind::MatMul(a, b) | ExprKind::Conv(a, b) => {
                a.walk(f);
                b.walk(f);
            }
            ExprKind::Call(_, args) => args.iter().for_each(|a| a.walk(f)),
            _ => {}
        }
    }
}

impl KStmt {
    /// The expression the statement holds outside its branches: a `let`'s or a store's value,
    /// an `if`'s condition.
    pub fn head(&self) -> &Expr {
        match self {
            KStmt::Let(_, e) | KStmt::Store(_, e) | KStmt::If(e, ..) => e,
        }
    }

    /// The prefixes ([`ExprKind::Prefix`]) the statement holds outside its branches, in the
    /// order of [`Expr::walk`].
    pub fn prefixes(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        self.head().walk(&mut |x| {
            if let ExprKind::Prefix { .. } = x.kind {
                out.push(x);
            }
        });
        out
    }

    /// Calls `f` on every statement, pre-order, with the nesting depth of `if`s.
    pub fn walk<'a>(stmts: &'a [KStmt], f: &mut dyn FnMut(&'a KStmt, usize)) {
        fn go<'a>(stmts: &'a [KStmt], depth: usize, f: &mut dyn FnMut(&'a KStmt, usize)) {
            for s in stmts {
                f(s, depth);
                if let KStmt::If(_, a, b) = s {
                    go(a, depth + 1, f);
                    go(b, depth + 1, f);
                }
            }
        }
        go(stmts, 0, f)
    }
}

impl Function {
    /// A block extent as written: `5`, `K`.
    pub fn len_text(&self, l: Len) -> String {
        match l {
            Len::Const(n) => n.to_string(),
            Len::Host(i) => self.lens[i].text.clone(),
        }
    }

    /// Looks a matrix up by name.
    pub fn matrix(&self, name: &str) -> Option<&Matrix> {
        self.matrices.iter().find(|m| m.name == name)
    }
}

/// Whether every element of block `e` can be read at a cell given by loop variables, without
/// the block written out: windows (`constant(a)`: access `a` reads a constant matrix, which is
/// written out), conversions, elementwise operators with blocks or scalars, transposes. A block
/// with a `Len::Host` extent is used only where it is one.
pub fn tappable(e: &Expr, constant: &dyn Fn(AccessId) -> bool) -> bool {
    if !e.ty.is_block() {
        return true;
    }
    match &e.kind {
        ExprKind::Block(a) => !constant(*a),
        ExprKind::Cast(x, _) | ExprKind::Unary(_, x) | ExprKind::Transpose(x) => {
            tappable(x, constant)
        }
        ExprKind::Binary(_, x, y) => tappable(x, constant) && tappable(y, constant),
        _ => false,
    }
}

impl Region {
    /// The slots some prefix of the body scans ([`ExprKind::Prefix`]), in slot order.
    pub fn prefix_slots(&self) -> Vec<usize> {
        let mut out = Vec::new();
        KStmt::walk(&self.body, &mut |s, _| {
            for p in s.prefixes() {
                if let ExprKind::Prefix { slots, .. } = &p.kind {
                    out.extend(slots.iter().copied());
                }
            }
        });
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The slots OpenCL launches work-items over, in OpenCL dimension order (the last slot,
    /// along rows, is dimension 0): every iterated slot but those prefixes scan (each
    /// work-item runs those in order); where prefixes scan every slot, the first one, whose
    /// first work-item alone runs the region (`lir::pass::gpu`).
    pub fn launch_slots(&self) -> Vec<usize> {
        let scanned = self.prefix_slots();
        let present = self.dims.iter().enumerate().filter(|(_, d)| d.is_some());
        let mut s: Vec<usize> = present
            .clone()
            .map(|(i, _)| i)
            .filter(|i| !scanned.contains(i))
            .collect();
        if s.is_empty() {
            s.extend(present.map(|(i, _)| i).take(1));
        }
        s.reverse();
        s
    }

    /// The number of non-empty iteration dimensions.
    pub fn par_dims(&self) -> usize {
        self.dims.iter().flatten().count()
    }
}
