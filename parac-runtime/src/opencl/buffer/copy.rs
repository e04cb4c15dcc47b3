//! The transfers of [`Buffer`]s and [`Scalar`]s: host matrices uploaded and written into
//! buffers, buffers downloaded, rows read and written plain, as rectangles or through a mapping
//! (on a device whose memory is the host's), regions copied between buffers on the device, and
//! scalars written and read back. What they count is in `transfer.rs`.

use std::ffi::c_void;
use std::mem::size_of;
use std::ptr;

use opencl3::memory::{CL_MAP_READ, CL_MAP_WRITE_INVALIDATE_REGION, ClMem};
use opencl3::types::{CL_BLOCKING, cl_map_flags};

use super::{Buffer, Pod, Scalar};
use crate::layout::{checked, checked_mut, dims, layout_error};
use crate::opencl::device::Device;
use crate::opencl::transfer;
use crate::opencl::{RawMem, cl_error};
use crate::{Element, Error, LayoutError, MatrixMut, MatrixRef, Pitch, Strided, StridedMut};

/// Checks that host elements (a [`Strided`]/[`StridedMut`], whose layout was checked against
/// its shape and whose pointer addresses every element of it by its constructor's contract)
/// have the shape of `b`: the plain and rectangle transfers pass the host pointer to OpenCL and
/// rely on it, so it is checked where they are, not only by their callers.
fn holds<T>(b: &Buffer<T>, host: &[usize]) -> Result<(), Error> {
    if b.shape == host {
        Ok(())
    } else {
        Err(Error::Layout {
            matrix: "host data",
            source: LayoutError::Shape {
                shape: b.shape.clone(),
                elements: host.to_vec(),
            },
        })
    }
}

/// A rectangle transfer of a whole buffer: its rows, plane by plane, between the buffer's
/// padded rows and the host's layout (row and slice pitches in bytes).
struct Rect {
    origin: [usize; 3],
    region: [usize; 3],
    buffer: [usize; 2],
    host: [usize; 2],
}

impl Rect {
    fn of<T>(b: &Buffer<T>, hp: Pitch) -> Rect {
        let n = b.shape.len();
        let (cols, elem) = (b.shape[n - 1], size_of::<T>());
        let rows = if n >= 2 { b.shape[n - 2] } else { 1 };
        let planes = if n >= 3 { b.shape[0] } else { 1 };
        // A slice pitch of 0 lets OpenCL take `rows * row pitch` (one plane).
        let slice = |p: usize| if planes > 1 { p * elem } else { 0 };
        Rect {
            origin: [0; 3],
            region: [cols * elem, rows, planes],
            buffer: [b.pitch * elem, slice(rows * b.pitch)],
            host: [hp.row * elem, slice(hp.plane)],
        }
    }
}

fn shape_error(expected: &[usize], got: &[usize]) -> Error {
    Error::Shape {
        function: "opencl::Device::download",
        matrix: "into",
        declared: "the device buffer's shape",
        expected: expected.to_vec(),
        got: got.to_vec(),
    }
}

impl Device {
    /// A device copy of `m`: [`alloc`](Device::alloc) and a blocking write of the rows (so `m`
    /// may change as soon as this returns). Padding elements are zero. A matrix with rows
    /// apart (a region of interest, an `ndarray` slice) is one rectangle write with its pitch,
    /// which reads only its rows.
    pub fn upload<T: Element, M: MatrixRef<T> + ?Sized>(
        &self,
        name: &str,
        m: &M,
    ) -> Result<Buffer<T>, Error> {
        let host = checked(m).map_err(layout_error("m"))?;
        self.upload_strided(name, host)
    }

    /// [`upload`](Device::upload) of checked host elements.
    pub(in crate::opencl) fn upload_strided<T: Element>(
        &self,
        name: &str,
        host: Strided<'_, T>,
    ) -> Result<Buffer<T>, Error> {
        self.upload_strided_as(name, host, true)
    }

