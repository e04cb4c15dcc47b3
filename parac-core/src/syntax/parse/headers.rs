//! Headers: border rules (targets and their `*`, `-k`, `+k` selectors, rule statements,
//! shorthands) and iterators (the iteration space, the rules applied, the body).

use super::stmt::parse_stmt;
use super::{Nested, end_semi, kw, parse_list};
use crate::diag::{Diagnostics, Sp};
use crate::syntax::ast::*;
use crate::syntax::expr::parse_expr;
use syn::parse::ParseStream;
use syn::parse::discouraged::Speculative;
use syn::punctuated::Punctuated;
use syn::{Ident, Token};

fn parse_sel(input: ParseStream, span: Sp) -> syn::Result<Sel> {
    let bad = || {
        syn::Error::new(
            span.lo,
            "a border target selects `*` (every index), `-k` (the k-th before the first) or `+k` (the k-th after the last), e.g. `src[*][-1]`",
        )
    };
    let sel = if input.peek(Token![*]) {
        input.parse::<Token![*]>()?;
        Sel::Star
    } else if input.peek(Token![-]) || input.peek(Token![+]) {
        let neg = input.peek(Token![-]);
        if neg {
            input.parse::<Token![-]>()?;
        } else {
            input.parse::<Token![+]>()?;
        }
        let k: syn::LitInt = input.parse().map_err(|_| bad())?;
        let k: u32 = k.base10_parse().map_err(|_| bad())?;
        if k == 0 {
            return Err(syn::Error::new(
                span.lo,
                "offset 0 is inside the matrix: `-1` is the first position before it and `+1` the first after it",
            ));
        }
        if k > 16 {
            return Err(syn::Error::new(
                span.lo,
                format!(
                    "border offset must be between 1 and 16 (`-1` is the first position outside the image), not {k}"
                ),
            ));
        }
        if neg { Sel::Before(k) } else { Sel::After(k) }
    } else {
        return Err(bad());
    };
    if !input.is_empty() {
        return Err(bad());
    }
    Ok(sel)
}

fn parse_target(input: ParseStream) -> syn::Result<Target> {
    let matrix: Ident = input.parse()?;
    let mut sels = Vec::new();
    let mut end = Sp::one(matrix.span());
    while input.peek(syn::token::Bracket) {
        let content;
        let b = syn::bracketed!(content in input);
        let sp = Sp {
            lo: b.span.open(),
            hi: b.span.close(),
        };
        sels.push((parse_sel(&content, sp)?, sp));
        end = sp;
    }
    if sels.is_empty() {
        return Err(input.error(format!(
            "a border rule defines positions outside `{matrix}`: write e.g. `{matrix}[*][-1] = ...`"
        )));
    }
    Ok(Target {
        span: Sp::one(matrix.span()).to(end),
        matrix,
        sels,
    })
}

pub(super) fn parse_border_stmt(input: ParseStream) -> syn::Result<BorderStmt> {
    let first = parse_target(input)?;
    let start = first.span;
    let mut targets = vec![first];
    loop {
        if !input.peek(Token![=]) || input.peek(Token![==]) {
            return Err(input.error("expected `=` and the value of the border position"));
        }
        input.parse::<Token![=]>()?;
        // Another target (`a[-1][-1] = a[-1][+1] = v`) or the value.
        let fork = input.fork();
        if let Ok(t) = parse_target(&fork)
            && fork.peek(Token![=])
            && !fork.peek(Token![==])
        {
            input.advance_to(&fork);
            targets.push(t);
            continue;
        }
        let value = parse_expr(input)?;
        let end = end_semi(input, "the border value", value.span)?;
        return Ok(BorderStmt {
            targets,
            value,
            span: start.to(end),
        });
    }
}

