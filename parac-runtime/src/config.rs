//! Typed configuration of a [`Runtime`](crate::Runtime): the device, how regions pick their
//! plans, the cache of compiled programs and chosen plans, guard bands, dumps and the log
//! filter. [`Config::from_env`] reads the `PARAC_*` environment variables ([`ENV_VARS`]) into it;
//! nothing else in the runtime reads the environment. [`Runtime::builder`](crate::Runtime::builder)
//! starts from [`Config::default`], which reads nothing.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::{Error, PlanPolicy};

/// Every environment variable [`Config::from_env`] reads, with what it sets.
pub const ENV_VARS: &[(&str, &str)] = &[
    (
        "PARAC_DEVICE",
        "the device: `auto`, `cpu`, `opencl`, `opencl-gpu` (`gpu`) or `opencl-cpu`, then \
         `:<name>` and `#<index>` ([`DeviceSelector::parse`])",
    ),
    (
        "PARAC_PLAN",
        "the plan policy: `search`, `model`, `baseline`, a candidate's label, or \
         `<region>=<label>` pairs separated by commas (those regions forced, the others searched)",
    ),
    ("PARAC_SEARCH", "`0`: the model's plan, no search"),
    (
        "PARAC_SEARCH_BUDGET",
        "seconds of search per region and call, or `inf`",
    ),
    (
        "PARAC_WARM_UP",
        "what a call does while its device program is not ready: `auto`, `cpu` (the CPU path), \
         `background` (the model's plans while the search runs in the background) or `wait` \
         ([`WarmUp`])",
    ),
    (
        "PARAC_CACHE",
        "`0`/`off`: no cache, `1`/`on`, `ro`/`read-only`: read, never written",
    ),
    (
        "PARAC_CACHE_DIR",
        "the cache's directory instead of the user's",
    ),
    (
        "PARAC_GUARD_BANDS",
        "`1`: guard bands around device buffers",
    ),
    (
        "PARAC_DUMP",
        "a directory for the generated OpenCL and the IR",
    ),
    (
        "PARAC_CPU_ISA",
        "the CPU path's vector instructions: `auto` (the widest the processor has), `portable`, \
         `avx2` or `avx512` ([`CpuIsa`](crate::CpuIsa))",
    ),
    (
        "PARAC_LOG",
        "what the examples' and the CLI's log shows ([`LogConfig::parse`])",
    ),
    (
        "PARAC_THREADS",
        "the CPU path's threads: a positive integer (unset: one per core)",
    ),
    (
        "PARAC_STREAM_BYTES",
        "the size in bytes from which the CPU path writes an output with streaming stores \
         (unset: the processor's last-level cache; `off`: never)",
    ),
];

