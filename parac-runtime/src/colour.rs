//! Colour: interleaved pixels (`RGBRGB...`, as images hold them) to and from planar matrices
//! `[C][M][N]` (one plane per channel, as pipelines read them), exactly.
//!
//! A pipeline can also read interleaved pixels as they are, without this conversion: the image
//! is a `u8[M][W]` matrix (`W` = 3 times the width) and channel `k` of pixel `x` is
//! `src[y][3 * x + k]` (docs/language.md, "Interleaved channels").

#[cfg(feature = "image")]
use image::{Rgb, RgbImage, Rgba, RgbaImage};

use crate::{Element, Error, Matrix};

impl<T: Element> Matrix<T> {
    /// The planar matrix `[channels][height][width]` of interleaved pixels: `data` holds
    /// `height` rows of `width` pixels of `channels` values each. `Error::Shape` if its length
    /// is not that.
    ///
    /// ```
    /// # use parac_runtime::Matrix;
    /// let rgb = [1u8, 2, 3, 4, 5, 6]; // two pixels
    /// let p = Matrix::from_interleaved(1, 2, 3, &rgb).unwrap();
    /// assert_eq!(p.shape(), &[3, 1, 2]);
    /// assert_eq!(p.as_slice(), &[1, 4, 2, 5, 3, 6]);
    /// assert_eq!(p.to_interleaved().unwrap(), rgb);
    /// ```
    pub fn from_interleaved(
        height: usize,
        width: usize,
        channels: usize,
        data: &[T],
    ) -> Result<Self, Error> {
        let want = height
            .checked_mul(width)
            .and_then(|p| p.checked_mul(channels));
        if want != Some(data.len()) {
            return Err(Error::Shape {
                function: "Matrix::from_interleaved",
                matrix: "data",
                declared: "[height][width * channels]",
                expected: vec![height, width.saturating_mul(channels)],
                got: vec![data.len()],
            });
        }
        let plane = height * width;
        let mut out = vec![T::default(); data.len()];
        for (p, px) in data.chunks_exact(channels.max(1)).enumerate() {
            for (c, v) in px.iter().enumerate() {
                out[c * plane + p] = *v;
            }
        }
        Ok(Matrix::from_vec([channels, height, width], out).expect("the length was checked"))
    }

    /// The interleaved pixels of a planar matrix `[C][M][N]` (the inverse of
    /// [`from_interleaved`](Self::from_interleaved)). `Error::Rank` unless it has 3 dimensions.
    pub fn to_interleaved(&self) -> Result<Vec<T>, Error> {
        crate::error::check_rank(
            "Matrix::to_interleaved",
            "self",
            "[C][M][N]",
            3,
            self.shape(),
        )?;
        let (channels, plane) = (self.shape()[0], self.shape()[1] * self.shape()[2]);
        let mut out = vec![T::default(); self.len()];
        for (c, values) in self.as_slice().chunks_exact(plane.max(1)).enumerate() {
            for (p, v) in values.iter().enumerate() {
                out[p * channels + c] = *v;
            }
        }
        Ok(out)
    }
}

/// `image`'s RGB8 and RGBA8 images (feature `image`).
#[cfg(feature = "image")]
impl Matrix<u8> {
    /// An RGB image as a planar matrix `[3][height][width]`, exactly.
    pub fn from_rgb8(img: &RgbImage) -> Self {
        let (w, h) = (img.width() as usize, img.height() as usize);
        Self::from_interleaved(h, w, 3, img.as_raw()).expect("an image holds its pixels")
    }

    /// An RGBA image as a planar matrix `[4][height][width]`, exactly.
    pub fn from_rgba8(img: &RgbaImage) -> Self {
        let (w, h) = (img.width() as usize, img.height() as usize);
        Self::from_interleaved(h, w, 4, img.as_raw()).expect("an image holds its pixels")
    }

    /// A planar matrix `[3][M][N]` as an RGB image, exactly; `Error::Shape` for another shape.
    pub fn to_rgb8(&self) -> Result<RgbImage, Error> {
        let (w, h, data) = self.pixels::<3>("Matrix::to_rgb8", "[3][M][N]")?;
        Ok(RgbImage::from_raw(w, h, data).expect("length matches the size"))
    }

