//! How a matrix's elements lie in the slice that holds them ([`Pitch`]): contiguous row-major,
//! or rows (and planes) a fixed number of elements apart, as in a region of interest of a
//! larger image or a strided `ndarray` view. The last dimension is always contiguous.
//!
//! Every consumer checks a layout against its slice ([`Pitch::check`]) before touching memory:
//! a pitch smaller than a row, a slice too short for the last row, or a size that overflows is
//! a [`LayoutError`], never an access outside the slice.

use std::borrow::Cow;
use std::marker::PhantomData;
use std::ptr::NonNull;

use crate::resident::{OnDevice, OnDeviceMut};
use crate::{Element, Error, MatrixMut, MatrixRef};

/// The element strides of a matrix's rows and planes (its last dimension has stride 1): row
/// `i` of plane `c` starts at `c * plane + i * row` in the matrix's slice. For a 2-D matrix
/// `plane` is `rows * row`, for a vector both are its length; for more than 3 dimensions the
/// outer ones count as planes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pitch {
    /// Elements from the start of one row to the start of the next: at least the row's length.
    pub row: usize,
    /// Elements from the start of one plane (`[C][M][N]`'s `[c]`) to the next: at least
    /// `rows * row`, and a multiple of `row`.
    pub plane: usize,
}

/// Why a layout does not fit its shape or its slice.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LayoutError {
    /// The row pitch is smaller than a row: rows would overlap.
    #[error("row pitch {pitch} is smaller than a row of {cols} elements")]
    RowPitch {
        /// The row pitch.
        pitch: usize,
        /// The row's length.
        cols: usize,
    },
    /// The plane pitch is smaller than a plane's rows, or not a multiple of the row pitch.
    #[error("plane pitch {pitch} is not a multiple of the row pitch {row} at least {rows} rows")]
    PlanePitch {
        /// The plane pitch.
        pitch: usize,
        /// The row pitch.
        row: usize,
        /// Rows per plane.
        rows: usize,
    },
    /// The slice ends before the last element.
    #[error("shape {shape:?} with row pitch {row} spans {needed} elements, the slice holds {len}")]
    TooShort {
        /// The shape.
        shape: Vec<usize>,
        /// The row pitch.
        row: usize,
        /// Elements from the first to the last, inclusive.
        needed: usize,
        /// The slice's length.
        len: usize,
    },
    /// The extent of the layout does not fit in `usize`.
    #[error("shape {shape:?} with pitch {pitch:?} overflows the address space")]
    Overflow {
        /// The shape.
        shape: Vec<usize>,
        /// The pitches.
        pitch: Pitch,
    },
    /// A region of interest reaches outside its matrix, or the matrix has no rows to take one
    /// of.
    #[error("region of {rows}x{cols} at ({row}, {col}) is outside a matrix of shape {shape:?}")]
    Outside {
        /// First row.
        row: usize,
        /// First column.
        col: usize,
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
        /// The matrix's shape.
        shape: Vec<usize>,
    },
    /// A matrix on an OpenCL device ([`DeviceMatrix`](crate::DeviceMatrix)) given to the CPU
    /// path or to another runtime's device: download it first
    /// ([`DeviceMatrix::to_host`](crate::DeviceMatrix::to_host)).
    #[error(
        "it lives on OpenCL device `{device}` (context {context:#x}), which this call does not run on: download it first"
    )]
    OnDevice {
        /// The device's name.
        device: String,
        /// The device's OpenCL context.
        context: usize,
    },
    /// A strided array whose last dimension is not contiguous or whose strides are negative
    /// (`ndarray`): a matrix's rows are contiguous, its rows and planes in increasing order.
    #[error("strides {strides:?} of shape {shape:?}: a matrix needs positive strides, the last 1")]
    Strides {
        /// The shape.
        shape: Vec<usize>,
        /// The strides, in elements.
        strides: Vec<isize>,
    },
    /// A matrix's [`Strided`] elements have another shape than the matrix says it has.
    #[error("elements of shape {elements:?} for a matrix of shape {shape:?}")]
    Shape {
        /// The matrix's shape.
        shape: Vec<usize>,
        /// Its elements' shape.
        elements: Vec<usize>,
    },
    /// More or fewer dimensions than a matrix has (1 to 3).
    #[error("{0} dimensions: a matrix has 1 to 3")]
    Rank(usize),
}