/// The whole configuration of a runtime. Fields are public; start from
/// [`Config::default`] (nothing read from the environment) or [`Config::from_env`], and give
/// it to [`Runtime::with_config`](crate::Runtime::with_config) or
/// [`RuntimeBuilder::config`](crate::RuntimeBuilder::config).
///
/// # Examples
///
/// ```
/// use std::ffi::OsString;
/// use parac_runtime::{Config, DeviceKind, PlanPolicy, Runtime};
///
/// // The variables of a test, instead of the process's environment.
/// let vars = [("PARAC_DEVICE", "cpu"), ("PARAC_PLAN", "baseline"), ("PARAC_CACHE", "off")];
/// let config = Config::from_vars(|name| {
///     vars.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v))
/// })?;
/// assert_eq!(config.device.kind, DeviceKind::Cpu);
/// assert_eq!(config.policy, PlanPolicy::Baseline);
/// assert!(!config.cache.enabled);
/// let rt = Runtime::with_config(config)?;
/// assert!(rt.device().is_none());
///
/// // A value that does not parse is an error, never ignored.
/// assert!(Config::from_vars(|n| (n == "PARAC_CACHE").then(|| "maybe".into())).is_err());
/// # Ok::<(), parac_runtime::Error>(())
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// Which device ([`DeviceSelector`]; `PARAC_DEVICE`).
    pub device: DeviceSelector,
    /// How regions pick their plans (`PARAC_PLAN`, `PARAC_SEARCH`, `PARAC_SEARCH_BUDGET`).
    pub policy: PlanPolicy,
    /// What a call does while its function is not ready on the OpenCL device ([`WarmUp`];
    /// `PARAC_WARM_UP`).
    pub warm_up: WarmUp,
    /// The disk cache of program binaries and plans (`PARAC_CACHE`, `PARAC_CACHE_DIR`).
    pub cache: CacheConfig,
    /// Guard bands around device buffers (`PARAC_GUARD_BANDS=1`).
    pub guard_bands: bool,
    /// Where generated OpenCL programs and IR are written (`PARAC_DUMP`); `None`: nowhere.
    pub dump: Option<PathBuf>,
    /// What a log subscriber shows (`PARAC_LOG`); the runtime itself only emits `tracing`
    /// events, this is the filter the examples and the CLI install.
    pub log: LogConfig,
    /// The CPU path's vector instructions ([`CpuIsa`](crate::CpuIsa); `PARAC_CPU_ISA`).
    pub cpu_isa: crate::CpuIsa,
    /// The most threads a call on the CPU path runs on, its caller among them (`PARAC_THREADS`);
    /// `None`: one per core. More than the processor's cores run as that many.
    pub cpu_threads: Option<std::num::NonZeroUsize>,
    /// The size in bytes from which the CPU path writes an output matrix that the function
    /// only writes with streaming stores, past the caches (`PARAC_STREAM_BYTES`; `None`: the
    /// processor's last-level cache, [`Runtime::cpu_stream_bytes`](crate::Runtime::cpu_stream_bytes);
    /// `usize::MAX`: never).
    pub cpu_stream_bytes: Option<usize>,
}

impl Config {
    /// The configuration the `PARAC_*` environment variables ([`ENV_VARS`]) give; unset ones
    /// (or empty ones) keep [`Config::default`]'s value. A value that does not parse is
    /// [`Error::Config`] (`PARAC_DEVICE`: [`Error::NoDevice`]), never ignored.
    pub fn from_env() -> Result<Config, Error> {
        Config::from_vars(|name| std::env::var_os(name))
    }

