//! The runtime handle a pipeline function runs on.

use std::fmt;

use crate::Error;
use crate::config::{Config, DeviceKind, DeviceSelector};
use crate::opencl;

/// The handle a pipeline function runs on: the chosen device (an OpenCL device, with its
/// context, queue and program cache, or the CPU path). `Send + Sync`: create one and share it by
/// reference across threads. On the CPU path it keeps the buffers of the functions' local
/// matrices between calls (at most 8, reused by the next call instead of fresh pages); dropping
/// the runtime frees them.
///
/// # Examples
///
/// ```
/// use parac_runtime::{PlanPolicy, Runtime};
///
/// // The CPU path: always available, reads no environment variable.
/// let cpu = Runtime::cpu();
/// assert!(cpu.device().is_none());
///
/// // What `PARAC_DEVICE` and the other `PARAC_*` variables ask for; unset, an OpenCL GPU if
/// // there is one, else the CPU path.
/// let rt = Runtime::new()?;
/// println!("running on {}", rt.describe());
///
/// // A device by name, with another plan policy; without such a device, `Error::NoDevice`
/// // listing the devices found.
/// match Runtime::from_spec("opencl:pocl") {
///     Ok(rt) => println!("{}", rt.with_policy(PlanPolicy::Model).describe()),
///     Err(e) => println!("{e}"),
/// }
/// # Ok::<(), parac_runtime::Error>(())
/// ```
pub struct Runtime {
    backend: Backend,
    config: Config,
    /// The CPU path's local matrices, kept between calls (`cpu::local`).
    scratch: crate::cpu::Scratch,
}

/// How a pipeline picks the plan (the kernel variant and work-group size) of each region on an
/// OpenCL device. The CPU path has one plan and ignores it.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use parac_runtime::{PlanPolicy, Runtime};
///
/// // The model's first choice, no timing: the same plans in every run.
/// let rt = Runtime::cpu().with_policy(PlanPolicy::Model);
/// assert_eq!(rt.policy(), &PlanPolicy::Model);
///
/// // Search with half a second per region and call instead of 0.1 s.
/// let mut rt = rt;
/// rt.set_policy(PlanPolicy::SearchBudget(Duration::from_millis(500)));
///
/// // `PARAC_PLAN=it=inline,it1=baseline` as a value: region `it` inlined, `it1` apart.
/// let pairs = [("it", "inline"), ("it1", "baseline")];
/// rt.set_policy(PlanPolicy::Stages(
///     pairs.iter().map(|(r, l)| (r.to_string(), l.to_string())).collect(),
/// ));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanPolicy {
    /// Time the model's candidates for each (region, device, size class), in the model's order,
    /// within a budget per region and call (0.1 s; the build of the model's plan is not counted,
    /// and a timing starts only where it is expected to fit): a call whose budget runs out runs the
    /// fastest plan so far, and later calls go on with the search until it is complete. The fastest
    /// is kept in the plan cache (the default).
    #[default]
    Search,
    /// As `Search`, with this budget per region and call instead of 0.1 s
    /// (`PARAC_SEARCH_BUDGET`: seconds, or `inf`):
    /// `Duration::MAX` runs each search to its end at once (what `parac tune` does),
    /// `Duration::ZERO` makes one timing per region and call.
    SearchBudget(std::time::Duration),
    /// The optimization model's first-ranked candidate, no timing (`PARAC_SEARCH=0`).
    Model,
    /// The baseline plan everywhere: one work-item per iteration point, nothing else
    /// (`PARAC_PLAN=baseline`).
    Baseline,
    /// The candidate with this label in every region that has one, else the baseline; tests and
    /// benches use it to force one transform (`PARAC_PLAN=<label>`).
    Force(String),
    /// As `Force`, with this work-group size (cut or padded with 1s to the kernel's dimensions)
    /// for the candidates that do not fix their own; tests use it so that a driver does not
    /// compile a kernel once per image size.
    Fixed(String, Vec<usize>),
    /// Per stage: each region named (by its iterator's name, `it`, or its kernel's, `r0_it`)
    /// runs the candidate with that label (as `Force`: the baseline where it has none), the
    /// others search; tests force or forbid a fused plan in one stage with it
    /// (`PARAC_PLAN=it=inline,it1=baseline`).
    Stages(Vec<(String, String)>),
}

impl PlanPolicy {
    /// Whether a `PARAC_PLAN` entry `entry` names the region whose plans go by `plans`
    /// (`r<k>_<name>`, `parac_core::codegen::plans_name`): the plans' name or the iterator's.
    pub(crate) fn names(entry: &str, plans: &str) -> bool {
        entry == plans || plans.split_once('_').is_some_and(|(_, name)| name == entry)
    }
}

