//! Reductions into shared elements (histograms) for the generator of `mod.rs`
//! (`docs/language.md`, "Reductions into shared elements: histograms"):
//!
//! - [`G::histogram`]: an iterator over the base grid whose body updates one or two matrices
//!   at places from data (`b3[a0[x][y] & 15] += 1`, `b4[a1[x][y] / 64][v2 as u32 % 8] |= ..`,
//!   `b5[..] = max(b5[..], e)`), sometimes under an `if` on data: bins of every integer type
//!   and `f32` (`+=`, `-=`), 1-D, 2-D and 3-D, a row's extreme (`b6[x]` over `(x, y)`), a
//!   coarse grid (`b7[..][x / 4][y / 4]`), an output accumulating onto what it holds; bins
//!   zeroed or initialized by an earlier iterator, or an intermediate's zeros; a constant
//!   stored at places from data (`seen[v] = 1`); a cumulative scan of 1-D bins after it
//!   (`scan.rs`);
//! - [`G::attach_bins`]: the same updates in an ordinary iterator, next to its stores;
//! - now and then the statement that makes the program one to reject (`reject.rs`).
//!
//! Subscripts stay inside their matrix (masked, divided, reduced modulo the length, clamped)
//! except now and then on purpose (tag `reduce_raw`: the program may fail, reading the bins
//! outside their matrix, an error every path must report alike).

use super::*;

/// How every update of one matrix in an iterator combines: one operator per matrix.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Op {
    Add,
    Sub,
    Or,
    And,
    Xor,
    Min,
    Max,
}

impl Op {
    /// The compound assignment (none for `min` and `max`).
    pub(super) fn compound(self) -> Option<&'static str> {
        Some(match self {
            Op::Add => "+=",
            Op::Sub => "-=",
            Op::Or => "|=",
            Op::And => "&=",
            Op::Xor => "^=",
            Op::Min | Op::Max => return None,
        })
    }

    fn tag(self) -> &'static str {
        match self {
            Op::Add => "reduce:add",
            Op::Sub => "reduce:sub",
            Op::Or => "reduce:or",
            Op::And => "reduce:and",
            Op::Xor => "reduce:xor",
            Op::Min => "reduce:min",
            Op::Max => "reduce:max",
        }
    }
}

/// A matrix an iterator reduces into.
#[derive(Clone, Debug)]
pub(super) struct Hist {
    pub(super) mat: usize,
    pub(super) op: Op,
    /// Updates written so far.
    updates: usize,
}

/// A matrix an iterator stores one constant into at places from data.
#[derive(Clone, Debug)]
pub(super) struct Seen {
    pub(super) mat: usize,
    value: &'static str,
    stores: usize,
}

/// Element types of integer bins: the 32-bit ones (atomics on OpenCL) most, the narrow ones
/// (updated in order on OpenCL) too.
const BINS: [Scalar; 8] = [
    Scalar::I32,
    Scalar::I32,
    Scalar::U32,
    Scalar::U32,
    Scalar::U16,
    Scalar::U8,
    Scalar::I16,
    Scalar::I8,
];

