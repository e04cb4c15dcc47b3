//! Zero-copy views: a pipeline reads a slice and writes into a slice, on every runtime, with
//! the same result as with owned matrices.

mod common;

use common::{data, reference, runtimes};
use parac::{Matrix, MatrixView, MatrixViewMut};

#[path = "../examples/pipelines/blur.rs"]
mod blur_p;

#[test]
fn pipelines_read_and_write_through_views() {
    let _guard = runtimes::shared_buffers();
    for rt in runtimes::all() {
        for (rows, cols) in [(3, 3), (17, 29), (64, 65)] {
            let src = data::random_u12(rows, cols, 7);
            let want = reference::blur(&src);
            // The input is any slice; the output is written into an existing Vec.
            let raw: Vec<u16> = src.as_slice().to_vec();
            let mut out_raw = vec![0u16; (rows - 2) * (cols - 2)];
            {
                let view = MatrixView::new([rows, cols], &raw).expect("length matches");
                let mut out =
                    MatrixViewMut::new([rows - 2, cols - 2], &mut out_raw).expect("length matches");
                blur_p::blur(rt, &view, &mut out).expect("blur through views");
            }
            assert_eq!(
                out_raw,
                want.as_slice(),
                "{} {rows}x{cols}",
                runtimes::name(rt)
            );
            // Owned matrices give the same.
            let mut owned = Matrix::<u16>::zeros([rows - 2, cols - 2]);
            blur_p::blur(rt, &src, &mut owned).expect("blur");
            assert_eq!(owned.as_slice(), &out_raw[..]);
        }
    }
}

#[test]
fn a_view_of_the_wrong_shape_is_a_shape_error() {
    let raw = vec![0u16; 12];
    let view = MatrixView::new([3, 4], &raw).expect("length matches");
    let mut out = Matrix::<u16>::zeros([2, 2]);
    let err = blur_p::blur(runtimes::cpu(), &view, &mut out).unwrap_err();
    assert!(err.to_string().contains("matrix `out`"), "{err}");
}