    /// As [`upload_strided`](Self::upload_strided), into a buffer with padded rows or not.
    pub(in crate::opencl) fn upload_strided_as<T: Element>(
        &self,
        name: &str,
        host: Strided<'_, T>,
        padded: bool,
    ) -> Result<Buffer<T>, Error> {
        let mut b = self.create_buffer_as(name, host.shape(), padded)?;
        if host.shape().contains(&0) {
            self.zero(&mut b)?;
        } else {
            self.fill_rows(&mut b, host)?;
        }
        Ok(b)
    }

    /// Overwrites an existing buffer with `m` (blocking: `m` may change as soon as this returns),
    /// which must have the buffer's shape. Padding elements are zero afterwards.
    pub fn write<T: Element, M: MatrixRef<T> + ?Sized>(
        &self,
        b: &mut Buffer<T>,
        m: &M,
    ) -> Result<(), Error> {
        if b.shape() != m.shape() {
            return Err(Error::Shape {
                function: "opencl::Device::write",
                matrix: "m",
                declared: "the device buffer's shape",
                expected: b.shape.clone(),
                got: m.shape().to_vec(),
            });
        }
        if m.shape().contains(&0) {
            return Ok(());
        }
        let host = checked(m).map_err(layout_error("m"))?;
        self.fill_rows(b, host)
    }

    /// Writes host rows (the buffer's shape, at least one element) into the buffer and zeros
    /// into its padding: through a mapping where the device's memory is the host's, else a
    /// zero fill of a padded buffer (padding that `alloc_uninit` or a reused buffer left) and a
    /// write of the rows.
    fn fill_rows<T: Element>(&self, b: &mut Buffer<T>, host: Strided<'_, T>) -> Result<(), Error> {
        holds(b, host.shape())?;
        if self.write_mapped(b, host)? {
            return Ok(());
        }
        if b.pitch != b.shape[b.shape.len() - 1] {
            self.zero(b)?;
        }
        self.write_rows(b, host)
    }

    /// Copies the buffer's rows (without padding) into `into`, blocking: it waits for every
    /// command enqueued before it, launches included. `Error::Shape` if the shapes differ.
    /// Only `into`'s elements are written, never the memory between its rows.
    ///
    /// On a device whose memory is the host's ([`DeviceInfo::host_unified_memory`]) the rows
    /// are copied out of a mapping of the buffer: a kernel that another thread enqueues on this
    /// buffer while `download` runs may then run during the copy (elsewhere it waits for it).
    ///
    /// [`DeviceInfo::host_unified_memory`]: crate::opencl::DeviceInfo::host_unified_memory
    pub fn download<T: Element, M: MatrixMut<T> + ?Sized>(
        &self,
        b: &Buffer<T>,
        into: &mut M,
    ) -> Result<(), Error> {
        if b.shape() != into.shape() {
            return Err(shape_error(b.shape(), into.shape()));
        }
        let host = checked_mut(into).map_err(layout_error("into"))?;
        self.read_rows(b, host)
    }

