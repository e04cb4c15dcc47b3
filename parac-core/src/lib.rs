//! The ParaC compiler as a plain library: syntax → high-level IR → checks (→ analysis,
//! optimization and code generation in later stages). Pure: no I/O, testable from strings.
//!
//! ```
//! let out = parac_core::compile_str("fn copy(a: &u8[M][N], b: &mut u8[M][N]) {
//!     parac_iterator it(0:M:1; 0:N:1) { b[itx][ity] = a[itx][ity]; }
//! }");
//! assert!(out.diagnostics.is_empty());
//! assert_eq!(out.module.functions[0].regions.len(), 1);
//! ```

pub mod check;
pub mod codegen;
pub mod diag;
pub mod ir;
pub mod lower;
pub mod syntax;
mod util;

use diag::{Diagnostic, Diagnostics};
use proc_macro2::TokenStream;

/// The result of compiling a program.
#[derive(Debug)]
pub struct Compiled {
    /// The syntax tree (kept for the fallback expansion of functions that had errors).
    pub ast: syntax::ast::Program,
    /// The IR of the functions that compiled without error.
    pub module: ir::Module,
    /// Every error found.
    pub diagnostics: Vec<Diagnostic>,
}

/// Compiles a token stream (the input of `parac!`).
pub fn compile_tokens(tokens: TokenStream) -> Compiled {
    let mut diags = Diagnostics::default();
    let ast = syntax::parse_program(tokens, &mut diags);
    let lowered = lower::lower_program(&ast, &mut diags);
    let module = check::check_module(lowered, &mut diags);
    Compiled {
        ast,
        module,
        diagnostics: diags.into_vec(),
    }
}

/// Compiles source text (a `.parac` file: the content of a `parac!` invocation).
pub fn compile_str(source: &str) -> Compiled {
    match source.parse::<TokenStream>() {
        Ok(tokens) => compile_tokens(tokens),
        Err(e) => {
            let span = e.span();
            Compiled {
                ast: syntax::ast::Program { functions: vec![] },
                module: ir::Module::default(),
                diagnostics: vec![Diagnostic::new(
                    span,
                    format!("cannot tokenize the input: {e}"),
                )],
            }
        }
    }
}
