//! OpenCL devices: discovery, the matching of a [`DeviceSelector`], and [`Device`] (one context
//! and one in-order queue).

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::device::{
    self as cl_device, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
};
use opencl3::platform::get_platforms;

use super::guard::GuardViolation;
use super::program::ProgramCache;
use super::{cl_error, code, error_name};
use crate::Error;
use crate::config::{Config, DeviceKind, DeviceSelector};

/// What the runtime knows about an OpenCL device; the planner reads its limits from here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceInfo {
    /// The platform's name, e.g. `NVIDIA CUDA` or `Portable Computing Language`.
    pub platform: String,
    /// The device's name.
    pub name: String,
    /// The device's vendor.
    pub vendor: String,
    /// The driver's version (`CL_DRIVER_VERSION`).
    pub driver_version: String,
    /// Whether the device is a GPU (`CL_DEVICE_TYPE_GPU`).
    pub is_gpu: bool,
    /// Whether the device is the host's CPU (`CL_DEVICE_TYPE_CPU`, PoCL): its kernels are
    /// host code over host memory.
    pub is_cpu: bool,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`.
    pub compute_units: u32,
    /// `CL_DEVICE_MAX_WORK_GROUP_SIZE`.
    pub max_work_group_size: usize,
    /// `CL_DEVICE_LOCAL_MEM_SIZE`, in bytes.
    pub local_mem_size: u64,
    /// `CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE` in bytes; 64 where the device reports 0. Rows of
    /// device matrices are padded to a multiple of it.
    pub cache_line: usize,
    /// `CL_DEVICE_MAX_MEM_ALLOC_SIZE`, in bytes: the largest single buffer.
    pub max_alloc: u64,
    /// `CL_DEVICE_GLOBAL_MEM_SIZE`, in bytes.
    pub global_mem: u64,
    /// Whether the device's memory is the host's: `CL_DEVICE_HOST_UNIFIED_MEMORY`, or a CPU
    /// device (PoCL). Transfers then copy through mappings of the buffers, which are no copies.
    pub host_unified_memory: bool,
    /// `CL_DEVICE_PREFERRED_VECTOR_WIDTH_{CHAR, SHORT, INT, FLOAT}`.
    pub preferred_vector_width: [u32; 4],
}

/// One OpenCL device with its context and one in-order command queue, and its caches of built
/// programs. `Send + Sync`: threads share it by reference (OpenCL's calls are thread-safe, and
/// kernel objects are never shared between concurrent launches).
pub struct Device {
    // Field order is drop order: programs (and their kernels), pooled memory, then the queue,
    // then the context.
    pub(super) programs: Mutex<ProgramCache>,
    /// Memory of dropped buffers, kept for reuse (`pool.rs`).
    pub(super) pool: super::pool::Shared,
    /// Guard bands around buffers, when on (`guard.rs`).
    pub(super) guards: super::guard::Shared,
    /// Forced plans share one program per function (`set_one_program`).
    one_program: AtomicBool,
    /// Options added to every program build (`set_build_options`).
    build_options: Mutex<String>,
    pub(super) queue: CommandQueue,
    pub(super) context: Context,
    pub(super) device: cl_device::Device,
    pub(super) info: DeviceInfo,
    /// `CL_DEVICE_VERSION`, part of the disk cache's key.
    pub(super) version: String,
    /// Where program binaries are cached; `None` when the cache is off or there is no cache
    /// directory.
    pub(super) cache_dir: Mutex<Option<PathBuf>>,
    /// The cache is read, never written.
    pub(super) cache_read_only: AtomicBool,
    /// Where generated programs and IR are written (`Config::dump`).
    pub(super) dump: Option<PathBuf>,
    /// The device itself, for the background thread's builds (`Device::handle`).
    pub(super) me: Weak<Device>,
    /// Added to every build from source (`set_build_delay`, for tests).
    pub(super) build_delay: Mutex<Duration>,
    /// The build logs of programs that built with warnings (`build_warnings`).
    pub(super) warnings: Mutex<Vec<String>>,
    /// The error flags of calls that did not wait for their kernels (`pending.rs`).
    pub(super) pending: super::pending::Flags,
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl Device {
    /// What is known about the device.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Waits until every command enqueued so far (launches, transfers) has completed; errors of
    /// asynchronous commands (e.g. a kernel that ran out of resources) surface here.
    pub fn finish(&self) -> Result<(), Error> {
        self.queue
            .finish()
            .map_err(|e| cl_error("clFinish", e.0, format!("on {}", self.info.name)))
    }

    /// Releases the device memory kept for reuse, and returns its size in bytes. A dropped
    /// [`Buffer`](super::Buffer) or [`Scalar`](super::Scalar) gives its memory back to its
    /// device, and the next buffer of the same size in bytes takes it instead of a fresh
    /// allocation (as Halide's `halide_reuse_device_allocations`): a pipeline called again and
    /// again allocates nothing after its first call. The device keeps at most
    /// [`pool_limit`](Device::pool_limit) bytes, releasing the oldest first, and releases them
    /// all when it is dropped. Memory kept is not counted by
    /// [`live_buffers`](super::live_buffers).
    pub fn trim(&self) -> usize {
        super::pool::clear(&self.pool)
    }

    /// The bytes of device memory kept for reuse now (see [`trim`](Device::trim)).
    pub fn pooled_bytes(&self) -> usize {
        super::pool::pooled(&self.pool)
    }

    /// The number of memory objects kept for reuse now (see [`trim`](Device::trim)).
    pub fn pooled_buffers(&self) -> usize {
        super::pool::count(&self.pool)
    }

    /// The most bytes of dropped buffers' memory the device keeps for reuse: 1 GiB, or a quarter
    /// of its global memory if that is less, unless [`set_pool_limit`](Device::set_pool_limit)
    /// changed it.
    pub fn pool_limit(&self) -> usize {
        super::pool::limit(&self.pool)
    }

    /// Sets [`pool_limit`](Device::pool_limit), releasing the oldest memory kept beyond it; 0
    /// turns the reuse off (dropped buffers release their memory at once).
    pub fn set_pool_limit(&self, bytes: usize) {
        super::pool::set_limit(&self.pool, bytes);
    }

    /// Where this device caches program binaries (`None`: the disk cache is off).
    #[doc(hidden)]
    pub fn program_cache_dir(&self) -> Option<PathBuf> {
        self.cache_dir
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether the disk cache is read only (`CacheConfig::read_only`).
    pub fn cache_read_only(&self) -> bool {
        self.cache_read_only.load(Ordering::Relaxed)
    }

    /// Where generated OpenCL programs and IR are written (`Config::dump`).
    pub fn dump_dir(&self) -> Option<&std::path::Path> {
        self.dump.as_deref()
    }

    /// Moves (or, with `None`, turns off) the disk cache of program binaries for this device;
    /// tests use it to work in a directory of their own.
    #[doc(hidden)]
    pub fn set_program_cache_dir(&self, dir: Option<PathBuf>) {
        *self
            .cache_dir
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = dir;
    }

    /// The context's handle, which buffers and programs remember to catch mixing devices.
    pub(crate) fn context_id(&self) -> usize {
        self.context.get() as usize
    }

    /// Creates the context and queue on a discovered device.
    fn open(found: Found, config: &Config) -> Result<Device, Error> {
        let Found { device, info, .. } = found;
        let context = Context::from_device(&device)
            .map_err(|e| cl_error("clCreateContext", e.0, format!("on {}", info.name)))?;
        let queue = CommandQueue::create_default(
            &context,
            opencl3::command_queue::CL_QUEUE_PROFILING_ENABLE,
        )
        .map_err(|e| cl_error("clCreateCommandQueue", e.0, format!("on {}", info.name)))?;
        let version = device.version().unwrap_or_default();
        let guards = super::guard::new(
            &queue,
            device.mem_base_addr_align().unwrap_or(0),
            config.guard_bands,
        )
        .map_err(|c| cl_error("clRetainCommandQueue", c, format!("on {}", info.name)))?;
        let cache_dir = config.cache.root().map(|r| r.join("programs"));
        Ok(Device {
            programs: Mutex::new(ProgramCache::default()),
            pool: super::pool::new(super::pool::limit_for(info.global_mem)),
            guards,
            one_program: AtomicBool::new(false),
            build_options: Mutex::new(String::new()),
            queue,
            context,
            device,
            info,
            version,
            cache_dir: Mutex::new(cache_dir),
            cache_read_only: AtomicBool::new(config.cache.read_only),
            dump: config.dump.clone(),
            me: Weak::new(),
            build_delay: Mutex::new(Duration::ZERO),
            warnings: Mutex::new(Vec::new()),
            pending: Default::default(),
        })
    }
}

impl Drop for Device {
    /// Releases the memory kept for reuse; buffers that outlive the device release theirs when
    /// dropped.
    fn drop(&mut self) {
        // A call's error that no wait read is logged, not lost silently.
        if self.has_pending() {
            while let Err(e) = self.check_pending() {
                tracing::error!(target: "parac::device", "an error no wait reported: {e}");
            }
            self.forget_pending();
        }
        super::pool::close(&self.pool);
    }
}

/// A device found by discovery, not opened yet.
struct Found {
    device: cl_device::Device,
    info: DeviceInfo,
    /// The platform's vendor (`CL_PLATFORM_VENDOR`), matched by `opencl:<text>` too.
    platform_vendor: String,
    /// `CL_DEVICE_TYPE_CPU`.
    is_cpu: bool,
}

impl Found {
    fn label(&self) -> String {
        format!(
            "{} / {} ({})",
            self.info.platform,
            self.info.name,
            if self.info.is_gpu { "GPU" } else { "not a GPU" }
        )
    }
}

/// Held while discovering and opening devices. OpenCL's calls are thread-safe, but some
/// implementations initialise their devices lazily and not safely under concurrent first calls
/// (PoCL 3.1 crashes in `clGetDeviceInfo` when several threads discover at once); finding and
/// opening devices is rare, so it is simply serialised.
static DISCOVERY: Mutex<()> = Mutex::new(());

/// Every usable OpenCL device, in platform and device order, or why there is none at all. The
/// second list names devices that were skipped (unavailable, no compiler, info queries failed).
/// Callers hold [`DISCOVERY`].
fn discover() -> Result<(Vec<Found>, Vec<String>), String> {
    let platforms = get_platforms().map_err(|e| match e.0 {
        code::DLOPEN_RUNTIME_LOAD_FAILED => "no OpenCL: libOpenCL could not be loaded".to_string(),
        code::PLATFORM_NOT_FOUND_KHR => {
            "no OpenCL: the ICD loader found no platform (CL_PLATFORM_NOT_FOUND_KHR)".to_string()
        }
        c => format!(
            "no OpenCL: clGetPlatformIDs failed with {c} ({})",
            error_name(c)
        ),
    })?;
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    for platform in &platforms {
        let pname = platform
            .name()
            .unwrap_or_else(|_| "(unnamed platform)".to_string());
        let pvendor = platform.vendor().unwrap_or_default();
        let ids = match platform.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            Err(e) if e.0 == code::DEVICE_NOT_FOUND => continue,
            Err(e) => {
                skipped.push(format!(
                    "{pname}: clGetDeviceIDs failed ({})",
                    error_name(e.0)
                ));
                continue;
            }
        };
        for id in ids {
            let device = cl_device::Device::new(id);
            match query_info(&pname, &device) {
                Ok(info) => {
                    if !device.available().unwrap_or(false) {
                        skipped.push(format!("{pname} / {}: not available", info.name));
                    } else if !device.compiler_available().unwrap_or(false) {
                        skipped.push(format!("{pname} / {}: no compiler", info.name));
                    } else {
                        let is_cpu = device.dev_type().is_ok_and(|t| t & CL_DEVICE_TYPE_CPU != 0);
                        found.push(Found {
                            device,
                            info,
                            platform_vendor: pvendor.clone(),
                            is_cpu,
                        });
                    }
                }
                Err(c) => skipped.push(format!(
                    "{pname}: a device whose info cannot be read ({})",
                    error_name(c)
                )),
            }
        }
    }
    if found.is_empty() && skipped.is_empty() {
        return Err("no OpenCL: no platform has a device".to_string());
    }
    Ok((found, skipped))
}

fn query_info(platform: &str, d: &cl_device::Device) -> Result<DeviceInfo, i32> {
    let cache_line = d.global_mem_cacheline_size().map_err(|e| e.0)? as usize;
    let is_cpu = d.dev_type().map_err(|e| e.0)? & CL_DEVICE_TYPE_CPU != 0;
    Ok(DeviceInfo {
        platform: platform.to_string(),
        name: d.name().map_err(|e| e.0)?.trim().to_string(),
        vendor: d.vendor().map_err(|e| e.0)?.trim().to_string(),
        driver_version: d.driver_version().map_err(|e| e.0)?.trim().to_string(),
        is_gpu: d.dev_type().map_err(|e| e.0)? & CL_DEVICE_TYPE_GPU != 0,
        is_cpu,
        compute_units: d.max_compute_units().map_err(|e| e.0)?,
        max_work_group_size: d.max_work_group_size().map_err(|e| e.0)?,
        local_mem_size: d.local_mem_size().map_err(|e| e.0)?,
        cache_line: if cache_line == 0 { 64 } else { cache_line },
        max_alloc: d.max_mem_alloc_size().map_err(|e| e.0)?,
        global_mem: d.global_mem_size().map_err(|e| e.0)?,
        // The query is deprecated since OpenCL 2.0 (a driver that fails it reads as false); a
        // CPU device's memory is the host's in any case.
        host_unified_memory: d.host_unified_memory().unwrap_or(false) || is_cpu,
        preferred_vector_width: [
            d.max_preferred_vector_width_char().map_err(|e| e.0)?,
            d.max_preferred_vector_width_short().map_err(|e| e.0)?,
            d.max_preferred_vector_width_int().map_err(|e| e.0)?,
            d.max_preferred_vector_width_float().map_err(|e| e.0)?,
        ],
    })
}

/// Every usable OpenCL device of every platform, in discovery order; `Error::NoDevice` with the
/// reason when there is none (no `libOpenCL`, no platform, no device). What `parac devices`
/// lists: the names a [`DeviceSelector`](crate::DeviceSelector) or `PARAC_DEVICE` can match.
///
/// # Examples
///
/// ```
/// match parac_runtime::opencl::devices() {
///     Ok(found) => {
///         for d in found {
///             println!("{} / {} (GPU: {})", d.platform, d.name, d.is_gpu);
///         }
///     }
///     Err(e) => println!("no OpenCL: {e}"),
/// }
/// ```
pub fn devices() -> Result<Vec<DeviceInfo>, Error> {
    let _serial = DISCOVERY.lock().unwrap_or_else(PoisonError::into_inner);
    let (found, skipped) = discover().map_err(|reason| Error::NoDevice {
        spec: "opencl".to_string(),
        reason,
    })?;
    if found.is_empty() {
        return Err(Error::NoDevice {
            spec: "opencl".to_string(),
            reason: format!("no usable OpenCL device; skipped: {}", skipped.join("; ")),
        });
    }
    Ok(found.into_iter().map(|f| f.info).collect())
}

