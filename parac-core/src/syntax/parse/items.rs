//! Items: a pipeline function, its parameters and dimensions, and its function-level
//! statements (constant and local matrices, host `let`s, border rules, iterators, `return`).

use super::headers::{parse_border_stmt, parse_iterator, parse_shorthand};
use super::stmt::{parse_let, parse_stmt};
use super::{Nested, end_semi, kw, parse_list, tokens_between};
use crate::diag::{Diagnostics, Sp};
use crate::syntax::ast::*;
use crate::syntax::expr::{parse_expr, parse_type_name};
use syn::parse::ParseStream;
use syn::parse::discouraged::Speculative;
use syn::{Ident, Token};

pub(super) fn parse_function(input: ParseStream, diags: &mut Diagnostics) -> syn::Result<Function> {
    let start = input.cursor();
    let attrs = input.call(syn::Attribute::parse_outer)?;
    let vis: syn::Visibility = input.parse()?;
    let fn_token: Token![fn] = input.parse().map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected a pipeline function: `fn name(params) { ... }`",
        )
    })?;
    let name: Ident = input.parse()?;
    let content;
    let paren = syn::parenthesized!(content in input);
    let mut params = Vec::new();
    while !content.is_empty() {
        params.push(parse_param(&content)?);
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    let mut sig_end = Sp::one(paren.span.close());
    let ret = if input.peek(Token![->]) {
        input.parse::<Token![->]>()?;
        let t = parse_type_name(input)?;
        sig_end = t.span;
        Some(t)
    } else {
        None
    };
    let body;
    syn::braced!(body in input);
    let body = parse_list(&body, diags, parse_fn_stmt);
    Ok(Function {
        attrs,
        vis,
        name,
        params,
        ret,
        body,
        span: Sp::one(fn_token.span).to(sig_end),
        tokens: tokens_between(start, input.cursor()),
    })
}

fn parse_param(input: ParseStream) -> syn::Result<Param> {
    let name: Ident = input.parse()?;
    input.parse::<Token![:]>()?;
    if input.peek(Token![&]) {
        input.parse::<Token![&]>()?;
        let mutable = if input.peek(Token![mut]) {
            input.parse::<Token![mut]>()?;
            true
        } else {
            false
        };
        let elem = parse_type_name(input)?;
        let dims = parse_dims(input)?;
        if dims.is_empty() {
            return Err(syn::Error::new(
                elem.span.hi,
                format!(
                    "matrix parameter `{name}` needs its dimensions, e.g. `&{}{}[M][N]`",
                    if mutable { "mut " } else { "" },
                    elem.name
                ),
            ));
        }
        Ok(Param {
            name,
            kind: ParamKind::Matrix {
                mutable,
                elem,
                dims,
            },
        })
    } else {
        let ty = parse_type_name(input)?;
        if input.peek(syn::token::Bracket) {
            return Err(syn::Error::new(
                ty.span.hi,
                format!(
                    "a matrix parameter is passed by reference: write `{name}: &{}[..]` for an input or `&mut` for an output",
                    ty.name
                ),
            ));
        }
        Ok(Param {
            name,
            kind: ParamKind::Scalar(ty),
        })
    }
}

/// `[e][e]...` (possibly none).
fn parse_dims(input: ParseStream) -> syn::Result<Vec<Expr>> {
    let mut dims = Vec::new();
    while input.peek(syn::token::Bracket) {
        let content;
        let b = syn::bracketed!(content in input);
        if content.is_empty() {
            return Err(syn::Error::new(
                b.span.open(),
                "a dimension needs a size, e.g. `[M]` or `[(N+1)/2]`",
            ));
        }
        let e = parse_expr(&content)?;
        if !content.is_empty() {
            return Err(content.error("expected `]` after the dimension's size"));
        }
        dims.push(e);
    }
    Ok(dims)
}

