//! The OpenCL back end: devices, programs (built once, cached), buffers with padded rows,
//! launches and transfers.
//!
//! Everything here goes through `opencl3` with its `dynamic` feature: `libOpenCL` is loaded the
//! first time a function needs it. On a machine without it (or without any platform behind the
//! ICD loader) discovery reports "no OpenCL" and [`Runtime::new`](crate::Runtime::new) falls back
//! to the CPU path; nothing here panics for that.
//!
//! The pieces:
//! - [`Device`] (in `device.rs`): one context and one in-order queue on one OpenCL device, with
//!   its [`DeviceInfo`]; discovery and the `PARAC_DEVICE` matching live there too.
//! - [`Program`] (in `program.rs`): a built program, from the per-device process cache, the disk
//!   cache of program binaries, or the source.
//! - [`Buffer`] and [`Scalar`] (in `buffer.rs`): device matrices with rows padded to the cache
//!   line, and one-element buffers for reductions.
//! - [`Arg`] and [`Device::launch`] (in `launch.rs`): kernel arguments, set with fallible calls,
//!   and enqueueing with work-group fallbacks.
//! - [`RegionPlans`] and [`Device::run_region`] (in `plan.rs`): a region's candidate kernels and
//!   the choice among them (the plan search, budgeted and resumable, in `plan/search.rs`; the
//!   plan cache files and their bundles, in `plan/cache.rs`; the policies).
//! - [`Input`] and [`Output`] (in `view.rs`): a call's host matrices on the device, in place
//!   where the device's memory is the host's, else copies.
//! - the error flags of calls that did not wait for their kernels, read at the next wait (in
//!   `pending.rs`).
//! - [`transfers`] and [`copying`] (in `transfer.rs`): this thread's copies counted, and the
//!   copying path forced on a host-memory device.
//! - guard bands (in `guard.rs`, opt-in: `PARAC_GUARD_BANDS=1`, [`Device::set_guard_bands`]):
//!   every device buffer a sub-buffer between two guard regions holding a known pattern,
//!   checked when it is dropped and by [`Device::check_guards`].

mod buffer;
mod build;
mod device;
mod guard;
mod launch;
mod partition;
mod pending;
mod plan;
mod pool;
mod program;
mod transfer;
mod view;

use std::sync::atomic::{AtomicUsize, Ordering};

pub use buffer::{Buffer, MemArg, Pod, Scalar};
#[doc(hidden)]
pub use build::cache_file_path;
pub(crate) use device::select;
pub use device::{Device, DeviceInfo, devices};
pub use guard::{GuardSide, GuardViolation, MIN_GUARD, guard_violations};
pub use launch::Arg;
pub use partition::{Bound, interior};
pub use plan::{
    Candidate, PlanRecord, Ran, RegionPlans, cache_root, clear_cache, describe as describe_plan,
    export_plans, import_plans, plan_records, timings_made,
};
pub(crate) use program::dump;
pub use program::{Program, Source};
pub use transfer::{Transfers, copying, transfers};
pub use view::{Input, Output};

use crate::Error;

/// The raw OpenCL memory handle (`cl_mem`), as [`MemArg`] hands it to `clSetKernelArg`.
pub type RawMem = opencl3::types::cl_mem;

/// Device buffers ([`Buffer`] and [`Scalar`]) alive in this process, all devices together.
static LIVE_BUFFERS: AtomicUsize = AtomicUsize::new(0);

/// How many device buffers ([`Buffer`]s and [`Scalar`]s of every device) are alive now. Tests use
/// it to check that repeated calls do not leak device memory.
#[doc(hidden)]
pub fn live_buffers() -> usize {
    LIVE_BUFFERS.load(Ordering::SeqCst)
}

pub(crate) fn buffer_created() {
    LIVE_BUFFERS.fetch_add(1, Ordering::SeqCst);
}

pub(crate) fn buffer_released() {
    LIVE_BUFFERS.fetch_sub(1, Ordering::SeqCst);
}

/// An [`Error::OpenCl`] for a failed call: `op` names the call and its object, e.g.
/// `clEnqueueNDRangeKernel(h_pass)`.
pub(crate) fn cl_error(op: impl Into<String>, code: i32, detail: impl Into<String>) -> Error {
    Error::OpenCl {
        op: op.into(),
        code,
        name: error_name(code),
        detail: detail.into(),
    }
}

/// The name of an OpenCL status code, e.g. `CL_OUT_OF_RESOURCES` for -5, as `opencl3`'s
/// `error_codes::error_text` gives it (extensions' codes and its dynamic loader's two codes
/// included: `DLOPEN_RUNTIME_LOAD_FAILED`, -2000, `libOpenCL` could not be loaded;
/// `DLOPEN_FUNCTION_NOT_AVAILABLE`, -2001, the loaded library lacks the function);
/// `CL_UNKNOWN_ERROR` for codes it does not know.
pub fn error_name(code: i32) -> &'static str {
    match opencl3::error_codes::error_text(code) {
        "UNKNOWN_ERROR" => "CL_UNKNOWN_ERROR",
        name => name,
    }
}

