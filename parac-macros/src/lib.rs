//! The `parac!` macro: tokens in, `parac-core`, tokens out. All the work, and every error
//! message, lives in `parac-core`; this crate only bridges `proc_macro` and `proc_macro2`.

#![warn(missing_docs)]

use proc_macro::TokenStream;

/// Compiles a ParaC program written in Rust tokens into Rust functions.
///
/// See the language reference in `docs/language.md`.
#[proc_macro]
pub fn parac(input: TokenStream) -> TokenStream {
    let compiled = parac_core::compile_tokens(input.into());
    parac_core::codegen::expand(&compiled).into()
}
