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

use std::any::{Any, TypeId};
use std::fmt::Display;
use std::path::Path;

mod exact;
pub use exact::save_exact;
#[cfg(feature = "image")]
pub use exact::{ExactPng, load_png_exact, save_png_exact};

#[cfg(feature = "image")]
use image::{DynamicImage, GrayImage, ImageBuffer, ImageFormat, ImageReader, Luma, Rgb32FImage};

use crate::{Element, Error, Matrix};

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

#[cfg(feature = "image")]
mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for f32 {}
}

#[cfg(feature = "image")]
/// The element types [`load_png`] can produce: `u8` (8-bit gray), `u16` (12-bit gray) and `f32`
/// (planar RGB in `[1/255, 1]`); see the [module documentation](self) for the conversions.
pub trait FromPng: Element + sealed::Sealed {
    /// The matrix a decoded image gives.
    #[doc(hidden)]
    fn from_image(img: DynamicImage) -> Matrix<Self>;
}

#[cfg(feature = "image")]
impl FromPng for u8 {
    fn from_image(img: DynamicImage) -> Matrix<u8> {
        Matrix::from_gray8(&img.to_luma8())
    }
}

#[cfg(feature = "image")]
impl FromPng for u16 {
    fn from_image(img: DynamicImage) -> Matrix<u16> {
        Matrix::from_gray16(&img.to_luma16()).map(|v| v >> 4)
    }
}

#[cfg(feature = "image")]
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

#[cfg(feature = "image")]
/// Reads a PNG (or any image format the build of `image` decodes, recognised by its content)
/// as the matrix a pipeline takes: `Matrix<u8>` 8-bit gray, `Matrix<u16>` 12-bit gray,
/// `Matrix<f32>` `[3][M][N]` planar RGB in `[1/255, 1]`. See the [module documentation](self)
/// for the exact conversions.
///
/// # Errors
/// [`Error::File`] or [`Error::Image`] naming the path, their cause kept, if the file cannot be
/// read or decoded.
pub fn load_png<T: FromPng>(path: impl AsRef<Path>) -> Result<Matrix<T>, Error> {
    Ok(T::from_image(decode(path.as_ref())?))
}

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

#[cfg(feature = "image")]
/// How [`save_png_view`] shows one element as a gray byte.
trait ViewByte: Copy {
    fn view_byte(self) -> u8;
}

#[cfg(feature = "image")]
impl ViewByte for u8 {
    fn view_byte(self) -> u8 {
        self
    }
}

#[cfg(feature = "image")]
impl ViewByte for u16 {
    fn view_byte(self) -> u8 {
        (self >> 4).min(255) as u8
    }
}

#[cfg(feature = "image")]
impl ViewByte for u32 {
    fn view_byte(self) -> u8 {
        self.min(255) as u8
    }
}

#[cfg(feature = "image")]
macro_rules! view_signed {
    ($($t:ty),*) => {$(
        impl ViewByte for $t {
            fn view_byte(self) -> u8 {
                (128 + i64::from(self)).clamp(0, 255) as u8
            }
        }
    )*};
}
#[cfg(feature = "image")]
view_signed!(i8, i16, i32);

#[cfg(feature = "image")]
impl ViewByte for f32 {
    fn view_byte(self) -> u8 {
        // `f32::clamp` keeps NaN, and `NaN as u8` is 0.
        (self.clamp(0.0, 1.0) * 255.0).round() as u8
    }
}

#[cfg(feature = "image")]
fn view_bytes<T: ViewByte>(s: &[T]) -> Vec<u8> {
    s.iter().map(|v| v.view_byte()).collect()
}

#[cfg(feature = "image")]
/// Writes an 8-bit PNG of any matrix for people to look at (not to read back exactly): gray,
/// or RGB for an `f32` `[3][M][N]` matrix. The value mapping (fixed per element type) and the
/// layout are in the [module documentation](self).
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

