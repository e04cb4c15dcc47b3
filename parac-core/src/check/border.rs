//! The paper's static border check: every read outside a matrix is covered by a border rule of
//! the iterator, at least as wide as the widest out-of-image access; border values read only
//! positions inside the image.

use super::eval::{Val, eval};
use super::sample::{Sample, Scale};
use crate::diag::Diagnostics;
use crate::ir::*;
use crate::lower::target_text;

/// A corner an access reaches: the matrix, (side, depth) for rows and columns, the access.
type CornerNeed = (MatrixId, [(Side, u32); 2], AccessId);

/// Which side of a dimension.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    Before,
    After,
}

fn sel(side: Side, k: u32) -> Sel {
    match side {
        Side::Before => Sel::Before(k),
        Side::After => Sel::After(k),
    }
}

/// "2 columns left of", "1 row below", for messages.
fn side_text(nd: usize, d: usize, side: Side, k: u32) -> String {
    let s = if k == 1 { "" } else { "s" };
    let (unit, before, after) = if nd >= 2 && d == nd - 2 {
        ("row", "above the first row", "below the last row")
    } else if nd >= 2 || d == nd - 1 {
        (
            "column",
            "left of the first column",
            "right of the last column",
        )
    } else {
        ("element", "before the first", "after the last")
    };
    let unit = if nd == 1 { "element" } else { unit };
    format!(
        "{k} {unit}{s} {}",
        if side == Side::Before { before } else { after }
    )
}

/// Does a rule in force define `m` at these selectors?
fn defined(f: &Function, rules: &[RuleId], m: MatrixId, sels: &[Sel]) -> bool {
    rules.iter().any(|r| {
        f.rules[*r]
            .entries
            .iter()
            .any(|e| e.matrix == m && e.sels == sels)
    })
}

/// The width the rules in force give to one side of one dimension: the largest `k` with
/// `1..=k` all defined.
fn width(f: &Function, rules: &[RuleId], m: MatrixId, nd: usize, d: usize, side: Side) -> u32 {
    let mut k = 0;
    loop {
        let mut sels = vec![Sel::Star; nd];
        sels[d] = sel(side, k + 1);
        if !defined(f, rules, m, &sels) {
            return k;
        }
        k += 1;
    }
}

