//! The copies the search times an in-place candidate on: a split band (`Candidate::then`)
//! reads what it writes, so timing it on the call's own buffers would run its time steps on
//! them, again at every sample. It is timed on device copies of every memory argument instead
//! (the grids, the error flag), made once per timing and dropped after it.

use std::ptr;

use opencl3::memory::{CL_MEM_SIZE, get_mem_object_info};
use opencl3::types::CL_BLOCKING;

use super::super::buffer::{Buffer, MemArg};
use super::super::device::Device;
use super::super::launch::Arg;
use crate::Error;
use crate::opencl::cl_error;

impl Device {
    /// A device copy of every memory argument of `args`, in their order (contents included).
    pub(super) fn copies_of(&self, args: &[Arg<'_>]) -> Result<Vec<Buffer<u8>>, Error> {
        let mut out = Vec::new();
        for a in args {
            let Arg::Mem(m) = a else { continue };
            let bytes: usize = get_mem_object_info(m.raw_mem(), CL_MEM_SIZE)
                .map_err(|e| cl_error(format!("clGetMemObjectInfo({})", m.label()), e, ""))?
                .into();
            let copy = self.alloc_uninit::<u8>("search copy", &[bytes])?;
            let label = || m.label();
            // SAFETY: both memories hold `bytes` bytes (the copy at least: its row is padded);
            // the copy is enqueued on the in-order queue after the commands that wrote `m`.
            // With guard bands (sub-buffers, which PoCL fails to copy between), through the
            // host, each transfer blocking so that `host` outlives it.
            let event = unsafe {
                if self.guards.on() {
                    let mut host = vec![0u8; bytes];
                    let e = opencl3::command_queue::enqueue_read_buffer(
                        self.queue.get(),
                        m.raw_mem(),
                        CL_BLOCKING,
                        0,
                        bytes,
                        host.as_mut_ptr().cast(),
                        0,
                        ptr::null(),
                    )
                    .map_err(|e| cl_error(format!("clEnqueueReadBuffer({})", label()), e, ""))?;
                    drop(opencl3::event::Event::new(e));
                    opencl3::command_queue::enqueue_write_buffer(
                        self.queue.get(),
                        copy.raw_mem(),
                        CL_BLOCKING,
                        0,
                        bytes,
                        host.as_ptr().cast(),
                        0,
                        ptr::null(),
                    )
                } else {
                    opencl3::command_queue::enqueue_copy_buffer(
                        self.queue.get(),
                        m.raw_mem(),
                        copy.raw_mem(),
                        0,
                        0,
                        bytes,
                        0,
                        ptr::null(),
                    )
                }
            }
            .map_err(|e| cl_error(format!("copying {} for the search", label()), e, ""))?;
            drop(opencl3::event::Event::new(event));
            out.push(copy);
        }
        Ok(out)
    }
}

/// `args` with each memory argument replaced by its copy (`copies`, in order).
pub(super) fn with_copies<'a>(args: &[Arg<'a>], copies: &'a [Buffer<u8>]) -> Vec<Arg<'a>> {
    let mut next = copies.iter();
    args.iter()
        .map(|a| match a {
            Arg::Mem(_) => next.next().map_or(*a, Arg::from),
            _ => *a,
        })
        .collect()
}
