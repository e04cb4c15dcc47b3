//! The runtimes the pipeline tests run on: the CPU path always, and an OpenCL device when there
//! is one, through the same generated functions (the generated code picks its path from
//! `rt.device()`).
//!
//! As in `parac-runtime/tests/opencl.rs`: without OpenCL the OpenCL half of a test prints
//! "skipped: no OpenCL" and passes, unless `PARAC_REQUIRE_OPENCL=1`, which turns a missing device
//! into a failure. `PARAC_DEVICE=opencl:…` picks the device the tests run on.

#![allow(dead_code)]

use std::any::Any;
use std::collections::HashMap;
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use parac::Runtime;

/// Whether `PARAC_REQUIRE_OPENCL=1`: a missing OpenCL device is then a failure, not a skip.
pub fn opencl_required() -> bool {
    std::env::var("PARAC_REQUIRE_OPENCL").is_ok_and(|v| v == "1")
}

/// The device specification the OpenCL tests use: `PARAC_DEVICE` when it names an OpenCL
/// device, else `opencl` (the first device, GPUs first).
pub fn opencl_spec() -> String {
    std::env::var("PARAC_DEVICE")
        .ok()
        .filter(|s| s.trim().to_ascii_lowercase().starts_with("opencl"))
        .unwrap_or_else(|| "opencl".to_string())
}

/// The CPU path, one per test binary.
pub fn cpu() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(Runtime::cpu)
}

/// A fresh runtime on the OpenCL device of [`opencl_spec`], or `None` when there is none (then
/// it prints "skipped: no OpenCL"); panics instead when `PARAC_REQUIRE_OPENCL=1`.
pub fn fresh_opencl() -> Option<Runtime> {
    let spec = opencl_spec();
    // The environment's settings (`PARAC_PLAN`, `PARAC_GUARD_BANDS`...) on the device of `spec`.
    let config = parac::Config::from_env().expect("the PARAC_* variables");
    // The device itself from the first call: the tests check its kernels, not the CPU path a
    // call takes while the function warms up (tests/warm_up.rs covers that).
    match Runtime::builder()
        .config(config)
        .warm_up(parac::WarmUp::Wait)
        .device_spec(&spec)
        .and_then(parac::RuntimeBuilder::build)
    {
        // The model's plan, not the search: a search per size class would time every candidate
        // of every region of every test program (tests/plans.rs covers the search and every
        // candidate).
        Ok(rt) => {
            if let Some(d) = rt.device() {
                compile_once(d);
            }
            let rt = if std::env::var_os("PARAC_PLAN").is_none() {
                rt.with_policy(parac::PlanPolicy::Model)
            } else {
                rt
            };
            assert!(
                rt.device().is_some(),
                "`{spec}` gave no OpenCL device: {}",
                rt.describe()
            );
            Some(rt)
        }
        Err(e) => {
            if opencl_required() {
                panic!("PARAC_REQUIRE_OPENCL=1, but there is no OpenCL device: {e}");
            }
            println!("skipped: no OpenCL ({e})");
            None
        }
    }
}

/// The device settings every test runtime shares, so that the device compiles each kernel as
/// few times as it can: forced candidates come from one program per function
/// (`Device::set_one_program`; `PARAC_TEST_ONE_PROGRAM=0` builds each candidate's own program
/// instead), and no program binaries go to disk unless `PARAC_CACHE_DIR` names a cache (asking
/// PoCL for a binary makes it compile every kernel again for any work-group size, and it caches
/// what it compiles itself). Kernels are built with `PARAC_TEST_CL_OPTIONS`, else
/// `-cl-opt-disable`: PoCL compiles unoptimized kernels four to five times faster (`tests/plans.rs`
/// cold: 454 s -> 117 s), and what the tests check is the generated code's results. See
/// [`driver_optimized`] for the programs that keep the driver's optimizations;
/// `PARAC_TEST_CL_OPTIONS=` (empty) gives every test the driver's optimizations.
pub fn compile_once(d: &parac::opencl::Device) {
    if std::env::var_os("PARAC_CACHE_DIR").is_none() {
        d.set_program_cache_dir(None);
    }
    d.set_one_program(std::env::var("PARAC_TEST_ONE_PROGRAM").map_or(true, |v| v != "0"));
    test_build_options(d);
}

