//! # parac
//!
//! ParaC, an image-processing language embedded in Rust: write a pipeline inside
//! [`parac!`], get a Rust function that checks its arguments and runs the pipeline; or compile
//! ParaC source at run time with [`Pipeline::compile`] and run its functions on the same
//! kernels and plans.
//! See `docs/language.md` for the language reference.

pub use parac_macros::parac;
pub use parac_runtime::{
    Element, Error, Matrix, MatrixMut, MatrixRef, MatrixView, MatrixViewMut, Pipeline, PlanPolicy,
    Runtime, io, opencl, pipeline,
};

#[doc(hidden)]
pub use parac_runtime::__private;

/// The usual imports: `use parac::prelude::*;`.
pub mod prelude {
    pub use crate::{
        Element, Error, Matrix, MatrixMut, MatrixRef, MatrixView, MatrixViewMut, Runtime, parac,
    };
}
