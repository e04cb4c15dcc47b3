//! Memory safety on every path and every plan: each access of each region is either proven
//! inside its matrix by the host before the region runs, or guarded where it executes.
//!
//! - **Proven by the host** ([`host_proven`]): an access outside every `if` whose subscripts
//!   depend only on index variables, sizes, integer host scalars and constants, through
//!   operators interval arithmetic follows (`+ - * / % >> << & | ^`, `min`, `max`, `clamp`,
//!   `abs`, casts, and `let`s of such values). Before the region runs, the code `parac!` emits
//!   computes each subscript's interval over the iteration space with the call's sizes
//!   (`parac_runtime::bounds`: on the CPU path in the emitted Rust, on the OpenCL path by
//!   [`interp::region_check`](crate::interp::region_check) in the runtime); an interval
//!   outside the matrix is an `Error::OutOfBounds` on
//!   every path, before anything is launched (Halide's bounds inference, and as strict: the
//!   interval of a subscript that reads the same variable twice may be wider than its values).
//! - **Guarded** ([`guarded`]): every other access (subscripts read from data, accesses under an
//!   `if`, non-integer arithmetic). The OpenCL kernels test such an access against its
//!   matrix's shape where it executes: a load outside reads nothing and gives 0, a store
//!   outside writes nothing, and either raises the call's error flag, read back after the
//!   call into the same `Error::OutOfBounds` the CPU path returns. Transforms that move loads
//!   or stores (shared loads, vector loads and stores, local-memory tiles) leave guarded
//!   accesses alone.
//! - **Bordered reads** (reads of a matrix that a border rule of the region extends) are neither:
//!   each work-item tests them exactly (the interior test, the bordered-load functions), and the
//!   bordered-load functions guard the rule's own reads.
//!
//! Integer division and remainder by a value that is not a non-zero constant are guarded in the
//! kernels as well (a division by zero, or of the smallest integer by -1, would trap): the flag
//! then becomes the CPU path's `Error::DivisionByZero`.

use crate::ir::*;

/// The error-flag code of a guarded access (`1 + region << 16 + access`), of a region's
/// bordered-load function for a matrix (`.. + 0x8000 + matrix`), and of a region's guarded
/// division (`.. + 0xFFFF`).
pub fn access_code(r: RegionId, a: AccessId) -> i32 {
    1 + ((r as i32) << 16) + a as i32
}

/// See [`access_code`].
pub fn border_code(r: RegionId, m: MatrixId) -> i32 {
    1 + ((r as i32) << 16) + 0x8000 + m as i32
}

/// See [`access_code`]: a checked write of matrix `m` in the kernels printed from the loop IR
/// (`.. + 0xC000 + matrix`; their reads raise [`border_code`]).
pub fn write_code(r: RegionId, m: MatrixId) -> i32 {
    1 + ((r as i32) << 16) + 0xC000 + m as i32
}

/// See [`access_code`].
pub fn division_code(r: RegionId) -> i32 {
    1 + ((r as i32) << 16) + 0xFFFE
}

/// Whether access `a` of region `r` is guarded where it executes (not proven by the host, not a
/// bordered read).
pub fn guarded(f: &Function, r: &Region, a: AccessId) -> bool {
    let acc = &r.accesses[a];
    if !acc.write && has_rule(f, r, acc.matrix) {
        return false;
    }
    !host_provable(r, a)
}

/// Whether the host proves access `a` of region `r` inside before the region runs
/// (`interp::region_check`): not guarded, not a bordered read.
pub fn host_proven(f: &Function, r: &Region, a: AccessId) -> bool {
    let acc = &r.accesses[a];
    !(guarded(f, r, a) || (!acc.write && has_rule(f, r, acc.matrix)))
}

/// Whether some border rule of region `r` extends matrix `m`.
pub(crate) fn has_rule(f: &Function, r: &Region, m: MatrixId) -> bool {
    r.rules
        .iter()
        .any(|id| f.rules[*id].entries.iter().any(|e| e.matrix == m))
}

/// The single unconditional `let` of each local, where it has exactly one.
pub(crate) fn lets(r: &Region) -> Vec<Option<&Expr>> {
    let mut count = vec![0usize; r.locals.len()];
    let mut top: Vec<Option<&Expr>> = vec![None; r.locals.len()];
    fn walk<'a>(s: &'a [KStmt], depth: usize, count: &mut [usize], top: &mut [Option<&'a Expr>]) {
        for st in s {
            match st {
                KStmt::Let(l, e) => {
                    count[*l] += 1;
                    if depth == 0 {
                        top[*l] = Some(e);
                    }
                }
                KStmt::If(_, t, e) => {
                    walk(t, depth + 1, count, top);
                    walk(e, depth + 1, count, top);
                }
                KStmt::Store(..) => {}
            }
        }
    }
    walk(&r.body, 0, &mut count, &mut top);
    top.into_iter()
        .zip(count)
        .map(|(e, n)| if n == 1 { e } else { None })
        .collect()
}