fn parse_fn_stmt(input: ParseStream, diags: &mut Diagnostics) -> syn::Result<FnStmt> {
    let start = Sp::one(input.span());
    if input.peek(Token![const]) {
        input.parse::<Token![const]>()?;
        let name: Ident = input.parse()?;
        input.parse::<Token![:]>()?;
        let elem = parse_type_name(input)?;
        let dims = parse_dims(input)?;
        if dims.is_empty() {
            return Err(input.error(format!(
                "`const {name}` must be a constant matrix with dimensions, e.g. `const {name}: {}[1][5] = [[1, 4, 6, 4, 1]];`; scalar constants are `let` statements",
                elem.name
            )));
        }
        input.parse::<Token![=]>()?;
        let init = parse_array(input)?;
        let after = match &init {
            ArrayLit::List(_, sp) => *sp,
            ArrayLit::Elem(e) => e.span,
        };
        let end = end_semi(input, "the constant matrix", after)?;
        return Ok(FnStmt::Const {
            name,
            elem,
            dims,
            init,
            span: start.to(end),
        });
    }
    if input.peek(Token![let]) {
        // A local matrix `let h: u8[M][N];` or a host scalar `let x = ...;`.
        let fork = input.fork();
        fork.parse::<Token![let]>()?;
        if fork.peek(Ident) && fork.peek2(Token![:]) {
            let name: Ident = fork.parse()?;
            fork.parse::<Token![:]>()?;
            let elem = parse_type_name(&fork)?;
            if fork.peek(syn::token::Bracket) {
                input.advance_to(&fork);
                let dims = parse_dims(input)?;
                if input.peek(Token![=]) {
                    return Err(input.error(format!(
                        "a local matrix is declared without a value: `let {name}: {}[..];`, then written inside a `parac_iterator`; constant matrices are `const`",
                        elem.name
                    )));
                }
                let after = dims.last().map_or(elem.span, |d| d.span);
                let end = end_semi(input, "the matrix declaration", after)?;
                return Ok(FnStmt::Local {
                    name,
                    elem,
                    dims,
                    span: start.to(end),
                });
            }
        }
        return Ok(FnStmt::Let(parse_let(input)?));
    }
    if input.peek(kw::parac_border_rule) {
        input.parse::<kw::parac_border_rule>()?;
        let name: Ident = input.parse()?;
        if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            return parse_shorthand(input, name, start).map(FnStmt::BorderShorthand);
        }
        if !input.peek(syn::token::Brace) {
            return Err(input.error(format!(
                "expected `{{` with the rules of `{name}`, or `= replicate({name}[1][1])`-style shorthand"
            )));
        }
        let content;
        let brace = syn::braced!(content in input);
        let stmts = parse_list(&content, diags, |i, _| parse_border_stmt(i));
        return Ok(FnStmt::BorderBlock {
            name,
            stmts,
            span: start.to(Sp::one(brace.span.close())),
        });
    }
    if input.peek(kw::parac_iterator) {
        return Ok(FnStmt::Iterator(parse_iterator(input, diags)?));
    }
    if input.peek(kw::parac_repeat) {
        let keyword = Sp::one(input.parse::<kw::parac_repeat>()?.span);
        let count;
        syn::parenthesized!(count in input);
        if count.is_empty() {
            return Err(count.error(
                "`parac_repeat` needs the number of time steps, e.g. `parac_repeat(T) { ... }`",
            ));
        }
        let n = parse_expr(&count)?;
        if !count.is_empty() {
            return Err(count.error("expected `)` after the number of time steps"));
        }
        let schedule = super::headers::parse_schedule(input)?;
        if !input.peek(syn::token::Brace) {
            return Err(input.error("expected `{` with the statements of one time step"));
        }
        let content;
        let brace = syn::braced!(content in input);
        let body = parse_list(&content, diags, parse_fn_stmt);
        return Ok(FnStmt::Repeat {
            count: n,
            body,
            schedule,
            keyword,
            span: start.to(Sp::one(brace.span.close())),
        });
    }
    if input.peek(kw::parac_swap) {
        input.parse::<kw::parac_swap>()?;
        let args;
        let paren = syn::parenthesized!(args in input);
        let a: Ident = args.parse()?;
        args.parse::<Token![,]>()?;
        let b: Ident = args.parse()?;
        if !args.is_empty() {
            return Err(args.error("`parac_swap` takes two matrices: `parac_swap(a, b);`"));
        }
        let end = end_semi(input, "`parac_swap(..)`", Sp::one(paren.span.close()))?;
        return Ok(FnStmt::Swap {
            names: [a, b],
            span: start.to(end),
        });
    }
    if input.peek(Token![return]) {
        input.parse::<Token![return]>()?;
        let e = parse_expr(input)?;
        let end = end_semi(input, "the returned value", e.span)?;
        return Ok(FnStmt::Return(e, start.to(end)));
    }
    parse_stmt(input, diags).map(FnStmt::Misplaced)
}

fn parse_array(input: ParseStream) -> syn::Result<ArrayLit> {
    let _nested = Nested::enter(input)?;
    if input.peek(syn::token::Bracket) {
        let content;
        let b = syn::bracketed!(content in input);
        let mut items = Vec::new();
        while !content.is_empty() {
            items.push(parse_array(&content)?);
            if content.is_empty() {
                break;
            }
            content.parse::<Token![,]>()?;
        }
        Ok(ArrayLit::List(
            items,
            Sp {
                lo: b.span.open(),
                hi: b.span.close(),
            },
        ))
    } else {
        Ok(ArrayLit::Elem(parse_expr(input)?))
    }
}
