//! The guess of a speculated task (`lir::Stmt::Within`, made by the compiler's narrowing pass):
//! whether one row of a matrix is inside it and every value of the row lies in a range, so that
//! the task's arithmetic in 16 bits is exact. The row is scanned in blocks, each block's test a
//! loop without exits that the compiler vectorizes (compiled for the task's vector level).

use crate::isa::{CpuIsa, vector};

/// An integer matrix element a guess tests.
pub trait WithinElement: Copy + PartialOrd {
    /// `v` clamped to the element's range, as an element.
    fn clamped(v: i64) -> Self;
}

macro_rules! element {
    ($($t:ty),*) => {$(
        impl WithinElement for $t {
            #[inline(always)]
            fn clamped(v: i64) -> Self {
                v.clamp(i64::from(<$t>::MIN), i64::from(<$t>::MAX)) as $t
            }
        }
    )*};
}
element!(u8, i8, u16, i16, u32, i32);

/// Whether row `rows` (every index but the last) of the matrix `m` of extents `dims` is inside
/// it and each of its elements lies in `lo..=hi`; `false` where the row is outside the matrix
/// or `m` is shorter than its extents say. An empty row holds.
pub fn within<T: WithinElement, const N: usize>(
    isa: CpuIsa,
    m: &[T],
    dims: &[i64; N],
    rows: &[i64],
    lo: i64,
    hi: i64,
) -> bool {
    let Some(row) = row_of(m, dims, rows) else {
        return false;
    };
    if hi < lo {
        return row.is_empty();
    }
    // Compared in the element's own type (its vectors' lanes): a bound past the type's range
    // is its end, which every value passes (an unsigned guess from 0 tests its top alone).
    let (lo, hi) = (T::clamped(lo), T::clamped(hi));
    let low = lo > T::clamped(i64::MIN);
    vector(
        isa,
        #[inline(always)]
        || holds(row, low.then_some(lo), hi),
    )
    .unwrap_or_else(|| holds(row, low.then_some(lo), hi))
}

/// Whether every value of `row` lies in `lo..=hi` (`lo` `None`: from the type's least).
#[inline(always)]
fn holds<T: WithinElement>(row: &[T], lo: Option<T>, hi: T) -> bool {
    match lo {
        Some(lo) => row
            .chunks(256)
            .all(|b| b.iter().fold(true, |ok, v| ok & (lo <= *v) & (*v <= hi))),
        None => row
            .chunks(256)
            .all(|b| b.iter().fold(true, |ok, v| ok & (*v <= hi))),
    }
}

/// The elements of row `rows` of a matrix of extents `dims` held in `m`, where it is inside.
fn row_of<'a, T, const N: usize>(m: &'a [T], dims: &[i64; N], rows: &[i64]) -> Option<&'a [T]> {
    let (last, outer) = dims.split_last()?;
    if rows.len() != outer.len() || *last < 0 {
        return None;
    }
    let mut at = 0i64;
    for (i, d) in rows.iter().zip(outer) {
        if !(0..*d).contains(i) {
            return None;
        }
        at = at.checked_mul(*d)?.checked_add(*i)?;
    }
    let start = usize::try_from(at.checked_mul(*last)?).ok()?;
    m.get(start..start.checked_add(usize::try_from(*last).ok()?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_hold_exactly_when_every_value_is_in_range() {
        let dims = [3i64, 300];
        let mut m: Vec<u16> = (0..900).map(|i| (i % 4096) as u16).collect();
        for isa in CpuIsa::available() {
            assert!(within(isa, &m, &dims, &[1], 0, 4095));
            assert!(!within(isa, &m, &dims, &[1], 0, 598));
            assert!(within(isa, &m, &dims, &[1], 300, 599));
            // Outside the matrix, or a slice shorter than its extents.
            assert!(!within(isa, &m, &dims, &[3], 0, 65535));
            assert!(!within(isa, &m, &dims, &[-1], 0, 65535));
            assert!(!within(isa, &m[..899], &dims, &[2], 0, 65535));
            assert!(within(isa, &m, &[3, 0], &[2], 0, 0));
            assert!(within(isa, &m, &dims, &[0], -70000, 70000));
            assert!(!within(isa, &m, &dims, &[0], 5, 4));
        }
        m[899] = 40000;
        for isa in CpuIsa::available() {
            assert!(within(isa, &m, &dims, &[1], 0, 4095));
            assert!(!within(isa, &m, &dims, &[2], 0, 4095));
            let v: Vec<i16> = vec![-5, 7, -32768];
            assert!(!within(isa, &v, &[3], &[], -32767, 32767));
            assert!(within(isa, &v[..2], &[2], &[], -5, 7));
        }
    }
}