enum Backend {
    /// The CPU path (its own pool of threads, `workers`).
    Cpu,
    /// An OpenCL device.
    OpenCl(std::sync::Arc<opencl::Device>),
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.backend {
            Backend::Cpu => f.debug_tuple("Runtime::Cpu").finish(),
            Backend::OpenCl(d) => f.debug_tuple("Runtime::OpenCl").field(d).finish(),
        }
    }
}

/// The CPU path, as [`Runtime::cpu`].
impl Default for Runtime {
    fn default() -> Self {
        Runtime::cpu()
    }
}

/// Builds a [`Runtime`] from a [`Config`] set piece by piece; reads no environment variable
/// (start from [`Runtime::builder`], or from [`Config::from_env`] with
/// [`RuntimeBuilder::config`]).
///
/// ```
/// use parac_runtime::{CacheConfig, DeviceKind, DeviceSelector, PlanPolicy, Runtime};
///
/// // The CPU path, whatever PARAC_DEVICE says.
/// let rt = Runtime::builder()
///     .device_kind(DeviceKind::Cpu)
///     .policy(PlanPolicy::Model)
///     .cache(CacheConfig::off())
///     .build()?;
/// assert!(rt.device().is_none());
///
/// // An OpenCL GPU whose name contains "nvidia", else the CPU path (with a warning event).
/// let sel = DeviceSelector::new(DeviceKind::Auto).name("nvidia");
/// let rt = Runtime::builder().device(sel).build()?;
/// println!("{}", rt.describe());
/// # Ok::<(), parac_runtime::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct RuntimeBuilder {
    config: Config,
}

impl RuntimeBuilder {
    /// The whole configuration at once.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// The device (see [`DeviceSelector`]).
    pub fn device(mut self, selector: DeviceSelector) -> Self {
        self.config.device = selector;
        self
    }

    /// The device a specification names ([`DeviceSelector::parse`]: `opencl:<name>`...).
    pub fn device_spec(mut self, spec: &str) -> Result<Self, Error> {
        self.config.device = DeviceSelector::parse(spec)?;
        Ok(self)
    }

    /// The kind of device, keeping the name and index set so far.
    pub fn device_kind(mut self, kind: DeviceKind) -> Self {
        self.config.device.kind = kind;
        self
    }

    /// Only OpenCL devices whose platform or device name or vendor contains `text`
    /// (case-insensitive).
    pub fn device_name(mut self, text: impl Into<String>) -> Self {
        self.config.device.name = Some(text.into());
        self
    }

    /// The `index`th of the devices that match (from 0).
    pub fn device_index(mut self, index: usize) -> Self {
        self.config.device.index = index;
        self
    }

    /// How regions pick their plans.
    pub fn policy(mut self, policy: PlanPolicy) -> Self {
        self.config.policy = policy;
        self
    }

    /// What a call does while its function is not ready on the device (see
    /// [`crate::WarmUp`]).
    pub fn warm_up(mut self, warm_up: crate::WarmUp) -> Self {
        self.config.warm_up = warm_up;
        self
    }

    /// The disk cache of programs and plans (see [`crate::CacheConfig`]).
    pub fn cache(mut self, cache: crate::CacheConfig) -> Self {
        self.config.cache = cache;
        self
    }

    /// Guard bands around device buffers (see `opencl::Device::set_guard_bands`).
    pub fn guard_bands(mut self, on: bool) -> Self {
        self.config.guard_bands = on;
        self
    }

    /// Writes the generated OpenCL programs and the IR of pipelines run on a device to `dir`.
    pub fn dump(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.config.dump = Some(dir.into());
        self
    }

    /// The log filter the configuration carries (see [`crate::LogConfig`]).
    pub fn log(mut self, log: crate::LogConfig) -> Self {
        self.config.log = log;
        self
    }

    /// Opens the device: [`Error::NoDevice`] when none matches (except for
    /// [`DeviceKind::Auto`], which falls back to the CPU path with a warning event).
    pub fn build(self) -> Result<Runtime, Error> {
        Runtime::with_config(self.config)
    }
}

impl Runtime {
    /// The buffers of the CPU path's local matrices.
    pub(crate) fn scratch(&self) -> &crate::cpu::Scratch {
        &self.scratch
    }

    /// A builder starting from [`Config::default`]: the automatic device, the plan search, the
    /// user's cache; nothing read from the environment.
    pub fn builder() -> RuntimeBuilder {
        RuntimeBuilder::default()
    }

    /// The runtime the environment asks for ([`Config::from_env`]: `PARAC_DEVICE`,
    /// `PARAC_PLAN`, `PARAC_CACHE`...); a variable with a bad value is an error.
    pub fn from_env() -> Result<Runtime, Error> {
        Runtime::with_config(Config::from_env()?)
    }

