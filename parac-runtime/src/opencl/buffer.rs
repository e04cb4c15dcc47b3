//! Device matrices with padded rows ([`Buffer`]), one-element buffers for reductions
//! ([`Scalar`]), and the transfers between them and host [`Matrix`](crate::Matrix)es.
//!
//! Here: the types, their pooled memory objects, the layout of a device matrix and the
//! creation of buffers (allocated, zeroed, over host memory). The transfers (uploads, writes,
//! downloads, rows read and written plain, as rectangles or through a mapping, copies between
//! buffers, scalars) are in `buffer/copy.rs`.

mod copy;

use std::ffi::c_void;
use std::fmt;
use std::mem::{ManuallyDrop, size_of};
use std::ops::{Deref, DerefMut};
use std::ptr;
use std::sync::Arc;

use opencl3::error_codes::CL_MEM_OBJECT_ALLOCATION_FAILURE;
use opencl3::memory::{
    Buffer as ClBuffer, CL_MEM_READ_ONLY, CL_MEM_READ_WRITE, CL_MEM_USE_HOST_PTR, ClMem,
};
use opencl3::types::CL_BLOCKING;

use super::device::Device;
use super::transfer;
use super::{RawMem, buffer_created, buffer_released, cl_error, code};
use super::{guard, pool};
use crate::{Element, Error, Pitch};

pub(super) mod sealed {
    /// Keeps [`Pod`](super::Pod) and [`MemArg`](super::MemArg) to the types of this crate: both
    /// let bytes cross to and from the device, or hand a raw handle to OpenCL.
    pub trait Sealed {}
}

/// A plain-old-data type that can cross to and from the device byte for byte
/// ([`bytemuck::Pod`]: every bit pattern is a value, no padding bytes) and has a name in
/// OpenCL C: the matrix element types ([`Element`], which are `bytemuck::Pod` too) and the wide
/// accumulators of reductions (`i64`, `u64`, `f64`). Sealed.
pub trait Pod:
    bytemuck::Pod + Default + Send + Sync + PartialEq + fmt::Debug + sealed::Sealed
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
/// Dropping it gives the device memory back to its device, for the next buffer of the same size
/// in bytes ([`Device::trim`] releases it); the commands enqueued before that still use it first.
pub struct Buffer<T> {
    mem: Mem<T>,
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

    /// Elements per row in device memory: `pitch() >= shape().last()`. For a buffer the device
    /// allocates, `pitch() * size_of::<T>()` is a multiple of the device's cache line; an
    /// in-place view of a host matrix ([`Input`](super::Input), [`Output`](super::Output)) has
    /// the host's unpadded rows.
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

    /// The layout in elements: rows [`pitch`](Buffer::pitch) apart, planes (of a 3-D buffer)
    /// their rows apart.
    pub(crate) fn layout(&self) -> crate::Pitch {
        let n = self.shape.len();
        let rows = if n >= 2 { self.shape[n - 2] } else { 1 };
        crate::Pitch {
            row: self.pitch,
            plane: rows * self.pitch,
        }
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
    mem: Mem<T>,
    context: usize,
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
        self.mem.get()
    }

    fn context_id(&self) -> usize {
        self.context
    }

    fn label(&self) -> String {
        format!("scalar of {}", T::CL_TYPE)
    }
}

/// The memory object of a [`Buffer`] or [`Scalar`]: counted by
/// [`live_buffers`](super::live_buffers) while it lives, given back to its device's pool when
/// dropped (released at once where it has no pool: memory over a host matrix). With guard
/// bands (`guard.rs`) it is a sub-buffer of a parent with guards, checked when it is dropped.
struct Mem<T> {
    mem: ManuallyDrop<ClBuffer<T>>,
    /// The size in bytes, the pool's key.
    bytes: usize,
    pool: Option<pool::Shared>,
    /// The device's guard state and the parent buffer, where it has guard bands.
    guard: Option<(guard::Shared, Arc<guard::Band>)>,
}

impl<T> Mem<T> {
    fn new(mem: ClBuffer<T>, bytes: usize, pool: Option<&pool::Shared>) -> Mem<T> {
        buffer_created();
        Mem {
            mem: ManuallyDrop::new(mem),
            bytes,
            pool: pool.cloned(),
            guard: None,
        }
    }
}

impl<T> Deref for Mem<T> {
    type Target = ClBuffer<T>;
    fn deref(&self) -> &ClBuffer<T> {
        &self.mem
    }
}

impl<T> DerefMut for Mem<T> {
    fn deref_mut(&mut self) -> &mut ClBuffer<T> {
        &mut self.mem
    }
}

