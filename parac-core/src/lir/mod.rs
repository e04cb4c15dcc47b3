//! The loop IR (LIR): what a function does, as loops, lets, branches, loads and stores over
//! typed expressions with C semantics, in the manner of Halide's `Stmt` and naga's arena IR.
//!
//! A [`Func`] owns two arenas, one of expressions and one of statements; nodes refer to each
//! other by typed [`Handle`]s. [`lower`] turns a checked HAST [`crate::ir::Function`] into a
//! `Func` (border rules lowered once, from the rules' entries, as `select` chains whose last
//! arm is the checked load), then runs the passes of [`pass`] in the order [`lower`] lists,
//! keeping a dump after each pass when [`Options::dump`] asks (parac-core does no I/O: the
//! caller prints them).
//!
//! Semantics, which every back end must keep:
//! - integer arithmetic wraps at the expression's type, `/` and `%` truncate and a zero divisor
//!   is `Error::DivisionByZero`; `select` and `&&`/`||` evaluate only the arm taken (as C's
//!   `?:`); casts are C's (`as` in Rust; to `bool`: `!= 0`);
//! - a load or store outside its matrix is `Error::OutOfBounds`, unless a pass proved it inside
//!   (`checked: false`).

pub mod affine;
mod arena;
pub mod canon;
pub mod eval;
mod lower;
pub mod pass;
mod print;
pub mod range;
pub mod visit;

pub use arena::{Arena, Handle};
pub use print::print;

use crate::ir::{BinOp, Builtin, MatrixId, ReduceOp, Scalar, ScalarId, SizeId, UnOp};

/// A handle to an expression of a [`Func`].
pub type ExprId = Handle<Expr>;
/// A handle to a statement of a [`Func`].
pub type StmtId = Handle<Stmt>;
/// A handle to a variable of a [`Func`].
pub type VarId = Handle<Var>;
/// A handle to a temporary buffer of a [`Func`].
pub type TempId = Handle<Temp>;

/// A lowered function.
#[derive(Debug, Clone)]
pub struct Func {
    /// The function's name.
    pub name: String,
    /// Every expression.
    pub exprs: Arena<Expr>,
    /// Every statement.
    pub stmts: Arena<Stmt>,
    /// Every variable (loop indices, lets).
    pub vars: Arena<Var>,
    /// Per name given to [`Func::var`], the next suffix to try (so that naming stays linear).
    pub names: std::collections::HashMap<String, usize>,
    /// Buffers that are not matrices of the function (private arrays, local-memory tiles).
    pub temps: Arena<Temp>,
    /// The names of the function's matrices, by [`MatrixId`].
    pub matrices: Vec<String>,
    /// The names of its size symbols and host scalars (for the printer).
    pub sizes: Vec<String>,
    /// The names of its host scalars.
    pub scalars: Vec<String>,
    /// The body: a [`Stmt::Block`].
    pub body: StmtId,
    /// The matrices whose vectorized rows the CPU path may write with streaming stores
    /// ([`pass::stream`]): the function only writes them.
    pub streamed: Vec<MatrixId>,
}

/// A variable.
#[derive(Debug, Clone)]
pub struct Var {
    /// Its name, unique in the function.
    pub name: String,
    /// Its type (of each lane).
    pub ty: Scalar,
    /// Its number of lanes (1: a scalar).
    pub lanes: u32,
}

/// Where a temporary buffer lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memory {
    /// Per work-item (registers, a stack array).
    Private,
    /// Shared by a work-group (OpenCL `__local`).
    Local,
    /// Global memory (a matrix).
    Global,
    /// Matrix `m`'s rows that the enclosing [`LoopKind::ParallelChunks`] task owns (rows `v`
    /// to `v + step - 1` of the loop's iteration `v`, fewer at the matrix's end), read and
    /// written in place: index `[r, ..]` is the matrix's row `v + r`. Its allocation has no
    /// extents (the task's rows and the matrix's other dimensions are its shape), sits
    /// directly in the task's body, and is the task's only access to `m`: tasks own disjoint
    /// rows, so they may read what they write (`pass::fuse::time::split`).
    Rows(MatrixId),
}

/// A temporary buffer.
#[derive(Debug, Clone)]
pub struct Temp {
    /// Its name.
    pub name: String,
    /// Its element type.
    pub elem: Scalar,
    /// Where it lives.
    pub memory: Memory,
}

/// What a load or store reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Buf {
    /// A matrix of the function.
    Matrix(MatrixId),
    /// A temporary.
    Temp(TempId),
}

/// An expression: its kind, its element type and its number of lanes (1: a scalar).
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// The type of each lane.
    pub ty: Scalar,
    /// The number of lanes.
    pub lanes: u32,
    /// An integer `+`, `-` or `*` a pass proved never leaves its type (`pass::peephole`): a
    /// printer may compute it in the type's own signed arithmetic, which lets a device
    /// compiler see through index arithmetic. The evaluator checks it.
    pub exact: bool,
}

/// The kinds of expression.
#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// An integer constant.
    Int(i128),
    /// A float constant.
    Float(f64),
    /// A variable.
    Var(VarId),
    /// A size symbol (`i32`).
    Size(SizeId),
    /// A host scalar.
    Host(ScalarId),
    /// Dimension `k` of a matrix (`i64`).
    Dim(MatrixId, usize),
    /// A read: one index per dimension (`i64`), each scalar or a [`ExprKind::Ramp`].
    Load {
        /// What is read.
        buf: Buf,
        /// The indices, outermost first.
        index: Vec<ExprId>,
        /// True while no pass proved the read inside: outside is `Error::OutOfBounds`.
        checked: bool,
    },
    /// A read of a matrix at an index known to be outside it: `Error::OutOfBounds`, naming
    /// the matrix and the index, without reading it (the element type's zero, should the
    /// index be inside after all). A fused reader's exact fallback where its tasks store the
    /// matrix's rows for later readers (`lir::pass::fuse`): the original checked read there is
    /// taken outside the matrix only, and the tasks hold no view of the matrix to read.
    Outside {
        /// The matrix.
        matrix: MatrixId,
        /// The indices, outermost first (`i64`).
        index: Vec<ExprId>,
    },
    /// `base, base + stride, ..` over `lanes` lanes.
    Ramp {
        /// The first lane.
        base: ExprId,
        /// The distance between lanes.
        stride: i64,
    },
    /// One value in every lane.
    Broadcast(ExprId),
    /// Lane `k` of a vector (a scalar).
    Extract(ExprId, u32),
    /// Scalars as the lanes of one vector, in order.
    Vector(Vec<ExprId>),
    /// A unary operator.
    Unary(UnOp, ExprId),
    /// A binary operator (operands of one type; comparisons give `bool`).
    Binary(BinOp, ExprId, ExprId),
    /// A conversion to the expression's type.
    Cast(ExprId),
    /// A built-in function.
    Call(Builtin, Vec<ExprId>),
    /// `cond ? a : b`, only the arm taken evaluated.
    Select(ExprId, ExprId, ExprId),
    /// `let var = value in body`.
    Let(VarId, ExprId, ExprId),
    /// A reduction as a loop nest (a window's taps, not written out): `acc = init`, then for
    /// each `vars[0]` in `0..counts[0]`, each `vars[1]` in `0..counts[1]` (row-major), `acc = acc
    /// op elem`; its value is `acc`. `op` is `Sum` (`+`, wrapping for integers), `Min` or `Max`;
    /// the counts are `i32`, the variables `i32` bound in `elem` alone, `elem` of the fold's type.
    Fold {
        /// How the taps combine.
        op: ReduceOp,
        /// The loop variables, outermost first.
        vars: Vec<VarId>,
        /// Their trip counts.
        counts: Vec<ExprId>,
        /// The accumulator's first value.
        init: ExprId,
        /// One tap.
        elem: ExprId,
    },
}