/// Opens the OpenCL device `config.device` selects (its kind is not `Cpu`). `Ok(None)` only for
/// [`DeviceKind::Auto`]: without a name when there is no OpenCL GPU (an info event says so), or
/// when no OpenCL device can be opened (a warning event says why). `spec` is the selector as
/// written, for errors.
pub(crate) fn select(config: &Config, spec: &str) -> Result<Option<Device>, Error> {
    let sel: &DeviceSelector = &config.device;
    let auto = sel.kind == DeviceKind::Auto;
    let no_device = |reason: String| Error::NoDevice {
        spec: spec.to_string(),
        reason,
    };
    let fallback = |reason: &str| {
        tracing::warn!(
            target: "parac::device",
            "no OpenCL device for `{spec}` ({reason}): running on the CPU path"
        );
        Ok(None)
    };
    let _serial = DISCOVERY.lock().unwrap_or_else(PoisonError::into_inner);
    let (mut found, skipped) = match discover() {
        Ok(f) => f,
        Err(reason) if auto => return fallback(&reason),
        Err(reason) => return Err(no_device(reason)),
    };
    for s in &skipped {
        tracing::debug!(target: "parac::device", "skipped: {s}");
    }
    let existing: Vec<String> = found
        .iter()
        .map(Found::label)
        .chain(skipped.iter().map(|s| format!("{s} (skipped)")))
        .collect();
    let existing = if existing.is_empty() {
        "none".to_string()
    } else {
        existing.join(", ")
    };
    match sel.kind {
        DeviceKind::OpenClGpu => found.retain(|f| f.info.is_gpu),
        DeviceKind::OpenClCpu => found.retain(|f| f.is_cpu),
        // `auto` without a name: a GPU, else the CPU path, which runs the host's cores faster
        // than an OpenCL CPU device and starts at once (no program to build).
        DeviceKind::Auto if sel.name.is_none() => {
            found.retain(|f| f.info.is_gpu);
            if found.is_empty() {
                tracing::info!(
                    target: "parac::device",
                    "`{spec}`: no OpenCL GPU (found: {existing}): running on the CPU path, \
                     faster than an OpenCL CPU device (`opencl-cpu` or `opencl` asks for one)"
                );
                return Ok(None);
            }
        }
        _ => found.sort_by_key(|f| !f.info.is_gpu), // stable: GPUs first
    }
    if let Some(text) = &sel.name {
        let text = text.to_lowercase();
        found.retain(|f| {
            [
                &f.info.platform,
                &f.platform_vendor,
                &f.info.name,
                &f.info.vendor,
            ]
            .iter()
            .any(|s| s.to_lowercase().contains(&text))
        });
    }
    let matching = found.len();
    // With an index, that device only; without, the first that opens.
    let found: Vec<Found> = if sel.index > 0 {
        found.into_iter().skip(sel.index).take(1).collect()
    } else {
        found
    };
    if found.is_empty() {
        let what = match sel.kind {
            DeviceKind::OpenClGpu => "OpenCL GPU",
            DeviceKind::OpenClCpu => "OpenCL CPU device",
            _ => "usable OpenCL device",
        };
        let reason = match (&sel.name, sel.index) {
            (_, i) if i > 0 && matching > 0 => {
                format!("{matching} devices match, no device #{i}; found: {existing}")
            }
            (Some(text), _) => format!(
                "no {what} whose platform or device name or vendor contains `{text}`; found: \
                 {existing}"
            ),
            (None, _) => format!("no {what}; found: {existing}"),
        };
        return if auto {
            fallback(&reason)
        } else {
            Err(no_device(reason))
        };
    }
    let mut last_error = None;
    for f in found {
        let label = f.label();
        match Device::open(f, config) {
            Ok(d) => {
                tracing::info!(target: "parac::device", "`{spec}`: opened {label}");
                return Ok(Some(d));
            }
            Err(e) => {
                tracing::debug!(target: "parac::device", "`{spec}`: {label} did not open: {e}");
                last_error = Some(e);
            }
        }
    }
    match (auto, last_error) {
        (true, e) => {
            fallback(&e.map_or("no device could be opened".to_string(), |e| e.to_string()))
        }
        (false, Some(e)) => Err(e),
        (false, None) => Err(no_device("no device could be opened".to_string())),
    }
}

