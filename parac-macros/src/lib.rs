//! The `parac!` macro: tokens in, `parac-core`, tokens out. All the work, and every error
//! message, lives in `parac-core`; this crate only bridges `proc_macro` and `proc_macro2`.

#![warn(missing_docs)]

use proc_macro::TokenStream;

/// Compiles a ParaC program written in Rust tokens into Rust functions.
///
/// Each `fn` of the block becomes an ordinary Rust function with the same name, visibility,
/// doc comments and attributes, taking the runtime first (`rt: &parac::Runtime`), then the
/// parameters in their order: an input matrix `&T[..]` as `&impl MatrixRef<T>`, an output
/// `&mut T[..]` as `&mut impl MatrixMut<T>`, a scalar by value. It returns
/// `Result<(), parac::Error>` (`Result<T, parac::Error>` with a declared result `-> T`): each
/// call binds the size symbols from its arguments and checks every shape before anything
/// runs, then runs on the runtime's device, an OpenCL device or the CPU path (Rust, run in
/// parallel on all cores).
///
/// Every mistake in the program (a name, a type, a shape, a border width, iterations that are
/// not independent...) is a compile error at the token that caused it. The generated code
/// calls the `parac` crate (`parac::__private`): use the macro through `parac::parac!`, with
/// `parac`, `parac-macros` and `parac-runtime` at the same version.
///
/// The language is described in `docs/language.md` of the repository.
///
/// # Examples
///
/// ```
/// use parac::{Error, Matrix, Runtime};
///
/// parac::parac! {
///     /// Adds `k` to every pixel, saturating at 255.
///     pub fn brighten(src: &u8[M][N], out: &mut u8[M][N], k: i32) {
///         parac_iterator it(0:M:1; 0:N:1) {
///             out[itx][ity] = min(src[itx][ity] + k, 255);
///         }
///     }
/// }
///
/// let rt = Runtime::cpu();
/// let src = Matrix::<u8>::from_vec([2, 3], vec![0, 100, 200, 250, 251, 255]).unwrap();
/// let mut out = Matrix::<u8>::zeros([2, 3]);
/// brighten(&rt, &src, &mut out, 10)?;
/// assert_eq!(out.as_slice(), &[10, 110, 210, 255, 255, 255]);
///
/// // An output of another shape is an error naming it, before anything runs.
/// let mut small = Matrix::<u8>::zeros([2, 2]);
/// let e = brighten(&rt, &src, &mut small, 10).unwrap_err();
/// assert!(matches!(e, Error::Shape { matrix: "out", .. }));
/// # Ok::<(), Error>(())
/// ```
#[proc_macro]
pub fn parac(input: TokenStream) -> TokenStream {
    let compiled = parac_core::compile_tokens(input.into());
    parac_core::codegen::expand(&compiled).into()
}
