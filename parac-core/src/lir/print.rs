//! The LIR as text, for golden dumps and `parac emit lir`.
//!
//! ```text
//! region it {
//!   parallel for x in [0i32, i32(M)) step 1 {
//!     store b[i64(x), i64(y)] = a[i64(x), i64(y)]
//! ```
//! Literals carry their type (`3i32`), casts read `type(x)`, `?a[..]` is a checked access
//! (`a[..]` one a pass proved inside).

use super::{Buf, ExprId, ExprKind, Func, LoopKind, Memory, Stmt, StmtId, TempId};
use crate::ir::UnOp;
use std::fmt::Write as _;

/// The text of a function.
pub fn print(f: &Func) -> String {
    let mut out = format!("func {}\n", f.name);
    if !f.streamed.is_empty() {
        let names: Vec<&str> = f.streamed.iter().map(|m| f.matrices[*m].as_str()).collect();
        out.push_str(&format!("  streamed {}\n", names.join(", ")));
    }
    stmt(f, f.body, 1, &mut out);
    out
}

fn buf(f: &Func, b: Buf) -> String {
    match b {
        Buf::Matrix(m) => f.matrices[m].clone(),
        Buf::Temp(t) => f.temps[t].name.clone(),
    }
}

fn list(f: &Func, es: &[ExprId]) -> String {
    es.iter()
        .map(|e| expr(f, *e))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An expression.
pub fn expr(f: &Func, e: ExprId) -> String {
    let x = &f.exprs[e];
    let t = x.ty;
    match &x.kind {
        ExprKind::Int(v) if t == crate::ir::Scalar::Bool => (*v != 0).to_string(),
        ExprKind::Int(v) => format!("{v}{t}"),
        ExprKind::Float(v) => format!("{v:?}{t}"),
        ExprKind::Var(v) => f.vars[*v].name.clone(),
        ExprKind::Size(s) => f.sizes[*s].clone(),
        ExprKind::Host(s) => f.scalars[*s].clone(),
        ExprKind::Dim(m, k) => format!("dim({}, {k})", f.matrices[*m]),
        ExprKind::Load {
            buf: b,
            index,
            checked,
        } => {
            let q = if *checked { "?" } else { "" };
            format!("{q}{}[{}]", buf(f, *b), list(f, index))
        }
        ExprKind::Outside { matrix, index } => {
            format!("outside {}[{}]", f.matrices[*matrix], list(f, index))
        }
        ExprKind::Ramp { base, stride } => {
            format!("ramp({}, {stride}, {})", expr(f, *base), x.lanes)
        }
        ExprKind::Broadcast(a) => format!("broadcast({}, {})", expr(f, *a), x.lanes),
        ExprKind::Extract(a, k) => format!("{}.{k}", expr(f, *a)),
        ExprKind::Vector(xs) => format!("vector({})", list(f, xs)),
        ExprKind::Unary(op, a) => {
            let op = match op {
                UnOp::Neg => "-",
                UnOp::Plus => "+",
                UnOp::Not => "!",
            };
            format!("{op}{}", expr(f, *a))
        }
        ExprKind::Binary(op, a, b) => {
            format!("({} {} {})", expr(f, *a), op.symbol(), expr(f, *b))
        }
        ExprKind::Cast(a) => format!("{t}({})", expr(f, *a)),
        ExprKind::Call(b, args) => format!("{}({})", b.name(), list(f, args)),
        ExprKind::Select(c, a, b) => {
            format!("select({}, {}, {})", expr(f, *c), expr(f, *a), expr(f, *b))
        }
        ExprKind::Let(v, a, b) => format!(
            "(let {} = {} in {})",
            f.vars[*v].name,
            expr(f, *a),
            expr(f, *b)
        ),
        ExprKind::Fold {
            op,
            vars,
            counts,
            init,
            elem,
        } => {
            let loops: Vec<String> = vars
                .iter()
                .zip(counts)
                .map(|(v, c)| format!("{} < {}", f.vars[*v].name, expr(f, *c)))
                .collect();
            format!(
                "fold_{}({}; {}; {})",
                op.name(),
                loops.join(", "),
                expr(f, *init),
                expr(f, *elem)
            )
        }
    }
}

fn kind(f: &Func, k: LoopKind) -> String {
    match k {
        LoopKind::Serial => "for".into(),
        LoopKind::Parallel => "parallel for".into(),
        LoopKind::Vectorized(w) => format!("vectorized({w}) for"),
        LoopKind::Unrolled => "unrolled for".into(),
        LoopKind::ParallelChunks(None) => "parallel chunks for".into(),
        LoopKind::ParallelChunks(Some(v)) => format!("parallel chunks of {} for", f.vars[v].name),
        LoopKind::ChunkRows => "chunk rows for".into(),
        LoopKind::Partials => "partials for".into(),
        LoopKind::GpuBlock(d) => format!("gpu_block({d}) for"),
        LoopKind::GpuThread(d) => format!("gpu_thread({d}) for"),
    }
}

fn stmt(f: &Func, s: StmtId, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    let _ = match &f.stmts[s] {
        Stmt::Block(b) => {
            for s in b {
                stmt(f, *s, depth, out);
            }
            Ok(())
        }
        Stmt::For {
            var,
            lo,
            hi,
            step,
            kind: k,
            body,
        } => {
            let _ = writeln!(
                out,
                "{pad}{} {}: {} in [{}, {}) step {step} {{",
                kind(f, *k),
                f.vars[*var].name,
                f.vars[*var].ty,
                expr(f, *lo),
                expr(f, *hi)
            );
            stmt(f, *body, depth + 1, out);
            writeln!(out, "{pad}}}")
        }
        Stmt::Repeat { count, body, .. } => {
            let _ = writeln!(out, "{pad}repeat {} times {{", expr(f, *count));
            stmt(f, *body, depth + 1, out);
            writeln!(out, "{pad}}}")
        }
        Stmt::Swap(a, b) => writeln!(out, "{pad}swap {} {}", f.matrices[*a], f.matrices[*b]),
        Stmt::Let(v, e) => writeln!(
            out,
            "{pad}let {}: {} = {}",
            f.vars[*v].name,
            f.vars[*v].ty,
            expr(f, *e)
        ),
        Stmt::If(c, t, e) => {
            let _ = writeln!(out, "{pad}if {} {{", expr(f, *c));
            stmt(f, *t, depth + 1, out);
            if let Some(e) = e {
                let _ = writeln!(out, "{pad}}} else {{");
                stmt(f, *e, depth + 1, out);
            }
            writeln!(out, "{pad}}}")
        }
        Stmt::Store {
            buf: b,
            index,
            value,
            checked,
        } => write_line(f, out, &pad, ("store", "="), (*b, index, *value), *checked),
        Stmt::Update {
            buf: b,
            index,
            op,
            value,
            checked,
        } => write_line(
            f,
            out,
            &pad,
            ("update", op.text()),
            (*b, index, *value),
            *checked,
        ),
        Stmt::Allocate {
            buf: b,
            elem,
            memory,
            extents,
        } => {
            let m = match memory {
                Memory::Private => "private".to_string(),
                Memory::Local => "local".to_string(),
                Memory::Global => "global".to_string(),
                Memory::Rows(m) => format!("the task's rows of {} as", f.matrices[*m]),
            };
            writeln!(
                out,
                "{pad}allocate {m} {}: {elem}[{}]",
                buf(f, *b),
                list(f, extents)
            )
        }
        Stmt::Barrier { global: false } => writeln!(out, "{pad}barrier"),
        Stmt::Barrier { global: true } => writeln!(out, "{pad}barrier global"),
        Stmt::Region { name, body, .. } => {
            let _ = writeln!(out, "{pad}region {name} {{");
            stmt(f, *body, depth + 1, out);
            writeln!(out, "{pad}}}")
        }
        Stmt::Reduce { op, matrix, result } => writeln!(
            out,
            "{pad}{} = reduce {}({})",
            f.scalars[*result],
            op.name(),
            f.matrices[*matrix]
        ),
        Stmt::HostLet(s, e) => writeln!(out, "{pad}host {} = {}", f.scalars[*s], expr(f, *e)),
        Stmt::Stage(st) => writeln!(
            out,
            "{pad}{} = stage {}[{}]: [{}) x {} along the last, [{}) x {} along {}, {}",
            f.vars[st.inside].name,
            f.matrices[st.buf],
            st.index
                .iter()
                .map(|i| expr(f, *i))
                .collect::<Vec<_>>()
                .join(", "),
            expr(f, st.rows),
            st.x_step,
            expr(f, st.cols),
            st.y_step,
            st.y_dim,
            match &st.into {
                crate::lir::StageInto::Temp { temp, stride } =>
                    format!("rows {stride} apart into {}", f.temps[*temp].name),
                crate::lir::StageInto::Matrix { buf, index } => format!(
                    "into {}[{}]",
                    f.matrices[*buf],
                    index
                        .iter()
                        .map(|i| expr(f, *i))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        ),
        Stmt::Speculate {
            flag,
            body,
            fallback,
        } => {
            let _ = writeln!(out, "{pad}speculate {} {{", f.vars[*flag].name);
            stmt(f, *body, depth + 1, out);
            let _ = writeln!(out, "{pad}}} else {{");
            stmt(f, *fallback, depth + 1, out);
            writeln!(out, "{pad}}}")
        }
        Stmt::Within(w) => writeln!(
            out,
            "{pad}{} &= within {}[{}, ..] in [{}, {}]",
            f.vars[w.flag].name,
            f.matrices[w.buf],
            list(f, &w.rows),
            w.lo,
            w.hi
        ),
        Stmt::ScanRow {
            row,
            lo,
            hi,
            op,
            acc,
        } => writeln!(
            out,
            "{pad}scan {}[{}, {}) by {} from {}[0]",
            f.temps[*row].name,
            expr(f, *lo),
            expr(f, *hi),
            op.name(),
            f.temps[*acc].name
        ),
        Stmt::ScanTotals {
            var,
            lo,
            hi,
            per,
            body,
            carried,
            totals,
        } => {
            let names = |ts: &mut dyn Iterator<Item = TempId>| {
                ts.map(|t| f.temps[t].name.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let _ = writeln!(
                out,
                "{pad}{}; {} = block totals of ({}) for {}: {} in [{}, {}) {{",
                f.vars[*per].name,
                names(&mut totals.iter().copied()),
                names(&mut carried.iter().map(|c| c.0)),
                f.vars[*var].name,
                f.vars[*var].ty.name(),
                expr(f, *lo),
                expr(f, *hi)
            );
            stmt(f, *body, depth + 1, out);
            writeln!(out, "{pad}}}")
        }
        Stmt::Return(Some(e)) => writeln!(out, "{pad}return {}", expr(f, *e)),
        Stmt::Return(None) => writeln!(out, "{pad}return"),
    };
}

/// `store ?m[i, j] = v` (`?`: checked), or an update's `update m[i] += v`.
fn write_line(
    f: &Func,
    out: &mut String,
    pad: &str,
    (word, op): (&str, &str),
    (b, index, value): (Buf, &[ExprId], ExprId),
    checked: bool,
) -> std::fmt::Result {
    let q = if checked { "?" } else { "" };
    writeln!(
        out,
        "{pad}{word} {q}{}[{}] {op} {}",
        buf(f, b),
        list(f, index),
        expr(f, value)
    )
}