impl<T> Drop for Mem<T> {
    fn drop(&mut self) {
        // SAFETY: `mem` is not used after this.
        let mem = unsafe { ManuallyDrop::take(&mut self.mem) };
        let band = self.guard.take().map(|(guards, band)| {
            guards.release(mem.get() as usize, &band);
            band
        });
        match &self.pool {
            Some(pool) => pool::give(pool, mem, self.bytes, band),
            None => {
                drop(mem);
                drop(band);
            }
        }
        buffer_released();
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

/// The padded row length, and the size in elements and in bytes, of a device matrix.
struct Layout {
    pitch: usize,
    elems: usize,
    bytes: usize,
}

impl Device {
    /// A memory object of `elems` elements of `T` (`bytes` bytes): one the pool kept, else a
    /// fresh one; when the device is out of memory, the pool is released and the creation tried
    /// again. With guard bands on, a sub-buffer between guards (`guard.rs`); `name` names it in
    /// their reports.
    fn create_mem<T>(&self, elems: usize, bytes: usize, name: &str) -> Result<Mem<T>, i32> {
        let guarded = self.guards.on();
        let (mem, band) = match pool::take(&self.pool, bytes, guarded) {
            Some(taken) => taken,
            None if guarded => {
                let (mem, band) = self.retry(|| self.guards.create::<T>(&self.context, bytes))?;
                (mem, Some(band))
            }
            None => {
                // SAFETY: a fresh allocation of `elems` elements in this device's context, no
                // host pointer.
                let create = || {
                    unsafe {
                        ClBuffer::<T>::create(
                            &self.context,
                            CL_MEM_READ_WRITE,
                            elems,
                            ptr::null_mut(),
                        )
                    }
                    .map_err(|e| e.0)
                };
                (self.retry(create)?, None)
            }
        };
        let mut m = Mem::new(mem, bytes, Some(&self.pool));
        if let Some(band) = band {
            self.guards.register(m.get() as usize, name, band.clone());
            m.guard = Some((self.guards.clone(), band));
        }
        Ok(m)
    }

    /// `create()`, and again after releasing the pool where the device is out of memory.
    fn retry<R>(&self, create: impl Fn() -> Result<R, i32>) -> Result<R, i32> {
        match create() {
            Err(e)
                if [
                    CL_MEM_OBJECT_ALLOCATION_FAILURE,
                    code::OUT_OF_RESOURCES,
                    code::OUT_OF_HOST_MEMORY,
                ]
                .contains(&e)
                    && pool::clear(&self.pool) > 0 =>
            {
                create()
            }
            r => r,
        }
    }

    /// The padded row length and the size in elements and bytes of a device matrix of `shape`,
    /// or the error that `clCreateBuffer` of it would give.
    fn layout<T: Element>(
        &self,
        name: &str,
        shape: &[usize],
        padded: bool,
    ) -> Result<Layout, Error> {
        let op = || format!("clCreateBuffer({name})");
        if shape.is_empty() || shape.len() > 3 {
            return Err(cl_error(
                op(),
                code::INVALID_VALUE,
                format!("shape {shape:?}: a device matrix has 1 to 3 dimensions"),
            ));
        }
        let cols = shape[shape.len() - 1];
        let elem = size_of::<T>();
        let pitch = if padded {
            padded_pitch(cols, elem, self.info.cache_line)
        } else {
            // An empty matrix still gets a buffer of one element (OpenCL has no empty one).
            cols.max(1)
        };
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
        // Kernels compute a matrix's linear indices in `int` (what lets a vectorizer see
        // consecutive elements), a constant offset of the column added last, and sizes are
        // passed as `int`: a matrix holds at most `i32::MAX - INDEX_SLACK` elements, padding
        // included, so that no partial sum leaves `int`.
        let most = i32::MAX as usize - parac_core::codegen::opencl::INDEX_SLACK as usize;
        if elems > most {
            return Err(cl_error(
                op(),
                code::INVALID_BUFFER_SIZE,
                format!(
                    "shape {shape:?} padded to {pitch} per row is {elems} elements: a device \
                     matrix holds at most {most} (kernels index it with `int`)"
                ),
            ));
        }
        let bytes = elems.checked_mul(elem).ok_or_else(too_big)?;
        if bytes as u64 > self.info.max_alloc {
            return Err(too_big());
        }
        Ok(Layout {
            pitch,
            elems,
            bytes,
        })
    }

    /// Creates a buffer without initialising it.
    fn create_buffer<T: Element>(&self, name: &str, shape: &[usize]) -> Result<Buffer<T>, Error> {
        self.create_buffer_as(name, shape, true)
    }

    /// As [`create_buffer`](Self::create_buffer), with rows padded to the cache line or not
    /// (`padded`: the pitch is the last dimension, a host matrix's copy is one plain transfer).
    pub(super) fn create_buffer_as<T: Element>(
        &self,
        name: &str,
        shape: &[usize],
        padded: bool,
    ) -> Result<Buffer<T>, Error> {
        let Layout {
            pitch,
            elems,
            bytes,
        } = self.layout::<T>(name, shape, padded)?;
        let mem = self.create_mem::<T>(elems, bytes, name).map_err(|e| {
            cl_error(
                format!("clCreateBuffer({name})"),
                e,
                format!("{bytes} bytes for shape {shape:?} of {}", T::NAME),
            )
        })?;
        Ok(Buffer {
            mem,
            name: name.to_string(),
            shape: shape.to_vec(),
            pitch,
            context: self.context_id(),
        })
    }

    /// A buffer over host memory (`CL_MEM_USE_HOST_PTR`), whose kernels read and write the
    /// host's elements in place: only on a device whose memory is the host's
    /// ([`DeviceInfo::host_unified_memory`](super::DeviceInfo::host_unified_memory)), for a
    /// non-empty `shape`. Its rows are the host's, unpadded: its [`pitch`](Buffer::pitch) is
    /// the last dimension (kernels take the pitch as an argument and never read past a row's
    /// last column, so padding only aligns rows; skipping the copy is worth far more). `None`
    /// elsewhere, or where the device refuses the pointer; the caller then copies. The buffer
    /// is not pooled: it is released when dropped.
    ///
    /// # Safety
    /// A pitched host matrix (a region of interest) is used in place where the kernels'
    /// indexing fits it: rows `pitch.row` apart (the buffer's [`pitch`](Buffer::pitch)), and,
    /// in 3-D, planes `rows * pitch.row` apart (kernels index `(i * rows + j) * pitch + k`).
    ///
    /// # Safety
    /// `data` points to the `span` elements of `shape` laid out as `pitch` (checked with
    /// [`Pitch::check`]), and stays valid (and, where `writable`, unused by the host) until
    /// the buffer is dropped and every command enqueued on it has completed. Where not
    /// `writable`, no kernel may write the buffer.
    pub(super) unsafe fn host_buffer<T: Element>(
        &self,
        name: &str,
        shape: &[usize],
        pitch: Pitch,
        span: usize,
        data: *mut T,
        writable: bool,
    ) -> Option<Buffer<T>> {
        if !self.host_memory() || data.is_null() {
            return None;
        }
        // The padded layout is at least as large: where it fits, the unpadded one does.
        self.layout::<T>(name, shape, true).ok()?;
        if shape.contains(&0) {
            return None;
        }
        let rows = if shape.len() >= 2 {
            shape[shape.len() - 2]
        } else {
            1
        };
        let kernel_layout = shape.len() < 3 || Some(pitch.plane) == rows.checked_mul(pitch.row);
        let fits = span
            .checked_mul(size_of::<T>())
            .is_some_and(|b| b as u64 <= self.info.max_alloc);
        if !kernel_layout || !fits || i32::try_from(pitch.row).is_err() {
            return None;
        }
        let elems = span;
        let flags = CL_MEM_USE_HOST_PTR
            | if writable {
                CL_MEM_READ_WRITE
            } else {
                CL_MEM_READ_ONLY
            };
        // SAFETY: `data` holds `elems` elements (the shape's, unpadded) and outlives the
        // buffer, by the caller's contract.
        let mem =
            unsafe { ClBuffer::<T>::create(&self.context, flags, elems, data.cast::<c_void>()) }
                .ok()?;
        Some(Buffer {
            mem: Mem::new(mem, elems * size_of::<T>(), None),
            name: name.to_string(),
            shape: shape.to_vec(),
            pitch: pitch.row,
            context: self.context_id(),
        })
    }

    /// Whether kernels and transfers may use host memory directly: the device's memory is the
    /// host's, and [`copying`](super::copying) is not in force on this thread.
    pub(super) fn host_memory(&self) -> bool {
        self.info.host_unified_memory && !transfer::forced_copies()
    }

    /// Sets every byte of the buffer, padding included, to zero.
    pub(crate) fn zero<T: Element>(&self, b: &mut Buffer<T>) -> Result<(), Error> {
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
    ///
    /// The memory is that of a dropped buffer of the same size in bytes where the device kept
    /// one (see [`trim`](Device::trim)), else fresh.
    pub fn alloc<T: Element>(&self, name: &str, shape: &[usize]) -> Result<Buffer<T>, Error> {
        let mut b = self.create_buffer(name, shape)?;
        self.zero(&mut b)?;
        Ok(b)
    }

    /// A device matrix like [`alloc`](Device::alloc)'s, without the zero fill: its elements and
    /// its padding are unspecified (what a dropped buffer of the same size left there, or fresh
    /// memory), until written. For a matrix every element of which is written (by a kernel or
    /// [`write`](Device::write)) before anything reads it, where the fill would be a wasted pass
    /// over the memory (as much as the transfer of the matrix). A [`download`](Device::download)
    /// or a kernel that reads an element not written yet gets an arbitrary value of `T`. The code
    /// `parac!` emits uses it for intermediates and outputs that their first region writes whole.
    pub fn alloc_uninit<T: Element>(
        &self,
        name: &str,
        shape: &[usize],
    ) -> Result<Buffer<T>, Error> {
        self.create_buffer(name, shape)
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
            assert!(p >= cols && (p * elem).is_multiple_of(line.max(1)));
        }
    }
}
