//! # parac
//!
//! ParaC, an image-processing language embedded in Rust: write a pipeline inside
//! [`parac!`], get a Rust function that checks its arguments and runs the pipeline.
//! See `docs/language.md` for the language reference.

pub use parac_macros::parac;
pub use parac_runtime::{
    Element, Error, Matrix, MatrixMut, MatrixRef, MatrixView, MatrixViewMut, PlanPolicy, Runtime,
    io, opencl,
};

#[doc(hidden)]
pub use parac_runtime::__private;

/// The usual imports: `use parac::prelude::*;`.
pub mod prelude {
    pub use crate::{
        Element, Error, Matrix, MatrixMut, MatrixRef, MatrixView, MatrixViewMut, Runtime, parac,
    };
}
