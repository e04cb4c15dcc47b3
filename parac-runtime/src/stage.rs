//! A tile of a matrix read down its columns, copied in the order it is read (the compiler's
//! `Stmt::Stage`, made by its tile pass for transposes and rotations): element `[i][j]` of the
//! tile is the matrix's element `i` steps along its last dimension and `j` steps along a
//! leading one from a first index. The matrix's rows are the tile's columns, so the copy is a
//! transpose: on x86_64 in blocks of 16 bytes by as many elements, each block's rows loaded
//! whole and transposed in registers by unpacking pairs of rows, as OpenCV's and Halide's
//! transposes do, where a read down a column would touch a cache line per element.

use crate::CpuIsa;

/// Copies `rows` x `cols` elements of a matrix of dimensions `dims` (its elements `src`, in
/// rows) into `out`, rows `stride` elements apart: `out[i * stride + j]` is the element at
/// `index` moved `i * x_step` along the last dimension and `j * y_step` along dimension
/// `y_dim` (the steps 1 or -1). Whether every one of them is inside the matrix; where one is
/// not (or `out` is too short), nothing is copied.
#[allow(clippy::too_many_arguments)]
pub fn stage<T: Copy, const N: usize>(
    isa: CpuIsa,
    src: &[T],
    dims: &[i64; N],
    index: [i64; N],
    y_dim: usize,
    y_step: i64,
    x_step: i64,
    rows: i64,
    cols: i64,
    out: &mut [T],
    stride: i64,
) -> bool {
    if rows <= 0 || cols <= 0 {
        return true;
    }
    let Some(tile) = Tile::of(dims, index, y_dim, (y_step, x_step), (rows, cols), stride) else {
        return false;
    };
    if src.len() < tile.len || out.len() < tile.out_len {
        return false;
    }
    // The blocks' transposes in the widest registers the level has (AVX-512's 32 hold a
    // block of bytes and its unpacked halves without spilling).
    if crate::isa::vector(
        isa,
        #[inline(always)]
        || tile.copy(src, out),
    )
    .is_none()
    {
        tile.copy(src, out);
    }
    true
}

/// [`stage`] into rows of a matrix written: tile row `i` into row `at[0] + i` of `rows_of` (a
/// task's rows of the matrix, each `row_len` elements), from column `at[1]`. Whether every
/// element read and written is inside (the tile's columns inside one row); where one is not,
/// nothing is copied.
#[allow(clippy::too_many_arguments)]
pub fn stage_rows<T: Copy, const N: usize>(
    isa: CpuIsa,
    src: &[T],
    dims: &[i64; N],
    index: [i64; N],
    y_dim: usize,
    y_step: i64,
    x_step: i64,
    rows: i64,
    cols: i64,
    rows_of: &mut [T],
    row_len: usize,
    at: [i64; 2],
) -> bool {
    if rows <= 0 || cols <= 0 {
        return true;
    }
    let (Ok(row), Ok(col), Ok(n)) = (
        usize::try_from(at[0]),
        usize::try_from(at[1]),
        usize::try_from(cols),
    ) else {
        return false;
    };
    let Some(first) = row.checked_mul(row_len).and_then(|o| o.checked_add(col)) else {
        return false;
    };
    if col.checked_add(n).is_none_or(|end| end > row_len) {
        return false;
    }
    let Ok(stride) = i64::try_from(row_len) else {
        return false;
    };
    match rows_of.get_mut(first..) {
        Some(out) => stage(
            isa, src, dims, index, y_dim, y_step, x_step, rows, cols, out, stride,
        ),
        None => false,
    }
}

/// A tile proven inside its matrix: linear offsets from here on.
struct Tile {
    /// The matrix's elements (at most `src.len()`).
    len: usize,
    /// The elements `out` needs.
    out_len: usize,
    /// The first element's offset.
    base: usize,
    /// From one matrix row (`j`) to the next, and from one element (`i`) to the next.
    row_step: isize,
    x_step: isize,
    rows: usize,
    cols: usize,
    stride: usize,
}

