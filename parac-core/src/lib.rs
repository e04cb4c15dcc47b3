//! The ParaC compiler as a plain library: syntax ([`syntax`]) → high-level IR ([`lower`],
//! [`ir`]) → checks ([`check`]) → analyses ([`analysis`]) → the loop IR and its optimization
//! passes ([`lir`]) → code generation ([`codegen`]: the Rust `parac!` expands to, the CPU path,
//! the OpenCL programs, the optimization model), with the reference interpreter ([`interp`])
//! beside. Pure: no I/O, testable from strings. The `parac!` macro and the runtime's
//! `Pipeline` both call it.
//!
//! ```
//! let out = parac_core::compile_str("fn copy(a: &u8[M][N], b: &mut u8[M][N]) {
//!     parac_iterator it(0:M:1; 0:N:1) { b[itx][ity] = a[itx][ity]; }
//! }");
//! assert!(out.diagnostics.is_empty());
//! assert_eq!(out.module.functions[0].regions.len(), 1);
//! ```

#![warn(missing_docs)]

pub mod analysis;
pub mod bounds;
pub mod check;
pub mod codegen;
pub mod diag;
pub mod interp;
pub mod ir;
pub mod lir;
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

/// Brackets nested deeper than this are refused before any recursive pass runs (syn's token
/// buffer and the tokenizer recurse per group).
pub const MAX_BRACKET_DEPTH: usize = 256;

fn too_deep(span: proc_macro2::Span) -> Diagnostic {
    Diagnostic::new(
        span,
        format!(
            "brackets nested more than {MAX_BRACKET_DEPTH} deep\nhelp: split the expression into several `let`s"
        ),
    )
}

/// The first group nested deeper than [`MAX_BRACKET_DEPTH`], found without recursion.
fn deep_group(tokens: &TokenStream) -> Option<proc_macro2::Span> {
    let mut stack = vec![tokens.clone().into_iter()];
    while let Some(top) = stack.last_mut() {
        match top.next() {
            Some(proc_macro2::TokenTree::Group(g)) => {
                if stack.len() >= MAX_BRACKET_DEPTH {
                    return Some(g.span());
                }
                stack.push(g.stream().into_iter());
            }
            Some(_) => {}
            None => {
                stack.pop();
            }
        }
    }
    None
}

/// Compiles a token stream (the input of `parac!`).
pub fn compile_tokens(tokens: TokenStream) -> Compiled {
    let mut diags = Diagnostics::default();
    if let Some(span) = deep_group(&tokens) {
        return Compiled {
            ast: syntax::ast::Program { functions: vec![] },
            module: ir::Module::default(),
            diagnostics: vec![too_deep(span)],
        };
    }
    let ast = syntax::parse_program(tokens, &mut diags);
    let lowered = lower::lower_program(&ast, &mut diags);
    let mut module = check::check_module(lowered, &mut diags);
    analysis::analyze_module(&mut module);
    Compiled {
        ast,
        module,
        diagnostics: diags.into_vec(),
    }
}

/// Nesting depth of `( [ {` in source text, skipping comments and literals (a cheap guard
/// run before tokenizing, which recurses per group).
fn text_depth(source: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                let mut prev = ' ';
                for c in chars.by_ref() {
                    if prev == '*' && c == '/' {
                        break;
                    }
                    prev = c;
                }
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    if c == '"' && !escaped {
                        break;
                    }
                    escaped = c == '\\' && !escaped;
                }
            }
            '(' | '[' | '{' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Compiles source text (a `.parac` file: the content of a `parac!` invocation).
pub fn compile_str(source: &str) -> Compiled {
    let empty = |d: Diagnostic| Compiled {
        ast: syntax::ast::Program { functions: vec![] },
        module: ir::Module::default(),
        diagnostics: vec![d],
    };
    if text_depth(source) > MAX_BRACKET_DEPTH {
        return empty(too_deep(proc_macro2::Span::call_site()));
    }
    match source.parse::<TokenStream>() {
        Ok(tokens) => compile_tokens(tokens),
        Err(e) => {
            let span = e.span();
            empty(Diagnostic::new(
                span,
                format!("cannot tokenize the input: {e}"),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn deep_brackets_are_refused_before_tokenizing() {
        let deep = format!(
            "fn f() {{ let x = {}1{}; }}",
            "(".repeat(100_000),
            ")".repeat(100_000)
        );
        let out = super::compile_str(&deep);
        assert!(
            out.diagnostics[0]
                .message
                .starts_with("brackets nested more than")
        );
        // Brackets inside comments and strings do not count.
        let ok = format!("// {}\nfn f() {{}}", "(".repeat(1000));
        assert!(super::compile_str(&ok).diagnostics.is_empty());
    }
}
