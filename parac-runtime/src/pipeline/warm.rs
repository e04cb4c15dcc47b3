//! The CPU path while a function warms up on a device ([`WarmUp::CpuPath`](crate::WarmUp)):
//! the first call of a `parac!` function with given shapes on such a device starts a warm-up
//! on the background thread (`crate::background`) and runs on the CPU path; so do the calls
//! after it until the warm-up is done. The warm-up runs the function on the device once, on
//! copies of that first call's arguments, with the search run to its end: the program and every
//! candidate's program are built, PoCL compiles each kernel for its launches, and the plans are
//! timed and kept (in the plan cache too). Calls then run on the device with nothing left to
//! build, compile or time. A warm-up that fails (a build error, a device error, the function's
//! own error) is logged; the next call runs on the device and reports the error itself.
//!
//! With [`WarmUp::Background`](crate::WarmUp) the calls meanwhile run on the device with the
//! model's plans (the first one builds their program), never timing a candidate.
//!
//! The CPU path and the device give the same results and errors, bit for bit (every test
//! compares them), so which one ran a call is not observable but in time and the log.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use super::HostArg;
use super::host_arg::OwnedArg;
use crate::opencl::Device;
use crate::{PlanPolicy, Runtime, WarmUp};

/// Whether a function (by device, source and its arguments' shapes) is ready on the device or
/// warming up.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Warming,
    Ready,
}

static STATES: Mutex<Option<HashMap<u64, State>>> = Mutex::new(None);

/// At most this many (function, shapes) are remembered; past it those ready are forgotten
/// (their next call warms up again, from the caches: quickly).
const REMEMBERED: usize = 4096;

fn states() -> std::sync::MutexGuard<'static, Option<HashMap<u64, State>>> {
    STATES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Marks a (device, function, shapes) ready: its calls run on the device.
fn ready(key: u64) {
    if let Some(m) = states().as_mut() {
        m.insert(key, State::Ready);
    }
}

/// The name of the function `source` defines (`fn <name> (...`), for the log.
fn function_name(source: &str) -> &str {
    let rest = source.trim_start().strip_prefix("fn").unwrap_or(source);
    let rest = rest.trim_start();
    &rest[..rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len())]
}

/// Where a call runs ([`route`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Route {
    /// On the device, under the runtime's policy.
    Device,
    /// On the device with the model's plans, while the search runs in the background
    /// ([`WarmUp::Background`](crate::WarmUp::Background)).
    Model,
    /// On the CPU path ([`WarmUp::CpuPath`](crate::WarmUp::CpuPath)).
    CpuPath,
}

/// Where this call of the function `source` runs: on `dev` under the runtime's policy, unless
/// the runtime warms functions up; then so once the function's warm-up for these shapes is
/// done, and until then on the CPU path (`CpuPath`) or on the device with the model's plans
/// (`Background`), the first such call starting the warm-up.
pub(super) fn route(rt: &Runtime, dev: &Device, source: &'static str, args: &[HostArg]) -> Route {
    // A device matrix's call runs where its matrices are.
    let meanwhile = match rt.warm_up_mode() {
        _ if args.iter().any(HostArg::on_device) => return Route::Device,
        Some(WarmUp::CpuPath) => Route::CpuPath,
        // Nothing to search in the background: the call builds what it runs, as `Wait`.
        Some(WarmUp::Background)
            if matches!(
                rt.policy(),
                PlanPolicy::Search | PlanPolicy::SearchBudget(_)
            ) =>
        {
            Route::Model
        }
        _ => return Route::Device,
    };
    let mut h = DefaultHasher::new();
    (
        dev as *const Device as usize,
        source.as_ptr() as usize,
        source.len(),
    )
        .hash(&mut h);
    for a in args {
        match a {
            HostArg::In(shape, ..) => shape.hash(&mut h),
            HostArg::Out(shape, ..) => shape.hash(&mut h),
            HostArg::Scalar(_) => 0usize.hash(&mut h),
        }
    }
    let key = h.finish();
    let mut guard = states();
    let map = guard.get_or_insert_with(HashMap::new);
    match map.get(&key) {
        Some(State::Ready) => return Route::Device,
        Some(State::Warming) => return meanwhile,
        None => {}
    }
    // A matrix whose layout is refused: the device reports it.
    let Some(mut owned) = args.iter().map(OwnedArg::of).collect::<Option<Vec<_>>>() else {
        return Route::Device;
    };
    let Some(warm) = rt.for_warm_up() else {
        return Route::Device;
    };
    if map.len() >= REMEMBERED {
        map.retain(|_, s| *s == State::Warming);
    }
    map.insert(key, State::Warming);
    drop(guard);
    let name = function_name(source);
    let how = match meanwhile {
        Route::CpuPath => "runs on the CPU path",
        _ => "runs the model's plans",
    };
    tracing::info!(
        target: "parac::warm_up",
        "`{name}`: {how} while it warms up on {} (builds, compiles and searches its plans in \
         the background; PARAC_WARM_UP=wait waits for it instead)",
        dev.info().name
    );
    let queued = crate::background::submit(key, move || {
        let t = Instant::now();
        let mut args: Vec<HostArg> = owned.iter_mut().map(OwnedArg::borrow).collect();
        let dev = warm.device().expect("a warm-up runs on an OpenCL device");
        // A fused candidate is timed once its consumer has a time (`opencl::plan::timing`): a
        // function with such candidates runs twice, so that every search ends here.
        let mut run = |p: &super::Pipeline| {
            let fuses = p.prepare(0).consumers.iter().any(|c| !c.is_empty());
            for _ in 0..1 + usize::from(fuses) {
                p.run_device(dev, warm.policy(), 0, &mut args)?;
            }
            Ok::<(), crate::Error>(())
        };
        match super::embedded::pipeline(source).and_then(|p| run(&p)) {
            Ok(_) => tracing::info!(
                target: "parac::warm_up",
                "`{name}`: warmed up on {} in {:.2} s; its calls run there now",
                dev.info().name,
                t.elapsed().as_secs_f64()
            ),
            Err(e) => tracing::info!(
                target: "parac::warm_up",
                "`{name}`: its warm-up on {} stopped on an error, the next call reports it: {e}",
                dev.info().name
            ),
        }
        ready(key);
    });
    if !queued {
        // Not queued (the background thread is gone): run on the device.
        ready(key);
        return Route::Device;
    }
    meanwhile
}

#[cfg(test)]
mod tests {
    #[test]
    fn function_names() {
        assert_eq!(super::function_name("fn blur (a : & u8 [N])"), "blur");
        assert_eq!(super::function_name("fn x_2(a: u8)"), "x_2");
    }
}
