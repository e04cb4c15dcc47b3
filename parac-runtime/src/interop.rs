//! [`MatrixRef`]/[`MatrixMut`] for the Rust image ecosystem's containers, without copies:
//! `image`'s gray images (feature `image`, on by default) and `ndarray`'s arrays and views of
//! 1 to 3 dimensions (feature `ndarray`).
//!
//! An `ndarray` view whose rows or planes are apart (`big.slice(s![10..522, 20..532])`, an
//! `ArrayView2` or `ArrayViewMut2` of a larger array) is taken as it is too, but not as a
//! slice: a `&[T]` from its first element to its last would cover the elements between its
//! rows, which another view may borrow mutably (`multi_slice_mut`, `split_at`). Its
//! [`elements`](MatrixRef::elements) are [`Strided`](crate::Strided): a pointer and the
//! strides as pitches, through which the runtime touches only the view's own elements — row by
//! row on the CPU path (copied into a contiguous buffer and, for an output, back), with one
//! rectangle copy each way on an OpenCL device, and in place on a CPU OpenCL device (PoCL),
//! whose kernels index the host's rows with their pitch (see `Device::input` for why only
//! there). Its `as_slice` is empty.
//!
//! A layout no matrix has (a last axis that is not contiguous, as in a transposed view;
//! negative strides, as in a reversed one) is refused with `Error::Layout`; pass
//! `a.as_standard_layout()` (a copy).

#[cfg(feature = "image")]
mod image_impl {
    use std::collections::HashSet;
    use std::ops::{Deref, DerefMut};
    use std::sync::{Mutex, PoisonError};

    use image::{ImageBuffer, Luma, Primitive};

    use crate::{Element, MatrixMut, MatrixRef};

    /// The shape `[height][width]` as a slice that lives as long as the process: an image
    /// stores its size as two `u32`s, and `MatrixRef::shape` borrows. Each distinct size is
    /// stored once per process (16 bytes).
    fn shape_of(height: u32, width: u32) -> &'static [usize] {
        static SHAPES: Mutex<Option<HashSet<&'static [usize; 2]>>> = Mutex::new(None);
        let key = [height as usize, width as usize];
        let mut shapes = SHAPES.lock().unwrap_or_else(PoisonError::into_inner);
        let shapes = shapes.get_or_insert_with(HashSet::new);
        if let Some(s) = shapes.get(&key) {
            return &s[..];
        }
        let s: &'static [usize; 2] = Box::leak(Box::new(key));
        shapes.insert(s);
        &s[..]
    }

    /// A gray image is a `[height][width]` matrix over its own buffer.
    impl<T: Element + Primitive, C: Deref<Target = [T]>> MatrixRef<T> for ImageBuffer<Luma<T>, C> {
        fn shape(&self) -> &[usize] {
            shape_of(self.height(), self.width())
        }
        fn as_slice(&self) -> &[T] {
            self
        }
    }

    impl<T: Element + Primitive, C: DerefMut<Target = [T]>> MatrixMut<T> for ImageBuffer<Luma<T>, C> {
        fn as_mut_slice(&mut self) -> &mut [T] {
            self
        }
    }
}

#[cfg(feature = "ndarray")]
mod ndarray_impl {
    use ndarray::{ArrayBase, ArrayRef, Data, DataMut, Dimension};

    use crate::{
        Element, Elements, ElementsMut, LayoutError, MatrixMut, MatrixRef, Pitch, Strided,
        StridedMut,
    };

    /// The layout of an array of `shape` with element `strides`: rows and planes apart by
    /// positive strides, the last dimension contiguous (the stride of a dimension of length 0
    /// or 1 does not matter). Checked against the shape.
    fn pitch_of(shape: &[usize], strides: &[isize]) -> Result<Pitch, LayoutError> {
        let n = shape.len();
        if n == 0 || n > 3 {
            return Err(LayoutError::Rank(n));
        }
        let bad = || LayoutError::Strides {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
        };
        let stride = |k: usize| match shape[k] {
            0 | 1 => Ok(None),
            _ => usize::try_from(strides[k]).map(Some).map_err(|_| bad()),
        };
        let cols = shape[n - 1];
        if stride(n - 1)?.is_some_and(|s| s != 1) {
            return Err(bad());
        }
        let rows = if n >= 2 { shape[n - 2] } else { 1 };
        let row = if n >= 2 {
            stride(n - 2)?.unwrap_or(cols)
        } else {
            cols
        };
        let plane = match n {
            3 => stride(0)?.unwrap_or(rows.saturating_mul(row)),
            _ => rows.saturating_mul(row),
        };
        let pitch = Pitch { row, plane };
        pitch.check(shape, usize::MAX)?;
        Ok(pitch)
    }

