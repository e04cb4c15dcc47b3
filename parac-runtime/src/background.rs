//! One background thread per process for the work no call should wait for: building the
//! programs of plan candidates (`opencl/plan.rs`) and warming a function up on a device while
//! its calls run on the CPU path (`pipeline/warm.rs`). Jobs run one at a time, in the order they
//! were submitted (on a machine of few cores a second compiler would only slow the calls down);
//! a job is named by a key, and a key already queued or running is not queued again.
//!
//! A job that panics is caught and logged; the thread goes on with the next one. The thread runs
//! at a lower priority (`nice` 10 on Unix; OpenCL drivers such as PoCL compile on the thread
//! that builds), so that a build shares the cores with calls mostly when they leave them idle.
//!
//! Calls come first: while a call runs on the CPU path for a function that warms up
//! ([`CpuTurn`]), the background thread starts no launch of a region and no run of a timing (it
//! waits, at most [`YIELD_AT_MOST`] each time): it would share the cores with the call, slowing
//! the call and spoiling the timing. A build already under way goes on.

use std::cell::Cell;
use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

type Job = Box<dyn FnOnce() + Send>;

/// The keys of the jobs queued or running.
static PENDING: Mutex<Option<HashSet<u64>>> = Mutex::new(None);
/// Signalled when a job ends.
static ENDED: Condvar = Condvar::new();
/// The queue of the background thread, started by the first job.
static QUEUE: OnceLock<Mutex<Sender<(u64, Job)>>> = OnceLock::new();

/// The calls running on the CPU path while their function warms up.
static CALLS: Mutex<usize> = Mutex::new(0);
/// Signalled when such a call ends.
static CALL_ENDED: Condvar = Condvar::new();
/// The longest the background thread waits for calls before a timing, so that back-to-back
/// calls do not stop a warm-up for good.
const YIELD_AT_MOST: Duration = Duration::from_secs(1);

thread_local! {
    /// This thread is the background thread.
    static BACKGROUND: Cell<bool> = const { Cell::new(false) };
}

/// A call running on the CPU path while its function warms up: made by `run_embedded`, held by
/// the generated function until it returns.
#[must_use]
#[derive(Debug)]
pub struct CpuTurn(());

impl CpuTurn {
    pub(crate) fn new() -> CpuTurn {
        *CALLS.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        CpuTurn(())
    }
}

impl Drop for CpuTurn {
    fn drop(&mut self) {
        let mut n = CALLS.lock().unwrap_or_else(PoisonError::into_inner);
        *n = n.saturating_sub(1);
        CALL_ENDED.notify_all();
    }
}

/// On the background thread: waits until no call runs on the CPU path (at most
/// [`YIELD_AT_MOST`]); elsewhere returns at once.
pub(crate) fn yield_to_calls() {
    if !BACKGROUND.with(Cell::get) {
        return;
    }
    let until = Instant::now() + YIELD_AT_MOST;
    let mut n = CALLS.lock().unwrap_or_else(PoisonError::into_inner);
    while *n > 0 {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        n = CALL_ENDED
            .wait_timeout(n, left)
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

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
                BACKGROUND.with(|b| b.set(true));
                // SAFETY: `nice` changes this thread's priority only (Linux) and reads no
                // memory; its failure (-1 with errno) changes nothing.
                #[cfg(unix)]
                unsafe {
                    libc::nice(10);
                }
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
