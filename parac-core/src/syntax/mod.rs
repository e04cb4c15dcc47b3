//! Front end, first half: tokens to the surface syntax tree.

pub mod ast;
mod expr;
mod parse;

pub use parse::parse_program;
