//! The OpenCL back end, baseline plan: one kernel per parallel region, one work-item per
//! iteration point.
//!
//! - Border rules are region-specialised: each work-item decides once whether all its
//!   bordered reads are inside their matrices (the interior) and runs a body without any check;
//!   otherwise it runs the body whose bordered reads pick the rule's value for the side or
//!   corner they fall in.
//! - A global operator is a kernel writing one partial result per row, combined on the host
//!   (exact for integers: 64-bit partials, carried as two 32-bit halves).
//! - Sizes and host scalars are kernel arguments, so one program build serves every image size.
//! - The host side is data (`host.rs`), run by the runtime's executor of the OpenCL path.
//!
//! Here: the printer's state `K` and C's spelling of types and literals; programs and kernel
//! signatures in `program.rs`, the baseline kernels in `baseline.rs`, border rules in
//! `border.rs`, matrix accesses in `access.rs`, expressions and statements in `expr.rs`; the
//! optimized plans' kernels in `variant.rs` (with `cache.rs`, `unroll.rs`, `tile.rs`).

mod access;
mod baseline;
mod border;
mod cache;
mod expr;
mod kernel;
mod names;
mod partition;
mod program;
mod range;
mod reduce;
mod tile;
mod unroll;
pub(crate) mod variant;

pub use kernel::program;
pub use partition::{Bound, bounds};
pub use program::{append_candidate, candidate_program, kernel_name, variant_name};
pub(crate) use program::{cl_slots, hosts_used, used};
pub use tile::local_bytes;

// The printer's items shared across its files (each child has `use super::*`).
use baseline::{reduction_kernel, rows_cols};
use border::{border_helpers, bordered, has_rule};
use cache::{Cache, Pending};
use expr::{c_op, call_c, shape};
use program::params;
use tile::{Tile, tiles};
use variant::{affs, lanes_of};

use super::namer::Namer;
use super::schedule::Schedule;
use crate::check::relative::Affine;
use crate::ir::*;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt::Write as _;

/// The OpenCL C type of a scalar as stored in memory.
fn cty(s: Scalar) -> &'static str {
    s.cl_name()
}

/// The kernel-argument type of a host scalar (small types travel as `int`).
pub(crate) fn arg_ty(s: Scalar) -> Scalar {
    match s {
        Scalar::U32 | Scalar::I64 | Scalar::U64 | Scalar::F32 => s,
        _ => Scalar::I32,
    }
}

fn c_float(v: f64) -> String {
    let s = format!("{:?}", v as f32);
    if s.contains('e') || s.contains('.') {
        format!("{s}f")
    } else {
        format!("{s}.0f")
    }
}

fn c_int(v: i128, s: Scalar) -> String {
    match s {
        Scalar::F32 => c_float(v as f64),
        Scalar::I64 => format!("({v}L)"),
        Scalar::U64 => format!("({}UL)", v as u64),
        Scalar::U32 => format!("({}u)", v as u32),
        Scalar::Bool => format!("{}", (v != 0) as i32),
        Scalar::I32 if v == i32::MIN as i128 => "(-2147483647 - 1)".to_string(),
        _ => format!("(({}){v})", cty(s)),
    }
}

struct K<'a> {
    f: &'a Function,
    r: &'a Region,
    /// Whether bordered reads are checked (false in the interior body).
    checked: bool,
    /// The kernel's namer (`names::kernel_namer`), shared by every body of the kernel.
    names: &'a RefCell<Namer>,
    /// The plan being generated.
    v: Schedule,
    /// The C expression of each slot's index variable.
    vars: Vec<String>,
    /// Per slot, the variable keyed loads are rendered from: its value is the base plus
    /// `loff` (the work-item's first point in the fast path of lanes, the variable itself
    /// elsewhere).
    bases: Vec<String>,
    /// Local-memory tiles (`lds`).
    tiles: &'a [Tile],
    /// Suffix of local names: each lane has its own locals.
    sfx: String,
    /// Per slot, this lane's offset from the work-item's first point (`v<slot>`), in index
    /// values; the cache keys of loads fold it in.
    loff: Vec<i64>,
    /// Loads shared by the lanes of a work-item (`cse`), with their declarations.
    cache: Option<&'a RefCell<Cache>>,
    /// Stores gathered for vector stores (`vmem`).
    stores: Option<&'a RefCell<Vec<Pending>>>,
    /// The affine form of each subscript of each access (the point, or a window's start).
    aff: &'a [Vec<Option<Affine>>],
    /// Depth inside `if` branches (loads there are not hoisted unless common to both).
    branch: Cell<usize>,
    /// Accesses read in both branches of an `if`: hoistable.
    hoistable: RefCell<Vec<AccessId>>,
    /// Proven value ranges of scalar locals (`peep`).
    ranges: RefCell<HashMap<LocalId, (i128, i128)>>,
}

impl<'a> K<'a> {
    /// The baseline generator: one iteration point, variables `v<slot>`.
    fn plain(f: &'a Function, r: &'a Region, checked: bool, names: &'a RefCell<Namer>) -> K<'a> {
        K {
            f,
            r,
            checked,
            names,
            v: Schedule::baseline(),
            vars: (0..r.dims.len()).map(|s| format!("v{s}")).collect(),
            bases: (0..r.dims.len()).map(|s| format!("v{s}")).collect(),
            tiles: &[],
            sfx: String::new(),
            loff: vec![0; r.dims.len()],
            cache: None,
            stores: None,
            aff: &[],
            branch: Cell::new(0),
            hoistable: RefCell::new(Vec::new()),
            ranges: RefCell::new(HashMap::new()),
        }
    }
}

impl K<'_> {
    /// A fresh local of the kernel (`t<n>`, see `names.rs`).
    fn fresh(&self) -> String {
        self.names.borrow_mut().call("t")
    }

    fn r_id(&self) -> RegionId {
        self.f
            .regions
            .iter()
            .position(|x| std::ptr::eq(x, self.r))
            .expect("region of its function")
    }
}
