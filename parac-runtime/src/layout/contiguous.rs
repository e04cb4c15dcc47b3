//! The CPU path's inputs and outputs as contiguous slices ([`Contiguous`], [`ContiguousMut`]):
//! the caller's own elements where they are contiguous, else a copy gathered row by row (and,
//! for an output, copied back when dropped).

use std::borrow::Cow;

use super::strided::{Strided, StridedMut};
use super::{checked, checked_mut, layout_error};
use crate::{Element, Error, MatrixMut, MatrixRef};

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
