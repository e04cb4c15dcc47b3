//! Matrices from and to files: PNG (through `image`, feature `image`, on by default) and NumPy
//! `.npy` with exact element types (always). Without the feature `image`, the PNG functions,
//! the conversions to and from `image` buffers and [`Error::Image`] are left out.
//!
//! # In memory: matrices and `image` buffers
//!
//! | matrix | image | conversion |
//! |---|---|---|
//! | `Matrix<u8>` `[M][N]` | [`GrayImage`] (`M` rows of `N` pixels) | the values as they are |
//! | `Matrix<u16>` `[M][N]` | [`Gray16Image`] | the values as they are |
//! | `Matrix<f32>` `[3][M][N]` (planar R, G, B) | [`Rgb32FImage`] (interleaved) | the values as they are |
//!
//! See [`Matrix::from_gray8`], [`Matrix::to_gray8`], [`Matrix::from_gray16`],
//! [`Matrix::to_gray16`], [`Matrix::from_rgb32f`] and [`Matrix::to_rgb32f`] (and the equivalent
//! `From` / `TryFrom` impls).
//!
//! # PNG files in: [`load_png`]
//!
//! A PNG file becomes the input a pipeline needs:
//!
//! - `Matrix<u8>` `[M][N]`: 8-bit gray. A colour file goes through the `image` crate's luma
//!   conversion, a 16-bit file through its 16-to-8-bit reduction.
//! - `Matrix<u16>` `[M][N]`: 12-bit gray, `v >> 4` of the 16-bit gray value. An 8-bit file is
//!   first widened by `image` (`b * 257`), so byte `b` becomes `(b * 257) >> 4`: 0 stays 0 and
//!   255 becomes 4095, the full 12-bit range.
//! - `Matrix<f32>` `[3][M][N]`: planar RGB in `[1/255, 1]`: byte `b` becomes `max(b, 1) / 255`
//!   (only black moves, from 0 to 1/255; every other byte is exactly `b / 255`). A 16-bit file
//!   gives `max(v, 257) / 65535`. A gray file gives three equal planes; alpha is dropped.
//!
//! # PNG files out, for people: [`save_png_view`]
//!
//! Any matrix can be written as an 8-bit PNG to look at; the mapping depends on the element
//! type and is fixed (it does not depend on the values, so two images of one pipeline compare):
//!
//! - `u8`: the value as it is;
//! - `u16`: 12-bit values scaled to 8 bits, `min(v >> 4, 255)`;
//! - `i8`, `i16`, `i32`: around mid-grey, `clamp(128 + v, 0, 255)` (0 is grey 128; a Laplacian
//!   level of -255..255 shows its small values well and saturates its large ones);
//! - `u32`: `min(v, 255)`;
//! - `f32`: `round(clamp(v, 0, 1) * 255)` (NaN shows as 0).
//!
//! Layout: a `[M][N]` matrix is an `M x N` gray image; an `f32` `[3][M][N]` matrix is an RGB
//! image; any other `[C][M][N]` matrix shows its `C` planes stacked top to bottom (a gray image
//! of `C * M` rows); a vector `[N]` is a single row.
//!
//! # Exact files: [`save_exact`], [`save_png_exact`], [`load_png_exact`]
//!
//! Beside the viewable PNG, [`save_exact`] writes any matrix exactly: `.npy` for every element
//! type, and an 8- or 16-bit gray PNG for a `[M][N]` matrix of `u8` or `u16`, which
//! [`load_png_exact`] reads back bit for bit (a `u16` PNG loads as 16 bits there; [`load_png`]
//! keeps its 12-bit reading for the pipelines that expect it).
//!
//! # Errors
//!
//! Each keeps its cause ([`std::error::Error::source`]) and the path as a `PathBuf`:
//! [`Error::File`] (`std::io::Error`), `Error::Image` (`image::ImageError`), [`Error::Npy`],
//! [`Error::Io`] (what does not fit, with an `InvalidInput` cause);
//! a wrong element type or number of dimensions in a file is [`Error::Dtype`] or
//! [`Error::FileRank`], apart from I/O.
//!
//! # NumPy `.npy`
//!
//! [`Matrix::write_npy`] writes the exact element type and shape (C order); [`Matrix::read_npy`]
//! reads a file of 1 to 3 dimensions whose dtype is exactly the element type (either byte order;
//! Fortran order is reordered), and names the path, the expected and the found dtype otherwise.
//! The dtypes: `u8` `|u1`, `i8` `|i1`, `u16` `<u2`, `i16` `<i2`, `u32` `<u4`, `i32` `<i4`,
//! `f32` `<f4` (see [`npy_dtype`]).

