//! Loop partitioning for border rules: the interior box of a region (the iterations whose
//! bordered reads are all inside their matrices), computed from the bounds the compiler derived
//! and the sizes of the call, and the strips around it, which the baseline kernel runs.

use std::ops::Range;

/// One subscript of one bordered read, as the compiler derives it (`coef * v + offset`, a
/// window of `extent + 1` elements from there, inside dimension `k` of `matrix`).
pub use parac_core::codegen::opencl::Bound;

/// The interior box, in iteration indices per OpenCL dimension: `counts[d]` iterations along
/// dimension `d`, the variable of the `t`-th being `starts[d].0 + t * starts[d].1` (start and a
/// positive step); `dims[m]` the dimensions of matrix `m` in this call. An empty range in some
/// dimension means no interior.
pub fn interior(
    counts: &[usize],
    starts: &[(i64, i64)],
    bounds: &[Bound],
    dims: &[Vec<i64>],
) -> Vec<Range<usize>> {
    let mut lo = vec![0i128; counts.len()];
    let mut hi: Vec<i128> = counts.iter().map(|c| *c as i128).collect();
    let empty = || counts.iter().map(|_| 0..0).collect();
    for b in bounds {
        let (coef, off, ext, size) = (
            b.coef as i128,
            b.offset as i128,
            b.extent as i128,
            dims[b.matrix][b.k] as i128,
        );
        let Some(d) = b.cl.filter(|d| *d < counts.len() && coef != 0) else {
            // A constant subscript: inside for every iteration or for none.
            if off < 0 || off + ext > size - 1 {
                return empty();
            }
            continue;
        };
        // 0 <= coef*v + off and coef*v + off + ext <= size - 1.
        let (vmin, vmax) = if coef > 0 {
            (ceil_div(-off, coef), floor_div(size - 1 - ext - off, coef))
        } else {
            (ceil_div(off + ext - size + 1, -coef), floor_div(off, -coef))
        };
        let (start, step) = (starts[d].0 as i128, starts[d].1.max(1) as i128);
        lo[d] = lo[d].max(ceil_div(vmin - start, step));
        hi[d] = hi[d].min(floor_div(vmax - start, step) + 1);
    }
    if lo.iter().zip(&hi).any(|(l, h)| l >= h) {
        return empty();
    }
    lo.iter()
        .zip(&hi)
        .map(|(l, h)| *l as usize..*h as usize)
        .collect()
}

fn floor_div(a: i128, b: i128) -> i128 {
    a.div_euclid(b)
}

fn ceil_div(a: i128, b: i128) -> i128 {
    -((-a).div_euclid(b))
}

/// The boxes covering `0..counts[d]` in every dimension minus `inner` (which lies inside it):
/// for each dimension `d`, the part before and after `inner[d]`, restricted to `inner` in the
/// dimensions before `d` and whole in those after, each with its `d`. Disjoint; empty boxes
/// left out.
pub fn strips(counts: &[usize], inner: &[Range<usize>]) -> Vec<(usize, Vec<Range<usize>>)> {
    let mut out = Vec::new();
    for d in 0..counts.len() {
        for side in [0..inner[d].start, inner[d].end..counts[d]] {
            if side.is_empty() {
                continue;
            }
            let b: Vec<Range<usize>> = (0..counts.len())
                .map(|e| match e.cmp(&d) {
                    std::cmp::Ordering::Less => inner[e].clone(),
                    std::cmp::Ordering::Equal => side.clone(),
                    std::cmp::Ordering::Greater => 0..counts[e],
                })
                .collect();
            if b.iter().all(|r| !r.is_empty()) {
                out.push((d, b));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: the iterations whose reads are all inside.
    fn inside(t: &[usize], starts: &[(i64, i64)], bounds: &[Bound], dims: &[Vec<i64>]) -> bool {
        bounds.iter().all(|b| {
            let v = b.cl.map_or(0, |d| starts[d].0 + t[d] as i64 * starts[d].1);
            let s = b.coef * v + b.offset;
            s >= 0 && s + b.extent < dims[b.matrix][b.k]
        })
    }

    #[test]
    fn interior_is_exactly_the_safe_box() {
        let mut seed = 7u64;
        let mut rnd = |n: i64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) as i64).rem_euclid(n)
        };
        for _ in 0..2000 {
            let counts = [rnd(12) as usize, rnd(9) as usize];
            let starts = [(rnd(5) - 2, rnd(3) + 1), (rnd(5) - 2, rnd(2) + 1)];
            let bounds: Vec<Bound> = (0..rnd(4) + 1)
                .map(|_| Bound {
                    cl: match rnd(5) {
                        0 => None,
                        x => Some((x % 2) as usize),
                    },
                    coef: [1, 2, -1, -2, 3][rnd(5) as usize],
                    offset: rnd(9) - 4,
                    extent: rnd(5),
                    matrix: rnd(2) as usize,
                    k: 0,
                })
                .collect();
            let dims = [vec![rnd(20)], vec![rnd(20)]];
            let box_ = interior(&counts, &starts, &bounds, &dims);
            for t0 in 0..counts[0] {
                for t1 in 0..counts[1] {
                    let want = inside(&[t0, t1], &starts, &bounds, &dims);
                    let got = box_[0].contains(&t0) && box_[1].contains(&t1);
                    // The box holds every safe iteration and no other.
                    assert!(
                        !got || want,
                        "{counts:?} {starts:?} {bounds:?} -> {box_:?} at {t0},{t1}"
                    );
                    if want {
                        assert!(
                            got,
                            "{counts:?} {starts:?} {bounds:?} -> {box_:?} misses {t0},{t1}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn strips_and_box_tile_the_domain() {
        for counts in [vec![7usize], vec![5, 4], vec![3, 4, 5]] {
            for lo in 0..3usize {
                for len in 0..3usize {
                    let inner: Vec<Range<usize>> = counts
                        .iter()
                        .map(|c| lo.min(*c)..(lo + len).min(*c))
                        .collect();
                    let mut hits = vec![0; counts.iter().product()];
                    let mut mark = |b: &[Range<usize>]| {
                        let mut idx = vec![0; b.len()];
                        for (p, h) in hits.iter_mut().enumerate() {
                            let mut q = p;
                            for (d, c) in counts.iter().enumerate() {
                                idx[d] = q % c;
                                q /= c;
                            }
                            if idx.iter().zip(b).all(|(i, r)| r.contains(i)) {
                                *h += 1;
                            }
                        }
                    };
                    if inner.iter().all(|r| !r.is_empty()) {
                        mark(&inner);
                        for (_, s) in strips(&counts, &inner) {
                            mark(&s);
                        }
                        assert!(hits.iter().all(|h| *h == 1), "{counts:?} {inner:?}");
                    }
                }
            }
        }
    }
}
