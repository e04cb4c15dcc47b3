//! Diagnostics: every error the compiler reports, with the span of the offending tokens.
//!
//! Errors are collected, never panicked: each pass pushes into a [`Diagnostics`] list and goes
//! on, so the user sees every independent mistake at once.

use proc_macro2::Span;
use std::fmt::Write as _;

/// A source range: the first and the last token of the offending construct.
#[derive(Clone, Copy, Debug)]
pub struct Sp {
    /// The span of the first token.
    pub lo: Span,
    /// The span of the last token.
    pub hi: Span,
}

impl Sp {
    /// A range covering one token.
    pub fn one(span: Span) -> Sp {
        Sp { lo: span, hi: span }
    }

    /// A range from the start of `self` to the end of `other`.
    pub fn to(self, other: Sp) -> Sp {
        Sp {
            lo: self.lo,
            hi: other.hi,
        }
    }

    /// A placeholder range for synthesized constructs.
    pub fn call_site() -> Sp {
        Sp::one(Span::call_site())
    }
}

impl From<Span> for Sp {
    fn from(span: Span) -> Sp {
        Sp::one(span)
    }
}

/// One error, written for the user: what is wrong, and how to fix it.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// Where.
    pub span: Sp,
    /// What is wrong (first line) and, after a newline, how to fix it.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic at `span`.
    pub fn new(span: impl Into<Sp>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            span: span.into(),
            message: message.into(),
        }
    }

    /// Adds a `help:` line.
    pub fn help(mut self, help: impl AsRef<str>) -> Diagnostic {
        let _ = write!(self.message, "\nhelp: {}", help.as_ref());
        self
    }

    /// Renders the diagnostic against the source it was parsed from (`line:col: message` and
    /// the source line with a caret), for the CLI and the golden tests.
    pub fn render(&self, file: &str, source: &str) -> String {
        let lo = self.span.lo.start();
        let hi = self.span.hi.end();
        let mut out = format!(
            "error: {}\n  --> {}:{}:{}\n",
            self.message,
            file,
            lo.line,
            lo.column + 1
        );
        if let Some(text) = source.lines().nth(lo.line.saturating_sub(1)) {
            let width = if hi.line == lo.line && hi.column > lo.column {
                hi.column - lo.column
            } else {
                text.chars().count().saturating_sub(lo.column).max(1)
            };
            let _ = writeln!(out, "   | {text}");
            let _ = writeln!(out, "   | {}{}", " ".repeat(lo.column), "^".repeat(width));
        }
        out
    }
}

impl From<syn::Error> for Diagnostic {
    fn from(e: syn::Error) -> Diagnostic {
        Diagnostic::new(e.span(), e.to_string())
    }
}

/// The list every pass reports into.
#[derive(Default, Debug)]
pub struct Diagnostics {
    list: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Records one error.
    pub fn push(&mut self, d: Diagnostic) {
        self.list.push(d);
    }

    /// Records one error at `span`.
    pub fn error(&mut self, span: impl Into<Sp>, message: impl Into<String>) {
        self.push(Diagnostic::new(span, message));
    }

    /// Records every error of a `syn::Error` (which may hold several).
    pub fn syn(&mut self, e: syn::Error) {
        for one in e {
            self.push(one.into());
        }
    }

    /// True if no error was recorded.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// How many errors were recorded.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// The errors, in the order they were found.
    pub fn into_vec(self) -> Vec<Diagnostic> {
        self.list
    }
}
