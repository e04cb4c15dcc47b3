//! Programs the compiler must reject ([`super::Reject`]), for the generator of `mod.rs`: one
//! statement in an iterator that reduces into bins (`reduce.rs`) that `docs/language.md`
//! ("Reductions into shared elements: histograms", "Prefix sums") rules out: a plain store at
//! a place from data of a value that is no constant, a read of the bins besides their updates,
//! a second operator, an operator that is no reduction (`*=`, a float `max`, a float value
//! into integer bins), a read at a place from data of what the iterator writes, a prefix
//! under an `if`, a store at an element every iteration writes. With it, the error expected
//! and a valid statement for the program's twin.

use super::*;

impl G<'_> {
    /// Appends the statement that makes the program one the compiler must reject, with the
    /// error expected and a valid statement for its twin ([`super::Reject`]).
    pub(super) fn reject_line(&mut self, kx: &mut Kx, lines: &mut Vec<String>) {
        self.tag("reject");
        let h = kx.hists[0].clone();
        let mat = self.mats[h.mat].clone();
        let name = mat.name.clone();
        let float = mat.elem == Scalar::F32;
        let lv = format!("{name}{}", self.bin_subs(kx, h.mat, true));
        let first: String = mat.dims.iter().map(|_| "[0]").collect();
        let shared = format!("may write the same element of `{name}`");
        let reduced = format!("`{name}` is reduced into by");
        let mut good = self.update_line(kx, 0);
        let (bad, error) = match self.n(8) {
            1 => {
                self.tag("reject:read");
                let op = h.op.compound().unwrap_or("+=");
                (format!("{lv} {op} {name}{first};"), reduced)
            }
            2 => {
                self.tag("reject:two_operators");
                let ops: Vec<&str> = ["+=", "-=", "|=", "&=", "^="]
                    .into_iter()
                    .filter(|o| Some(*o) != h.op.compound() && (!float || *o != "|="))
                    .filter(|o| !float || matches!(*o, "+=" | "-="))
                    .collect();
                let op = self.pick(&ops);
                (format!("{lv} {op} 1;"), reduced)
            }
            3 => {
                self.tag("reject:product");
                (format!("{lv} *= 2;"), shared)
            }
            4 if float => {
                self.tag("reject:float_max");
                (format!("{lv} = max({lv}, 0.5);"), shared)
            }
            4 => {
                self.tag("reject:float_value");
                let (d, _, _) = self.bin_data(kx);
                (format!("{lv} += {d} as f32 * 0.5;"), shared)
            }
            5 if kx.seen.is_some() => {
                self.tag("reject:read_at_data");
                let s = kx.seen.clone().expect("seen");
                let seen = self.mats[s.mat].name.clone();
                let at = self.bin_subs(kx, s.mat, true);
                let v = self.fresh("v");
                good = format!("let {v} = 0;");
                (
                    format!("let {v} = {seen}{at};"),
                    format!("`{seen}` is read at a place from data"),
                )
            }
            6 if h.op.compound().is_some() => {
                self.tag("reject:prefix_under_if");
                let op = h.op.compound().expect("compound");
                let var = kx
                    .slots
                    .iter()
                    .flatten()
                    .map(|s| s.var.clone())
                    .next()
                    .expect("a slot");
                let cond = self.kbool(kx, 1).t;
                let e = self.kexpr(kx, Want::Int, 1).t;
                good = format!("if {cond} {{ {lv} {op} {e}; }}");
                (
                    format!("if {cond} {{ {lv} {op} parac_prefix_sum({e}, {var}); }}"),
                    "a prefix is computed at every point".to_string(),
                )
            }
            7 => {
                self.tag("reject:one_element");
                let (d, _, _) = self.bin_data(kx);
                (
                    format!("{name}{first} = {d} + 1;"),
                    "write the same element".to_string(),
                )
            }
            _ => {
                self.tag("reject:store");
                let (d, _, _) = self.bin_data(kx);
                (format!("{lv} = {d} + 1;"), shared)
            }
        };
        lines.push(bad.clone());
        self.reject = Some((error, bad, good));
    }
}
