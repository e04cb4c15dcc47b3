//! Borrowed elements whose rows (or planes) are apart with gaps the borrower does not own
//! ([`Strided`], [`StridedMut`]): a pointer, a shape and a layout checked against it; each
//! row handed out as its own slice, never a gap.

use std::marker::PhantomData;
use std::ptr::NonNull;

use super::{Elements, ElementsMut, LayoutError, Pitch};
use crate::{Element, MatrixMut, MatrixRef};

/// The elements of a matrix whose rows (or planes) are apart with gaps that it does not own:
/// a pointer to its first element, its shape (1 to 3 dimensions) and its layout, borrowed
/// shared for `'a`. Only the elements themselves are ever accessed, never a gap: each row is
/// its own slice ([`rows`](Self::rows)), and the device path hands OpenCL the pointer with the
/// pitch (a rectangle copy, which touches only the rows' elements).
pub struct Strided<'a, T> {
    ptr: NonNull<T>,
    extent: Extent,
    _borrow: PhantomData<&'a [T]>,
}

/// [`Strided`], borrowed mutably: the elements are the borrower's alone for `'a`.
pub struct StridedMut<'a, T> {
    ptr: NonNull<T>,
    extent: Extent,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: a `Strided` is a shared borrow of `T`s (as `&'a [T]`), a `StridedMut` an exclusive one
// (as `&'a mut [T]`): they cross threads as those do.
unsafe impl<T: Sync> Send for Strided<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Strided<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for StridedMut<'_, T> {}
// SAFETY: shared access to a `StridedMut` gives only shared access to the elements.
unsafe impl<T: Sync> Sync for StridedMut<'_, T> {}

impl<T> Clone for Strided<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Strided<'_, T> {}

/// The most dimensions a [`Strided`] holds (pipelines take 1 to 3; a [`Matrix`](crate::Matrix)
/// may have more, whose outer ones count as planes).
const MAX_RANK: usize = 6;

/// What a [`Strided`] or a [`StridedMut`] knows of its elements besides where the first one
/// is: the shape, the layout (checked against it), the span, and whether the span is the
/// borrower's. Both read their shape, rows and contiguity from it.
#[derive(Clone, Copy)]
struct Extent {
    dims: [usize; MAX_RANK],
    rank: usize,
    pitch: Pitch,
    /// Elements from the first to the last (0 for an empty matrix).
    span: usize,
    /// The memory from the first element to the last is the borrower's (a slice): the gaps
    /// between rows included.
    whole: bool,
}

impl Extent {
    /// `shape` laid out as `pitch`, checked against it (no slice: any length); the gaps between
    /// rows are not the borrower's.
    fn new(shape: &[usize], pitch: Pitch) -> Result<Extent, LayoutError> {
        if shape.len() > MAX_RANK {
            return Err(LayoutError::Rank(shape.len()));
        }
        let span = pitch.check(shape, usize::MAX)?;
        let mut dims = [0; MAX_RANK];
        dims[..shape.len()].copy_from_slice(shape);
        Ok(Extent {
            dims,
            rank: shape.len(),
            pitch,
            span,
            whole: false,
        })
    }

    /// As [`new`](Self::new), in a slice of `len` elements (checked against it) that the
    /// borrower owns whole, gaps included.
    fn of_slice(shape: &[usize], pitch: Pitch, len: usize) -> Result<Extent, LayoutError> {
        let extent = Extent::new(shape, pitch)?;
        if extent.span > len {
            pitch.check(shape, len)?;
        }
        Ok(Extent {
            whole: true,
            ..extent
        })
    }

    fn shape(&self) -> &[usize] {
        &self.dims[..self.rank]
    }

    /// The number of elements where they are contiguous (row-major, no gaps; an empty matrix
    /// is), else `None`.
    fn contiguous_len(&self) -> Option<usize> {
        let n = self.shape().iter().product();
        (n == 0 || self.pitch.is_contiguous(self.shape())).then_some(n)
    }

    /// The span, where it is the borrower's (`whole`) and not empty.
    fn whole_span(&self) -> Option<usize> {
        (self.whole && self.span > 0).then_some(self.span)
    }