pub(super) fn parse_shorthand(
    input: ParseStream,
    name: Ident,
    start: Sp,
) -> syn::Result<Shorthand> {
    let mode: Ident = input.parse()?;
    let content;
    let paren = syn::parenthesized!(content in input);
    let matrix: Ident = content.parse()?;
    let mut widths = Vec::new();
    while content.peek(syn::token::Bracket) {
        let inner;
        let b = syn::bracketed!(inner in content);
        let sp = Sp {
            lo: b.span.open(),
            hi: b.span.close(),
        };
        if inner.peek(Token![*]) {
            inner.parse::<Token![*]>()?;
            widths.push((None, sp));
        } else {
            let w: syn::LitInt = inner.parse().map_err(|_| {
                syn::Error::new(sp.lo, "a shorthand gives a width per dimension: `[2]`, or `[*]` for no border in that dimension")
            })?;
            widths.push((Some(w.base10_parse::<u32>()?), sp));
        }
        if !inner.is_empty() {
            return Err(inner.error("expected `]`"));
        }
    }
    let value = if content.peek(Token![,]) {
        content.parse::<Token![,]>()?;
        Some(parse_expr(&content)?)
    } else {
        None
    };
    if !content.is_empty() {
        return Err(content.error("expected `)`"));
    }
    let end = end_semi(input, "the border rule", Sp::one(paren.span.close()))?;
    Ok(Shorthand {
        name,
        mode,
        matrix,
        widths,
        value,
        span: start.to(end),
    })
}

pub(super) fn parse_iterator(input: ParseStream, diags: &mut Diagnostics) -> syn::Result<IterStmt> {
    let _nested = Nested::enter(input)?;
    let kw_span = input.parse::<kw::parac_iterator>()?.span;
    let name: Ident = input.parse()?;
    if !input.peek(syn::token::Paren) {
        return Err(input.error(format!(
            "expected the iteration space: `parac_iterator {name}(0:M:1; 0:N:1)`"
        )));
    }
    let content;
    let paren = syn::parenthesized!(content in input);
    let dims_span = Sp {
        lo: paren.span.open(),
        hi: paren.span.close(),
    };
    let mut dims = Vec::new();
    loop {
        if content.is_empty() || content.peek(Token![;]) {
            dims.push(None);
        } else {
            dims.push(Some(parse_iter_dim(&content)?));
        }
        if content.is_empty() {
            break;
        }
        content.parse::<Token![;]>().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected `;` between iteration dimensions (`0:M:1; 0:N:1`)",
            )
        })?;
    }
    let mut rules = Vec::new();
    let mut end = dims_span;
    if input.peek(kw::parac_border_rule) {
        input.parse::<kw::parac_border_rule>()?;
        let r;
        let p = syn::parenthesized!(r in input);
        end = Sp::one(p.span.close());
        rules = Punctuated::<Ident, Token![,]>::parse_terminated(&r)?
            .into_iter()
            .collect();
    }
    let schedule = parse_schedule(input)?;
    if !input.peek(syn::token::Brace) {
        return Err(input.error("expected the iterator's body `{ ... }`"));
    }
    let body;
    syn::braced!(body in input);
    let body = parse_list(&body, diags, parse_stmt);
    Ok(IterStmt {
        name,
        dims,
        dims_span,
        rules,
        schedule,
        body,
        span: Sp::one(kw_span).to(end),
    })
}

/// An optional `parac_schedule(name = value, ..)` (of a `parac_iterator` or a `parac_repeat`):
/// each name with its value.
pub(super) fn parse_schedule(input: ParseStream) -> syn::Result<Vec<(Ident, Expr)>> {
    if !input.peek(kw::parac_schedule) {
        return Ok(Vec::new());
    }
    input.parse::<kw::parac_schedule>()?;
    let items;
    syn::parenthesized!(items in input);
    Ok(
        Punctuated::<_, Token![,]>::parse_terminated_with(&items, |i| {
            let name: Ident = i.parse()?;
            i.parse::<Token![=]>()?;
            Ok((name, parse_expr(i)?))
        })?
        .into_iter()
        .collect(),
    )
}

fn parse_iter_dim(input: ParseStream) -> syn::Result<IterDim> {
    let start = Sp::one(input.span());
    let var = if input.peek(Ident) && input.peek2(Token![in]) {
        let v: Ident = input.parse()?;
        input.parse::<Token![in]>()?;
        Some(v)
    } else {
        None
    };
    let lo = parse_expr(input)?;
    if !input.peek(Token![:]) {
        return Err(input.error(
            "an iteration dimension is `lower:upper:step` (upper exclusive), e.g. `0:M:1`",
        ));
    }
    input.parse::<Token![:]>()?;
    let hi = parse_expr(input)?;
    let mut end = hi.span;
    let step = if input.peek(Token![:]) {
        input.parse::<Token![:]>()?;
        let s = parse_expr(input)?;
        end = s.span;
        Some(s)
    } else {
        None
    };
    Ok(IterDim {
        var,
        lo,
        hi,
        step,
        span: start.to(end),
    })
}
