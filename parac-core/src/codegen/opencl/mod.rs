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
//! Here: C's spelling of types and literals; programs and kernel signatures in `program.rs`;
//! every iterator region's kernel, of every plan, printed from the loop IR in `kernel/`; a
//! global operator's kernels in `baseline.rs` (one partial per row) and `reduce.rs` (trees);
//! the interior box of split plans in `partition.rs`.

mod baseline;
mod kernel;
mod partition;
mod program;
mod reduce;

pub use kernel::{INDEX_SLACK, body_nodes, later_phases, local_bytes, program, slides};
pub use partition::{Bound, bounds};
pub use program::{append_candidate, candidate_program, kernel_name, variant_name};
pub(crate) use program::{cl_slots, hosts_used, used};

// The printer's items shared across its files (each child has `use super::*`).
use baseline::{reduction_kernel, rows_cols};

use super::schedule::Schedule;
use crate::ir::*;
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
        Scalar::I64 if v == i64::MIN as i128 => "(-9223372036854775807L - 1)".to_string(),
        Scalar::I64 => format!("({v}L)"),
        Scalar::U64 => format!("({}UL)", v as u64),
        Scalar::U32 => format!("({}u)", v as u32),
        Scalar::Bool => format!("{}", (v != 0) as i32),
        Scalar::I32 if v == i32::MIN as i128 => "(-2147483647 - 1)".to_string(),
        _ => format!("(({}){v})", cty(s)),
    }
}

/// What of `f` OpenCL cannot run, if anything: prefixes along two of a region's variables
/// (the running values along the first need one per point of the second, an array as wide as
/// the image in each work-item, which OpenCL C cannot size when the kernel runs).
pub fn unsupported(f: &Function) -> Option<String> {
    f.regions.iter().find(|r| r.prefix_slots().len() > 1).map(|r| {
        format!(
            "on OpenCL, prefixes along two of `{}`'s variables (scan the rows in one iterator and the columns in another)",
            r.name
        )
    })
}
