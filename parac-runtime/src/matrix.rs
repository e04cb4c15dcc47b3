use crate::layout::{Elements, ElementsMut, LayoutError, Pitch};

/// An element type a ParaC matrix can hold: the types of the language (u8, i8, u16, i16, u32,
/// i32, f32). Plain old data ([`bytemuck::Pod`]: every bit pattern a value, no padding), so
/// that matrices cross to and from devices byte for byte.
pub trait Element: bytemuck::Pod + Default + Send + Sync + PartialEq + std::fmt::Debug {
    /// The type's name in ParaC (and in Rust).
    const NAME: &'static str;
}

macro_rules! element {
    ($($t:ty),*) => {$(impl Element for $t { const NAME: &'static str = stringify!($t); })*};
}
element!(u8, i8, u16, i16, u32, i32, f32);

/// A dense host matrix, row-major and contiguous, owning its elements: the usual input and
/// output of a pipeline function. Pipelines take matrices of 1 to 3 dimensions (`[N]`,
/// `[M][N]`, `[C][M][N]`); the shape is not checked here, each call checks it against the
/// function's declaration ([`Error::Shape`](crate::Error::Shape),
/// [`Error::Rank`](crate::Error::Rank)).
///
/// # Examples
///
/// ```
/// use parac_runtime::Matrix;
///
/// let mut m = Matrix::<u8>::zeros([2, 3]);
/// m.set(&[1, 2], 7);
/// assert_eq!((m.rows(), m.cols()), (2, 3));
/// assert_eq!(m.as_slice(), &[0, 0, 0, 0, 0, 7]);
///
/// // Existing data, row by row; `None` if it does not fill the shape.
/// let m = Matrix::from_vec([2, 2], vec![1u16, 2, 3, 4]).unwrap();
/// assert_eq!(m.get(&[1, 0]), 3);
/// assert!(Matrix::from_vec([2, 2], vec![1u16, 2, 3]).is_none());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix<T> {
    shape: Vec<usize>,
    data: Vec<T>,
}

impl<T: Element> Matrix<T> {
    /// A matrix of the given shape filled with zeros.
    pub fn zeros(shape: impl Into<Vec<usize>>) -> Self {
        let shape = shape.into();
        let n = shape.iter().product();
        Matrix {
            shape,
            data: vec![T::default(); n],
        }
    }

    /// A matrix over existing data; `None` if the length does not match the shape.
    pub fn from_vec(shape: impl Into<Vec<usize>>, data: Vec<T>) -> Option<Self> {
        let shape = shape.into();
        (shape.iter().product::<usize>() == data.len()).then_some(Matrix { shape, data })
    }

    /// The shape, outermost dimension first.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The elements, row-major.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The elements, row-major, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }

    /// A matrix of the given shape whose element at each index is `f(index)`; `f` is called
    /// once per element, in row-major order (the last index varies fastest).
    ///
    /// ```
    /// # use parac_runtime::Matrix;
    /// let m = Matrix::<i32>::from_fn([2, 3], |i| (10 * i[0] + i[1]) as i32);
    /// assert_eq!(m.as_slice(), &[0, 1, 2, 10, 11, 12]);
    /// ```
    pub fn from_fn(shape: impl Into<Vec<usize>>, mut f: impl FnMut(&[usize]) -> T) -> Self {
        let shape = shape.into();
        let n: usize = shape.iter().product();
        let mut data = Vec::with_capacity(n);
        let mut idx = vec![0; shape.len()];
        for _ in 0..n {
            data.push(f(&idx));
            // Advance the index like an odometer, last dimension first.
            for d in (0..shape.len()).rev() {
                idx[d] += 1;
                if idx[d] < shape[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        Matrix { shape, data }
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether the matrix has no element (some dimension is 0).
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The number of rows: the next-to-last dimension (`M` of `[M][N]` and of `[C][M][N]`); 1 for
    /// a vector.
    pub fn rows(&self) -> usize {
        match self.shape.len() {
            0 | 1 => 1,
            n => self.shape[n - 2],
        }
    }

    /// The number of columns: the last dimension (`N` of `[M][N]` and of `[C][M][N]`); 1 for a
    /// matrix without dimensions.
    pub fn cols(&self) -> usize {
        self.shape.last().copied().unwrap_or(1)
    }

    /// The row-major offset of `idx` in [`as_slice`](Self::as_slice), or `None` if `idx` does not
    /// have one index per dimension or an index is out of range.
    pub fn offset(&self, idx: &[usize]) -> Option<usize> {
        if idx.len() != self.shape.len() {
            return None;
        }
        let mut off = 0;
        for (&i, &d) in idx.iter().zip(&self.shape) {
            if i >= d {
                return None;
            }
            off = off * d + i;
        }
        Some(off)
    }

    /// The index of the element at row-major `offset` (the inverse of [`offset`](Self::offset)).
    ///
    /// # Panics
    /// If `offset >= self.len()`.
    pub fn index_of(&self, offset: usize) -> Vec<usize> {
        assert!(
            offset < self.data.len(),
            "offset {offset} outside a matrix of {} elements",
            self.data.len()
        );
        let mut idx = vec![0; self.shape.len()];
        let mut rest = offset;
        for d in (0..self.shape.len()).rev() {
            idx[d] = rest % self.shape[d];
            rest /= self.shape[d];
        }
        idx
    }

    /// The element at `idx`, or `None` if `idx` is not a valid index (wrong number of indices or
    /// one out of range).
    pub fn try_get(&self, idx: &[usize]) -> Option<T> {
        self.offset(idx).map(|o| self.data[o])
    }

    /// The element at `idx` (one index per dimension, outermost first).
    ///
    /// # Panics
    /// If `idx` has the wrong number of indices or one is out of range.
    pub fn get(&self, idx: &[usize]) -> T {
        match self.offset(idx) {
            Some(o) => self.data[o],
            None => panic!("index {idx:?} outside a matrix of shape {:?}", self.shape),
        }
    }

    /// Stores `value` at `idx` (one index per dimension, outermost first).
    ///
    /// # Panics
    /// If `idx` has the wrong number of indices or one is out of range.
    pub fn set(&mut self, idx: &[usize], value: T) {
        match self.offset(idx) {
            Some(o) => self.data[o] = value,
            None => panic!("index {idx:?} outside a matrix of shape {:?}", self.shape),
        }
    }

    /// A matrix of the same shape with `f` applied to every element.
    pub fn map<U: Element>(&self, f: impl FnMut(T) -> U) -> Matrix<U> {
        Matrix {
            shape: self.shape.clone(),
            data: self.data.iter().copied().map(f).collect(),
        }
    }

    /// The elements, row-major, by value.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// Plane `c` of a 3-D matrix `[C][M][N]`, as a 2-D matrix `[M][N]`.
    ///
    /// # Panics
    /// If the matrix is not 3-D or `c` is out of range.
    pub fn plane(&self, c: usize) -> Matrix<T> {
        assert!(
            self.shape.len() == 3 && c < self.shape[0],
            "plane {c} of a matrix of shape {:?}",
            self.shape
        );
        let (m, n) = (self.shape[1], self.shape[2]);
        Matrix {
            shape: vec![m, n],
            data: self.data[c * m * n..(c + 1) * m * n].to_vec(),
        }
    }

    /// Stacks 2-D matrices of one shape `[M][N]` into a 3-D matrix `[C][M][N]` (planar); `None`
    /// if there is no plane, or the planes are not all 2-D of the same shape.
    pub fn from_planes(planes: &[Matrix<T>]) -> Option<Self> {
        let first = planes.first()?;
        if first.shape.len() != 2 || planes.iter().any(|p| p.shape != first.shape) {
            return None;
        }
        let shape = vec![planes.len(), first.shape[0], first.shape[1]];
        let data = planes.iter().flat_map(|p| p.data.iter().copied()).collect();
        Some(Matrix { shape, data })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_vec_checks_length() {
        assert!(Matrix::<u8>::from_vec([2, 3], vec![0; 6]).is_some());
        assert!(Matrix::<u8>::from_vec([2, 3], vec![0; 5]).is_none());
        assert_eq!(Matrix::<f32>::zeros([2, 2]).as_slice(), &[0.0; 4]);
    }

    #[test]
    fn from_fn_is_row_major() {
        let m = Matrix::<i32>::from_fn([2, 3, 4], |i| (100 * i[0] + 10 * i[1] + i[2]) as i32);
        assert_eq!(m.shape(), &[2, 3, 4]);
        assert_eq!(m.len(), 24);
        assert_eq!(m.as_slice()[0..5], [0, 1, 2, 3, 10]);
        assert_eq!(m.as_slice()[23], 123);
        for off in 0..m.len() {
            let idx = m.index_of(off);
            assert_eq!(m.offset(&idx), Some(off));
            assert_eq!(m.get(&idx), m.as_slice()[off]);
        }
        let calls = std::cell::Cell::new(0);
        let e = Matrix::<u8>::from_fn([0, 5], |_| {
            calls.set(calls.get() + 1);
            1
        });
        assert!(e.is_empty());
        assert_eq!(calls.get(), 0);
    }

    #[test]
    fn get_set_and_bounds() {
        let mut m = Matrix::<i16>::zeros([3, 2]);
        m.set(&[2, 1], -7);
        assert_eq!(m.get(&[2, 1]), -7);
        assert_eq!(m.as_slice(), &[0, 0, 0, 0, 0, -7]);
        assert_eq!(m.try_get(&[3, 0]), None);
        assert_eq!(m.try_get(&[0, 2]), None);
        assert_eq!(m.try_get(&[0]), None);
        assert_eq!(m.try_get(&[0, 0, 0]), None);
        assert_eq!(m.offset(&[1, 1]), Some(3));
    }

    #[test]
    #[should_panic(expected = "outside a matrix of shape [3, 2]")]
    fn get_out_of_range_panics() {
        Matrix::<u8>::zeros([3, 2]).get(&[1, 2]);
    }

    #[test]
    #[should_panic(expected = "outside a matrix of shape [3, 2]")]
    fn set_with_wrong_rank_panics() {
        Matrix::<u8>::zeros([3, 2]).set(&[1], 0);
    }

    #[test]
    fn rows_and_cols_are_the_last_two_dimensions() {
        let v = Matrix::<u8>::zeros([7]);
        assert_eq!((v.ndim(), v.rows(), v.cols()), (1, 1, 7));
        let m = Matrix::<u8>::zeros([4, 5]);
        assert_eq!((m.ndim(), m.rows(), m.cols()), (2, 4, 5));
        let c = Matrix::<f32>::zeros([3, 4, 5]);
        assert_eq!((c.ndim(), c.rows(), c.cols()), (3, 4, 5));
    }

    #[test]
    fn map_keeps_the_shape() {
        let m = Matrix::<u8>::from_vec([2, 2], vec![0, 1, 254, 255]).unwrap();
        let s = m.map(|v| v as i16 - 128);
        assert_eq!(s.shape(), &[2, 2]);
        assert_eq!(s.as_slice(), &[-128, -127, 126, 127]);
        assert_eq!(m.map(|v| v.wrapping_add(1)).into_vec(), vec![1, 2, 255, 0]);
    }

    #[test]
    fn planes_split_and_stack() {
        let m = Matrix::<f32>::from_fn([3, 2, 2], |i| (i[0] * 4 + i[1] * 2 + i[2]) as f32);
        let p1 = m.plane(1);
        assert_eq!(p1.shape(), &[2, 2]);
        assert_eq!(p1.as_slice(), &[4.0, 5.0, 6.0, 7.0]);
        let planes: Vec<_> = (0..3).map(|c| m.plane(c)).collect();
        assert_eq!(Matrix::from_planes(&planes), Some(m));
        assert_eq!(Matrix::<f32>::from_planes(&[]), None);
        let odd = [Matrix::<f32>::zeros([2, 2]), Matrix::zeros([2, 3])];
        assert_eq!(Matrix::from_planes(&odd), None);
        assert_eq!(Matrix::from_planes(&[Matrix::<f32>::zeros([4])]), None);
    }
}

/// Read access to a matrix's shape and elements: implemented by [`Matrix`], by the zero-copy
/// views [`MatrixView`] and [`MatrixViewMut`] (contiguous, pitched, or a region of interest of
/// a larger matrix), and, behind the features `image` and `ndarray`, by `image`'s gray images
/// and `ndarray`'s arrays. Pipeline functions take their inputs as `&impl MatrixRef<T>`, so
/// existing memory can be passed without a copy.
///
/// The layout: row `i` of plane `c` starts at `c * plane_pitch() + i * row_pitch()` in
/// [`as_slice`](Self::as_slice), and its elements follow one another. Contiguous row-major is
/// the default. Every consumer checks the layout against the slice ([`Pitch::check`]) before
/// reading: an implementation whose pitches do not fit its slice gets `Error::Layout`, never
/// an access outside the slice.
pub trait MatrixRef<T: Element> {
    /// The shape, outermost dimension first.
    fn shape(&self) -> &[usize];
    /// The elements from the first to the last (row-major, with gaps between rows where
    /// [`row_pitch`](Self::row_pitch) exceeds the row).
    fn as_slice(&self) -> &[T];
    /// Elements from the start of one row to the next (the last dimension by default).
    fn row_pitch(&self) -> usize {
        self.shape().last().copied().unwrap_or(1)
    }
    /// Elements from the start of one plane (`[c]` of `[C][M][N]`) to the next (`M` rows of
    /// [`row_pitch`](Self::row_pitch) by default).
    fn plane_pitch(&self) -> usize {
        let s = self.shape();
        let rows = if s.len() >= 2 { s[s.len() - 2] } else { 1 };
        rows.saturating_mul(self.row_pitch())
    }
    /// The elements as pipelines and transfers read them: by default
    /// [`as_slice`](Self::as_slice) with the pitches. A matrix whose rows (or planes) are apart
    /// with gaps that it does not own (an `ndarray` slice of a larger array, whose gaps another
    /// view may borrow mutably) cannot give a slice that spans them: it returns
    /// [`Elements::Strided`], a pointer and a layout, and its `as_slice` may be empty.
    fn elements(&self) -> Elements<'_, T> {
        Elements::Slice(self.as_slice())
    }
}

/// Write access as well: pipeline outputs are `&mut impl MatrixMut<T>`.
pub trait MatrixMut<T: Element>: MatrixRef<T> {
    /// The elements from the first to the last, mutable (the same layout as
    /// [`as_slice`](MatrixRef::as_slice)).
    fn as_mut_slice(&mut self) -> &mut [T];
    /// The elements as pipelines and transfers write them: by default
    /// [`as_mut_slice`](Self::as_mut_slice); see [`MatrixRef::elements`].
    fn elements_mut(&mut self) -> ElementsMut<'_, T> {
        ElementsMut::Slice(self.as_mut_slice())
    }
}

impl<T: Element> MatrixRef<T> for Matrix<T> {
    fn shape(&self) -> &[usize] {
        Matrix::shape(self)
    }
    fn as_slice(&self) -> &[T] {
        Matrix::as_slice(self)
    }
}

impl<T: Element> MatrixMut<T> for Matrix<T> {
    fn as_mut_slice(&mut self) -> &mut [T] {
        Matrix::as_mut_slice(self)
    }
}

/// `MatrixRef` through a reference: every method forwarded (the layout included).
macro_rules! forward_ref {
    ($($r:ty),*) => {$(
        impl<T: Element, M: MatrixRef<T> + ?Sized> MatrixRef<T> for $r {
            fn shape(&self) -> &[usize] {
                (**self).shape()
            }
            fn as_slice(&self) -> &[T] {
                (**self).as_slice()
            }
            fn row_pitch(&self) -> usize {
                (**self).row_pitch()
            }
            fn plane_pitch(&self) -> usize {
                (**self).plane_pitch()
            }
            fn elements(&self) -> Elements<'_, T> {
                (**self).elements()
            }
        }
    )*};
}
forward_ref!(&M, &mut M);

impl<T: Element, M: MatrixMut<T> + ?Sized> MatrixMut<T> for &mut M {
    fn as_mut_slice(&mut self) -> &mut [T] {
        (**self).as_mut_slice()
    }
    fn elements_mut(&mut self) -> ElementsMut<'_, T> {
        (**self).elements_mut()
    }
}

impl<T: Element> Matrix<T> {
    /// A contiguous copy of any matrix (a strided view, a region of interest, an image): a
    /// typed error if its layout does not fit its slice.
    pub fn copy_of<M: MatrixRef<T> + ?Sized>(m: &M) -> Result<Self, LayoutError> {
        let s = crate::layout::checked(m)?;
        Ok(Matrix {
            shape: m.shape().to_vec(),
            data: crate::layout::gather_strided(&s),
        })
    }

    /// The whole matrix as a view (no copy).
    pub fn view(&self) -> MatrixView<'_, T> {
        MatrixView {
            pitch: Pitch::contiguous(&self.shape),
            shape: self.shape.clone(),
            data: &self.data,
        }
    }

    /// The whole matrix as a writable view (no copy).
    pub fn view_mut(&mut self) -> MatrixViewMut<'_, T> {
        MatrixViewMut {
            pitch: Pitch::contiguous(&self.shape),
            shape: self.shape.clone(),
            data: &mut self.data,
        }
    }

    /// The region of interest `rows x cols` at (`row`, `col`) of every plane, as a view with
    /// this matrix's row pitch (no copy): a pipeline reads it as it is.
    ///
    /// ```
    /// # use parac_runtime::{Matrix, MatrixRef};
    /// let frame = Matrix::<u8>::from_fn([4, 6], |i| (10 * i[0] + i[1]) as u8);
    /// let roi = frame.roi(1, 2, 2, 3).unwrap();
    /// assert_eq!(roi.shape(), &[2, 3]);
    /// assert_eq!(roi.row_pitch(), 6);
    /// assert_eq!(roi.to_matrix().as_slice(), &[12, 13, 14, 22, 23, 24]);
    /// ```
    pub fn roi(
        &self,
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    ) -> Result<MatrixView<'_, T>, LayoutError> {
        self.view().into_roi(row, col, rows, cols)
    }

    /// The region of interest as a writable view (no copy): a pipeline writes its output
    /// straight into that part of this matrix.
    pub fn roi_mut(
        &mut self,
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    ) -> Result<MatrixViewMut<'_, T>, LayoutError> {
        self.view_mut().into_roi(row, col, rows, cols)
    }
}

