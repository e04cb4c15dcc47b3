//! Runtime of ParaC: host matrices, the runtime handle and typed errors.
//!
//! This crate is deliberately small for now: the OpenCL devices, programs, buffers and the CPU
//! executor arrive with the runtime issue. What is here is what the code emitted by `parac!`
//! already relies on: [`Matrix`], [`Element`], [`Runtime`] and [`Error`].

mod error;
pub mod io;
mod matrix;
pub mod opencl;
mod runtime;

pub use error::Error;
pub use matrix::{Element, Matrix};
pub use runtime::Runtime;

/// Items used by the code that `parac!` emits; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::error::check_shape;
    pub use rayon;
}