impl G<'_> {
    /// A histogram over the base grid (see the module's documentation), with the declarations
    /// and initializations it needs before it.
    pub(super) fn histogram(&mut self) -> String {
        if self.readable(&Kx::default()).is_empty() {
            // Nothing to take places from yet (no inputs).
            return self.iterator(None);
        }
        self.pre.clear();
        self.tag("histogram");
        let mut kx = Kx::default();
        let name = self.pick(&["h", "it", "hist", "q"]).to_string();
        let named = self.chance(40);
        let base = self.base.clone();
        let mut slot_texts = Vec::new();
        for (d, (e, axis)) in base.into_iter().enumerate() {
            let var = match (named, axis) {
                (true, Axis::Chan) => "c".to_string(),
                (true, Axis::Plane(SM)) => "x".to_string(),
                (true, _) => "y".to_string(),
                (false, _) => format!("{name}{}", ["x", "y", "z"][d]),
            };
            let sym = match (axis, &e) {
                (Axis::Plane(s), _) => Some(s),
                (Axis::Chan, X::Sym(_)) => Some(SC),
                _ => None,
            };
            let slot = Slot {
                var,
                sym,
                chan: axis == Axis::Chan,
                lo: 0,
                hi: e,
                step: 1,
            };
            slot_texts.push(self.slot_text(&slot, named));
            kx.slots.push(Some(slot));
        }
        let n = if self.chance(25) { 2 } else { 1 };
        for _ in 0..n {
            self.bins(&mut kx, true);
        }
        if self.chance(15) {
            self.seen_bins(&mut kx);
        }
        let mut lines = Vec::new();
        if self.chance(10) {
            self.prefix_let(&mut kx, &mut lines);
        }
        // Lets, an `if` or not, the updates (no other stores).
        self.kbody(&mut kx, &[], &mut lines, 0);
        self.last_updates(&mut kx, &mut lines);
        let hists = kx.hists.clone();
        let mut out = self.close_iterator(&mut kx, &name, &slot_texts, lines);
        // The cumulative sum (or extreme) of 1-D bins, in the next iterator.
        let ones: Vec<usize> = hists
            .iter()
            .map(|h| h.mat)
            .filter(|&m| self.mats[m].axes == [Axis::Table])
            .collect();
        if !ones.is_empty() && self.chance(30) {
            let m = self.pick(&ones);
            out.push('\n');
            out.push_str(&self.cumulative(m));
        }
        out
    }

    /// Bins updated in an ordinary iterator, besides its stores.
    pub(super) fn attach_bins(&mut self, kx: &mut Kx) {
        if self.readable(kx).is_empty() {
            return;
        }
        self.tag("reduce:attached");
        self.bins(kx, false);
    }

    /// A matrix for `kx` to reduce into: an output (accumulating onto what it holds) or new
    /// bins, declared (and sometimes initialized) in `self.pre`. On the base grid (`grid`),
    /// also a row's extremes or a coarse grid of the iteration space.
    fn bins(&mut self, kx: &mut Kx, grid: bool) {
        self.tag("reduce");
        let outs: Vec<usize> = (0..self.mats.len())
            .filter(|&i| self.mats[i].kind == Kind::Out && !kx.targets.contains(&i))
            .collect();
        if !outs.is_empty() && self.chance(15) {
            let m = self.pick(&outs);
            self.tag("reduce:output");
            let op = self.op_for(self.mats[m].elem);
            kx.targets.insert(m);
            kx.hists.push(Hist {
                mat: m,
                op,
                updates: 0,
            });
            return;
        }
        let elem = if self.chance(12) {
            Scalar::F32
        } else {
            self.pick(&BINS)
        };
        self.tag(match elem {
            Scalar::F32 => "reduce:f32",
            Scalar::I32 | Scalar::U32 => "reduce:32bit",
            _ => "reduce:narrow",
        });
        let (dims, axes) = match self.n(if grid { 10 } else { 8 }) {
            4 | 5 => {
                self.tag("reduce:2d");
                let (a, b) = (self.pick(&[4, 8, 16]), self.pick(&[4, 8, 16, 64]));
                (vec![lit(a), lit(b)], vec![Axis::Fixed, Axis::Fixed])
            }
            6 => {
                self.tag("reduce:3d");
                let (a, b, c) = (
                    self.pick(&[3, 4]),
                    self.pick(&[4, 8]),
                    self.pick(&[4, 8, 16]),
                );
                (
                    vec![lit(a), lit(b), lit(c)],
                    vec![Axis::Chan, Axis::Fixed, Axis::Fixed],
                )
            }
            7..=9 if grid && self.rank >= 2 => {
                if self.chance(50) {
                    self.tag("reduce:rows");
                    let s = self.pick(&[SM, SN]);
                    (vec![sym(s)], vec![Axis::Plane(s)])
                } else {
                    self.tag("reduce:grid");
                    let k = self.pick(&[2, 4, 8]);
                    let cell = |s: usize| bin('/', add(sym(s), k - 1), lit(k));
                    let bins = self.pick(&[4, 16]);
                    (
                        vec![lit(bins), cell(SM), cell(SN)],
                        vec![Axis::Chan, Axis::Plane(SM), Axis::Plane(SN)],
                    )
                }
            }
            _ => {
                self.tag("reduce:1d");
                let l = self.pick(&[16, 256, 8, 32, 100, 4, 1, 16]);
                (vec![lit(l)], vec![Axis::Table])
            }
        };
        let name = self.fresh("b");
        let m = Mat {
            name: name.clone(),
            elem,
            kind: Kind::Local,
            dims,
            axes,
            written: false,
        };
        self.note_extents(&m);
        self.pre
            .push(format!("let {name}: {elem}{};", m.dims_text()));
        self.mats.push(m);
        let id = self.mats.len() - 1;
        let op = self.op_for(elem);
        if self.chance(50) {
            let z = self.init_bins(id, op);
            self.pre.push(z);
        }
        kx.targets.insert(id);
        kx.hists.push(Hist {
            mat: id,
            op,
            updates: 0,
        });
    }

    /// An operator for bins of `elem`: sums for floats, any for integers.
    fn op_for(&mut self, elem: Scalar) -> Op {
        let op = if elem == Scalar::F32 {
            self.pick(&[Op::Add, Op::Add, Op::Sub])
        } else {
            self.pick(&[
                Op::Add,
                Op::Add,
                Op::Add,
                Op::Sub,
                Op::Or,
                Op::And,
                Op::Xor,
                Op::Min,
                Op::Max,
                Op::Max,
            ])
        };
        self.tag(op.tag());
        op
    }

    /// An iterator storing one value into every element of bins `m`: zeros, or a start that
    /// suits the operator (all ones for `&=`, large for `min`).
    fn init_bins(&mut self, m: usize, op: Op) -> String {
        self.tag("reduce:initialized");
        let mat = self.mats[m].clone();
        let it = self.pick(&["z", "zero", "init"]);
        let vars: Vec<String> = (0..mat.dims.len())
            .map(|d| format!("{it}{}", ["x", "y", "z"][d]))
            .collect();
        let slots: Vec<String> = mat
            .dims
            .iter()
            .map(|e| format!("0:{}:1", e.text()))
            .collect();
        let value = match (mat.elem, op) {
            (Scalar::F32, _) => self.pick(&["0.0", "0.0", "1.5", "-2.0"]).to_string(),
            (_, Op::Min) => self.pick(&["255", "100000", "-1", "7"]).to_string(),
            (_, Op::And) => self.pick(&["-1", "255", "0"]).to_string(),
            _ => match self.n(4) {
                0 | 1 => "0".to_string(),
                2 => "3".to_string(),
                _ => vars[0].clone(),
            },
        };
        let at: String = vars.iter().map(|v| format!("[{v}]")).collect();
        format!(
            "parac_iterator {it}({}) {{\n    {}{at} = {value};\n}}",
            slots.join("; "),
            mat.name
        )
    }

    /// A matrix the histogram stores one constant into at places from data.
    fn seen_bins(&mut self, kx: &mut Kx) {
        self.tag("reduce:uniform");
        let elem = self.pick(&[Scalar::U8, Scalar::I32, Scalar::U16]);
        let l = self.pick(&[16, 256, 8]);
        let name = self.fresh("b");
        self.pre.push(format!("let {name}: {elem}[{l}];"));
        self.mats.push(Mat {
            name,
            elem,
            kind: Kind::Local,
            dims: vec![lit(l)],
            axes: vec![Axis::Table],
            written: false,
        });
        let mat = self.mats.len() - 1;
        kx.targets.insert(mat);
        let value = self.pick(&["1", "1", "255", "7"]);
        kx.seen = Some(Seen {
            mat,
            value,
            stores: 0,
        });
    }

    /// Updates of the iterator's bins where its stores are (each bins now and then), and the
    /// constant stores.
    pub(super) fn updates(&mut self, kx: &mut Kx, lines: &mut Vec<String>, all: bool) {
        for i in 0..kx.hists.len() {
            if all || self.chance(60) {
                let l = self.update_line(kx, i);
                lines.push(l);
            }
        }
        if let Some(s) = kx.seen.clone()
            && (all || self.chance(50))
        {
            let at = self.bin_subs(kx, s.mat, true);
            lines.push(format!("{}{at} = {};", self.mats[s.mat].name, s.value));
            kx.seen.as_mut().expect("seen").stores += 1;
        }
    }

    /// At the end of the iterator's body: an update of each bins none updated yet, the first
    /// constant store; and now and then the statement that makes the program one to reject.
    pub(super) fn last_updates(&mut self, kx: &mut Kx, lines: &mut Vec<String>) {
        for i in 0..kx.hists.len() {
            if kx.hists[i].updates == 0 {
                let l = self.update_line(kx, i);
                lines.push(l);
            }
        }
        if kx.seen.as_ref().is_some_and(|s| s.stores == 0) {
            let s = kx.seen.clone().expect("seen");
            let at = self.bin_subs(kx, s.mat, true);
            lines.push(format!("{}{at} = {};", self.mats[s.mat].name, s.value));
        }
        if !kx.hists.is_empty() && self.reject.is_none() && self.chance(12) {
            self.reject_line(kx, lines);
        }
    }

    /// One update of `kx.hists[i]`, with its operator.
    pub(super) fn update_line(&mut self, kx: &mut Kx, i: usize) -> String {
        let h = kx.hists[i].clone();
        kx.hists[i].updates += 1;
        if kx.depth > 0 {
            self.tag("reduce:under_if");
        }
        let mat = self.mats[h.mat].clone();
        let lv = format!("{}{}", mat.name, self.bin_subs(kx, h.mat, false));
        match h.op.compound() {
            Some(op) => {
                let v = self.update_value(kx, mat.elem, h.op);
                format!("{lv} {op} {v};")
            }
            None => {
                let f = if h.op == Op::Min { "min" } else { "max" };
                let v = self.extreme_value(kx, mat.elem);
                if self.chance(50) {
                    format!("{lv} = {f}({lv}, {v});")
                } else {
                    format!("{lv} = {f}({v}, {lv});")
                }
            }
        }
    }

    /// The value a compound update of bins of `elem` combines.
    fn update_value(&mut self, kx: &mut Kx, elem: Scalar, op: Op) -> String {
        if elem == Scalar::F32 {
            // Float bins take floats and integers; the iterations run in order.
            return match self.n(4) {
                0 => "1.0".to_string(),
                1 => self.kexpr(kx, Want::Int, 1).t,
                _ => self.kexpr(kx, Want::Float, 1).t,
            };
        }
        match (op, self.n(4)) {
            (_, 0) => "1".to_string(),
            (Op::Or | Op::And | Op::Xor, 1) => {
                let (d, _, _) = self.bin_data(kx);
                format!("1 << ({d} & 7)")
            }
            _ => self.kexpr(kx, Want::Int, 2).t,
        }
    }

    /// The value `m[i] = min(m[i], e)` combines: of the element's type (so that the update is a
    /// reduction), a narrow type by a conversion.
    fn extreme_value(&mut self, kx: &mut Kx, elem: Scalar) -> String {
        let e = if self.chance(40) {
            let (d, ty, _) = self.bin_data(kx);
            Ex::atom(d, ty)
        } else {
            self.kexpr(kx, Want::Int, 2)
        };
        if e.ty == elem && !e.t.ends_with(&format!(" as {elem}")) {
            return e.t;
        }
        match elem {
            // `e as i32` is taken for a race (`minmax_convert`): an operation after the
            // conversion keeps the element's type.
            Scalar::I32 | Scalar::U32 if avoiding("minmax_convert") => {
                format!("{} as {elem} + 0", e.p())
            }
            Scalar::I32 | Scalar::U32 => {
                self.tag("minmax_convert");
                format!("{} as {elem}", e.p())
            }
            _ => format!("{} as {elem}", e.p()),
        }
    }

    /// The subscripts of an update of bins `m`; with `data`, from data in every dimension.
    /// Never each of the iterator's variables alone: that update would be an iteration's own
    /// element (a plain `+=`, no reduction), which the compiler does not let touch a matrix
    /// reduced into.
    pub(super) fn bin_subs(&mut self, kx: &mut Kx, m: usize, data: bool) -> String {
        let mat = self.mats[m].clone();
        let mut subs: Vec<String> = (0..mat.dims.len())
            .map(|d| self.bin_index(kx, &mat, d, data))
            .collect();
        let vars: Vec<String> = kx.slots.iter().flatten().map(|s| s.var.clone()).collect();
        if !vars.is_empty() && vars.iter().all(|v| subs.contains(v)) {
            let d = subs
                .iter()
                .position(|s| vars.contains(s))
                .expect("a variable");
            subs[d] = self.bin_index(kx, &mat, d, true);
        }
        subs.iter().map(|s| format!("[{s}]")).collect()
    }

    /// Subscript `d` of an update of `mat`: from data (kept inside mostly), or, for a
    /// dimension of the grid, the variable that runs along it (`rows[x]`, `cells[x / 4]`:
    /// iterations share those elements too).
    fn bin_index(&mut self, kx: &mut Kx, mat: &Mat, d: usize, data: bool) -> String {
        let e = mat.dims[d].clone();
        if let X::Lit(l) = e {
            return self.bin_of_len(kx, l);
        }
        if !data && !self.chance(15) {
            if let Axis::Plane(s) = mat.axes[d] {
                let var = kx
                    .slots
                    .iter()
                    .flatten()
                    .find(|sl| {
                        sl.sym == Some(s)
                            && !sl.chan
                            && sl.lo == 0
                            && sl.step == 1
                            && sl.hi.text() == SYMS[s]
                    })
                    .map(|sl| sl.var.clone());
                if let Some(v) = var {
                    // `E` itself, or `(E + k - 1) / k` (whose last index `(E - 1) / k` is).
                    if let X::Sym(_) = e {
                        return v;
                    }
                    if let X::Bin('/', a, k) = &e
                        && let (X::Bin('+', b, c), X::Lit(k)) = (&**a, &**k)
                        && matches!(**b, X::Sym(t) if t == s)
                        && matches!(**c, X::Lit(c) if c == k - 1)
                    {
                        return format!("{v} / {k}");
                    }
                }
            }
            if mat.axes[d] == Axis::Chan {
                let var = kx
                    .slots
                    .iter()
                    .flatten()
                    .find(|sl| sl.chan && sl.hi.text() == e.text())
                    .map(|sl| sl.var.clone());
                if let Some(v) = var {
                    return v;
                }
            }
        }
        let (t, _, _) = self.bin_data(kx);
        if self.chance(4) {
            self.tag("reduce_raw");
            return t;
        }
        X::Clamp(Box::new(X::Data(t)), Box::new(lit(0)), Box::new(add(e, -1))).text()
    }

    /// A subscript from data into a dimension of `l` elements: a byte into 256 bins, divided,
    /// masked, reduced modulo `l` or clamped; now and then one that may leave the matrix.
    fn bin_of_len(&mut self, kx: &mut Kx, l: i64) -> String {
        let (d, ty, bounded) = self.bin_data(kx);
        if self.chance(4) {
            self.tag("reduce_raw");
            return match self.n(3) {
                0 => d,
                1 => format!("{d} + {}", 1 + self.n(3)),
                _ => format!("{d} % {}", l + 1 + self.n(3) as i64),
            };
        }
        let unsigned = matches!(ty, Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64);
        let byte = bounded && ty == Scalar::U8;
        match self.n(6) {
            0 if byte && l >= 256 => d,
            1 if byte => {
                let mut k = 1;
                while 255 / k >= l {
                    k *= 2;
                }
                format!("{d} / {k}")
            }
            2 if bounded && unsigned => format!("{d} % {l}"),
            3 if l & (l - 1) == 0 => format!("{d} & {}", l - 1),
            4 => format!("{d} as u32 % {l}"),
            _ => format!("clamp({d}, 0, {})", l - 1),
        }
    }

    /// An integer from data for a subscript (an atom): an element of a readable matrix, a
    /// prefix, an expression that reads a matrix; its type, and whether its value is within
    /// its type's range (an element read inside its matrix: a border value is not converted
    /// to the element type). From data, so that iterations may share the element: an update
    /// at an iteration's own element is no reduction, and the compiler lets nothing else
    /// touch a matrix reduced into.
    pub(super) fn bin_data(&mut self, kx: &mut Kx) -> (String, Scalar, bool) {
        let element = |g: &mut Self, kx: &mut Kx| {
            let m = g.pick_readable(kx, Want::Int, false)?;
            let t = g.nested_access(kx, m, 1)?;
            Some((t, g.mats[m].elem, !kx.last_out))
        };
        match self.n(10) {
            0..=6 => {
                if let Some(d) = element(self, kx) {
                    return d;
                }
            }
            7 => {
                let ls: Vec<KLet> = kx
                    .lets
                    .iter()
                    .filter(|l| l.ty.is_int() && kx.data_lets.contains(&l.name))
                    .cloned()
                    .collect();
                if !ls.is_empty() {
                    let l = self.pick(&ls);
                    return (l.name, l.ty, false);
                }
            }
            _ => {}
        }
        for _ in 0..3 {
            let e = self.kexpr(kx, Want::Int, 1);
            if e.t.contains('[') {
                return (e.p(), e.ty, false);
            }
        }
        if let Some(d) = element(self, kx) {
            return d;
        }
        let e = self.kexpr(kx, Want::Int, 1);
        (e.p(), e.ty, false)
    }
}
