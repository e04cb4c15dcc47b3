//! Device matrices with padded rows ([`Buffer`]), one-element buffers for reductions
//! ([`Scalar`]), and the transfers between them and host [`Matrix`]es.

use std::any::TypeId;
use std::ffi::c_void;
use std::fmt;
use std::mem::size_of;
use std::ptr;

use opencl3::memory::{Buffer as ClBuffer, CL_MEM_READ_WRITE};
use opencl3::types::CL_BLOCKING;

use super::device::Device;
use super::{RawMem, buffer_created, buffer_released, cl_error, code};
use crate::{Element, Error, Matrix, MatrixMut, MatrixRef};

mod sealed {
    /// Keeps [`Pod`](super::Pod) and [`MemArg`](super::MemArg) to the types of this crate: both
    /// let bytes cross to and from the device, or hand a raw handle to OpenCL.
    pub trait Sealed {}
}

/// A plain-old-data type that can cross to and from the device byte for byte: every bit
/// pattern is a value and there are no padding bytes. The matrix element types ([`Element`])
/// and the wide accumulators of reductions (`i64`, `u64`, `f64`). Sealed.
pub trait Pod:
    Copy + Default + Send + Sync + PartialEq + fmt::Debug + 'static + sealed::Sealed
{
    /// The type's name in OpenCL C, e.g. `uchar` for `u8`, `long` for `i64`.
    const CL_TYPE: &'static str;
}

macro_rules! pod {
    ($($t:ty => $cl:literal),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Pod for $t {
            const CL_TYPE: &'static str = $cl;
        }
    )*};
}
pod!(
    u8 => "uchar", i8 => "char", u16 => "ushort", i16 => "short", u32 => "uint", i32 => "int",
    u64 => "ulong", i64 => "long", f32 => "float", f64 => "double",
);

/// Whether `T` is one of the [`Pod`] types. [`Element`] is an open trait; a type implemented
/// outside this crate could have padding or invalid bit patterns, so device transfers check.
fn is_pod<T: 'static>() -> bool {
    let t = TypeId::of::<T>();
    [
        TypeId::of::<u8>(),
        TypeId::of::<i8>(),
        TypeId::of::<u16>(),
        TypeId::of::<i16>(),
        TypeId::of::<u32>(),
        TypeId::of::<i32>(),
        TypeId::of::<u64>(),
        TypeId::of::<i64>(),
        TypeId::of::<f32>(),
        TypeId::of::<f64>(),
    ]
    .contains(&t)
}

/// A device memory object that can be a kernel argument ([`Arg::Mem`](super::Arg::Mem)): a
/// [`Buffer`] or a [`Scalar`]. Sealed.
pub trait MemArg: sealed::Sealed + Sync {
    /// The `cl_mem` handle.
    #[doc(hidden)]
    fn raw_mem(&self) -> RawMem;
    /// The handle of the context the memory belongs to.
    #[doc(hidden)]
    fn context_id(&self) -> usize;
    /// A short description for error messages, e.g. `buffer `src` [17][33] of u8`.
    fn label(&self) -> String;
}

/// A device matrix of 1 to 3 dimensions, row-major, each row (the last dimension) padded to
/// [`pitch`](Buffer::pitch) elements so that every row starts on a cache line. Kernels index
/// element `[i][j]` of a 2-D buffer as `i * pitch + j` (and `(i * rows + j) * pitch + k` in 3-D).
///
/// Dropping it releases the device memory (after the commands that use it have completed).
pub struct Buffer<T> {
    mem: ClBuffer<T>,
    name: String,
    shape: Vec<usize>,
    pitch: usize,
    context: usize,
}

impl<T> Buffer<T> {
    /// The shape, outermost dimension first (as the host matrix's).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Elements per padded row: `pitch() >= shape().last()`, and `pitch() * size_of::<T>()` is a
    /// multiple of the device's cache line.
    pub fn pitch(&self) -> usize {
        self.pitch
    }

    /// The name given at allocation (for messages).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The number of rows: the product of all dimensions but the last.
    pub fn rows(&self) -> usize {
        self.shape[..self.shape.len() - 1].iter().product()
    }
}

