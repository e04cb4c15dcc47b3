//! Device views of the host matrices a pipeline call takes ([`Input`], [`Output`]): on a device
//! whose memory is the host's (PoCL on a CPU, an integrated GPU) the kernels read the caller's
//! input and write the caller's output in place, with the host's unpadded rows, so a call moves
//! no data at all; elsewhere a view is a device copy with padded rows, made by
//! [`Device::upload`] and given back by [`Output::finish`].
//!
//! A view borrows the host matrix for its lifetime, and one that is in place waits for the
//! device's queue when dropped: no command can touch the host memory once the borrow ends, even
//! when a launch failed half-way. That rests on the view being dropped, and on no kernel
//! writing an input, which no type can enforce: `Device::input` and `Device::output` are
//! `unsafe`, and the code `parac!` emits is their one intended caller.

use std::marker::PhantomData;
use std::ops::Deref;

use opencl3::memory::CL_MAP_READ;

use super::buffer::sealed;
use super::{Buffer, Device, MemArg, RawMem};
use crate::layout::{checked, checked_mut, layout_error};
use crate::{Element, Error, MatrixMut, MatrixRef, Strided, StridedMut};

/// A pipeline input on the device: the host matrix itself where the device can read it in
/// place, else a device copy. Dereferences to the [`Buffer`].
pub struct Input<'a, T: Element> {
    buf: Buffer<T>,
    /// The device, where the buffer is the host's memory (it then waits for it when dropped).
    in_place: Option<&'a Device>,
    _host: PhantomData<&'a [T]>,
}

/// A pipeline output on the device: the host matrix itself where the device can write it in
/// place, else a device buffer that [`finish`](Output::finish) copies back. Dereferences to the
/// [`Buffer`].
pub struct Output<'a, T: Element> {
    buf: Buffer<T>,
    dev: &'a Device,
    in_place: bool,
    /// The host elements, borrowed mutably for `'a`.
    host: StridedMut<'a, T>,
}

impl Device {
    /// Whether host elements laid out as `host` may be handed to the kernels in place: where
    /// the device's memory is the host's and the buffer over them would cover only memory that
    /// the matrix owns (a slice from its first element to its last, gaps included), or, for a
    /// matrix whose gaps may belong to someone else (an `ndarray` slice of a larger array), on
    /// PoCL's CPU devices only. A `CL_MEM_USE_HOST_PTR` buffer spans the gaps, and OpenCL lets a
    /// driver cache such a buffer in device memory and copy the whole range back and forth
    /// (at creation, launches, maps): bytes the matrix does not own, which another thread may
    /// be writing. PoCL's CPU devices do not: their buffer over host memory is that memory
    /// (its common driver's `alloc_mem_obj` makes the host pointer the device pointer, and its
    /// map and unmap copy nothing when the two coincide), and their kernels are host code that
    /// touches only the elements they index (every access is inside a row:
    /// `row * pitch + column`, `column < cols`). So such a matrix is used in place on PoCL's CPU
    /// devices only, the drivers whose behaviour was read; elsewhere it is copied: one
    /// rectangle copy each way, which touches only its rows.
    fn in_place_for<T>(&self, host: &Strided<'_, T>) -> bool {
        let info = self.info();
        let pocl_cpu = info.is_cpu && info.platform.contains("Portable Computing Language");
        self.host_memory() && (host.owns_gaps() || pocl_cpu)
    }

