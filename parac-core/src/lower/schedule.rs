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

    /// `parac_schedule(fuse = 0 | 1, inline = 0 | 1, fold = 0 | 1)` of an iterator: whether it
    /// may be computed in its consumer's tasks (1, the default: where legal; 0: never), whether
    /// at each of its readers' reads (1: on the CPU path wherever legal; 0: never; not given:
    /// the compiler's choice), and whether its tasks' buffers are folded to rings (not given:
    /// the compiler's). A `1` that another item rules out is an error at its name.
    pub(super) fn iterator_schedule(
        &mut self,
        items: &Items,
    ) -> (bool, Option<bool>, Option<bool>) {
        let [fuse, inline, fold] = self.schedule(
            items,
            [("fuse", FLAG), ("inline", FLAG), ("fold", FLAG)],
            ("parac_iterator", "`fuse = 0` (this stage stored whole, never computed in its consumer's tasks; `fuse = 1`, the default: fused where legal), `inline = 0 | 1` (never / always computed at each read of its readers; not given: where cheap) or `fold = 0 | 1` (its rows in its consumer's tasks kept in a ring of the rows still needed: a sliding window; not given: not)"),
        );
        let clash = |name: &str, other: &str| {
            items
                .iter()
                .find(|(n, _)| n == name)
                .map(|(n, _)| (n.span(), format!("`{name} = 1` contradicts `{other}`")))
        };
        let clashes = [
            ((inline, fuse) == (Some(1), Some(0)), "inline", "fuse = 0"),
            ((fold, fuse) == (Some(1), Some(0)), "fold", "fuse = 0"),
            ((fold, inline) == (Some(1), Some(1)), "fold", "inline = 1"),
        ];
        for (hit, name, other) in clashes {
            if let Some((span, msg)) = clash(name, other).filter(|_| hit) {
                self.err(span, msg);
            }
        }
        (
            fuse != Some(0),
            inline.map(|v| v == 1),
            fold.map(|v| v == 1),
        )
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
