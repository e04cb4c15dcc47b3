//! Code generation. For now: the Rust items `parac!` expands to (the function signature, the
//! run-time binding and checking of sizes and shapes); the OpenCL and CPU back ends arrive with
//! the runtime issue.

pub mod cpu;
mod host;
pub mod opencl;
pub mod plan;
pub mod safety;

pub use host::{declared, expand};
