//! Prefix scans for the generator of `mod.rs` (`docs/language.md`, "Prefix sums"):
//! `parac_prefix_sum`, `_min` and `_max` in `let`s and stores outside every `if` of an ordinary
//! iterator, along one of its variables or two (the latter, and prefixes of one iterator along
//! different variables, run on the CPU path alone: OpenCL says `Unsupported`), read by later
//! iterators; and the cumulative sum (or extreme) of a histogram's 1-D bins.

use super::*;

/// The type of a prefix of a value of type `t`: a window reduction's (`i32` for narrow
/// integers).
fn prefix_type(t: Scalar) -> Scalar {
    if t == Scalar::F32 {
        Scalar::F32
    } else {
        t.promote()
    }
}

impl G<'_> {
    /// `let v = parac_prefix_sum(e, y);` (or `_min`, `_max`; along one variable or two),
    /// appended to `lines`.
    pub(super) fn prefix_let(&mut self, kx: &mut Kx, lines: &mut Vec<String>) {
        let Some((f, along)) = self.scan(kx) else {
            return;
        };
        let e = self.kexpr(kx, Want::Num, 2);
        let ty = prefix_type(e.ty);
        let e = self.prefix_operand(kx, e, lines);
        let name = self.fresh("v");
        kx.lets.push(KLet {
            name: name.clone(),
            ty,
            block: None,
        });
        kx.data_lets.push(name.clone());
        lines.push(format!("let {name} = {f}({e}, {along});"));
    }

    /// A prefix to store into an element of `elem` (what it needs appended to `lines`).
    pub(super) fn prefix_value(
        &mut self,
        kx: &mut Kx,
        elem: Scalar,
        lines: &mut Vec<String>,
    ) -> Option<String> {
        let (f, along) = self.scan(kx)?;
        let want = if elem == Scalar::F32 {
            Want::Num
        } else {
            Want::Int
        };
        let e = self.kexpr(kx, want, 2);
        let ty = prefix_type(e.ty);
        let e = self.prefix_operand(kx, e, lines);
        let v = Ex::atom(format!("{f}({e}, {along})"), ty);
        Some(self.fit(v, elem).t)
    }

    /// The value a prefix combines: `e` in place, or, where it is large and `prefix_expr` is
    /// avoided, a `let` of it appended to `lines`.
    fn prefix_operand(&mut self, kx: &mut Kx, e: Ex, lines: &mut Vec<String>) -> String {
        if e.t.len() <= 40 && !e.t.contains("parac_") {
            return e.t;
        }
        if !avoiding("prefix_expr") {
            self.tag("prefix_expr");
            return e.t;
        }
        let name = self.fresh("v");
        lines.push(format!("let {name} = {};", e.t));
        kx.lets.push(KLet {
            name: name.clone(),
            ty: e.ty,
            block: None,
        });
        name
    }

    /// A prefix's function and the variables it scans along: the iterator's first scan's
    /// mostly, else one variable or (rarely) two.
    fn scan(&mut self, kx: &mut Kx) -> Option<(&'static str, String)> {
        let slots: Vec<usize> = (0..kx.slots.len())
            .filter(|&i| kx.slots[i].is_some())
            .collect();
        if slots.is_empty() {
            return None;
        }
        let along = match kx.scan.clone() {
            Some(s) if !self.chance(15) => s,
            _ if slots.len() >= 2 && self.chance(15) => {
                let a = self.n(slots.len());
                let mut b = self.n(slots.len() - 1);
                if b >= a {
                    b += 1;
                }
                vec![slots[a], slots[b]]
            }
            _ => vec![self.pick(&slots)],
        };
        match &kx.scan {
            None => kx.scan = Some(along.clone()),
            Some(s) => {
                let (mut a, mut b) = (s.clone(), along.clone());
                a.sort_unstable();
                b.sort_unstable();
                if a != b {
                    self.tag("scan:mixed");
                }
            }
        }
        if along.len() == 2 {
            self.tag("scan:2d");
        }
        self.tag("scan");
        let f = self.pick(&[
            "parac_prefix_sum",
            "parac_prefix_sum",
            "parac_prefix_min",
            "parac_prefix_max",
        ]);
        self.tag(match f {
            "parac_prefix_sum" => "scan:sum",
            "parac_prefix_min" => "scan:min",
            _ => "scan:max",
        });
        let vars: Vec<String> = along
            .iter()
            .map(|&i| kx.slots[i].as_ref().expect("slot").var.clone())
            .collect();
        Some((f, vars.join(", ")))
    }

    /// An iterator over 1-D bins `m` storing their running sum (or extreme) into new ones.
    pub(super) fn cumulative(&mut self, m: usize) -> String {
        let mat = self.mats[m].clone();
        let X::Lit(l) = mat.dims[0] else {
            return String::new();
        };
        self.tag("scan");
        self.tag("scan:cumulative");
        let t = if mat.elem == Scalar::F32 {
            Scalar::F32
        } else {
            self.pick(&[Scalar::I32, Scalar::U32, Scalar::I32, Scalar::U16])
        };
        let f = self.pick(&[
            "parac_prefix_sum",
            "parac_prefix_sum",
            "parac_prefix_max",
            "parac_prefix_min",
        ]);
        let v = match self.n(3) {
            0 => format!("{}[i] * 3", mat.name),
            1 if mat.elem != Scalar::F32 => format!("{}[i] as i32 - 1", mat.name),
            _ => format!("{}[i]", mat.name),
        };
        let name = self.fresh("b");
        let it = self.pick(&["c", "cdf", "s"]);
        self.mats.push(Mat {
            name: name.clone(),
            elem: t,
            kind: Kind::Local,
            dims: vec![lit(l)],
            axes: vec![Axis::Table],
            written: true,
        });
        format!(
            "let {name}: {t}[{l}];\nparac_iterator {it}(i in 0:{l}:1) {{\n    {name}[i] = {f}({v}, i);\n}}"
        )
    }
}
