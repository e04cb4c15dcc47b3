/// An element type a ParaC matrix can hold: the types of the language (u8, i8, u16, i16, u32,
/// i32, f32).
pub trait Element: Copy + Default + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    /// The type's name in ParaC (and in Rust).
    const NAME: &'static str;
}

macro_rules! element {
    ($($t:ty),*) => {$(impl Element for $t { const NAME: &'static str = stringify!($t); })*};
}
element!(u8, i8, u16, i16, u32, i32, f32);

/// A dense host matrix of 1 to 3 dimensions, row-major, contiguous.
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

/// Read access to a matrix's shape and elements: implemented by [`Matrix`] and by the
/// zero-copy views [`MatrixView`] and [`MatrixViewMut`]. Pipeline functions take their inputs
/// as `&impl MatrixRef<T>`, so existing memory can be passed without a copy.
pub trait MatrixRef<T: Element> {
    /// The shape, outermost dimension first.
    fn shape(&self) -> &[usize];
    /// The elements, row-major, contiguous.
    fn as_slice(&self) -> &[T];
}

/// Write access as well: pipeline outputs are `&mut impl MatrixMut<T>`.
pub trait MatrixMut<T: Element>: MatrixRef<T> {
    /// The elements, row-major, contiguous, mutable.
    fn as_mut_slice(&mut self) -> &mut [T];
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

impl<T: Element, M: MatrixRef<T> + ?Sized> MatrixRef<T> for &M {
    fn shape(&self) -> &[usize] {
        (**self).shape()
    }
    fn as_slice(&self) -> &[T] {
        (**self).as_slice()
    }
}

impl<T: Element, M: MatrixRef<T> + ?Sized> MatrixRef<T> for &mut M {
    fn shape(&self) -> &[usize] {
        (**self).shape()
    }
    fn as_slice(&self) -> &[T] {
        (**self).as_slice()
    }
}

impl<T: Element, M: MatrixMut<T> + ?Sized> MatrixMut<T> for &mut M {
    fn as_mut_slice(&mut self) -> &mut [T] {
        (**self).as_mut_slice()
    }
}

/// A zero-copy, read-only matrix over a slice (for example a decoded image's buffer).
#[derive(Clone, Debug)]
pub struct MatrixView<'a, T> {
    shape: Vec<usize>,
    data: &'a [T],
}

impl<'a, T: Element> MatrixView<'a, T> {
    /// A view of `data` as a matrix of `shape` (row-major); `None` if the lengths differ.
    pub fn new(shape: impl Into<Vec<usize>>, data: &'a [T]) -> Option<Self> {
        let shape = shape.into();
        (shape.iter().product::<usize>() == data.len()).then_some(MatrixView { shape, data })
    }
}

impl<T: Element> MatrixRef<T> for MatrixView<'_, T> {
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn as_slice(&self) -> &[T] {
        self.data
    }
}

/// A zero-copy, writable matrix over a mutable slice: a pipeline writes its output straight
/// into existing memory.
#[derive(Debug)]
pub struct MatrixViewMut<'a, T> {
    shape: Vec<usize>,
    data: &'a mut [T],
}

impl<'a, T: Element> MatrixViewMut<'a, T> {
    /// A view of `data` as a matrix of `shape` (row-major); `None` if the lengths differ.
    pub fn new(shape: impl Into<Vec<usize>>, data: &'a mut [T]) -> Option<Self> {
        let shape = shape.into();
        (shape.iter().product::<usize>() == data.len()).then_some(MatrixViewMut { shape, data })
    }
}

impl<T: Element> MatrixRef<T> for MatrixViewMut<'_, T> {
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn as_slice(&self) -> &[T] {
        self.data
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
}