/// A zero-copy, read-only matrix over a slice (for example a decoded image's buffer, or a
/// region of interest of a larger image: rows [`Pitch::row`] elements apart). Pipeline
/// functions take it wherever they take a matrix, so memory that is not a [`Matrix`] needs no
/// copy.
///
/// # Examples
///
/// ```
/// use parac_runtime::{MatrixRef, MatrixView};
///
/// // Two rows of three elements in a buffer whose rows are four elements apart.
/// let buffer = [1u8, 2, 3, 0, 4, 5, 6, 0];
/// let v = MatrixView::with_pitch([2, 3], 4, &buffer[..]).unwrap();
/// assert_eq!(v.shape(), &[2, 3]);
/// assert_eq!(v.to_matrix().as_slice(), &[1, 2, 3, 4, 5, 6]);
///
/// // A pitch smaller than a row is a typed error, not a view.
/// assert!(MatrixView::with_pitch([2, 3], 2, &buffer[..]).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct MatrixView<'a, T> {
    shape: Vec<usize>,
    pitch: Pitch,
    data: &'a [T],
}

/// A zero-copy, writable matrix over a mutable slice: a pipeline writes its output straight
/// into existing memory (a whole buffer or a region of interest of it).
///
/// # Examples
///
/// ```
/// use parac_runtime::{Matrix, MatrixMut, MatrixViewMut};
///
/// let mut frame = Matrix::<u8>::zeros([3, 4]);
/// // The 2x2 region at row 1, column 1, written through a view (rows 4 elements apart).
/// let mut roi = frame.roi_mut(1, 1, 2, 2).unwrap();
/// roi.as_mut_slice()[0] = 9;
/// assert_eq!(frame.get(&[1, 1]), 9);
///
/// // A view of a plain buffer.
/// let mut buffer = vec![0i16; 6];
/// let mut v = MatrixViewMut::new([2, 3], &mut buffer[..]).unwrap();
/// v.as_mut_slice()[5] = -1;
/// assert_eq!(buffer[5], -1);
/// ```
#[derive(Debug)]
pub struct MatrixViewMut<'a, T> {
    shape: Vec<usize>,
    pitch: Pitch,
    data: &'a mut [T],
}

