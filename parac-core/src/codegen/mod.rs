//! Code generation: the Rust items `parac!` expands to (`host.rs`), the CPU path (`cpu.rs`), the
//! OpenCL C programs and the host side of their launches as data (`opencl/`), the optimization
//! model (`plan.rs`), the memory-safety decisions (`safety.rs`) and the one namer of generated
//! identifiers (`namer.rs`).

pub mod cpu;
pub mod cpu_lir;
mod host;
pub mod launch;
pub mod namer;
pub mod opencl;
pub mod plan;
pub mod safety;
pub mod schedule;

pub use host::{declared, expand};

/// Which generator prints a function's CPU path. Not a stable interface: a `parac!` block
/// selects one with the inner attribute `#![parac(cpu = "lir")]` (or `"hast"`, the default) at
/// its top, so that both stay tested until the HAST generator is retired.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CpuBackend {
    /// `codegen::cpu`: Rust generated from the HAST.
    Hast,
    /// `codegen::cpu_lir`: Rust printed from the loop IR.
    #[default]
    Lir,
}
