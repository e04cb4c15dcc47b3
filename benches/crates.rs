//! The closest calls of the image crates a Rust user would pick for each stage of the four
//! pipelines (`image::imageops`, `imageproc`, `fast_image_resize`), with plain Rust loops for the
//! per-pixel arithmetic no crate offers. They run on the CPU, multi-threaded where the crate is
//! (`fast_image_resize` and `imageproc` with their `rayon` features).
//!
//! None of them computes exactly what the pipeline defines; each function says how it differs.
//! They are there for speed, not for equality: the figures say what a user gets from the crates
//! for a comparable amount of work.

use fast_image_resize::images::{Image as FirImage, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};
use image::{GrayImage, ImageBuffer, Luma, Rgb32FImage};
use imageproc::filter::{horizontal_filter, separable_filter_equal, vertical_filter};
use imageproc::gradients::{horizontal_sobel, vertical_sobel};
use imageproc::morphology::{Mask, grayscale_dilate, grayscale_erode};
use parac::Matrix;

/// A 16-bit gray image of the `image` crate.
pub type Gray16 = ImageBuffer<Luma<u16>, Vec<u16>>;
/// A float gray image of the `image` crate.
pub type GrayF = ImageBuffer<Luma<f32>, Vec<f32>>;

/// `[M][N]` u8 as an `image` gray image.
pub fn gray_u8(m: &Matrix<u8>) -> GrayImage {
    let (r, c) = (m.shape()[0], m.shape()[1]);
    GrayImage::from_raw(c as u32, r as u32, m.as_slice().to_vec()).expect("size")
}

/// `[M][N]` u16 as an `image` 16-bit gray image.
pub fn gray_u16(m: &Matrix<u16>) -> Gray16 {
    let (r, c) = (m.shape()[0], m.shape()[1]);
    Gray16::from_raw(c as u32, r as u32, m.as_slice().to_vec()).expect("size")
}

/// Planar `[3][M][N]` f32 as an interleaved `image` RGB float image (the layout `image` uses).
pub fn rgb_f32(m: &Matrix<f32>) -> Rgb32FImage {
    let (r, c) = (m.shape()[1], m.shape()[2]);
    let plane = r * c;
    let s = m.as_slice();
    let mut v = Vec::with_capacity(3 * plane);
    for p in 0..plane {
        v.extend_from_slice(&[s[p], s[plane + p], s[2 * plane + p]]);
    }
    Rgb32FImage::from_raw(c as u32, r as u32, v).expect("size")
}

/// A `fast_image_resize` resize of a gray u8 image to `w x h`, with `alg`.
fn fir_resize(resizer: &mut Resizer, src: &GrayImage, w: u32, h: u32, alg: ResizeAlg) -> GrayImage {
    let view = ImageRef::new(src.width(), src.height(), src.as_raw(), PixelType::U8).expect("view");
    let mut dst = FirImage::new(w, h, PixelType::U8);
    resizer
        .resize(&view, &mut dst, &ResizeOptions::new().resize_alg(alg))
        .expect("resize");
    GrayImage::from_raw(w, h, dst.into_vec()).expect("size")
}

// ---- laplacian ---------------------------------------------------------------------------------

/// The (1 4 6 4 1)/16 filter of laplacian's `h`.
const BINOMIAL5: [f32; 5] = [1.0 / 16.0, 4.0 / 16.0, 6.0 / 16.0, 4.0 / 16.0, 1.0 / 16.0];

/// Stage `h`: `imageproc::filter::horizontal_filter` with the same 5 taps. Differs: f32
/// arithmetic, truncated and clamped, instead of the integer `(sum + 8) / 16`, clamp-to-edge
/// instead of the linear extrapolation, and every column instead of the even ones.
pub fn laplacian_h(src: &GrayImage) -> GrayImage {
    horizontal_filter(src, &BINOMIAL5)
}

/// Stage `down`: a 2x `fast_image_resize` downscale with its Gaussian filter (sigma 1 at this
/// scale, close to the binomial's). Differs: it filters both ways (the pipeline's `down` only
/// filters the rows of `h`), with other weights and borders.
pub fn laplacian_down(resizer: &mut Resizer, h: &GrayImage) -> GrayImage {
    let (w, hh) = (h.width().div_ceil(2), h.height().div_ceil(2));
    fir_resize(
        resizer,
        h,
        w,
        hh,
        ResizeAlg::Convolution(FilterType::Gaussian),
    )
}