/// The constructors and accessors both views share.
macro_rules! views {
    ($($view:ident, $slice:ty, $split:ident);*) => {$(
        impl<'a, T: Element> $view<'a, T> {
            /// A view of `data` as a contiguous row-major matrix of `shape`; `None` if the
            /// lengths differ.
            pub fn new(shape: impl Into<Vec<usize>>, data: $slice) -> Option<Self> {
                let shape = shape.into();
                (shape.iter().product::<usize>() == data.len()).then(|| $view {
                    pitch: Pitch::contiguous(&shape),
                    shape,
                    data,
                })
            }

            /// A view of `data` with rows `row_pitch` elements apart (planes `rows *
            /// row_pitch`): a typed error if the pitch is smaller than a row or `data` ends
            /// before the last element. `data` may be longer than the last element.
            pub fn with_pitch(
                shape: impl Into<Vec<usize>>,
                row_pitch: usize,
                data: $slice,
            ) -> Result<Self, LayoutError> {
                let shape = shape.into();
                let rows = if shape.len() >= 2 { shape[shape.len() - 2] } else { 1 };
                let plane = rows.saturating_mul(row_pitch);
                Self::strided(shape, Pitch { row: row_pitch, plane }, data)
            }

            /// A view of `data` with rows and planes as `pitch` says (see
            /// [`with_pitch`](Self::with_pitch)).
            pub fn strided(
                shape: impl Into<Vec<usize>>,
                pitch: Pitch,
                data: $slice,
            ) -> Result<Self, LayoutError> {
                let shape = shape.into();
                if shape.is_empty() || shape.len() > 3 {
                    return Err(LayoutError::Rank(shape.len()));
                }
                let span = pitch.check(&shape, data.len())?;
                let data = $split(data, 0, span);
                Ok($view { shape, pitch, data })
            }

            /// The region of interest `rows x cols` at (`row`, `col`) of every plane (the
            /// last two dimensions), with this view's pitches (no copy).
            pub fn into_roi(
                self,
                row: usize,
                col: usize,
                rows: usize,
                cols: usize,
            ) -> Result<Self, LayoutError> {
                let (shape, offset) = self.pitch.sub(&self.shape, row, col, rows, cols)?;
                let span = self.pitch.check(&shape, self.data.len().saturating_sub(offset))?;
                let data = $split(self.data, offset, span);
                Ok($view { shape, pitch: self.pitch, data })
            }

            /// The layout.
            pub fn pitch(&self) -> Pitch {
                self.pitch
            }

            /// A contiguous copy.
            pub fn to_matrix(&self) -> Matrix<T> {
                Matrix::copy_of(self).expect("a view's layout was checked when it was made")
            }
        }

        impl<T: Element> MatrixRef<T> for $view<'_, T> {
            fn shape(&self) -> &[usize] {
                &self.shape
            }
            fn as_slice(&self) -> &[T] {
                &self.data[..]
            }
            fn row_pitch(&self) -> usize {
                self.pitch.row
            }
            fn plane_pitch(&self) -> usize {
                self.pitch.plane
            }
        }
    )*};
}