/// Accesses that execute under an `if` (in its condition's branches).
fn conditional(r: &Region) -> Vec<bool> {
    let mut out = vec![false; r.accesses.len()];
    fn mark(r: &Region, e: &Expr, out: &mut [bool]) {
        e.walk(&mut |x| {
            if let ExprKind::Load(a) | ExprKind::Block(a) = x.kind {
                out[a] = true;
                // Reads nested in its subscripts run under the same condition.
                for s in &r.accesses[a].subs {
                    if let Sub::Point(e) | Sub::Window { start: e, .. } = s {
                        mark(r, e, out);
                    }
                }
            }
        });
    }
    fn walk(r: &Region, s: &[KStmt], depth: usize, out: &mut [bool]) {
        for st in s {
            match st {
                KStmt::Let(_, e) if depth > 0 => mark(r, e, out),
                KStmt::Store(a, e) if depth > 0 => {
                    out[*a] = true;
                    mark(r, e, out);
                    for s in &r.accesses[*a].subs {
                        if let Sub::Point(e) | Sub::Window { start: e, .. } = s {
                            mark(r, e, out);
                        }
                    }
                }
                KStmt::If(c, t, e) => {
                    if depth > 0 {
                        mark(r, c, out);
                    }
                    walk(r, t, depth + 1, out);
                    walk(r, e, depth + 1, out);
                }
                _ => {}
            }
        }
    }
    walk(r, &r.body, 0, &mut out);
    out
}

fn host_provable(r: &Region, a: AccessId) -> bool {
    if conditional(r)[a] {
        return false;
    }
    let lets = lets(r);
    r.accesses[a].subs.iter().all(|s| match s {
        Sub::Point(e) | Sub::Window { start: e, .. } => followed(e, &lets, 0),
        Sub::Star => true,
    })
}

/// The C integer type of a scalar: bits and signedness (`None` for `f32`).
pub(crate) fn cty(s: Scalar) -> Option<(u32, bool)> {
    Some(match s {
        Scalar::Bool => (1, false),
        Scalar::U8 => (8, false),
        Scalar::I8 => (8, true),
        Scalar::U16 => (16, false),
        Scalar::I16 => (16, true),
        Scalar::U32 => (32, false),
        Scalar::I32 => (32, true),
        Scalar::I64 => (64, true),
        Scalar::U64 => (64, false),
        Scalar::F32 => return None,
    })
}

pub(crate) fn scalar_of(e: &Expr) -> Option<Scalar> {
    match e.ty {
        Type::Scalar(s) => Some(s),
        _ => None,
    }
}

/// Whether interval arithmetic follows `e` (see the module's documentation).
fn followed(e: &Expr, lets: &[Option<&Expr>], depth: usize) -> bool {
    if depth > 64 || scalar_of(e).and_then(cty).is_none() {
        return false;
    }
    let go = |x: &Expr| followed(x, lets, depth + 1);
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Size(_) | ExprKind::Var(_) => true,
        ExprKind::Host(_) => true,
        ExprKind::Local(l) => lets.get(*l).copied().flatten().is_some_and(go),
        ExprKind::Unary(UnOp::Neg | UnOp::Plus, a) => go(a),
        ExprKind::Cast(a, _) => go(a),
        ExprKind::Binary(op, a, b) => {
            use BinOp::*;
            matches!(
                op,
                Add | Sub
                    | Mul
                    | Div
                    | Rem
                    | Shl
                    | Shr
                    | BitAnd
                    | BitOr
                    | BitXor
                    | Eq
                    | Ne
                    | Lt
                    | Le
                    | Gt
                    | Ge
                    | And
                    | Or
            ) && go(a)
                && go(b)
        }
        ExprKind::Call(Builtin::Min | Builtin::Max | Builtin::Clamp | Builtin::Abs, xs) => {
            xs.iter().all(go)
        }
        _ => false,
    }
}

/// Whether `e` has one value for the whole region (constants, sizes, host scalars, and `let`s of
/// such values; no index variable, no load), and interval arithmetic follows it.
pub fn uniform(r: &Region, e: &Expr) -> bool {
    let lets = lets(r);
    let mut ok = followed(e, &lets, 0);
    e.walk(&mut |x| match x.kind {
        ExprKind::Var(_) | ExprKind::Load(_) | ExprKind::Block(_) => ok = false,
        ExprKind::Local(l) => ok &= lets[l].is_some_and(|v| uniform(r, v)),
        _ => {}
    });
    ok
}

/// Whether integer division `/` or `%` with divisor `b` executes in every iteration of the
/// region (`depth` 0: outside every `if` branch) and its divisor is uniform: the host then
/// checks the divisor before the region runs ([`host_divisors`]), and the kernels divide
/// without a test for zero.
pub fn host_divisor(r: &Region, b: &Expr, depth: usize) -> bool {
    depth == 0 && !matches!(b.kind, ExprKind::Int(_)) && uniform(r, b)
}

