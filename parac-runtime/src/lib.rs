//! Runtime of ParaC: host matrices, the runtime handle and typed errors.
//!
//! This crate is deliberately small for now: the OpenCL devices, programs, buffers and the CPU
//! executor arrive with the runtime issue. What is here is what the code emitted by `parac!`
//! already relies on: [`Matrix`], [`Element`], [`Runtime`] and [`Error`].

pub mod bounds;
mod error;
pub mod io;
mod matrix;
pub mod opencl;
mod runtime;

pub use error::Error;
pub use matrix::{Element, Matrix, MatrixMut, MatrixRef, MatrixView, MatrixViewMut};
pub use runtime::{PlanPolicy, Runtime};

/// Items used by the code that `parac!` emits; not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::bounds;
    pub use crate::error::{check_rank, check_shape};
    pub use rayon;

    /// With `PARAC_DUMP=<dir>`, writes `<dir>/<name>.<ext>` (the IR of a pipeline's regions;
    /// the OpenCL programs are written by `Device::program`).
    pub fn dump_text(name: &str, ext: &str, text: &str) -> Result<(), crate::Error> {
        let Some(dir) = std::env::var_os("PARAC_DUMP").filter(|d| !d.is_empty()) else {
            return Ok(());
        };
        let path = std::path::Path::new(&dir).join(format!("{name}.{ext}"));
        std::fs::create_dir_all(&dir)
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|e| crate::Error::Io {
                path: path.display().to_string(),
                message: format!("cannot write the PARAC_DUMP file: {e}"),
            })
    }
}
