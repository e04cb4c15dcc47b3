//! One namer for the identifiers a printer generates (the model is naga's `proc/namer.rs`).
//!
//! A printer first registers every name it does not choose freely: the target language's
//! reserved words and built-ins, then the program-scope names (helpers, constants, kernels)
//! and the names of the function's own entities (matrices, sizes, scalars, index variables,
//! locals) as it spells them. Every generated local then comes from [`Namer::call`], which
//! hands out a name nothing registered holds, so a generated local can never shadow another
//! name, by construction, and no printer keeps number ranges apart by hand.
//!
//! A namer is cheap to clone: a printer keeps one per scope (a program's, then one per kernel
//! or function started from it).

use std::collections::{HashMap, HashSet};

/// Hands out unique identifiers.
#[derive(Clone, Debug, Default)]
pub struct Namer {
    /// Every name registered or handed out.
    used: HashSet<String>,
    /// Per base of [`Namer::call`], the next number to try.
    next: HashMap<String, u32>,
}

impl Namer {
    /// A namer where `reserved` (keywords, built-ins) are taken.
    pub fn new(reserved: &[&str]) -> Namer {
        let mut n = Namer::default();
        for w in reserved {
            n.reserve(w);
        }
        n
    }

    /// Registers `name` as taken (a name the printer spells itself); false if it already was.
    pub fn reserve(&mut self, name: &str) -> bool {
        self.used.insert(name.to_string())
    }

    /// Whether `name` is registered or was handed out.
    pub fn is_used(&self, name: &str) -> bool {
        self.used.contains(name)
    }

    /// A fresh name `<base><n>`: the smallest `n` from the last one handed out for `base` whose
    /// name is not taken (so `t0`, `t1`, ... skipping any registered).
    pub fn call(&mut self, base: &str) -> String {
        let n = self.next.entry(base.to_string()).or_insert(0);
        loop {
            let name = format!("{base}{n}");
            *n += 1;
            if self.used.insert(name.clone()) {
                return name;
            }
        }
    }

    /// A name for a user's identifier `label`: the label made an identifier (characters other
    /// than ASCII letters, digits and `_` become `_`; a leading digit gets a `_` before it),
    /// itself if free, else with `_<n>` appended.
    pub fn call_user(&mut self, label: &str) -> String {
        let mut base: String = label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            base.insert(0, '_');
        }
        if self.used.insert(base.clone()) {
            return base;
        }
        self.call(&format!("{base}_"))
    }
}

#[cfg(test)]
mod tests {
    use super::Namer;

    #[test]
    fn generated_names_skip_every_registered_name() {
        let mut n = Namer::new(&["int", "t1"]);
        assert!(n.reserve("c3"));
        assert!(!n.reserve("int"));
        assert_eq!(n.call("t"), "t0");
        assert_eq!(n.call("t"), "t2");
        let c: Vec<String> = (0..5).map(|_| n.call("c")).collect();
        assert_eq!(c, ["c0", "c1", "c2", "c4", "c5"]);
        assert!(n.is_used("c4") && n.is_used("t2") && !n.is_used("t3"));
        // A clone continues from where its parent was, and parents do not see its names.
        let mut k = n.clone();
        assert_eq!(k.call("t"), "t3");
        assert_eq!(n.call("t"), "t3");
    }

    #[test]
    fn user_names_are_identifiers_and_unique() {
        let mut n = Namer::new(&["int"]);
        assert_eq!(n.call_user("sobel"), "sobel");
        assert_eq!(n.call_user("sobel"), "sobel_0");
        assert_eq!(n.call_user("int"), "int_0");
        assert_eq!(n.call_user("3x"), "_3x");
        assert_eq!(n.call_user("a-b"), "a_b");
        assert_eq!(n.call_user(""), "_");
    }
}