impl Tile {
    fn of<const N: usize>(
        dims: &[i64; N],
        index: [i64; N],
        y_dim: usize,
        (y_step, x_step): (i64, i64),
        (rows, cols): (i64, i64),
        stride: i64,
    ) -> Option<Tile> {
        let last = N.checked_sub(1)?;
        if y_dim >= last || y_step.abs() != 1 || x_step.abs() != 1 || stride < cols {
            return None;
        }
        let within = |k: usize, from: i64, n: i64, step: i64| {
            let to = from.checked_add(step.checked_mul(n - 1)?)?;
            (from.min(to) >= 0 && from.max(to) < dims[k]).then_some(())
        };
        within(last, index[last], rows, x_step)?;
        within(y_dim, index[y_dim], cols, y_step)?;
        for (k, i) in index.iter().enumerate().take(last) {
            if k != y_dim {
                within(k, *i, 1, 1)?;
            }
        }
        let (mut base, mut len) = (0i64, 1i64);
        let mut y_stride = 0i64;
        for k in (0..N).rev() {
            if k == y_dim {
                y_stride = len;
            }
            base = base.checked_add(index[k].checked_mul(len)?)?;
            len = len.checked_mul(dims[k])?;
        }
        let out_len = (rows - 1).checked_mul(stride)?.checked_add(cols)?;
        Some(Tile {
            len: usize::try_from(len).ok()?,
            out_len: usize::try_from(out_len).ok()?,
            base: usize::try_from(base).ok()?,
            row_step: isize::try_from(y_step * y_stride).ok()?,
            x_step: isize::try_from(x_step).ok()?,
            rows: usize::try_from(rows).ok()?,
            cols: usize::try_from(cols).ok()?,
            stride: usize::try_from(stride).ok()?,
        })
    }

    /// The offset of element `[i][j]` (inside: proven by `of`).
    #[inline(always)]
    fn at(&self, i: usize, j: usize) -> usize {
        let d = (j as isize) * self.row_step + (i as isize) * self.x_step;
        self.base.wrapping_add_signed(d)
    }

    #[inline(always)]
    fn copy<T: Copy>(&self, src: &[T], out: &mut [T]) {
        let b = blocks::<T>();
        let (full_i, full_j) = match b {
            0 => (0, 0),
            b => (self.rows / b * b, self.cols / b * b),
        };
        #[cfg(target_arch = "x86_64")]
        for j in (0..full_j).step_by(b.max(1)) {
            for i in (0..full_i).step_by(b.max(1)) {
                // SAFETY: `of` proved every element of the tile inside `src` (whose length
                // `stage` checked), and `out` holds `out_len` elements: the block's `b` rows
                // of `b` elements lie inside both.
                unsafe { self.block(src.as_ptr(), out.as_mut_ptr(), i, j) };
            }
        }
        // The edges (and everything, where there are no blocks): element by element.
        for i in 0..self.rows {
            let from = if i < full_i { full_j } else { 0 };
            for j in from..self.cols {
                out[i * self.stride + j] = src[self.at(i, j)];
            }
        }
    }

    /// The block of `b` x `b` elements at `[i][j]` (`b` of [`blocks`]): `b` matrix rows of
    /// `b` elements each loaded as 16 bytes, transposed in registers by `log2(b)` rounds of
    /// unpacking (each pairing row `k` with row `k + b / 2` and interleaving their low and high
    /// halves into rows `2k` and `2k + 1`), stored as `b` rows of the tile.
    ///
    /// # Safety
    /// Tile elements `[i..i + b][j..j + b]` are inside `src`, and tile rows `i..i + b` from
    /// column `j` for `b` elements inside `out`.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn block<T: Copy>(&self, src: *const T, out: *mut T, i: usize, j: usize) {
        use std::arch::x86_64::*;
        let b = blocks::<T>();
        let size = std::mem::size_of::<T>();
        // The row's lowest element: its first where the elements run forward.
        let first = if self.x_step == 1 { i } else { i + b - 1 };
        // SAFETY (the intrinsics): SSE2 is in every x86_64 processor; the loads and stores are
        // of `b` elements (16 bytes) inside the tile, as the caller guarantees.
        unsafe {
            let mut v = [_mm_setzero_si128(); 16];
            for (jj, v) in v.iter_mut().enumerate().take(b) {
                *v = _mm_loadu_si128(src.add(self.at(first, j + jj)).cast());
            }
            let half = b / 2;
            let mut round = 1;
            while round < b {
                let mut next = [_mm_setzero_si128(); 16];
                for k in 0..half {
                    let (lo, hi) = unpack(v[k], v[k + half], size);
                    next[2 * k] = lo;
                    next[2 * k + 1] = hi;
                }
                v = next;
                round *= 2;
            }
            // Row `p` of the transpose is the elements `p` from the lowest: tile row `i + p`
            // forward, `i + b - 1 - p` backward.
            for (p, v) in v.iter().enumerate().take(b) {
                let ti = if self.x_step == 1 {
                    i + p
                } else {
                    i + b - 1 - p
                };
                _mm_storeu_si128(out.add(ti * self.stride + j).cast(), *v);
            }
        }
    }
}

/// The elements of a block's side: 16 bytes of elements of 1, 2, 4 or 8 bytes on x86_64;
/// 0 (no blocks) elsewhere.
const fn blocks<T>() -> usize {
    let size = std::mem::size_of::<T>();
    match cfg!(target_arch = "x86_64") && matches!(size, 1 | 2 | 4 | 8) {
        true => 16 / size,
        false => 0,
    }
}