/// `(planes, rows, cols)` of a shape: the outer dimensions flattened, the next-to-last, the last.
fn dims(shape: &[usize]) -> Option<(usize, usize, usize)> {
    let n = shape.len();
    let cols = shape.last().copied().unwrap_or(1);
    let rows = if n >= 2 { shape[n - 2] } else { 1 };
    let planes = shape[..n.saturating_sub(2)]
        .iter()
        .try_fold(1usize, |a, d| a.checked_mul(*d))?;
    Some((planes, rows, cols))
}

impl Pitch {
    /// The layout of a contiguous row-major matrix of `shape`.
    pub fn contiguous(shape: &[usize]) -> Pitch {
        let (_, rows, cols) = dims(shape).unwrap_or((1, 1, 1));
        Pitch {
            row: cols,
            plane: rows.saturating_mul(cols),
        }
    }

    /// The layout of `m`, as its [`MatrixRef::row_pitch`] and [`MatrixRef::plane_pitch`] say.
    pub fn of<T: Element, M: MatrixRef<T> + ?Sized>(m: &M) -> Pitch {
        Pitch {
            row: m.row_pitch(),
            plane: m.plane_pitch(),
        }
    }

    /// Whether the elements of `shape` are exactly the first `shape.iter().product()` elements
    /// of the slice, row-major (an empty matrix is).
    pub fn is_contiguous(self, shape: &[usize]) -> bool {
        let Some((planes, rows, cols)) = dims(shape) else {
            return false;
        };
        shape.contains(&0)
            || ((rows <= 1 && planes <= 1 || self.row == cols)
                && (planes <= 1 || Some(self.plane) == rows.checked_mul(cols)))
    }

    /// Checks the layout against `shape` and a slice of `len` elements; the number of elements
    /// from the first to the last (0 for an empty matrix), which `len` is at least.
    pub fn check(self, shape: &[usize], len: usize) -> Result<usize, LayoutError> {
        let overflow = || LayoutError::Overflow {
            shape: shape.to_vec(),
            pitch: self,
        };
        let (planes, rows, cols) = dims(shape).ok_or_else(overflow)?;
        if self.row < cols {
            return Err(LayoutError::RowPitch {
                pitch: self.row,
                cols,
            });
        }
        if shape.contains(&0) {
            return Ok(0);
        }
        let plane_rows = rows.checked_mul(self.row).ok_or_else(overflow)?;
        if planes > 1 && (self.plane < plane_rows || self.plane % self.row != 0) {
            return Err(LayoutError::PlanePitch {
                pitch: self.plane,
                row: self.row,
                rows,
            });
        }
        let needed = (planes - 1)
            .checked_mul(self.plane)
            .and_then(|p| p.checked_add((rows - 1).checked_mul(self.row)?))
            .and_then(|p| p.checked_add(cols))
            .ok_or_else(overflow)?;
        if needed > len {
            return Err(LayoutError::TooShort {
                shape: shape.to_vec(),
                row: self.row,
                needed,
                len,
            });
        }
        Ok(needed)
    }

    /// The offset of every row's first element, plane by plane, row by row (a layout that
    /// [`check`](Self::check) accepted).
    pub fn row_starts(self, shape: &[usize]) -> impl Iterator<Item = usize> + use<> {
        let (planes, rows, _) = dims(shape).unwrap_or((0, 0, 0));
        let rows = if shape.contains(&0) { 0 } else { rows };
        (0..planes).flat_map(move |p| (0..rows).map(move |r| p * self.plane + r * self.row))
    }

    /// The region `rows x cols` at (`row`, `col`) of every plane of a matrix of `shape` with
    /// this layout: its shape and the offset of its first element (its layout is this one).
    pub fn sub(
        self,
        shape: &[usize],
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    ) -> Result<(Vec<usize>, usize), LayoutError> {
        let n = shape.len();
        let outside = || LayoutError::Outside {
            row,
            col,
            rows,
            cols,
            shape: shape.to_vec(),
        };
        let (_, m, c) = dims(shape).ok_or_else(outside)?;
        let fits = |o: usize, k: usize, d: usize| o.checked_add(k).is_some_and(|e| e <= d);
        if n == 0 || !fits(row, rows, m) || !fits(col, cols, c) || (n == 1 && (row, rows) != (0, 1))
        {
            return Err(outside());
        }
        let mut sub = shape.to_vec();
        sub[n - 1] = cols;
        if n >= 2 {
            sub[n - 2] = rows;
        }
        // Within the checked layout: row < m and col < c, or the region is empty.
        let offset = if sub.contains(&0) {
            0
        } else {
            row * self.row + col
        };
        Ok((sub, offset))
    }
}