impl Device {
    /// Turns guard bands on or off for the buffers this device allocates from now on (see the
    /// module `guard.rs`: every buffer a sub-buffer between two guard regions holding a known
    /// pattern, checked when the buffer is dropped and by
    /// [`check_guards`](Device::check_guards)). Off by default; `PARAC_GUARD_BANDS=1` turns it
    /// on when the device is opened. Buffers alive keep what they have.
    pub fn set_guard_bands(&self, on: bool) {
        self.guards.set_on(on);
    }

    /// Turns on or off one program per function for forced plans: under
    /// [`PlanPolicy::Force`](crate::PlanPolicy) and `Fixed`, a function's first call builds one
    /// program holding the baseline's and every candidate's kernel
    /// (`parac_core::codegen::launch::every_candidate_program`) instead of the baseline's alone
    /// and each forced candidate's on its first use. Off by default (a forced plan builds only
    /// what it runs); tests that force every candidate in turn turn it on, so that a driver whose
    /// cost is per program (PoCL runs its front end once per program) pays it once.
    pub fn set_one_program(&self, on: bool) {
        self.one_program.store(on, Ordering::Relaxed);
    }

    /// Makes every later build from source (not from a cache) last at least `delay` longer:
    /// tests use it to show that no call waits for a build in the background.
    #[doc(hidden)]
    pub fn set_build_delay(&self, delay: Duration) {
        *self
            .build_delay
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = delay;
    }