/// How a loop runs its iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopKind {
    /// One after the other.
    Serial,
    /// In parallel (CPU threads): iterations write disjoint elements.
    Parallel,
    /// `W` iterations at once as vector lanes (`0`: the width is the target compiler's, as
    /// for the interior of a partitioned loop, which the CPU back end prints over slices).
    Vectorized(u32),
    /// Written out.
    Unrolled,
    /// In parallel, in chunks of rows: iteration `v` (the loop's step apart, from 0) owns rows
    /// `v` to `v + step - 1` of every plane written, which its inner [`LoopKind::ChunkRows`]
    /// loop runs in order (a CPU task carries what it computed for one row to the next:
    /// `pass::slide`). With a variable, the step is its value when the loop starts (at least
    /// 1: a fused task's rows, chosen when the call runs, `pass::fuse`), the loop's own step
    /// the nominal one.
    ParallelChunks(Option<VarId>),
    /// The rows of a [`LoopKind::ParallelChunks`] iteration, in order, from its first: each
    /// iteration writes its own row of every plane written.
    ChunkRows,
    /// In parallel tasks of consecutive iterations whose only writes are [`Stmt::Update`]s of
    /// matrices: each task updates private copies of those matrices, starting at each
    /// operator's identity, which are combined into the matrices after the loop (a histogram's
    /// per-thread bins). Integer updates only, so the result is the loop run in order.
    Partials,
    /// OpenCL work-groups along dimension `d`: the launch has exactly the loop's iterations as
    /// groups (from 0, step 1), so a back end prints the group's index alone, untested.
    GpuBlock(u8),
    /// OpenCL work-items along dimension `d`: inside a `GpuBlock` loop, the work-item's place in
    /// its group (the launch's work-group size is the loop's extent); elsewhere, its place in
    /// the whole index space (tested against the loop's end).
    GpuThread(u8),
}

/// A statement.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// Statements in order.
    Block(Vec<StmtId>),
    /// `for var in lo..hi step step` (bounds evaluated once, at the variable's type).
    For {
        /// The index.
        var: VarId,
        /// First value.
        lo: ExprId,
        /// End, exclusive.
        hi: ExprId,
        /// Constant step, > 0.
        step: i64,
        /// How it runs.
        kind: LoopKind,
        /// The body.
        body: StmtId,
    },
    /// Binds a variable for the rest of the enclosing block.
    Let(VarId, ExprId),
    /// A branch.
    If(ExprId, StmtId, Option<StmtId>),
    /// A write: one index per dimension.
    Store {
        /// What is written.
        buf: Buf,
        /// The indices (`i64`).
        index: Vec<ExprId>,
        /// The value, at the buffer's element type.
        value: ExprId,
        /// True while no pass proved the write inside.
        checked: bool,
    },
    /// `buf[index] = buf[index] op value`, an update of an element other iterations of the
    /// region may update too ([`crate::ir::Update`], integers only: the operators wrap at the
    /// element's type, so any order gives one result): a back end applies every iteration's
    /// update (an OpenCL atomic, the CPU path's per-task partials of a
    /// [`LoopKind::Partials`] loop, in order elsewhere).
    Update {
        /// What is updated.
        buf: Buf,
        /// The indices (`i64`).
        index: Vec<ExprId>,
        /// How the value combines with the element.
        op: crate::ir::UpdateOp,
        /// The value, at the buffer's element type.
        value: ExprId,
        /// True while no pass proved the element inside.
        checked: bool,
    },
    /// A buffer's storage for the rest of the block. A temporary's elements are unspecified
    /// until written (the evaluator starts them at zero, the CPU path reuses rows): passes
    /// write every element before reading it. A matrix with no extents holds no elements
    /// (a fused intermediate, [`pass::fuse`]: every access of it is outside and fails).
    Allocate {
        /// The buffer.
        buf: Buf,
        /// Its element type.
        elem: Scalar,
        /// Where it lives.
        memory: Memory,
        /// Its extents (`i64`), outermost first.
        extents: Vec<ExprId>,
    },
    /// A work-group barrier: on local memory, or also on global memory (`global`: the
    /// work-items of a group read what the others wrote to a matrix before it).
    Barrier {
        /// Global memory too (`CLK_GLOBAL_MEM_FENCE`).
        global: bool,
    },
    /// A parallel region of the source (its name is in errors and plans).
    Region {
        /// The region in the HAST.
        id: crate::ir::RegionId,
        /// The iterator's name.
        name: String,
        /// Its loops.
        body: StmtId,
    },
    /// A global operator over a whole matrix into a host scalar.
    Reduce {
        /// The operator.
        op: ReduceOp,
        /// The matrix reduced.
        matrix: MatrixId,
        /// The host scalar receiving the result.
        result: ScalarId,
    },
    /// Computes a host scalar.
    HostLet(ScalarId, ExprId),
    /// `parac_repeat`: `body` run `count` (an `i64` evaluated once) times, none when
    /// `count <= 0`.
    Repeat {
        /// The number of time steps.
        count: ExprId,
        /// One time step.
        body: StmtId,
        /// What the program asks of time tiling ([`pass::fuse::time`]).
        schedule: crate::ir::RepeatSchedule,
    },
    /// `parac_swap`: two matrices exchange their storage ([`crate::ir::HostStep::Swap`]).
    Swap(MatrixId, MatrixId),
    /// Returns (a value, or nothing).
    Return(Option<ExprId>),
    /// The first pass of a scan's blocks ([`pass::scan_blocks`]): the iterations of `for var in
    /// lo..hi` (step 1) in blocks of `per` (`block_rows(count)`, bound here for the statements
    /// after it), each block but the last run in parallel through `body` (the loop's body
    /// without its stores to matrices) from the `carried` temporaries' values before it (each
    /// at its operator's identity), into its own copies of them. Binds `totals` (`[blocks][n]`,
    /// `n` a carried temporary's elements): row `b`, the carried values at the start of block
    /// `b` (row 0 their values before; row `b + 1` row `b` combined with block `b`'s own).
    /// Where a block fails (an access outside its matrix), `per` is the loop's whole count
    /// instead (one block, run in order, whose error is the loop's).
    ScanTotals {
        /// The loop's variable.
        var: VarId,
        /// Its first value.
        lo: ExprId,
        /// Its end, exclusive.
        hi: ExprId,
        /// The rows of a block (an `i32`), bound.
        per: VarId,
        /// The loop's body without stores to matrices.
        body: StmtId,
        /// The temporaries carried from block to block, each with its operator (integer:
        /// the blocks' order cannot change the result) and its elements (`i64`).
        carried: Vec<(TempId, ReduceOp, ExprId)>,
        /// The carried values at each block's start, per carried temporary, bound.
        totals: Vec<TempId>,
    },
    /// A tile of a matrix read down its columns, copied into a temporary in the order it is
    /// read ([`pass::tile`]): `stage[i][j] = buf[index + i * x_step along the last dimension +
    /// j * y_step along dimension y_dim]` for `i < rows`, `j < cols` (`i64`s), the temporary's
    /// rows `stride` elements apart. Binds `inside` (a `bool`): whether every one of those
    /// elements is inside the matrix (then the temporary holds them all; else its elements are
    /// unspecified). The CPU path moves them in blocks transposed in registers.
    Stage(Stage),
    /// A row's inclusive scan in place ([`pass::scan_rows`]): `row[lo..hi]` (`i64`s, clamped
    /// to the row) each combined by `op` with the running value, which starts at `acc[0]`
    /// and ends there. A 32-bit integer operator: the CPU path combines a vector's values in
    /// shifted steps, with the result of the loop in order.
    ScanRow {
        /// The row's temporary (one index).
        row: TempId,
        /// Its first element scanned.
        lo: ExprId,
        /// Its end, exclusive.
        hi: ExprId,
        /// The operator (an integer sum, minimum or maximum).
        op: ReduceOp,
        /// The running value's temporary (one element).
        acc: TempId,
    },
    /// A task run on a guess about its inputs' values ([`pass::narrow`]): binds `flag` to
    /// `true`, runs `body` (whose [`Stmt::Within`]s clear the flag where the guess is wrong),
    /// then, where the flag is `false`, runs `fallback`, which computes every element `body`
    /// wrote again (`body` writes nothing else it or `fallback` reads).
    Speculate {
        /// The guess held (a `bool`, cleared by the `Within`s of `body`).
        flag: VarId,
        /// The task computed on the guess.
        body: StmtId,
        /// The task as written.
        fallback: StmtId,
    },
    /// The guess of a [`Stmt::Speculate`] about one row of a matrix: clears `flag` unless the
    /// row `buf[rows][..]` (every element along the last dimension) is inside the matrix and
    /// each of its values is within `lo..=hi`.
    Within(Within),
}

