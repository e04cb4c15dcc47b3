//! Bounds inference at run time: the code `parac!` emits builds one [`Iv`] per subscript of each
//! access the host proves (see `parac_core::codegen::safety`), with the call's sizes and host
//! scalars, and calls [`check_access`] before the region runs: an access whose interval is not
//! inside its matrix is an [`Error::OutOfBounds`] before anything is launched, on every path.

pub use parac_core::bounds::{CTy, Iv};

use crate::Error;

/// Checks that an access whose subscripts take the values `subs` stays inside a matrix of
/// shape `shape`: else the [`Error::OutOfBounds`] of its first dimension that leaves it, with the
/// first index outside.
pub fn check_access(
    function: &'static str,
    region: &'static str,
    what: &'static str,
    matrix: &'static str,
    subs: &[Iv],
    shape: &[i64],
) -> Result<(), Error> {
    if subs.iter().any(|s| s.is_empty()) {
        return Ok(());
    }
    for (k, (s, d)) in subs.iter().zip(shape).enumerate() {
        if s.lo < 0 || s.hi >= *d as i128 {
            let mut index: Vec<i64> = subs
                .iter()
                .map(|s| s.lo.clamp(i64::MIN as i128, i64::MAX as i128) as i64)
                .collect();
            index[k] =
                if s.lo < 0 { s.lo } else { s.hi }.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
            return Err(Error::OutOfBounds {
                function,
                region,
                what,
                matrix,
                index,
                shape: shape.iter().map(|d| (*d).max(0) as usize).collect(),
            });
        }
    }
    Ok(())
}

/// Checks the lengths of an access's windows where one is a host expression
/// (`parac_core::codegen::safety::host_lens`): else [`Error::WindowLength`].
pub fn check_lens(
    function: &'static str,
    region: &'static str,
    matrix: &'static str,
    lens: &[i64],
) -> Result<(), Error> {
    if parac_core::codegen::safety::lens_ok(lens) {
        return Ok(());
    }
    Err(Error::WindowLength {
        function,
        region,
        matrix,
        lens: lens.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accesses_outside_are_errors() {
        let x = Iv::var(0, 10, 1);
        assert!(check_access("f", "r", "read of", "m", &[x], &[10]).is_ok());
        let e = check_access("f", "r", "read of", "m", &[x], &[9]).unwrap_err();
        assert!(matches!(e, Error::OutOfBounds { ref index, .. } if index == &[9]));
        assert!(check_access("f", "r", "read of", "m", &[Iv::var(3, 3, 1)], &[0]).is_ok());
    }
}
