//! `parac devices`: the OpenCL devices the runtime sees, and the one `Runtime::new()` picks.

use parac::Runtime;

use crate::Outcome;

/// `parac devices`. No device is no error: the list says so (status 0).
pub fn devices() -> Outcome {
    match parac::opencl::devices() {
        Ok(list) => {
            outln!("OpenCL devices:")?;
            for (i, d) in list.iter().enumerate() {
                outln!(
                    "  {i}: {} / {} ({}; {} compute units, {} MiB, driver {})",
                    d.platform,
                    d.name,
                    if d.is_gpu { "GPU" } else { "not a GPU" },
                    d.compute_units,
                    d.global_mem >> 20,
                    d.driver_version
                )?;
            }
        }
        Err(e) => outln!("OpenCL devices: none ({e})")?,
    }
    let env = match parac::Config::from_env() {
        Ok(c) if c.device == parac::DeviceSelector::default() => {
            " (PARAC_DEVICE unset or `auto`: the first OpenCL GPU, else the CPU path, faster than an OpenCL CPU device; `opencl-cpu` asks for one)"
                .to_string()
        }
        Ok(c) => format!(" (PARAC_DEVICE={})", c.device),
        Err(_) => String::new(),
    };
    match Runtime::new() {
        Ok(rt) => outln!("Runtime::new() picks: {}{env}", rt.describe()),
        Err(e) => outln!("Runtime::new() fails: {e}{env}"),
    }
}