/// The fields of [`Stmt::Within`].
#[derive(Debug, Clone, PartialEq)]
pub struct Within {
    /// The flag cleared.
    pub flag: VarId,
    /// The matrix read.
    pub buf: MatrixId,
    /// The row's indices (`i64`s), one per dimension but the last.
    pub rows: Vec<ExprId>,
    /// The least value guessed.
    pub lo: i64,
    /// The greatest value guessed.
    pub hi: i64,
}

/// Where a [`Stmt::Stage`] puts its tile.
#[derive(Debug, Clone, PartialEq)]
pub enum StageInto {
    /// A temporary (`[rows][stride]` at least): tile element `[i][j]` is its `[i][j]`.
    Temp {
        /// The temporary written.
        temp: TempId,
        /// Its row length.
        stride: i64,
    },
    /// A matrix the region writes, whose rows the region's tasks own: tile element `[i][j]`
    /// is its element `index` moved `i` along its first dimension and `j` along its last (a
    /// tile row, part of one row of the matrix). Nothing is written where one of them is
    /// outside the matrix, as where one read is outside.
    Matrix {
        /// The matrix written (two dimensions).
        buf: MatrixId,
        /// The index of tile element `[0][0]` (`i64`s).
        index: Vec<ExprId>,
    },
}

/// The fields of [`Stmt::Stage`].
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// Where the tile goes.
    pub into: StageInto,
    /// The matrix read.
    pub buf: MatrixId,
    /// The index of element `[0][0]` (`i64`s), one per dimension of the matrix.
    pub index: Vec<ExprId>,
    /// The dimension that moves with `j` (not the last).
    pub y_dim: usize,
    /// How far it moves per `j` (1 or -1).
    pub y_step: i64,
    /// How far the last dimension moves per `i` (1 or -1).
    pub x_step: i64,
    /// The number of rows `i` (`i64`).
    pub rows: ExprId,
    /// The number of columns `j` (`i64`).
    pub cols: ExprId,
    /// Bound: whether all were inside.
    pub inside: VarId,
}

impl Stage {
    /// The index of the matrix written where the tile goes into one (empty otherwise).
    pub fn into_index(&self) -> &[ExprId] {
        match &self.into {
            StageInto::Matrix { index, .. } => index,
            StageInto::Temp { .. } => &[],
        }
    }
}

/// A [`Stmt::For`]'s index, bounds, step and body: what the evaluator and the CPU code
/// generator run it by.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Loop {
    pub(crate) var: VarId,
    pub(crate) lo: ExprId,
    pub(crate) hi: ExprId,
    pub(crate) step: i64,
    pub(crate) body: StmtId,
}

impl Loop {
    /// Statement `s` of `func`, where it is a `for`.
    pub(crate) fn of(func: &Func, s: StmtId) -> Option<Loop> {
        match func.stmts[s] {
            Stmt::For {
                var,
                lo,
                hi,
                step,
                body,
                ..
            } => Some(Loop {
                var,
                lo,
                hi,
                step,
                body,
            }),
            _ => None,
        }
    }
}

/// The default of [`Options::fuse_rows`]: a task's rows of a fused consumer (its producer's
/// rows, a halo more, stay in the task's cache), the least the CPU path's model chooses when
/// the call runs (`parac_runtime::caches::task_rows`: up to four times this).
pub const FUSE_ROWS: i64 = 32;

/// The default of [`Options::time_steps`]: the most time steps per band of a tiled
/// `parac_repeat` (the model takes fewer for a wider stencil or a step of several regions:
/// `pass::fuse::time`).
pub const TIME_STEPS: i64 = 16;

