use std::fmt;

/// Everything that can go wrong when a ParaC pipeline runs, and around it: a call's arguments
/// (shapes, layouts), its run (an access out of bounds, a division by zero), the device
/// (OpenCL calls, program builds), the configuration, files, and pipelines compiled at run
/// time. Each variant carries what a message or a program needs (the function, the matrix,
/// the shapes...) and, where there is one, its cause ([`std::error::Error::source`]); the
/// enum is `#[non_exhaustive]`, so a `match` needs a `_` arm.
///
/// # Examples
///
/// ```
/// use parac_runtime::pipeline::{Arg, Data, Tensor};
/// use parac_runtime::{Error, Pipeline, Runtime};
///
/// let p = Pipeline::compile(
///     "fn copy(a: &u8[N], b: &mut u8[N]) { parac_iterator it(0:N:1) { b[itx] = a[itx]; } }",
/// )?;
/// let mut args = [
///     Arg::Matrix(Tensor::new([3], Data::U8(vec![1, 2, 3])).unwrap()),
///     Arg::Matrix(Tensor::new([4], Data::U8(vec![0; 4])).unwrap()),
/// ];
/// match p.run(&Runtime::cpu(), "copy", &mut args) {
///     Err(Error::Shape { matrix, expected, got, .. }) => {
///         assert_eq!((matrix, expected, got), ("b", vec![3], vec![4]));
///     }
///     other => panic!("{other:?}"),
/// }
///
/// // Every error is a `std::error::Error` with a message that says what went wrong.
/// let e = Runtime::from_spec("tpu").unwrap_err();
/// assert!(matches!(e, Error::NoDevice { .. }));
/// assert!(e.to_string().starts_with("no device matches `tpu`"));
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A matrix argument does not have the shape the pipeline declares for it.
    #[error(
        "matrix `{matrix}` of `{function}` has shape {}, but the pipeline declares {declared} = {}",
        Brackets(got),
        Brackets(expected)
    )]
    Shape {
        /// The pipeline function.
        function: &'static str,
        /// The parameter's name.
        matrix: &'static str,
        /// The declared dimensions as written, e.g. `[M][(N+1)/2]`.
        declared: &'static str,
        /// The shape the declaration requires with the sizes bound so far.
        expected: Vec<usize>,
        /// The shape that was passed.
        got: Vec<usize>,
    },
    /// A matrix argument has another number of dimensions than its declaration.
    #[error("matrix `{matrix}` of `{function}` has {got_rank} dimension{}, shape {}, but the pipeline declares {declared} ({expected_rank} dimension{})", if *got_rank == 1 { "" } else { "s" }, Brackets(got), if *expected_rank == 1 { "" } else { "s" })]
    Rank {
        /// The pipeline function.
        function: &'static str,
        /// The parameter's name.
        matrix: &'static str,
        /// The declared dimensions as written.
        declared: &'static str,
        /// How many dimensions the declaration has.
        expected_rank: usize,
        /// How many the argument has.
        got_rank: usize,
        /// The argument's shape.
        got: Vec<usize>,
    },
    /// A size symbol could not be bound to a legal value.
    #[error("size `{symbol}` of `{function}`: {reason}")]
    Size {
        /// The pipeline function.
        function: &'static str,
        /// The size symbol, e.g. `M`.
        symbol: &'static str,
        /// Why it is not legal.
        reason: String,
    },
    /// No device matches `PARAC_DEVICE` (or the argument of `Runtime::from_spec`).
    #[error("no device matches `{spec}`: {reason}")]
    NoDevice {
        /// The device specification.
        spec: String,
        /// What was found instead.
        reason: String,
    },
    /// A setting has a value it cannot take: an environment variable read by
    /// `Config::from_env` (`Runtime::from_env`, `Runtime::new`), or a builder's setting.
    #[error("{setting}=`{value}`: {reason}")]
    Config {
        /// The setting, e.g. `PARAC_SEARCH_BUDGET`.
        setting: String,
        /// Its value.
        value: String,
        /// What it may be.
        reason: String,
    },
    /// An OpenCL call failed.
    #[error("OpenCL error {code} ({name}) in {op}{}", if detail.is_empty() { String::new() } else { format!(": {detail}") })]
    OpenCl {
        /// The operation, e.g. `clEnqueueNDRangeKernel(h_pass)`.
        op: String,
        /// The OpenCL status code.
        code: i32,
        /// Its name, e.g. `CL_OUT_OF_RESOURCES`.
        name: &'static str,
        /// More context (sizes, argument index...).
        detail: String,
    },
    /// A generated program failed to build; the log and the numbered source say why.
    #[error("building OpenCL program `{program}` failed:\n{log}\n--- source ---\n{source_listing}")]
    Build {
        /// The program's name.
        program: String,
        /// The compiler's build log.
        log: String,
        /// The source with line numbers.
        source_listing: String,
    },
    /// A matrix's layout (its row or plane pitch) does not fit its shape or its slice: rows
    /// would overlap, the slice ends before the last element, or the extent overflows.
    #[error("matrix `{matrix}`: {source}")]
    Layout {
        /// The matrix.
        matrix: &'static str,
        /// What does not fit.
        #[source]
        source: crate::LayoutError,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    File {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// An image file could not be decoded or encoded (feature `image`).
    #[cfg(feature = "image")]
    #[error("{}: {source}", path.display())]
    Image {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        #[source]
        source: image::ImageError,
    },
    /// A `.npy` file could not be parsed, read or encoded.
    #[error("{}: {what}: {source}", path.display())]
    Npy {
        /// The file.
        path: std::path::PathBuf,
        /// What was being done.
        what: &'static str,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A file holds another element type than the matrix it is read into.
    #[error("{}: expected dtype {expected} (Matrix<{elem}>), found {found}", path.display())]
    Dtype {
        /// The file.
        path: std::path::PathBuf,
        /// The type the matrix needs, as the file format writes it.
        expected: String,
        /// The matrix's element type.
        elem: &'static str,
        /// The type in the file.
        found: String,
    },
    /// A file holds a matrix of a number of dimensions a matrix cannot have (1 to 3).
    #[error("{}: expected 1 to 3 dimensions for a Matrix<{elem}>, found shape {got:?}", path.display())]
    FileRank {
        /// The file.
        path: std::path::PathBuf,
        /// The matrix's element type.
        elem: &'static str,
        /// The file's shape.
        got: Vec<usize>,
    },
    /// Reading, writing, listing or removing a file or directory failed (the plan and program
    /// caches, dumps), or a file's content does not fit what it is read into.
    #[error("{}: {what}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: std::path::PathBuf,
        /// What was being done.
        what: &'static str,
        /// The cause: the operating system's error, or one of kind `InvalidData` /
        /// `InvalidInput` saying what does not fit.
        #[source]
        source: std::io::Error,
    },
    /// An access fell outside a matrix at run time, where no border rule gives a value (the
    /// compile-time checks run on sample sizes; this catches sizes they did not cover).
    #[error(
        "`{function}`, region `{region}`: {what} `{matrix}` at {} outside its shape {}",
        Brackets(index),
        Brackets(shape)
    )]
    OutOfBounds {
        /// The pipeline function.
        function: &'static str,
        /// The iterator.
        region: &'static str,
        /// `read of` or `write to`.
        what: &'static str,
        /// The matrix.
        matrix: &'static str,
        /// The index.
        index: Vec<i64>,
        /// The matrix's shape.
        shape: Vec<usize>,
    },
    /// A window whose length is a host expression has a length below 1, or more than
    /// `i32::MAX` elements in all (checked before its region runs).
    #[error(
        "`{function}`, region `{region}`: a window of `{matrix}` has lengths {}; each must be at least 1, and their product at most 2147483647",
        Brackets(lens)
    )]
    WindowLength {
        /// The pipeline function.
        function: &'static str,
        /// The iterator.
        region: &'static str,
        /// The matrix the window reads.
        matrix: &'static str,
        /// The window's lengths, one per window subscript, in order.
        lens: Vec<i64>,
    },
    /// Integer division or remainder by zero in a pipeline.
    #[error("`{function}`, region `{region}`: integer division by zero")]
    DivisionByZero {
        /// The pipeline function.
        function: &'static str,
        /// The region.
        region: &'static str,
    },
    /// A pipeline's source did not compile (`Pipeline::compile`): every diagnostic, rendered
    /// with its line, column and the source line.
    #[error("the pipeline did not compile:\n{message}")]
    Compile {
        /// The rendered diagnostics.
        message: String,
    },
    /// The arguments of a pipeline run at run time (`Pipeline::run`) do not match its
    /// parameters: an unknown function, their number, a matrix for a scalar, an element type,
    /// a scalar outside its type, a tensor whose data does not fill its shape.
    #[error("`{function}`: {message}")]
    Argument {
        /// The pipeline function.
        function: String,
        /// What does not match.
        message: String,
    },
    /// A guard band around a device buffer was written (`Device::check_guards`, with guard
    /// bands on): something wrote outside the buffer.
    #[error("device memory outside buffer `{buffer}` was written: {}", violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    GuardBand {
        /// The first buffer whose guard was touched.
        buffer: String,
        /// Every touched guard region.
        violations: Vec<crate::opencl::GuardViolation>,
    },
    /// The pipeline compiled, but the path chosen to run it cannot: the OpenCL back end has no
    /// kernel for one of its constructs, or the interpreter that runs a [`Pipeline`] on the
    /// CPU path lacks one (`reason` says which). The CPU path of the code `parac!` emits never
    /// returns it.
    ///
    /// [`Pipeline`]: crate::Pipeline
    #[error("`{function}` cannot run yet: {reason}")]
    Unsupported {
        /// The pipeline function.
        function: &'static str,
        /// What is missing.
        reason: &'static str,
    },
}