/// Stage `up_lap`: a 2x bilinear `fast_image_resize` upscale of `down`, then `src - up` in a
/// loop. Differs: the crate's bilinear weights are centred (1/4, 3/4), the pipeline's are
/// (1/2, 1/2) on a grid aligned at the first pixel.
pub fn laplacian_up_lap(resizer: &mut Resizer, src: &GrayImage, down: &GrayImage) -> Vec<i16> {
    let up = fir_resize(
        resizer,
        down,
        src.width(),
        src.height(),
        ResizeAlg::Convolution(FilterType::Bilinear),
    );
    src.as_raw()
        .iter()
        .zip(up.as_raw())
        .map(|(&s, &u)| i16::from(s) - i16::from(u))
        .collect()
}

/// The whole level as a Rust user would write it: a Gaussian 2x downscale of `src` (both
/// filters and the subsampling in one call), the bilinear upscale and the difference.
pub fn laplacian(resizer: &mut Resizer, src: &GrayImage) -> (Vec<i16>, GrayImage) {
    let down = laplacian_down(resizer, src);
    let lap = laplacian_up_lap(resizer, src, &down);
    (lap, down)
}

// ---- sharpen -----------------------------------------------------------------------------------

/// Stage `down`: a 4x `fast_image_resize` downscale with the box filter, i.e. the mean of each
/// 4x4 block. Differs only in rounding (the crate's fixed-point weights).
pub fn sharpen_down(resizer: &mut Resizer, src: &GrayImage) -> GrayImage {
    fir_resize(
        resizer,
        src,
        src.width() / 4,
        src.height() / 4,
        ResizeAlg::Convolution(FilterType::Box),
    )
}

/// Stage `up`: a 4x bilinear `fast_image_resize` upscale. The same centred weights as the
/// pipeline's eighths (7/8 .. 1/8); differs in rounding and at the borders.
pub fn sharpen_up(resizer: &mut Resizer, down: &GrayImage, w: u32, h: u32) -> GrayImage {
    fir_resize(
        resizer,
        down,
        w,
        h,
        ResizeAlg::Convolution(FilterType::Bilinear),
    )
}

/// Stage `edge`: `imageproc`'s horizontal and vertical Sobel (clamp-to-edge, as the pipeline)
/// and `min(|gx| + |gy|, 255)` in a loop. The same values.
pub fn sharpen_edge(src: &GrayImage) -> GrayImage {
    let gx = horizontal_sobel(src);
    let gy = vertical_sobel(src);
    let v = gx
        .as_raw()
        .iter()
        .zip(gy.as_raw())
        .map(|(&a, &b)| (i32::from(a).abs() + i32::from(b).abs()).min(255) as u8)
        .collect();
    GrayImage::from_raw(src.width(), src.height(), v).expect("size")
}

/// Stage `mean`: no crate has it; a plain iterator sum (64-bit) and the division.
pub fn sharpen_mean(edge: &GrayImage) -> i32 {
    let total: u64 = edge.as_raw().iter().map(|&e| u64::from(e)).sum();
    (total / (u64::from(edge.width()) * u64::from(edge.height()))) as i32
}

/// Stage `final`: the 3x3 min and max with `imageproc`'s grayscale erosion and dilation (pixels
/// outside the image are ignored, which for a min or max is clamp-to-edge, as the pipeline),
/// then err, gain, pre and the clamps in a loop. The same values.
pub fn sharpen_final(src: &GrayImage, up: &GrayImage, edge: &GrayImage, mean: i32) -> GrayImage {
    let mask = Mask::square(1);
    let lo = grayscale_erode(src, &mask);
    let hi = grayscale_dilate(src, &mask);
    let v = (0..src.as_raw().len())
        .map(|i| {
            let (s, u) = (i32::from(src.as_raw()[i]), i32::from(up.as_raw()[i]));
            let err = s - u;
            let gain = (i32::from(edge.as_raw()[i]) * 16 / (mean + 16)).min(32);
            let pre = u + err * (16 + gain) / 16;
            let (l, h) = (i32::from(lo.as_raw()[i]), i32::from(hi.as_raw()[i]));
            pre.clamp(l - 8, h + 8).clamp(0, 255) as u8
        })
        .collect();
    GrayImage::from_raw(src.width(), src.height(), v).expect("size")
}