/// The default of [`Options::time_rows`]: a band's task's rows.
pub const TIME_ROWS: i64 = 32;

/// The default of [`Options::unroll_taps`]: an 8x8 window is written out, a 9x9 one looped.
pub const UNROLL_TAPS: usize = 64;

/// On the CPU lowering with [`Options::slide`], a reduction of a window of more taps than this
/// (a 3x3 window is written out, a 5x5 one slid) is a fold where [`pass::slide`] could compute
/// it per row.
pub const SLIDE_TAPS: usize = 9;

/// What [`lower`] does.
#[derive(Debug, Clone)]
pub struct Options {
    /// Keep the LIR's text after lowering and after each pass.
    pub dump: bool,
    /// Fold constants (constant filters' taps become literals).
    pub simplify: bool,
    /// Run a region's outer loop in parallel where each iteration owns its rows.
    pub parallel: bool,
    /// With [`Options::parallel`], a region whose only writes are integer updates of shared
    /// elements runs in parallel tasks into private partial results ([`LoopKind::Partials`]);
    /// off: in order.
    pub partials: bool,
    /// Scans along a region's outer loop run in parallel blocks of rows, a first pass of
    /// the blocks' totals before them ([`pass::scan_blocks`]; the CPU path).
    pub scan_blocks: bool,
    /// A prefix along a vectorized loop: the values, then the row's scan in vectors, then the
    /// statements after it ([`pass::scan_rows`]; the CPU path).
    pub scan_rows: bool,
    /// A row-parallel region whose inner loop reads a matrix down its columns (a transpose,
    /// a rotation) runs in tiles of `(rows, cols)` points ([`pass::tile`]; the CPU path;
    /// `None`: row after row).
    pub tile_transposed: Option<(i64, i64)>,
    /// In those tiles, each tile of the matrix read down its columns first copied into a
    /// temporary in the order it is read, in blocks transposed in registers ([`Stmt::Stage`]),
    /// so that the points read it along their rows ([`pass::tile`]; the CPU path).
    pub stage_transposed: bool,
    /// A staged tile whose rows do nothing but store it into a matrix the region writes, at
    /// their own points, is staged into that matrix's rows directly ([`StageInto::Matrix`]):
    /// a transpose or a rotation is then the stage alone ([`pass::tile`]; the CPU path; off:
    /// into a temporary, then row by row).
    pub stage_direct: bool,
    /// The matrices the function only writes may be written with streaming stores where a
    /// call finds them large ([`pass::stream`]; the CPU path; off: plain stores always).
    pub stream: bool,
    /// Split innermost loops into border segments and an interior with no checks (on a GPU:
    /// test each work-item's point, then run the interior or the border body).
    pub partition: bool,
    /// In a partitioned loop, keep an index map that does not vary in the loop (a border
    /// rule's map of a row index) whole, bound before the loop, so that rows outside the
    /// matrix run the interior on the rows their maps pick; off: such a row's tests are
    /// decided as every other's, and a row outside runs the border segment whole.
    pub partition_maps: bool,
    /// One load at a selected index for a `select` of loads (a bordered read's rule chain: an
    /// index map, no branch). On the OpenCL lowering only.
    pub select_loads: bool,
    /// Points per work-item along OpenCL dimensions 0 and 1 (`[1, 1]`: one), on the OpenCL
    /// lowering ([`pass::item_lanes`]).
    pub lanes: [u32; 2],
    /// Lower for OpenCL: a region's loops are work-items ([`pass::gpu`]), not CPU loops.
    pub gpu: bool,
    /// Reads of one element by a work-item's points done once ([`pass::share_loads`]).
    pub share_loads: bool,
    /// Adjacent shared reads and held stores as vectors ([`pass::vector_memory`]; implies
    /// `share_loads`).
    pub vector_memory: bool,
    /// Range-proven rewrites of divisions ([`pass::peephole`]).
    pub peephole: bool,
    /// Range-proven products of 24-bit `int`s as `mul24` ([`pass::peephole`]).
    pub mul24: bool,
    /// Range-proven 64-bit index arithmetic in `int` ([`pass::peephole`]; on the OpenCL
    /// lowering).
    pub narrow: bool,
    /// Range-proven `int` arithmetic of the CPU path's vectorized interiors in `short`
    /// ([`pass::narrow`]).
    pub narrow_values: bool,
    /// Tasks whose arithmetic narrows further on a guess of their inputs' values (each row of
    /// an input they read within a range) run on the guess, checked row by row, and again as
    /// written where it fails ([`pass::narrow`], with `narrow_values`).
    pub speculate: bool,
    /// The work-items run the interior alone ([`pass::gpu::split`]): a split plan's kernel,
    /// launched over the interior box.
    pub split: bool,
    /// Work-groups of `[cols, rows]` work-items that read through local-memory tiles
    /// ([`pass::local_tile`]; on the OpenCL lowering).
    pub local_tile: Option<[u32; 2]>,
    /// Accesses the host proves inside before a region runs are lowered unchecked (the OpenCL
    /// lowering: the runtime runs the proof before every launch; the CPU path checks them).
    pub host_proofs: bool,
    /// Lower this region alone (the function's other regions are left out of the body): for
    /// one region's kernel, so that its plans do not pay for the other regions' lowering.
    pub region: Option<crate::ir::RegionId>,
    /// Reductions of windows (`parac_matrix_sum` and the like) with more taps than this are
    /// folds, loop nests over the taps ([`ExprKind::Fold`]); smaller ones are written out.
    pub unroll_taps: usize,
    /// Folds over windows computed per row, in time independent of the window
    /// ([`pass::slide`]); on the OpenCL lowering (a plan's `slide`), across each work-item's
    /// `lanes[0]` points of a row and down its `lanes[1]` rows ([`pass::slide::items`]).
    pub slide: bool,
    /// On the CPU, a producer region computed in its consumer's tasks of this many rows, with
    /// its halo, into a private buffer ([`pass::fuse`]), or as many as the run time chooses
    /// from this ([`crate::ir::Builtin::Fuses`]); 0: every region alone.
    pub fuse_rows: i64,
    /// On the CPU, each fused task runs its consumer's rows one by one, its intermediates'
    /// rows computed just before the first row that needs them into rings of the rows still
    /// needed (storage folding, [`pass::fuse`]'s `fold`; the default); off: a task computes
    /// each intermediate's rows for its whole strip first, into buffers of all of them. On
    /// since the interiors run at the processor's vector width and in 16 bits where exact:
    /// measured 1.6x faster on APPS.md's unsharp mask, 1.1-1.3x on blur, a 3x3 box mean and
    /// unsharp7, level elsewhere (docs/benchmarks.md); at 32-bit lanes and the baseline's
    /// width it had been 6-8 % slower on blur.
    pub fuse_fold: bool,
    /// On the CPU, a cheap point producer (a scaled pixel, a cast) computed at each read of
    /// its readers instead of per task into a buffer (Halide's `compute_inline`, [`pass::fuse`]'s
    /// `inline`): measured 1.6x faster on a 5-point stencil of `src * 2 - 7`
    /// (docs/benchmarks.md). Off: such producers take the tasks' buffers too (tests).
    pub fuse_points: bool,
    /// On the CPU, a `parac_repeat` of stencil regions and their swaps run in bands of at most
    /// this many time steps (the model's choice below it), each band's tasks computing the rows
    /// their result depends on in private buffers ([`pass::fuse::time`]); 0: step by step (a
    /// program's `parac_schedule(band = ..)` too).
    pub time_steps: i64,
    /// The rows of a band's task ([`Options::time_steps`]).
    pub time_rows: i64,
    /// [`Options::time_steps`] is the most steps per band and the model picks fewer for wider
    /// stencils; off: exactly that many (tests).
    pub time_model: bool,
    /// How a band is tiled where the program's `parac_schedule(split = ..)` does not say:
    /// `Some(true)` split tiling ([`pass::fuse::time::split`], no point computed twice),
    /// `Some(false)` overlapped tiles, `None` the model's choice.
    pub time_split: Option<bool>,
    /// On the OpenCL lowering of [`Options::region`], that region's time-band kernel: `(K,
    /// [cols, rows])`, `K` time steps of the `parac_repeat` whose step it is per launch, each
    /// work-group computing a tile of `cols` x `rows` points in local memory
    /// ([`pass::fuse::time::gpu`]; the function is lowered whole for it).
    pub time_band: Option<(u32, [u32; 2])>,
    /// On the OpenCL lowering of [`Options::region`], that region's split band: `(K, [cols,
    /// rows])`, `K` time steps (odd) per four launches, the phases of split tiling in rows and
    /// columns, each work-group owning a tile of `cols` x `rows` points, in place in global
    /// memory ([`pass::fuse::time::gpu::run_split`]; the function is lowered whole for it).
    pub time_split_band: Option<(u32, [u32; 2])>,
    /// On the OpenCL lowering of [`Options::region`], that region's fused kernel with its
    /// consumer (`Function::fused_consumer`): `[cols, rows]`, each work-group computing a tile
    /// of the consumer from the producer's points it reads, in local memory
    /// ([`pass::fuse::gpu`]; the function is lowered whole for it).
    pub fuse_tile: Option<[u32; 2]>,
    /// On the OpenCL lowering of [`Options::region`], that region's consumer
    /// (`Function::fused_consumer`) with the region's point inlined at each read of the
    /// intermediate ([`pass::fuse::gpu::inline`]; the function is lowered whole for it, the
    /// other passes as usual).
    pub fuse_inline: bool,
    /// On the OpenCL lowering of [`Options::region`], that region's fused kernel with its
    /// consumer, each work-item computing a tile of this many columns and rows of the
    /// consumer from the producer's points it reads, in private memory
    /// ([`pass::fuse::gpu::run_items`]; the function is lowered whole for it).
    pub fuse_item_tile: Option<[u32; 2]>,
    /// In a slid window, rows (and columns) up to this many are combined written out rather
    /// than looped (and doubled) ([`pass::slide`]).
    pub slide_unroll: usize,
}