    /// Copies the buffer's rows into the host elements (of the buffer's shape, checked),
    /// blocking: one plain read where both layouts are contiguous, else one rectangle read (or,
    /// on a host-memory device, a copy out of a mapping); either writes the rows' elements
    /// only.
    pub(in crate::opencl) fn read_rows<T: Element>(
        &self,
        b: &Buffer<T>,
        mut host: StridedMut<'_, T>,
    ) -> Result<(), Error> {
        holds(b, host.shape())?;
        if b.shape.contains(&0) {
            return Ok(());
        }
        let cols = b.shape[b.shape.len() - 1];
        let rows = b.rows();
        let elem = size_of::<T>();
        let op = || format!("clEnqueueReadBuffer({})", b.name);
        let hp = host.pitch();
        if (b.pitch == cols || rows == 1)
            && let Some(data) = host.contiguous_mut()
        {
            transfer::count(false, false, size_of_val(data));
            // SAFETY: `data` is `rows * cols` elements, within the buffer; the read blocks,
            // so `data` outlives it.
            return unsafe {
                self.queue
                    .enqueue_read_buffer(&b.mem, CL_BLOCKING, 0, data, &[])
            }
            .map(drop)
            .map_err(|e| cl_error(op(), e.0, ""));
        }
        if self.read_mapped(b, host.reborrow())? {
            Ok(())
        } else {
            let r = Rect::of(b, hp);
            transfer::count(false, true, rows * cols * elem);
            // SAFETY: the region is the buffer's rows of `cols` elements in both the buffer
            // (rows of `pitch`) and the host (laid out as `hp`, whose elements `host` borrows
            // mutably, checked against the shape); a rectangle read writes only the region's
            // bytes, never the host memory between its rows; the read blocks.
            unsafe {
                self.queue.enqueue_read_buffer_rect(
                    &b.mem,
                    CL_BLOCKING,
                    r.origin.as_ptr(),
                    r.origin.as_ptr(),
                    r.region.as_ptr(),
                    r.buffer[0],
                    r.buffer[1],
                    r.host[0],
                    r.host[1],
                    host.as_mut_ptr().cast::<c_void>(),
                    &[],
                )
            }
            .map(drop)
            .map_err(|e| cl_error(op().replace("Buffer(", "BufferRect("), e.0, ""))
        }
    }

    /// Maps the whole buffer for the host, blocking (the commands enqueued before it complete
    /// first). `None` where the device's memory is not the host's (a mapping may then be a
    /// copy) or the map fails; the caller then transfers with reads and writes.
    pub(in crate::opencl) fn map<T: Element>(
        &self,
        b: &Buffer<T>,
        flags: cl_map_flags,
    ) -> Option<*mut T> {
        if !self.host_memory() {
            return None;
        }
        // The whole buffer: `rows * pitch` elements, or less for an in-place view of a region
        // of interest, whose last row ends at its last column.
        let bytes = b.mem.bytes;
        let mut p: RawMem = ptr::null_mut();
        // SAFETY: the range is the whole buffer; the map blocks, so `p` is set when it returns.
        unsafe {
            self.queue
                .enqueue_map_buffer(&b.mem, CL_BLOCKING, flags, 0, bytes, &mut p, &[])
        }
        .ok()
        .filter(|_| !p.is_null())
        .map(|_| p.cast::<T>())
    }

    /// Ends the mapping `p` of `b` (enqueued: the commands enqueued after it see what the host
    /// wrote).
    pub(in crate::opencl) fn unmap<T: Element>(
        &self,
        b: &Buffer<T>,
        p: *mut T,
    ) -> Result<(), Error> {
        // SAFETY: `p` is a live mapping of `b` from `map`.
        unsafe {
            self.queue
                .enqueue_unmap_mem_object(b.mem.get(), p.cast::<c_void>(), &[])
        }
        .map(drop)
        .map_err(|e| cl_error(format!("clEnqueueUnmapMemObject({})", b.name), e.0, ""))
    }