/// The tests' build options on `d`: `PARAC_TEST_CL_OPTIONS`, else `-cl-opt-disable` (see
/// [`compile_once`]).
pub fn test_build_options(d: &parac::opencl::Device) {
    let options = std::env::var("PARAC_TEST_CL_OPTIONS");
    d.set_build_options(options.as_deref().unwrap_or("-cl-opt-disable"));
}

/// Kernels built as a user's are, with the driver's optimizations (`PARAC_TEST_CL_OPTIONS`
/// still adds its options): for every fourth program of `tests/random_programs.rs` (new random
/// programs in every run, for a budget of time), so that generated code whose results depend
/// on the optimizer (undefined behaviour in OpenCL C) is still caught.
pub fn driver_optimized(d: &parac::opencl::Device) {
    d.set_build_options(&std::env::var("PARAC_TEST_CL_OPTIONS").unwrap_or_default());
}

/// One OpenCL runtime shared by the tests of a binary (its programs are built once), or `None`
/// (see [`fresh_opencl`]).
pub fn opencl() -> Option<&'static Runtime> {
    static RT: OnceLock<Option<Runtime>> = OnceLock::new();
    let rt = RT.get_or_init(fresh_opencl).as_ref();
    if rt.is_none() {
        if opencl_required() {
            panic!("PARAC_REQUIRE_OPENCL=1, but there is no OpenCL device");
        }
        println!("skipped: no OpenCL");
    }
    rt
}

/// The CPU path, then the OpenCL runtime if there is one.
pub fn all() -> Vec<&'static Runtime> {
    std::iter::once(cpu()).chain(opencl()).collect()
}

/// A short name of a runtime for failure messages: `CPU` or `OpenCL (<device>)`
/// ([`Runtime::describe`] gives the platform and driver too).
pub fn name(rt: &Runtime) -> String {
    match rt.device() {
        None => "CPU".to_string(),
        Some(d) => format!("OpenCL ({})", d.info().name),
    }
}

/// Tests that may create device buffers hold this shared; a test that counts the process-wide
/// live buffers (`parac::opencl::live_buffers()`) holds it exclusively, so the count is its own.
static BUFFERS: RwLock<()> = RwLock::new(());

/// Held by every test of a binary that runs pipelines on OpenCL, while it does.
pub fn shared_buffers() -> RwLockReadGuard<'static, ()> {
    BUFFERS.read().unwrap_or_else(PoisonError::into_inner)
}

/// Held by a test that counts live device buffers.
pub fn exclusive_buffers() -> RwLockWriteGuard<'static, ()> {
    BUFFERS.write().unwrap_or_else(PoisonError::into_inner)
}

/// A value computed once per test binary and key (e.g. a slow reference result shared by the
/// CPU and the OpenCL half of a test); a second caller with the same key waits for the first.
pub fn memo<T: Send + Sync + 'static>(key: &str, f: impl FnOnce() -> T) -> Arc<T> {
    type Slot = Arc<OnceLock<Arc<dyn Any + Send + Sync>>>;
    static MEMO: OnceLock<Mutex<HashMap<String, Slot>>> = OnceLock::new();
    let slot: Slot = MEMO
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(key.to_string())
        .or_default()
        .clone();
    slot.get_or_init(|| Arc::new(f()) as Arc<dyn Any + Send + Sync>)
        .clone()
        .downcast::<T>()
        .unwrap_or_else(|_| panic!("memo key `{key}` used with two types"))
}

/// What a test run in a child process did.
#[derive(Debug)]
pub struct Child {
    /// Whether it exited with status 0.
    pub success: bool,
    /// Its exit status, as text (`signal: 8 (SIGFPE)`...).
    pub status: String,
    /// Its stdout and stderr.
    pub output: String,
}

/// Runs the test `name` (ignored or not) of this test binary alone in a child process, with `env` set:
/// for what could crash the process (an out-of-bounds access or a division by zero on a
/// device) or needs its own environment.
pub fn run_child(name: &str, env: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([
        name,
        "--exact",
        "--include-ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run the child test");
    Child {
        success: out.status.success(),
        status: out.status.to_string(),
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}