    /// The programs built so far whose build log holds a warning, each as `name: log`: the
    /// generated kernels are meant to compile without any (a driver such as PoCL prints
    /// "N warnings generated." on stderr itself), so the random-program tests check that this
    /// stays empty.
    #[doc(hidden)]
    pub fn build_warnings(&self) -> Vec<String> {
        self.warnings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The device as a shared handle, for work that outlives a call (the background thread's
    /// builds); `None` for a device not opened by [`select`] (never in practice).
    pub(crate) fn handle(&self) -> Option<Arc<Device>> {
        self.me.upgrade()
    }

    /// Wraps a device opened by [`select`] in the shared handle [`handle`](Device::handle)
    /// returns.
    pub(crate) fn shared(mut self) -> Arc<Device> {
        Arc::new_cyclic(|me| {
            self.me = me.clone();
            self
        })
    }

    /// Sets options added to every later program build of this device (`clBuildProgram`'s, after
    /// the program's own), e.g. `-cl-opt-disable`: the tests' runtimes build unoptimized
    /// kernels, which PoCL compiles four to five times faster (what they test is the generated
    /// code's results, not the driver's optimizer; one random program in four of
    /// `tests/random_programs.rs` keeps the driver's optimizations). Programs built with other
    /// options are cached apart. Empty by default.
    pub fn set_build_options(&self, options: &str) {
        *self
            .build_options
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = options.trim().to_string();
    }

    /// A program's build options (`options`) with the device's (see
    /// [`set_build_options`](Device::set_build_options)) after them.
    pub(super) fn with_build_options<'a>(&self, options: &'a str) -> std::borrow::Cow<'a, str> {
        let device = self
            .build_options
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match (options.trim().is_empty(), device.is_empty()) {
            (_, true) => options.into(),
            (true, false) => device.clone().into(),
            (false, false) => format!("{options} {device}").into(),
        }
    }