    /// The same as [`from_env`](Runtime::from_env): the device `PARAC_DEVICE` names (unset:
    /// the first GPU of any OpenCL platform, else the CPU path, not an OpenCL CPU device) and
    /// every other `PARAC_*` setting. Use [`builder`](Runtime::builder) or
    /// [`cpu`](Runtime::cpu) for a runtime that does not depend on the environment.
    pub fn new() -> Result<Runtime, Error> {
        Runtime::from_env()
    }

    /// The CPU path, always available, with the default configuration (no environment read).
    pub fn cpu() -> Runtime {
        Runtime {
            backend: Backend::Cpu,
            config: Config {
                device: DeviceSelector::new(DeviceKind::Cpu),
                ..Config::default()
            },
            scratch: Default::default(),
        }
    }

    /// A runtime with `config`: opens the device it selects.
    pub fn with_config(config: Config) -> Result<Runtime, Error> {
        let spec = config.device.to_string();
        config.device.check().map_err(|reason| Error::NoDevice {
            spec: spec.clone(),
            reason,
        })?;
        let backend = if config.device.kind == DeviceKind::Cpu {
            Backend::Cpu
        } else {
            match opencl::select(&config, &spec)? {
                Some(d) => Backend::OpenCl(d.shared()),
                None => Backend::Cpu,
            }
        };
        Ok(Runtime {
            backend,
            config,
            scratch: Default::default(),
        })
    }

    /// A runtime on the device `spec` names ([`DeviceSelector::parse`]: `auto`, `cpu`,
    /// `opencl`, `opencl:<name>`, `opencl-gpu#1`...), with the default configuration otherwise
    /// (no environment read). `opencl:<text>` takes the first OpenCL device whose platform or
    /// device name or vendor contains `<text>` (case-insensitive; `opencl:pocl` finds PoCL,
    /// whose vendor is "The pocl project"); `Error::NoDevice` listing the devices found if none
    /// does.
    pub fn from_spec(spec: &str) -> Result<Runtime, Error> {
        Runtime::with_config(Config {
            device: DeviceSelector::parse(spec)?,
            ..Config::default()
        })
    }

    /// The configuration the runtime was made with (its policy as changed since).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The vector instructions the CPU path's interiors run with: the configured level
    /// ([`Config::cpu_isa`], `Auto` by default) resolved on this processor ([`CpuIsa::resolve`]).
    ///
    /// [`CpuIsa::resolve`]: crate::CpuIsa::resolve
    pub fn cpu_isa(&self) -> crate::CpuIsa {
        self.config.cpu_isa.resolve()
    }

    /// The same runtime with the CPU path's vector instructions forced to `isa` (a level the
    /// processor lacks runs as the widest it has); tests run each level so.
    ///
    /// ```
    /// let rt = parac_runtime::Runtime::cpu().with_cpu_isa(parac_runtime::CpuIsa::Portable);
    /// assert_eq!(rt.cpu_isa(), parac_runtime::CpuIsa::Portable);
    /// ```
    pub fn with_cpu_isa(mut self, isa: crate::CpuIsa) -> Runtime {
        self.config.cpu_isa = isa;
        self
    }

    /// The most threads a call on the CPU path runs on, its caller among them
    /// ([`Config::cpu_threads`]; unset: one per core of the processor).
    pub fn cpu_threads(&self) -> usize {
        let all = crate::workers::threads();
        self.config.cpu_threads.map_or(all, |n| n.get().min(all))
    }

    /// The same runtime with calls on the CPU path run on at most `n` threads (1: in order on
    /// the caller's).
    ///
    /// ```
    /// let rt = parac_runtime::Runtime::cpu().with_cpu_threads(1);
    /// assert_eq!(rt.cpu_threads(), 1);
    /// ```
    pub fn with_cpu_threads(mut self, n: usize) -> Runtime {
        self.config.cpu_threads = std::num::NonZeroUsize::new(n.max(1));
        self
    }

    /// The size in bytes from which the CPU path writes an output matrix that its function only
    /// writes with streaming stores, which go to memory past the caches instead of first
    /// reading each line they fill ([`Config::cpu_stream_bytes`]; unset: the processor's
    /// last-level cache, where an output no longer stays in it for the next reader).
    pub fn cpu_stream_bytes(&self) -> usize {
        self.config
            .cpu_stream_bytes
            .unwrap_or_else(crate::stream::last_level_cache)
    }

    /// This runtime with streaming stores from `bytes` on ([`Runtime::cpu_stream_bytes`];
    /// `usize::MAX`: never, `0`: every output its function only writes).
    ///
    /// ```
    /// let rt = parac_runtime::Runtime::cpu().with_cpu_stream_bytes(0);
    /// assert_eq!(rt.cpu_stream_bytes(), 0);
    /// ```
    pub fn with_cpu_stream_bytes(mut self, bytes: usize) -> Runtime {
        self.config.cpu_stream_bytes = Some(bytes);
        self
    }

