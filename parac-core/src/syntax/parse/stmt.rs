//! Statements inside an iterator: `let`, assignments (chained, compound), `if`/`else` blocks.

use super::headers::parse_iterator;
use super::{Nested, end_semi, kw, parse_list, skip_stmt};
use crate::diag::{Diagnostics, Sp};
use crate::syntax::ast::*;
use crate::syntax::expr::{parse_expr, parse_type_name};
use syn::parse::ParseStream;
use syn::{Ident, Token};

pub(super) fn parse_let(input: ParseStream) -> syn::Result<LetStmt> {
    let start = Sp::one(input.parse::<Token![let]>()?.span);
    let (names, tuple) = if input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        let mut names = Vec::new();
        while !content.is_empty() {
            names.push(content.parse::<Ident>()?);
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        (names, true)
    } else {
        (vec![input.parse::<Ident>()?], false)
    };
    let ty = if input.peek(Token![:]) {
        input.parse::<Token![:]>()?;
        let t = parse_type_name(input)?;
        if input.peek(syn::token::Bracket) {
            return Err(input.error(
                "a matrix-typed `let` is only allowed at function level, without a value (`let h: u8[M][N];`); inside an iterator, leave the type out to keep a block value",
            ));
        }
        Some(t)
    } else {
        None
    };
    if !input.peek(Token![=]) {
        return Err(input.error("expected `=` and a value (`let x = expr;`)"));
    }
    input.parse::<Token![=]>()?;
    let value = parse_expr(input)?;
    let end = end_semi(input, "the `let` statement", value.span)?;
    Ok(LetStmt {
        names,
        tuple,
        ty,
        value,
        span: start.to(end),
    })
}

fn parse_block(input: ParseStream, diags: &mut Diagnostics) -> syn::Result<Vec<Stmt>> {
    let _nested = Nested::enter(input)?;
    if !input.peek(syn::token::Brace) {
        return Err(input.error("expected a block `{ ... }`"));
    }
    let content;
    syn::braced!(content in input);
    Ok(parse_list(&content, diags, parse_stmt))
}

pub(super) fn parse_stmt(input: ParseStream, diags: &mut Diagnostics) -> syn::Result<Stmt> {
    let start = Sp::one(input.span());
    if input.peek(Token![let]) {
        return parse_let(input).map(Stmt::Let);
    }
    if input.peek(Token![if]) {
        let _nested = Nested::enter(input)?;
        input.parse::<Token![if]>()?;
        let cond = parse_expr(input)?;
        let span = start.to(cond.span);
        let then = parse_block(input, diags)?;
        let els = if input.peek(Token![else]) {
            input.parse::<Token![else]>()?;
            if input.peek(Token![if]) {
                Some(vec![parse_stmt(input, diags)?])
            } else {
                Some(parse_block(input, diags)?)
            }
        } else {
            None
        };
        return Ok(Stmt::If {
            cond,
            then,
            els,
            span,
        });
    }
    if input.peek(kw::parac_iterator) {
        return Ok(Stmt::Iterator(Box::new(parse_iterator(input, diags)?)));
    }
    if input.peek(kw::parac_border_rule) {
        skip_stmt(input);
        return Ok(Stmt::Border(start));
    }
    let first = parse_expr(input)?;
    let mut targets = vec![first];
    loop {
        let op = if input.peek(Token![+=]) {
            input.parse::<Token![+=]>()?;
            Some(BinOp::Add)
        } else if input.peek(Token![-=]) {
            input.parse::<Token![-=]>()?;
            Some(BinOp::Sub)
        } else if input.peek(Token![*=]) {
            input.parse::<Token![*=]>()?;
            Some(BinOp::Mul)
        } else if input.peek(Token![/=]) {
            input.parse::<Token![/=]>()?;
            Some(BinOp::Div)
        } else if input.peek(Token![|=]) {
            input.parse::<Token![|=]>()?;
            Some(BinOp::BitOr)
        } else if input.peek(Token![&=]) {
            input.parse::<Token![&=]>()?;
            Some(BinOp::BitAnd)
        } else if input.peek(Token![^=]) {
            input.parse::<Token![^=]>()?;
            Some(BinOp::BitXor)
        } else if input.peek(Token![=]) && !input.peek(Token![==]) {
            input.parse::<Token![=]>()?;
            None
        } else {
            return Err(input.error("expected `=` (a statement inside an iterator is a `let`, an assignment or an `if`)"));
        };
        let e = parse_expr(input)?;
        if op.is_none() && input.peek(Token![=]) && !input.peek(Token![==]) {
            targets.push(e);
            continue;
        }
        let end = end_semi(input, "the assignment", e.span)?;
        return Ok(Stmt::Assign {
            targets,
            op,
            value: e,
            span: start.to(end),
        });
    }
}