/// A matrix's elements as a pipeline reads them ([`MatrixRef::elements`]).
#[derive(Debug)]
pub enum Elements<'a, T> {
    /// A slice from the first element to the last, laid out as the matrix's
    /// [`row_pitch`](MatrixRef::row_pitch) and [`plane_pitch`](MatrixRef::plane_pitch) say;
    /// the matrix owns every element of it, the gaps between its rows included.
    Slice(&'a [T]),
    /// Rows (or planes) apart with gaps the matrix does not own (an `ndarray` slice of a larger
    /// array): a pointer and a layout, which no `&[T]` may cover.
    Strided(Strided<'a, T>),
    /// A layout no matrix has (negative strides, a last dimension that is not contiguous, more
    /// than 3 dimensions): a pipeline refuses it with `Error::Layout`.
    Refused(LayoutError),
    /// A matrix that lives on an OpenCL device ([`DeviceMatrix`](crate::DeviceMatrix)): a call
    /// on that device uses it where it is; the CPU path and other devices refuse it with
    /// `Error::Layout` ([`LayoutError::OnDevice`]).
    Device(OnDevice<'a, T>),
}

impl<T> Clone for Elements<'_, T> {
    fn clone(&self) -> Self {
        match self {
            Elements::Slice(s) => Elements::Slice(s),
            Elements::Strided(s) => Elements::Strided(*s),
            Elements::Refused(e) => Elements::Refused(e.clone()),
            Elements::Device(d) => Elements::Device(d.clone()),
        }
    }
}

/// A matrix's elements as a pipeline writes them ([`MatrixMut::elements_mut`]).
#[derive(Debug)]
pub enum ElementsMut<'a, T> {
    /// As [`Elements::Slice`], mutable.
    Slice(&'a mut [T]),
    /// As [`Elements::Strided`], mutable.
    Strided(StridedMut<'a, T>),
    /// As [`Elements::Refused`].
    Refused(LayoutError),
    /// As [`Elements::Device`], mutable.
    Device(OnDeviceMut<'a, T>),
}

impl<T> ElementsMut<'_, T> {
    /// A shorter borrow of the same elements.
    pub fn reborrow(&mut self) -> ElementsMut<'_, T> {
        match self {
            ElementsMut::Slice(s) => ElementsMut::Slice(s),
            ElementsMut::Strided(s) => ElementsMut::Strided(s.reborrow()),
            ElementsMut::Refused(e) => ElementsMut::Refused(e.clone()),
            ElementsMut::Device(d) => ElementsMut::Device(d.reborrow()),
        }
    }
}

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

    /// The matrix of `shape` (up to 6 dimensions; pipelines take 1 to 3) whose first element is at `ptr`, laid out as
    /// `pitch`; a [`LayoutError`] if the pitch does not fit the shape (rows overlapping, an
    /// extent past the address space).
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

/// `Error::Layout` of matrix `name`.
pub(crate) fn layout_error(name: &'static str) -> impl Fn(LayoutError) -> Error {
    move |source| Error::Layout {
        matrix: name,
        source,
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

/// Strided elements of `elements` shape for a matrix of `shape`: a [`LayoutError::Shape`] where
/// they differ.
fn same_shape(shape: &[usize], elements: &[usize]) -> Result<(), LayoutError> {
    if elements == shape {
        Ok(())
    } else {
        Err(LayoutError::Shape {
            shape: shape.to_vec(),
            elements: elements.to_vec(),
        })
    }
}

/// A matrix's elements, its shape and layout as it reports them, checked: a slice against its
/// length, a [`Strided`] against the shape.
pub(crate) fn checked_parts<'a, T>(
    shape: &[usize],
    pitch: Pitch,
    elements: Elements<'a, T>,
) -> Result<Strided<'a, T>, LayoutError> {
    match elements {
        Elements::Slice(data) => Strided::of_slice(shape, pitch, data),
        Elements::Strided(s) => same_shape(shape, s.shape()).map(|()| s),
        Elements::Refused(e) => Err(e),
        Elements::Device(d) => Err(d.elsewhere()),
    }
}

/// As [`checked_parts`], mutable.
pub(crate) fn checked_parts_mut<'a, T>(
    shape: &[usize],
    pitch: Pitch,
    elements: ElementsMut<'a, T>,
) -> Result<StridedMut<'a, T>, LayoutError> {
    match elements {
        ElementsMut::Slice(data) => StridedMut::of_slice(shape, pitch, data),
        ElementsMut::Strided(s) => same_shape(shape, s.shape()).map(|()| s),
        ElementsMut::Refused(e) => Err(e),
        ElementsMut::Device(d) => Err(d.elsewhere()),
    }
}

