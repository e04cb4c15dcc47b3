//! Items and statements. Every statement list recovers from an error at the next `;` (or the
//! end of a braced block), so one typo does not hide the errors that follow it.

use super::ast::*;
use super::expr::{parse_expr, parse_type_name};
use crate::diag::{Diagnostics, Sp};
use proc_macro2::{TokenStream, TokenTree};
use syn::parse::discouraged::Speculative;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, Token};

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
            if let TokenTree::Group(g) = &tt {
                if g.delimiter() == proc_macro2::Delimiter::Brace {
                    break;
                }
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
            if let TokenTree::Ident(id) = &tt {
                if !first && STMT_START.iter().any(|k| id == k) {
                    break;
                }
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

fn parse_function(input: ParseStream, diags: &mut Diagnostics) -> syn::Result<Function> {
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

fn parse_let(input: ParseStream) -> syn::Result<LetStmt> {
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

fn parse_border_stmt(input: ParseStream) -> syn::Result<BorderStmt> {
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
        if let Ok(t) = parse_target(&fork) {
            if fork.peek(Token![=]) && !fork.peek(Token![==]) {
                input.advance_to(&fork);
                targets.push(t);
                continue;
            }
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

fn parse_shorthand(input: ParseStream, name: Ident, start: Sp) -> syn::Result<Shorthand> {
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

fn parse_iterator(input: ParseStream, diags: &mut Diagnostics) -> syn::Result<IterStmt> {
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
        while !r.is_empty() {
            rules.push(r.parse::<Ident>()?);
            if r.is_empty() {
                break;
            }
            r.parse::<Token![,]>()?;
        }
    }
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
        body,
        span: Sp::one(kw_span).to(end),
    })
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

fn parse_block(input: ParseStream, diags: &mut Diagnostics) -> syn::Result<Vec<Stmt>> {
    let _nested = Nested::enter(input)?;
    if !input.peek(syn::token::Brace) {
        return Err(input.error("expected a block `{ ... }`"));
    }
    let content;
    syn::braced!(content in input);
    Ok(parse_list(&content, diags, parse_stmt))
}

fn parse_stmt(input: ParseStream, diags: &mut Diagnostics) -> syn::Result<Stmt> {
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