/// The NumPy dtype of an element type as NumPy writes it (`|u1`, `|i1`, `<u2`, `<i2`, `<u4`,
/// `<i4`, `<f4`); `None` for a type that is not one of the language's.
pub fn npy_dtype<T: Element>() -> Option<&'static str> {
    let t = TypeId::of::<T>();
    [
        (TypeId::of::<u8>(), "|u1"),
        (TypeId::of::<i8>(), "|i1"),
        (TypeId::of::<u16>(), "<u2"),
        (TypeId::of::<i16>(), "<i2"),
        (TypeId::of::<u32>(), "<u4"),
        (TypeId::of::<i32>(), "<i4"),
        (TypeId::of::<f32>(), "<f4"),
    ]
    .into_iter()
    .find(|&(id, _)| id == t)
    .map(|(_, d)| d)
}

fn npy_bytes<U: Element + npyz::AutoSerialize>(m: &Matrix<U>) -> std::io::Result<Vec<u8>> {
    use npyz::WriterBuilder;
    let shape: Vec<u64> = m.shape().iter().map(|&d| d as u64).collect();
    let mut out = Vec::new();
    let mut writer = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&shape)
        .writer(&mut out)
        .begin_nd()?;
    writer.extend(m.as_slice().iter().copied())?;
    writer.finish()?;
    Ok(out)
}

/// Whether the file's dtype is `expected` up to byte order (`|u1` and `<u1` are both `u8`).
fn same_dtype(found: &npyz::DType, expected: &str) -> bool {
    let (npyz::DType::Plain(found), Ok(expected)) = (found, expected.parse::<npyz::TypeStr>())
    else {
        return false;
    };
    found.type_char() == expected.type_char()
        && found.size_field() == expected.size_field()
        && found.time_units().is_none()
}

/// `Error::Npy` of `path` while doing `what`, the cause kept.
fn npy_error<'p>(path: &'p Path, what: &'static str) -> impl Fn(std::io::Error) -> Error + 'p {
    move |source| Error::Npy {
        path: path.to_path_buf(),
        what,
        source,
    }
}

fn npy_read<U: Element + npyz::Deserialize>(
    path: &Path,
    bytes: &[u8],
    expected: &str,
) -> Result<Matrix<U>, Error> {
    let npy = npyz::NpyFile::new(bytes).map_err(npy_error(path, "not a .npy file"))?;
    let dtype = npy.dtype();
    if !same_dtype(&dtype, expected) {
        return Err(Error::Dtype {
            path: path.to_path_buf(),
            expected: format!("'{expected}'"),
            elem: U::NAME,
            found: dtype.descr(),
        });
    }
    let shape: Vec<usize> = npy
        .shape()
        .iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<_, _>>()
        .map_err(|_| {
            io_error(
                path,
                "reading a .npy file",
                format!("shape {:?} is too large", npy.shape()),
            )
        })?;
    if !(1..=3).contains(&shape.len()) {
        return Err(Error::FileRank {
            path: path.to_path_buf(),
            elem: U::NAME,
            got: shape,
        });
    }
    let order = npy.order();
    let data: Vec<U> = npy
        .into_vec()
        .map_err(npy_error(path, "reading the data"))?;
    let m = match order {
        npyz::Order::C => Matrix::from_vec(shape, data),
        npyz::Order::Fortran => {
            // The first index varies fastest in the file.
            let dims = shape.clone();
            Some(Matrix::from_fn(shape, |i| {
                let mut off = 0;
                for d in (0..dims.len()).rev() {
                    off = off * dims[d] + i[d];
                }
                data[off]
            }))
        }
    };
    m.ok_or_else(|| {
        io_error(
            path,
            "reading a .npy file",
            "the data does not match the shape",
        )
    })
}

impl<T: Element> Matrix<T> {
    /// Writes the matrix as a NumPy `.npy` file with its exact dtype (see [`npy_dtype`]) and
    /// shape, C order.
    ///
    /// # Errors
    /// [`Error::File`] naming the path, its cause kept, if the file cannot be written.
    pub fn write_npy(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        let bytes = with_concrete!(self, |m| npy_bytes(m))
            .ok_or_else(|| io_error(path, ".npy", format!("no .npy dtype for `{}`", T::NAME)))?
            .map_err(npy_error(path, "encoding"))?;
        std::fs::write(path, bytes).map_err(file_error(path))
    }