/// `m`'s elements, checked ([`checked_parts`]).
pub(crate) fn checked<T: Element, M: MatrixRef<T> + ?Sized>(
    m: &M,
) -> Result<Strided<'_, T>, LayoutError> {
    checked_parts(m.shape(), Pitch::of(m), m.elements())
}

/// `m`'s elements, checked, mutable. The shape and layout are copied before the elements are
/// borrowed mutably.
pub(crate) fn checked_mut<T: Element, M: MatrixMut<T> + ?Sized>(
    m: &mut M,
) -> Result<StridedMut<'_, T>, LayoutError> {
    let (shape, pitch) = (m.shape().to_vec(), Pitch::of(m));
    checked_parts_mut(&shape, pitch, m.elements_mut())
}

/// Copies the elements into a new contiguous vector, row by row.
pub(crate) fn gather_strided<T: Copy>(s: &Strided<'_, T>) -> Vec<T> {
    let mut out = Vec::with_capacity(s.shape().iter().product());
    for row in s.rows() {
        out.extend_from_slice(row);
    }
    out
}

/// An input of the CPU path as a contiguous slice: the caller's own where it is contiguous,
/// else a copy (a strided view, a region of interest, an `ndarray` slice with rows apart).
pub struct Contiguous<'a, T: Element> {
    shape: &'a [usize],
    data: Cow<'a, [T]>,
}

impl<T: Element> Contiguous<'_, T> {
    /// The shape.
    pub fn shape(&self) -> &[usize] {
        self.shape
    }
    /// The elements, row-major, contiguous.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }
}

/// `m` as a contiguous slice (see [`Contiguous`]); `Error::Layout` if its layout does not fit.
pub fn contiguous<'a, T: Element, M: MatrixRef<T> + ?Sized>(
    m: &'a M,
    name: &'static str,
) -> Result<Contiguous<'a, T>, Error> {
    let s = checked(m).map_err(layout_error(name))?;
    let data = match s.contiguous() {
        Some(d) => Cow::Borrowed(d),
        None => Cow::Owned(gather_strided(&s)),
    };
    Ok(Contiguous {
        shape: m.shape(),
        data,
    })
}

/// An output of the CPU path as a contiguous slice: the caller's own where it is contiguous,
/// else a copy of its elements that is copied back into it when this is dropped (so also when
/// the call fails half-way, as an output written in place would be). Only the elements are
/// copied back, row by row, never the gaps between rows (which may belong to someone else).
pub struct ContiguousMut<'a, T: Element> {
    dst: StridedMut<'a, T>,
    copy: Option<Vec<T>>,
}

impl<T: Element> ContiguousMut<'_, T> {
    /// The shape.
    pub fn shape(&self) -> &[usize] {
        self.dst.shape()
    }
    /// The elements, row-major, contiguous.
    pub fn as_slice(&self) -> &[T] {
        match &self.copy {
            Some(c) => c,
            None => self
                .dst
                .as_strided()
                .contiguous()
                .expect("no copy: the output is contiguous"),
        }
    }
    /// The elements, row-major, contiguous, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        match &mut self.copy {
            Some(c) => c,
            None => self
                .dst
                .contiguous_mut()
                .expect("no copy: the output is contiguous"),
        }
    }
}

impl<T: Element> Drop for ContiguousMut<'_, T> {
    fn drop(&mut self) {
        if let Some(c) = &self.copy {
            let cols = self.dst.shape().last().copied().unwrap_or(1).max(1);
            let mut rows = c.chunks_exact(cols);
            self.dst.for_each_row(|row| {
                if let Some(r) = rows.next() {
                    row.copy_from_slice(r);
                }
            });
        }
    }
}

