//! [`MatrixRef`]/[`MatrixMut`] for the Rust image ecosystem's containers, without copies:
//! `image`'s gray images (feature `image`, on by default) and `ndarray`'s arrays and views of
//! 1 to 3 dimensions in standard (row-major, contiguous) layout (feature `ndarray`).
//!
//! An `ndarray` array or view in another layout (a slice of a larger array with rows apart,
//! reversed or transposed axes) is refused with `Error::Layout` when a pipeline takes it: its
//! slice from the first to the last element could cover elements that another view borrows
//! mutably (`split_at`, `multi_slice_mut`), which a `&[T]` may not. Pass
//! `a.as_standard_layout()` (a copy) instead, or a [`MatrixView::with_pitch`] over memory that
//! the view borrows whole.
//!
//! [`MatrixView::with_pitch`]: crate::MatrixView::with_pitch

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

    use crate::{Element, MatrixMut, MatrixRef};

    /// An array of 1 to 3 dimensions in standard layout is a matrix of its shape over its own
    /// elements; in another layout its slice is empty, which a pipeline refuses
    /// (`Error::Layout`, see the module's documentation).
    impl<T: Element, S: Data<Elem = T>, D: Dimension> MatrixRef<T> for ArrayBase<S, D> {
        fn shape(&self) -> &[usize] {
            let a: &ArrayRef<T, D> = self;
            a.shape()
        }
        fn as_slice(&self) -> &[T] {
            let a: &ArrayRef<T, D> = self;
            a.as_slice().unwrap_or(&[])
        }
    }

    impl<T: Element, S: DataMut<Elem = T>, D: Dimension> MatrixMut<T> for ArrayBase<S, D> {
        fn as_mut_slice(&mut self) -> &mut [T] {
            let a: &mut ArrayRef<T, D> = self;
            a.as_slice_mut().unwrap_or(&mut [])
        }
    }
}