/// Checks the reads of one region against its border rules.
pub fn check_region(f: &Function, r: &Region, diags: &mut Diagnostics) {
    if r.kind != RegionKind::Iterator || r.rules.iter().any(|i| f.rules[*i].incomplete) {
        return;
    }
    // The widest need per (matrix, dimension, side), with the access that needs it.
    let mut needs: Vec<(MatrixId, usize, Side, u32, AccessId)> = Vec::new();
    let mut corner_needs: Vec<CornerNeed> = Vec::new();
    for (id, a) in r.accesses.iter().enumerate() {
        let Some(Some(reach)) = r.reach.get(id) else {
            continue;
        };
        let m = &f.matrices[a.matrix];
        let nd = reach.len();
        let outside: Vec<(usize, Side, u32)> = reach
            .iter()
            .enumerate()
            .flat_map(|(d, (b, af))| [(d, Side::Before, *b), (d, Side::After, *af)])
            .filter(|(_, _, k)| *k > 0)
            .collect();
        let Some(&(d0, s0, k0)) = outside.first() else {
            continue;
        };
        if a.write || matches!(m.kind, MatrixKind::Const(_)) {
            let what = if a.write { "writes" } else { "reads" };
            let extra = if a.write {
                "border rules give values to reads only; keep writes inside the matrix"
            } else {
                "constant matrices have no border; keep the index inside"
            };
            diags.error(
                a.span,
                format!(
                    "this access {what} outside `{}`: up to {}\nhelp: {extra}",
                    m.name,
                    side_text(nd, d0, s0, k0)
                ),
            );
            continue;
        }
        for &(d, side, k) in &outside {
            match needs
                .iter_mut()
                .find(|n| n.0 == a.matrix && n.1 == d && n.2 == side)
            {
                Some(n) if n.3 >= k => {}
                Some(n) => {
                    n.3 = k;
                    n.4 = id;
                }
                None => needs.push((a.matrix, d, side, k, id)),
            }
        }
        // An access outside in two planar dimensions reaches a corner.
        if nd >= 2 {
            let (dr, dc) = (nd - 2, nd - 1);
            for (sr, kr) in [(Side::Before, reach[dr].0), (Side::After, reach[dr].1)] {
                for (sc, kc) in [(Side::Before, reach[dc].0), (Side::After, reach[dc].1)] {
                    if kr > 0 && kc > 0 {
                        match corner_needs
                            .iter_mut()
                            .find(|c| c.0 == a.matrix && c.1[0].0 == sr && c.1[1].0 == sc)
                        {
                            Some(c) => {
                                c.1[0].1 = c.1[0].1.max(kr);
                                c.1[1].1 = c.1[1].1.max(kc);
                            }
                            None => corner_needs.push((a.matrix, [(sr, kr), (sc, kc)], id)),
                        }
                    }
                }
            }
        }
    }
    let rule_names: Vec<&str> = r.rules.iter().map(|i| f.rules[*i].name.as_str()).collect();
    let mut side_missing = false;
    for (m, d, side, need, id) in needs {
        let mat = &f.matrices[m];
        let nd = mat.dims.len();
        let have = width(f, &r.rules, m, nd, d, side);
        if have >= need {
            continue;
        }
        side_missing = true;
        let a = &r.accesses[id];
        if need > 16 {
            diags.error(
                r.accesses[id].span,
                format!(
                    "`{}` is read up to {} here, further than any border rule reaches (16)\nhelp: keep the index within a few rows or columns of the image",
                    mat.name,
                    side_text(nd, d, side, need)
                ),
            );
            continue;
        }
        // The entries to add (the first few, if many are missing).
        let mut missing = Vec::new();
        for k in have + 1..=need.min(have + 3) {
            let mut sels = vec![Sel::Star; nd];
            sels[d] = sel(side, k);
            missing.push(format!("`{} = ...;`", target_text(&mat.name, &sels)));
        }
        if need > have + 3 {
            missing.push(format!("the others up to {need}"));
        }
        let msg = if have == 0 {
            let by = if rule_names.is_empty() {
                format!("iterator `{}` applies no border rule", r.name)
            } else {
                format!(
                    "no border rule of iterator `{}` ({}) defines that side",
                    r.name,
                    rule_names.join(", ")
                )
            };
            format!(
                "`{}` is read up to {} here, but {by}\nhelp: define {} in a rule and apply it with `parac_border_rule(..)`, or use a standard mode such as `parac_border_rule b = replicate({}{});`",
                mat.name,
                side_text(nd, d, side, need),
                missing.join(" and "),
                mat.name,
                (0..nd)
                    .map(|i| if i == d {
                        format!("[{need}]")
                    } else {
                        "[*]".to_string()
                    })
                    .collect::<String>()
            )
        } else {
            format!(
                "border rule too narrow: `{}` is read up to {} here, but the rules of `{}` define only {}; a width of {need} is needed\nhelp: add {}",
                mat.name,
                side_text(nd, d, side, need),
                r.name,
                have,
                missing.join(" and ")
            )
        };
        diags.error(a.span, msg);
    }
    if side_missing {
        return;
    }
    for (m, [(sr, kr), (sc, kc)], id) in corner_needs {
        if kr > 16 || kc > 16 {
            continue;
        }
        let mat = &f.matrices[m];
        let nd = mat.dims.len();
        let mut missing = None;
        'find: for i in 1..=kr {
            for j in 1..=kc {
                let mut sels = vec![Sel::Star; nd];
                sels[nd - 2] = sel(sr, i);
                sels[nd - 1] = sel(sc, j);
                if !defined(f, &r.rules, m, &sels) {
                    missing = Some(sels);
                    break 'find;
                }
            }
        }
        if let Some(sels) = missing {
            diags.error(
                r.accesses[id].span,
                format!(
                    "`{}` is read outside a corner here (up to {} and {}), but no border rule of `{}` defines `{}`\nhelp: add corner values such as `{} = ...;` (a border value cannot be computed from another border value, so corners are explicit), or use a standard mode such as `replicate({}[{kr}][{kc}])`",
                    mat.name,
                    side_text(nd, nd - 2, sr, kr),
                    side_text(nd, nd - 1, sc, kc),
                    r.name,
                    target_text(&mat.name, &sels),
                    target_text(&mat.name, &sels),
                    mat.name
                ),
            );
        }
    }
}

/// Border values may read only positions inside the image; and one iterator must not get two
/// values for one position.
pub fn check_rule_values(f: &Function, samples: &[Sample], diags: &mut Diagnostics) {
    // A shorthand's reads go through its mode, defined for any index and any size.
    for rule in f.rules.iter().filter(|r| r.shorthand.is_none()) {
        for e in &rule.entries {
            let mat = &f.matrices[e.matrix];
            'acc: for a in &e.accesses {
                for s in samples.iter().filter(|s| s.scale == Scale::Small) {
                    let dims: Vec<Option<i64>> = mat
                        .dims
                        .iter()
                        .map(|d| eval(d, &s.env).and_then(Val::int))
                        .collect();
                    for (d, sub) in a.subs.iter().enumerate() {
                        let Sub::Point(ix) = sub else { continue };
                        let (Some(v), Some(size)) = (eval(ix, &s.env).and_then(Val::int), dims[d])
                        else {
                            continue;
                        };
                        if v < 0 || v >= size {
                            diags.error(
                                a.span,
                                format!(
                                    "a border value depends on another border value: the value of `{}` reads index {v} of dimension {d}, outside `{}` (with {})\nhelp: border values are computed from positions inside the image (0 to size-1) and constants",
                                    target_text(&mat.name, &e.sels),
                                    mat.name,
                                    s.label(f)
                                ),
                            );
                            break 'acc;
                        }
                    }
                }
            }
        }
    }
    for r in &f.regions {
        for (i, a) in r.rules.iter().enumerate() {
            for b in &r.rules[i + 1..] {
                for e in &f.rules[*a].entries {
                    if f.rules[*b]
                        .entries
                        .iter()
                        .any(|x| x.matrix == e.matrix && x.sels == e.sels)
                    {
                        diags.error(
                            r.span,
                            format!(
                                "border rules `{}` and `{}` both define `{}` for iterator `{}`; the value would be ambiguous",
                                f.rules[*a].name,
                                f.rules[*b].name,
                                target_text(&f.matrices[e.matrix].name, &e.sels),
                                r.name
                            ),
                        );
                        return;
                    }
                }
            }
        }
    }
}