    /// As [`from_env`](Config::from_env), with the variables from `var` (tests use it).
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>) -> Result<Config, Error> {
        let text = |name: &str| -> Result<Option<String>, Error> {
            match var(name) {
                None => Ok(None),
                Some(v) => match v.into_string() {
                    Ok(s) if s.trim().is_empty() => Ok(None),
                    Ok(s) => Ok(Some(s.trim().to_string())),
                    Err(v) => Err(bad(name, &v.to_string_lossy(), "not valid UTF-8")),
                },
            }
        };
        let mut c = Config::default();
        if let Some(spec) = text("PARAC_DEVICE")? {
            c.device = DeviceSelector::parse(&spec)?;
        }
        let budget = match text("PARAC_SEARCH_BUDGET")? {
            Some(v) => Some(parse_budget(&v).ok_or_else(|| {
                bad(
                    "PARAC_SEARCH_BUDGET",
                    &v,
                    "expected seconds (a decimal number, `s` allowed) or `inf`",
                )
            })?),
            None => None,
        };
        let search = match text("PARAC_SEARCH")?.as_deref() {
            None => true,
            Some(v) => flag(v).ok_or_else(|| bad("PARAC_SEARCH", v, "expected `0` or `1`"))?,
        };
        c.policy = match text("PARAC_PLAN")? {
            Some(p) if p.eq_ignore_ascii_case("baseline") => PlanPolicy::Baseline,
            Some(p) if p.eq_ignore_ascii_case("model") => PlanPolicy::Model,
            Some(p) if p.eq_ignore_ascii_case("search") => PlanPolicy::Search,
            Some(p) if is_label(&p) => PlanPolicy::Force(p),
            Some(p) if p.contains('=') => match stages(&p) {
                Some(s) => PlanPolicy::Stages(s),
                None => {
                    return Err(bad(
                        "PARAC_PLAN",
                        &p,
                        "expected `<region>=<label>` pairs separated by commas",
                    ));
                }
            },
            Some(p) => {
                return Err(bad(
                    "PARAC_PLAN",
                    &p,
                    "expected `search`, `model`, `baseline` or a candidate's label (letters, \
                     digits, `+`, `_`, `-`, `.`)",
                ));
            }
            None if !search => PlanPolicy::Model,
            None => PlanPolicy::Search,
        };
        if let (PlanPolicy::Search, Some(b)) = (&c.policy, budget) {
            c.policy = PlanPolicy::SearchBudget(b);
        }
        if let Some(v) = text("PARAC_WARM_UP")? {
            c.warm_up = match v.to_ascii_lowercase().as_str() {
                "auto" => WarmUp::Auto,
                "cpu" | "cpu-path" => WarmUp::CpuPath,
                "wait" => WarmUp::Wait,
                "background" => WarmUp::Background,
                _ => {
                    return Err(bad(
                        "PARAC_WARM_UP",
                        &v,
                        "expected `auto`, `cpu`, `background` or `wait`",
                    ));
                }
            };
        }
        if let Some(v) = text("PARAC_CACHE")? {
            let lower = v.to_ascii_lowercase();
            match lower.as_str() {
                "ro" | "read-only" | "readonly" => c.cache.read_only = true,
                _ => {
                    c.cache.enabled = flag(&v).ok_or_else(|| {
                        bad(
                            "PARAC_CACHE",
                            &v,
                            "expected `0`/`off`, `1`/`on` or `read-only`",
                        )
                    })?
                }
            }
        }
        if let Some(v) = text("PARAC_CACHE_DIR")? {
            c.cache.dir = Some(PathBuf::from(v));
        }
        if let Some(v) = text("PARAC_GUARD_BANDS")? {
            c.guard_bands =
                flag(&v).ok_or_else(|| bad("PARAC_GUARD_BANDS", &v, "expected `0` or `1`"))?;
        }
        // A path is taken as it is (not trimmed, not UTF-8 checked).
        c.dump = var("PARAC_DUMP")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from);
        if let Some(v) = text("PARAC_LOG")? {
            c.log = LogConfig::parse(&v)?;
        }
        if let Some(v) = text("PARAC_CPU_ISA")? {
            c.cpu_isa = crate::CpuIsa::parse(&v).ok_or_else(|| {
                bad(
                    "PARAC_CPU_ISA",
                    &v,
                    "expected `auto`, `portable`, `avx2` or `avx512`",
                )
            })?;
        }
        if let Some(v) = text("PARAC_THREADS")? {
            c.cpu_threads = Some(
                v.parse()
                    .map_err(|_| bad("PARAC_THREADS", &v, "expected a positive integer"))?,
            );
        }
        if let Some(v) = text("PARAC_STREAM_BYTES")? {
            c.cpu_stream_bytes = Some(match v.as_str() {
                "off" => usize::MAX,
                _ => v.parse().map_err(|_| {
                    bad(
                        "PARAC_STREAM_BYTES",
                        &v,
                        "expected a number of bytes or `off`",
                    )
                })?,
            });
        }
        Ok(c)
    }
}

/// What a call of a `parac!` function does while the function is not ready on the runtime's
/// OpenCL device: its program not built, its kernels not compiled for their launches (PoCL
/// compiles each kernel again at its first launch per work-group size), its plans not searched.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum WarmUp {
    /// [`CpuPath`](WarmUp::CpuPath) on an OpenCL device that is not a GPU (PoCL builds a
    /// program in seconds, a GPU's driver in a fraction of one), [`Wait`](WarmUp::Wait) on a
    /// GPU.
    #[default]
    Auto,
    /// The call runs on the native CPU path (the same results and errors, bit for bit) while
    /// the background thread warms the function up on the device: it runs the function there
    /// once on copies of the call's arguments with the search run to its end (every candidate
    /// built, compiled and timed). Later calls with the same shapes run on the device once that
    /// is done; until then they take the CPU path too. Only the code `parac!` emits has a CPU
    /// path: a [`Pipeline`](crate::Pipeline) compiled at run time waits.
    CpuPath,
    /// The call builds the function's first program and runs on the device; the search goes on
    /// over later calls within its budget, the candidates' programs built in the background. A
    /// call may thus time a candidate; on a driver that compiles a kernel at its first launch
    /// (PoCL) that timing includes the compilation.
    Wait,
    /// The call builds the function's first program and runs on the device with the model's
    /// plans, while the background thread runs the search to its end on copies of the call's
    /// arguments (as `CpuPath`'s warm-up); calls with the same shapes run the model's plans
    /// until it is done, then the plans it found. No call times a candidate or compiles one:
    /// device-only calls without stalls on a device that is slow to build or compiles at
    /// first launch (PoCL). For a policy that does not search, as `Wait`.
    Background,
}

