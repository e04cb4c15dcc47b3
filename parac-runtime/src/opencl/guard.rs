//! Guard bands around device buffers, a test of memory safety: off by default, on
//! with `PARAC_GUARD_BANDS=1` (read when a device is opened) or
//! [`Device::set_guard_bands`](super::Device::set_guard_bands).
//!
//! While it is on, every buffer the device allocates ([`Device::alloc`](super::Device::alloc),
//! `alloc_uninit`, `upload`, [`Device::scalar`](super::Device::scalar): intermediates, outputs,
//! reduction partials, the error flag) is an OpenCL sub-buffer (`clCreateSubBuffer`) carved out of
//! a larger parent buffer:
//!
//! ```text
//! parent: [ guard (G bytes) | the buffer (its bytes, padding included) | guard (G bytes) ]
//! ```
//!
//! `G` is at least [`MIN_GUARD`] bytes and a multiple of `CL_DEVICE_MEM_BASE_ADDR_ALIGN` (a
//! sub-buffer's origin must be aligned to it); the trailing guard starts at the buffer's last
//! byte, so a write one byte past it lands in the guard. Both guards are filled with a known
//! byte pattern ([`pattern`]) when the parent is created. Kernels, transfers, maps and the pool
//! see only the sub-buffer, so nothing else changes: pitches, arguments and copies are the same.
//!
//! A check reads both guards back through the device's in-order queue (a blocking read, after
//! every command enqueued before it) and compares them with the pattern:
//! - when a buffer is dropped (before its memory goes back to the pool): a touched guard is written
//!   to stderr (past the test harness's capture), counted in [`guard_violations`] (process-wide)
//!   and kept in the device's list, which [`Device::check_guards`](super::Device::check_guards)
//!   returns;
//! - [`Device::check_guards`](super::Device::check_guards) checks every guarded buffer alive on the
//!   device as well, and returns [`Error::GuardBand`] naming the buffer when any guard was touched.
//!
//! A touched guard is filled with the pattern again once reported, so each touch is reported
//! once. Host buffers (the in-place views of a caller's matrices, `CL_MEM_USE_HOST_PTR`) are
//! the caller's memory and have no guard: tests put canaries around those matrices instead.
//!
//! Off, the cost is one atomic load per allocation.

use std::collections::HashMap;
use std::fmt;
use std::io::Write as _;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use opencl3::command_queue::{CommandQueue, retain_command_queue};
use opencl3::context::Context;
use opencl3::memory::{Buffer as ClBuffer, CL_MEM_READ_WRITE, ClMem};
use opencl3::types::CL_BLOCKING;

use super::{cl_error, code};
use crate::Error;

/// The least size in bytes of each guard region.
pub const MIN_GUARD: usize = 4096;

/// Touched guards found in this process, all devices together.
static VIOLATIONS: AtomicUsize = AtomicUsize::new(0);

/// How many touched guard regions have been found in this process (by the checks on drop and by
/// [`Device::check_guards`](super::Device::check_guards), all devices together); never reset. Tests
/// compare it before and after a run.
pub fn guard_violations() -> usize {
    VIOLATIONS.load(Ordering::SeqCst)
}

/// The byte at position `i` of a guard region: varies with the position (a shifted copy of
/// the guard does not match it) and is neither 0 nor 0xFF.
pub fn pattern(i: usize) -> u8 {
    let b = 0xA5 ^ (i.wrapping_mul(0x3B) % 251) as u8;
    if b == 0 || b == 0xFF { 0x5A } else { b }
}

/// Which guard of a buffer was touched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuardSide {
    /// The region before the buffer's first byte.
    Before,
    /// The region after its last byte.
    After,
}

/// A touched guard region.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct GuardViolation {
    /// The buffer's name (as given to `alloc`, `upload`...; `scalar of long` for a
    /// [`Scalar`](super::Scalar)).
    pub buffer: String,
    /// The buffer's size in bytes, padding included.
    pub bytes: usize,
    /// Which guard.
    pub side: GuardSide,
    /// How many bytes of the guard differ from the pattern.
    pub changed: usize,
    /// The changed bytes nearest to and farthest from the buffer, as byte offsets from the
    /// buffer's first byte (negative before it, `bytes` and more after it).
    pub nearest: i64,
    /// See `nearest`.
    pub farthest: i64,
    /// `"on drop"` or `"on check"`.
    pub found: &'static str,
}