    /// Whether forced plans share one program (see [`set_one_program`](Device::set_one_program)).
    pub fn one_program(&self) -> bool {
        self.one_program.load(Ordering::Relaxed)
    }

    /// Whether new buffers get guard bands (see [`set_guard_bands`](Device::set_guard_bands)).
    pub fn guard_bands(&self) -> bool {
        self.guards.on()
    }

    /// The size in bytes of each guard region of this device's guarded buffers: at least
    /// [`MIN_GUARD`](super::MIN_GUARD), a multiple of `CL_DEVICE_MEM_BASE_ADDR_ALIGN`.
    pub fn guard_size(&self) -> usize {
        self.guards.size()
    }

    /// Every touched guard region of this device's buffers: those found when buffers were
    /// dropped since the last call, then those of the guarded buffers alive now (read back
    /// after every command enqueued so far). Each touch is reported once (a reported guard is
    /// filled with the pattern again). Empty while guard bands were never on.
    pub fn guard_violations(&self) -> Result<Vec<GuardViolation>, Error> {
        self.guards.violations()
    }

    /// [`guard_violations`](Device::guard_violations) as a result: `Error::GuardBand` naming
    /// the first touched buffer (and listing every touched guard) if there is any.
    pub fn check_guards(&self) -> Result<(), Error> {
        let v = self.guard_violations()?;
        match v.first() {
            None => Ok(()),
            Some(first) => Err(Error::GuardBand {
                buffer: first.buffer.clone(),
                violations: v,
            }),
        }
    }
}