impl Options {
    /// The passes the OpenCL printer's kernels are made with.
    pub fn gpu() -> Options {
        Options {
            gpu: true,
            host_proofs: true,
            narrow: true,
            parallel: false,
            slide: false,
            fuse_rows: 0,
            time_steps: 0,
            ..Options::default()
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            dump: false,
            simplify: true,
            parallel: true,
            partials: true,
            scan_blocks: true,
            scan_rows: true,
            tile_transposed: Some(pass::tile::TILE),
            stage_transposed: true,
            stage_direct: true,
            stream: true,
            partition: true,
            select_loads: true,
            lanes: [1, 1],
            gpu: false,
            share_loads: false,
            vector_memory: false,
            peephole: false,
            mul24: false,
            narrow: false,
            narrow_values: true,
            speculate: true,
            partition_maps: true,
            split: false,
            local_tile: None,
            host_proofs: false,
            region: None,
            unroll_taps: UNROLL_TAPS,
            slide: true,
            slide_unroll: 64,
            fuse_rows: FUSE_ROWS,
            fuse_fold: true,
            fuse_points: true,
            time_steps: TIME_STEPS,
            time_rows: TIME_ROWS,
            time_model: true,
            time_split: None,
            time_band: None,
            time_split_band: None,
            fuse_tile: None,
            fuse_inline: false,
            fuse_item_tile: None,
        }
    }
}