    /// Writes host rows (at least one element) into the buffer's padded rows through a
    /// mapping, and zeros into the padding: one pass over the memory, where a write with rows
    /// of a different pitch needs a zero fill first. `Ok(false)` where the buffer cannot be
    /// mapped (nothing was written).
    fn write_mapped<T: Element>(
        &self,
        b: &mut Buffer<T>,
        host: Strided<'_, T>,
    ) -> Result<bool, Error> {
        let cols = b.shape[b.shape.len() - 1];
        let rows = b.rows();
        debug_assert!(rows * cols > 0 && host.shape() == b.shape);
        let Some(p) = self.map(b, CL_MAP_WRITE_INVALIDATE_REGION) else {
            return Ok(false);
        };
        transfer::count(true, false, rows * cols * size_of::<T>());
        let pitch = b.pitch;
        // SAFETY: the mapping holds `rows * pitch` elements (`rows >= 1` as the matrix is not
        // empty) that nothing else uses: the buffer is borrowed mutably, and the map waited for
        // the commands enqueued before. Each host row has `cols` elements (the buffer's shape,
        // checked), one row of the mapping each; the zero bit pattern is the value 0 of every
        // `Pod` type.
        unsafe {
            match host.contiguous() {
                Some(data) if pitch == cols => {
                    ptr::copy_nonoverlapping(data.as_ptr(), p, rows * cols);
                }
                _ => {
                    for (r, row) in host.rows().enumerate() {
                        let dst = p.add(r * pitch);
                        ptr::copy_nonoverlapping(row.as_ptr(), dst, cols);
                        ptr::write_bytes(dst.add(cols), 0, pitch - cols);
                    }
                }
            }
        }
        self.unmap(b, p)?;
        Ok(true)
    }

    /// Reads the buffer's rows into the host rows (at least one element) through a mapping.
    /// `Ok(false)` where the buffer cannot be mapped (nothing was read).
    fn read_mapped<T: Element>(
        &self,
        b: &Buffer<T>,
        mut host: StridedMut<'_, T>,
    ) -> Result<bool, Error> {
        let cols = b.shape[b.shape.len() - 1];
        let rows = b.rows();
        debug_assert!(rows * cols > 0 && host.shape() == b.shape);
        let Some(p) = self.map(b, CL_MAP_READ) else {
            return Ok(false);
        };
        transfer::count(false, false, rows * cols * size_of::<T>());
        let pitch = b.pitch;
        let mut r = 0;
        host.for_each_row(|row| {
            // SAFETY: the mapping holds the buffer's rows of `pitch` (the last one at least
            // `cols`), one for each host row of `cols` elements; every bit pattern is a value
            // of a `Pod` type. Only raw pointers read the mapping.
            unsafe { ptr::copy_nonoverlapping(p.add(r * pitch), row.as_mut_ptr(), cols) };
            r += 1;
        });
        self.unmap(b, p)?;
        Ok(true)
    }

    /// Writes host rows (of the buffer's shape, checked) into the buffer's padded rows,
    /// blocking: one plain write where both layouts are contiguous, else one rectangle write
    /// (which reads only the rows' elements, not the host memory between them); the padding is
    /// left as it is.
    fn write_rows<T: Element>(&self, b: &mut Buffer<T>, host: Strided<'_, T>) -> Result<(), Error> {
        if b.shape.contains(&0) {
            return Ok(());
        }
        let cols = b.shape[b.shape.len() - 1];
        let rows = b.rows();
        debug_assert!(host.shape() == b.shape);
        let elem = size_of::<T>();
        let name = b.name.clone();
        match host.contiguous() {
            Some(data) if b.pitch == cols || rows == 1 => {
                transfer::count(true, false, size_of_val(data));
                // SAFETY: `data` is `rows * cols` elements, within the buffer; the write
                // blocks.
                unsafe {
                    self.queue
                        .enqueue_write_buffer(&mut b.mem, CL_BLOCKING, 0, data, &[])
                }
                .map(drop)
                .map_err(|e| cl_error(format!("clEnqueueWriteBuffer({name})"), e.0, ""))
            }
            _ => {
                let r = Rect::of(b, host.pitch());
                transfer::count(true, true, rows * cols * elem);
                // SAFETY: as in `read_rows`; OpenCL only reads through the pointer, the rows'
                // elements (valid for reads: `host`).
                unsafe {
                    self.queue.enqueue_write_buffer_rect(
                        &mut b.mem,
                        CL_BLOCKING,
                        r.origin.as_ptr(),
                        r.origin.as_ptr(),
                        r.region.as_ptr(),
                        r.buffer[0],
                        r.buffer[1],
                        r.host[0],
                        r.host[1],
                        host.as_ptr().cast::<c_void>().cast_mut(),
                        &[],
                    )
                }
                .map(drop)
                .map_err(|e| cl_error(format!("clEnqueueWriteBufferRect({name})"), e.0, ""))
            }
        }
    }

