//! `image` gray images and `ndarray` arrays as pipeline arguments, without copies: the same
//! results as `Matrix`es, in place on a host-memory device (no transfer of their elements), one
//! copy each way on the copying path. An `ndarray` view whose rows are apart (a slice of a
//! larger array) too: in place on a CPU OpenCL device, one rectangle copy each way elsewhere,
//! copied row by row on the CPU path, and never a byte outside its elements touched.

mod common;

use common::runtimes;
use image::{GrayImage, ImageBuffer, Luma};
use ndarray::{Array2, Array3, ArrayViewMut2, s};
use parac::opencl::{self, Transfers};
use parac::{Error, Matrix};

parac::parac! {
    /// 255 minus every pixel.
    pub fn invert(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = 255 - src[itx][ity];
        }
    }

    /// Gray of interleaved RGB pixels read as they are: the image is `u8[M][W]`, `W` three
    /// times its width, channel `k` of pixel `x` at `[y][3 * x + k]`.
    pub fn rgb_gray(rgb: &u8[M][W], gray: &mut u8[M][W / 3]) {
        parac_iterator it(0:M:1; 0:W / 3:1) {
            gray[itx][ity] = ((rgb[itx][3 * ity] as u32 * 77 + rgb[itx][3 * ity + 1] as u32 * 150
                + rgb[itx][3 * ity + 2] as u32 * 29) >> 8) as u8;
        }
    }

    /// Each plane plus its index, in 16 bits.
    pub fn planes(src: &u16[C][M][N], out: &mut u16[C][M][N]) {
        parac_iterator it(0:C:1; 0:M:1; 0:N:1) {
            out[itx][ity][itz] = src[itx][ity][itz] + itx;
        }
    }
}

fn counted(f: impl FnOnce()) -> Transfers {
    let before = opencl::transfers();
    f();
    opencl::transfers().since(before)
}

#[test]
fn gray_images_are_matrices() {
    let _guard = runtimes::shared_buffers();
    let img = GrayImage::from_fn(37, 23, |x, y| Luma([(x * 7 + y * 3) as u8]));
    let want = Matrix::<u8>::from_fn([23, 37], |i| 255 - (i[1] * 7 + i[0] * 3) as u8);
    for rt in runtimes::all() {
        let mut out = GrayImage::new(37, 23);
        let t = counted(|| invert(rt, &img, &mut out).unwrap());
        assert_eq!(out.as_raw(), want.as_slice(), "{}", runtimes::name(rt));
        let Some(dev) = rt.device() else { continue };
        if dev.info().host_unified_memory {
            assert_eq!(
                (t.to_device, t.to_host),
                (0, 1),
                "in place, the flag only: {t:?}"
            );
        }
        let mut out = GrayImage::new(37, 23);
        let t = opencl::copying(|| counted(|| invert(rt, &img, &mut out).unwrap()));
        assert_eq!(
            (t.to_device, t.to_host),
            (1, 2),
            "one copy each way, and the flag: {t:?}"
        );
        assert_eq!(out.as_raw(), want.as_slice());
        // 16-bit images too, and a buffer that is a borrowed slice.
        let raw: Vec<u16> = (0..6u16).collect();
        let img16: ImageBuffer<Luma<u16>, &[u16]> = ImageBuffer::from_raw(3, 2, &raw[..]).unwrap();
        let mut out16 = Matrix::<u16>::zeros([1, 2, 3]);
        let src3 = ndarray::ArrayView3::from_shape((1, 2, 3), img16.as_raw()).unwrap();
        planes(rt, &src3, &mut out16).unwrap();
        assert_eq!(out16.as_slice(), &raw[..]);
    }
}