/// A lowered function and, when asked, its text after each stage.
#[derive(Debug)]
pub struct Lowered {
    /// The function after every pass.
    pub func: Func,
    /// `(stage, text)`: `lower`, then each pass that ran.
    pub dumps: Vec<(&'static str, String)>,
}

/// The function lowered (the region of [`Options::region`] alone, or whole where a time band or
/// a fused plan reads other regions) and simplified: what [`lower`]'s passes start from (and
/// `pass::fuse::gpu::plans` decides on); `keep` sees it after each of the two.
pub(crate) fn front(
    f: &crate::ir::Function,
    opts: &Options,
    keep: &mut impl FnMut(&'static str, &Func),
) -> Func {
    // Windows past `SLIDE_TAPS` that could slide are folds for `pass::slide`.
    let slide_taps = if opts.slide { SLIDE_TAPS } else { usize::MAX };
    // A time band reads its region's repeat, a fused plan its consumer: the function whole.
    let whole = opts.time_band.is_some()
        || opts.time_split_band.is_some()
        || opts.fuse_tile.is_some()
        || opts.fuse_item_tile.is_some()
        || opts.fuse_inline;
    let only = opts.region.filter(|_| !whole);
    let mut func = lower::function(
        f,
        opts.host_proofs,
        only,
        (opts.unroll_taps, slide_taps),
        opts.gpu,
    );
    keep("lower", &func);
    if opts.simplify {
        pass::simplify::run(&mut func, f);
        keep("simplify", &func);
    }
    func
}

/// Lowers a checked function and runs the passes, in this order:
/// 1. `lower`: the HAST as loops (blocks written out element by element, border reads as
///    `select` chains);
/// 2. [`pass::simplify`]: constant folding;
/// 3. [`pass::fuse::time`]: a `parac_repeat` of stencil regions in bands of time steps
///    (`Options::time_steps`), each task's dependence cone in private buffers;
/// 4. [`pass::fuse`]: a producer computed in its consumer's tasks of rows (`fuse_rows`);
/// 5. [`pass::parallel`]: the loop kinds of row-parallel regions;
/// 6. [`pass::slide`]: folds over windows computed per row (column reductions, then prefix
///    sums or van Herk's blocks), in time independent of the window;
/// 7. [`pass::tile`]: a row-parallel region reading a matrix down its columns in tiles;
/// 8. [`pass::partition`]: innermost loops split into border segments and a checked-once
///    interior;
/// 9. [`pass::narrow`]: the interiors' `int` arithmetic in `short` where ranges prove it, and
///    tasks narrowed further on a guess of their inputs' values, checked as they run;
/// 10. [`pass::scan_blocks`]: a scan along a region's outer loop in parallel blocks of rows;
/// 11. [`pass::scan_rows`]: a scan along a vectorized loop as its values, the row's scan in
///     vectors, and the statements after it.
///
/// For OpenCL ([`Options::gpu`]), after `simplify`:
/// - for a time band's plan ([`Options::time_band`], [`Options::time_split_band`]), the
///   function whole with the region's repeat in bands ([`pass::fuse::time::gpu`]: overlapped
///   tiles in local memory, or split tiling's four phases in place), and for a fused plan's
///   tiles ([`Options::fuse_tile`], [`Options::fuse_item_tile`]) the function whole with the
///   region and its consumer in one kernel ([`pass::fuse::gpu`]), then `peephole`'s narrowing
///   alone; else (a fused plan's
///   inlined producer first, [`Options::fuse_inline`], [`pass::fuse::gpu::inline`]):
/// 3. [`pass::gpu`]: a region's loops become work-items (before it, for a plan with `slide`,
///    [`pass::slide::items`]: a work-item's `lanes[0]` x `lanes[1]` points slide their windows
///    as the CPU's rows do; such a region takes no other lanes nor `points`);
/// 4. [`pass::item_lanes`] where a work-item has several points (its own interior test), else
///    [`pass::partition::points`]: each work-item tests its point, then runs the interior or
///    the border body;
/// 5. [`pass::select_loads`]: a `select` of loads as one load at a selected index;
/// 6. [`pass::peephole`]: divisions as shifts, masks, unsigned or float divisions where ranges
///    prove them exact (`peephole`), products of 24-bit `int`s as `mul24` (`mul24`), 64-bit
///    index arithmetic in `int` and divisions of multiples split (`narrow`), before the
///    passes that compare indices by their affine forms;
/// 7. [`pass::share_loads`]: a work-item's reads of one element done once, at its interior's
///    head;
/// 8. [`pass::vector_memory`]: adjacent shared reads and the interior's stores as vectors;
/// 9. [`pass::gpu::split`] for a split plan: the interior alone (the runtime launches it over
///    the interior box);
/// 10. [`pass::local_tile`] for a plan with local-memory tiles: work-groups that fill a tile
///     of each matrix their work-items read at neighbouring points, then read it.
pub fn lower(f: &crate::ir::Function, opts: &Options) -> Lowered {
    let mut dumps = Vec::new();
    let mut keep = |stage: &'static str, func: &Func| {
        if opts.dump {
            dumps.push((stage, print(func)));
        }
    };
    let mut func = front(f, opts, &mut keep);
    let banded = match (opts.gpu, opts.region, opts.time_band, opts.time_split_band) {
        (true, Some(rid), Some(band), _) => pass::fuse::time::gpu::run(&mut func, f, rid, band),
        (true, Some(rid), None, Some(band)) => {
            pass::fuse::time::gpu::run_split(&mut func, f, rid, band)
        }
        _ => false,
    };
    let fused = match (opts.gpu, opts.region, opts.fuse_tile, opts.fuse_item_tile) {
        (true, Some(rid), Some(tile), _) if !banded => {
            pass::fuse::gpu::run(&mut func, f, rid, tile)
        }
        (true, Some(rid), None, Some(tile)) if !banded => {
            pass::fuse::gpu::run_items(&mut func, f, rid, tile)
        }
        _ => false,
    };
    if banded || fused {
        keep(if banded { "time_band" } else { "fuse_gpu" }, &func);
        // A work-item's fused tile (`run_items` above).
        let items = fused && opts.fuse_item_tile.is_some();
        if items && opts.partition {
            // A work-item's tile is the CPU path's loops: their interiors without the border
            // rules' tests and with the accesses proven, so that its compiler vectorizes them.
            pass::partition::run(&mut func, opts.partition_maps);
            if opts.simplify {
                pass::simplify::logic(&mut func, f);
            }
            keep("partition", &func);
        }
        if opts.narrow || items {
            // Its index arithmetic in `int` where ranges prove it.
            let what = pass::peephole::Rewrites {
                divisions: false,
                mul24: false,
                narrow: true,
            };
            pass::peephole::run(&mut func, what);
            keep("peephole", &func);
        }
        return Lowered { func, dumps };
    }
    if let (true, Some(rid), true) = (opts.gpu, opts.region, opts.fuse_inline)
        && pass::fuse::gpu::inline(&mut func, f, rid)
    {
        keep("fuse_inline", &func);
    }
    if opts.gpu {
        // A work-item's points slide their windows (its region then has no other lanes).
        let slid = opts.slide && pass::slide::items(&mut func, f, opts.lanes, opts.slide_unroll);
        if slid {
            keep("slide", &func);
        }
        pass::gpu::run(&mut func, f);
        keep("gpu", &func);
        // A slid region's work-items have their points already, each read checked as lowered.
        if !slid && opts.lanes != [1, 1] {
            pass::item_lanes::run(&mut func, opts.lanes[0], opts.lanes[1], opts.partition);
            keep("item_lanes", &func);
        } else if !slid && opts.partition {
            pass::partition::points(&mut func);
            keep("points", &func);
        }
        if opts.select_loads {
            pass::select_loads::run(&mut func);
            keep("select_loads", &func);
        }
        if opts.peephole || opts.mul24 || opts.narrow {
            let what = pass::peephole::Rewrites {
                divisions: opts.peephole,
                mul24: opts.mul24,
                narrow: opts.narrow,
            };
            pass::peephole::run(&mut func, what);
            keep("peephole", &func);
        }
        if opts.share_loads || opts.vector_memory {
            pass::share_loads::run(&mut func, f);
            keep("share_loads", &func);
        }
        if opts.vector_memory {
            pass::vector_memory::run(&mut func);
            keep("vector_memory", &func);
        }
        if opts.split {
            pass::gpu::split(&mut func);
            keep("split", &func);
        }
        if let Some([cols, rows]) = opts.local_tile {
            pass::local_tile::run(&mut func, f, cols, rows);
            keep("local_tile", &func);
        }
        if opts.simplify && opts.partition {
            // The interior tests the partitioning added hold constants (a constant index's
            // bounds): folded, so that no `&&` has a constant operand (C compilers warn).
            pass::simplify::logic(&mut func, f);
        }
        return Lowered { func, dumps };
    }
    let time = (
        opts.time_steps,
        opts.time_rows,
        opts.time_model,
        opts.time_split,
    );
    if opts.parallel && pass::fuse::time::run(&mut func, f, time) {
        keep("time", &func);
    }
    if opts.fuse_rows > 0
        && opts.parallel
        && pass::fuse::run(
            &mut func,
            f,
            opts.fuse_rows,
            (opts.fuse_fold, opts.fuse_points),
        )
    {
        keep("fuse", &func);
    }
    if opts.parallel {
        pass::parallel::run(&mut func, f, opts.partials);
        keep("parallel", &func);
    }
    if opts.slide {
        pass::slide::run(&mut func, f, opts.slide_unroll);
        if opts.simplify {
            // The rows' first columns, substituted, are constants to fold.
            pass::simplify::run(&mut func, f);
        }
        keep("slide", &func);
    }
    if let Some(tile) = opts.tile_transposed.filter(|_| opts.parallel)
        && pass::tile::run(&mut func, tile, opts.stage_transposed, opts.stage_direct)
    {
        keep("tile", &func);
    }
    if opts.partition {
        pass::partition::run(&mut func, opts.partition_maps);
        if opts.simplify {
            // As on OpenCL: the guard's constant tests folded.
            pass::simplify::logic(&mut func, f);
        }
        keep("partition", &func);
        if opts.narrow_values {
            pass::narrow::run(&mut func, opts.speculate);
            keep("narrow", &func);
        }
    }
    if opts.parallel && opts.scan_blocks && pass::scan_blocks::run(&mut func) {
        keep("scan_blocks", &func);
    }
    if opts.scan_rows && pass::scan_rows::run(&mut func) {
        keep("scan_rows", &func);
    }
    if opts.stream && !opts.gpu && pass::stream::run(&mut func) {
        keep("stream", &func);
    }
    Lowered { func, dumps }
}

impl Func {
    /// The name of region `id` among [`Func::regions`].
    pub fn region_name(&self, id: usize) -> Option<String> {
        self.regions()
            .into_iter()
            .find_map(|s| match &self.stmts[s] {
                Stmt::Region { id: r, name, .. } if *r == id => Some(name.clone()),
                _ => None,
            })
    }