    /// Each row's offset from the first element and its length, plane by plane (none for an
    /// empty matrix).
    fn rows(&self) -> impl Iterator<Item = (usize, usize)> + use<> {
        let cols = self.shape().last().copied().unwrap_or(1);
        self.pitch.row_starts(self.shape()).map(move |s| (s, cols))
    }
}

macro_rules! strided_common {
    ($($ty:ident),*) => {$(
        impl<T> $ty<'_, T> {
            /// The shape.
            pub fn shape(&self) -> &[usize] {
                self.extent.shape()
            }
            /// The layout.
            pub fn pitch(&self) -> Pitch {
                self.extent.pitch
            }
            /// Elements from the first to the last, gaps included (0 for an empty matrix).
            pub fn span(&self) -> usize {
                self.extent.span
            }
            /// The first element.
            pub fn as_ptr(&self) -> *const T {
                self.ptr.as_ptr()
            }
            /// The same elements, shared, for as long as `self` is borrowed.
            fn shared(&self) -> Strided<'_, T> {
                Strided {
                    ptr: self.ptr,
                    extent: self.extent,
                    _borrow: PhantomData,
                }
            }
        }

        impl<T> std::fmt::Debug for $ty<'_, T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("ptr", &self.ptr)
                    .field("shape", &self.shape())
                    .field("pitch", &self.extent.pitch)
                    .finish()
            }
        }

        /// Each kind of borrowed elements is a matrix of its shape (what the device executor
        /// hands [`Device::input`](crate::opencl::Device::input)).
        impl<T: Element> MatrixRef<T> for $ty<'_, T> {
            fn shape(&self) -> &[usize] {
                self.extent.shape()
            }
            /// The memory from the first element to the last where it is the matrix's own,
            /// else empty (read the elements through [`elements`](MatrixRef::elements)).
            fn as_slice(&self) -> &[T] {
                self.shared().whole_or_contiguous()
            }
            fn row_pitch(&self) -> usize {
                self.extent.pitch.row
            }
            fn plane_pitch(&self) -> usize {
                self.extent.pitch.plane
            }
            fn elements(&self) -> Elements<'_, T> {
                Elements::Strided(self.shared())
            }
        }
    )*};
}
strided_common!(Strided, StridedMut);

impl<'a, T> Strided<'a, T> {
    /// Whether the memory from the first element to the last belongs to the matrix,
    /// gaps included (it came from a slice), so that it may be handed out whole.
    pub(crate) fn owns_gaps(&self) -> bool {
        self.extent.whole || self.extent.pitch.is_contiguous(self.shape())
    }

    /// The elements as one slice, where they are contiguous (row-major, no gaps).
    pub fn contiguous(&self) -> Option<&'a [T]> {
        match self.extent.contiguous_len()? {
            0 => Some(&[]),
            // SAFETY: contiguous, the `n` elements from the first are the matrix's own, valid
            // for reads for `'a` (the constructor's contract).
            n => Some(unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), n) }),
        }
    }

    /// The memory from the first element to the last where it is the matrix's own (`whole`),
    /// else the elements where they are contiguous, else empty.
    fn whole_or_contiguous(&self) -> &'a [T] {
        match self.extent.whole_span() {
            // SAFETY: `whole`: the span is a slice the matrix borrowed.
            Some(span) => unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), span) },
            None => self.contiguous().unwrap_or(&[]),
        }
    }

    /// Each row, plane by plane (none for an empty matrix).
    pub fn rows(&self) -> impl Iterator<Item = &'a [T]> + use<'a, T> {
        let ptr = self.ptr;
        self.extent.rows().map(move |(s, cols)| {
            // SAFETY: the constructor's contract: each row's `cols` elements from its start are
            // valid for reads for `'a` (and not written meanwhile).
            unsafe { std::slice::from_raw_parts(ptr.as_ptr().add(s), cols) }
        })
    }

    /// The matrix of `shape` (up to 6 dimensions; pipelines take 1 to 3) whose first element is at
    /// `ptr`, laid out as `pitch`; a [`LayoutError`] if the pitch does not fit the shape (rows
    /// overlapping, an extent past the address space).
    ///
    /// # Safety
    /// For `'a`, every element of the matrix (row `i` of plane `c` is the `shape`'s last
    /// dimension of elements from `ptr + c * pitch.plane + i * pitch.row`) is valid for reads,
    /// initialized, and not written by anyone. Nothing is claimed of the memory between the
    /// rows: it may belong to someone else, who may write it meanwhile.
    pub unsafe fn new(ptr: *const T, shape: &[usize], pitch: Pitch) -> Result<Self, LayoutError> {
        Ok(Strided {
            ptr: NonNull::new(ptr.cast_mut()).unwrap_or(NonNull::dangling()),
            extent: Extent::new(shape, pitch)?,
            _borrow: PhantomData,
        })
    }
}