impl fmt::Display for GuardViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (lo, hi) = if self.nearest <= self.farthest {
            (self.nearest, self.farthest)
        } else {
            (self.farthest, self.nearest)
        };
        write!(
            f,
            "guard {} device buffer `{}` ({} bytes) touched {}: {} byte{} changed at offsets \
             {lo}..={hi} from its start",
            match self.side {
                GuardSide::Before => "before",
                GuardSide::After => "after",
            },
            self.buffer,
            self.bytes,
            self.found,
            self.changed,
            if self.changed == 1 { "" } else { "s" },
        )
    }
}

/// The parent buffer of a guarded buffer: `guard` bytes, the buffer's `bytes`, `guard` bytes.
/// It travels with the sub-buffer into the pool and back.
pub(crate) struct Band {
    parent: ClBuffer<u8>,
    guard: usize,
    bytes: usize,
}

/// A device's guard-band state, shared with its guarded buffers.
pub(crate) struct Guards {
    on: AtomicBool,
    /// The size of each guard region for new buffers.
    size: usize,
    /// A reference of its own to the device's queue, for the checks on drop (a buffer may
    /// outlive its `Device`).
    queue: CommandQueue,
    /// Guarded buffers alive, by their sub-buffer's handle: their names and parents.
    live: Mutex<HashMap<usize, (String, Arc<Band>)>>,
    /// Touched guards found on drop, not yet returned by `check_guards`.
    found: Mutex<Vec<GuardViolation>>,
}

pub(crate) type Shared = Arc<Guards>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The guard size for a device whose sub-buffer origins align to `align_bits`
/// (`CL_DEVICE_MEM_BASE_ADDR_ALIGN`, in bits): [`MIN_GUARD`] rounded up to a multiple of it.
pub(crate) fn guard_size(align_bits: u32) -> usize {
    let align = (align_bits as usize / 8).max(1);
    MIN_GUARD.div_ceil(align) * align
}

/// The guard state of a device with `queue`; `on` as `Config::guard_bands` says
/// (`PARAC_GUARD_BANDS=1`).
pub(crate) fn new(queue: &CommandQueue, align_bits: u32, on: bool) -> Result<Shared, i32> {
    // SAFETY: a valid queue; the reference taken here is released by the `CommandQueue` below.
    unsafe { retain_command_queue(queue.get()) }?;
    let queue = CommandQueue::new(queue.get(), queue.max_work_item_dimensions());
    Ok(Arc::new(Guards {
        on: AtomicBool::new(on),
        size: guard_size(align_bits),
        queue,
        live: Mutex::new(HashMap::new()),
        found: Mutex::new(Vec::new()),
    }))
}

impl Guards {
    /// Whether new buffers get guard bands.
    pub(crate) fn on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// A guarded memory object of `bytes` bytes: a sub-buffer of a fresh parent whose guards
    /// hold the pattern.
    pub(crate) fn create<T>(
        &self,
        context: &Context,
        bytes: usize,
    ) -> Result<(ClBuffer<T>, Arc<Band>), i32> {
        let guard = self.size;
        let total = bytes
            .checked_add(2 * guard)
            .ok_or(code::INVALID_BUFFER_SIZE)?;
        // SAFETY: a fresh allocation in this device's context, no host pointer.
        let parent = unsafe {
            ClBuffer::<u8>::create(context, CL_MEM_READ_WRITE, total, std::ptr::null_mut())
        }
        .map_err(|e| e.0)?;
        let band = Band {
            parent,
            guard,
            bytes,
        };
        self.arm(&band)?;
        // SAFETY: the region `guard..guard + bytes` lies in the parent; `guard` is a multiple of
        // the device's base address alignment.
        let sub = unsafe {
            band.parent
                .create_sub_buffer(CL_MEM_READ_WRITE, guard, bytes)
        }
        .map_err(|e| e.0)?;
        let raw = sub.get();
        // The sub-buffer's reference becomes the typed buffer's.
        std::mem::forget(sub);
        Ok((ClBuffer::new(raw), Arc::new(band)))
    }

