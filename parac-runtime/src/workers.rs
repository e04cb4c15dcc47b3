//! The CPU path's threads: a pool whose caller works too, and whose workers wait for the next
//! call by spinning a while before they sleep.
//!
//! A call of the generated code splits its rows into tasks, claimed one at a time from a shared
//! counter by the calling thread and by the pool's workers alike. The caller starts on the first
//! task at once, so a call costs no wake-up of a sleeping thread before work begins, and one
//! whose tasks are done before a worker arrives costs none at all. A worker that finishes a job
//! spins for [`SPIN`] (checking for the next job), then sleeps until one is published: the calls
//! of a pipeline, or of a video's frames, follow each other within that time and find it awake,
//! as Halide's and OpenMP's workers do. (rayon's workers sleep within microseconds and its
//! caller waits outside the pool; on a virtual machine each such wake-up cost tens of
//! microseconds, a call's whole time at 640x480.)
//!
//! The pool has a thread per core; a call runs on at most the threads its runtime allows
//! (`Runtime::cpu_threads`, `PARAC_THREADS`): workers past that leave its job alone.
//!
//! One caller holds the pool at a time. A call made while another holds it (another thread's,
//! or one made from inside a task) runs its tasks in order on its own thread, so nothing can
//! wait on itself.
//!
//! Safety: a job lives on its caller's stack and workers reach it through a pointer. A worker
//! counts itself in [`Pool::active`] before it loads the pointer and out after its last use of
//! the job; the caller clears the pointer, then waits for that count to reach zero before it
//! returns (also when a task panicked: panics are caught, the job finished, then resumed). The
//! counter and the pointer are sequentially consistent, so a worker that loaded the pointer is
//! counted when the caller looks.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a worker that found no job spins for the next before it sleeps.
pub const SPIN: Duration = Duration::from_micros(500);

/// One call's tasks.
struct Job {
    /// The task body, its lifetime erased: valid until the caller's `run` returns.
    f: *const (dyn Fn(usize) + Sync),
    tasks: usize,
    /// The next task to claim.
    next: AtomicUsize,
    /// Tasks finished (or skipped after a panic).
    done: AtomicUsize,
    /// Workers that may still join (the call's threads but its caller).
    room: AtomicUsize,
    /// The first panic of a task.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    panicked: AtomicBool,
}

impl Job {
    /// Claims and runs tasks until none is left.
    fn work(&self) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.tasks {
                return;
            }
            if !self.panicked.load(Ordering::Relaxed) {
                // SAFETY: `f` outlives the job's use by any thread (the module's protocol).
                let f = unsafe { &*self.f };
                if let Err(p) = catch_unwind(AssertUnwindSafe(|| f(i))) {
                    self.panicked.store(true, Ordering::Relaxed);
                    self.panic
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert(p);
                }
            }
            self.done.fetch_add(1, Ordering::Release);
        }
    }
}

struct Pool {
    /// Threads a call runs on: the workers and its caller.
    threads: AtomicUsize,
    /// Bumped for every job published.
    epoch: AtomicU64,
    /// The job being run, or null.
    job: AtomicPtr<Job>,
    /// Workers between their load of `job` and their last use of it.
    active: AtomicUsize,
    /// Whether a caller holds the pool.
    busy: AtomicBool,
    /// Workers asleep, waiting on `wake`.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

thread_local! {
    static WORKER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<&'static Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = configured_threads();
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            threads: AtomicUsize::new(1),
            epoch: AtomicU64::new(0),
            job: AtomicPtr::new(std::ptr::null_mut()),
            active: AtomicUsize::new(0),
            busy: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }));
        let mut spawned = 1;
        for k in 1..threads {
            let ok = std::thread::Builder::new()
                .name(format!("parac-worker-{k}"))
                .spawn(move || worker(pool))
                .is_ok();
            spawned += usize::from(ok);
        }
        // A thread the system refused: the tasks run on those there are.
        pool.threads.store(spawned, Ordering::Relaxed);
        pool
    })
}

/// The pool's threads: one per core of the processor.
fn configured_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 256)
}

