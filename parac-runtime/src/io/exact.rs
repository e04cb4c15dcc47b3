//! Exact files beside the viewable one: every element type to `.npy`, and `u8`/`u16` gray
//! matrices to 8-bit and 16-bit gray PNGs that read back bit for bit.

use std::path::{Path, PathBuf};

#[cfg(feature = "image")]
use image::{DynamicImage, ImageFormat};

#[cfg(feature = "image")]
use super::{Gray16Image, image_error};
use crate::{Element, Error, Matrix};

#[cfg(feature = "image")]
mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
}

#[cfg(feature = "image")]
/// The element types a gray PNG holds exactly: `u8` (8-bit) and `u16` (16-bit).
pub trait ExactPng: Element + sealed::Sealed {
    /// The PNG's bit depth.
    #[doc(hidden)]
    const BITS: u8;
    /// The image of a `[M][N]` matrix of width `w` and height `h`.
    #[doc(hidden)]
    fn image(w: u32, h: u32, data: Vec<Self>) -> DynamicImage;
    /// The pixels of a decoded gray image of exactly this depth.
    #[doc(hidden)]
    fn pixels(img: DynamicImage) -> Option<(u32, u32, Vec<Self>)>;
}

#[cfg(feature = "image")]
impl ExactPng for u8 {
    const BITS: u8 = 8;
    fn image(w: u32, h: u32, data: Vec<u8>) -> DynamicImage {
        DynamicImage::ImageLuma8(image::GrayImage::from_raw(w, h, data).expect("length matches"))
    }
    fn pixels(img: DynamicImage) -> Option<(u32, u32, Vec<u8>)> {
        match img {
            DynamicImage::ImageLuma8(g) => Some((g.width(), g.height(), g.into_raw())),
            _ => None,
        }
    }
}

#[cfg(feature = "image")]
impl ExactPng for u16 {
    const BITS: u8 = 16;
    fn image(w: u32, h: u32, data: Vec<u16>) -> DynamicImage {
        DynamicImage::ImageLuma16(Gray16Image::from_raw(w, h, data).expect("length matches"))
    }
    fn pixels(img: DynamicImage) -> Option<(u32, u32, Vec<u16>)> {
        match img {
            DynamicImage::ImageLuma16(g) => Some((g.width(), g.height(), g.into_raw())),
            _ => None,
        }
    }
}

#[cfg(feature = "image")]
/// Writes a `[M][N]` matrix of `u8` or `u16` as a gray PNG of its own bit depth (8 or 16):
/// [`load_png_exact`] gives it back bit for bit.
///
/// # Errors
/// `Error::Shape` for a matrix that is not 2-D, `Error::Size` for one too large for an image;
/// `Error::Image` (its cause kept) naming the path if the file cannot be written.
///
/// # Examples
///
/// ```
/// use parac_runtime::Matrix;
/// use parac_runtime::io::{load_png, load_png_exact, save_png_exact};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("m.png");
/// let m = Matrix::<u16>::from_vec([1, 3], vec![0, 4095, 65535]).unwrap();
/// save_png_exact(&m, &path)?;
/// assert_eq!(load_png_exact::<u16>(&path)?, m);
/// // `load_png` reads 12-bit gray, as the pipelines that take `u16` images expect.
/// assert_eq!(load_png::<u16>(&path)?.as_slice(), &[0, 255, 4095]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn save_png_exact<T: ExactPng>(m: &Matrix<T>, path: impl AsRef<Path>) -> Result<(), Error> {
    let path = path.as_ref();
    let (w, h) = super::image_dims(m, "io::save_png_exact", "[M][N]", None)?;
    T::image(w, h, m.as_slice().to_vec())
        .save_with_format(path, ImageFormat::Png)
        .map_err(image_error(path))
}

#[cfg(feature = "image")]
/// Reads a gray PNG of exactly `T`'s bit depth (8 for `u8`, 16 for `u16`) as it is: no
/// conversion, every value kept.
///
/// # Errors
/// `Error::File` or `Error::Image` (their cause kept) naming the path if it cannot be read or
/// decoded; `Error::Dtype` if it is not a gray image of that depth.
pub fn load_png_exact<T: ExactPng>(path: impl AsRef<Path>) -> Result<Matrix<T>, Error> {
    let path = path.as_ref();
    let img = super::decode(path)?;
    let found = format!("{:?}", img.color());
    let (w, h, data) = T::pixels(img).ok_or_else(|| Error::Dtype {
        path: path.to_path_buf(),
        expected: format!("{}-bit gray (L{})", T::BITS, T::BITS),
        elem: T::NAME,
        found,
    })?;
    Ok(Matrix::from_vec([h as usize, w as usize], data).expect("an image holds its pixels"))
}