use std::fmt::Display;
use std::path::Path;

#[cfg(feature = "image")]
use image::{DynamicImage, GrayImage, ImageBuffer, ImageReader, Luma, Rgb32FImage};

use crate::Error;
#[cfg(feature = "image")]
use crate::{Element, Matrix};

/// Runs `$body` with `$m` bound to `$any` downcast to the concrete `Matrix<..>` of one of the
/// language's element types; evaluates to `None` for another type.
macro_rules! with_concrete {
    ($any:expr, |$m:ident| $body:expr) => {{
        let any: &dyn Any = $any;
        if let Some($m) = any.downcast_ref::<Matrix<u8>>() {
            Some($body)
        } else if let Some($m) = any.downcast_ref::<Matrix<i8>>() {
            Some($body)
        } else if let Some($m) = any.downcast_ref::<Matrix<u16>>() {
            Some($body)
        } else if let Some($m) = any.downcast_ref::<Matrix<i16>>() {
            Some($body)
        } else if let Some($m) = any.downcast_ref::<Matrix<u32>>() {
            Some($body)
        } else if let Some($m) = any.downcast_ref::<Matrix<i32>>() {
            Some($body)
        } else if let Some($m) = any.downcast_ref::<Matrix<f32>>() {
            Some($body)
        } else {
            None
        }
    }};
}

// The submodules come after `with_concrete!`, which `npy` and `view` use.
mod exact;
mod npy;
#[cfg(feature = "image")]
mod png;
#[cfg(test)]
mod tests;
#[cfg(feature = "image")]
mod view;

pub use exact::save_exact;
#[cfg(feature = "image")]
pub use exact::{ExactPng, load_png_exact, save_png_exact};
pub use npy::npy_dtype;
#[cfg(feature = "image")]
pub use png::{FromPng, load_png};
#[cfg(feature = "image")]
pub use view::save_png_view;

#[cfg(feature = "image")]
/// A 16-bit gray image (`image` has no alias for it).
pub type Gray16Image = ImageBuffer<Luma<u16>, Vec<u16>>;

/// `Error::File` of `path`, the `std::io::Error` kept as its cause.
fn file_error(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::File {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(feature = "image")]
/// `Error::Image` of `path`, the `image::ImageError` kept as its cause.
fn image_error(path: &Path) -> impl Fn(image::ImageError) -> Error + '_ {
    move |source| Error::Image {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(feature = "image")]
/// Reads and decodes an image file, recognised by its content.
fn decode(path: &Path) -> Result<DynamicImage, Error> {
    ImageReader::open(path)
        .map_err(file_error(path))?
        .with_guessed_format()
        .map_err(file_error(path))?
        .decode()
        .map_err(image_error(path))
}

/// `Error::Io` of `path`: `what` does not fit, `message` says how (an `InvalidInput` cause).
fn io_error(path: &Path, what: &'static str, message: impl Display) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        what,
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, message.to_string()),
    }
}

#[cfg(feature = "image")]
/// Width and height of the image of a 2-D `[M][N]` matrix (or of a `[C][M][N]` one whose `C`
/// is `channels`), checked.
fn image_dims<T: Element>(
    m: &Matrix<T>,
    function: &'static str,
    declared: &'static str,
    channels: Option<usize>,
) -> Result<(u32, u32), Error> {
    let expected: Vec<usize> = match channels {
        Some(c) => vec![c, m.rows(), m.cols()],
        None => vec![m.rows(), m.cols()],
    };
    if m.shape() != expected.as_slice() {
        return Err(Error::Shape {
            function,
            matrix: "self",
            declared,
            expected,
            got: m.shape().to_vec(),
        });
    }
    let fit = |symbol: &'static str, v: usize| {
        u32::try_from(v).map_err(|_| Error::Size {
            function,
            symbol,
            reason: format!("{v} is larger than an image side can be ({})", u32::MAX),
        })
    };
    Ok((fit("N", m.cols())?, fit("M", m.rows())?))
}

#[cfg(feature = "image")]
/// The pixels of a gray image as a `[height][width]` matrix (values unchanged).
fn from_gray<T: Element + image::Primitive>(img: &ImageBuffer<Luma<T>, Vec<T>>) -> Matrix<T> {
    let (h, w) = (img.height() as usize, img.width() as usize);
    // The buffer may be longer than the image; the pixels are its first `h * w` samples.
    Matrix::from_vec([h, w], img.as_raw()[..h * w].to_vec()).expect("length matches")
}