impl<T> Drop for Buffer<T> {
    fn drop(&mut self) {
        buffer_released();
    }
}

impl<T: Element> fmt::Debug for Buffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer")
            .field("name", &self.name)
            .field("type", &T::NAME)
            .field("shape", &self.shape)
            .field("pitch", &self.pitch)
            .finish_non_exhaustive()
    }
}

impl<T> sealed::Sealed for Buffer<T> {}

impl<T: Element> MemArg for Buffer<T> {
    fn raw_mem(&self) -> RawMem {
        use opencl3::memory::ClMem;
        self.mem.get()
    }

    fn context_id(&self) -> usize {
        self.context
    }

    fn label(&self) -> String {
        let dims: String = self.shape.iter().map(|d| format!("[{d}]")).collect();
        format!("buffer `{}` {dims} of {}", self.name, T::NAME)
    }
}

/// A one-element device buffer: the result of a reduction (`parac_matrix_sum` accumulates in
/// an `i64`, for example). Read it back with [`Device::read_scalar`].
pub struct Scalar<T> {
    mem: ClBuffer<T>,
    context: usize,
}

impl<T> Drop for Scalar<T> {
    fn drop(&mut self) {
        buffer_released();
    }
}

impl<T: Pod> fmt::Debug for Scalar<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scalar")
            .field("type", &T::CL_TYPE)
            .finish_non_exhaustive()
    }
}

impl<T> sealed::Sealed for Scalar<T> {}

impl<T: Pod> MemArg for Scalar<T> {
    fn raw_mem(&self) -> RawMem {
        use opencl3::memory::ClMem;
        self.mem.get()
    }

    fn context_id(&self) -> usize {
        self.context
    }

    fn label(&self) -> String {
        format!("scalar of {}", T::CL_TYPE)
    }
}

