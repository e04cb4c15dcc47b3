//! Expressions: Rust operator precedence over ParaC's operands (windows, `.*`, `*` selectors).

use super::ast::*;
use crate::diag::Sp;
use syn::parse::ParseStream;
use syn::{Ident, Token};

/// Nesting deeper than this is refused (instead of overflowing the stack).
const MAX_DEPTH: usize = 64;

/// Parses one expression.
pub fn parse_expr(input: ParseStream) -> syn::Result<Expr> {
    parse_bin(input, 1, 0)
}

fn binop_at(input: ParseStream, level: u8) -> Option<BinOp> {
    // Compound assignments and `=`-led tokens end an expression.
    if input.peek(Token![+=])
        || input.peek(Token![-=])
        || input.peek(Token![*=])
        || input.peek(Token![/=])
        || input.peek(Token![%=])
        || input.peek(Token![<<=])
        || input.peek(Token![>>=])
        || input.peek(Token![&=])
        || input.peek(Token![|=])
        || input.peek(Token![^=])
    {
        return None;
    }
    let op = match level {
        1 if input.peek(Token![||]) => BinOp::Or,
        2 if input.peek(Token![&&]) => BinOp::And,
        3 if input.peek(Token![==]) => BinOp::Eq,
        3 if input.peek(Token![!=]) => BinOp::Ne,
        3 if input.peek(Token![<=]) => BinOp::Le,
        3 if input.peek(Token![>=]) => BinOp::Ge,
        3 if input.peek(Token![<]) && !input.peek(Token![<<]) => BinOp::Lt,
        3 if input.peek(Token![>]) && !input.peek(Token![>>]) => BinOp::Gt,
        4 if input.peek(Token![|]) && !input.peek(Token![||]) => BinOp::BitOr,
        5 if input.peek(Token![^]) => BinOp::BitXor,
        6 if input.peek(Token![&]) && !input.peek(Token![&&]) => BinOp::BitAnd,
        7 if input.peek(Token![<<]) => BinOp::Shl,
        7 if input.peek(Token![>>]) => BinOp::Shr,
        8 if input.peek(Token![+]) => BinOp::Add,
        8 if input.peek(Token![-]) && !input.peek(Token![->]) => BinOp::Sub,
        9 if input.peek(Token![*]) => BinOp::Mul,
        9 if input.peek(Token![/]) => BinOp::Div,
        9 if input.peek(Token![%]) => BinOp::Rem,
        9 if input.peek(Token![.]) && input.peek2(Token![*]) => BinOp::ElemMul,
        _ => return None,
    };
    Some(op)
}

fn eat_op(input: ParseStream, op: BinOp) -> syn::Result<()> {
    use BinOp::*;
    match op {
        Or => drop(input.parse::<Token![||]>()?),
        And => drop(input.parse::<Token![&&]>()?),
        Eq => drop(input.parse::<Token![==]>()?),
        Ne => drop(input.parse::<Token![!=]>()?),
        Le => drop(input.parse::<Token![<=]>()?),
        Ge => drop(input.parse::<Token![>=]>()?),
        Lt => drop(input.parse::<Token![<]>()?),
        Gt => drop(input.parse::<Token![>]>()?),
        BitOr => drop(input.parse::<Token![|]>()?),
        BitXor => drop(input.parse::<Token![^]>()?),
        BitAnd => drop(input.parse::<Token![&]>()?),
        Shl => drop(input.parse::<Token![<<]>()?),
        Shr => drop(input.parse::<Token![>>]>()?),
        Add => drop(input.parse::<Token![+]>()?),
        Sub => drop(input.parse::<Token![-]>()?),
        Mul => drop(input.parse::<Token![*]>()?),
        Div => drop(input.parse::<Token![/]>()?),
        Rem => drop(input.parse::<Token![%]>()?),
        ElemMul => {
            input.parse::<Token![.]>()?;
            input.parse::<Token![*]>()?;
        }
    }
    Ok(())
}

/// Refuses a tree deeper than [`MAX_EXPR_DEPTH`] (so later passes cannot overflow the stack).
fn bounded(e: Expr) -> syn::Result<Expr> {
    if e.depth > MAX_EXPR_DEPTH {
        Err(syn::Error::new(
            e.span.hi,
            format!(
                "expression too deep (more than {MAX_EXPR_DEPTH} nested operations)\nhelp: split it into several `let`s"
            ),
        ))
    } else {
        Ok(e)
    }
}

fn parse_bin(input: ParseStream, level: u8, depth: usize) -> syn::Result<Expr> {
    if level > 9 {
        return parse_cast(input, depth);
    }
    let mut lhs = parse_bin(input, level + 1, depth)?;
    let mut chained = false;
    while let Some(op) = binop_at(input, level) {
        let op_span = input.span();
        if level == 3 && chained {
            return Err(syn::Error::new(
                op_span,
                "comparison operators cannot be chained; use `&&` between two comparisons",
            ));
        }
        chained = true;
        eat_op(input, op)?;
        let rhs = parse_bin(input, level + 1, depth)?;
        let span = lhs.span.to(rhs.span);
        lhs = bounded(Expr::new(
            ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
            span,
        ))?;
    }
    Ok(lhs)
}

fn parse_cast(input: ParseStream, depth: usize) -> syn::Result<Expr> {
    let mut e = parse_unary(input, depth)?;
    while input.peek(Token![as]) {
        input.parse::<Token![as]>()?;
        let ty = parse_type_name(input)?;
        let span = e.span.to(ty.span);
        e = bounded(Expr::new(ExprKind::Cast(Box::new(e), ty), span))?;
    }
    Ok(e)
}

