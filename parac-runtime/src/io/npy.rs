//! NumPy `.npy` files with exact element types: [`npy_dtype`], [`Matrix::write_npy`] and
//! [`Matrix::read_npy`] (either byte order, C or Fortran order, 1 to 3 dimensions).

use std::any::{Any, TypeId};
use std::path::Path;

use super::{file_error, io_error};
use crate::{Element, Error, Matrix};

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
    ///
    /// # Examples
    ///
    /// ```
    /// use parac_runtime::{Error, Matrix};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("m.npy");
    /// let m = Matrix::<i16>::from_vec([2, 2], vec![-1, 0, 1, 300]).unwrap();
    /// m.write_npy(&path)?;
    /// assert_eq!(Matrix::<i16>::read_npy(&path)?, m);
    /// // Another element type is an error naming both dtypes, not a conversion.
    /// assert!(matches!(Matrix::<u8>::read_npy(&path), Err(Error::Dtype { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
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
