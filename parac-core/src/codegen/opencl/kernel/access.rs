//! Buffers and accesses: a buffer's C name and pitch, plain and vector loads and stores, an
//! unchecked access's `int` linear index, and the guard helpers of checked ones (inside its
//! matrix, or the error flag with the region's code for that matrix).

use super::{Printer, cty};
use crate::codegen::safety;
use crate::ir::{MatrixId, MatrixKind, Scalar, UpdateOp};
use crate::lir::{self, Buf, ExprId, Stmt};

impl Printer<'_> {
    pub(super) fn elem(&self, buf: Buf) -> Scalar {
        match buf {
            Buf::Matrix(m) => self.f.matrices[m].elem,
            Buf::Temp(t) => self.func.temps[t].elem,
        }
    }

    /// The C name of a buffer and its pitch (elements between rows).
    pub(super) fn buffer(&self, buf: Buf) -> (String, String) {
        match buf {
            Buf::Matrix(m) => match self.f.matrices[m].kind {
                MatrixKind::Const(_) => {
                    let last = self.dims[m].last().cloned().unwrap_or_else(|| "1".into());
                    (format!("cst{m}"), format!("((int){last})"))
                }
                _ => (format!("m{m}"), format!("p{m}")),
            },
            Buf::Temp(t) => (self.var_temp(t), self.temp_pitch(t)),
        }
    }

    /// A temporary's row length: its last extent, a constant (a private array's; `0` for a
    /// one-dimensional one, whose index is its element's).
    fn temp_pitch(&self, t: lir::TempId) -> String {
        self.func
            .stmts
            .iter()
            .find_map(|(_, s)| match s {
                Stmt::Allocate {
                    buf: Buf::Temp(x),
                    extents,
                    ..
                } if *x == t && extents.len() > 1 => match self.func.exprs[*extents.last()?].kind {
                    lir::ExprKind::Int(n) => Some(n.to_string()),
                    _ => None,
                },
                _ => None,
            })
            .unwrap_or_else(|| "0".into())
    }

    fn var_temp(&self, t: lir::TempId) -> String {
        format!("tmp{}", t.index())
    }

    /// The error-flag code of a checked access of matrix `m` (see `codegen::safety`).
    fn code(&self, m: MatrixId, write: bool) -> i32 {
        if write {
            safety::write_code(self.rid, m)
        } else {
            safety::border_code(self.rid, m)
        }
    }

    pub(super) fn store(
        &mut self,
        buf: Buf,
        idx: &[String],
        value: &str,
        checked: bool,
        lanes: u32,
    ) -> String {
        self.access(buf, idx, Some(value), checked, lanes)
    }

    /// `buf[idx] = buf[idx] op value` ([`lir::Stmt::Update`]): an OpenCL atomic on a 32-bit
    /// integer element (its work-items may share the element), the plain update elsewhere
    /// (`lir::pass::gpu` leaves such a region's loops in order, one work-item); a checked one
    /// through its guard helper.
    pub(super) fn update(
        &mut self,
        buf: Buf,
        idx: &[String],
        op: UpdateOp,
        value: &str,
        checked: bool,
    ) -> String {
        let (name, pitch) = self.buffer(buf);
        let m = match buf {
            Buf::Matrix(m) => m,
            // A work-group's bins in local memory (`lir::pass::local_tile`), shared by its
            // work-items: an atomic on a `__local` element.
            Buf::Temp(t) => {
                let at = format!("{name}[{}]", self.linear(buf, idx, &pitch));
                return format!("{};", update_text(self.func.temps[t].elem, op, &at, value));
            }
        };
        let elem = self.f.matrices[m].elem;
        if checked {
            let h = self.update_helper(m, op);
            return format!(
                "{h}({name}, {pitch}, {}, {}, {value}, err, {});",
                self.dims[m].join(", "),
                idx.join(", "),
                // Outside, the error of the update's read (`m[i] = m[i] op e` reads first).
                self.code(m, false),
            );
        }
        let at = format!("{name}[{}]", self.linear(buf, idx, &pitch));
        format!("{};", update_text(elem, op, &at, value))
    }

    /// The guard helper of an update of matrix `m` by `op` ([`Printer::guard`]).
    fn update_helper(&mut self, m: MatrixId, op: UpdateOp) -> String {
        self.guard(m, true, Some(op))
    }

    /// A load of `buf` at `idx`.
    pub(super) fn load(&mut self, buf: Buf, idx: &[String], checked: bool, lanes: u32) -> String {
        self.access(buf, idx, None, checked, lanes)
    }

    /// A load, or a store of `value`: a plain one, or a checked one through its guard helper;
    /// of `lanes` adjacent elements (the last index a ramp, printed as its base), `vloadN` or
    /// `vstoreN`.
    fn access(
        &mut self,
        buf: Buf,
        idx: &[String],
        value: Option<&str>,
        checked: bool,
        lanes: u32,
    ) -> String {
        let (name, pitch) = self.buffer(buf);
        if lanes > 1 {
            let at = format!("({})", self.linear(buf, idx, &pitch));
            let elem = match buf {
                Buf::Matrix(m) => self.f.matrices[m].elem,
                Buf::Temp(t) => self.func.temps[t].elem,
            };
            // A vector past 32 bytes as an argument of `vloadN`/`vstoreN` changes the call's ABI
            // on an x86 CPU without AVX-512, which PoCL's compiler warns about on stderr ("AVX
            // vector argument ... changes the ABI"): two halves instead, the same accesses.
            if lanes.is_multiple_of(2) && lanes as usize * elem.bytes() > 32 {
                let h = lanes / 2;
                let t = format!("{}{lanes}", cty(elem));
                return match value {
                    Some(v) => format!(
                        "{{ const {t} pc_v = {v}; vstore{h}(pc_v.lo, 0, {name} + {at}); \
                         vstore{h}(pc_v.hi, 0, {name} + {at} + {h}); }}"
                    ),
                    None => format!(
                        "(({t})(vload{h}(0, {name} + {at}), vload{h}(0, {name} + {at} + {h})))"
                    ),
                };
            }
            return match value {
                Some(v) => format!("vstore{lanes}({v}, 0, {name} + {at});"),
                None => format!("vload{lanes}(0, {name} + {at})"),
            };
        }
        match buf {
            Buf::Matrix(m) if checked => {
                let write = value.is_some();
                let h = self.helper(m, write);
                let v = value.map_or(String::new(), |v| format!("{v}, "));
                format!(
                    "{h}({name}, {pitch}, {}, {}, {v}err, {}){}",
                    self.dims[m].join(", "),
                    idx.join(", "),
                    self.code(m, write),
                    if write { ";" } else { "" }
                )
            }
            _ => {
                let at = format!("{name}[{}]", self.linear(buf, idx, &pitch));
                match value {
                    Some(v) => format!("{at} = {v};"),
                    None => at,
                }
            }
        }
    }

    /// The indices of an access in C. An unchecked access's (proven inside its matrix) are
    /// `int`s, and so is its linear index ([`Printer::linear`]).
    pub(super) fn indices(
        &mut self,
        index: &[ExprId],
        pre: &mut Vec<String>,
        cond: bool,
        checked: bool,
    ) -> Vec<String> {
        let last = index.len().saturating_sub(1);
        index
            .iter()
            .enumerate()
            .map(|(k, i)| {
                // The last index `a + c` (or `(a + c) - b`) of an unchecked access: `(a) + c`
                // (`(a - b) + c`), the constant added last to the linear index
                // ([`Printer::linear`]).
                let (i, less, c) = match self.offset(*i) {
                    Some((a, less, c)) if k == last && !checked => (a, less, Some(c)),
                    _ => (*i, None, None),
                };
                let x = self.expr(i, pre, cond);
                let x = match less {
                    Some(b) => {
                        let b = self.expr(b, pre, cond);
                        format!("((int)(((long)({x})) - ({b})))")
                    }
                    None if checked || self.func.exprs[i].ty == Scalar::I32 => x,
                    None => format!("((int)({x}))"),
                };
                match c {
                    Some(c) if c < 0 => format!("({x}) - {}", -c),
                    Some(c) => format!("({x}) + {c}"),
                    None => format!("({x})"),
                }
            })
            .collect()
    }

    /// An index `a + c` with `c` a constant within [`INDEX_SLACK`] ([`lir::Func::offset`]), or
    /// `(a + c) - b` in `long` (a tile's column, `b` its first): `a`, `b` and `c`. Printed as
    /// `row * pitch + (a) + c` rather than `row * pitch + (a + c)`, the partial sum leaves the
    /// accesses of a loop over `a` visibly consecutive to LLVM (PoCL's compiler), which gathers
    /// them otherwise (a fused tile's loops ran 2x slower). The sum is the same for an index
    /// proven inside its matrix (or its tile), and the partial sum stays in `int` (within
    /// `INDEX_SLACK` of the index).
    fn offset(&self, e: ExprId) -> Option<(ExprId, Option<ExprId>, i128)> {
        let small = |(a, c): (ExprId, i128)| (c.abs() <= INDEX_SLACK).then_some((a, c));
        if let Some((a, c)) = self.func.offset(e).and_then(small) {
            return Some((a, None, c));
        }
        match self.func.exprs[e].kind {
            lir::ExprKind::Binary(crate::ir::BinOp::Sub, x, b)
                if self.func.exprs[e].ty == Scalar::I64 && self.func.exprs[e].lanes == 1 =>
            {
                let (a, c) = self.func.offset(x).and_then(small)?;
                Some((a, Some(b), c))
            }
            _ => None,
        }
    }

    /// The linear index of an unchecked access at `idx` in `buf` (rows `pitch` apart, planes of
    /// whole rows), in `int`: the access is proven inside its matrix, and a device matrix holds
    /// fewer than 2^31 elements, padding included (`parac-runtime`'s buffer layout), so no
    /// partial sum overflows. A 64-bit index would hide from the device compiler that
    /// neighbouring work-items access neighbouring elements (PoCL then gathers).
    fn linear(&self, buf: Buf, idx: &[String], pitch: &str) -> String {
        linear(idx, pitch, |k| match buf {
            Buf::Matrix(m) => format!("((int){})", self.dims[m][k]),
            Buf::Temp(_) => "0".into(),
        })
    }

    /// The guard helper of a load (or a store) of matrix `m`, defined once per program.
    fn helper(&mut self, m: MatrixId, write: bool) -> String {
        self.guard(m, write, None)
    }

    /// The guard helper of a load, a store, or (`op`) an update of matrix `m`.
    fn guard(&mut self, m: MatrixId, write: bool, op: Option<UpdateOp>) -> String {
        let mat = &self.f.matrices[m];
        let (n, t) = (mat.dims.len(), cty(mat.elem));
        let constant = matches!(mat.kind, MatrixKind::Const(_));
        let name = format!(
            "pc_{}{n}_{t}",
            match (op, write, constant) {
                (Some(op), ..) => format!("up{}", format!("{op:?}").to_lowercase()),
                (None, true, _) => "st".into(),
                (None, false, true) => "ldc".into(),
                (None, false, false) => "ld".into(),
            }
        );
        let ks: Vec<usize> = (0..n).collect();
        let ptr = match (write, constant) {
            (true, _) => format!("__global {t}* m"),
            (false, true) => format!("__constant {t}* m"),
            (false, false) => format!("__global const {t}* m"),
        };
        let mut ps = vec![ptr, "int p".to_string()];
        ps.extend(ks.iter().map(|k| format!("long d{k}")));
        ps.extend(ks.iter().map(|k| format!("long i{k}")));
        if write {
            ps.push(format!("{t} v"));
        }
        ps.push("__global int* err".into());
        ps.push("int code".into());
        let inside: Vec<String> = ks
            .iter()
            .map(|k| format!("i{k} >= 0 && i{k} < d{k}"))
            .collect();
        let inside = if inside.is_empty() {
            "1".to_string()
        } else {
            inside.join(" && ")
        };
        let idx: Vec<String> = ks.iter().map(|k| format!("i{k}")).collect();
        let lin = linear(&idx, "p", |k| format!("d{k}"));
        let mut at: Vec<String> = idx.iter().take(3).cloned().collect();
        at.resize(3, "0".into());
        let at = at.join(", ");
        let text = if write {
            let body = match op {
                Some(op) => update_text(mat.elem, op, &format!("m[{lin}]"), "v"),
                None => format!("m[{lin}] = v"),
            };
            format!(
                "static void {name}({}) {{\n    if ({inside}) {body}; else pc_oob(err, code, {at});\n}}\n",
                ps.join(", ")
            )
        } else {
            format!(
                "static {t} {name}({}) {{\n    if ({inside}) return m[{lin}];\n    return ({t})pc_oob(err, code, {at});\n}}\n",
                ps.join(", ")
            )
        };
        self.helpers.entry(name.clone()).or_insert(text);
        name
    }
}