fn parse_unary(input: ParseStream, depth: usize) -> syn::Result<Expr> {
    if depth > MAX_DEPTH {
        return Err(input.error("expression nested too deeply"));
    }
    let start = input.span();
    let op = if input.peek(Token![-]) {
        input.parse::<Token![-]>()?;
        Some(UnOp::Neg)
    } else if input.peek(Token![+]) {
        input.parse::<Token![+]>()?;
        Some(UnOp::Plus)
    } else if input.peek(Token![!]) {
        input.parse::<Token![!]>()?;
        Some(UnOp::Not)
    } else {
        None
    };
    match op {
        Some(op) => {
            let inner = parse_unary(input, depth + 1)?;
            let span = Sp::one(start).to(inner.span);
            bounded(Expr::new(ExprKind::Unary(op, Box::new(inner)), span))
        }
        None => parse_primary(input, depth),
    }
}

/// A type name after `as` or `:` (checked during lowering).
pub fn parse_type_name(input: ParseStream) -> syn::Result<TypeName> {
    if !input.peek(Ident) {
        return Err(input.error("expected a type such as `u8`, `i32` or `f32`"));
    }
    let id: Ident = input.parse()?;
    Ok(TypeName {
        name: id.to_string(),
        span: Sp::one(id.span()),
    })
}

fn parse_primary(input: ParseStream, depth: usize) -> syn::Result<Expr> {
    if input.peek(syn::token::Paren) {
        let content;
        let paren = syn::parenthesized!(content in input);
        let span = Sp {
            lo: paren.span.open(),
            hi: paren.span.close(),
        };
        if content.is_empty() {
            return Err(syn::Error::new(
                paren.span.open(),
                "expected an expression inside `()`",
            ));
        }
        let first = parse_bin(&content, 1, depth + 1)?;
        if content.is_empty() {
            return Ok(Expr::new(first.kind, span));
        }
        let mut items = vec![first];
        while !content.is_empty() {
            content.parse::<Token![,]>()?;
            if content.is_empty() {
                break;
            }
            items.push(parse_bin(&content, 1, depth + 1)?);
        }
        return Ok(Expr::new(ExprKind::Tuple(items), span));
    }
    if input.peek(syn::Lit) {
        let lit: syn::Lit = input.parse()?;
        let span = Sp::one(lit.span());
        let kind = match &lit {
            syn::Lit::Int(i) => ExprKind::Int(
                i.base10_parse::<u128>()
                    .map_err(|_| syn::Error::new(i.span(), "integer literal too large"))?,
                i.suffix().to_string(),
            ),
            syn::Lit::Float(f) => ExprKind::Float(f.base10_parse::<f64>()?, f.suffix().to_string()),
            syn::Lit::Bool(b) => ExprKind::Bool(b.value),
            _ => {
                return Err(syn::Error::new(
                    lit.span(),
                    "only integer, float and bool literals are allowed in ParaC",
                ));
            }
        };
        return Ok(Expr::new(kind, span));
    }
    if input.peek(Ident) {
        let name: Ident = input.parse()?;
        let start = Sp::one(name.span());
        if input.peek(syn::token::Paren) {
            let content;
            let paren = syn::parenthesized!(content in input);
            let mut args = Vec::new();
            while !content.is_empty() {
                args.push(parse_bin(&content, 1, depth + 1)?);
                if content.is_empty() {
                    break;
                }
                content.parse::<Token![,]>()?;
            }
            let span = start.to(Sp::one(paren.span.close()));
            return Ok(Expr::new(ExprKind::Call(name, args), span));
        }
        if input.peek(syn::token::Bracket) {
            let mut subs = Vec::new();
            let mut end = start;
            while input.peek(syn::token::Bracket) {
                let content;
                let bracket = syn::bracketed!(content in input);
                let sp = Sp {
                    lo: bracket.span.open(),
                    hi: bracket.span.close(),
                };
                subs.push(parse_subscript(&content, sp, depth)?);
                end = sp;
            }
            return Ok(Expr::new(ExprKind::Index(name, subs), start.to(end)));
        }
        return Ok(Expr::new(ExprKind::Name(name), start));
    }
    if input.is_empty() {
        return Err(input.error("expected an expression"));
    }
    let tt: proc_macro2::TokenTree = input.fork().parse()?;
    Err(syn::Error::new(
        tt.span(),
        format!("expected an expression, found `{tt}`"),
    ))
}

fn parse_subscript(content: ParseStream, span: Sp, depth: usize) -> syn::Result<Subscript> {
    if content.is_empty() {
        return Err(syn::Error::new(
            span.lo,
            "empty subscript: write an index `[i]` or a window `[start:len:stride]`",
        ));
    }
    if content.peek(Token![*]) {
        let fork = content.fork();
        fork.parse::<Token![*]>()?;
        if fork.is_empty() {
            content.parse::<Token![*]>()?;
            return Ok(Subscript {
                kind: SubKind::Star,
                span,
            });
        }
    }
    let start = parse_bin(content, 1, depth + 1)?;
    if content.is_empty() {
        return Ok(Subscript {
            kind: SubKind::Point(start),
            span,
        });
    }
    content.parse::<Token![:]>().map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected `]` or `:` (a window is written `[start:len:stride]`)",
        )
    })?;
    let len = parse_bin(content, 1, depth + 1)?;
    let stride = if content.peek(Token![:]) {
        content.parse::<Token![:]>()?;
        Some(parse_bin(content, 1, depth + 1)?)
    } else {
        None
    };
    if !content.is_empty() {
        return Err(content.error("expected `]` after the window's stride"));
    }
    Ok(Subscript {
        kind: SubKind::Window { start, len, stride },
        span,
    })
}
