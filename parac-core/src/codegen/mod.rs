//! Code generation: the Rust items `parac!` expands to (`host.rs`), the CPU path printed from
//! the loop IR (`cpu/`), the OpenCL C programs printed from it and the host side of their
//! launches as data (`opencl/`), the optimization model (`plan.rs`), schedules
//! (`schedule.rs`) and the memory-safety decisions (`safety.rs`). Both printers name a LIR
//! variable by its handle, so no generated name can meet another.

pub mod cpu;
mod host;
pub mod launch;
pub mod opencl;
pub mod plan;
pub mod safety;
pub mod schedule;

pub use crate::ir::display::declared;
pub use host::expand;

/// The name a region's plans, kernels and `PARAC_PLAN` entries go by: `r<k>_<name>` (`k` its
/// index, `name` its iterator's, non-alphanumerics as `_`), unique in its program.
pub fn plans_name(r: usize, name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("r{r}_{clean}")
}