    /// The device view of input matrix `m` (`name` is for messages): in place (the host's
    /// rows, with their pitch) where the device's memory is the host's and the kernels'
    /// indexing fits `m`'s layout (see [`MatrixRef::elements`] for a matrix whose gaps are not
    /// its own), else [`upload`](Device::upload) (one copy, a rectangle copy where `m` is
    /// pitched). `Error::Layout` if `m`'s layout does not fit its elements.
    ///
    /// # Safety
    /// In place, kernels read the caller's memory while they run, after this returns. The
    /// caller must drop the view (not leak it with `mem::forget`), so that its drop waits for
    /// the queue before the borrow of `m` ends, and must not pass it to a kernel that writes it
    /// (`CL_MEM_READ_ONLY` is not enforced everywhere; `m` is borrowed shared). The code
    /// `parac!` emits does both.
    pub unsafe fn input<'a, T: Element, M: MatrixRef<T> + ?Sized>(
        &'a self,
        name: &'static str,
        m: &'a M,
    ) -> Result<Input<'a, T>, Error> {
        let host = checked(m).map_err(layout_error(name))?;
        let ptr = host.as_ptr().cast_mut();
        let in_place = if self.in_place_for(&host) {
            // SAFETY: `host` addresses the `span` elements of its shape laid out as its pitch
            // (checked) and is borrowed for `'a`, which the `Input` holding the buffer does not
            // outlive; its drop waits for the queue. The buffer is read-only and `Input` hands
            // out only `&Buffer`, which no transfer writes. Its range covers memory between the
            // rows that `m` may not own only on PoCL's CPU devices (`in_place_for`), whose
            // kernels read only the elements.
            unsafe { self.host_buffer(name, host.shape(), host.pitch(), host.span(), ptr, false) }
        } else {
            None
        };
        Ok(match in_place {
            Some(buf) => Input {
                buf,
                in_place: Some(self),
                _host: PhantomData,
            },
            // A contiguous matrix is copied into rows without padding: one plain transfer
            // (rectangle copies are slow on some drivers; the kernels take the pitch).
            None => Input {
                buf: {
                    let padded = !host.pitch().is_contiguous(host.shape());
                    self.upload_strided_as(name, host, padded)?
                },
                in_place: None,
                _host: PhantomData,
            },
        })
    }

    /// The device view of output matrix `m`, which must have `shape`: in place (rows unpadded)
    /// where the device's memory is the host's (as for [`input`](Device::input)), else a device
    /// buffer. Unless `whole` (the kernels write every element before reading any), its elements
    /// start as the caller's (copied in where the buffer is the device's own), so that what the
    /// kernels do not write stays as it was, as on the CPU path. Call [`Output::finish`] when the
    /// kernels are enqueued. If a launch fails, an in-place output may be left partly written (a
    /// copied one untouched). Only `m`'s elements are written, never the memory between its rows.
    ///
    /// # Safety
    /// In place, kernels write the caller's memory while they run, after this returns. The
    /// caller must drop the view (or `finish` it), not leak it with `mem::forget`, so that the
    /// queue is waited for before the borrow of `m` ends. The code `parac!` emits does.
    pub unsafe fn output<'a, T: Element, M: MatrixMut<T> + ?Sized>(
        &'a self,
        name: &'static str,
        m: &'a mut M,
        shape: &[usize],
        whole: bool,
    ) -> Result<Output<'a, T>, Error> {
        // SAFETY: the caller's contract.
        unsafe { self.output_as(name, m, shape, whole, true) }
    }

    /// [`output`](Device::output), in place only where `shared` allows it (else always a
    /// buffer of the device's own, read back by `finish`): the executor's outputs that
    /// `parac_swap` names are copied into on the device, which PoCL does not do into the
    /// caller's memory.
    ///
    /// # Safety
    /// As for [`output`](Device::output).
    pub(crate) unsafe fn output_as<'a, T: Element, M: MatrixMut<T> + ?Sized>(
        &'a self,
        name: &'static str,
        m: &'a mut M,
        shape: &[usize],
        whole: bool,
        shared: bool,
    ) -> Result<Output<'a, T>, Error> {
        if m.shape() != shape {
            return Err(Error::Shape {
                function: "opencl::Device::output",
                matrix: name,
                declared: "the shape the pipeline computed",
                expected: shape.to_vec(),
                got: m.shape().to_vec(),
            });
        }
        let mut host = checked_mut(m).map_err(layout_error(name))?;
        let in_place = shared && self.in_place_for(&host.as_strided());
        let (pitch, span, ptr) = (host.pitch(), host.span(), host.as_mut_ptr());
        let in_place = if in_place {
            // SAFETY: `host` addresses the `span` elements of `shape` laid out as `pitch`
            // (checked) and is borrowed mutably for `'a`; the host touches them only through
            // `Output`, after `finish` mapped the buffer, and the drop waits for the queue. The
            // buffer's range covers memory between the rows that `m` may not own only on PoCL's
            // CPU devices (`in_place_for`), whose kernels write only the elements.
            unsafe { self.host_buffer(name, shape, pitch, span, ptr, true) }
        } else {
            None
        };
        // A contiguous matrix's copy has rows without padding: one plain read back.
        let padded = !pitch.is_contiguous(shape);
        let (buf, in_place) = match in_place {
            Some(buf) => (buf, true),
            None if whole => (self.create_buffer_as(name, shape, padded)?, false),
            // The elements the kernels do not write keep the caller's values: its matrix is
            // copied in.
            None => (
                self.upload_strided_as(name, host.as_strided(), padded)?,
                false,
            ),
        };
        Ok(Output {
            buf,
            dev: self,
            in_place,
            host,
        })
    }
}

impl<T: Element> Input<'_, T> {
    /// Whether the kernels read the host matrix itself (no copy was made).
    pub fn in_place(&self) -> bool {
        self.in_place.is_some()
    }
}

impl<T: Element> Output<'_, T> {
    /// Whether the kernels write the host matrix itself (nothing is copied back).
    pub fn in_place(&self) -> bool {
        self.in_place
    }

    /// Makes the result visible in the host matrix, blocking until the kernels are done: a map
    /// and unmap of the buffer where it is the host's memory, else a copy of its rows.
    pub fn finish(mut self) -> Result<(), Error> {
        if self.in_place {
            let Some(p) = self.dev.map(&self.buf, CL_MAP_READ) else {
                return Err(super::cl_error(
                    format!("clEnqueueMapBuffer({})", self.buf.name()),
                    super::code::MAP_FAILURE,
                    "mapping an output that the device holds in host memory",
                ));
            };
            self.dev.unmap(&self.buf, p)?;
            self.dev.finish()
        } else {
            let host = self.host.reborrow();
            self.dev.read_rows(&self.buf, host)
        }
    }
}

impl<T: Element> Drop for Input<'_, T> {
    fn drop(&mut self) {
        if let Some(dev) = self.in_place {
            // Nothing may read the host matrix after the borrow ends; an error here is the
            // launch's, which the caller has already seen.
            let _ = dev.finish();
        }
    }
}

impl<T: Element> Drop for Output<'_, T> {
    fn drop(&mut self) {
        if self.in_place {
            let _ = self.dev.finish();
        }
    }
}

/// `Deref` to the buffer, and the kernel-argument trait through it, for each view type.
macro_rules! view_of_buffer {
    ($($view:ident),*) => {$(
        impl<T: Element> Deref for $view<'_, T> {
            type Target = Buffer<T>;
            fn deref(&self) -> &Buffer<T> {
                &self.buf
            }
        }

        impl<T: Element> sealed::Sealed for $view<'_, T> {}

        impl<T: Element> MemArg for $view<'_, T> {
            fn raw_mem(&self) -> RawMem {
                self.buf.raw_mem()
            }
            fn context_id(&self) -> usize {
                self.buf.context_id()
            }
            fn label(&self) -> String {
                self.buf.label()
            }
        }
    )*};
}

view_of_buffer!(Input, Output);
