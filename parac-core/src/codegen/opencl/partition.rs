//! Loop partitioning for border rules (the `split` plan): which iterations of a region read
//! nothing outside their matrices, as bounds the host evaluates at run time.
//!
//! A bordered read (a read of a matrix a border rule of the region extends) stays inside its
//! matrix when each subscript `s`, of affine form `coef * v + offset` in one iteration variable
//! `v` (a window `start..start + extent`), satisfies `0 <= s` and `s + extent <= dim - 1`. Each
//! such pair is one [`Bound`]; their intersection over every bordered read is the interior box
//! (`parac::opencl::interior` computes it from the sizes of the call). A region has bounds when
//! it has bordered reads and every subscript of every one of them is affine in at most one
//! iteration variable with offsets independent of the sizes; otherwise it is not partitioned.

use super::*;

/// One subscript of one bordered read: `0 <= coef * v + offset` and
/// `coef * v + offset + extent <= dim(matrix, k) - 1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bound {
    /// The OpenCL dimension of `v` (0: the innermost iteration slot), `None` when the subscript
    /// is a constant.
    pub cl: Option<usize>,
    /// The coefficient of `v`.
    pub coef: i64,
    /// The constant offset.
    pub offset: i64,
    /// The window's length minus one (0 for a point).
    pub extent: i64,
    /// The matrix read.
    pub matrix: MatrixId,
    /// The matrix dimension the subscript indexes.
    pub k: usize,
}

/// The bounds of region `rid`, or `None` if it has no bordered read or one it cannot bound.
pub fn bounds(f: &Function, rid: RegionId) -> Option<Vec<Bound>> {
    let r = &f.regions[rid];
    if !matches!(r.kind, RegionKind::Iterator) {
        return None;
    }
    let slots = cl_slots(r);
    let mut aff = None;
    let mut out: Vec<Bound> = Vec::new();
    for (a, acc) in r.accesses.iter().enumerate() {
        if !bordered(f, r, a) {
            continue;
        }
        let aff = aff.get_or_insert_with(|| variant::affs(f, r));
        for (k, s) in acc.subs.iter().enumerate() {
            let extent = match s {
                Sub::Point(_) => 0,
                Sub::Window { len, stride, .. } => (*len as i64 - 1) * stride,
                Sub::Star => return None,
            };
            let form = aff[a][k].as_ref()?;
            let vars: Vec<usize> = (0..form.coefs.len())
                .filter(|s| form.coefs[*s] != 0)
                .collect();
            let (cl, coef) = match vars.as_slice() {
                [] => (None, 0),
                [s] => (Some(slots.iter().position(|x| x == s)?), form.coefs[*s]),
                _ => return None,
            };
            let b = Bound {
                cl,
                coef,
                offset: form.offset,
                extent,
                matrix: acc.matrix,
                k,
            };
            if !out.contains(&b) {
                out.push(b);
            }
        }
    }
    (!out.is_empty()).then_some(out)
}