/// The whole of sharpen from the stages above.
pub fn sharpen(resizer: &mut Resizer, src: &GrayImage) -> GrayImage {
    let down = sharpen_down(resizer, src);
    let up = sharpen_up(resizer, &down, src.width(), src.height());
    let edge = sharpen_edge(src);
    let mean = sharpen_mean(&edge);
    sharpen_final(src, &up, &edge, mean)
}

// ---- blur --------------------------------------------------------------------------------------

const THIRDS: [f32; 3] = [1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0];

/// Stage `bx`: `imageproc::filter::horizontal_filter` with (1 1 1)/3. Differs: f32 sums times
/// 1/3, truncated (the integer division may differ by one), and a clamped border keeps all N
/// columns.
pub fn blur_bx(src: &Gray16) -> Gray16 {
    horizontal_filter(src, &THIRDS)
}

/// Stage `out`: `imageproc::filter::vertical_filter` with (1 1 1)/3 (as `blur_bx`).
pub fn blur_out(bx: &Gray16) -> Gray16 {
    vertical_filter(bx, &THIRDS)
}

/// The whole blur: `imageproc::filter::separable_filter_equal` (the two calls above).
pub fn blur(src: &Gray16) -> Gray16 {
    separable_filter_equal(src, &THIRDS)
}

/// The whole blur with `image::imageops::filter3x3` and a 3x3 kernel of 1/9: one
/// non-separable pass (9 taps a pixel), f32, the border pixels handled by the crate.
pub fn blur_filter3x3(src: &Gray16) -> Gray16 {
    image::imageops::filter3x3(src, &[1.0 / 9.0; 9])
}

// ---- unsharp -----------------------------------------------------------------------------------

/// The 7 taps `k3 k2 k1 k0 k1 k2 k3` of unsharp.
fn taps7() -> [f32; 7] {
    let k = crate::hand::unsharp_taps();
    [k[3], k[2], k[1], k[0], k[1], k[2], k[3]]
}

/// Stage `gray`: `image::imageops::grayscale` of the interleaved RGB float image. Differs: the
/// crate uses the Rec. 709 weights (0.2126, 0.7152, 0.0722), not 0.299, 0.587, 0.114.
pub fn unsharp_gray(img: &Rgb32FImage) -> GrayF {
    image::imageops::grayscale(img)
}

/// Stage `vertical`: `imageproc::filter::vertical_filter` with the 7 taps, clamp-to-edge, f32:
/// the same computation.
pub fn unsharp_vertical(gray: &GrayF) -> GrayF {
    vertical_filter(gray, &taps7())
}

/// Stage `horizontal_ratio`: `imageproc::filter::horizontal_filter` with the 7 taps, then the
/// ratio applied to the three channels in a loop. The same computation.
pub fn unsharp_horizontal_ratio(img: &Rgb32FImage, gray: &GrayF, by: &GrayF) -> Rgb32FImage {
    let bx = horizontal_filter(by, &taps7());
    let mut out = img.clone();
    for ((px, &g), &b) in out
        .as_mut()
        .chunks_exact_mut(3)
        .zip(gray.as_raw())
        .zip(bx.as_raw())
    {
        let ratio = (2.0 * g - b) / g;
        for c in px {
            *c *= ratio;
        }
    }
    out
}

/// The whole unsharp from the stages above.
pub fn unsharp(img: &Rgb32FImage) -> Rgb32FImage {
    let gray = unsharp_gray(img);
    let by = unsharp_vertical(&gray);
    unsharp_horizontal_ratio(img, &gray, &by)
}

/// The whole unsharp with `image::imageops::unsharpen` (sigma 1.5, threshold 0). Differs: it
/// sharpens each channel with its own Gaussian blur (normalised, 2-D) by adding the difference,
/// instead of scaling the channels by the ratio of the gray image's.
pub fn unsharp_image_unsharpen(img: &Rgb32FImage) -> Rgb32FImage {
    image::imageops::unsharpen(img, 1.5, 0)
}
