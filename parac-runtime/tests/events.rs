//! The runtime's configuration through the builder (no environment read) and its `tracing`
//! events: a fallback to the CPU path is a warning; program builds, disk cache misses and hits
//! are debug events; the cache's directory, read-only mode, dumps and guard bands apply as the
//! builder says. Without OpenCL only the fallback is checked ("skipped" otherwise, a failure with
//! `PARAC_REQUIRE_OPENCL=1`).

use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use parac_runtime::{CacheConfig, DeviceKind, DeviceSelector, PlanPolicy, Runtime};

/// What a subscriber wrote.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Runs `f` with a subscriber whose filter is `filter` on this thread; returns its result and
/// the log.
fn logged<T>(filter: &str, f: impl FnOnce() -> T) -> (T, String) {
    let sink = Sink::default();
    let writer = sink.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(move || writer.clone())
        .without_time()
        .finish();
    let r = tracing::subscriber::with_default(subscriber, f);
    let text = String::from_utf8_lossy(&sink.0.lock().unwrap_or_else(PoisonError::into_inner))
        .into_owned();
    (r, text)
}

#[test]
fn a_fallback_to_the_cpu_path_is_a_warning() {
    let sel = DeviceSelector::new(DeviceKind::Auto).name("no-such-device-xyz");
    let (rt, log) = logged("warn", || Runtime::builder().device(sel).build());
    let rt = rt.expect("auto never fails");
    assert!(rt.device().is_none(), "{}", rt.describe());
    assert!(log.contains("WARN"), "{log}");
    assert!(log.contains("running on the CPU path"), "{log}");
    assert!(log.contains("no-such-device-xyz"), "{log}");
    // Not `Auto`: no fallback, an error.
    let sel = DeviceSelector::new(DeviceKind::OpenCl).name("no-such-device-xyz");
    assert!(Runtime::builder().device(sel).build().is_err());
}

fn files(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

const SRC: &str = "__kernel void k(__global int *p) { p[get_global_id(0)] = 3; }\n";

#[test]
fn builds_and_the_disk_cache_are_events_and_the_builder_applies() {
    let spec = std::env::var("PARAC_DEVICE")
        .ok()
        .filter(|s| s.trim().to_ascii_lowercase().starts_with("opencl"))
        .unwrap_or_else(|| "opencl".to_string());
    let tmp = tempfile::tempdir().expect("temp dir");
    let (cache, dump) = (tmp.path().join("cache"), tmp.path().join("dump"));
    let builder = || {
        Runtime::builder()
            .device_spec(&spec)
            .expect("spec")
            .policy(PlanPolicy::Model)
            .cache(CacheConfig::at(&cache))
    };
    let rt = match builder().dump(&dump).guard_bands(true).build() {
        Ok(rt) => rt,
        Err(e) => {
            let required = std::env::var("PARAC_REQUIRE_OPENCL").is_ok_and(|v| v == "1");
            assert!(!required, "PARAC_REQUIRE_OPENCL=1, but no OpenCL: {e}");
            println!("skipped: no OpenCL ({e})");
            return;
        }
    };
    let d = rt.device().expect("an OpenCL device");
    assert!(d.guard_bands());
    assert_eq!(rt.policy(), &PlanPolicy::Model);
    assert_eq!(d.program_cache_dir(), Some(cache.join("programs")));
    // A unique source, so that no other run's binary is found.
    let src = format!("{SRC}// {}\n", tmp.path().display());
    let (p, log) = logged("parac=debug", || d.program("events", &src, ""));
    assert!(!p.expect("builds").from_disk());
    assert!(log.contains("not in the disk cache"), "{log}");
    assert!(log.contains("built from source"), "{log}");
    assert!(dump.join("events.cl").is_file());
    assert_eq!(files(&cache.join("programs")), 1);

    // Another runtime on the same cache loads the binary: a cache hit.
    let rt2 = builder().build().expect("runtime");
    let (p, log) = logged("parac::cache=debug", || {
        rt2.device().unwrap().program("events", &src, "")
    });
    assert!(p.expect("loads").from_disk());
    assert!(log.contains("from the disk cache"), "{log}");
    assert!(!log.contains("built from source"), "{log}");
    assert!(!rt2.device().unwrap().guard_bands());

    // Read-only: a program built is not stored.
    let ro = builder()
        .cache(CacheConfig::at(&cache).read_only())
        .build()
        .expect("runtime");
    let other = format!("{src}// another\n");
    let p = ro.device().unwrap().program("events2", &other, "");
    assert!(!p.expect("builds").from_disk());
    assert_eq!(files(&cache.join("programs")), 1, "read-only cache written");

    // Off: no directory at all.
    let off = builder()
        .cache(CacheConfig::off())
        .build()
        .expect("runtime");
    assert_eq!(off.device().unwrap().program_cache_dir(), None);
}