impl<'a, T> StridedMut<'a, T> {
    /// As [`Strided::new`], for writing.
    ///
    /// # Safety
    /// For `'a`, every element of the matrix is valid for reads and writes, initialized, and
    /// accessed by no one else (as through a `&'a mut T` for each). Nothing is claimed of the
    /// memory between the rows.
    pub unsafe fn new(ptr: *mut T, shape: &[usize], pitch: Pitch) -> Result<Self, LayoutError> {
        Ok(StridedMut {
            ptr: NonNull::new(ptr).unwrap_or(NonNull::dangling()),
            extent: Extent::new(shape, pitch)?,
            _borrow: PhantomData,
        })
    }

    /// The first element, for writing.
    pub fn as_mut_ptr(&mut self) -> *mut T {
        self.ptr.as_ptr()
    }

    /// Shorter borrow of the same elements.
    pub fn reborrow(&mut self) -> StridedMut<'_, T> {
        StridedMut {
            ptr: self.ptr,
            extent: self.extent,
            _borrow: PhantomData,
        }
    }

    /// The same elements, shared.
    pub fn as_strided(&self) -> Strided<'_, T> {
        self.shared()
    }

    /// The elements as one mutable slice, where they are contiguous.
    pub fn contiguous_mut(&mut self) -> Option<&mut [T]> {
        match self.extent.contiguous_len()? {
            0 => Some(&mut []),
            // SAFETY: as in `contiguous`, and the elements are the borrower's alone.
            n => Some(unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), n) }),
        }
    }

    /// Calls `f` on each row, plane by plane, mutably.
    pub fn for_each_row(&mut self, mut f: impl FnMut(&mut [T])) {
        for (s, cols) in self.extent.rows() {
            // SAFETY: the constructor's contract: each row's elements are the borrower's alone;
            // rows do not overlap (`row >= cols`, `plane >= rows * row`, checked), so the slices
            // handed out one after another never alias.
            f(unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(s), cols) });
        }
    }
}

impl<'a, T> Strided<'a, T> {
    /// The elements of `shape` laid out as `pitch` in `data` (checked against it): the slice's
    /// memory is the borrower's, gaps included.
    pub(crate) fn of_slice(
        shape: &[usize],
        pitch: Pitch,
        data: &'a [T],
    ) -> Result<Self, LayoutError> {
        let extent = Extent::of_slice(shape, pitch, data.len())?;
        Ok(Strided {
            ptr: NonNull::from(data).cast(),
            extent,
            _borrow: PhantomData,
        })
    }
}

impl<'a, T> StridedMut<'a, T> {
    /// As [`Strided::of_slice`], mutable.
    pub(crate) fn of_slice(
        shape: &[usize],
        pitch: Pitch,
        data: &'a mut [T],
    ) -> Result<Self, LayoutError> {
        let extent = Extent::of_slice(shape, pitch, data.len())?;
        Ok(StridedMut {
            ptr: NonNull::from(data).cast(),
            extent,
            _borrow: PhantomData,
        })
    }
}

impl<T: Element> MatrixMut<T> for StridedMut<'_, T> {
    fn as_mut_slice(&mut self) -> &mut [T] {
        match self.extent.whole_span() {
            // SAFETY: `whole`: the span is a slice the matrix borrowed mutably.
            Some(span) => unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), span) },
            None => self.contiguous_mut().unwrap_or(&mut []),
        }
    }
    fn elements_mut(&mut self) -> ElementsMut<'_, T> {
        ElementsMut::Strided(self.reborrow())
    }
}
