//! Runtime of ParaC: host matrices ([`Matrix`], [`Element`], the zero-copy views
//! [`MatrixView`] and [`MatrixViewMut`]), matrices kept on a device ([`DeviceMatrix`]), the
//! runtime handle ([`Runtime`]: an OpenCL device or the CPU path) and its configuration
//! ([`config`]: device selection, plan policy, caches), typed errors ([`Error`]), the OpenCL
//! back end ([`opencl`]: devices, programs, buffers, launches, plan choice, the plan cache),
//! file I/O ([`io`]) and pipelines compiled at run time ([`Pipeline`]).
//!
//! Programs use it through the `parac` crate, which re-exports these items beside the
//! `parac!` macro; the code the macro emits calls this crate's hidden `__private` items, so
//! the crates go at the same version.

#![warn(missing_docs)]

mod background;
// The bounds checks of the code `parac!` emits (`__private::bounds`), public for it only.
#[doc(hidden)]
pub mod bounds;
mod caches;
mod colour;
pub mod config;
mod cpu;
mod error;
mod interop;
pub mod io;
mod isa;
mod layout;
mod matrix;
pub mod opencl;
pub mod pipeline;
mod resident;
mod runtime;
mod scan;
mod scratch;
mod stage;
mod stream;
mod sums;
mod swaps;
mod within;
mod workers;

pub use config::{CacheConfig, Config, DeviceKind, DeviceSelector, LogConfig, WarmUp};
pub use error::Error;
pub use isa::CpuIsa;
pub use layout::{Elements, ElementsMut, LayoutError, Pitch, Strided, StridedMut};
pub use matrix::{Element, Matrix, MatrixMut, MatrixRef, MatrixView, MatrixViewMut};
pub use pipeline::Pipeline;
pub use resident::{DeviceMatrix, DeviceView, DeviceViewMut, OnDevice, OnDeviceMut};
pub use runtime::{PlanPolicy, Runtime, RuntimeBuilder};

/// Items used by the code that `parac!` emits; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::bounds;
    /// The CPU path printed from the loop IR: checked positions and their errors.
    pub mod cpu {
        pub use crate::caches::{cache_bytes, fuses};
        pub use crate::cpu::*;
        pub use crate::isa::vector;
        /// The CPU path's threads.
        pub mod workers {
            pub use crate::workers::{chunk_map, map, run, threads, try_for_each};
        }
        pub use crate::scan::{ScanOp, scan_row};
        pub use crate::scratch::{Scratch, scratch};
        pub use crate::stage::{stage, stage_rows};
        pub use crate::stream::{Block, block_end, block_len, fence, put};
        pub use crate::sums::int_sum;
        pub use crate::swaps::deliver;
        pub use crate::within::within;
    }
    pub use crate::error::{check_rank, check_shape};
    /// The CPU path: inputs and outputs as contiguous slices.
    pub use crate::layout::{Contiguous, ContiguousMut, contiguous, contiguous_mut};
    /// The OpenCL path: the function's source run by the runtime's executor.
    pub use crate::pipeline::{FromVal, HostArg, Ran, dump_ir, returned, run_embedded};
}
