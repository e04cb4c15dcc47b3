//! The host-side Rust that `parac!` expands to.

use crate::Compiled;
use crate::diag::Diagnostic;
use crate::ir::display::declared;
use crate::ir::{Function, ParamRef};
use crate::syntax::ast;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

/// Expands a compiled program: every function gets its Rust signature; functions that compiled
/// get their body, the others a placeholder body, and every diagnostic becomes a
/// `compile_error!` at its span (so the user sees the errors and no cascade).
pub fn expand(c: &Compiled) -> TokenStream {
    let mut out = TokenStream::new();
    for d in &c.diagnostics {
        out.extend(compile_error(d));
    }
    for f in &c.ast.functions {
        let ir = c.module.functions.iter().find(|g| f.name == g.name);
        out.extend(function(f, ir));
    }
    out
}

fn compile_error(d: &Diagnostic) -> TokenStream {
    let mut ts = TokenStream::new();
    ts.extend([
        proc_macro2::TokenTree::Ident(Ident::new("a", d.span.lo)),
        proc_macro2::TokenTree::Ident(Ident::new("b", d.span.hi)),
    ]);
    syn::Error::new_spanned(ts, &d.message).to_compile_error()
}

fn rust_type(name: &str) -> TokenStream {
    let id = Ident::new(name, Span::call_site());
    quote!(#id)
}

/// A parameter's kind and Rust element (or scalar) type.
enum Param {
    /// `&T[..]`: read.
    In(TokenStream),
    /// `&mut T[..]`: written.
    Out(TokenStream),
    /// A scalar of this type.
    Scalar(TokenStream),
}

fn param(p: &ast::Param) -> Param {
    match &p.kind {
        ast::ParamKind::Matrix { mutable, elem, .. } => {
            let t = rust_type(&elem.name);
            if *mutable {
                Param::Out(t)
            } else {
                Param::In(t)
            }
        }
        ast::ParamKind::Scalar(t) => Param::Scalar(rust_type(&t.name)),
    }
}

fn function(f: &ast::Function, ir: Option<&Function>) -> TokenStream {
    let attrs = &f.attrs;
    let vis = &f.vis;
    let name = &f.name;
    let ret = f.ret.as_ref().map_or(quote!(()), |t| rust_type(&t.name));
    let params = f.params.iter().map(|p| {
        let n = &p.name;
        match param(p) {
            Param::Out(t) => quote!(#n: &mut impl ::parac::MatrixMut<#t>),
            Param::In(t) => quote!(#n: &impl ::parac::MatrixRef<#t>),
            Param::Scalar(t) => quote!(#n: #t),
        }
    });
    let body = match ir {
        Some(ir) => body(ir, f, &ret),
        None => quote!(::core::unreachable!("parac: this pipeline did not compile")),
    };
    quote! {
        #(#attrs)*
        #[allow(non_snake_case, unused, clippy::all)]
        #vis fn #name(rt: &::parac::Runtime, #(#params),*) -> ::core::result::Result<#ret, ::parac::Error> {
            #body
        }
    }
}

fn body(f: &Function, ast: &ast::Function, ret: &TokenStream) -> TokenStream {
    let fname = &f.name;
    // Ranks first: sizes are bound from dimensions that must exist.
    let ranks = f.params.iter().filter_map(|p| match p {
        ParamRef::Matrix(m) => Some(*m),
        ParamRef::Scalar(_) => None,
    });
    let ranks: Vec<TokenStream> = ranks
        .map(|m| {
            let mat = &f.matrices[m];
            let id = format_ident!("{}", mat.name);
            let mname = &mat.name;
            let declared = declared(f, m);
            let n = mat.dims.len();
            quote!(::parac::__private::check_rank(#fname, #mname, #declared, #n, #id.shape())?;)
        })
        .collect();
    let bind = f.sizes.iter().map(|s| {
        let id = format_ident!("{}", s.name);
        let m = format_ident!("{}", f.matrices[s.bound_by.0].name);
        let d = s.bound_by.1;
        quote!(let #id: i64 = #m.shape().get(#d).copied().unwrap_or(0) as i64;)
    });
    let checks = f.params.iter().filter_map(|p| match p {
        ParamRef::Matrix(m) => Some(*m),
        ParamRef::Scalar(_) => None,
    });
    let checks = checks.map(|m| {
        let mat = &f.matrices[m];
        let id = format_ident!("{}", mat.name);
        let mname = &mat.name;
        let declared = declared(f, m);
        let dims = mat.dims.iter().map(|d| {
            let e = super::cpu::size_expr(f, d);
            quote!(usize::try_from(#e).unwrap_or(0))
        });
        quote! {
            ::parac::__private::check_shape(#fname, #mname, #declared, &[#(#dims),*], #id.shape())?;
        }
    });
    let prelude = super::cpu::prelude(f);
    let source = ast.tokens.to_string();
    let device = device_call(ast, ret);
    let run = super::cpu::cpu_body(f);
    // The parameters under the names the generated code uses (the call site's hygiene: the
    // user's tokens may come through a `macro_rules!` of theirs, whose names the generated
    // code would not see).
    let rebind = ast.params.iter().map(|p| {
        let (n, cs) = (&p.name, format_ident!("{}", p.name.to_string()));
        quote!(let #cs = #n;)
    });
    quote! {
        #(#rebind)*
        #(#ranks)*
        #(#bind)*
        #(#checks)*
        static __SOURCE: &str = #source;
        ::parac::__private::dump_ir(rt, __SOURCE)?;
        #device
        #prelude
        #run
    }
}

/// The OpenCL path: the function's own source (`__SOURCE`), compiled again by the runtime (once
/// per thread) and run by its executor on the caller's matrices, borrowed as they are. All the host
/// logic of a device call (views, programs, plans, proofs, launches, reductions, the error
/// flag) lives in the runtime, once, for this and for `Pipeline`. While the function warms up
/// on the device the runtime answers `Ran::CpuPath` and the call goes on to the CPU path below,
/// holding the turn (`__cpu_turn`) until it returns.
fn device_call(f: &ast::Function, ret: &TokenStream) -> TokenStream {
    let args = f.params.iter().map(|p| {
        let n = format_ident!("{}", p.name.to_string());
        match param(p) {
            Param::Out(t) => quote!(::parac::__private::HostArg::output::<#t, _>(&mut *#n)),
            Param::In(t) => quote!(::parac::__private::HostArg::input::<#t, _>(#n)),
            Param::Scalar(_) => quote!(::parac::__private::HostArg::scalar(#n)),
        }
    });
    quote! {
        let __cpu_turn;
        if let ::core::option::Option::Some(__dev) = rt.device() {
            let mut __args = [#(#args),*];
            match ::parac::__private::run_embedded(rt, __dev, __SOURCE, &mut __args)? {
                ::parac::__private::Ran::Device(__ret) => {
                    return ::core::result::Result::Ok(::parac::__private::returned::<#ret>(__ret));
                }
                ::parac::__private::Ran::CpuPath(__turn) => __cpu_turn = __turn,
            }
        }
    }
}