/// Interleaved RGB read in place by a pipeline, and converted to planar and back exactly.
#[test]
fn interleaved_rgb_in_place_and_planar() {
    let _guard = runtimes::shared_buffers();
    let (w, h) = (31u32, 9u32);
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([(x * 8) as u8, (y * 28) as u8, (x * y) as u8])
    });
    let want = Matrix::<u8>::from_fn([h as usize, w as usize], |i| {
        let p = img.get_pixel(i[1] as u32, i[0] as u32).0.map(u32::from);
        ((p[0] * 77 + p[1] * 150 + p[2] * 29) >> 8) as u8
    });
    let view = parac::MatrixView::new([h as usize, 3 * w as usize], img.as_raw()).unwrap();
    for rt in runtimes::all() {
        let mut gray = GrayImage::new(w, h);
        rgb_gray(rt, &view, &mut gray).unwrap();
        assert_eq!(gray.as_raw(), want.as_slice(), "{}", runtimes::name(rt));
    }
    let planar = Matrix::from_rgb8(&img);
    assert_eq!(planar.shape(), &[3, h as usize, w as usize]);
    assert_eq!(planar.to_rgb8().unwrap(), img);
}

#[test]
fn ndarray_arrays_and_views_are_matrices() {
    let _guard = runtimes::shared_buffers();
    let big = Array2::<u8>::from_shape_fn((40, 50), |(r, c)| (r * 5 + c) as u8);
    // Rows 10..30 of a larger array: a view in standard layout, taken as it is.
    let rows = big.slice(s![10..30, ..]);
    let want = rows.mapv(|v| 255 - v);
    let a3 = Array3::<u16>::from_shape_fn((3, 4, 5), |(c, r, k)| (c * 100 + r * 10 + k) as u16);
    for rt in runtimes::all() {
        let name = runtimes::name(rt);
        let mut out = Array2::<u8>::zeros((20, 50));
        let t = counted(|| invert(rt, &rows, &mut out).unwrap());
        assert_eq!(out, want, "{name}");
        if rt.device().is_some_and(|d| d.info().host_unified_memory) {
            assert_eq!((t.to_device, t.to_host), (0, 1), "{name}: in place: {t:?}");
        }
        // Written into a mutable view of a larger array (whole rows).
        let mut dst = Array2::<u8>::zeros((30, 50));
        invert(rt, &rows, &mut dst.slice_mut(s![5..25, ..])).unwrap();
        assert_eq!(dst.slice(s![5..25, ..]), want, "{name}");
        let mut o3 = Array3::<u16>::zeros((3, 4, 5));
        planes(rt, &a3, &mut o3).unwrap();
        assert_eq!(o3[[2, 3, 4]], 234 + 2, "{name}");
        // Columns of a larger array: rows apart, taken as they are.
        let cols = big.slice(s![.., 5..20]);
        let mut out = Array2::<u8>::zeros((40, 15));
        invert(rt, &cols, &mut out).unwrap();
        assert_eq!(out, cols.mapv(|v| 255 - v), "{name}");
        // A transposed view (its last axis is not contiguous): a typed error, nothing read.
        let e = invert(rt, &big.t(), &mut Array2::<u8>::zeros((50, 40))).unwrap_err();
        assert!(
            matches!(e, Error::Layout { matrix: "src", .. }),
            "{name}: {e}"
        );
    }
}

