//! The runtime handle a pipeline function runs on.

use std::fmt;

use crate::Error;
use crate::opencl::{self, Want};

/// The handle a pipeline function runs on: the chosen device (an OpenCL device, with its
/// context, queue and program cache, or the CPU path). `Send + Sync`: create one and share it by
/// reference across threads.
pub struct Runtime {
    backend: Backend,
    policy: PlanPolicy,
}

/// How a pipeline picks the plan (the kernel variant and work-group size) of each region on an
/// OpenCL device. The CPU path has one plan and ignores it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PlanPolicy {
    /// Time the model's candidates for each (region, device, size class), in the model's order,
    /// within a budget per region and call (`PARAC_SEARCH_BUDGET`: seconds, or `inf`; default
    /// 0.1 s; the build of the model's plan is not counted, and a timing starts only where it is
    /// expected to fit): a call whose budget runs out runs the fastest plan so far, and later
    /// calls go on with the search until it is complete. The fastest is kept in the plan cache
    /// (the default).
    #[default]
    Search,
    /// As `Search`, with this budget per region and call instead of `PARAC_SEARCH_BUDGET`'s:
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
}

impl PlanPolicy {
    /// The policy the environment asks for: `PARAC_PLAN=baseline` (or another candidate's
    /// label), else `PARAC_SEARCH=0` for [`PlanPolicy::Model`], else [`PlanPolicy::Search`].
    pub fn from_env() -> PlanPolicy {
        match std::env::var("PARAC_PLAN") {
            Ok(p) if p.trim().eq_ignore_ascii_case("baseline") => return PlanPolicy::Baseline,
            Ok(p) if p.trim().eq_ignore_ascii_case("search") => return PlanPolicy::Search,
            Ok(p) if p.trim().eq_ignore_ascii_case("model") => return PlanPolicy::Model,
            Ok(p) if !p.trim().is_empty() => return PlanPolicy::Force(p.trim().to_string()),
            _ => {}
        }
        if std::env::var_os("PARAC_SEARCH").is_some_and(|v| v == "0") {
            PlanPolicy::Model
        } else {
            PlanPolicy::Search
        }
    }
}

enum Backend {
    /// The CPU path (rayon).
    Cpu,
    /// An OpenCL device.
    OpenCl(Box<opencl::Device>),
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

impl Runtime {
    /// Creates a runtime on the device that the environment variable `PARAC_DEVICE` names (see
    /// [`from_spec`](Runtime::from_spec)); unset, it picks the first GPU of any OpenCL platform,
    /// else any OpenCL device, else the CPU path.
    pub fn new() -> Result<Runtime, Error> {
        match std::env::var("PARAC_DEVICE") {
            Ok(spec) => Runtime::from_spec(&spec),
            Err(std::env::VarError::NotPresent) => Runtime::from_spec(""),
            Err(std::env::VarError::NotUnicode(spec)) => Err(Error::NoDevice {
                spec: spec.to_string_lossy().into_owned(),
                reason: "PARAC_DEVICE is not valid UTF-8".to_string(),
            }),
        }
    }

    /// The CPU path, always available.
    pub fn cpu() -> Runtime {
        Runtime {
            backend: Backend::Cpu,
            policy: PlanPolicy::from_env(),
        }
    }

    /// Creates a runtime on the device `spec` names (surrounding spaces and the case of the
    /// keywords do not matter):
    /// - `""` or `auto`: the first GPU of any OpenCL platform, else any OpenCL device, else the
    ///   CPU path (never `Error::NoDevice`);
    /// - `cpu`: the CPU path;
    /// - `opencl`: the first OpenCL device, GPUs first; `Error::NoDevice` if there is none;
    /// - `opencl:<text>`: the first OpenCL device whose platform or device name contains
    ///   `<text>` (case-insensitive; the platform's and device's vendors count too, so
    ///   `opencl:pocl` finds PoCL, whose vendor is "The pocl project"); `Error::NoDevice`
    ///   listing the devices found if none does.
    ///
    /// Anything else is `Error::NoDevice`.
    pub fn from_spec(spec: &str) -> Result<Runtime, Error> {
        let s = spec.trim();
        let lower = s.to_ascii_lowercase();
        let want = match lower.as_str() {
            "" | "auto" => Want::Auto,
            "cpu" => return Ok(Runtime::cpu()),
            "opencl" => Want::Any,
            _ if lower.starts_with("opencl:") => match s["opencl:".len()..].trim() {
                "" => Want::Any,
                text => Want::Named(text),
            },
            _ => {
                return Err(Error::NoDevice {
                    spec: spec.to_string(),
                    reason: "expected `auto`, `cpu`, `opencl` or `opencl:<name>`".to_string(),
                });
            }
        };
        Ok(Runtime {
            backend: match opencl::select(want, spec)? {
                Some(d) => Backend::OpenCl(Box::new(d)),
                None => Backend::Cpu,
            },
            policy: PlanPolicy::from_env(),
        })
    }

    /// The same runtime with another plan policy (the default comes from the environment, see
    /// [`PlanPolicy::from_env`]).
    pub fn with_policy(mut self, policy: PlanPolicy) -> Runtime {
        self.policy = policy;
        self
    }

    /// Changes the plan policy in place (the device, its programs and caches are kept).
    pub fn set_policy(&mut self, policy: PlanPolicy) {
        self.policy = policy;
    }

    /// How regions pick their plans.
    pub fn policy(&self) -> &PlanPolicy {
        &self.policy
    }

    /// The OpenCL device; `None` on the CPU path.
    pub fn device(&self) -> Option<&opencl::Device> {
        match &self.backend {
            Backend::Cpu => None,
            Backend::OpenCl(d) => Some(d),
        }
    }

    /// One line for logs: `OpenCL: <platform> / <device> (driver <version>)` or
    /// `CPU path (rayon, <n> threads)`.
    pub fn describe(&self) -> String {
        match &self.backend {
            Backend::Cpu => format!("CPU path (rayon, {} threads)", rayon::current_num_threads()),
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
        assert!(Runtime::cpu().describe().starts_with("CPU path (rayon, "));
        match Runtime::from_spec("gpu") {
            Err(Error::NoDevice { spec, reason }) => {
                assert_eq!(spec, "gpu");
                assert!(reason.contains("opencl:<name>"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        fn shared<T: Send + Sync + fmt::Debug>() {}
        shared::<Runtime>();
    }
}