fn bad(setting: &str, value: &str, reason: &str) -> Error {
    Error::Config {
        setting: setting.to_string(),
        value: value.to_string(),
        reason: reason.to_string(),
    }
}

/// Whether `p` can be a candidate's label, e.g. `tree8+vec4`.
/// `<region>=<label>` pairs separated by commas (each side a label's characters, not empty).
fn stages(p: &str) -> Option<Vec<(String, String)>> {
    p.split(',')
        .map(|pair| {
            let (r, l) = pair.trim().split_once('=')?;
            let (r, l) = (r.trim(), l.trim());
            (!r.is_empty() && !l.is_empty() && is_label(r) && is_label(l))
                .then(|| (r.to_string(), l.to_string()))
        })
        .collect()
}

fn is_label(p: &str) -> bool {
    p.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '_' | '-' | '.'))
}

/// `1`/`on`/`true`/`yes` or `0`/`off`/`false`/`no`.
fn flag(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "on" | "true" | "yes" => Some(true),
        "0" | "off" | "false" | "no" => Some(false),
        _ => None,
    }
}

/// A budget from text: seconds, or `inf`/`unbounded` for [`Duration::MAX`].
pub(crate) fn parse_budget(v: &str) -> Option<Duration> {
    let v = v.trim();
    if ["inf", "infinity", "unbounded"]
        .iter()
        .any(|w| v.eq_ignore_ascii_case(w))
    {
        return Some(Duration::MAX);
    }
    let s: f64 = v.strip_suffix('s').unwrap_or(v).trim().parse().ok()?;
    if s.is_nan() || s < 0.0 {
        return None;
    }
    Some(Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX))
}

/// What kind of device a [`DeviceSelector`] takes.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceKind {
    /// An OpenCL GPU, else the CPU path (an info event says why: it is faster than an OpenCL
    /// CPU device such as PoCL on the same cores, and needs no program build). With a name
    /// (`auto:<name>`), any OpenCL device that matches it, GPUs first, else the CPU path.
    #[default]
    Auto,
    /// The CPU path (generated Rust, run on all cores): no OpenCL.
    Cpu,
    /// Any OpenCL device, GPUs first.
    OpenCl,
    /// An OpenCL GPU (`CL_DEVICE_TYPE_GPU`).
    OpenClGpu,
    /// An OpenCL CPU device (`CL_DEVICE_TYPE_CPU`, e.g. PoCL).
    OpenClCpu,
}

impl DeviceKind {
    fn word(self) -> &'static str {
        match self {
            DeviceKind::Auto => "auto",
            DeviceKind::Cpu => "cpu",
            DeviceKind::OpenCl => "opencl",
            DeviceKind::OpenClGpu => "opencl-gpu",
            DeviceKind::OpenClCpu => "opencl-cpu",
        }
    }
}

/// Which device a runtime opens: a kind, an optional name (a case-insensitive substring of the
/// OpenCL platform's or device's name or vendor) and an index among the devices that match
/// (0: the first; GPUs come first for `Auto` and `OpenCl`). Give it to
/// [`RuntimeBuilder::device`](crate::RuntimeBuilder::device), or write it as text for
/// `PARAC_DEVICE` and [`Runtime::from_spec`](crate::Runtime::from_spec).
///
/// # Examples
///
/// ```
/// use parac_runtime::{DeviceKind, DeviceSelector};
///
/// // The second OpenCL GPU whose name or vendor contains "nvidia".
/// let sel = DeviceSelector::new(DeviceKind::OpenClGpu).name("nvidia").index(1);
/// assert_eq!(sel.to_string(), "opencl-gpu:nvidia#1");
/// assert_eq!(DeviceSelector::parse(" GPU:nvidia #1 ")?, sel);
///
/// // The CPU path takes no name.
/// assert!(DeviceSelector::parse("cpu:x").is_err());
/// # Ok::<(), parac_runtime::Error>(())
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceSelector {
    /// The kind.
    pub kind: DeviceKind,
    /// A substring of the platform's or device's name or vendor.
    pub name: Option<String>,
    /// Which of the matching devices.
    pub index: usize,
}