    /// Copies the elements of `shape` (1 to 3 dimensions) at element `from_at` of `from` to
    /// element `to_at` of `to`, on the device (`clEnqueueCopyBufferRect`; nothing crosses to
    /// the host, nothing waits): each offset is `plane * rows * pitch + row * pitch + col` in
    /// its buffer's layout. The region must lie inside both buffers' elements (checked:
    /// `Error::Layout` otherwise); the buffers must differ (they are borrowed so).
    pub(crate) fn copy_region<T: Element>(
        &self,
        from: &Buffer<T>,
        from_at: usize,
        to: &mut Buffer<T>,
        to_at: usize,
        shape: &[usize],
    ) -> Result<(), Error> {
        if shape.contains(&0) {
            return Ok(());
        }
        let elem = size_of::<T>();
        let (planes, rows, cols) = match dims(shape) {
            Some(d) if (1..=3).contains(&shape.len()) => d,
            _ => return Err(layout_error("region")(LayoutError::Rank(shape.len()))),
        };
        // The origin of an offset in a buffer (bytes of its row, row, plane), checked to hold
        // the region.
        let origin = |b: &Buffer<T>, at: usize| -> Result<[usize; 3], Error> {
            let (b_planes, b_rows, b_cols) = dims(&b.shape).unwrap_or((0, 0, 0));
            let plane = b.layout().plane;
            let (p, r, c) = (at / plane, at % plane / b.pitch, at % b.pitch);
            if c + cols <= b_cols && r + rows <= b_rows && p + planes <= b_planes {
                Ok([c * elem, r, p])
            } else {
                Err(layout_error("region")(LayoutError::Outside {
                    row: r,
                    col: c,
                    rows,
                    cols,
                    shape: b.shape.clone(),
                }))
            }
        };
        let (src, dst) = (origin(from, from_at)?, origin(to, to_at)?);
        let region = [cols * elem, rows, planes];
        let bytes = |b: &Buffer<T>| (b.layout().row * elem, b.layout().plane * elem);
        let ((sr, ss), (dr, ds)) = (bytes(from), bytes(to));
        // SAFETY: both regions lie inside their buffers' elements (checked above); the copy is
        // enqueued on the in-order queue after the commands that write `from`.
        unsafe {
            self.queue.enqueue_copy_buffer_rect(
                &from.mem,
                &mut to.mem,
                src.as_ptr(),
                dst.as_ptr(),
                region.as_ptr(),
                sr,
                ss,
                dr,
                ds,
                &[],
            )
        }
        .map(drop)
        .map_err(|e| cl_error(format!("clEnqueueCopyBufferRect({})", to.name), e.0, ""))
    }

