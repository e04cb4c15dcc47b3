//! Placeholder while the benches are written.
fn main() {}