fn split_ref<T>(data: &[T], offset: usize, span: usize) -> &[T] {
    &data[offset..offset + span]
}

fn split_mut<T>(data: &mut [T], offset: usize, span: usize) -> &mut [T] {
    &mut data[offset..offset + span]
}

views!(MatrixView, &'a [T], split_ref; MatrixViewMut, &'a mut [T], split_mut);

impl<T: Element> MatrixViewMut<'_, T> {
    /// The region of interest of this view, borrowed (see [`into_roi`](Self::into_roi)).
    pub fn roi_mut(
        &mut self,
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    ) -> Result<MatrixViewMut<'_, T>, LayoutError> {
        MatrixViewMut {
            shape: self.shape.clone(),
            pitch: self.pitch,
            data: &mut *self.data,
        }
        .into_roi(row, col, rows, cols)
    }
}

impl<T: Element> MatrixView<'_, T> {
    /// The region of interest of this view (see [`into_roi`](Self::into_roi)).
    pub fn roi(
        &self,
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    ) -> Result<MatrixView<'_, T>, LayoutError> {
        self.clone().into_roi(row, col, rows, cols)
    }
}

impl<T: Element> MatrixMut<T> for MatrixViewMut<'_, T> {
    fn as_mut_slice(&mut self) -> &mut [T] {
        self.data
    }
}

