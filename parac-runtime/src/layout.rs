//! How a matrix's elements lie in the slice that holds them ([`Pitch`]): contiguous row-major,
//! or rows (and planes) a fixed number of elements apart, as in a region of interest of a
//! larger image or a strided `ndarray` view. The last dimension is always contiguous.
//!
//! Every consumer checks a layout against its slice ([`Pitch::check`]) before touching memory:
//! a pitch smaller than a row, a slice too short for the last row, or a size that overflows is
//! a [`LayoutError`], never an access outside the slice.

use std::borrow::Cow;

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
    /// A strided array whose last dimension is not contiguous or whose strides are negative
    /// (`ndarray`): a matrix's rows are contiguous, its rows and planes in increasing order.
    #[error("strides {strides:?} of shape {shape:?}: a matrix needs positive strides, the last 1")]
    Strides {
        /// The shape.
        shape: Vec<usize>,
        /// The strides, in elements.
        strides: Vec<isize>,
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

/// Copies the elements of `shape` laid out as `pitch` in `src` into a new contiguous vector.
pub(crate) fn gather<T: Element>(shape: &[usize], pitch: Pitch, src: &[T]) -> Vec<T> {
    let cols = shape.last().copied().unwrap_or(1);
    let mut out = Vec::with_capacity(shape.iter().product());
    for s in pitch.row_starts(shape) {
        out.extend_from_slice(&src[s..s + cols]);
    }
    out
}

/// Copies contiguous `src` into the elements of `shape` laid out as `pitch` in `dst`.
pub(crate) fn scatter<T: Element>(shape: &[usize], pitch: Pitch, src: &[T], dst: &mut [T]) {
    let cols = shape.last().copied().unwrap_or(1);
    for (row, s) in src.chunks_exact(cols.max(1)).zip(pitch.row_starts(shape)) {
        dst[s..s + cols].copy_from_slice(row);
    }
}

/// Checks `m`'s layout: `Error::Layout` naming the matrix.
pub(crate) fn check_matrix<T: Element, M: MatrixRef<T> + ?Sized>(
    name: &'static str,
    m: &M,
) -> Result<Pitch, Error> {
    let pitch = Pitch::of(m);
    pitch
        .check(m.shape(), m.as_slice().len())
        .map_err(|source| Error::Layout {
            matrix: name,
            source,
        })?;
    Ok(pitch)
}

/// An input of the CPU path as a contiguous slice: the caller's own where it is contiguous,
/// else a copy (a strided view or a region of interest).
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
    let pitch = check_matrix(name, m)?;
    let (shape, data) = (m.shape(), m.as_slice());
    let data = if pitch.is_contiguous(shape) {
        Cow::Borrowed(&data[..shape.iter().product()])
    } else {
        Cow::Owned(gather(shape, pitch, data))
    };
    Ok(Contiguous { shape, data })
}

/// An output of the CPU path as a contiguous slice: the caller's own where it is contiguous,
/// else a copy of its elements that is copied back into it when this is dropped (so also when
/// the call fails half-way, as an output written in place would be).
pub struct ContiguousMut<'a, T: Element> {
    shape: Vec<usize>,
    pitch: Pitch,
    dst: &'a mut [T],
    copy: Option<Vec<T>>,
}

impl<T: Element> ContiguousMut<'_, T> {
    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    /// The elements, row-major, contiguous.
    pub fn as_slice(&self) -> &[T] {
        match &self.copy {
            Some(c) => c,
            None => &self.dst[..self.shape.iter().product()],
        }
    }
    /// The elements, row-major, contiguous, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        match &mut self.copy {
            Some(c) => c,
            None => &mut self.dst[..self.shape.iter().product()],
        }
    }
}

impl<T: Element> Drop for ContiguousMut<'_, T> {
    fn drop(&mut self) {
        if let Some(c) = &self.copy {
            scatter(&self.shape, self.pitch, c, self.dst);
        }
    }
}

/// `m` as a contiguous mutable slice (see [`ContiguousMut`]).
pub fn contiguous_mut<'a, T: Element, M: MatrixMut<T> + ?Sized>(
    m: &'a mut M,
    name: &'static str,
) -> Result<ContiguousMut<'a, T>, Error> {
    let pitch = check_matrix(name, m)?;
    let shape = m.shape().to_vec();
    let dst = m.as_mut_slice();
    // `as_mut_slice` may differ from `as_slice`: check it again.
    pitch
        .check(&shape, dst.len())
        .map_err(|source| Error::Layout {
            matrix: name,
            source,
        })?;
    let copy = (!pitch.is_contiguous(&shape)).then(|| gather(&shape, pitch, dst));
    Ok(ContiguousMut {
        shape,
        pitch,
        dst,
        copy,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let g = gather(&[3, 2], p(7, 21), &src);
        assert_eq!(g, [0, 1, 7, 8, 14, 15]);
        let mut dst = vec![-1; 16];
        scatter(&[3, 2], p(7, 21), &g, &mut dst);
        assert_eq!(dst[..9], [0, 1, -1, -1, -1, -1, -1, 7, 8]);
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