#[cfg(feature = "image")]
/// A gray image of a `[M][N]` matrix, `N` pixels wide and `M` high (values unchanged);
/// [`Error::Shape`] of `function` if the matrix is not 2-D.
fn to_gray<T: Element + image::Primitive>(
    m: &Matrix<T>,
    function: &'static str,
) -> Result<ImageBuffer<Luma<T>, Vec<T>>, Error> {
    let (w, h) = image_dims(m, function, "[M][N]", None)?;
    Ok(ImageBuffer::from_raw(w, h, m.as_slice().to_vec()).expect("length matches the size"))
}

#[cfg(feature = "image")]
impl Matrix<u8> {
    /// The pixels of an 8-bit gray image as a `[height][width]` matrix.
    pub fn from_gray8(img: &GrayImage) -> Self {
        from_gray(img)
    }

    /// An 8-bit gray image of a `[M][N]` matrix: `N` pixels wide, `M` high.
    ///
    /// # Errors
    /// [`Error::Shape`] if the matrix is not 2-D.
    pub fn to_gray8(&self) -> Result<GrayImage, Error> {
        to_gray(self, "Matrix::to_gray8")
    }
}

#[cfg(feature = "image")]
impl Matrix<u16> {
    /// The pixels of a 16-bit gray image as a `[height][width]` matrix (values unchanged).
    pub fn from_gray16(img: &Gray16Image) -> Self {
        from_gray(img)
    }

    /// A 16-bit gray image of a `[M][N]` matrix (values unchanged).
    ///
    /// # Errors
    /// [`Error::Shape`] if the matrix is not 2-D.
    pub fn to_gray16(&self) -> Result<Gray16Image, Error> {
        to_gray(self, "Matrix::to_gray16")
    }
}

#[cfg(feature = "image")]
impl Matrix<f32> {
    /// The pixels of a float RGB image as a planar `[3][height][width]` matrix (R, G, B planes;
    /// values unchanged).
    pub fn from_rgb32f(img: &Rgb32FImage) -> Self {
        let (h, w) = (img.height() as usize, img.width() as usize);
        let raw = img.as_raw();
        Matrix::from_fn([3, h, w], |i| raw[(i[1] * w + i[2]) * 3 + i[0]])
    }

    /// A float RGB image of a planar `[3][M][N]` matrix (values unchanged, not clamped).
    ///
    /// # Errors
    /// [`Error::Shape`] if the matrix is not `[3][M][N]`.
    pub fn to_rgb32f(&self) -> Result<Rgb32FImage, Error> {
        let (w, h) = image_dims(self, "Matrix::to_rgb32f", "[3][M][N]", Some(3))?;
        let plane = self.rows() * self.cols();
        let s = self.as_slice();
        let raw = (0..plane)
            .flat_map(|p| [s[p], s[plane + p], s[2 * plane + p]])
            .collect();
        Ok(Rgb32FImage::from_raw(w, h, raw).expect("length matches the size"))
    }
}

#[cfg(feature = "image")]
impl From<&GrayImage> for Matrix<u8> {
    fn from(img: &GrayImage) -> Self {
        Matrix::from_gray8(img)
    }
}

#[cfg(feature = "image")]
impl From<&Gray16Image> for Matrix<u16> {
    fn from(img: &Gray16Image) -> Self {
        Matrix::from_gray16(img)
    }
}

#[cfg(feature = "image")]
impl From<&Rgb32FImage> for Matrix<f32> {
    fn from(img: &Rgb32FImage) -> Self {
        Matrix::from_rgb32f(img)
    }
}

#[cfg(feature = "image")]
impl TryFrom<&Matrix<u8>> for GrayImage {
    type Error = Error;
    fn try_from(m: &Matrix<u8>) -> Result<Self, Error> {
        m.to_gray8()
    }
}

#[cfg(feature = "image")]
impl TryFrom<&Matrix<u16>> for Gray16Image {
    type Error = Error;
    fn try_from(m: &Matrix<u16>) -> Result<Self, Error> {
        m.to_gray16()
    }
}

#[cfg(feature = "image")]
impl TryFrom<&Matrix<f32>> for Rgb32FImage {
    type Error = Error;
    fn try_from(m: &Matrix<f32>) -> Result<Self, Error> {
        m.to_rgb32f()
    }
}
