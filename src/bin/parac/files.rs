//! Programs, inputs and outputs on disk: compiling a program file, reading a matrix from a PNG
//! or `.npy` file, writing an output as `.npy` and a PNG view.

use std::path::{Path, PathBuf};

use parac::pipeline::{Data, Tensor, matrix_of, tensor_of};
use parac::{Matrix, Pipeline};
use parac_core::ir::Scalar;

use crate::Failure;

/// Reads and compiles a program (its diagnostics, printed, are the error).
pub fn compile(path: &Path) -> Result<Pipeline, Failure> {
    let source = std::fs::read_to_string(path)
        .map_err(|e| Failure::Error(format!("cannot read {}: {e}", path.display())))?;
    compile_source(path, &source)
}

/// Compiles a program's source; `path` names it in diagnostics.
pub fn compile_source(path: &Path, source: &str) -> Result<Pipeline, Failure> {
    Pipeline::compile_named(&path.display().to_string(), source).map_err(|e| match e {
        parac::Error::Compile { message } => {
            eprintln!("{message}");
            Failure::Reported
        }
        e => Failure::from(e),
    })
}

/// Reads matrix `name` of element type `t` and rank `rank` from a `.png` or `.npy` file.
pub fn load(path: &Path, name: &str, t: Scalar, rank: usize) -> Result<Tensor, String> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let err = |e: parac::Error| e.to_string();
    let tensor = match ext.as_deref() {
        Some("png") => match (t, rank) {
            (Scalar::U8, 2) => tensor_of(parac::io::load_png::<u8>(path).map_err(err)?),
            (Scalar::U16, 2) => tensor_of(parac::io::load_png::<u16>(path).map_err(err)?),
            (Scalar::F32, 3) => tensor_of(parac::io::load_png::<f32>(path).map_err(err)?),
            _ => {
                return Err(format!(
                    "`{name}` is a {rank}-dimensional {t} matrix: a PNG gives u8 or u16 [M][N] or \
                     f32 [3][M][N]; use a .npy file"
                ));
            }
        },
        Some("npy") => match t {
            Scalar::U8 => tensor_of(Matrix::<u8>::read_npy(path).map_err(err)?),
            Scalar::I8 => tensor_of(Matrix::<i8>::read_npy(path).map_err(err)?),
            Scalar::U16 => tensor_of(Matrix::<u16>::read_npy(path).map_err(err)?),
            Scalar::I16 => tensor_of(Matrix::<i16>::read_npy(path).map_err(err)?),
            Scalar::U32 => tensor_of(Matrix::<u32>::read_npy(path).map_err(err)?),
            Scalar::I32 => tensor_of(Matrix::<i32>::read_npy(path).map_err(err)?),
            Scalar::F32 => tensor_of(Matrix::<f32>::read_npy(path).map_err(err)?),
            _ => return Err(format!("`{name}`: no .npy type for {t}")),
        },
        _ => {
            return Err(format!("{}: expected a .png or .npy file", path.display()));
        }
    };
    tensor.ok_or_else(|| format!("`{name}`: cannot hold {t}"))
}

/// Writes an output: `.npy` always, a PNG view for 2 or 3 dimensions; the paths written.
pub fn save(dir: &Path, name: &str, t: &Tensor) -> Result<Vec<PathBuf>, String> {
    fn both<T: parac::Element>(
        m: Matrix<T>,
        dir: &Path,
        name: &str,
    ) -> Result<Vec<PathBuf>, String> {
        let npy = dir.join(format!("{name}.npy"));
        m.write_npy(&npy).map_err(|e| e.to_string())?;
        let mut out = vec![npy];
        if (2..=3).contains(&m.ndim()) && !m.is_empty() {
            let png = dir.join(format!("{name}.png"));
            parac::io::save_png_view(&m, &png).map_err(|e| e.to_string())?;
            out.push(png);
        }
        Ok(out)
    }
    let bad = || format!("`{name}`: no file type for its elements");
    match &t.data {
        Data::U8(_) => both(matrix_of::<u8>(t).ok_or_else(bad)?, dir, name),
        Data::I8(_) => both(matrix_of::<i8>(t).ok_or_else(bad)?, dir, name),
        Data::U16(_) => both(matrix_of::<u16>(t).ok_or_else(bad)?, dir, name),
        Data::I16(_) => both(matrix_of::<i16>(t).ok_or_else(bad)?, dir, name),
        Data::U32(_) => both(matrix_of::<u32>(t).ok_or_else(bad)?, dir, name),
        Data::I32(_) => both(matrix_of::<i32>(t).ok_or_else(bad)?, dir, name),
        Data::F32(_) => both(matrix_of::<f32>(t).ok_or_else(bad)?, dir, name),
        _ => Err(bad()),
    }
}