/// A 512x512 `ArrayView2` slice of a larger array in, an `ArrayViewMut2` slice of another out:
/// the contiguous run's result, nothing outside the slices touched, and the copies counted —
/// none on the CPU path's device side, none in place on a CPU OpenCL device (the error flag
/// only), one rectangle copy each way on the copying path.
#[test]
fn ndarray_slices_with_rows_apart() {
    let _guard = runtimes::shared_buffers();
    let big = Array2::<u8>::from_shape_fn((600, 620), |(r, c)| (r * 7 + c * 3) as u8);
    let src = big.slice(s![10..522, 20..532]);
    assert!(!src.is_standard_layout());
    let mut want = Array2::<u8>::zeros((512, 512));
    invert(runtimes::cpu(), &src.as_standard_layout(), &mut want).unwrap();
    let fresh = || Array2::<u8>::from_elem((560, 580), 7);
    // Everything outside the output slice is still 7.
    let untouched = |dst: &Array2<u8>, name: &str| {
        let mut outside = dst.clone();
        outside.slice_mut(s![30..542, 40..552]).fill(7);
        assert!(
            outside.iter().all(|v| *v == 7),
            "{name}: a byte outside the slice changed"
        );
    };
    for rt in runtimes::all() {
        let name = runtimes::name(rt);
        let mut dst = fresh();
        let t = counted(|| invert(rt, &src, &mut dst.slice_mut(s![30..542, 40..552])).unwrap());
        assert_eq!(dst.slice(s![30..542, 40..552]), want, "{name}");
        untouched(&dst, &name);
        let Some(dev) = rt.device() else {
            assert_eq!(
                t,
                Transfers::default(),
                "{name}: the CPU path uses no device"
            );
            continue;
        };
        if dev.info().host_unified_memory && dev.info().is_cpu {
            assert_eq!(
                (t.to_device, t.to_host, t.bytes_to_device),
                (0, 1, 0),
                "{name}: in place, the flag only: {t:?}"
            );
        }
        let mut dst = fresh();
        let t = opencl::copying(|| {
            counted(|| invert(rt, &src, &mut dst.slice_mut(s![30..542, 40..552])).unwrap())
        });
        assert_eq!(dst.slice(s![30..542, 40..552]), want, "{name}");
        untouched(&dst, &name);
        assert_eq!(
            (t.to_device, t.rect_to_device, t.to_host, t.rect_to_host),
            (1, 1, 2, 1),
            "{name}: one rectangle copy each way, and the flag: {t:?}"
        );
        assert_eq!(
            t.bytes_to_device,
            512 * 512,
            "{name}: the slice's elements only"
        );
    }
}

/// Two mutable views whose rows interleave (the left and right halves of one array): a
/// pipeline writes one while another thread keeps writing the other, whose elements lie
/// between the first one's rows. Not one of them is touched (an access to them would also be
/// a data race).
#[test]
fn interleaved_mutable_views_stay_apart() {
    let _guard = runtimes::shared_buffers();
    let src = Array2::<u8>::from_shape_fn((64, 48), |(r, c)| (r + 2 * c) as u8);
    let want = src.mapv(|v| 255 - v);
    for rt in runtimes::all() {
        let name = runtimes::name(rt);
        let mut both = Array2::<u8>::zeros((64, 96));
        let (mut left, mut right): (ArrayViewMut2<u8>, ArrayViewMut2<u8>) =
            both.multi_slice_mut((s![.., ..48], s![.., 48..]));
        std::thread::scope(|scope| {
            scope.spawn(|| {
                for round in 0..200u32 {
                    right.fill((round % 250) as u8 + 1);
                }
            });
            for _ in 0..20 {
                invert(rt, &src, &mut left).unwrap();
            }
        });
        assert_eq!(both.slice(s![.., ..48]), want, "{name}");
        assert!(
            both.slice(s![.., 48..]).iter().all(|v| *v == 200),
            "{name}: the other view's elements changed"
        );
    }
}

/// 3-D `ndarray` slices (planes and rows apart) in and out: the planes' pitch is not `rows *
/// row pitch`, which kernels do not index in place, so they are copied (rectangles).
#[test]
fn ndarray_3d_slices() {
    let _guard = runtimes::shared_buffers();
    let a3 = Array3::<u16>::from_shape_fn((3, 8, 9), |(c, r, k)| (c * 100 + r * 10 + k) as u16);
    let src = a3.slice(s![.., 2..6, 1..8]);
    let want = src.mapv(|v| v) + &Array3::from_shape_fn((3, 4, 7), |(c, _, _)| c as u16);
    for rt in runtimes::all() {
        let name = runtimes::name(rt);
        let mut dst = Array3::<u16>::from_elem((4, 6, 10), 9);
        planes(rt, &src, &mut dst.slice_mut(s![1.., 1..5, 2..9])).unwrap();
        assert_eq!(dst.slice(s![1.., 1..5, 2..9]), want, "{name}");
        dst.slice_mut(s![1.., 1..5, 2..9]).fill(9);
        assert!(dst.iter().all(|v| *v == 9), "{name}: outside the slice");
    }
}