/// Each value in brackets, as a shape or an index is written: `[3][4]`.
struct Brackets<'a, T>(&'a [T]);

impl<T: fmt::Display> fmt::Display for Brackets<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in self.0 {
            write!(f, "[{d}]")?;
        }
        Ok(())
    }
}

/// Checks one matrix argument's number of dimensions (before any size is bound from it).
pub fn check_rank(
    function: &'static str,
    matrix: &'static str,
    declared: &'static str,
    expected_rank: usize,
    got: &[usize],
) -> Result<(), Error> {
    if got.len() == expected_rank {
        Ok(())
    } else {
        Err(Error::Rank {
            function,
            matrix,
            declared,
            expected_rank,
            got_rank: got.len(),
            got: got.to_vec(),
        })
    }
}

/// Checks one matrix argument's shape against the declared one.
pub fn check_shape(
    function: &'static str,
    matrix: &'static str,
    declared: &'static str,
    expected: &[usize],
    got: &[usize],
) -> Result<(), Error> {
    if expected == got {
        Ok(())
    } else {
        Err(Error::Shape {
            function,
            matrix,
            declared,
            expected: expected.to_vec(),
            got: got.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_error_names_matrix_and_both_shapes() {
        let e = check_shape("lap", "down", "[(M+1)/2][(N+1)/2]", &[3, 4], &[3, 5]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "matrix `down` of `lap` has shape [3][5], but the pipeline declares [(M+1)/2][(N+1)/2] = [3][4]"
        );
        assert!(check_shape("f", "a", "[M]", &[2], &[2]).is_ok());
    }
}
