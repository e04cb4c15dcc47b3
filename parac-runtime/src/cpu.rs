//! Helpers of the code the CPU back end printed from the loop IR emits (`parac::__private::cpu`):
//! the checked position of an index in a matrix, and the `Error::OutOfBounds` it reports; the
//! slices of a partitioned loop's interior; the local matrices' buffers. They are generic and
//! `#[inline]`, so the emitted loops compile as if they were written out.

use crate::Runtime;
use crate::error::Error;
use std::any::Any;
use std::ops::Range;
use std::sync::Mutex;

/// The row-major offset of `index` in a matrix of dimensions `dims`, or the index itself when
/// one of its components is outside (for the error).
#[inline(always)]
pub fn at<const N: usize>(index: [i64; N], dims: &[i64; N]) -> Result<usize, [i64; N]> {
    row_at(index, dims, 0, true)
}

/// The row-major offset of an index proven inside its matrix, with no test (wrapping: an
/// index outside gives some offset, which the caller's `get` refuses or maps to an element).
#[inline(always)]
pub fn lin<const N: usize>(index: [i64; N], dims: &[i64; N]) -> usize {
    let mut l = 0i64;
    for k in 0..N {
        l = l.wrapping_mul(dims[k]).wrapping_add(index[k]);
    }
    l as usize
}

/// As [`at`], but the offset inside the index's row of a plane (the dimensions from `from`:
/// 1 for a matrix's rows, more where leading constant indices pick a plane), for a task that
/// owns that row; `row` is false where the task's row is missing (an empty slice).
#[inline(always)]
pub fn row_at<const N: usize>(
    index: [i64; N],
    dims: &[i64; N],
    from: usize,
    row: bool,
) -> Result<usize, [i64; N]> {
    let mut lin = 0i64;
    for k in 0..N {
        if index[k] < 0 || index[k] >= dims[k] {
            return Err(index);
        }
        if k >= from {
            lin = lin * dims[k] + index[k];
        }
    }
    if row { Ok(lin as usize) } else { Err(index) }
}

/// The positions of the plane of a matrix of dimensions `dims` whose leading indices are
/// `consts` (all of it where there are none), or `None` where one is outside.
pub fn plane(consts: &[i64], dims: &[i64]) -> Option<Range<usize>> {
    let mut lin = 0i64;
    for (c, d) in consts.iter().zip(dims) {
        if *c < 0 || *c >= *d {
            return None;
        }
        lin = lin.checked_mul(*d)?.checked_add(*c)?;
    }
    let len: i64 = dims
        .get(consts.len()..)?
        .iter()
        .try_fold(1i64, |a, d| a.checked_mul((*d).max(0)))?;
    let start = usize::try_from(lin.checked_mul(len)?).ok()?;
    Some(start..start.checked_add(usize::try_from(len).ok()?)?)
}

