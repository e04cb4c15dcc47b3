//! PNG files out, for people ([`save_png_view`]): any matrix as an 8-bit gray or RGB PNG,
//! through a fixed mapping per element type ([`ViewByte`]).

use std::any::{Any, TypeId};
use std::path::Path;

use image::{DynamicImage, GrayImage, ImageFormat};

use super::{image_error, io_error};
use crate::{Element, Error, Matrix};

/// How [`save_png_view`] shows one element as a gray byte.
pub(super) trait ViewByte: Copy {
    fn view_byte(self) -> u8;
}

impl ViewByte for u8 {
    fn view_byte(self) -> u8 {
        self
    }
}

impl ViewByte for u16 {
    fn view_byte(self) -> u8 {
        (self >> 4).min(255) as u8
    }
}

impl ViewByte for u32 {
    fn view_byte(self) -> u8 {
        self.min(255) as u8
    }
}

macro_rules! view_signed {
    ($($t:ty),*) => {$(
        impl ViewByte for $t {
            fn view_byte(self) -> u8 {
                (128 + i64::from(self)).clamp(0, 255) as u8
            }
        }
    )*};
}
view_signed!(i8, i16, i32);

impl ViewByte for f32 {
    fn view_byte(self) -> u8 {
        // `f32::clamp` keeps NaN, and `NaN as u8` is 0.
        (self.clamp(0.0, 1.0) * 255.0).round() as u8
    }
}

fn view_bytes<T: ViewByte>(s: &[T]) -> Vec<u8> {
    s.iter().map(|v| v.view_byte()).collect()
}

/// Writes an 8-bit PNG of any matrix for people to look at (not to read back exactly): gray,
/// or RGB for an `f32` `[3][M][N]` matrix. The value mapping (fixed per element type) and the
/// layout are in the [module documentation](super).
///
/// # Errors
/// [`Error::Io`] naming the path if the matrix is empty, too large for an image or its element
/// type is not one of the language's; [`Error::Image`] (its cause kept) if the file cannot be
/// written.
pub fn save_png_view<T: Element>(m: &Matrix<T>, path: impl AsRef<Path>) -> Result<(), Error> {
    let path = path.as_ref();
    if m.is_empty() {
        return Err(io_error(
            path,
            "no PNG view",
            format!(
                "nothing to show: the matrix of shape {:?} is empty",
                m.shape()
            ),
        ));
    }
    let bytes = with_concrete!(m, |c| view_bytes(c.as_slice())).ok_or_else(|| {
        io_error(
            path,
            "no PNG view",
            format!("no PNG view for element type `{}`", T::NAME),
        )
    })?;
    let rgb = TypeId::of::<T>() == TypeId::of::<f32>() && m.ndim() == 3 && m.shape()[0] == 3;
    let (w, h) = if rgb {
        (m.cols(), m.rows())
    } else {
        // Planes (if any) stacked top to bottom.
        (m.cols(), m.len() / m.cols())
    };
    let too_large = || {
        io_error(
            path,
            "no PNG view",
            format!("shape {:?} is too large for a PNG", m.shape()),
        )
    };
    let w = u32::try_from(w).map_err(|_| too_large())?;
    let h = u32::try_from(h).map_err(|_| too_large())?;
    let img = if rgb {
        let plane = m.rows() * m.cols();
        let raw = (0..plane)
            .flat_map(|p| [bytes[p], bytes[plane + p], bytes[2 * plane + p]])
            .collect();
        DynamicImage::ImageRgb8(image::RgbImage::from_raw(w, h, raw).expect("length matches"))
    } else {
        DynamicImage::ImageLuma8(GrayImage::from_raw(w, h, bytes).expect("length matches"))
    };
    img.save_with_format(path, ImageFormat::Png)
        .map_err(image_error(path))
}