    /// The same runtime with another plan policy.
    pub fn with_policy(mut self, policy: PlanPolicy) -> Runtime {
        self.config.policy = policy;
        self
    }

    /// The same runtime with another [`WarmUp`](crate::WarmUp): tests and benches that
    /// measure or check the device itself take [`WarmUp::Wait`](crate::WarmUp::Wait).
    pub fn with_warm_up(mut self, warm_up: crate::WarmUp) -> Runtime {
        self.config.warm_up = warm_up;
        self
    }

    /// Changes the plan policy in place (the device, its programs and caches are kept).
    pub fn set_policy(&mut self, policy: PlanPolicy) {
        self.config.policy = policy;
    }

    /// How regions pick their plans.
    pub fn policy(&self) -> &PlanPolicy {
        &self.config.policy
    }

    /// How a `parac!` function's calls warm up on the device ([`crate::WarmUp`], `Auto`
    /// resolved for this device): `Some(CpuPath)` or `Some(Background)`, `None` where they do
    /// not (the CPU path, `Wait`).
    pub(crate) fn warm_up_mode(&self) -> Option<crate::WarmUp> {
        use crate::WarmUp::*;
        match (&self.backend, self.config.warm_up) {
            (Backend::Cpu, _) | (_, Wait) => None,
            (_, CpuPath) => Some(CpuPath),
            (_, Background) => Some(Background),
            (Backend::OpenCl(d), Auto) => (!d.info().is_gpu).then_some(CpuPath),
        }
    }

    /// The runtime a warm-up runs on, on the background thread: the same device, the search (if
    /// the policy searches) run to its end in one call, no warm-up of its own.
    pub(crate) fn for_warm_up(&self) -> Option<Runtime> {
        let Backend::OpenCl(d) = &self.backend else {
            return None;
        };
        let mut config = self.config.clone();
        if matches!(
            config.policy,
            PlanPolicy::Search | PlanPolicy::SearchBudget(_)
        ) {
            config.policy = PlanPolicy::SearchBudget(std::time::Duration::MAX);
        }
        config.warm_up = crate::WarmUp::Wait;
        Some(Runtime {
            backend: Backend::OpenCl(std::sync::Arc::clone(d)),
            config,
            scratch: Default::default(),
        })
    }

    /// Waits until the background thread is idle: every candidate program a search has asked
    /// for is built and every warm-up started so far ([`crate::WarmUp::CpuPath`]) is done, so
    /// that the next calls run on the device with their plans searched. The thread is the
    /// process's, shared by all runtimes.
    pub fn wait_for_background(&self) {
        crate::background::wait_idle();
    }

    /// The OpenCL device as a shared handle (device matrices hold one); `None` on the CPU path.
    pub(crate) fn device_handle(&self) -> Option<&std::sync::Arc<opencl::Device>> {
        match &self.backend {
            Backend::Cpu => None,
            Backend::OpenCl(d) => Some(d),
        }
    }

    /// The OpenCL device; `None` on the CPU path.
    pub fn device(&self) -> Option<&opencl::Device> {
        match &self.backend {
            Backend::Cpu => None,
            Backend::OpenCl(d) => Some(d),
        }
    }

    /// One line for logs: `OpenCL: <platform> / <device> (driver <version>)` or
    /// `CPU path (<n> threads)`.
    pub fn describe(&self) -> String {
        match &self.backend {
            Backend::Cpu => format!("CPU path ({} threads)", self.cpu_threads()),
            Backend::OpenCl(d) => {
                let i = d.info();
                format!(
                    "OpenCL: {} / {} (driver {})",
                    i.platform, i.name, i.driver_version
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_without_devices() {
        assert!(Runtime::from_spec("cpu").unwrap().device().is_none());
        assert!(Runtime::from_spec(" CPU ").unwrap().device().is_none());
        assert!(Runtime::cpu().describe().starts_with("CPU path ("));
        assert_eq!(Runtime::cpu().config().device.kind, DeviceKind::Cpu);
        match Runtime::from_spec("tpu") {
            Err(Error::NoDevice { spec, reason }) => {
                assert_eq!(spec, "tpu");
                assert!(reason.contains("opencl:<name>"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            Runtime::builder()
                .device_kind(DeviceKind::Cpu)
                .device_index(1)
                .build(),
            Err(Error::NoDevice { .. })
        ));
        let rt = Runtime::builder()
            .device_kind(DeviceKind::Cpu)
            .policy(PlanPolicy::Baseline)
            .build()
            .unwrap();
        assert!(rt.device().is_none());
        assert_eq!(rt.policy(), &PlanPolicy::Baseline);
        fn shared<T: Send + Sync + fmt::Debug>() {}
        shared::<Runtime>();
    }
}
