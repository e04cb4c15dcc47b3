//! Items and statements. Every statement list recovers from an error at the next `;` (or the
//! end of a braced block), so one typo does not hide the errors that follow it. Here: the entry
//! point, the nesting bound and recovery; the grammar is in `items`, `stmt` and `headers`.

mod headers;
mod items;
mod stmt;

use super::ast::*;
use crate::diag::{Diagnostics, Sp};
use items::parse_function;
use proc_macro2::{TokenStream, TokenTree};
use syn::Token;
use syn::parse::discouraged::Speculative;
use syn::parse::{ParseStream, Parser};

/// Blocks (`if` bodies, iterators) and array literals nested deeper than this are refused, so
/// that no pass recurses without bound.
const MAX_NESTING: usize = 32;

thread_local! {
    static NESTING: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts one level of nesting while alive.
struct Nested;

impl Nested {
    fn enter(input: ParseStream) -> syn::Result<Nested> {
        let depth = NESTING.with(|n| {
            n.set(n.get() + 1);
            n.get()
        });
        let guard = Nested;
        if depth > MAX_NESTING {
            return Err(input.error(format!("blocks nested more than {MAX_NESTING} deep")));
        }
        Ok(guard)
    }
}

impl Drop for Nested {
    fn drop(&mut self) {
        NESTING.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

mod kw {
    syn::custom_keyword!(parac_iterator);
    syn::custom_keyword!(parac_border_rule);
    syn::custom_keyword!(parac_repeat);
    syn::custom_keyword!(parac_swap);
    syn::custom_keyword!(parac_schedule);
}

/// Parses a whole program; syntax errors go into `diags`.
pub fn parse_program(tokens: TokenStream, diags: &mut Diagnostics) -> Program {
    let mut functions = Vec::new();
    let parser = |input: ParseStream| -> syn::Result<()> {
        while !input.is_empty() {
            let fork = input.fork();
            match parse_function(&fork, diags) {
                Ok(f) => {
                    input.advance_to(&fork);
                    functions.push(f);
                }
                Err(e) => {
                    diags.syn(e);
                    skip_item(input);
                }
            }
        }
        Ok(())
    };
    if let Err(e) = parser.parse2(tokens) {
        diags.syn(e);
    }
    Program { functions }
}

/// The tokens from `start` up to (not including) `end`.
fn tokens_between(start: syn::buffer::Cursor, end: syn::buffer::Cursor) -> TokenStream {
    let mut out = TokenStream::new();
    let mut c = start;
    while c != end {
        let Some((tt, next)) = c.token_tree() else {
            break;
        };
        out.extend([tt]);
        c = next;
    }
    out
}

/// Skips tokens up to and including the next braced group (the end of a malformed item).
fn skip_item(input: ParseStream) {
    let _ = input.step(|cursor| {
        let mut c = *cursor;
        while let Some((tt, next)) = c.token_tree() {
            c = next;
            if let TokenTree::Group(g) = &tt
                && g.delimiter() == proc_macro2::Delimiter::Brace
            {
                break;
            }
        }
        Ok(((), c))
    });
}

/// Keywords that start a statement: recovery stops before them.
const STMT_START: [&str; 7] = [
    "let",
    "const",
    "parac_iterator",
    "parac_border_rule",
    "return",
    "if",
    "fn",
];

/// Skips the rest of a malformed statement: up to and including the next `;`, or a braced
/// group not followed by `else`, or up to (not including) a keyword that starts the next
/// statement (so a missing `;` does not swallow the statement after it).
fn skip_stmt(input: ParseStream) {
    let _ = input.step(|cursor| {
        let mut c = *cursor;
        let mut first = true;
        while let Some((tt, next)) = c.token_tree() {
            if let TokenTree::Ident(id) = &tt
                && !first
                && STMT_START.iter().any(|k| id == k)
            {
                break;
            }
            first = false;
            c = next;
            match &tt {
                TokenTree::Punct(p) if p.as_char() == ';' => break,
                TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace => {
                    match c.ident() {
                        Some((id, _)) if id == "else" => {}
                        _ => break,
                    }
                }
                _ => {}
            }
        }
        Ok(((), c))
    });
}

/// Parses a list of statements with recovery.
fn parse_list<T>(
    input: ParseStream,
    diags: &mut Diagnostics,
    mut one: impl FnMut(ParseStream, &mut Diagnostics) -> syn::Result<T>,
) -> Vec<T> {
    let mut out = Vec::new();
    while !input.is_empty() {
        let fork = input.fork();
        match one(&fork, diags) {
            Ok(s) => {
                input.advance_to(&fork);
                out.push(s);
            }
            Err(e) => {
                diags.syn(e);
                skip_stmt(input);
            }
        }
    }
    out
}

/// Expects the `;` that ends a statement; a missing one is reported at the end of `after` (the
/// last token of the statement), as rustc does.
fn end_semi(input: ParseStream, what: &str, after: Sp) -> syn::Result<Sp> {
    if input.peek(Token![;]) {
        let s: Token![;] = input.parse()?;
        Ok(Sp::one(s.span))
    } else {
        Err(syn::Error::new(
            after.hi,
            format!("expected `;` after {what}"),
        ))
    }
}