    /// Fills both guards of `band` with the pattern (blocking).
    fn arm(&self, band: &Band) -> Result<(), i32> {
        let p: Vec<u8> = (0..band.guard).map(pattern).collect();
        for offset in [0, band.guard + band.bytes] {
            // A second handle to the parent, never released: it borrows the band's reference
            // (the write needs a `&mut`, the band is shared).
            let mut parent = ManuallyDrop::new(ClBuffer::<u8>::new(band.parent.get()));
            // SAFETY: `guard` bytes at `offset` lie in the parent; the write blocks.
            unsafe {
                self.queue
                    .enqueue_write_buffer(&mut parent, CL_BLOCKING, offset, &p, &[])
            }
            .map_err(|e| e.0)?;
        }
        Ok(())
    }

    /// Reads both guards of `band` back (blocking: after every command enqueued before) and
    /// returns the touched ones, re-armed.
    fn check(
        &self,
        name: &str,
        band: &Band,
        found: &'static str,
    ) -> Result<Vec<GuardViolation>, i32> {
        let mut out = Vec::new();
        let mut got = vec![0u8; band.guard];
        for (side, offset) in [
            (GuardSide::Before, 0),
            (GuardSide::After, band.guard + band.bytes),
        ] {
            // SAFETY: `guard` bytes at `offset` lie in the parent; the read blocks.
            unsafe {
                self.queue
                    .enqueue_read_buffer(&band.parent, CL_BLOCKING, offset, &mut got, &[])
            }
            .map_err(|e| e.0)?;
            let changed: Vec<usize> = (0..band.guard).filter(|&i| got[i] != pattern(i)).collect();
            let (Some(&first), Some(&last)) = (changed.first(), changed.last()) else {
                continue;
            };
            // Offsets from the buffer's first byte.
            let at = |i: usize| match side {
                GuardSide::Before => i as i64 - band.guard as i64,
                GuardSide::After => (band.bytes + i) as i64,
            };
            let (nearest, farthest) = match side {
                GuardSide::Before => (at(last), at(first)),
                GuardSide::After => (at(first), at(last)),
            };
            out.push(GuardViolation {
                buffer: name.to_string(),
                bytes: band.bytes,
                side,
                changed: changed.len(),
                nearest,
                farthest,
                found,
            });
        }
        if !out.is_empty() {
            VIOLATIONS.fetch_add(out.len(), Ordering::SeqCst);
            self.arm(band)?;
        }
        Ok(out)
    }

    /// Records that the guarded buffer `raw` (a sub-buffer of `band`) is alive, named `name`.
    pub(crate) fn register(&self, raw: usize, name: &str, band: Arc<Band>) {
        lock(&self.live).insert(raw, (name.to_string(), band));
    }

    /// The guarded buffer `raw` is dropped: checks its guards (a touched one is printed,
    /// counted and kept for `check_guards`).
    pub(crate) fn release(&self, raw: usize, band: &Band) {
        let name = lock(&self.live)
            .remove(&raw)
            .map_or_else(|| "(unnamed)".to_string(), |(n, _)| n);
        match self.check(&name, band, "on drop") {
            Ok(v) if v.is_empty() => {}
            Ok(v) => {
                // Straight to stderr, past the test harness's capture of `eprintln!`: a touched
                // guard shows even in a test that passes.
                let mut err = std::io::stderr().lock();
                for x in &v {
                    let _ = writeln!(err, "parac: {x}");
                }
                lock(&self.found).extend(v);
            }
            Err(c) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "parac: the guards of device buffer `{name}` could not be read back ({})",
                    super::error_name(c)
                );
            }
        }
    }
}

impl Guards {
    /// Turns guard bands on or off for buffers allocated from now on.
    pub(super) fn set_on(&self, on: bool) {
        self.on.store(on, Ordering::Relaxed);
    }

    /// The size in bytes of each guard region.
    pub(super) fn size(&self) -> usize {
        self.size
    }