/// The low and high halves of `a` and `b` interleaved, element by element of `size` bytes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn unpack(
    a: std::arch::x86_64::__m128i,
    b: std::arch::x86_64::__m128i,
    size: usize,
) -> (std::arch::x86_64::__m128i, std::arch::x86_64::__m128i) {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is in every x86_64 processor.
    unsafe {
        match size {
            1 => (_mm_unpacklo_epi8(a, b), _mm_unpackhi_epi8(a, b)),
            2 => (_mm_unpacklo_epi16(a, b), _mm_unpackhi_epi16(a, b)),
            4 => (_mm_unpacklo_epi32(a, b), _mm_unpackhi_epi32(a, b)),
            _ => (_mm_unpacklo_epi64(a, b), _mm_unpackhi_epi64(a, b)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{stage, stage_rows};
    use crate::CpuIsa;

    /// Every element where the definition puts it, for each element size, both directions
    /// of both steps, tiles smaller than, equal to and past a block, in a 3-D matrix.
    fn check<T: Copy + PartialEq + std::fmt::Debug + TryFrom<u64>>() {
        let dims = [2i64, 37, 41];
        let src: Vec<T> = (0..dims.iter().product::<i64>() as u64)
            .map(|v| T::try_from(v % 251).ok().expect("fits"))
            .collect();
        let shapes = [(1, 1), (3, 5), (16, 16), (17, 33), (8, 2), (41, 37)];
        for ((rows, cols), isa) in shapes
            .into_iter()
            .flat_map(|s| std::iter::repeat(s).zip(CpuIsa::available()))
        {
            for (ys, xs) in [(1, 1), (-1, 1), (1, -1), (-1, -1)] {
                let index = [
                    1,
                    if ys == 1 { 0 } else { cols - 1 },
                    if xs == 1 { 0 } else { rows - 1 },
                ];
                let stride = cols + 3;
                let mut out = vec![src[0]; ((rows - 1) * stride + cols) as usize];
                assert!(stage(
                    isa, &src, &dims, index, 1, ys, xs, rows, cols, &mut out, stride
                ));
                for i in 0..rows {
                    for j in 0..cols {
                        let (y, x) = (index[1] + ys * j, index[2] + xs * i);
                        let want = src[((dims[1] + y) * dims[2] + x) as usize];
                        assert_eq!(
                            out[(i * stride + j) as usize],
                            want,
                            "{rows}x{cols} {i},{j} {isa:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn tiles_are_the_matrix_transposed() {
        check::<u8>();
        check::<i16>();
        check::<u32>();
        check::<u64>();
    }

    #[test]
    fn a_tile_past_the_matrix_copies_nothing() {
        let src = vec![7u8; 6 * 5];
        let mut out = vec![0u8; 64];
        let isa = CpuIsa::Auto.resolve();
        assert!(!stage(
            isa,
            &src,
            &[6, 5],
            [0, 0],
            0,
            1,
            1,
            6,
            6,
            &mut out,
            8
        ));
        assert!(!stage(
            isa,
            &src,
            &[6, 5],
            [0, 1],
            0,
            1,
            -1,
            3,
            2,
            &mut out,
            8
        ));
        assert!(!stage(
            isa,
            &src,
            &[6, 5],
            [0, 0],
            0,
            1,
            1,
            2,
            2,
            &mut out[..3],
            2
        ));
        assert!(out.iter().all(|v| *v == 0));
        assert!(stage(
            isa,
            &src,
            &[6, 5],
            [5, 4],
            0,
            -1,
            -1,
            5,
            6,
            &mut out,
            8
        ));
    }

    /// Into rows of a matrix: each tile row into its own row from the column asked, the
    /// elements around it untouched; nothing where a row, the column or its end is outside.
    #[test]
    fn a_tile_goes_into_the_rows_asked() {
        let src: Vec<u8> = (0..6 * 5).collect();
        let isa = CpuIsa::Auto.resolve();
        // Rows of 7; tile rows 2 and 3 of them (3 x 4 elements: src[j][i], i the tile row).
        let mut rows = vec![99u8; 7 * 5];
        assert!(stage_rows(
            isa,
            &src,
            &[6, 5],
            [1, 2],
            0,
            1,
            1,
            3,
            4,
            &mut rows,
            7,
            [2, 3]
        ));
        for (k, v) in rows.iter().enumerate() {
            let (r, c) = (k / 7, k % 7);
            let want = match (r.checked_sub(2), c.checked_sub(3)) {
                (Some(i @ 0..3), Some(j @ 0..4)) => src[(1 + j) * 5 + 2 + i],
                _ => 99,
            };
            assert_eq!(*v, want, "row {r} column {c}");
        }
        let mut rows = vec![99u8; 7 * 5];
        for at in [[-1, 0], [0, -1], [0, 4], [3, 0], [i64::MAX, 0]] {
            assert!(!stage_rows(
                isa,
                &src,
                &[6, 5],
                [1, 2],
                0,
                1,
                1,
                3,
                4,
                &mut rows,
                7,
                at
            ));
        }
        assert!(rows.iter().all(|v| *v == 99));
    }
}
