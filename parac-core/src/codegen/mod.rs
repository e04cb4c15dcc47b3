//! Code generation: the Rust items `parac!` expands to (`host.rs`), the CPU path printed from the loop IR (`cpu/`), the
//! OpenCL C programs and the host side of their launches as data (`opencl/`), the optimization
//! model (`plan.rs`), the memory-safety decisions (`safety.rs`) and the one namer of generated
//! identifiers (`namer.rs`).

pub mod cpu;
mod host;
pub mod launch;
pub mod namer;
pub mod opencl;
pub mod plan;
pub mod safety;
pub mod schedule;

pub use host::{declared, expand};