    /// A planar matrix `[4][M][N]` as an RGBA image, exactly; `Error::Shape` for another shape.
    pub fn to_rgba8(&self) -> Result<RgbaImage, Error> {
        let (w, h, data) = self.pixels::<4>("Matrix::to_rgba8", "[4][M][N]")?;
        Ok(RgbaImage::from_raw(w, h, data).expect("length matches the size"))
    }

    /// Width, height and interleaved pixels of a planar matrix of `C` channels whose sides fit
    /// an image's `u32`s.
    fn pixels<const C: usize>(
        &self,
        function: &'static str,
        declared: &'static str,
    ) -> Result<(u32, u32, Vec<u8>), Error> {
        let s = self.shape();
        let side = |i: usize| s.get(i).and_then(|d| u32::try_from(*d).ok());
        match (s.len(), s.first(), side(1), side(2)) {
            (3, Some(&c), Some(h), Some(w)) if c == C => Ok((w, h, self.to_interleaved()?)),
            _ => Err(Error::Shape {
                function,
                matrix: "self",
                declared,
                expected: vec![
                    C,
                    s.get(1).copied().unwrap_or(0),
                    s.get(2).copied().unwrap_or(0),
                ],
                got: s.to_vec(),
            }),
        }
    }
}

// The pixel types the conversions stand for (checked at compile time: 3 and 4 channels).
#[cfg(feature = "image")]
const _: () = assert!(size_of::<Rgb<u8>>() == 3 && size_of::<Rgba<u8>>() == 4);

#[cfg(all(test, feature = "image"))]
mod tests {
    use super::*;

    #[test]
    fn rgb8_and_rgba8_round_trip_exactly() {
        for (w, h) in [(1, 1), (3, 2), (17, 5), (256, 3)] {
            let rgb = RgbImage::from_fn(w, h, |x, y| {
                Rgb([
                    (x + y) as u8,
                    (x * 7 + 3) as u8,
                    255u32.wrapping_sub(x + 2 * y) as u8,
                ])
            });
            let p = Matrix::from_rgb8(&rgb);
            assert_eq!(p.shape(), &[3, h as usize, w as usize]);
            assert_eq!(p.get(&[1, 0, w as usize - 1]), ((w - 1) * 7 + 3) as u8);
            assert_eq!(p.to_rgb8().unwrap(), rgb, "{w}x{h}");
            let rgba = RgbaImage::from_fn(w, h, |x, y| {
                Rgba([x as u8, y as u8, (x ^ y) as u8, (x * y) as u8])
            });
            let p = Matrix::from_rgba8(&rgba);
            assert_eq!(
                p.get(&[3, h as usize - 1, w as usize - 1]),
                ((w - 1) * (h - 1)) as u8
            );
            assert_eq!(p.to_rgba8().unwrap(), rgba, "{w}x{h}");
        }
        // Every value of every channel.
        let all = RgbImage::from_fn(256, 1, |x, _| Rgb([x as u8, 255 - x as u8, x as u8 ^ 0x5a]));
        assert_eq!(Matrix::from_rgb8(&all).to_rgb8().unwrap(), all);
    }

    #[test]
    fn wrong_shapes_are_errors() {
        assert!(Matrix::<u8>::from_interleaved(2, 2, 3, &[0; 11]).is_err());
        assert!(Matrix::<u8>::from_interleaved(usize::MAX, 2, 3, &[0; 12]).is_err());
        assert!(Matrix::<u8>::zeros([4, 2, 2]).to_rgb8().is_err());
        assert!(Matrix::<u8>::zeros([2, 2]).to_rgba8().is_err());
        assert!(Matrix::<u8>::zeros([2, 2]).to_interleaved().is_err());
        let empty = Matrix::<i16>::from_interleaved(0, 5, 3, &[]).unwrap();
        assert_eq!(empty.shape(), &[3, 0, 5]);
        assert_eq!(empty.to_interleaved().unwrap(), Vec::<i16>::new());
    }
}