/// The padded row length in elements: the smallest multiple of `line / gcd(line, elem)` (so that
/// `pitch * elem` is a multiple of `line`) that holds `cols`, and at least one such unit.
pub(crate) fn padded_pitch(cols: usize, elem: usize, line: usize) -> usize {
    fn gcd(mut a: usize, mut b: usize) -> usize {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }
    let line = line.max(1);
    let unit = line / gcd(line, elem.max(1));
    cols.div_ceil(unit).max(1) * unit
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

fn not_pod(function: &'static str) -> Error {
    Error::Unsupported {
        function,
        reason: "device buffers hold only ParaC's element types (u8, i8, u16, i16, u32, i32, f32)",
    }
}

impl Device {
    /// Creates a buffer without initialising it.
    fn create_buffer<T: Element>(&self, name: &str, shape: &[usize]) -> Result<Buffer<T>, Error> {
        let op = || format!("clCreateBuffer({name})");
        if !is_pod::<T>() {
            return Err(not_pod("opencl::Device::alloc"));
        }
        if shape.is_empty() || shape.len() > 3 {
            return Err(cl_error(
                op(),
                code::INVALID_VALUE,
                format!("shape {shape:?}: a device matrix has 1 to 3 dimensions"),
            ));
        }
        let cols = shape[shape.len() - 1];
        let elem = size_of::<T>();
        let pitch = padded_pitch(cols, elem, self.info.cache_line);
        let too_big = || {
            cl_error(
                op(),
                code::INVALID_BUFFER_SIZE,
                format!(
                    "shape {shape:?} of {} padded to {pitch} per row exceeds the device's largest \
                     allocation ({} bytes)",
                    T::NAME,
                    self.info.max_alloc
                ),
            )
        };
        let rows = shape[..shape.len() - 1]
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .ok_or_else(too_big)?;
        let elems = rows.max(1).checked_mul(pitch).ok_or_else(too_big)?;
        let bytes = elems.checked_mul(elem).ok_or_else(too_big)?;
        if bytes as u64 > self.info.max_alloc {
            return Err(too_big());
        }
        // SAFETY: a fresh allocation of `elems` elements in this device's context, no host
        // pointer.
        let mem = unsafe {
            ClBuffer::<T>::create(&self.context, CL_MEM_READ_WRITE, elems, ptr::null_mut())
        }
        .map_err(|e| {
            cl_error(
                op(),
                e.0,
                format!("{bytes} bytes for shape {shape:?} of {}", T::NAME),
            )
        })?;
        buffer_created();
        Ok(Buffer {
            mem,
            name: name.to_string(),
            shape: shape.to_vec(),
            pitch,
            context: self.context_id(),
        })
    }

    /// Sets every byte of the buffer, padding included, to zero.
    fn zero<T: Element>(&self, b: &mut Buffer<T>) -> Result<(), Error> {
        let elems = b.rows().max(1) * b.pitch;
        let pattern = [T::default()];
        // SAFETY: the pattern is one element (copied at enqueue), the range is the whole buffer.
        let filled = unsafe {
            self.queue
                .enqueue_fill_buffer(&mut b.mem, &pattern, 0, elems * size_of::<T>(), &[])
        };
        match filled {
            Ok(_) => Ok(()),
            Err(e) => {
                // OpenCL 1.1 has no clEnqueueFillBuffer: write zeros from the host instead.
                let zeros = vec![T::default(); elems];
                // SAFETY: `elems` elements into a buffer of `elems` elements; the write blocks.
                unsafe {
                    self.queue
                        .enqueue_write_buffer(&mut b.mem, CL_BLOCKING, 0, &zeros, &[])
                }
                .map(drop)
                .map_err(|_| cl_error(format!("clEnqueueFillBuffer({})", b.name), e.0, ""))
            }
        }
    }

    /// A device matrix of `shape` (1 to 3 dimensions) with every element, padding included, set
    /// to zero. Each row (the last dimension) is padded so that `pitch * size_of::<T>()` is a
    /// multiple of the device's cache line (the paper's auto padding). `name` is for messages.
    pub fn alloc<T: Element>(&self, name: &str, shape: &[usize]) -> Result<Buffer<T>, Error> {
        let mut b = self.create_buffer(name, shape)?;
        self.zero(&mut b)?;
        Ok(b)
    }

    /// A device copy of `m`: [`alloc`](Device::alloc) and a blocking write of the rows (so `m`
    /// may change as soon as this returns). Padding elements are zero.
    pub fn upload<T: Element, M: MatrixRef<T> + ?Sized>(
        &self,
        name: &str,
        m: &M,
    ) -> Result<Buffer<T>, Error> {
        let mut b = self.create_buffer(name, m.shape())?;
        if b.pitch != m.shape()[m.shape().len() - 1] || m.as_slice().is_empty() {
            self.zero(&mut b)?;
        }
        self.write_rows(&mut b, m.as_slice())?;
        Ok(b)
    }

    /// Overwrites an existing buffer with `m` (blocking), which must have the buffer's shape.
    pub fn write<T: Element>(&self, b: &mut Buffer<T>, m: &Matrix<T>) -> Result<(), Error> {
        if b.shape() != m.shape() {
            return Err(Error::Shape {
                function: "opencl::Device::write",
                matrix: "m",
                declared: "the device buffer's shape",
                expected: b.shape.clone(),
                got: m.shape().to_vec(),
            });
        }
        self.write_rows(b, m.as_slice())
    }

    /// Copies the buffer's rows (without padding) into `into`, blocking: it waits for every
    /// command enqueued before it, launches included. `Error::Shape` if the shapes differ.
    pub fn download<T: Element, M: MatrixMut<T> + ?Sized>(
        &self,
        b: &Buffer<T>,
        into: &mut M,
    ) -> Result<(), Error> {
        if b.shape() != into.shape() {
            return Err(shape_error(b.shape(), into.shape()));
        }
        let data = into.as_mut_slice();
        if data.is_empty() {
            return Ok(());
        }
        let cols = b.shape[b.shape.len() - 1];
        let rows = b.rows();
        let elem = size_of::<T>();
        let op = || format!("clEnqueueReadBuffer({})", b.name);
        if b.pitch == cols || rows == 1 {
            // SAFETY: `data` is `rows * cols` elements, within the buffer; the read blocks, so
            // `data` outlives it.
            unsafe {
                self.queue
                    .enqueue_read_buffer(&b.mem, CL_BLOCKING, 0, data, &[])
            }
            .map(drop)
            .map_err(|e| cl_error(op(), e.0, ""))
        } else {
            let origin = [0usize; 3];
            let region = [cols * elem, rows, 1];
            // SAFETY: the region is `rows` rows of `cols` elements in both the buffer (rows of
            // `pitch`) and `data` (rows of `cols`); the read blocks.
            unsafe {
                self.queue.enqueue_read_buffer_rect(
                    &b.mem,
                    CL_BLOCKING,
                    origin.as_ptr(),
                    origin.as_ptr(),
                    region.as_ptr(),
                    b.pitch * elem,
                    0,
                    cols * elem,
                    0,
                    data.as_mut_ptr().cast::<c_void>(),
                    &[],
                )
            }
            .map(drop)
            .map_err(|e| cl_error(op().replace("Buffer(", "BufferRect("), e.0, ""))
        }
    }

    /// Writes host rows (`rows * cols` elements) into the buffer's padded rows, blocking.
    fn write_rows<T: Element>(&self, b: &mut Buffer<T>, data: &[T]) -> Result<(), Error> {
        if data.is_empty() {
            return Ok(());
        }
        let cols = b.shape[b.shape.len() - 1];
        let rows = b.rows();
        debug_assert_eq!(data.len(), rows * cols);
        let elem = size_of::<T>();
        let name = b.name.clone();
        if b.pitch == cols || rows == 1 {
            // SAFETY: `data` is `rows * cols` elements, within the buffer; the write blocks.
            unsafe {
                self.queue
                    .enqueue_write_buffer(&mut b.mem, CL_BLOCKING, 0, data, &[])
            }
            .map(drop)
            .map_err(|e| cl_error(format!("clEnqueueWriteBuffer({name})"), e.0, ""))
        } else {
            let origin = [0usize; 3];
            let region = [cols * elem, rows, 1];
            // SAFETY: as in `download`; OpenCL only reads through the pointer.
            unsafe {
                self.queue.enqueue_write_buffer_rect(
                    &mut b.mem,
                    CL_BLOCKING,
                    origin.as_ptr(),
                    origin.as_ptr(),
                    region.as_ptr(),
                    b.pitch * elem,
                    0,
                    cols * elem,
                    0,
                    data.as_ptr().cast::<c_void>().cast_mut(),
                    &[],
                )
            }
            .map(drop)
            .map_err(|e| cl_error(format!("clEnqueueWriteBufferRect({name})"), e.0, ""))
        }
    }

    /// A one-element device buffer holding `init` (0 for a sum, the identity of a min or max),
    /// for a reduction's result.
    pub fn scalar<T: Pod>(&self, init: T) -> Result<Scalar<T>, Error> {
        // SAFETY: a fresh one-element allocation in this device's context.
        let mem =
            unsafe { ClBuffer::<T>::create(&self.context, CL_MEM_READ_WRITE, 1, ptr::null_mut()) }
                .map_err(|e| cl_error("clCreateBuffer(scalar)", e.0, T::CL_TYPE))?;
        buffer_created();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pitch_is_padded_to_the_cache_line() {
        assert_eq!(padded_pitch(1, 1, 64), 64);
        assert_eq!(padded_pitch(64, 1, 64), 64);
        assert_eq!(padded_pitch(65, 1, 64), 128);
        assert_eq!(padded_pitch(33, 2, 64), 64);
        assert_eq!(padded_pitch(17, 4, 64), 32);
        assert_eq!(padded_pitch(0, 4, 64), 16);
        // An element size that does not divide the line: 3 * 64 = 192 bytes per unit.
        assert_eq!(padded_pitch(5, 3, 64), 64);
        assert_eq!(padded_pitch(65, 3, 64), 128);
        for (cols, elem, line) in [(7, 4, 128), (100, 2, 32), (3, 1, 0)] {
            let p = padded_pitch(cols, elem, line);
            assert!(p >= cols && (p * elem) % line.max(1) == 0);
        }
    }

    #[test]
    fn only_pod_types() {
        assert!(is_pod::<u8>() && is_pod::<f32>() && is_pod::<i64>());
        assert!(!is_pod::<bool>() && !is_pod::<char>());
    }
}
