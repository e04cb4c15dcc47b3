//! `parac_schedule(name = value, ..)`: the directives of a `parac_repeat` (time tiling) and of
//! a `parac_iterator` (fusion), checked in one place.

use super::{Lowerer, const_int};
use crate::ir::RepeatSchedule;
use crate::syntax::ast;

/// A directive's items: each name with its value.
type Items = [(proc_macro2::Ident, ast::Expr)];

/// The values an item accepts, and what the error says it must be.
type Valid = (fn(i64) -> bool, &'static str);

/// `0` or `1`.
const FLAG: Valid = (|v| v == 0 || v == 1, "0 or 1");

/// A count of steps or rows.
const COUNT: fn(i64) -> bool = |v| (1..=1024).contains(&v);

impl Lowerer<'_> {
    /// `parac_schedule(band = K, rows = R, split = 0 | 1)` of a repeat: `K` and `R` positive
    /// integer constants to 1024.
    pub(super) fn repeat_schedule(&mut self, items: &Items) -> RepeatSchedule {
        let count = (COUNT, "an integer constant from 1 to 1024");
        let [band, rows, split] = self.schedule(
            items,
            [("band", count), ("rows", count), ("split", FLAG)],
            ("parac_repeat", "`band = K` (time steps per band of the CPU path's time tiling, 1: step by step), `rows = R` (rows of a band's task) or `split = 0 | 1` (overlapped tiles, or split tiling: no point computed twice)"),
        );
        RepeatSchedule {
            band,
            rows,
            split: split.map(|v| v == 1),
        }
    }

    /// `parac_schedule(fuse = 0 | 1, inline = 0 | 1)` of an iterator: whether it may be computed
    /// in its consumer's tasks (1, the default: where legal; 0: never), and whether at each of
    /// its readers' reads (1: on the CPU path wherever legal; 0: never; not given: the
    /// compiler's choice).
    pub(super) fn iterator_schedule(&mut self, items: &Items) -> (bool, Option<bool>) {
        let [fuse, inline] = self.schedule(
            items,
            [("fuse", FLAG), ("inline", FLAG)],
            ("parac_iterator", "`fuse = 0` (this stage stored whole, never computed in its consumer's tasks; `fuse = 1`, the default: fused where legal) or `inline = 0 | 1` (never / always computed at each read of its readers; not given: where cheap)"),
        );
        if (fuse, inline) == (Some(0), Some(1))
            && let Some((name, _)) = items.iter().find(|(n, _)| n == "inline")
        {
            self.err(
                name.span(),
                "`inline = 1` contradicts `fuse = 0` (a stage stored whole)".to_string(),
            );
        }
        (fuse != Some(0), inline.map(|v| v == 1))
    }

    /// The values of a directive's items, one per accepted name in `names` (`None`: not
    /// given). An error at a name not among them (`of`: the construct; `help`: its names), at
    /// a name given twice, and at a value that is not an integer constant its name's `valid`
    /// accepts (`want`: what it must be).
    fn schedule<const N: usize>(
        &mut self,
        items: &Items,
        names: [(&str, Valid); N],
        (of, help): (&str, &str),
    ) -> [Option<i64>; N] {
        let mut out = [None; N];
        for (name, e) in items {
            let Some(slot) = names.iter().position(|(n, _)| name == n) else {
                self.err(
                    name.span(),
                    format!("`{name}` is not a schedule of `{of}`\nhelp: {help}"),
                );
                continue;
            };
            if out[slot].is_some() {
                self.err(name.span(), format!("`{name}` is scheduled twice"));
                continue;
            }
            let (valid, want) = names[slot].1;
            match const_int(e) {
                Some(v) if valid(v) => out[slot] = Some(v),
                _ => self.err(e.span, format!("`{name}` must be {want}")),
            }
        }
        out
    }
}