    /// An array of 1 to 3 dimensions is a matrix of its shape over its own elements: in
    /// standard layout as a slice, otherwise (rows or planes apart, as in a slice of a larger
    /// array, whose gaps other views may borrow) as [`Strided`] elements, a pointer and the
    /// strides as pitches, which no slice covers; its `as_slice` is then empty.
    impl<T: Element, S: Data<Elem = T>, D: Dimension> MatrixRef<T> for ArrayBase<S, D> {
        fn shape(&self) -> &[usize] {
            let a: &ArrayRef<T, D> = self;
            a.shape()
        }
        fn as_slice(&self) -> &[T] {
            let a: &ArrayRef<T, D> = self;
            a.as_slice().unwrap_or(&[])
        }
        fn row_pitch(&self) -> usize {
            let a: &ArrayRef<T, D> = self;
            match pitch_of(a.shape(), a.strides()) {
                Ok(p) if !a.is_standard_layout() => p.row,
                _ => Pitch::contiguous(a.shape()).row,
            }
        }
        fn plane_pitch(&self) -> usize {
            let a: &ArrayRef<T, D> = self;
            match pitch_of(a.shape(), a.strides()) {
                Ok(p) if !a.is_standard_layout() => p.plane,
                _ => Pitch::contiguous(a.shape()).plane,
            }
        }
        fn elements(&self) -> Elements<'_, T> {
            let a: &ArrayRef<T, D> = self;
            if let Some(s) = a.as_slice() {
                return Elements::Slice(s);
            }
            let pitch = match pitch_of(a.shape(), a.strides()) {
                Ok(p) => p,
                Err(e) => return Elements::Refused(e),
            };
            // SAFETY: the array's elements are its shape's indices at `ptr + Σ index * stride`,
            // which for positive strides, the last 1, is `ptr + c * plane + i * row + k`: each
            // is valid for reads for the borrow of `self`, initialized, and not written while
            // `&self` lives (an array or view borrowed shared). The memory between the rows is
            // not claimed.
            match unsafe { Strided::new(a.as_ptr(), a.shape(), pitch) } {
                Ok(s) => Elements::Strided(s),
                Err(e) => Elements::Refused(e),
            }
        }
    }

    impl<T: Element, S: DataMut<Elem = T>, D: Dimension> MatrixMut<T> for ArrayBase<S, D> {
        fn as_mut_slice(&mut self) -> &mut [T] {
            let a: &mut ArrayRef<T, D> = self;
            a.as_slice_mut().unwrap_or(&mut [])
        }
        fn elements_mut(&mut self) -> ElementsMut<'_, T> {
            let a: &mut ArrayRef<T, D> = self;
            if a.is_standard_layout() {
                return ElementsMut::Slice(a.as_slice_mut().unwrap_or(&mut []));
            }
            let (shape, pitch) = (a.shape().to_vec(), pitch_of(a.shape(), a.strides()));
            let pitch = match pitch {
                Ok(p) => p,
                Err(e) => return ElementsMut::Refused(e),
            };
            // SAFETY: as for `elements`; the array is borrowed mutably for the result's
            // lifetime, so its elements (which a mutable array or view never aliases) are the
            // borrower's alone. `as_mut_ptr` makes shared data unique first (`ArcArray`).
            match unsafe { StridedMut::new(a.as_mut_ptr(), &shape, pitch) } {
                Ok(s) => ElementsMut::Strided(s),
                Err(e) => ElementsMut::Refused(e),
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use ndarray::{Array2, Array3, s};

        #[test]
        fn strides_become_pitches() {
            let big = Array2::<u8>::zeros((10, 12));
            let v = big.slice(s![2..5, 3..7]);
            assert_eq!(
                pitch_of(v.shape(), v.strides()),
                Ok(Pitch { row: 12, plane: 36 })
            );
            assert!(matches!(v.elements(), Elements::Strided(_)));
            assert!(MatrixRef::as_slice(&v).is_empty());
            let t = big.t();
            assert!(matches!(
                t.elements(),
                Elements::Refused(LayoutError::Strides { .. })
            ));
            let rev = big.slice(s![..;-1, ..]);
            assert!(matches!(rev.elements(), Elements::Refused(_)));
            let a3 = Array3::<u16>::zeros((2, 6, 5));
            let v3 = a3.slice(s![.., 1..4, 1..3]);
            assert_eq!(
                pitch_of(v3.shape(), v3.strides()),
                Ok(Pitch { row: 5, plane: 30 })
            );
            // One row: its stride does not matter.
            let one = big.slice(s![4..5, 2..6]);
            assert!(matches!(one.elements(), Elements::Slice(_)));
        }
    }
}