#[cfg(test)]
mod view_tests {
    use super::*;

    #[test]
    fn views_borrow_without_copying() {
        let data = vec![1u8, 2, 3, 4, 5, 6];
        let v = MatrixView::new([2, 3], &data).unwrap();
        assert_eq!(MatrixRef::shape(&v), &[2, 3]);
        assert!(std::ptr::eq(v.as_slice().as_ptr(), data.as_ptr()));
        assert!(MatrixView::new([4, 2], &data).is_none());
        let mut out = vec![0i16; 4];
        let mut w = MatrixViewMut::new([2, 2], &mut out).unwrap();
        w.as_mut_slice()[3] = 7;
        assert_eq!(out, [0, 0, 0, 7]);
    }

    #[test]
    fn regions_of_interest_keep_the_pitch() {
        let data: Vec<u16> = (0..40).collect();
        let v = MatrixView::with_pitch([3, 4], 10, &data).unwrap();
        assert_eq!(v.as_slice().len(), 24);
        assert_eq!(
            v.to_matrix().as_slice(),
            &[0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23]
        );
        let r = v.roi(1, 1, 2, 2).unwrap();
        assert_eq!((r.shape(), r.row_pitch()), (&[2usize, 2][..], 10));
        assert!(std::ptr::eq(r.as_slice().as_ptr(), &data[11]));
        assert_eq!(r.to_matrix().as_slice(), &[11, 12, 21, 22]);
        assert!(v.roi(2, 0, 2, 1).is_err());
        assert!(MatrixView::with_pitch([3, 4], 3, &data).is_err());
        assert!(MatrixView::with_pitch([5, 4], 10, &data).is_err());
        assert!(MatrixView::with_pitch([2, 2, 2, 2], 2, &data).is_err());
        let planes = Matrix::<u8>::from_fn([2, 3, 4], |i| (100 * i[0] + 10 * i[1] + i[2]) as u8);
        let p = planes.roi(1, 2, 2, 2).unwrap();
        assert_eq!((p.row_pitch(), p.plane_pitch()), (4, 12));
        assert_eq!(
            p.to_matrix().as_slice(),
            &[12, 13, 22, 23, 112, 113, 122, 123]
        );
        let mut big = Matrix::<i32>::zeros([4, 5]);
        let mut w = big.roi_mut(1, 1, 2, 3).unwrap();
        w.as_mut_slice()[7] = 9;
        w.roi_mut(1, 0, 1, 1).unwrap().as_mut_slice()[0] = 4;
        assert_eq!(big.get(&[2, 1]), 4);
        assert_eq!(big.get(&[2, 3]), 9);
        assert_eq!(big.get(&[2, 0]), 0);
    }
}