/// The accesses of `r` with a window of host length (`Len::Host`), each with its windows'
/// lengths in order: the host checks, before anything else of the region, that each length is
/// at least 1 and that their product (the block's taps) is at most `i32::MAX`
/// (`Error::WindowLength`), so that a loop over the taps has a first tap and an `i32` count.
pub fn host_lens(r: &Region) -> Vec<(AccessId, Vec<Len>)> {
    r.accesses
        .iter()
        .enumerate()
        .filter_map(|(a, acc)| {
            let lens: Vec<Len> = acc
                .subs
                .iter()
                .filter_map(|s| match s {
                    Sub::Window { len, .. } => Some(*len),
                    _ => None,
                })
                .collect();
            lens.iter()
                .any(|l| l.known().is_none())
                .then_some((a, lens))
        })
        .collect()
}

/// Whether window lengths `lens` (see [`host_lens`]) are legal.
pub fn lens_ok(lens: &[i64]) -> bool {
    lens.iter().all(|l| *l >= 1)
        && lens
            .iter()
            .try_fold(1i64, |p, l| p.checked_mul(*l))
            .is_some_and(|p| p <= i32::MAX as i64)
}

/// The divisors of the integer divisions that run in every iteration of `r` with a uniform
/// divisor (see [`host_divisor`]), in the order of the body.
pub fn host_divisors(r: &Region) -> Vec<&Expr> {
    fn expr<'a>(r: &'a Region, e: &'a Expr, out: &mut Vec<&'a Expr>) {
        match &e.kind {
            ExprKind::Binary(op, a, b) => {
                if matches!(op, BinOp::Div | BinOp::Rem)
                    && !e.ty.elem().is_float()
                    && !e.ty.is_block()
                    && host_divisor(r, b, 0)
                {
                    out.push(b);
                }
                expr(r, a, out);
                expr(r, b, out);
            }
            ExprKind::MatMul(a, b) | ExprKind::Conv(a, b) => {
                expr(r, a, out);
                expr(r, b, out);
            }
            ExprKind::Unary(_, a)
            | ExprKind::Transpose(a)
            | ExprKind::Cast(a, _)
            | ExprKind::Reduce(_, a) => expr(r, a, out),
            ExprKind::Call(_, xs) => xs.iter().for_each(|x| expr(r, x, out)),
            // Subscripts of the reads.
            ExprKind::Load(a) | ExprKind::Block(a) => subs(r, *a, out),
            _ => {}
        }
    }
    fn subs<'a>(r: &'a Region, a: AccessId, out: &mut Vec<&'a Expr>) {
        for s in &r.accesses[a].subs {
            if let Sub::Point(e) | Sub::Window { start: e, .. } = s {
                expr(r, e, out);
            }
        }
    }
    let mut out = Vec::new();
    for st in &r.body {
        match st {
            KStmt::Let(_, e) => expr(r, e, &mut out),
            KStmt::Store(a, e) => {
                expr(r, e, &mut out);
                subs(r, *a, &mut out);
            }
            KStmt::If(c, _, _) => expr(r, c, &mut out),
        }
    }
    out
}

/// What a raised error flag stands for (see [`flag_codes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flag {
    /// A guarded access, or a bordered-load function's read, outside its matrix: the flag's
    /// words 1 to `indices` hold the index.
    OutOfBounds {
        /// The region.
        region: RegionId,
        /// `read of` or `write to`.
        what: &'static str,
        /// The matrix.
        matrix: MatrixId,
        /// How many index words the flag holds (the matrix's rank, at most 3).
        indices: usize,
    },
    /// A guarded integer division or remainder by zero.
    DivisionByZero {
        /// The region.
        region: RegionId,
    },
}

/// Every code a kernel of `f` can raise the error flag with, and what it stands for.
pub fn flag_codes(f: &Function) -> Vec<(i32, Flag)> {
    let mut out = Vec::new();
    for (rid, r) in f.regions.iter().enumerate() {
        if r.kind != RegionKind::Iterator {
            continue;
        }
        for (a, acc) in r.accesses.iter().enumerate() {
            if !guarded(f, r, a) {
                continue;
            }
            out.push((
                access_code(rid, a),
                Flag::OutOfBounds {
                    region: rid,
                    what: if acc.write { "write to" } else { "read of" },
                    matrix: acc.matrix,
                    indices: acc.subs.len().min(3),
                },
            ));
        }
        for (m, mat) in f.matrices.iter().enumerate() {
            for (code, what) in [
                (border_code(rid, m), "read of"),
                (write_code(rid, m), "write to"),
            ] {
                out.push((
                    code,
                    Flag::OutOfBounds {
                        region: rid,
                        what,
                        matrix: m,
                        indices: mat.dims.len().min(3),
                    },
                ));
            }
        }
        out.push((division_code(rid), Flag::DivisionByZero { region: rid }));
    }
    out
}

/// What flag code `code` of `f` stands for; `None` for a code no kernel of `f` raises (the
/// generated code reports it as an out-of-bounds access to `(unknown)`).
pub fn decode(f: &Function, code: i32) -> Option<Flag> {
    flag_codes(f)
        .into_iter()
        .find(|(c, _)| *c == code)
        .map(|(_, flag)| flag)
}