impl DeviceSelector {
    /// Any device of `kind`, the first that matches.
    pub fn new(kind: DeviceKind) -> DeviceSelector {
        DeviceSelector {
            kind,
            name: None,
            index: 0,
        }
    }

    /// Only devices whose platform or device name or vendor contains `text`.
    pub fn name(mut self, text: impl Into<String>) -> DeviceSelector {
        self.name = Some(text.into());
        self
    }

    /// The `index`th of the matching devices (counting from 0).
    pub fn index(mut self, index: usize) -> DeviceSelector {
        self.index = index;
        self
    }

    /// Parses a device specification, as `PARAC_DEVICE` and `Runtime::from_spec` take it:
    /// `<kind>[:<name>][#<index>]`, the kind one of `auto` (or empty), `cpu`, `opencl`,
    /// `opencl-gpu` (or `gpu`), `opencl-cpu`; case and surrounding spaces do not matter. A
    /// name or index on `cpu`, or anything else, is [`Error::NoDevice`].
    pub fn parse(spec: &str) -> Result<DeviceSelector, Error> {
        let no = |reason: &str| Error::NoDevice {
            spec: spec.to_string(),
            reason: reason.to_string(),
        };
        let expected = "expected `auto`, `cpu`, `opencl`, `opencl-gpu`, `opencl-cpu`, each of \
                        the OpenCL ones with an optional `:<name>` and `#<index>`, e.g. \
                        `opencl:<name>` or `opencl-gpu#1`";
        let mut s = spec.trim();
        let mut index = 0;
        if let Some((head, i)) = s.rsplit_once('#') {
            index = i.trim().parse().map_err(|_| no(expected))?;
            s = head.trim_end();
        }
        let (kind, name) = match s.split_once(':') {
            Some((k, n)) => (k.trim(), Some(n.trim()).filter(|n| !n.is_empty())),
            None => (s, None),
        };
        let kind = match kind.to_ascii_lowercase().as_str() {
            "" | "auto" => DeviceKind::Auto,
            "cpu" => DeviceKind::Cpu,
            "opencl" => DeviceKind::OpenCl,
            "gpu" | "opencl-gpu" => DeviceKind::OpenClGpu,
            "opencl-cpu" => DeviceKind::OpenClCpu,
            _ => return Err(no(expected)),
        };
        let sel = DeviceSelector {
            kind,
            name: name.map(str::to_string),
            index,
        };
        sel.check().map_err(|r| no(&r))?;
        Ok(sel)
    }

    /// Why this selector cannot be met before looking at devices: the CPU path has no name
    /// and one index.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.kind == DeviceKind::Cpu && (self.name.is_some() || self.index != 0) {
            return Err("the CPU path takes no name and no index".to_string());
        }
        Ok(())
    }
}

/// The specification [`DeviceSelector::parse`] reads back.
impl fmt::Display for DeviceSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.word())?;
        if let Some(n) = &self.name {
            write!(f, ":{n}")?;
        }
        if self.index != 0 {
            write!(f, "#{}", self.index)?;
        }
        Ok(())
    }
}

/// The disk cache of program binaries (`<root>/programs`) and chosen plans (`<root>/plans`), so
/// that a later process neither builds the programs again nor searches the plans again. The
/// default is the user's cache directory; [`CacheConfig::at`] moves it (a cache packaged with
/// an application, a test's temporary directory), [`CacheConfig::off`] turns it off.
///
/// # Examples
///
/// ```
/// use parac_runtime::{CacheConfig, DeviceKind, Runtime};
///
/// // A shared cache, read but never written.
/// let dir = std::env::temp_dir().join("parac-doc-cache");
/// let cache = CacheConfig::at(&dir).read_only();
/// assert_eq!(cache.root(), Some(dir));
/// assert_eq!(CacheConfig::off().root(), None);
///
/// let rt = Runtime::builder().device_kind(DeviceKind::Cpu).cache(cache).build()?;
/// assert!(rt.config().cache.read_only);
/// # Ok::<(), parac_runtime::Error>(())
/// ```
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    /// Whether there is a cache at all (`PARAC_CACHE=0`: no).
    pub enabled: bool,
    /// Its root; `None`: `<the user's cache directory>/parac` ([`crate::opencl::cache_root`]).
    pub dir: Option<PathBuf>,
    /// Read it, never write it (`PARAC_CACHE=read-only`): a shared or packaged cache.
    pub read_only: bool,
}