/// The most a constant added to an access's last index may be, to be added last to its linear
/// index (`Printer::offset`): a device matrix holds at most `i32::MAX - INDEX_SLACK` elements,
/// padding included (`parac-runtime`'s buffer layout), so that the partial sum stays in `int`.
pub const INDEX_SLACK: i128 = 1 << 12;

/// The linear index of `idx` (C expressions, outermost first, each parenthesized, the last
/// maybe `(a) + c`): the last index counts elements, rows are `pitch` apart, and a plane is
/// `dim(k)` rows of the dimension `k` before the last.
pub(super) fn linear(idx: &[String], pitch: &str, dim: impl Fn(usize) -> String) -> String {
    let n = idx.len();
    let mut e = String::new();
    for (k, i) in idx.iter().enumerate() {
        e = if k == 0 {
            format!("({i})")
        } else if k + 1 == n {
            format!("({e}) * {pitch} + {i}")
        } else {
            format!("({e}) * {} + ({i})", dim(k))
        };
    }
    if e.is_empty() { "0".into() } else { e }
}

/// `at = at op v` in C for elements of type `t`: an atomic where `lir::pass::gpu::atomic` allows it (its
/// old value unused), else the plain update, which wraps at `t` as the LIR's does.
fn update_text(t: Scalar, op: UpdateOp, at: &str, v: &str) -> String {
    if crate::lir::pass::gpu::atomic(t) {
        let f = match op {
            UpdateOp::Add => "atomic_add",
            UpdateOp::Sub => "atomic_sub",
            UpdateOp::Or => "atomic_or",
            UpdateOp::And => "atomic_and",
            UpdateOp::Xor => "atomic_xor",
            UpdateOp::Min => "atomic_min",
            UpdateOp::Max => "atomic_max",
        };
        return format!("(void){f}(&{at}, {v})");
    }
    let c = cty(t);
    match op {
        // In the element's unsigned type: C's signed overflow is undefined, a wrap here.
        UpdateOp::Add | UpdateOp::Sub => {
            let u = super::unsigned(t);
            let o = if op == UpdateOp::Add { "+" } else { "-" };
            format!("{at} = ({c})(({u}){at} {o} ({u})({v}))")
        }
        UpdateOp::Or => format!("{at} = ({c})({at} | ({v}))"),
        UpdateOp::And => format!("{at} = ({c})({at} & ({v}))"),
        UpdateOp::Xor => format!("{at} = ({c})({at} ^ ({v}))"),
        UpdateOp::Min => format!("{at} = min({at}, ({c})({v}))"),
        UpdateOp::Max => format!("{at} = max({at}, ({c})({v}))"),
    }
}
