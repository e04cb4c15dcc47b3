//! One background thread per process for the work no call should wait for: building the
//! programs of plan candidates (`opencl/plan.rs`) and warming a function up on a device while
//! its calls run on the CPU path (`pipeline/warm.rs`). Jobs run one at a time, in the order they
//! were submitted (on a machine of few cores a second compiler would only slow the calls down);
//! a job is named by a key, and a key already queued or running is not queued again.
//!
//! A job that panics is caught and logged; the thread goes on with the next one.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};

type Job = Box<dyn FnOnce() + Send>;

/// The keys of the jobs queued or running.
static PENDING: Mutex<Option<HashSet<u64>>> = Mutex::new(None);
/// Signalled when a job ends.
static ENDED: Condvar = Condvar::new();
/// The queue of the background thread, started by the first job.
static QUEUE: OnceLock<Mutex<Sender<(u64, Job)>>> = OnceLock::new();

fn pending() -> std::sync::MutexGuard<'static, Option<HashSet<u64>>> {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Queues `job` under `key` unless a job of that key is queued or running; whether it was
/// queued.
pub(crate) fn submit(key: u64, job: impl FnOnce() + Send + 'static) -> bool {
    if !pending().get_or_insert_with(HashSet::new).insert(key) {
        return false;
    }
    let queue = QUEUE.get_or_init(|| {
        let (tx, rx) = channel::<(u64, Job)>();
        std::thread::Builder::new()
            .name("parac-background".into())
            .spawn(move || {
                for (key, job) in rx {
                    if catch_unwind(AssertUnwindSafe(job)).is_err() {
                        tracing::warn!(target: "parac::background", "a background job panicked");
                    }
                    if let Some(p) = pending().as_mut() {
                        p.remove(&key);
                    }
                    ENDED.notify_all();
                }
            })
            .expect("a thread for background builds");
        Mutex::new(tx)
    });
    let sent = queue
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .send((key, Box::new(job)));
    if sent.is_err() {
        // The thread is gone (it never ends while the process runs).
        if let Some(p) = pending().as_mut() {
            p.remove(&key);
        }
        return false;
    }
    true
}

/// Waits until no background job is queued or running: every candidate program asked for so
/// far is built and every warm-up started so far is done.
pub fn wait_idle() {
    let mut p = pending();
    while p.as_ref().is_some_and(|p| !p.is_empty()) {
        p = ENDED.wait(p).unwrap_or_else(PoisonError::into_inner);
    }
}