/// `m` as a contiguous mutable slice (see [`ContiguousMut`]).
pub fn contiguous_mut<'a, T: Element, M: MatrixMut<T> + ?Sized>(
    m: &'a mut M,
    name: &'static str,
) -> Result<ContiguousMut<'a, T>, Error> {
    let dst = checked_mut(m).map_err(layout_error(name))?;
    let s = dst.as_strided();
    let copy = s.contiguous().is_none().then(|| gather_strided(&s));
    Ok(ContiguousMut { dst, copy })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Matrix;

    fn p(row: usize, plane: usize) -> Pitch {
        Pitch { row, plane }
    }

    #[test]
    fn checks_reject_overlap_short_slices_and_overflow() {
        assert_eq!(p(5, 15).check(&[3, 4], 14), Ok(14));
        assert!(matches!(
            p(3, 9).check(&[3, 4], 100),
            Err(LayoutError::RowPitch { .. })
        ));
        assert!(matches!(
            p(5, 15).check(&[3, 4], 13),
            Err(LayoutError::TooShort { .. })
        ));
        assert!(matches!(
            p(5, 14).check(&[2, 3, 4], 99),
            Err(LayoutError::PlanePitch { .. })
        ));
        assert!(matches!(
            p(5, 16).check(&[2, 3, 4], 99),
            Err(LayoutError::PlanePitch { .. })
        ));
        assert_eq!(p(5, 20).check(&[2, 3, 4], 34), Ok(34));
        let big = usize::MAX / 2;
        assert!(matches!(
            p(big, big).check(&[3, 4], usize::MAX),
            Err(LayoutError::Overflow { .. })
        ));
        assert!(p(4, 0).check(&[usize::MAX, 3, 4], 1).is_err());
        assert_eq!(p(4, 0).check(&[0, 4], 0), Ok(0));
        assert_eq!(p(7, 7).check(&[1, 4], 4), Ok(4));
    }

    #[test]
    fn contiguity_and_row_starts() {
        assert!(Pitch::contiguous(&[2, 3, 4]).is_contiguous(&[2, 3, 4]));
        assert!(!p(5, 15).is_contiguous(&[3, 4]));
        assert!(p(9, 9).is_contiguous(&[1, 4]));
        assert!(!p(4, 16).is_contiguous(&[2, 3, 4]));
        let starts: Vec<usize> = p(5, 20).row_starts(&[2, 2, 3]).collect();
        assert_eq!(starts, [0, 5, 20, 25]);
        assert_eq!(p(5, 20).row_starts(&[2, 0, 3]).count(), 0);
    }

    #[test]
    fn gather_scatter_round_trip() {
        let src: Vec<i32> = (0..20).collect();
        let s = Strided::of_slice(&[3, 2], p(7, 21), &src).unwrap();
        assert!(s.owns_gaps() && s.contiguous().is_none());
        let g = gather_strided(&s);
        assert_eq!(g, [0, 1, 7, 8, 14, 15]);
        let mut dst = vec![-1; 16];
        let mut d = StridedMut::of_slice(&[3, 2], p(7, 21), &mut dst).unwrap();
        let mut rows = g.chunks_exact(2);
        d.for_each_row(|r| r.copy_from_slice(rows.next().unwrap()));
        assert_eq!(dst[..9], [0, 1, -1, -1, -1, -1, -1, 7, 8]);
        assert!(StridedMut::of_slice(&[3, 2], p(7, 21), &mut dst[..15]).is_err());
    }

    #[test]
    fn strided_elements_check_their_layout() {
        let data: Vec<u8> = (0..30).collect();
        // SAFETY: the rows of 3 elements 10 apart lie in `data`.
        let s = unsafe { Strided::new(data.as_ptr(), &[3, 3], p(10, 30)) }.unwrap();
        assert!(!s.owns_gaps());
        let rows: Vec<&[u8]> = s.rows().collect();
        assert_eq!(rows, [&[0, 1, 2][..], &[10, 11, 12], &[20, 21, 22]]);
        assert_eq!(s.span(), 23);
        // SAFETY: refused before any access.
        let bad = unsafe { Strided::new(data.as_ptr(), &[3, 3], p(2, 6)) };
        assert!(matches!(bad, Err(LayoutError::RowPitch { .. })));
        let m = Matrix::copy_of(&s).unwrap();
        assert_eq!(m.as_slice(), &[0, 1, 2, 10, 11, 12, 20, 21, 22]);
    }

    #[test]
    fn sub_regions() {
        let c = Pitch::contiguous(&[4, 6]);
        assert_eq!(c.sub(&[4, 6], 1, 2, 2, 3), Ok((vec![2, 3], 8)));
        assert!(c.sub(&[4, 6], 3, 0, 2, 1).is_err());
        assert!(c.sub(&[4, 6], 0, 5, 1, 2).is_err());
        assert!(c.sub(&[4, 6], usize::MAX, 0, 2, 1).is_err());
        assert_eq!(c.sub(&[4, 6], 4, 6, 0, 0), Ok((vec![0, 0], 0)));
        assert_eq!(
            Pitch::contiguous(&[7]).sub(&[7], 0, 2, 1, 3),
            Ok((vec![3], 2))
        );
        assert!(Pitch::contiguous(&[7]).sub(&[7], 0, 2, 2, 3).is_err());
    }
}