    /// Reads a NumPy `.npy` file of 1 to 3 dimensions whose dtype is exactly `T`'s (either byte
    /// order; see [`npy_dtype`]).
    ///
    /// # Errors
    /// Naming the path: [`Error::File`] if the file cannot be read, [`Error::Npy`] if it is not
    /// a `.npy` file (causes kept), [`Error::Dtype`] if it has another dtype (the expected and
    /// the found one), [`Error::FileRank`] if it has another number of dimensions.
    pub fn read_npy(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let expected = npy_dtype::<T>()
            .ok_or_else(|| io_error(path, ".npy", format!("no .npy dtype for `{}`", T::NAME)))?;
        let bytes = std::fs::read(path).map_err(file_error(path))?;
        fn boxed<U: Element>(m: Result<Matrix<U>, Error>) -> Result<Box<dyn Any>, Error> {
            m.map(|m| Box::new(m) as Box<dyn Any>)
        }
        let t = TypeId::of::<T>();
        let any = if t == TypeId::of::<u8>() {
            boxed(npy_read::<u8>(path, &bytes, expected))
        } else if t == TypeId::of::<i8>() {
            boxed(npy_read::<i8>(path, &bytes, expected))
        } else if t == TypeId::of::<u16>() {
            boxed(npy_read::<u16>(path, &bytes, expected))
        } else if t == TypeId::of::<i16>() {
            boxed(npy_read::<i16>(path, &bytes, expected))
        } else if t == TypeId::of::<u32>() {
            boxed(npy_read::<u32>(path, &bytes, expected))
        } else if t == TypeId::of::<i32>() {
            boxed(npy_read::<i32>(path, &bytes, expected))
        } else {
            boxed(npy_read::<f32>(path, &bytes, expected))
        }?;
        Ok(*any
            .downcast::<Matrix<T>>()
            .expect("npy_dtype covers exactly the types dispatched on"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A fresh directory for one test's files, removed when dropped.
    struct TempDir(PathBuf);

    impl std::ops::Deref for TempDir {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn temp_dir(test: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("parac-io-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    // ---- A PNG encoder written by hand (stored deflate blocks), independent of `image`. ----

    #[cfg(feature = "image")]
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[cfg(feature = "image")]
    fn adler32(bytes: &[u8]) -> u32 {
        let (mut a, mut b) = (1u32, 0u32);
        for &x in bytes {
            a = (a + u32::from(x)) % 65521;
            b = (b + a) % 65521;
        }
        (b << 16) | a
    }

    #[cfg(feature = "image")]
    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
        out.extend((data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend(data);
        out.extend(&body);
        out.extend(crc32(&body).to_be_bytes());
    }

    /// A PNG of `rows` rows of big-endian sample bytes (`row_bytes` each), filter 0, with the
    /// given bit depth and colour type (0 gray, 2 RGB).
    #[cfg(feature = "image")]
    fn hand_png(width: u32, rows: &[Vec<u8>], depth: u8, colour: u8) -> Vec<u8> {
        let mut raw = Vec::new();
        for r in rows {
            raw.push(0); // filter type None
            raw.extend(r);
        }
        assert!(raw.len() < 65536, "one stored block");
        let mut z = vec![0x78, 0x01, 0x01];
        z.extend((raw.len() as u16).to_le_bytes());
        z.extend((!(raw.len() as u16)).to_le_bytes());
        z.extend(&raw);
        z.extend(adler32(&raw).to_be_bytes());
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        let mut ihdr = width.to_be_bytes().to_vec();
        ihdr.extend((rows.len() as u32).to_be_bytes());
        ihdr.extend([depth, colour, 0, 0, 0]);
        chunk(&mut png, b"IHDR", &ihdr);
        chunk(&mut png, b"IDAT", &z);
        chunk(&mut png, b"IEND", &[]);
        png
    }

    #[cfg(feature = "image")]
    #[test]
    fn hand_made_gray8_png_loads_as_u8_u16_and_f32() {
        let dir = temp_dir("hand8");
        let path = dir.join("tiny.png");
        // 2 rows x 3 columns.
        std::fs::write(
            &path,
            hand_png(3, &[vec![0, 1, 2], vec![128, 254, 255]], 8, 0),
        )
        .unwrap();
        let m: Matrix<u8> = load_png(&path).unwrap();
        assert_eq!(m.shape(), &[2, 3]);
        assert_eq!(m.as_slice(), &[0, 1, 2, 128, 254, 255]);
        // 12-bit: (b * 257) >> 4.
        let m: Matrix<u16> = load_png(&path).unwrap();
        assert_eq!(m.as_slice(), &[0, 16, 32, 2056, 4079, 4095]);
        // RGB planar, max(b, 1) / 255, three equal planes.
        let m: Matrix<f32> = load_png(&path).unwrap();
        assert_eq!(m.shape(), &[3, 2, 3]);
        let want = [1.0, 1.0, 2.0, 128.0, 254.0, 255.0].map(|v: f32| v / 255.0);
        for c in 0..3 {
            assert_eq!(m.plane(c).as_slice(), &want);
        }
    }

    #[cfg(feature = "image")]
    #[test]
    fn hand_made_gray16_png_loads_as_12_bit() {
        let dir = temp_dir("hand16");
        let path = dir.join("tiny16.png");
        let vals: [u16; 4] = [0, 0x0010, 0x1234, 0xFFFF];
        let row: Vec<u8> = vals.iter().flat_map(|v| v.to_be_bytes()).collect();
        std::fs::write(
            &path,
            hand_png(2, &[row[..4].to_vec(), row[4..].to_vec()], 16, 0),
        )
        .unwrap();
        let m: Matrix<u16> = load_png(&path).unwrap();
        assert_eq!(m.shape(), &[2, 2]);
        assert_eq!(m.as_slice(), &[0, 0x001, 0x123, 0xFFF]);
        let f: Matrix<f32> = load_png(&path).unwrap();
        assert_eq!(f.get(&[0, 0, 0]), 257.0 / 65535.0);
        assert_eq!(f.get(&[2, 1, 1]), 1.0);
    }

    #[cfg(feature = "image")]
    #[test]
    fn hand_made_rgb8_png_loads_planar() {
        let dir = temp_dir("handrgb");
        let path = dir.join("rgb.png");
        // One row of two pixels: (10, 20, 30), (0, 255, 7).
        std::fs::write(&path, hand_png(2, &[vec![10, 20, 30, 0, 255, 7]], 8, 2)).unwrap();
        let m: Matrix<f32> = load_png(&path).unwrap();
        assert_eq!(m.shape(), &[3, 1, 2]);
        let want = [10.0, 1.0, 20.0, 255.0, 30.0, 7.0].map(|v: f32| v / 255.0);
        assert_eq!(m.as_slice(), &want);
        // Gray of a colour file: whatever `image`'s luma gives, one value per pixel.
        let g: Matrix<u8> = load_png(&path).unwrap();
        assert_eq!(g.shape(), &[1, 2]);
    }

    #[cfg(feature = "image")]
    #[test]
    fn gray8_round_trip_in_memory_and_on_disk() {
        let m = Matrix::<u8>::from_fn([3, 5], |i| (i[0] * 50 + i[1] * 7) as u8);
        let img = m.to_gray8().unwrap();
        assert_eq!((img.width(), img.height()), (5, 3));
        assert_eq!(img.get_pixel(4, 2).0, [m.get(&[2, 4])]);
        assert_eq!(Matrix::from_gray8(&img), m);
        assert_eq!(Matrix::from(&GrayImage::try_from(&m).unwrap()), m);

        let dir = temp_dir("gray8");
        let path = dir.join("g.png");
        img.save(&path).unwrap();
        assert_eq!(load_png::<u8>(&path).unwrap(), m);
        save_png_view(&m, dir.join("v.png")).unwrap();
        assert_eq!(load_png::<u8>(dir.join("v.png")).unwrap(), m);
    }

    #[cfg(feature = "image")]
    #[test]
    fn gray16_round_trip() {
        let m = Matrix::<u16>::from_fn([4, 3], |i| (i[0] * 20000 + i[1] * 999) as u16);
        let img = m.to_gray16().unwrap();
        assert_eq!((img.width(), img.height()), (3, 4));
        assert_eq!(img.get_pixel(1, 3).0, [m.get(&[3, 1])]);
        assert_eq!(Matrix::from_gray16(&img), m);
        assert_eq!(Matrix::from(&Gray16Image::try_from(&m).unwrap()), m);

        let dir = temp_dir("gray16");
        let path = dir.join("g16.png");
        img.save(&path).unwrap();
        assert_eq!(load_png::<u16>(&path).unwrap(), m.map(|v| v >> 4));
    }

    #[cfg(feature = "image")]
    #[test]
    fn rgb32f_round_trip_is_planar() {
        let m = Matrix::<f32>::from_fn([3, 2, 4], |i| {
            (i[0] * 100 + i[1] * 10 + i[2]) as f32 / 300.0
        });
        let img = m.to_rgb32f().unwrap();
        assert_eq!((img.width(), img.height()), (4, 2));
        assert_eq!(
            img.get_pixel(3, 1).0,
            [m.get(&[0, 1, 3]), m.get(&[1, 1, 3]), m.get(&[2, 1, 3])]
        );
        assert_eq!(Matrix::from_rgb32f(&img), m);
        assert_eq!(Matrix::from(&Rgb32FImage::try_from(&m).unwrap()), m);
    }

    #[cfg(feature = "image")]
    #[test]
    fn rgb8_file_to_f32_is_in_range() {
        let dir = temp_dir("rgbrange");
        let path = dir.join("c.png");
        let img = image::RgbImage::from_fn(16, 16, |x, y| {
            image::Rgb([(x * 16 + y) as u8, (255 - x * 16) as u8, (y * 17) as u8])
        });
        img.save(&path).unwrap();
        let m: Matrix<f32> = load_png(&path).unwrap();
        assert_eq!(m.shape(), &[3, 16, 16]);
        for (off, &v) in m.as_slice().iter().enumerate() {
            let i = m.index_of(off);
            let b = img.get_pixel(i[2] as u32, i[1] as u32).0[i[0]];
            assert_eq!(v, f32::from(b.max(1)) / 255.0);
            assert!((1.0 / 255.0..=1.0).contains(&v));
        }
    }

    #[cfg(feature = "image")]
    #[test]
    fn wrong_shapes_do_not_convert() {
        let e = Matrix::<u8>::zeros([2, 2, 2]).to_gray8().unwrap_err();
        assert!(matches!(e, Error::Shape { .. }), "{e}");
        assert!(e.to_string().contains("[2][2][2]"), "{e}");
        assert!(Matrix::<u16>::zeros([5]).to_gray16().is_err());
        let e = Matrix::<f32>::zeros([4, 2, 2]).to_rgb32f().unwrap_err();
        assert!(e.to_string().contains("[3][M][N] = [3][2][2]"), "{e}");
        assert!(Matrix::<f32>::zeros([2, 2]).to_rgb32f().is_err());
    }

    #[cfg(feature = "image")]
    #[test]
    fn load_png_errors_name_the_path() {
        let dir = temp_dir("loaderr");
        let missing = dir.join("missing.png");
        let e = load_png::<u8>(&missing).unwrap_err();
        assert!(
            matches!(&e, Error::File { path, source } if path.ends_with("missing.png")
                && source.kind() == std::io::ErrorKind::NotFound),
            "{e}"
        );
        let junk = dir.join("junk.png");
        std::fs::write(&junk, b"not an image at all").unwrap();
        let e = load_png::<f32>(&junk).unwrap_err();
        assert!(
            matches!(&e, Error::Image { path, .. } if path.ends_with("junk.png")),
            "{e}"
        );
        assert!(std::error::Error::source(&e).is_some(), "the cause is kept");
    }

    #[cfg(feature = "image")]
    #[test]
    fn view_byte_mappings() {
        assert_eq!([0u8, 77, 255].map(ViewByte::view_byte), [0, 77, 255]);
        assert_eq!(
            [0u16, 15, 16, 4095, 65535].map(ViewByte::view_byte),
            [0, 0, 1, 255, 255]
        );
        assert_eq!(
            [-128i8, -1, 0, 127].map(ViewByte::view_byte),
            [0, 127, 128, 255]
        );
        assert_eq!(
            [-300i16, -128, -5, 0, 100, 127, 128, 300].map(ViewByte::view_byte),
            [0, 0, 123, 128, 228, 255, 255, 255]
        );
        assert_eq!([i32::MIN, i32::MAX].map(ViewByte::view_byte), [0, 255]);
        assert_eq!(
            [0u32, 255, 256, u32::MAX].map(ViewByte::view_byte),
            [0, 255, 255, 255]
        );
        assert_eq!(
            [-1.0f32, 0.0, 0.5, 1.0, 2.0, f32::NAN].map(ViewByte::view_byte),
            [0, 0, 128, 255, 255, 0]
        );
    }

    #[cfg(feature = "image")]
    #[test]
    fn views_of_every_kind_of_matrix() {
        let dir = temp_dir("views");
        // Signed 2-D around mid-grey.
        let s = Matrix::<i16>::from_vec([1, 3], vec![-200, 0, 5]).unwrap();
        save_png_view(&s, dir.join("s.png")).unwrap();
        assert_eq!(
            load_png::<u8>(dir.join("s.png")).unwrap().as_slice(),
            &[0, 128, 133]
        );
        // 12-bit.
        let u = Matrix::<u16>::from_vec([2, 1], vec![4095, 2048]).unwrap();
        save_png_view(&u, dir.join("u.png")).unwrap();
        assert_eq!(
            load_png::<u8>(dir.join("u.png")).unwrap().as_slice(),
            &[255, 128]
        );
        // f32 RGB: an RGB file.
        let rgb = Matrix::<f32>::from_vec([3, 1, 2], vec![1.0, 0.0, 0.0, 0.5, 2.0, -1.0]).unwrap();
        save_png_view(&rgb, dir.join("rgb.png")).unwrap();
        let img = image::open(dir.join("rgb.png")).unwrap();
        assert_eq!(img.color(), image::ColorType::Rgb8);
        assert_eq!(img.to_rgb8().as_raw(), &[255, 0, 255, 0, 128, 0]);
        // f32 2-D: gray 0..1.
        let g = Matrix::<f32>::from_vec([1, 2], vec![0.25, 1.5]).unwrap();
        save_png_view(&g, dir.join("g.png")).unwrap();
        assert_eq!(
            load_png::<u8>(dir.join("g.png")).unwrap().as_slice(),
            &[64, 255]
        );
        // Other 3-D: planes stacked top to bottom.
        let p = Matrix::<u8>::from_fn([2, 2, 3], |i| (i[0] * 100 + i[1] * 10 + i[2]) as u8);
        save_png_view(&p, dir.join("p.png")).unwrap();
        let back = load_png::<u8>(dir.join("p.png")).unwrap();
        assert_eq!(back.shape(), &[4, 3]);
        assert_eq!(back.as_slice(), p.as_slice());
        let f4 = Matrix::<f32>::zeros([4, 2, 2]);
        save_png_view(&f4, dir.join("f4.png")).unwrap();
        assert_eq!(load_png::<u8>(dir.join("f4.png")).unwrap().shape(), &[8, 2]);
        // A vector: one row.
        let v = Matrix::<i32>::from_vec([4], vec![-1000, -1, 1, 1000]).unwrap();
        save_png_view(&v, dir.join("v.png")).unwrap();
        assert_eq!(
            load_png::<u8>(dir.join("v.png")).unwrap().as_slice(),
            &[0, 127, 129, 255]
        );
        // i8 and u32 work too.
        save_png_view(&Matrix::<i8>::zeros([2, 2]), dir.join("i8.png")).unwrap();
        save_png_view(&Matrix::<u32>::zeros([2, 2]), dir.join("u32.png")).unwrap();
        // Nothing to show.
        let e = save_png_view(&Matrix::<u8>::zeros([0, 3]), dir.join("e.png")).unwrap_err();
        assert!(
            matches!(&e, Error::Io { path, .. } if path.ends_with("e.png")),
            "{e}"
        );
    }

    fn npy_round_trip<T: Element>(dir: &Path, name: &str, m: Matrix<T>, dtype: &str) {
        let path = dir.join(format!("{name}.npy"));
        m.write_npy(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(&bytes[..6], b"\x93NUMPY");
        let header = String::from_utf8_lossy(&bytes[..128.min(bytes.len())]).into_owned();
        assert!(header.contains(&format!("'descr': '{dtype}'")), "{header}");
        assert!(header.contains("'fortran_order': False"), "{header}");
        // NumPy writes `(3, 4)`, npyz `(3, 4, )`: compare without spaces and trailing commas.
        let dims: Vec<String> = m.shape().iter().map(|d| d.to_string()).collect();
        let compact = header.replace(' ', "").replace(",)", ")");
        assert!(
            compact.contains(&format!("'shape':({})", dims.join(","))),
            "{header}"
        );
        assert_eq!(Matrix::<T>::read_npy(&path).unwrap(), m, "{name}");
    }

    #[test]
    fn npy_round_trip_for_every_element_type() {
        let dir = temp_dir("npy");
        npy_round_trip(
            &dir,
            "u8",
            Matrix::<u8>::from_fn([3, 4], |i| (i[0] * 90 + i[1]) as u8),
            "|u1",
        );
        npy_round_trip(
            &dir,
            "i8",
            Matrix::<i8>::from_vec([4], vec![-128, -1, 0, 127]).unwrap(),
            "|i1",
        );
        npy_round_trip(
            &dir,
            "u16",
            Matrix::<u16>::from_fn([2, 3, 2], |i| (i[0] * 40000 + i[1] * 7 + i[2]) as u16),
            "<u2",
        );
        npy_round_trip(
            &dir,
            "i16",
            Matrix::<i16>::from_vec([2, 2], vec![i16::MIN, -1, 255, i16::MAX]).unwrap(),
            "<i2",
        );
        npy_round_trip(
            &dir,
            "u32",
            Matrix::<u32>::from_vec([1, 3], vec![0, 1 << 31, u32::MAX]).unwrap(),
            "<u4",
        );
        npy_round_trip(
            &dir,
            "i32",
            Matrix::<i32>::from_vec([3, 1], vec![i32::MIN, 0, i32::MAX]).unwrap(),
            "<i4",
        );
        npy_round_trip(
            &dir,
            "f32",
            Matrix::<f32>::from_fn([3, 2, 5], |i| {
                (i[0] as f32 - 1.0) / (1 + i[1] + i[2]) as f32
            }),
            "<f4",
        );
        // The data: little-endian, row-major, right after the header.
        let path = dir.join("raw.npy");
        Matrix::<i16>::from_vec([2], vec![-2, 258])
            .unwrap()
            .write_npy(&path)
            .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes.len() % 16, 4);
        assert_eq!(&bytes[bytes.len() - 4..], &[0xFE, 0xFF, 0x02, 0x01]);
        assert_eq!(npy_dtype::<u8>(), Some("|u1"));
        assert_eq!(npy_dtype::<f32>(), Some("<f4"));
    }

    /// A `.npy` file (version 1.0) with a given header dictionary and data bytes.
    fn hand_npy(dict: &str, data: &[u8]) -> Vec<u8> {
        let mut text = dict.to_string();
        while (10 + text.len() + 1) % 64 != 0 {
            text.push(' ');
        }
        text.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((text.len() as u16).to_le_bytes());
        out.extend(text.as_bytes());
        out.extend(data);
        out
    }

    #[test]
    fn npy_dtype_mismatch_names_path_and_both_dtypes() {
        let dir = temp_dir("npymismatch");
        let path = dir.join("f.npy");
        Matrix::<f32>::zeros([2, 2]).write_npy(&path).unwrap();
        let e = Matrix::<i16>::read_npy(&path).unwrap_err();
        let Error::Dtype {
            path: p,
            expected,
            found,
            ..
        } = &e
        else {
            panic!("not a Dtype error: {e:?}")
        };
        assert!(p.ends_with("f.npy"), "{e}");
        assert!(expected == "'<i2'" && found == "'<f4'", "{e}");
        assert!(e.to_string().contains("f.npy"), "{e}");
        // Same size, other kind; same kind, other size.
        assert!(Matrix::<i32>::read_npy(&path).is_err());
        assert!(Matrix::<u32>::read_npy(&path).is_err());
        let path8 = dir.join("u8.npy");
        Matrix::<u8>::zeros([2]).write_npy(&path8).unwrap();
        let e = Matrix::<i8>::read_npy(&path8).unwrap_err();
        assert!(e.to_string().contains("expected dtype '|i1'"), "{e}");
        assert!(e.to_string().contains("found '|u1'"), "{e}");
        assert!(Matrix::<u16>::read_npy(&path8).is_err());
        // A float64 file from NumPy's default dtype.
        let f8 = dir.join("f8.npy");
        let dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }";
        std::fs::write(&f8, hand_npy(dict, &1.5f64.to_le_bytes())).unwrap();
        let e = Matrix::<f32>::read_npy(&f8).unwrap_err();
        assert!(e.to_string().contains("found '<f8'"), "{e}");
    }

    #[test]
    fn npy_rank_and_file_errors() {
        let dir = temp_dir("npyrank");
        let scalar = dir.join("scalar.npy");
        let dict = "{'descr': '<i2', 'fortran_order': False, 'shape': (), }";
        std::fs::write(&scalar, hand_npy(dict, &7i16.to_le_bytes())).unwrap();
        let e = Matrix::<i16>::read_npy(&scalar).unwrap_err();
        assert!(e.to_string().contains("1 to 3 dimensions"), "{e}");
        let four = dir.join("four.npy");
        Matrix::<u8>::zeros([1, 1, 1, 2]).write_npy(&four).unwrap();
        let e = Matrix::<u8>::read_npy(&four).unwrap_err();
        assert!(e.to_string().contains("[1, 1, 1, 2]"), "{e}");
        let e = Matrix::<u8>::read_npy(dir.join("absent.npy")).unwrap_err();
        assert!(
            matches!(&e, Error::File { path, .. } if path.ends_with("absent.npy")),
            "{e}"
        );
        let junk = dir.join("junk.npy");
        std::fs::write(&junk, b"hello").unwrap();
        assert!(Matrix::<u8>::read_npy(&junk).is_err());
    }

    #[test]
    fn npy_other_byte_order_and_fortran_order() {
        let dir = temp_dir("npyorder");
        // Big-endian i16 [2][3], Fortran order: the file lists column by column.
        let want = Matrix::<i16>::from_vec([2, 3], vec![1, 2, 3, -4, -5, 300]).unwrap();
        let mut data = Vec::new();
        for c in 0..3 {
            for r in 0..2 {
                data.extend(want.get(&[r, c]).to_be_bytes());
            }
        }
        let path = dir.join("be_f.npy");
        let dict = "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }";
        std::fs::write(&path, hand_npy(dict, &data)).unwrap();
        assert_eq!(Matrix::<i16>::read_npy(&path).unwrap(), want);
        // `<u1` is accepted as u8 like `|u1`.
        let path = dir.join("lu1.npy");
        let dict = "{'descr': '<u1', 'fortran_order': False, 'shape': (3,), }";
        std::fs::write(&path, hand_npy(dict, &[9, 8, 7])).unwrap();
        assert_eq!(
            Matrix::<u8>::read_npy(&path).unwrap().as_slice(),
            &[9, 8, 7]
        );
    }
}
