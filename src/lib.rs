#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

pub use parac_macros::parac;
pub use parac_runtime::{
    CacheConfig, Config, CpuIsa, DeviceKind, DeviceMatrix, DeviceSelector, DeviceView,
    DeviceViewMut, Element, Elements, ElementsMut, Error, LayoutError, LogConfig, Matrix,
    MatrixMut, MatrixRef, MatrixView, MatrixViewMut, OnDevice, OnDeviceMut, Pipeline, Pitch,
    PlanPolicy, Runtime, RuntimeBuilder, Strided, StridedMut, WarmUp, config, io, opencl, pipeline,
};

#[doc(hidden)]
pub use parac_runtime::__private;

/// The usual imports: `use parac::prelude::*;`.
pub mod prelude {
    pub use crate::{
        DeviceMatrix, Element, Error, Matrix, MatrixMut, MatrixRef, MatrixView, MatrixViewMut,
        Runtime, parac,
    };
}
pub mod guide;