fn worker(pool: &'static Pool) {
    WORKER.with(|w| w.set(true));
    let mut seen = pool.epoch.load(Ordering::SeqCst);
    loop {
        seen = wait_for_job(pool, seen);
        pool.active.fetch_add(1, Ordering::SeqCst);
        let job = pool.job.load(Ordering::SeqCst);
        if !job.is_null() {
            // SAFETY: counted in `active` before the load, so the job outlives this use.
            let job = unsafe { &*job };
            let room = job
                .room
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| r.checked_sub(1));
            if room.is_ok() {
                job.work();
            }
        }
        pool.active.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits until the epoch differs from `seen`: spinning for [`SPIN`], then asleep.
fn wait_for_job(pool: &Pool, seen: u64) -> u64 {
    let start = Instant::now();
    let mut spins = 0u32;
    loop {
        let e = pool.epoch.load(Ordering::SeqCst);
        if e != seen {
            return e;
        }
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(256) {
            if start.elapsed() >= SPIN {
                break;
            }
            // Give way where the cores are oversubscribed.
            std::thread::yield_now();
        }
    }
    let mut guard = pool.lock.lock().unwrap_or_else(|e| e.into_inner());
    pool.sleepers.fetch_add(1, Ordering::SeqCst);
    loop {
        let e = pool.epoch.load(Ordering::SeqCst);
        if e != seen {
            pool.sleepers.fetch_sub(1, Ordering::SeqCst);
            return e;
        }
        guard = pool.wake.wait(guard).unwrap_or_else(|e| e.into_inner());
    }
}

/// The pool's threads (the caller of a call among them): one per core.
pub fn threads() -> usize {
    pool().threads.load(Ordering::Relaxed)
}

/// Runs `f(0)`, ..., `f(tasks - 1)`, each once, on at most `limit` threads (the caller's and
/// the pool's); returns when all have run. A task's panic is resumed here, after every task
/// has finished.
pub fn run(limit: usize, tasks: usize, f: &(dyn Fn(usize) + Sync)) {
    let pool = pool();
    let limit = limit.min(pool.threads.load(Ordering::Relaxed));
    let serial = tasks <= 1
        || limit <= 1
        || WORKER.with(|w| w.get())
        || pool
            .busy
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err();
    if serial {
        (0..tasks).for_each(f);
        return;
    }
    // SAFETY: only the lifetime is erased; the job is withdrawn before `f`'s borrow ends.
    let f: *const (dyn Fn(usize) + Sync) = unsafe { std::mem::transmute(f) };
    let job = Job {
        f,
        tasks,
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        room: AtomicUsize::new(limit - 1),
        panic: Mutex::new(None),
        panicked: AtomicBool::new(false),
    };
    pool.job
        .store(&job as *const Job as *mut Job, Ordering::SeqCst);
    pool.epoch.fetch_add(1, Ordering::SeqCst);
    if pool.sleepers.load(Ordering::SeqCst) > 0 {
        let _guard = pool.lock.lock().unwrap_or_else(|e| e.into_inner());
        pool.wake.notify_all();
    }
    job.work();
    wait_until(|| job.done.load(Ordering::Acquire) >= tasks);
    pool.job.store(std::ptr::null_mut(), Ordering::SeqCst);
    wait_until(|| pool.active.load(Ordering::SeqCst) == 0);
    pool.busy.store(false, Ordering::Release);
    let panic = job.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(p) = panic {
        resume_unwind(p);
    }
}

/// Spins (then yields) until `done()`.
fn wait_until(done: impl Fn() -> bool) {
    let mut spins = 0u32;
    while !done() {
        spins = spins.wrapping_add(1);
        if spins < 1 << 12 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// Tasks for `n` items on `threads` threads: a few each, so that a thread slowed (or
/// preempted) hands its share to the others, and few enough that claiming them costs nothing
/// beside their work.
fn blocks(threads: usize, n: usize) -> usize {
    n.min(threads.saturating_mul(4)).max(1)
}

/// `f` on every item, in parallel (on at most `limit` threads) in blocks of consecutive items;
/// the error of the first item in order that failed (every item before it has run; items after
/// it may have).
pub fn try_for_each<T: Send, E: Send>(
    limit: usize,
    items: impl IntoIterator<Item = T>,
    f: impl Fn(T) -> Result<(), E> + Sync,
) -> Result<(), E> {
    let mut slots: Vec<Option<T>> = items.into_iter().map(Some).collect();
    let n = slots.len();
    let limit = limit.min(threads());
    let tasks = blocks(limit, n);
    if tasks <= 1 || limit <= 1 {
        return slots.into_iter().flatten().try_for_each(f);
    }
    let per = n.div_ceil(tasks);
    let parts: Vec<Mutex<&mut [Option<T>]>> = slots.chunks_mut(per).map(Mutex::new).collect();
    // The first item that failed, and its error.
    let failed = AtomicUsize::new(usize::MAX);
    let error: Mutex<Option<(usize, E)>> = Mutex::new(None);
    run(limit, parts.len(), &|b| {
        let mut part = parts[b].lock().unwrap_or_else(|e| e.into_inner());
        for (k, slot) in part.iter_mut().enumerate() {
            let i = b * per + k;
            if i > failed.load(Ordering::Relaxed) {
                return;
            }
            let Some(item) = slot.take() else { continue };
            if let Err(e) = f(item) {
                failed.fetch_min(i, Ordering::Relaxed);
                let mut first = error.lock().unwrap_or_else(|e| e.into_inner());
                if first.as_ref().is_none_or(|(j, _)| i < *j) {
                    *first = Some((i, e));
                }
                return;
            }
        }
    });
    match error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// `[f(0), ..., f(n - 1)]`, computed in parallel on at most `limit` threads.
pub fn map<R: Send>(limit: usize, n: usize, f: impl Fn(usize) -> R + Sync) -> Vec<R> {
    let mut out: Vec<Option<R>> = (0..n).map(|_| None).collect();
    let ran = try_for_each(limit, out.iter_mut().enumerate(), |(i, o)| {
        *o = Some(f(i));
        Ok::<(), std::convert::Infallible>(())
    });
    let Ok(()) = ran;
    out.into_iter().flatten().collect()
}

/// `f` of each chunk of `m` of `chunk` elements (the last may be shorter), computed in
/// parallel on at most `limit` threads, in the chunks' order.
pub fn chunk_map<T: Sync, R: Send>(
    limit: usize,
    m: &[T],
    chunk: usize,
    f: impl Fn(&[T]) -> R + Sync,
) -> Vec<R> {
    let mut out: Vec<Option<R>> = (0..m.len().div_ceil(chunk.max(1))).map(|_| None).collect();
    let ran = try_for_each(
        limit,
        m.chunks(chunk.max(1)).zip(out.iter_mut()),
        |(c, o)| {
            *o = Some(f(c));
            Ok::<(), std::convert::Infallible>(())
        },
    );
    let Ok(()) = ran;
    out.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn every_task_runs_once() {
        for tasks in [0, 1, 2, 3, 17, 1000] {
            let counts: Vec<AtomicU32> = (0..tasks).map(|_| AtomicU32::new(0)).collect();
            for limit in [1, 2, usize::MAX] {
                counts.iter().for_each(|c| c.store(0, Ordering::Relaxed));
                run(limit, tasks, &|i| {
                    counts[i].fetch_add(1, Ordering::Relaxed);
                });
                assert!(
                    counts.iter().all(|c| c.load(Ordering::Relaxed) == 1),
                    "{tasks}"
                );
            }
        }
    }

    #[test]
    fn a_call_from_inside_a_task_runs_in_order_on_its_thread() {
        let total = AtomicUsize::new(0);
        run(usize::MAX, 4, &|_| {
            run(usize::MAX, 5, &|j| {
                total.fetch_add(j, Ordering::Relaxed);
            });
        });
        assert_eq!(total.load(Ordering::Relaxed), 4 * 10);
    }

    #[test]
    fn callers_on_several_threads_each_get_their_results() {
        std::thread::scope(|s| {
            for t in 0..4usize {
                s.spawn(move || {
                    for round in 0..200usize {
                        let got = map(t + 1, 37, |i| i * t + round);
                        assert_eq!(got, (0..37).map(|i| i * t + round).collect::<Vec<_>>());
                    }
                });
            }
        });
    }

    #[test]
    fn a_panic_reaches_the_caller_after_every_task_and_the_pool_runs_on() {
        let ran = AtomicUsize::new(0);
        let r = catch_unwind(AssertUnwindSafe(|| {
            run(usize::MAX, 64, &|i| {
                ran.fetch_add(1, Ordering::Relaxed);
                if i == 5 {
                    panic!("task five");
                }
            })
        }));
        assert!(r.is_err());
        assert!(ran.load(Ordering::Relaxed) >= 1);
        assert_eq!(map(usize::MAX, 10, |i| i + 1), (1..=10).collect::<Vec<_>>());
    }

    #[test]
    fn the_error_is_the_first_items_and_every_item_before_it_ran() {
        for n in [1usize, 2, 9, 100, 1000] {
            for bad in [0, n / 3, n - 1] {
                let mut seen = vec![false; n];
                let r = try_for_each(usize::MAX, seen.iter_mut().enumerate(), |(i, s)| {
                    *s = true;
                    if i >= bad && i % 2 == bad % 2 {
                        Err(i)
                    } else {
                        Ok(())
                    }
                });
                assert_eq!(r, Err(bad), "{n} items, first bad {bad}");
                assert!(seen[..bad].iter().all(|s| *s));
            }
        }
    }

    #[test]
    fn chunks_map_in_order() {
        let m: Vec<u32> = (0..10_000).collect();
        for chunk in [1, 7, 4096, 20_000] {
            let sums = chunk_map(2, &m, chunk, |c| {
                c.iter().map(|v| u64::from(*v)).sum::<u64>()
            });
            assert_eq!(sums.len(), m.len().div_ceil(chunk));
            let want: Vec<u64> = m
                .chunks(chunk)
                .map(|c| c.iter().map(|v| u64::from(*v)).sum())
                .collect();
            assert_eq!(sums, want);
        }
        assert!(chunk_map(2, &m[..0], 8, |c| c.len()).is_empty());
    }
}