    /// Copies a whole matrix of `shape` and elements of `elem` bytes between two device
    /// matrices of that shape, each with its row pitch (in elements; planes are rows apart),
    /// on the device (`clEnqueueCopyBufferRect`: nothing waits). The executor's delivery of
    /// swapped outputs (`crate::swaps`): the two are matrices of one pipeline call, of its
    /// shape (the executor made them), and distinct.
    pub(crate) fn copy_matrix(
        &self,
        (from, from_pitch): (&dyn super::MemArg, usize),
        (to, to_pitch): (&dyn super::MemArg, usize),
        shape: &[usize],
        elem: usize,
    ) -> Result<(), Error> {
        if shape.contains(&0) {
            return Ok(());
        }
        let (planes, rows, cols) = match dims(shape) {
            Some(d) if (1..=3).contains(&shape.len()) => d,
            _ => return Err(layout_error("region")(LayoutError::Rank(shape.len()))),
        };
        let region = [cols * elem, rows, planes];
        let origin = [0usize; 3];
        let (fp, tp) = (from_pitch * elem, to_pitch * elem);
        let label = || to.label();
        let event = if self.guards.on() {
            // PoCL crashes copying rectangles between sub-buffers (guard bands, a test
            // setting): through the host, each way a blocking rectangle transfer.
            let mut host = vec![0u8; region.iter().product()];
            let (hr, hs) = (region[0], region[0] * rows);
            // SAFETY: `host` holds the region, dense; both memories hold `shape` (above);
            // both transfers block, so `host` outlives them.
            unsafe {
                let e = opencl3::command_queue::enqueue_read_buffer_rect(
                    self.queue.get(),
                    from.raw_mem(),
                    CL_BLOCKING,
                    origin.as_ptr(),
                    origin.as_ptr(),
                    region.as_ptr(),
                    fp,
                    rows * fp,
                    hr,
                    hs,
                    host.as_mut_ptr().cast(),
                    0,
                    ptr::null(),
                )
                .map_err(|e| cl_error(format!("clEnqueueReadBufferRect({})", label()), e, ""))?;
                drop(opencl3::event::Event::new(e));
                opencl3::command_queue::enqueue_write_buffer_rect(
                    self.queue.get(),
                    to.raw_mem(),
                    CL_BLOCKING,
                    origin.as_ptr(),
                    origin.as_ptr(),
                    region.as_ptr(),
                    tp,
                    rows * tp,
                    hr,
                    hs,
                    host.as_ptr().cast(),
                    0,
                    ptr::null(),
                )
            }
            .map_err(|e| cl_error(format!("clEnqueueWriteBufferRect({})", label()), e, ""))?
        } else {
            // SAFETY: both memories hold `shape` in their layouts (the executor allocated or
            // checked them against the call's shapes); the copy is enqueued on the in-order
            // queue after the commands that write `from`.
            unsafe {
                opencl3::command_queue::enqueue_copy_buffer_rect(
                    self.queue.get(),
                    from.raw_mem(),
                    to.raw_mem(),
                    origin.as_ptr(),
                    origin.as_ptr(),
                    region.as_ptr(),
                    fp,
                    rows * fp,
                    tp,
                    rows * tp,
                    0,
                    ptr::null(),
                )
            }
            .map_err(|e| cl_error(format!("clEnqueueCopyBufferRect({})", label()), e, ""))?
        };
        drop(opencl3::event::Event::new(event));
        Ok(())
    }

    /// A one-element device buffer holding `init` (0 for a sum, the identity of a min or max),
    /// for a reduction's result.
    pub fn scalar<T: Pod>(&self, init: T) -> Result<Scalar<T>, Error> {
        let mem = self
            .create_mem::<T>(1, size_of::<T>(), &format!("scalar of {}", T::CL_TYPE))
            .map_err(|e| cl_error("clCreateBuffer(scalar)", e, T::CL_TYPE))?;
        let mut s = Scalar {
            mem,
            context: self.context_id(),
        };
        // SAFETY: one element into a one-element buffer; the write blocks.
        unsafe {
            self.queue
                .enqueue_write_buffer(&mut s.mem, CL_BLOCKING, 0, &[init], &[])
        }
        .map_err(|e| cl_error("clEnqueueWriteBuffer(scalar)", e.0, T::CL_TYPE))?;
        Ok(s)
    }

    /// Reads a [`Scalar`] back, blocking until the commands enqueued before have completed.
    pub fn read_scalar<T: Pod>(&self, s: &Scalar<T>) -> Result<T, Error> {
        let mut v = [T::default()];
        // SAFETY: one element from a one-element buffer; the read blocks.
        unsafe {
            self.queue
                .enqueue_read_buffer(&s.mem, CL_BLOCKING, 0, &mut v, &[])
        }
        .map_err(|e| cl_error("clEnqueueReadBuffer(scalar)", e.0, T::CL_TYPE))?;
        Ok(v[0])
    }
}
