//! PNG files in ([`load_png`]): a decoded image as the matrix a pipeline takes, per element
//! type ([`FromPng`]: 8-bit gray, 12-bit gray, planar RGB in `[1/255, 1]`).

use std::path::Path;

use image::DynamicImage;

use super::decode;
use crate::{Element, Error, Matrix};

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for f32 {}
}

/// The element types [`load_png`] can produce: `u8` (8-bit gray), `u16` (12-bit gray) and `f32`
/// (planar RGB in `[1/255, 1]`); see the [module documentation](super) for the conversions.
pub trait FromPng: Element + sealed::Sealed {
    /// The matrix a decoded image gives.
    #[doc(hidden)]
    fn from_image(img: DynamicImage) -> Matrix<Self>;
}

impl FromPng for u8 {
    fn from_image(img: DynamicImage) -> Matrix<u8> {
        Matrix::from_gray8(&img.to_luma8())
    }
}

impl FromPng for u16 {
    fn from_image(img: DynamicImage) -> Matrix<u16> {
        Matrix::from_gray16(&img.to_luma16()).map(|v| v >> 4)
    }
}

impl FromPng for f32 {
    fn from_image(img: DynamicImage) -> Matrix<f32> {
        let sixteen_bits = matches!(
            img,
            DynamicImage::ImageLuma16(_)
                | DynamicImage::ImageLumaA16(_)
                | DynamicImage::ImageRgb16(_)
                | DynamicImage::ImageRgba16(_)
        );
        let (w, h) = (img.width() as usize, img.height() as usize);
        if sixteen_bits {
            let rgb = img.to_rgb16();
            let raw = rgb.as_raw();
            Matrix::from_fn([3, h, w], |i| {
                f32::from(raw[(i[1] * w + i[2]) * 3 + i[0]].max(257)) / 65535.0
            })
        } else {
            let rgb = img.to_rgb8();
            let raw = rgb.as_raw();
            Matrix::from_fn([3, h, w], |i| {
                f32::from(raw[(i[1] * w + i[2]) * 3 + i[0]].max(1)) / 255.0
            })
        }
    }
}

/// Reads a PNG (or any image format the build of `image` decodes, recognised by its content)
/// as the matrix a pipeline takes: `Matrix<u8>` 8-bit gray, `Matrix<u16>` 12-bit gray,
/// `Matrix<f32>` `[3][M][N]` planar RGB in `[1/255, 1]`. See the [module documentation](super)
/// for the exact conversions.
///
/// # Errors
/// [`Error::File`] or [`Error::Image`] naming the path, their cause kept, if the file cannot be
/// read or decoded.
pub fn load_png<T: FromPng>(path: impl AsRef<Path>) -> Result<Matrix<T>, Error> {
    Ok(T::from_image(decode(path.as_ref())?))
}
