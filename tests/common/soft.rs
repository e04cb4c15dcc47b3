//! Soft assertions: run every check of a test and fail once at the end with all the failures, so
//! one wrong output does not hide the state of the others. The comparisons are those of
//! [`check`](super::check) ([`first_difference`], [`max_abs_diff`]) with the same messages as
//! its `assert_same` and `assert_close`; nothing panics before [`Failures::finish`] (a panic per
//! failure would also print a backtrace each time under `RUST_BACKTRACE=1`, which is slow).

#![allow(dead_code)]

use parac::{Element, Matrix};

use super::check::{first_difference, max_abs_diff};

/// How many failures [`Failures::finish`] lists.
pub const SHOWN: usize = 40;

/// The failures collected so far.
#[derive(Debug, Default)]
pub struct Failures {
    messages: Vec<String>,
    checks: usize,
}

impl Failures {
    /// An empty collection.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a failure.
    pub fn fail(&mut self, message: impl Into<String>) {
        self.checks += 1;
        self.messages.push(message.into());
    }

    /// Records a check: a failure with `message()` unless `ok`.
    pub fn expect(&mut self, ok: bool, message: impl FnOnce() -> String) {
        self.checks += 1;
        if !ok {
            self.messages.push(message());
        }
    }

    /// Bit-exact equality (shape and every element), as `check::assert_same`.
    pub fn same<T: Element>(&mut self, what: &str, got: &Matrix<T>, want: &Matrix<T>) {
        self.checks += 1;
        if got.shape() != want.shape() {
            self.messages.push(format!(
                "{what}: shape {:?}, expected {:?}",
                got.shape(),
                want.shape()
            ));
        } else if let Some((count, idx, g, w)) = first_difference(got, want) {
            self.messages.push(format!(
                "{what}: {count} of {} elements differ; first at {idx:?}: got {g:?}, expected {w:?}",
                got.len()
            ));
        }
    }

    /// Equal shapes and `max |got - want| <= tol`, as `check::assert_close`.
    pub fn close(&mut self, what: &str, got: &Matrix<f32>, want: &Matrix<f32>, tol: f64) {
        self.checks += 1;
        if got.shape() != want.shape() {
            self.messages.push(format!(
                "{what}: shape {:?}, expected {:?}",
                got.shape(),
                want.shape()
            ));
        } else if let Some((d, idx)) = max_abs_diff(got, want)
            && d > tol
        {
            self.messages.push(format!(
                "{what}: max |difference| {d:e} > {tol:e} at {idx:?}: got {}, expected {}",
                got.get(&idx),
                want.get(&idx)
            ));
        }
    }

    /// How many checks failed so far.
    pub fn count(&self) -> usize {
        self.messages.len()
    }

    /// Panics with the failures (one per line, the first [`SHOWN`] of them) if there was any.
    #[track_caller]
    pub fn finish(self) {
        let n = self.messages.len();
        if n > 0 {
            let more = if n > SHOWN {
                format!("\n  ... and {} more", n - SHOWN)
            } else {
                String::new()
            };
            panic!(
                "{n} of {} checks failed:\n  {}{more}",
                self.checks,
                self.messages[..n.min(SHOWN)].join("\n  ")
            );
        }
    }
}
