//! Tests of layouts: pitch checks, contiguity and row starts, strided elements (gathered,
//! scattered, checked) and regions of interest.

use super::*;
use crate::Matrix;

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
    let s = Strided::of_slice(&[3, 2], p(7, 21), &src).unwrap();
    assert!(s.owns_gaps() && s.contiguous().is_none());
    let g = gather_strided(&s);
    assert_eq!(g, [0, 1, 7, 8, 14, 15]);
    let mut dst = vec![-1; 16];
    let mut d = StridedMut::of_slice(&[3, 2], p(7, 21), &mut dst).unwrap();
    let mut rows = g.chunks_exact(2);
    d.for_each_row(|r| r.copy_from_slice(rows.next().unwrap()));
    assert_eq!(dst[..9], [0, 1, -1, -1, -1, -1, -1, 7, 8]);
    assert!(StridedMut::of_slice(&[3, 2], p(7, 21), &mut dst[..15]).is_err());
}

#[test]
fn strided_elements_check_their_layout() {
    let data: Vec<u8> = (0..30).collect();
    // SAFETY: the rows of 3 elements 10 apart lie in `data`.
    let s = unsafe { Strided::new(data.as_ptr(), &[3, 3], p(10, 30)) }.unwrap();
    assert!(!s.owns_gaps());
    let rows: Vec<&[u8]> = s.rows().collect();
    assert_eq!(rows, [&[0, 1, 2][..], &[10, 11, 12], &[20, 21, 22]]);
    assert_eq!(s.span(), 23);
    // SAFETY: refused before any access.
    let bad = unsafe { Strided::new(data.as_ptr(), &[3, 3], p(2, 6)) };
    assert!(matches!(bad, Err(LayoutError::RowPitch { .. })));
    let m = Matrix::copy_of(&s).unwrap();
    assert_eq!(m.as_slice(), &[0, 1, 2, 10, 11, 12, 20, 21, 22]);
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