/// Writes `m` exactly beside its viewable PNG: `<stem>.npy` for every element type and shape,
/// and for a `[M][N]` matrix of `u8` or `u16` also `<stem>.exact.png` (8- or 16-bit gray;
/// with the feature `image`).
/// Returns the files written.
///
/// # Errors
/// As [`Matrix::write_npy`] and [`save_png_exact`].
pub fn save_exact<T: Element>(
    m: &Matrix<T>,
    stem: impl AsRef<Path>,
) -> Result<Vec<PathBuf>, Error> {
    let stem = stem.as_ref();
    let with = |ext: &str| {
        let mut s = stem.as_os_str().to_os_string();
        s.push(ext);
        PathBuf::from(s)
    };
    let npy = with(".npy");
    m.write_npy(&npy)?;
    #[cfg_attr(not(feature = "image"), expect(unused_mut))]
    let mut written = vec![npy];
    #[cfg(feature = "image")]
    if m.ndim() == 2 && !m.is_empty() {
        let png = with(".exact.png");
        let any: &dyn std::any::Any = m;
        if let Some(m) = any.downcast_ref::<Matrix<u8>>() {
            save_png_exact(m, &png)?;
            written.push(png);
        } else if let Some(m) = any.downcast_ref::<Matrix<u16>>() {
            save_png_exact(m, &png)?;
            written.push(png);
        }
    }
    Ok(written)
}

#[cfg(all(test, feature = "image"))]
mod tests {
    use super::*;
    use crate::io::load_png;

    #[test]
    fn sixteen_bit_pngs_round_trip_exactly() {
        let dir = std::env::temp_dir().join(format!("parac-exact-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (rows, cols) in [(1, 1), (3, 5), (2, 300)] {
            let m16 = Matrix::<u16>::from_fn([rows, cols], |i| {
                (i[0] as u16)
                    .wrapping_mul(40503)
                    .wrapping_add((i[1] as u16).wrapping_mul(257))
            });
            let p = dir.join("m16.png");
            save_png_exact(&m16, &p).unwrap();
            assert_eq!(load_png_exact::<u16>(&p).unwrap(), m16, "{rows}x{cols}");
            // The 12-bit loader of the pipelines reads the same file as `v >> 4`.
            assert_eq!(load_png::<u16>(&p).unwrap(), m16.map(|v| v >> 4));
            let m8 = Matrix::<u8>::from_fn([rows, cols], |i| (i[0] * 31 + i[1] * 7) as u8);
            save_png_exact(&m8, dir.join("m8.png")).unwrap();
            assert_eq!(load_png_exact::<u8>(dir.join("m8.png")).unwrap(), m8);
            // A file of the other depth is a typed error, not a conversion.
            let e = load_png_exact::<u16>(dir.join("m8.png")).unwrap_err();
            assert!(matches!(e, Error::Dtype { elem: "u16", .. }), "{e}");
        }
        // Every type beside its view: .npy, and an exact PNG for u8/u16.
        let written = save_exact(&Matrix::<i16>::zeros([2, 3]), dir.join("a")).unwrap();
        assert_eq!(written, [dir.join("a.npy")]);
        let m16 = Matrix::<u16>::from_fn([2, 3], |i| 65535 - i[1] as u16);
        let written = save_exact(&m16, dir.join("b")).unwrap();
        assert_eq!(written, [dir.join("b.npy"), dir.join("b.exact.png")]);
        assert_eq!(load_png_exact::<u16>(&written[1]).unwrap(), m16);
        assert_eq!(Matrix::<u16>::read_npy(&written[0]).unwrap(), m16);
        let e = load_png_exact::<u8>(dir.join("absent.png")).unwrap_err();
        assert!(
            matches!(&e, Error::File { path, .. } if path.ends_with("absent.png"))
                && std::error::Error::source(&e).is_some(),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