    /// Every touched guard region: those found when buffers were dropped since the last call,
    /// then those of the guarded buffers alive now (read back after every command enqueued so
    /// far). Each touch is reported once (a reported guard is filled with the pattern again).
    pub(super) fn violations(&self) -> Result<Vec<GuardViolation>, Error> {
        let mut out = std::mem::take(&mut *lock(&self.found));
        let live: Vec<(String, Arc<Band>)> = lock(&self.live).values().cloned().collect();
        for (name, band) in live {
            let v = self.check(&name, &band, "on check").map_err(|c| {
                cl_error(
                    format!("clEnqueueReadBuffer(guards of {name})"),
                    c,
                    "reading a guard band back",
                )
            })?;
            out.extend(v);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_sizes_align() {
        assert_eq!(guard_size(1024), 4096);
        assert_eq!(guard_size(0), 4096);
        assert_eq!(guard_size(8 * 3000), 6000);
        assert_eq!(guard_size(8 * 8192), 8192);
        for bits in [8, 64, 1024, 4096 * 8, 24 * 8] {
            let s = guard_size(bits);
            assert!(
                s >= MIN_GUARD && s.is_multiple_of(bits as usize / 8),
                "{bits}: {s}"
            );
        }
    }

    #[test]
    fn pattern_is_never_blank() {
        assert!((0..100_000).all(|i| pattern(i) != 0 && pattern(i) != 0xFF));
        // A guard shifted by a few bytes does not match itself.
        for s in 1..8 {
            assert!((0..64).any(|i| pattern(i) != pattern(i + s)), "shift {s}");
        }
    }

    use super::super::Device;
    use super::super::{Arg, Buffer, MemArg};
    use crate::{Matrix, Runtime};

    /// An OpenCL device with guard bands on and no disk cache, or `None` (skipped; a failure
    /// with `PARAC_REQUIRE_OPENCL=1`).
    fn guarded() -> Option<Runtime> {
        let spec = std::env::var("PARAC_DEVICE")
            .ok()
            .filter(|s| s.trim().to_ascii_lowercase().starts_with("opencl"))
            .unwrap_or_else(|| "opencl".to_string());
        match Runtime::from_spec(&spec) {
            Ok(rt) if rt.device().is_some() => {
                let d = rt.device().unwrap();
                d.set_program_cache_dir(None);
                d.set_guard_bands(true);
                Some(rt)
            }
            other => {
                let required = std::env::var("PARAC_REQUIRE_OPENCL").is_ok_and(|v| v == "1");
                assert!(
                    !required,
                    "PARAC_REQUIRE_OPENCL=1, but no OpenCL: {other:?}"
                );
                println!("skipped: no OpenCL");
                None
            }
        }
    }

    /// Writes byte `v` at byte offset `i` from the start of `b`, in a kernel: a raw out-of-
    /// bounds write for a negative `i` or one past the buffer.
    fn poke(d: &Device, b: &Buffer<u8>, i: i32, v: i32) {
        let p = d
            .program(
                "guard_poke",
                "__kernel void poke(__global uchar *p, int i, int v) { p[i] = (uchar)v; }",
                "",
            )
            .expect("builds");
        d.launch(
            &p,
            "poke",
            &[1],
            None,
            &[Arg::Mem(b), Arg::I32(i), Arg::I32(v)],
        )
        .expect("launches");
    }

    fn bytes_of(b: &Buffer<u8>) -> usize {
        b.rows().max(1) * b.pitch()
    }

    #[test]
    fn a_kernel_writing_past_a_buffer_is_caught() {
        let Some(rt) = guarded() else { return };
        let d = rt.device().unwrap();
        let b = d.alloc::<u8>("victim", &[3, 5]).expect("alloc");
        let n = bytes_of(&b);
        assert_eq!(
            d.guards.live.lock().unwrap()[&(b.raw_mem() as usize)]
                .1
                .bytes,
            n
        );
        // Inside (the last padding byte): no violation.
        poke(d, &b, n as i32 - 1, 1);
        d.check_guards().expect("inside the buffer");
        // One byte past the end.
        poke(d, &b, n as i32, 0);
        let e = d.check_guards().expect_err("one past the end");
        match &e {
            Error::GuardBand { buffer, violations } => {
                assert_eq!(buffer, "victim");
                assert_eq!(violations.len(), 1, "{violations:?}");
                let v = &violations[0];
                assert_eq!(
                    (v.side, v.changed, v.nearest, v.farthest),
                    (GuardSide::After, 1, n as i64, n as i64)
                );
                assert_eq!(v.found, "on check");
            }
            e => panic!("{e:?}"),
        }
        assert!(e.to_string().contains("`victim`"), "{e}");
        // Reported once: the guard is armed again.
        d.check_guards().expect("re-armed");
        // Before the start, far out.
        poke(d, &b, -1, 0);
        poke(d, &b, -300, 0);
        let v = d.guard_violations().unwrap();
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(
            (v[0].side, v[0].changed, v[0].nearest, v[0].farthest),
            (GuardSide::Before, 2, -1, -300)
        );
    }

    #[test]
    fn a_write_into_the_parent_is_caught_on_drop() {
        let Some(rt) = guarded() else { return };
        let d = rt.device().unwrap();
        let before = guard_violations();
        let b = d.alloc_uninit::<u8>("dropped", &[100]).expect("alloc");
        let s = d.scalar(0i64).expect("scalar");
        let n = bytes_of(&b);
        let band = d.guards.live.lock().unwrap()[&(b.raw_mem() as usize)]
            .1
            .clone();
        // An enqueued write at an offset into the parent: the third byte of the trailing guard.
        let mut parent = ManuallyDrop::new(ClBuffer::<u8>::new(band.parent.get()));
        // SAFETY: one byte inside the parent; the write blocks.
        unsafe {
            d.queue
                .enqueue_write_buffer(&mut parent, CL_BLOCKING, band.guard + n + 2, &[7u8], &[])
        }
        .expect("writes");
        drop(band);
        drop(b);
        assert!(guard_violations() > before);
        // The scalar, alive and untouched, is checked too.
        let scalars = d
            .guards
            .live
            .lock()
            .unwrap()
            .values()
            .filter(|(n, _)| n == "scalar of long")
            .count();
        assert_eq!(scalars, 1);
        match d.check_guards() {
            Err(Error::GuardBand { buffer, violations }) => {
                assert_eq!(buffer, "dropped");
                assert_eq!(violations.len(), 1);
                assert_eq!(violations[0].found, "on drop");
                assert_eq!(violations[0].nearest, n as i64 + 2);
            }
            other => panic!("{other:?}"),
        }
        d.check_guards().expect("reported once");
        assert_eq!(d.read_scalar(&s).unwrap(), 0);
    }

    #[test]
    fn guarded_buffers_work_as_usual() {
        let Some(rt) = guarded() else { return };
        let d = rt.device().unwrap();
        let m = Matrix::from_fn([5, 7], |i| (i[0] * 7 + i[1]) as u16);
        let b = d.upload("m", &m).expect("upload");
        let mut back = Matrix::<u16>::zeros([5, 7]);
        d.download(&b, &mut back).expect("download");
        assert_eq!(back.as_slice(), m.as_slice());
        let z = d.alloc::<f32>("z", &[3, 3, 3]).expect("alloc");
        let mut zb = Matrix::<f32>::from_vec([3, 3, 3], vec![1.0; 27]).unwrap();
        d.download(&z, &mut zb).expect("download");
        assert!(zb.as_slice().iter().all(|x| *x == 0.0));
        d.check_guards().expect("untouched");
        // A dropped guarded buffer's memory is reused, guards and all, by a guarded buffer of
        // the same size; an unguarded one gets other memory.
        let raw = b.raw_mem();
        drop(b);
        let again = d.alloc::<u16>("again", &[5, 7]).expect("alloc");
        assert_eq!(again.raw_mem(), raw);
        assert!(d.guards.live.lock().unwrap().contains_key(&(raw as usize)));
        drop(again);
        d.set_guard_bands(false);
        let plain = d.alloc::<u16>("plain", &[5, 7]).expect("alloc");
        assert_ne!(plain.raw_mem(), raw);
        assert!(
            !d.guards
                .live
                .lock()
                .unwrap()
                .contains_key(&(plain.raw_mem() as usize))
        );
        d.set_guard_bands(true);
        d.check_guards().expect("untouched");
    }
}
