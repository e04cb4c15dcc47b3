//! What crosses between the host and a device, counted per thread ([`transfers`]), and a
//! switch that makes a host-memory device behave as a discrete one on this thread
//! ([`copying`]): no in-place views, no mapped transfers, only the copies a discrete device
//! makes. Tests use both to prove which path a call took (no copy in place; one copy of each
//! matrix each way, a rectangle copy where rows are pitched, on the copying path).

use std::cell::Cell;

/// Transfers of matrix data made by this thread since it started (see [`transfers`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Transfers {
    /// Host-to-device copies (plain, rectangle or through a mapping).
    pub to_device: usize,
    /// Device-to-host copies.
    pub to_host: usize,
    /// Of `to_device`, the `clEnqueueWriteBufferRect`s.
    pub rect_to_device: usize,
    /// Of `to_host`, the `clEnqueueReadBufferRect`s.
    pub rect_to_host: usize,
    /// Bytes copied to devices.
    pub bytes_to_device: usize,
    /// Bytes copied to the host.
    pub bytes_to_host: usize,
}

impl Transfers {
    /// The transfers made between `earlier` and `self`.
    pub fn since(self, earlier: Transfers) -> Transfers {
        Transfers {
            to_device: self.to_device - earlier.to_device,
            to_host: self.to_host - earlier.to_host,
            rect_to_device: self.rect_to_device - earlier.rect_to_device,
            rect_to_host: self.rect_to_host - earlier.rect_to_host,
            bytes_to_device: self.bytes_to_device - earlier.bytes_to_device,
            bytes_to_host: self.bytes_to_host - earlier.bytes_to_host,
        }
    }
}

thread_local! {
    static COUNTS: Cell<Transfers> = const { Cell::new(Transfers {
        to_device: 0, to_host: 0, rect_to_device: 0, rect_to_host: 0, bytes_to_device: 0,
        bytes_to_host: 0,
    }) };
    static COPYING: Cell<bool> = const { Cell::new(false) };
}

/// The transfers this thread has made so far (take two readings and [`Transfers::since`]).
pub fn transfers() -> Transfers {
    COUNTS.with(Cell::get)
}

/// Runs `f` with every device treated as discrete on this thread: matrices are copied to and
/// from device buffers with padded rows (one copy each way, a rectangle copy with the host's
/// pitch), never read in place or through a mapping. For tests and measurements of the copying
/// path on a host-memory device.
pub fn copying<R>(f: impl FnOnce() -> R) -> R {
    let before = COPYING.with(|c| c.replace(true));
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            COPYING.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(before);
    f()
}

/// Whether [`copying`] is in force on this thread.
pub(super) fn forced_copies() -> bool {
    COPYING.with(Cell::get)
}

/// Counts one transfer.
pub(super) fn count(to_device: bool, rect: bool, bytes: usize) {
    COUNTS.with(|c| {
        let mut t = c.get();
        if to_device {
            t.to_device += 1;
            t.rect_to_device += rect as usize;
            t.bytes_to_device += bytes;
        } else {
            t.to_host += 1;
            t.rect_to_host += rect as usize;
            t.bytes_to_host += bytes;
        }
        c.set(t);
    });
}
