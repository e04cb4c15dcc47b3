//! Error flags of calls that did not wait for their kernels (a call whose matrices all stay on
//! the device: `DeviceMatrix`): each such call leaves its flag buffer here, with what turns a
//! raised flag into its error, and the next point where the host waits on the device reads
//! them, oldest first ([`Device::check_pending`]): a download, a call that reads a result, a
//! call with host matrices, `Runtime::finish`. The first raised flag is that wait's error; the
//! flags of later calls stay for the next wait, so no error is lost. A device holds at most
//! [`MAX_PENDING`] of them: the call past it waits for the oldest ones.

use std::sync::{Mutex, PoisonError};

use super::{Buffer, Device};
use crate::{Error, Matrix};

/// Calls in flight without a wait, per device, before one waits.
pub(crate) const MAX_PENDING: usize = 256;

/// Turns a raised flag (its words) into the call's error.
pub(crate) type Decode = Box<dyn Fn(&[i32]) -> Error + Send>;

/// One call's flag buffer and its decoder.
pub(crate) struct Pending {
    flag: Buffer<i32>,
    decode: Decode,
}

/// The flags of a device's calls that have not been read yet, oldest first.
#[derive(Default)]
pub(crate) struct Flags(Mutex<Vec<Pending>>);

impl Flags {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Pending>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Device {
    /// Leaves the flag of a call that returned without waiting for its kernels, to be read at
    /// the next wait. Past [`MAX_PENDING`] flags, reads them now (the call waits).
    pub(crate) fn defer_check(&self, flag: Buffer<i32>, decode: Decode) -> Result<(), Error> {
        let full = {
            let mut p = self.pending.lock();
            p.push(Pending { flag, decode });
            p.len() >= MAX_PENDING
        };
        if full { self.check_pending() } else { Ok(()) }
    }

    /// Reads the flags of the calls that did not wait, oldest first (a blocking read: it waits
    /// for their kernels): the first raised is the error returned, and it and the flags before
    /// it are forgotten; the later ones stay for the next check.
    pub(crate) fn check_pending(&self) -> Result<(), Error> {
        let mut p = self.pending.lock();
        for i in 0..p.len() {
            // A failed read (the device lost) is that call's error: each error takes its flag
            // with it, so checks until `Ok` end.
            if let Err(e) = self.check_flag(&p[i].flag, &p[i].decode) {
                p.drain(..=i);
                return Err(e);
            }
        }
        p.clear();
        Ok(())
    }

    /// Reads a call's error flag (blocking: it waits for the call's kernels): `decode`'s error
    /// where it is raised.
    pub(crate) fn check_flag(
        &self,
        flag: &Buffer<i32>,
        decode: impl Fn(&[i32]) -> Error,
    ) -> Result<(), Error> {
        let mut words = Matrix::<i32>::zeros([8usize]);
        self.download(flag, &mut words)?;
        match words.as_slice() {
            w if w[0] != 0 => Err(decode(w)),
            _ => Ok(()),
        }
    }

    /// Whether calls' flags are waiting to be read.
    pub(crate) fn has_pending(&self) -> bool {
        !self.pending.lock().is_empty()
    }

    /// Drops the flags left (the device is going: their buffers go before its queue and
    /// context).
    pub(crate) fn forget_pending(&self) {
        self.pending.lock().clear();
    }
}