/// `s` split into the parts `ranges` name, apart (an empty slice for a range that is `None`,
/// outside `s`, or overlaps an earlier one).
pub fn planes_mut<'a, T, const P: usize>(
    s: &'a mut [T],
    ranges: [Option<Range<usize>>; P],
) -> [&'a mut [T]; P] {
    let mut out: [&'a mut [T]; P] = std::array::from_fn(|_| <&mut [T]>::default());
    let mut order: Vec<usize> = (0..P).filter(|i| ranges[*i].is_some()).collect();
    order.sort_by_key(|i| ranges[*i].as_ref().map_or(0, |r| r.start));
    let mut rest: &'a mut [T] = s;
    let mut base = 0usize;
    for i in order {
        let Some(r) = ranges[i].clone() else {
            continue;
        };
        if r.start < base || r.end < r.start || r.end - base > rest.len() {
            continue;
        }
        let tail = std::mem::take(&mut rest);
        let (_, tail) = tail.split_at_mut(r.start - base);
        let (mine, tail) = tail.split_at_mut(r.end - r.start);
        out[i] = mine;
        rest = tail;
        base = r.end;
    }
    out
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

/// As [`span`], but inside the index's row of a plane (the dimensions from `from`, as
/// [`row_at`]), for a task that owns that row.
#[inline]
pub fn row_span<const N: usize>(
    index: [i64; N],
    dims: &[i64; N],
    n: usize,
    from: usize,
) -> Option<Range<usize>> {
    offset(index, dims, n, from)
}

/// The elements of a column: `n` elements of a matrix of dimensions `dims` from `index`, index
/// `k` moving by `step` (1 or -1) from one to the next, the others fixed (a transposed read,
/// `src[y][x]` along `y`). `Some((range, stride))` where all are inside: the range from the
/// lowest of them to the highest, each `stride` apart in it (the first at the range's start
/// where `step` is 1, at its end where it is -1); `None` where one is outside.
#[inline]
pub fn column<const N: usize>(
    mut index: [i64; N],
    dims: &[i64; N],
    k: usize,
    step: i64,
    n: usize,
) -> Option<(Range<usize>, usize)> {
    if n == 0 {
        return Some((0..0, 0));
    }
    let first = *index.get(k)?;
    let last = first.checked_add(step.checked_mul(i64::try_from(n - 1).ok()?)?)?;
    // From the lowest to the highest, each checked as a span of one element.
    index[k] = first.min(last);
    let lowest = offset(index, dims, 1, 0)?;
    index[k] = first.max(last);
    let highest = offset(index, dims, 1, 0)?;
    let stride = usize::try_from(
        dims[k + 1..]
            .iter()
            .try_fold(1i64, |a, d| a.checked_mul(*d))?,
    )
    .ok()?;
    Some((lowest.start..highest.end, stride))
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

/// The buffers of a runtime's local matrices on the CPU path: a call takes one per local matrix
/// and gives it back when it ends, so that the next call reuses the memory instead of mapping
/// (and faulting in) fresh pages. At most [`Scratch::KEEP`] buffers are kept.
#[derive(Default)]
pub struct Scratch {
    pool: Mutex<Vec<Box<dyn Any + Send>>>,
}

impl Scratch {
    /// How many buffers a runtime keeps.
    pub const KEEP: usize = 8;
}

/// A local matrix's elements, given back to its runtime's `Scratch` on drop.
pub struct Local<'a, T: Copy + Default + Send + 'static> {
    data: Vec<T>,
    home: &'a Scratch,
}

impl<T: Copy + Default + Send + 'static> Local<'_, T> {
    /// The elements.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }
    /// The elements, to write.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }
}

impl<T: Copy + Default + Send + 'static> Drop for Local<'_, T> {
    fn drop(&mut self) {
        let data = std::mem::take(&mut self.data);
        if data.capacity() == 0 {
            return;
        }
        if let Ok(mut pool) = self.home.pool.lock()
            && pool.len() < Scratch::KEEP
        {
            pool.push(Box::new(data));
        }
    }
}

/// A local matrix of dimensions `dims` (negative ones count as 0) for a call on `rt`: zeros,
/// or where `whole` (the program writes every element before it reads one,
/// `analysis::written_whole`) whatever a buffer of an earlier call held.
pub fn local<'a, T: Copy + Default + Send + 'static>(
    rt: &'a Runtime,
    dims: &[i64],
    whole: bool,
) -> Local<'a, T> {
    let len: usize = dims.iter().map(|d| (*d).max(0) as usize).product();
    let home = rt.scratch();
    let reused = home.pool.lock().ok().and_then(|mut pool| {
        // The smallest buffer of this type that holds `len`, else the largest one.
        let mut best: Option<(usize, usize)> = None;
        for (i, b) in pool.iter().enumerate() {
            if let Some(v) = b.downcast_ref::<Vec<T>>() {
                let c = v.capacity();
                let better = match best {
                    None => true,
                    Some((_, bc)) => (c >= len && (bc < len || c < bc)) || (bc < len && c > bc),
                };
                if better {
                    best = Some((i, c));
                }
            }
        }
        best.map(|(i, _)| pool.swap_remove(i))
    });
    let mut data: Vec<T> = reused
        .and_then(|b| b.downcast::<Vec<T>>().ok())
        .map(|b| *b)
        .unwrap_or_default();
    if whole {
        data.truncate(len);
    } else {
        data.clear();
    }
    data.resize(len, T::default());
    Local { data, home }
}

/// The tasks of a `LoopKind::Partials` loop of `count` iterations whose private partial results
/// take `bytes` per task on `threads` threads: one per thread, none idle (at least 1024 iterations
/// each), and their partials within 64 MiB together (at least one task). The updates are
/// integer ones, so the number of tasks never changes the result.
pub fn partial_tasks(threads: usize, count: i64, bytes: usize) -> i64 {
    const LEAST: i64 = 1024;
    const BUDGET: usize = 64 << 20;
    if count <= 0 {
        return 0;
    }
    let threads = threads.max(1) as i64;
    let room = (BUDGET / bytes.max(1)).max(1) as i64;
    threads.min(room).min((count + LEAST - 1) / LEAST).max(1)
}

/// The rows of each block of a scan along a region's outer loop of `count` rows
/// (`lir::pass::scan_blocks`) on `threads` threads: one block per thread, of at least 64 rows (a
/// block's first pass and its start's carry cost a row's work each), else one block of all;
/// at most `i32::MAX`.
pub fn block_rows(threads: usize, count: i64) -> i64 {
    const LEAST: i64 = 64;
    let threads = threads.max(1) as i64;
    let count = count.max(1);
    let blocks = threads.min(count / LEAST).max(1);
    // A `ParallelChunks` loop's step is an `i32`.
    ((count + blocks - 1) / blocks).min(i32::MAX as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_inside_or_none() {
        let d = [3i64, 5];
        assert_eq!(span([1, 2], &d, 3), Some(7..10));
        assert_eq!(span([1, 2], &d, 4), None); // past the row's end
        assert_eq!(span([3, 0], &d, 1), None); // past the last row
        assert_eq!(span([-1, 0], &d, 1), None);
        assert_eq!(span([0, -1], &d, 2), None);
        assert_eq!(span([2, 5], &d, 0), Some(15..15)); // empty, at the end
        assert_eq!(row_span([2, 1], &d, 3, 1), Some(1..4));
        assert_eq!(row_span([0, 2, 1], &[2, 3, 4], 2, 2), Some(1..3));
        assert_eq!(span([0, i64::MAX], &[1, i64::MAX], 2), None);
    }

    #[test]
    fn linear_positions() {
        assert_eq!(lin([1, 2], &[3, 5]), 7);
        assert_eq!(lin([0, 2, 3], &[2, 3, 4]), 11);
        assert_eq!(row_at([1, 2], &[3, 5], 1, true), Ok(2));
        assert_eq!(row_at([1, 2, 3], &[3, 4, 5], 2, true), Ok(3));
        assert_eq!(row_at([1, 5], &[3, 5], 1, true), Err([1, 5]));
        assert_eq!(row_at([1, 2], &[3, 5], 1, false), Err([1, 2]));
    }

    #[test]
    fn planes_split_apart() {
        let dims = [3i64, 2, 2];
        assert_eq!(plane(&[1], &dims), Some(4..8));
        assert_eq!(plane(&[], &dims), Some(0..12));
        assert_eq!(plane(&[3], &dims), None);
        assert_eq!(plane(&[-1], &dims), None);
        let mut v: Vec<u8> = (0..12).collect();
        let [a, b, c, e] = planes_mut(
            &mut v,
            [
                plane(&[2], &dims),
                plane(&[0], &dims),
                None,
                plane(&[0], &dims),
            ],
        );
        assert_eq!(
            (&*a, &*b, c.len(), e.len()),
            (&[8u8, 9, 10, 11][..], &[0u8, 1, 2, 3][..], 0, 0)
        );
        a[0] = 99;
        b[0] = 98;
        assert_eq!((v[8], v[0]), (99, 98));
        let [x] = planes_mut(&mut v, [Some(10..14)]);
        assert!(x.is_empty()); // outside
    }

    #[test]
    fn locals_are_reused_and_cleared_unless_whole() {
        let rt = Runtime::cpu();
        {
            let mut a = local::<u16>(&rt, &[2, 3], false);
            assert_eq!(a.as_slice(), &[0; 6]);
            a.as_mut_slice().fill(7);
        }
        {
            let b = local::<u16>(&rt, &[2, 3], false);
            assert_eq!(b.as_slice(), &[0; 6]); // cleared
        }
        {
            let mut c = local::<u16>(&rt, &[3, 2], true);
            c.as_mut_slice().fill(5);
        }
        let d = local::<u16>(&rt, &[2, 2], true);
        assert_eq!(d.as_slice().len(), 4); // reused, not cleared: written whole first
        let e = local::<f32>(&rt, &[-1, 4], false);
        assert!(e.as_slice().is_empty());
    }
}
