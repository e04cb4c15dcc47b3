//! How a matrix's elements lie in the slice that holds them ([`Pitch`]): contiguous row-major,
//! or rows (and planes) a fixed number of elements apart, as in a region of interest of a
//! larger image or a strided `ndarray` view. The last dimension is always contiguous.
//!
//! Every consumer checks a layout against its slice ([`Pitch::check`]) before touching memory:
//! a pitch smaller than a row, a slice too short for the last row, or a size that overflows is
//! a [`LayoutError`], never an access outside the slice.

mod contiguous;
mod strided;
#[cfg(test)]
mod tests;

pub(crate) use contiguous::gather_strided;
pub use contiguous::{Contiguous, ContiguousMut, contiguous, contiguous_mut};
pub use strided::{Strided, StridedMut};

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
pub(crate) fn dims(shape: &[usize]) -> Option<(usize, usize, usize)> {
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
        if planes > 1 && (self.plane < plane_rows || !self.plane.is_multiple_of(self.row)) {
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

/// `Error::Layout` of matrix `name`.
pub(crate) fn layout_error(name: &'static str) -> impl Fn(LayoutError) -> Error {
    move |source| Error::Layout {
        matrix: name,
        source,
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