    /// The function's regions ([`Stmt::Region`]), in program order, those of time steps
    /// ([`Stmt::Repeat`]) and of the host's branches (a tiled repeat's guard) included.
    pub fn regions(&self) -> Vec<StmtId> {
        fn walk(func: &Func, s: StmtId, out: &mut Vec<StmtId>) {
            match &func.stmts[s] {
                Stmt::Block(b) => b.iter().for_each(|s| walk(func, *s, out)),
                Stmt::Repeat { body, .. } => walk(func, *body, out),
                Stmt::If(_, t, e) => {
                    walk(func, *t, out);
                    if let Some(e) = e {
                        walk(func, *e, out);
                    }
                }
                Stmt::Region { .. } => out.push(s),
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(self, self.body, &mut out);
        out
    }

    /// Adds an expression.
    pub fn expr(&mut self, kind: ExprKind, ty: Scalar) -> ExprId {
        self.exprs.push(Expr {
            kind,
            ty,
            lanes: 1,
            exact: false,
        })
    }

    /// Adds a statement.
    pub fn stmt(&mut self, s: Stmt) -> StmtId {
        self.stmts.push(s)
    }

    /// Adds `for var in [lo, hi) step step` of kind `kind`.
    pub fn for_loop(
        &mut self,
        var: VarId,
        (lo, hi, step): (ExprId, ExprId, i64),
        kind: LoopKind,
        body: StmtId,
    ) -> StmtId {
        self.stmt(Stmt::For {
            var,
            lo,
            hi,
            step,
            kind,
            body,
        })
    }

    /// The buffer whose elements `buf` holds: a task's rows of a matrix (`Memory::Rows`) are
    /// that matrix's elements; any other buffer is itself.
    pub fn whose(&self, buf: Buf) -> Buf {
        match buf {
            Buf::Temp(t) => match self.temps[t].memory {
                Memory::Rows(m) => Buf::Matrix(m),
                _ => buf,
            },
            Buf::Matrix(_) => buf,
        }
    }

    /// Adds a copy of loop `s` whose body is `body` (`s` itself where it is not a loop).
    pub fn loop_with_body(&mut self, s: StmtId, body: StmtId) -> StmtId {
        match self.stmts[s].clone() {
            Stmt::For {
                var,
                lo,
                hi,
                step,
                kind,
                ..
            } => self.for_loop(var, (lo, hi, step), kind, body),
            _ => s,
        }
    }

    /// Adds a variable, its name made unique (`name`, `name.1`, ...).
    pub fn var(&mut self, name: &str, ty: Scalar) -> VarId {
        self.vector_var(name, ty, 1)
    }

    /// Adds a variable of `lanes` lanes, its name made unique as [`Func::var`] does.
    pub fn vector_var(&mut self, name: &str, ty: Scalar, lanes: u32) -> VarId {
        if self.names.len() < self.vars.len() {
            // Names added by hand (or by a clone's history): index them all once.
            self.names = self.vars.iter().map(|(_, v)| (v.name.clone(), 0)).collect();
        }
        // The smallest free suffix: those below the name's counter are all taken.
        let mut k = self.names.get(name).copied().unwrap_or(0);
        let spell = |k: usize| match k {
            0 => name.to_string(),
            k => format!("{name}.{k}"),
        };
        let mut unique = spell(k);
        while self.names.contains_key(&unique) {
            k += 1;
            unique = spell(k);
        }
        if k > 0 {
            self.names.insert(unique.clone(), 0);
        }
        self.names.insert(name.to_string(), k + 1);
        self.vars.push(Var {
            name: unique,
            ty,
            lanes,
        })
    }

    /// A constant of type `ty`.
    pub fn int(&mut self, v: i128, ty: Scalar) -> ExprId {
        self.expr(ExprKind::Int(v), ty)
    }

    /// `a` where `x` is `a` widened: a scalar cast of an integer `a` to an integer type holding
    /// every value of `a`'s (which keeps the value, and which a cast back to `a`'s type undoes).
    pub fn widening(&self, x: ExprId) -> Option<ExprId> {
        let ExprKind::Cast(a) = self.exprs[x].kind else {
            return None;
        };
        let (to, from) = (self.exprs[x].ty, self.exprs[a].ty);
        let ((tlo, thi), (lo, hi)) = (to.range()?, from.range()?);
        (to.is_int() && from.is_int() && self.exprs[a].lanes == 1 && tlo <= lo && hi <= thi)
            .then_some(a)
    }

    /// `e` converted to `ty` (`e` itself when it has that type).
    pub fn cast(&mut self, e: ExprId, ty: Scalar) -> ExprId {
        if self.exprs[e].ty == ty {
            e
        } else {
            self.expr(ExprKind::Cast(e), ty)
        }
    }

    /// A scalar index `e` as `a + c`, `c` an integer constant: `e` an `int` or `long` `+` or
    /// `-` of a constant, seen through conversions of `int` to `long` (which keep the value).
    /// The sum `a + c` is `e`'s value wherever `e` did not wrap, which an index proven inside
    /// its matrix did not (a wrapped `int` sum is at least `2^31 - |c|` from every index).
    pub fn offset(&self, e: ExprId) -> Option<(ExprId, i128)> {
        let ex = &self.exprs;
        let int = |e: ExprId| match ex[e].kind {
            ExprKind::Int(c) => Some(c),
            _ => None,
        };
        if ex[e].lanes != 1 {
            return None;
        }
        match ex[e].kind {
            ExprKind::Cast(x) if ex[e].ty == Scalar::I64 && ex[x].ty == Scalar::I32 => {
                self.offset(x)
            }
            ExprKind::Binary(op, a, b) if matches!(ex[e].ty, Scalar::I32 | Scalar::I64) => {
                match (op, int(a), int(b)) {
                    (BinOp::Add, _, Some(c)) => Some((a, c)),
                    (BinOp::Add, Some(c), _) => Some((b, c)),
                    (BinOp::Sub, _, Some(c)) => Some((a, -c)),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The end of a chunk of a loop: `min(start + size, hi)` in `long`, `start` and `hi`
    /// converted to it (so that a chunk starting near the end of an `int` range does not wrap).
    pub fn chunk_end(&mut self, start: ExprId, size: ExprId, hi: ExprId) -> ExprId {
        let t = Scalar::I64;
        let start = self.cast(start, t);
        let past = self.binary(BinOp::Add, start, size, t);
        let hi = self.cast(hi, t);
        self.expr(ExprKind::Call(Builtin::Min, vec![past, hi]), t)
    }

    /// `a op b` of type `ty`.
    pub fn binary(&mut self, op: BinOp, a: ExprId, b: ExprId, ty: Scalar) -> ExprId {
        self.expr(ExprKind::Binary(op, a, b), ty)
    }

    /// One step of reduction `op` in type `ty`: `a + b` (a sum or mean; wrapping for
    /// integers), `min(a, b)` or `max(a, b)`.
    pub(crate) fn combine(&mut self, op: ReduceOp, a: ExprId, b: ExprId, ty: Scalar) -> ExprId {
        match op {
            ReduceOp::Sum | ReduceOp::Mean => self.binary(BinOp::Add, a, b, ty),
            ReduceOp::Min => self.expr(ExprKind::Call(Builtin::Min, vec![a, b]), ty),
            ReduceOp::Max => self.expr(ExprKind::Call(Builtin::Max, vec![a, b]), ty),
        }
    }

    /// `vals` (at least one) combined by `op` as a balanced tree, so that the expression is
    /// log-deep; for integers, where the order cannot change the value.
    pub(crate) fn balanced(&mut self, op: ReduceOp, mut vals: Vec<ExprId>, ty: Scalar) -> ExprId {
        while vals.len() > 1 {
            vals = vals
                .chunks(2)
                .map(|p| match *p {
                    [a, b] => self.combine(op, a, b, ty),
                    [a] => a,
                    _ => unreachable!("chunks of two"),
                })
                .collect();
        }
        vals[0]
    }
}

/// Whether an integer division by `d` cannot fail: `d` a constant other than 0 and -1.
pub(crate) fn safe_divisor(func: &Func, d: ExprId) -> bool {
    matches!(func.exprs[d].kind, ExprKind::Int(k) if k != 0 && k != -1)
}

/// Whether `e` can be evaluated anywhere, any number of times, with the same result: it reads
/// no memory, divides by nothing that can fail (an integer divisor other than a constant
/// besides 0 and -1), has no lanes, and reads no variable `var_ok` refuses. Passes inline such
/// values (`partition`); the OpenCL printer declares them outside conditions.
pub(crate) fn total(func: &Func, e: ExprId, var_ok: &dyn Fn(VarId) -> bool) -> bool {
    total_where(func, e, var_ok, false)
}

/// [`total`], and with `periods` an integer division by a border rule's period too
/// (`nonzero(..)`, which the rule's index maps divide by only in a select's branch taken where
/// the period is positive: `lower::border`), for a whole map evaluated elsewhere.
pub(crate) fn total_where(
    func: &Func,
    e: ExprId,
    var_ok: &dyn Fn(VarId) -> bool,
    periods: bool,
) -> bool {
    let x = &func.exprs[e];
    let own = match &x.kind {
        ExprKind::Load { .. }
        | ExprKind::Outside { .. }
        | ExprKind::Ramp { .. }
        | ExprKind::Broadcast(_)
        | ExprKind::Vector(_) => false,
        ExprKind::Var(v) => var_ok(*v),
        ExprKind::Binary(BinOp::Div | BinOp::Rem, _, d) if x.ty.is_int() => {
            safe_divisor(func, *d)
                || (periods && matches!(func.exprs[*d].kind, ExprKind::Call(Builtin::NonZero, _)))
        }
        _ => true,
    };
    own && visit::expr_children(&x.kind)
        .iter()
        .all(|c| total_where(func, *c, var_ok, periods))
}

/// A host expression of `f` (a size, a slot's bound) alone in a [`Func`], and its handle.
pub fn host_expr(f: &crate::ir::Function, e: &crate::ir::Expr) -> (Func, ExprId) {
    lower::host_expr(f, e)
}

/// The LIR of every function of a module after lowering and after each pass, for the CPU and
/// then for OpenCL (the passes after `simplify`), as the golden files and `parac emit lir`
/// show it.
pub fn dump_module(m: &crate::ir::Module) -> String {
    let mut out = String::new();
    for f in &m.functions {
        for (target, opts) in [("", Options::default()), ("opencl: ", Options::gpu())] {
            let opts = Options { dump: true, ..opts };
            for (stage, text) in lower(f, &opts).dumps {
                if target.is_empty() || !matches!(stage, "lower" | "simplify") {
                    out.push_str(&format!("// {target}after {stage}\n{text}"));
                }
            }
        }
    }
    out
}
