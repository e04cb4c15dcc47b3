//! Comparisons of matrices that say where and by how much they differ.

#![allow(dead_code)]

use parac::{Element, Matrix};

/// The number of differing elements and the first one (index, got, want); `None` if equal.
/// Shapes must be equal.
pub fn first_difference<T: Element>(
    got: &Matrix<T>,
    want: &Matrix<T>,
) -> Option<(usize, Vec<usize>, T, T)> {
    assert_eq!(got.shape(), want.shape(), "shapes differ");
    let mut diffs = got
        .as_slice()
        .iter()
        .zip(want.as_slice())
        .enumerate()
        .filter(|(_, (g, w))| g != w);
    let (off, (&g, &w)) = diffs.next()?;
    Some((1 + diffs.count(), got.index_of(off), g, w))
}

/// Asserts bit-exact equality (shape and every element), naming the first difference.
#[track_caller]
pub fn assert_same<T: Element>(what: &str, got: &Matrix<T>, want: &Matrix<T>) {
    assert_eq!(
        got.shape(),
        want.shape(),
        "{what}: shape {:?}, expected {:?}",
        got.shape(),
        want.shape()
    );
    if let Some((count, idx, g, w)) = first_difference(got, want) {
        panic!(
            "{what}: {count} of {} elements differ; first at {idx:?}: got {g:?}, expected {w:?}",
            got.len()
        );
    }
}

/// The largest `|got - want|` and where (NaN counts as infinitely far); `None` for empty ones.
pub fn max_abs_diff(got: &Matrix<f32>, want: &Matrix<f32>) -> Option<(f64, Vec<usize>)> {
    assert_eq!(got.shape(), want.shape(), "shapes differ");
    let mut best: Option<(f64, usize)> = None;
    for (off, (&g, &w)) in got.as_slice().iter().zip(want.as_slice()).enumerate() {
        let d = (f64::from(g) - f64::from(w)).abs();
        let d = if d.is_nan() { f64::INFINITY } else { d };
        if best.is_none_or(|(b, _)| d > b) {
            best = Some((d, off));
        }
    }
    best.map(|(d, off)| (d, got.index_of(off)))
}

/// Asserts equal shapes and `max |got - want| <= tol`.
#[track_caller]
pub fn assert_close(what: &str, got: &Matrix<f32>, want: &Matrix<f32>, tol: f64) {
    assert_eq!(
        got.shape(),
        want.shape(),
        "{what}: shape {:?}, expected {:?}",
        got.shape(),
        want.shape()
    );
    if let Some((d, idx)) = max_abs_diff(got, want) {
        assert!(
            d <= tol,
            "{what}: max |difference| {d:e} > {tol:e} at {idx:?}: got {}, expected {}",
            got.get(&idx),
            want.get(&idx)
        );
    }
}
