//! Reuse of device allocations, as Halide's `halide_reuse_device_allocations`: a dropped
//! [`Buffer`](super::Buffer) or [`Scalar`](super::Scalar) gives its memory object to its
//! device's pool, and the next buffer of the same byte size takes it back instead of creating
//! one. A pipeline called again and again then allocates nothing: on a CPU device (PoCL) a fresh
//! allocation costs a page fault per page at its first touch, as much as a pass over the data,
//! and releasing it costs an `munmap`.
//!
//! Reuse is safe without waiting: a device has one in-order queue, so every command that used
//! the memory under its old owner was enqueued before it came back to the pool, and runs before
//! anything its new owner enqueues.
//!
//! The pool holds at most its limit in bytes ([`limit_for`]: 1 GiB, or a quarter of the device's
//! memory if that is less; `Device::set_pool_limit` changes it), the oldest memory released
//! first; `Device::trim` releases everything, and dropping the device releases what is left
//! (memory given back after that is released at once). A pooled memory object is not counted by
//! [`live_buffers`](super::live_buffers). Memory with guard bands (`guard.rs`) is pooled with
//! its parent buffer and reused only by buffers that ask for guard bands.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use opencl3::memory::{Buffer as ClBuffer, ClMem};

use super::guard::Band;

/// The most bytes a pool keeps by default.
pub(crate) const CAP: usize = 1 << 30;

/// The default limit of a device's pool: [`CAP`], or a quarter of the device's global memory
/// (`CL_DEVICE_GLOBAL_MEM_SIZE`) where that is less.
pub(crate) fn limit_for(global_mem: u64) -> usize {
    usize::try_from(global_mem / 4).map_or(CAP, |q| q.min(CAP))
}

/// A pooled memory object: its size in bytes, the object, and its guard bands' parent.
type Entry = (usize, ClBuffer<u8>, Option<Arc<Band>>);

/// Free device memory objects, oldest first.
pub(crate) struct Pool {
    /// `(bytes, the pool's reference, the parent buffer where it has guard bands)`; a tuple
    /// drops the memory object before its parent.
    free: Vec<Entry>,
    /// The sum of the sizes in `free`.
    bytes: usize,
    /// The most `bytes` may be.
    limit: usize,
    /// Set when the device is dropped: memory given back afterwards is released.
    closed: bool,
}

/// A device's pool, shared with its buffers.
pub(crate) type Shared = Arc<Mutex<Pool>>;

/// An empty pool keeping at most `limit` bytes.
pub(crate) fn new(limit: usize) -> Shared {
    Arc::new(Mutex::new(Pool {
        free: Vec::new(),
        bytes: 0,
        limit,
        closed: false,
    }))
}

fn lock(p: &Shared) -> MutexGuard<'_, Pool> {
    p.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Pool {
    /// Removes the oldest memory until at most `limit` bytes are kept; returns it, to be
    /// released after the lock is dropped (a release may unmap memory).
    fn evict_to(&mut self, limit: usize) -> Vec<Entry> {
        let mut n = 0;
        let mut bytes = self.bytes;
        while bytes > limit {
            bytes -= self.free[n].0;
            n += 1;
        }
        self.bytes = bytes;
        self.free.drain(..n).collect()
    }
}

/// A memory object of exactly `bytes` bytes from the pool (the most recently given back, whose
/// memory is the likeliest to be in the caches), as a buffer of `T`; with guard bands
/// (`guarded`) only one that has them, with its parent, else only one without.
pub(crate) fn take<T>(
    p: &Shared,
    bytes: usize,
    guarded: bool,
) -> Option<(ClBuffer<T>, Option<Arc<Band>>)> {
    let mut pool = lock(p);
    let i = pool
        .free
        .iter()
        .rposition(|(b, _, g)| *b == bytes && g.is_some() == guarded)?;
    let (b, mem, band) = pool.free.remove(i);
    pool.bytes -= b;
    drop(pool);
    let raw = mem.get();
    // The pool's reference becomes the new buffer's.
    std::mem::forget(mem);
    Some((ClBuffer::new(raw), band))
}

/// Keeps the memory object `mem` (`bytes` bytes; a sub-buffer of `band` where it has guard
/// bands) for reuse, taking over its reference; releases it instead when the pool is closed or
/// the memory alone exceeds the limit, and releases the oldest pooled memory beyond the limit.
pub(crate) fn give<T>(p: &Shared, mem: ClBuffer<T>, bytes: usize, band: Option<Arc<Band>>) {
    let raw = mem.get();
    std::mem::forget(mem);
    let mem = ClBuffer::<u8>::new(raw);
    let mut pool = lock(p);
    if pool.closed || bytes > pool.limit {
        drop(pool);
        drop(mem);
        drop(band);
        return;
    }
    pool.free.push((bytes, mem, band));
    pool.bytes += bytes;
    let limit = pool.limit;
    let evicted = pool.evict_to(limit);
    drop(pool);
    drop(evicted);
}

/// Releases every pooled memory object; the bytes released.
pub(crate) fn clear(p: &Shared) -> usize {
    let mut pool = lock(p);
    let bytes = pool.bytes;
    let released = pool.evict_to(0);
    drop(pool);
    drop(released);
    bytes
}

/// Releases every pooled memory object and keeps none from now on (the device is dropped).
pub(crate) fn close(p: &Shared) {
    lock(p).closed = true;
    clear(p);
}

/// Bytes pooled now.
pub(crate) fn pooled(p: &Shared) -> usize {
    lock(p).bytes
}

/// Memory objects pooled now.
pub(crate) fn count(p: &Shared) -> usize {
    lock(p).free.len()
}

/// The pool's limit in bytes.
pub(crate) fn limit(p: &Shared) -> usize {
    lock(p).limit
}

/// Sets the pool's limit, releasing the oldest memory beyond it; 0 turns reuse off.
pub(crate) fn set_limit(p: &Shared, limit: usize) {
    let mut pool = lock(p);
    pool.limit = limit;
    let evicted = pool.evict_to(limit);
    drop(pool);
    drop(evicted);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_limit() {
        assert_eq!(limit_for(64 << 30), CAP);
        assert_eq!(limit_for(2 << 30), 512 << 20);
        assert_eq!(limit_for(0), 0);
    }
}