impl Default for CacheConfig {
    /// On, in the user's cache directory, read and written.
    fn default() -> Self {
        CacheConfig {
            enabled: true,
            dir: None,
            read_only: false,
        }
    }
}

impl CacheConfig {
    /// No disk cache.
    pub fn off() -> CacheConfig {
        CacheConfig {
            enabled: false,
            ..CacheConfig::default()
        }
    }

    /// A cache rooted at `dir`.
    pub fn at(dir: impl Into<PathBuf>) -> CacheConfig {
        CacheConfig {
            dir: Some(dir.into()),
            ..CacheConfig::default()
        }
    }

    /// The same cache, read but never written.
    pub fn read_only(mut self) -> CacheConfig {
        self.read_only = true;
        self
    }

    /// The cache's root: `None` when it is off, or when it is the user's and this system has
    /// no user cache directory.
    pub fn root(&self) -> Option<PathBuf> {
        self.location().filter(|_| self.enabled)
    }

    /// Where the cache is or would be, whether it is on or off: `dir`, else the user's.
    pub fn location(&self) -> Option<PathBuf> {
        self.dir.clone().or_else(crate::opencl::cache_root)
    }
}

/// What a log subscriber shows: `tracing` filter directives. The runtime's events have the
/// targets `parac::device` (device choice), `parac::build` (program builds, with their time),
/// `parac::cache` (disk cache hits, misses, problems), `parac::plan` (plan choices and
/// searches, one span per region's search) and `parac::launch` (every enqueue, with its kernel
/// time).
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogConfig {
    /// Directives after the default `warn,parac=info`, in `tracing_subscriber::EnvFilter`'s
    /// syntax.
    pub directives: Vec<String>,
}

/// The words of `PARAC_LOG` that name a target.
const LOG_TOPICS: &[&str] = &["device", "build", "cache", "plan", "launch"];

