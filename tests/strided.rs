//! Strided views and regions of interest: a pipeline reads and writes part of a larger image as
//! it is (row pitch of the whole image), on every runtime, with the result of the same pipeline
//! on contiguous copies and the rest of the image untouched; on a host-memory device no copy
//! is made, and on the copying path one copy each way per matrix, a rectangle copy
//! (`parac::opencl::{transfers, copying}`). Layouts that do not fit are typed errors.

mod common;

use common::{data, runtimes};
use parac::opencl::{self, Transfers};
use parac::{Error, LayoutError, Matrix, MatrixMut, MatrixRef, MatrixView, MatrixViewMut, Runtime};

#[path = "../examples/pipelines/blur.rs"]
mod blur_p;

parac::parac! {
    /// 255 minus every pixel.
    pub fn invert(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = 255 - src[itx][ity];
        }
    }
}

/// Blur of the `rows x cols` region at (`r0`, `c0`) of a frame into the region at (1, 2) of an
/// output frame, against blur of copies; the output frame's other pixels keep their value.
fn blur_roi(rt: &Runtime, frame: &Matrix<u16>, r0: usize, c0: usize, rows: usize, cols: usize) {
    let what = format!("{} roi {rows}x{cols} at ({r0}, {c0})", runtimes::name(rt));
    let roi = frame.roi(r0, c0, rows, cols).expect("roi inside");
    let mut want = Matrix::<u16>::zeros([rows - 2, cols - 2]);
    blur_p::blur(rt, &roi.to_matrix(), &mut want).expect("blur of a copy");
    let (orows, ocols) = (rows + 3, cols + 5);
    let mut out = Matrix::<u16>::from_fn([orows, ocols], |i| (i[0] * 7 + i[1]) as u16 | 0x8000);
    let before = out.clone();
    blur_p::blur(
        rt,
        &roi,
        &mut out.roi_mut(1, 2, rows - 2, cols - 2).unwrap(),
    )
    .expect(&what);
    for r in 0..orows {
        for c in 0..ocols {
            let inside = (1..rows - 1).contains(&r) && (2..cols).contains(&c);
            let got = out.get(&[r, c]);
            if inside {
                assert_eq!(got, want.get(&[r - 1, c - 2]), "{what} [{r}][{c}]");
            } else {
                assert_eq!(
                    got,
                    before.get(&[r, c]),
                    "{what}: outside the roi [{r}][{c}]"
                );
            }
        }
    }
}

#[test]
fn regions_of_interest_run_as_they_are() {
    let _guard = runtimes::shared_buffers();
    let frame = data::random_u12(40, 70, 11);
    for rt in runtimes::all() {
        for (r0, c0, rows, cols) in [(0, 0, 3, 3), (1, 2, 3, 4), (5, 3, 17, 29), (0, 1, 40, 69)] {
            blur_roi(rt, &frame, r0, c0, rows, cols);
            if rt.device().is_some() {
                opencl::copying(|| blur_roi(rt, &frame, r0, c0, rows, cols));
            }
        }
    }
}

/// The transfers of `f`, on this thread.
fn counted(f: impl FnOnce()) -> Transfers {
    let before = opencl::transfers();
    f();
    opencl::transfers().since(before)
}

