//! Helpers of the code the CPU back end printed from the loop IR emits (`parac::__private::cpu`):
//! the checked position of an index in a matrix, and the `Error::OutOfBounds` it reports. They
//! are generic and `#[inline]`, so the emitted loops compile as if they were written out.

use crate::error::Error;
use std::ops::Range;

/// The row-major offset of `index` in a matrix of dimensions `dims`, or the index itself when
/// one of its components is outside (for the error).
#[inline(always)]
pub fn at<const N: usize>(index: [i64; N], dims: &[i64; N]) -> Result<usize, [i64; N]> {
    let mut lin = 0i64;
    for k in 0..N {
        if index[k] < 0 || index[k] >= dims[k] {
            return Err(index);
        }
        lin = lin * dims[k] + index[k];
    }
    Ok(lin as usize)
}

/// As [`at`], but the offset inside the index's row (dimensions after the first), for a task
/// that owns that row; `row` is false where the task's row is missing (an empty slice).
#[inline(always)]
pub fn row_at<const N: usize>(
    index: [i64; N],
    dims: &[i64; N],
    row: bool,
) -> Result<usize, [i64; N]> {
    let mut lin = 0i64;
    for k in 0..N {
        if index[k] < 0 || index[k] >= dims[k] {
            return Err(index);
        }
        if k > 0 {
            lin = lin * dims[k] + index[k];
        }
    }
    if row { Ok(lin as usize) } else { Err(index) }
}

/// The error of an access outside its matrix.
#[cold]
#[inline(never)]
pub fn out_of_bounds(
    function: &'static str,
    region: &'static str,
    what: &'static str,
    matrix: &'static str,
    index: &[i64],
    dims: &[i64],
) -> Error {
    Error::OutOfBounds {
        function,
        region,
        what,
        matrix,
        index: index.to_vec(),
        shape: dims.iter().map(|d| *d as usize).collect(),
    }
}

/// The error of an integer division or remainder by zero.
#[cold]
#[inline(never)]
pub fn division_by_zero(function: &'static str, region: &'static str) -> Error {
    Error::DivisionByZero { function, region }
}

/// The positions of `n` elements of a matrix of dimensions `dims` from `index` along its last
/// dimension, or `None` where one of them is outside (the CPU back end's slices).
#[inline]
pub fn span<const N: usize>(index: [i64; N], dims: &[i64; N], n: usize) -> Option<Range<usize>> {
    offset(index, dims, n, 0)
}

/// As [`span`], but inside the index's row (dimensions after the first), for a task that owns
/// that row.
#[inline]
pub fn row_span<const N: usize>(
    index: [i64; N],
    dims: &[i64; N],
    n: usize,
) -> Option<Range<usize>> {
    offset(index, dims, n, 1)
}

#[inline]
fn offset<const N: usize>(
    index: [i64; N],
    dims: &[i64; N],
    n: usize,
    from: usize,
) -> Option<Range<usize>> {
    let n64 = i64::try_from(n).ok()?;
    let mut lin = 0i64;
    for k in 0..N {
        let end = if k + 1 == N {
            index[k].checked_add(n64)?
        } else {
            index[k].checked_add(1)?
        };
        if index[k] < 0 || end > dims[k] {
            return None;
        }
        if k >= from {
            lin = lin.checked_mul(dims[k])?.checked_add(index[k])?;
        }
    }
    let start = usize::try_from(lin).ok()?;
    Some(start..start.checked_add(n)?)
}
