//! `parac_schedule(name = value, ..)`: the directives of a `parac_repeat` (time tiling) and of
//! a `parac_iterator` (fusion), checked in one place.

use super::{Lowerer, const_int};
use crate::ir::RepeatSchedule;
use crate::syntax::ast;

/// A directive's items: each name with its value.
type Items = [(proc_macro2::Ident, ast::Expr)];

impl Lowerer<'_> {
    /// `parac_schedule(band = K, rows = R)` of a repeat: positive integer constants to 1024.
    pub(super) fn repeat_schedule(&mut self, items: &Items) -> RepeatSchedule {
        let [band, rows] = self.schedule(
            items,
            ["band", "rows"],
            ("parac_repeat", "`band = K` (time steps per band of the CPU path's time tiling, 1: step by step) or `rows = R` (rows of a band's task)"),
            (|v| (1..=1024).contains(&v), "an integer constant from 1 to 1024"),
        );
        RepeatSchedule { band, rows }
    }

    /// `parac_schedule(fuse = 0 | 1)` of an iterator: whether the CPU path may compute it in
    /// its consumer's tasks (1, the default: where legal; 0: never).
    pub(super) fn iterator_schedule(&mut self, items: &Items) -> bool {
        let [fuse] = self.schedule(
            items,
            ["fuse"],
            ("parac_iterator", "`fuse = 0` (the CPU path stores this stage whole, never computing it in its consumer's tasks) or `fuse = 1` (the default: fused where legal)"),
            (|v| v == 0 || v == 1, "0 or 1"),
        );
        fuse != Some(0)
    }

    /// The values of a directive's items, one per accepted name in `names` (`None`: not
    /// given). An error at a name not among them (`of`: the construct; `help`: its names), at
    /// a name given twice, and at a value that is not an integer constant `valid` accepts
    /// (`want`: what it must be).
    fn schedule<const N: usize>(
        &mut self,
        items: &Items,
        names: [&str; N],
        (of, help): (&str, &str),
        (valid, want): (impl Fn(i64) -> bool, &str),
    ) -> [Option<i64>; N] {
        let mut out = [None; N];
        for (name, e) in items {
            let Some(slot) = names.iter().position(|n| name == n) else {
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
            match const_int(e) {
                Some(v) if valid(v) => out[slot] = Some(v),
                _ => self.err(e.span, format!("`{name}` must be {want}")),
            }
        }
        out
    }
}