/// A 512x512 region of a 4K frame runs through a pipeline with no copy
/// on a host-memory device, and with one rectangle copy each way on the copying path.
#[test]
fn a_region_of_a_4k_frame_in_place_or_one_rectangle_copy_each_way() {
    let _guard = runtimes::shared_buffers();
    let Some(rt) = runtimes::opencl() else { return };
    let dev = rt.device().expect("device");
    let frame = data::random_u12(2160, 3840, 3);
    let roi = frame.roi(1000, 2000, 512, 512).unwrap();
    let mut out_frame = Matrix::<u16>::zeros([2160, 3840]);
    let mut want = Matrix::<u16>::zeros([510, 510]);
    blur_p::blur(rt, &roi.to_matrix(), &mut want).unwrap();
    // The error flag (8 `i32`) is read back by every call.
    let flag = 32;
    let run = |out_frame: &mut Matrix<u16>| {
        let mut out = out_frame.roi_mut(7, 9, 510, 510).unwrap();
        blur_p::blur(rt, &roi, &mut out).unwrap();
    };
    if dev.info().host_unified_memory {
        let t = counted(|| run(&mut out_frame));
        assert_eq!((t.to_device, t.bytes_to_device), (0, 0), "in place: {t:?}");
        assert_eq!(
            (t.to_host, t.bytes_to_host),
            (1, flag),
            "only the flag: {t:?}"
        );
        assert_eq!(out_frame.roi(7, 9, 510, 510).unwrap().to_matrix(), want);
    }
    out_frame = Matrix::zeros([2160, 3840]);
    let t = opencl::copying(|| counted(|| run(&mut out_frame)));
    assert_eq!((t.to_device, t.rect_to_device), (1, 1), "copying: {t:?}");
    assert_eq!((t.to_host, t.rect_to_host), (2, 1), "copying: {t:?}");
    assert_eq!(t.bytes_to_device, 512 * 512 * 2);
    assert_eq!(t.bytes_to_host, 510 * 510 * 2 + flag);
    assert_eq!(out_frame.roi(7, 9, 510, 510).unwrap().to_matrix(), want);
}

/// A `MatrixRef` implemented outside the crate that claims a layout its slice does not hold.
struct Lying {
    shape: Vec<usize>,
    pitch: usize,
    data: Vec<u8>,
}

impl MatrixRef<u8> for Lying {
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn as_slice(&self) -> &[u8] {
        &self.data
    }
    fn row_pitch(&self) -> usize {
        self.pitch
    }
}

impl MatrixMut<u8> for Lying {
    fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.data
    }
}

#[test]
fn layouts_that_do_not_fit_are_typed_errors() {
    let _guard = runtimes::shared_buffers();
    for rt in runtimes::all() {
        let name = runtimes::name(rt);
        let mut ok = Matrix::<u8>::zeros([4, 5]);
        // A pitch smaller than a row, a slice too short for the last row, an overflowing pitch.
        for (pitch, len) in [(4, 100), (8, 28), (usize::MAX / 2, 100)] {
            let bad = Lying {
                shape: vec![4, 5],
                pitch,
                data: vec![1; len],
            };
            let e = invert(rt, &bad, &mut ok).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::Layout { matrix: "src", .. } | Error::Argument { .. }
                ),
                "{name}: {e}"
            );
            let mut bad_out = Lying {
                data: vec![1; len],
                ..bad
            };
            let e = invert(rt, &Matrix::<u8>::zeros([4, 5]), &mut bad_out).unwrap_err();
            assert!(
                matches!(
                    e,
                    Error::Layout { matrix: "out", .. } | Error::Argument { .. }
                ),
                "{name}: {e}"
            );
            assert!(
                bad_out.data.iter().all(|v| *v == 1),
                "{name}: nothing written"
            );
        }
        // A good pitched one runs.
        let good = Lying {
            shape: vec![4, 5],
            pitch: 8,
            data: (0..29).collect(),
        };
        invert(rt, &good, &mut ok).unwrap();
        assert_eq!(ok.get(&[3, 4]), 255 - 28, "{name}");
    }
    let data = [0u8; 10];
    assert!(matches!(
        MatrixView::with_pitch([2, 5], 4, &data[..]),
        Err(LayoutError::RowPitch { .. })
    ));
    assert!(matches!(
        MatrixView::with_pitch([2, 5], 6, &data[..]),
        Err(LayoutError::TooShort { .. })
    ));
    let mut m = [0u8; 10];
    assert!(MatrixViewMut::with_pitch([2, 5], 5, &mut m[..]).is_ok());
}
