//! The standard border modes (the shorthands `constant`, `replicate`/`clamp`, `reflect`,
//! `reflect101`, `wrap`): what index a read outside a dimension of any size takes, exactly as
//! OpenCV's `borderInterpolate` defines it (reflecting or wrapping again until the index lands
//! inside, so a window larger than the image is well defined). The interpreter reads through
//! [`BorderMode::index`]; the LIR lowering builds the same map as expressions.

use super::{Expr, Function, MatrixId, Region};

/// A standard border mode.
#[derive(Debug, Clone)]
pub enum BorderMode {
    /// Outside: the value (a scalar that does not read the matrix).
    Constant(Expr),
    /// `aaa|abcd|ddd` (also written `clamp`).
    Replicate,
    /// `cba|abcd|dcb`.
    Reflect,
    /// `dcb|abcd|cba`.
    Reflect101,
    /// `bcd|abcd|abc`.
    Wrap,
}

/// A rule written as a shorthand: its mode over one matrix, a width per dimension (`None`: no
/// border in that dimension). Its entries are still listed in [`super::BorderRule::entries`] for
/// the checks and the analysis; reads lower through the mode, per dimension.
#[derive(Debug, Clone)]
pub struct Shorthand {
    /// As written, e.g. `reflect101(src[2][2])`.
    pub text: String,
    /// The matrix it extends.
    pub matrix: MatrixId,
    /// The mode.
    pub mode: BorderMode,
    /// The width of each dimension (`None`: not bordered).
    pub widths: Vec<Option<u32>>,
}

impl BorderMode {
    /// The index read for index `i` of a bordered dimension of size `s`: `i` itself inside;
    /// `None` outside where the mode reads no element (`constant`: its value) or there is no
    /// element to read (`s == 0`).
    pub fn index(&self, i: i64, s: i64) -> Option<i64> {
        if (0..s).contains(&i) {
            return Some(i);
        }
        match self {
            BorderMode::Constant(_) => None,
            _ if s <= 0 => None,
            BorderMode::Replicate => Some(i.clamp(0, s - 1)),
            BorderMode::Wrap => Some(i.rem_euclid(s)),
            BorderMode::Reflect => {
                let q = i.rem_euclid(2 * s);
                Some(if q < s { q } else { 2 * s - 1 - q })
            }
            BorderMode::Reflect101 if s == 1 => Some(0),
            BorderMode::Reflect101 => {
                let p = 2 * s - 2;
                let q = i.rem_euclid(p);
                Some(if q < s { q } else { p - q })
            }
        }
    }
}

impl Function {
    /// The shorthand that extends matrix `m` in region `r`, where it is the only rule in force
    /// for `m` (reads then lower through its mode; otherwise through the rules' entries).
    pub fn shorthand_for(&self, r: &Region, m: MatrixId) -> Option<&Shorthand> {
        let mut rules = r
            .rules
            .iter()
            .map(|id| &self.rules[*id])
            .filter(|rule| rule.entries.iter().any(|e| e.matrix == m));
        let first = rules.next()?;
        if rules.next().is_some() {
            return None;
        }
        first.shorthand.as_ref().filter(|s| s.matrix == m)
    }
}

#[cfg(test)]
mod tests {
    use super::BorderMode::*;

    /// OpenCV's `borderInterpolate`, iterated as OpenCV writes it.
    fn opencv(mode: &super::BorderMode, mut p: i64, len: i64) -> i64 {
        if (0..len).contains(&p) {
            return p;
        }
        match mode {
            Replicate => p.clamp(0, len - 1),
            Wrap => p.rem_euclid(len),
            Reflect | Reflect101 => {
                if len == 1 {
                    return 0;
                }
                let d = i64::from(matches!(mode, Reflect101));
                while !(0..len).contains(&p) {
                    p = if p < 0 {
                        -p - 1 + d
                    } else {
                        2 * len - p - 1 - d
                    };
                }
                p
            }
            Constant(_) => unreachable!(),
        }
    }

    #[test]
    fn modes_match_opencv_on_every_small_size() {
        for mode in [Replicate, Wrap, Reflect, Reflect101] {
            for len in 1..9 {
                for p in -40..40 {
                    assert_eq!(
                        mode.index(p, len),
                        Some(opencv(&mode, p, len)),
                        "{mode:?} {p} {len}"
                    );
                }
            }
        }
    }
}