impl LogConfig {
    /// Parses `PARAC_LOG`: a comma-separated list of topics (`device`, `build`, `cache`,
    /// `plan`, `launch`: that target at `debug`), levels (`error` ... `trace`, `off`: every
    /// parac target at that level), `all` (`parac=debug`) or `EnvFilter` directives (anything
    /// with `=`, e.g. `parac::plan=trace`).
    pub fn parse(text: &str) -> Result<LogConfig, Error> {
        let mut directives = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let lower = part.to_ascii_lowercase();
            directives.push(if LOG_TOPICS.contains(&lower.as_str()) {
                format!("parac::{lower}=debug")
            } else if ["off", "error", "warn", "info", "debug", "trace"].contains(&lower.as_str()) {
                format!("parac={lower}")
            } else if lower == "all" {
                "parac=debug".to_string()
            } else if part.contains('=') {
                part.to_string()
            } else {
                return Err(bad(
                    "PARAC_LOG",
                    text,
                    &format!(
                        "`{part}` is not one of {}, a level, `all` or a `target=level` directive",
                        LOG_TOPICS.join(", ")
                    ),
                ));
            });
        }
        Ok(LogConfig { directives })
    }

    /// The filter for `tracing_subscriber::EnvFilter::new`: `warn,parac=info` (warnings, and
    /// the runtime's progress lines) and then the directives.
    pub fn filter(&self) -> String {
        let mut f = "warn,parac=info".to_string();
        for d in &self.directives {
            f.push(',');
            f.push_str(d);
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with(vars: &[(&str, &str)]) -> Result<Config, Error> {
        let map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        Config::from_vars(|n| map.get(n).cloned())
    }

    /// Every variable of [`ENV_VARS`] changes the configuration, and a bad value of each is an
    /// error naming it.
    #[test]
    fn every_variable_parses_into_the_config() {
        let default = Config::default();
        type Check = fn(&Config) -> bool;
        let set: &[(&str, &str, Check)] = &[
            ("PARAC_DEVICE", "opencl-gpu:nv#1", |c| {
                c.device
                    == DeviceSelector::new(DeviceKind::OpenClGpu)
                        .name("nv")
                        .index(1)
            }),
            ("PARAC_PLAN", "baseline", |c| {
                c.policy == PlanPolicy::Baseline
            }),
            ("PARAC_SEARCH", "0", |c| c.policy == PlanPolicy::Model),
            ("PARAC_SEARCH_BUDGET", "0.25", |c| {
                c.policy == PlanPolicy::SearchBudget(Duration::from_millis(250))
            }),
            ("PARAC_WARM_UP", "wait", |c| c.warm_up == WarmUp::Wait),
            ("PARAC_CACHE", "0", |c| {
                !c.cache.enabled && c.cache.root().is_none()
            }),
            ("PARAC_CACHE_DIR", "/tmp/x", |c| {
                c.cache.root() == Some(PathBuf::from("/tmp/x"))
            }),
            ("PARAC_GUARD_BANDS", "1", |c| c.guard_bands),
            ("PARAC_DUMP", "/tmp/d", |c| {
                c.dump == Some(PathBuf::from("/tmp/d"))
            }),
            ("PARAC_CPU_ISA", "avx2", |c| {
                c.cpu_isa == crate::CpuIsa::Avx2
            }),
            ("PARAC_LOG", "plan,launch", |c| {
                c.log.filter() == "warn,parac=info,parac::plan=debug,parac::launch=debug"
            }),
            ("PARAC_THREADS", "3", |c| {
                c.cpu_threads.map(|n| n.get()) == Some(3)
            }),
            ("PARAC_STREAM_BYTES", "off", |c| {
                c.cpu_stream_bytes == Some(usize::MAX)
            }),
        ];
        let names: Vec<&str> = set.iter().map(|s| s.0).collect();
        let documented: Vec<&str> = ENV_VARS.iter().map(|v| v.0).collect();
        assert_eq!(names, documented, "the table covers every variable");
        for (name, value, check) in set {
            let c = with(&[(name, value)]).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(check(&c), "{name}={value}: {c:?}");
            assert_ne!(c, default, "{name}");
            if *name == "PARAC_DUMP" || *name == "PARAC_CACHE_DIR" {
                continue; // any path is one
            }
            match with(&[(name, "#nonsense?")]) {
                Err(Error::Config { setting, .. }) => assert_eq!(setting, *name),
                Err(Error::NoDevice { spec, .. }) => assert_eq!(*name, "PARAC_DEVICE", "{spec}"),
                other => panic!("{name}: {other:?}"),
            }
        }
        assert_eq!(with(&[]).unwrap(), default);
        assert_eq!(with(&[("PARAC_DEVICE", "  ")]).unwrap(), default);
        for (v, w) in [
            ("auto", WarmUp::Auto),
            ("cpu", WarmUp::CpuPath),
            ("Background", WarmUp::Background),
        ] {
            assert_eq!(with(&[("PARAC_WARM_UP", v)]).unwrap().warm_up, w, "{v}");
        }
    }

    /// Every variable read is in [`ENV_VARS`], and the guide's configuration table documents
    /// each.
    #[test]
    fn every_variable_is_documented() {
        let text = include_str!("config.rs");
        let code = text.split("#[cfg(test)]").next().unwrap();
        let quote = '"';
        let read: std::collections::BTreeSet<&str> = code
            .split(&format!("{quote}PARAC_"))
            .skip(1)
            .map(|rest| &rest[..rest.find(quote).unwrap()])
            .collect();
        let listed: std::collections::BTreeSet<&str> = ENV_VARS
            .iter()
            .map(|v| v.0.strip_prefix("PARAC_").unwrap())
            .collect();
        assert_eq!(read, listed);
        let guide = include_str!("../../docs/guide/10-configuration.md");
        for (name, _) in ENV_VARS {
            assert!(guide.contains(&format!("`{name}`")), "the guide: {name}");
        }
    }

    #[test]
    fn plan_variables_combine() {
        let p = |vars: &[(&str, &str)]| with(vars).unwrap().policy;
        assert_eq!(p(&[("PARAC_PLAN", "Model")]), PlanPolicy::Model);
        assert_eq!(p(&[("PARAC_PLAN", "search")]), PlanPolicy::Search);
        assert_eq!(
            p(&[("PARAC_PLAN", "tile16")]),
            PlanPolicy::Force("tile16".to_string())
        );
        // Per stage.
        let pair = |r: &str, l: &str| (r.to_string(), l.to_string());
        assert_eq!(
            p(&[("PARAC_PLAN", "it=inline, r2_h=baseline")]),
            PlanPolicy::Stages(vec![pair("it", "inline"), pair("r2_h", "baseline")])
        );
        for bad in ["it=", "=inline", "it=in line", "it=inline,"] {
            assert!(with(&[("PARAC_PLAN", bad)]).is_err(), "{bad}");
        }
        // PARAC_PLAN wins over PARAC_SEARCH; the budget applies to a search only.
        assert_eq!(
            p(&[("PARAC_PLAN", "baseline"), ("PARAC_SEARCH", "0")]),
            PlanPolicy::Baseline
        );
        assert_eq!(
            p(&[("PARAC_SEARCH", "0"), ("PARAC_SEARCH_BUDGET", "1")]),
            PlanPolicy::Model
        );
        assert_eq!(
            p(&[("PARAC_SEARCH_BUDGET", "inf")]),
            PlanPolicy::SearchBudget(Duration::MAX)
        );
        let c = with(&[("PARAC_CACHE", "read-only")]).unwrap();
        assert!(c.cache.enabled && c.cache.read_only);
    }

    #[test]
    fn device_specs_round_trip() {
        for (spec, kind, name, index) in [
            ("", DeviceKind::Auto, None, 0),
            (" AUTO ", DeviceKind::Auto, None, 0),
            ("cpu", DeviceKind::Cpu, None, 0),
            ("opencl", DeviceKind::OpenCl, None, 0),
            ("opencl:", DeviceKind::OpenCl, None, 0),
            ("opencl:PoCL", DeviceKind::OpenCl, Some("PoCL"), 0),
            ("gpu#2", DeviceKind::OpenClGpu, None, 2),
            ("opencl-cpu:pocl #1", DeviceKind::OpenClCpu, Some("pocl"), 1),
        ] {
            let s = DeviceSelector::parse(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
            assert_eq!(
                (s.kind, s.name.as_deref(), s.index),
                (kind, name, index),
                "{spec}"
            );
            assert_eq!(DeviceSelector::parse(&s.to_string()).unwrap(), s, "{s}");
        }
        for bad in ["cpu:x", "cpu#1", "tpu", "opencl#x", "opencl#-1"] {
            assert!(
                matches!(DeviceSelector::parse(bad), Err(Error::NoDevice { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn log_words() {
        let f = |t: &str| LogConfig::parse(t).unwrap().filter();
        assert_eq!(f(""), "warn,parac=info");
        assert_eq!(f("debug"), "warn,parac=info,parac=debug");
        assert_eq!(
            f("all, build"),
            "warn,parac=info,parac=debug,parac::build=debug"
        );
        assert_eq!(f("parac::plan=trace"), "warn,parac=info,parac::plan=trace");
        assert!(LogConfig::parse("plans").is_err());
    }

    /// Nothing in the runtime reads the environment but [`Config::from_env`]: no other
    /// `env::var` in its sources (tests excepted: the code after a `#[cfg(test)]`).
    #[test]
    fn no_other_environment_reads() {
        fn walk(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    out.push(p);
                }
            }
        }
        let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        walk(&src, &mut files);
        assert!(files.len() > 10, "{files:?}");
        let needle = ["env::", "var"].concat();
        let mut found = Vec::new();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            for (i, line) in code.lines().enumerate() {
                if line.contains(&needle) && !f.ends_with("config.rs") {
                    found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
                }
            }
        }
        assert!(
            found.is_empty(),
            "environment read outside config.rs:\n{}",
            found.join("\n")
        );
    }
}
