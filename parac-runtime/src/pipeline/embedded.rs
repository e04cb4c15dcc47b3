//! The OpenCL path of the code `parac!` emits: the function's source, embedded as a string, is
//! compiled by the same compiler once per thread, and the call runs on the one executor of the
//! OpenCL path (`device.rs`) with the caller's matrices borrowed as they are. The macro emits
//! no host code of its own for devices: a few lines per function instead of hundreds of
//! kilobytes.
//!
//! A [`Pipeline`] holds the compiler's IR, which is neither `Send` nor `Sync` (token spans),
//! hence one per thread; the programs it builds and the plans it chooses are the device's,
//! shared by every thread.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::{HostArg, Pipeline, Val};
use crate::opencl::Device;
use crate::{Error, Runtime};

thread_local! {
    /// The pipelines compiled on this thread, by the address and length of their source.
    static PIPELINES: RefCell<HashMap<(usize, usize), Rc<Pipeline>>> =
        RefCell::new(HashMap::new());
}

/// The pipeline of `source`, compiled on this thread's first use.
pub(super) fn pipeline(source: &'static str) -> Result<Rc<Pipeline>, Error> {
    let key = (source.as_ptr() as usize, source.len());
    if let Some(p) = PIPELINES.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(p);
    }
    let p = Rc::new(Pipeline::compile_named("parac!", source)?);
    if p.functions().len() != 1 {
        return Err(Error::Compile {
            message: format!(
                "an embedded pipeline holds {} functions, not one",
                p.functions().len()
            ),
        });
    }
    PIPELINES.with(|c| c.borrow_mut().insert(key, p.clone()));
    Ok(p)
}

/// Called by the code `parac!` emits before it picks its path (the CPU path or a device):
/// writes the function's IR when the runtime's configuration has a dump directory
/// (`Config::dump`, `PARAC_DUMP`); does nothing otherwise.
pub fn dump_ir(rt: &Runtime, source: &'static str) -> Result<(), Error> {
    if let Some(dir) = &rt.config().dump {
        let p = pipeline(source)?;
        let f = &p.functions()[0];
        crate::opencl::dump(dir, &f.name, "ir", &parac_core::ir::display::dump_one(f))?;
    }
    Ok(())
}

/// What [`run_embedded`] did.
#[derive(Debug)]
pub enum Ran {
    /// The call ran on the device and returned this.
    Device(Option<Val>),
    /// The call is to run on the CPU path while the function warms up on the device
    /// ([`WarmUp::CpuPath`](crate::WarmUp), `warm.rs`); the caller holds the turn until it
    /// returns, so that the background thread's timings wait for it.
    CpuPath(crate::background::CpuTurn),
}

/// Runs the one function of `source` (a `parac!` function's tokens as text) on `dev`, with its
/// arguments in parameter order (or tells the caller to take the CPU path: [`Ran`]). The macro
/// has compiled the same text already, so a compile error here is a bug of the compiler's
/// determinism; it is reported as [`Error::Compile`].
pub fn run_embedded(
    rt: &Runtime,
    dev: &Device,
    source: &'static str,
    args: &mut [HostArg],
) -> Result<Ran, Error> {
    use super::warm::Route;
    // The function is compiled on this thread only where it runs on the device (the CPU
    // path's calls do not pay for it).
    match super::warm::route(rt, dev, source, args) {
        Route::CpuPath => Ok(Ran::CpuPath(crate::background::CpuTurn::new())),
        Route::Device => pipeline(source)?
            .run_device(dev, rt.policy(), 0, args)
            .map(Ran::Device),
        Route::Model => {
            // The background thread's timings wait for the call, as for the CPU path.
            let _turn = crate::background::CpuTurn::new();
            pipeline(source)?
                .run_device(dev, &crate::PlanPolicy::Model, 0, args)
                .map(Ran::Device)
        }
    }
}
