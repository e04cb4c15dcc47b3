//! Tests of the PNG and `.npy` functions: hand-made PNG and `.npy` files (independent of
//! `image` and `npyz`), round trips, the view mappings and the errors.

use super::*;
use std::path::PathBuf;

#[cfg(feature = "image")]
use super::view::ViewByte;
use crate::{Element, Matrix};

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
    while !(10 + text.len() + 1).is_multiple_of(64) {
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