/// Status codes the code here tests for.
pub(crate) mod code {
    use opencl3::error_codes as ec;

    pub const DEVICE_NOT_FOUND: i32 = ec::CL_DEVICE_NOT_FOUND;
    pub const OUT_OF_RESOURCES: i32 = ec::CL_OUT_OF_RESOURCES;
    pub const OUT_OF_HOST_MEMORY: i32 = ec::CL_OUT_OF_HOST_MEMORY;
    pub const BUILD_PROGRAM_FAILURE: i32 = ec::CL_BUILD_PROGRAM_FAILURE;
    pub const MAP_FAILURE: i32 = ec::CL_MAP_FAILURE;
    pub const COMPILE_PROGRAM_FAILURE: i32 = ec::CL_COMPILE_PROGRAM_FAILURE;
    pub const LINK_PROGRAM_FAILURE: i32 = ec::CL_LINK_PROGRAM_FAILURE;
    pub const INVALID_VALUE: i32 = ec::CL_INVALID_VALUE;
    pub const INVALID_CONTEXT: i32 = ec::CL_INVALID_CONTEXT;
    pub const INVALID_BUILD_OPTIONS: i32 = ec::CL_INVALID_BUILD_OPTIONS;
    pub const INVALID_KERNEL_NAME: i32 = ec::CL_INVALID_KERNEL_NAME;
    pub const INVALID_KERNEL_ARGS: i32 = ec::CL_INVALID_KERNEL_ARGS;
    pub const INVALID_WORK_DIMENSION: i32 = ec::CL_INVALID_WORK_DIMENSION;
    pub const INVALID_WORK_GROUP_SIZE: i32 = ec::CL_INVALID_WORK_GROUP_SIZE;
    pub const INVALID_WORK_ITEM_SIZE: i32 = ec::CL_INVALID_WORK_ITEM_SIZE;
    pub const INVALID_BUFFER_SIZE: i32 = ec::CL_INVALID_BUFFER_SIZE;
    pub const INVALID_GLOBAL_WORK_SIZE: i32 = ec::CL_INVALID_GLOBAL_WORK_SIZE;
    pub const PLATFORM_NOT_FOUND_KHR: i32 = ec::CL_PLATFORM_NOT_FOUND_KHR;
    pub const DLOPEN_RUNTIME_LOAD_FAILED: i32 = ec::DLOPEN_RUNTIME_LOAD_FAILED;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_names() {
        assert_eq!(error_name(-5), "CL_OUT_OF_RESOURCES");
        assert_eq!(error_name(-54), "CL_INVALID_WORK_GROUP_SIZE");
        assert_eq!(error_name(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
        assert_eq!(error_name(-2000), "DLOPEN_RUNTIME_LOAD_FAILED");
        assert_eq!(error_name(12345), "CL_UNKNOWN_ERROR");
        // The names are opencl3's, the constants the code tests for too.
        use opencl3::error_codes as ec;
        for c in [
            ec::CL_DEVICE_NOT_FOUND,
            ec::CL_OUT_OF_RESOURCES,
            ec::CL_BUILD_PROGRAM_FAILURE,
            ec::CL_INVALID_KERNEL_ARGS,
            ec::CL_INVALID_WORK_ITEM_SIZE,
            ec::CL_MAX_SIZE_RESTRICTION_EXCEEDED,
            ec::CL_PLATFORM_NOT_FOUND_KHR,
        ] {
            assert_eq!(error_name(c), ec::error_text(c), "code {c}");
        }
        assert_eq!(
            code::INVALID_WORK_GROUP_SIZE,
            ec::CL_INVALID_WORK_GROUP_SIZE
        );
        assert_eq!(
            code::INVALID_GLOBAL_WORK_SIZE,
            ec::CL_INVALID_GLOBAL_WORK_SIZE
        );
        assert_eq!(
            code::DLOPEN_RUNTIME_LOAD_FAILED,
            ec::DLOPEN_RUNTIME_LOAD_FAILED
        );
    }

    #[test]
    fn handles_are_send_and_sync() {
        fn shared<T: Send + Sync + std::fmt::Debug>() {}
        shared::<Device>();
        shared::<Program>();
        shared::<Buffer<u8>>();
        shared::<Buffer<f32>>();
        shared::<Scalar<i64>>();
        shared::<Arg<'static>>();
    }

    #[test]
    fn cl_error_fills_the_name() {
        let e = cl_error("clFinish", -5, "");
        assert_eq!(
            e.to_string(),
            "OpenCL error -5 (CL_OUT_OF_RESOURCES) in clFinish"
        );
    }
}
