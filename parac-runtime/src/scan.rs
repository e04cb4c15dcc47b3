//! A row's inclusive scan in place (`lir::Stmt::ScanRow`): the running sum, minimum or maximum
//! of 32-bit integers from a carried value, as a prefix along a row of the CPU path runs it
//! once its values are in a row of their own. The values of one vector combine in log2(lanes)
//! shifted steps, then with the running value; the result is the same as the loop in order
//! (integer sums wrap, and an integer operator's order cannot change them). Compiled three
//! times, for AVX-512, for AVX2 and as the crate is, the run's level of vector instructions
//! chosen ([`CpuIsa`], never above the processor's).

use crate::CpuIsa;

/// A scan's operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanOp {
    /// Wrapping `+`.
    Sum,
    /// The least.
    Min,
    /// The greatest.
    Max,
}

/// An element a row scan runs on: `i32` or `u32`.
pub trait ScanLane: Copy + 'static {
    /// `a op b`.
    fn combine(op: ScanOp, a: Self, b: Self) -> Self;
    /// Whether the type is unsigned (its minimum and maximum compare so).
    const UNSIGNED: bool;
}

impl ScanLane for i32 {
    #[inline(always)]
    fn combine(op: ScanOp, a: i32, b: i32) -> i32 {
        match op {
            ScanOp::Sum => a.wrapping_add(b),
            ScanOp::Min => a.min(b),
            ScanOp::Max => a.max(b),
        }
    }
    const UNSIGNED: bool = false;
}

impl ScanLane for u32 {
    #[inline(always)]
    fn combine(op: ScanOp, a: u32, b: u32) -> u32 {
        match op {
            ScanOp::Sum => a.wrapping_add(b),
            ScanOp::Min => a.min(b),
            ScanOp::Max => a.max(b),
        }
    }
    const UNSIGNED: bool = true;
}

/// Scans `row[lo..hi]` (clamped to the row) in place from `carry`: each element becomes
/// `carry op row[lo] op ... op row[i]`. Returns the last such value (`carry` for an empty range).
pub fn scan_row<T: ScanLane>(
    isa: CpuIsa,
    row: &mut [T],
    lo: i64,
    hi: i64,
    carry: T,
    op: ScanOp,
) -> T {
    let n = row.len() as i64;
    let (lo, hi) = (lo.clamp(0, n) as usize, hi.clamp(0, n) as usize);
    if lo >= hi {
        return carry;
    }
    let row = &mut row[lo..hi];
    #[cfg(target_arch = "x86_64")]
    {
        if let Some(bits) = x86::as_bits(row) {
            let carry_bits = x86::bits_of(carry);
            let kind = x86::Kind::of::<T>(op);
            // The run's level (`CpuIsa::resolve`: never above the processor's).
            match isa.resolve() {
                CpuIsa::Avx512 if std::arch::is_x86_feature_detected!("avx512f") => {
                    // SAFETY: AVX-512F was found on this processor.
                    return x86::from_bits(unsafe { x86::scan512(bits, carry_bits, kind) });
                }
                CpuIsa::Avx512 | CpuIsa::Avx2 if std::arch::is_x86_feature_detected!("avx2") => {
                    // SAFETY: AVX2 was found on this processor.
                    return x86::from_bits(unsafe { x86::scan256(bits, carry_bits, kind) });
                }
                _ => {}
            }
        }
    }
    serial(row, carry, op)
}

/// The scan in order, one element at a time.
fn serial<T: ScanLane>(row: &mut [T], carry: T, op: ScanOp) -> T {
    let mut run = carry;
    for v in row {
        run = T::combine(op, run, *v);
        *v = run;
    }
    run
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{ScanLane, ScanOp, serial};
    use std::any::TypeId;
    use std::arch::x86_64::*;

    /// The operator and the signedness of its comparisons.
    #[derive(Clone, Copy)]
    pub(super) enum Kind {
        Sum,
        MinI,
        MaxI,
        MinU,
        MaxU,
    }

    impl Kind {
        pub(super) fn of<T: ScanLane>(op: ScanOp) -> Kind {
            match (op, T::UNSIGNED) {
                (ScanOp::Sum, _) => Kind::Sum,
                (ScanOp::Min, false) => Kind::MinI,
                (ScanOp::Max, false) => Kind::MaxI,
                (ScanOp::Min, true) => Kind::MinU,
                (ScanOp::Max, true) => Kind::MaxU,
            }
        }

        /// The operator's identity, as bits.
        fn identity(self) -> i32 {
            match self {
                Kind::Sum | Kind::MaxU => 0,
                Kind::MinI => i32::MAX,
                Kind::MaxI => i32::MIN,
                Kind::MinU => -1,
            }
        }

        fn op(self) -> ScanOp {
            match self {
                Kind::Sum => ScanOp::Sum,
                Kind::MinI | Kind::MinU => ScanOp::Min,
                Kind::MaxI | Kind::MaxU => ScanOp::Max,
            }
        }
    }

    /// The row as `i32` bits, where `T` is a 32-bit integer.
    pub(super) fn as_bits<T: ScanLane>(row: &mut [T]) -> Option<&mut [i32]> {
        let t = TypeId::of::<T>();
        (t == TypeId::of::<i32>() || t == TypeId::of::<u32>()).then(|| {
            // SAFETY: `T` is `i32` or `u32`: the same size and alignment, every bit pattern valid.
            unsafe { std::slice::from_raw_parts_mut(row.as_mut_ptr().cast::<i32>(), row.len()) }
        })
    }

    pub(super) fn bits_of<T: ScanLane>(v: T) -> i32 {
        // SAFETY: called only where `T` is `i32` or `u32` (`as_bits`).
        unsafe { std::mem::transmute_copy(&v) }
    }

    pub(super) fn from_bits<T: ScanLane>(v: i32) -> T {
        // SAFETY: called only where `T` is `i32` or `u32` (`as_bits`).
        unsafe { std::mem::transmute_copy(&v) }
    }

    /// The tail in order, on the operator the bits stand for.
    fn tail(row: &mut [i32], carry: i32, kind: Kind) -> i32 {
        match kind {
            Kind::MinU | Kind::MaxU => {
                // SAFETY: `u32` and `i32` have the same size, alignment and valid bits.
                let row = unsafe {
                    std::slice::from_raw_parts_mut(row.as_mut_ptr().cast::<u32>(), row.len())
                };
                serial(row, carry as u32, kind.op()) as i32
            }
            _ => serial(row, carry, kind.op()),
        }
    }

    #[target_feature(enable = "avx512f")]
    fn op512(kind: Kind, a: __m512i, b: __m512i) -> __m512i {
        match kind {
            Kind::Sum => _mm512_add_epi32(a, b),
            Kind::MinI => _mm512_min_epi32(a, b),
            Kind::MaxI => _mm512_max_epi32(a, b),
            Kind::MinU => _mm512_min_epu32(a, b),
            Kind::MaxU => _mm512_max_epu32(a, b),
        }
    }

    /// 16 lanes a vector: each shifted by 1, 2, 4 and 8 lanes (the identity shifted in) and
    /// combined, then with the running value, whose next is the last lane.
    #[target_feature(enable = "avx512f")]
    pub(super) fn scan512(row: &mut [i32], carry: i32, kind: Kind) -> i32 {
        let fill = _mm512_set1_epi32(kind.identity());
        let mut run = _mm512_set1_epi32(carry);
        let last = _mm512_set1_epi32(15);
        let (chunks, rest) = row.as_chunks_mut::<16>();
        for c in chunks {
            // SAFETY: `c` is 16 `i32`s.
            let mut x = unsafe { _mm512_loadu_si512(c.as_ptr().cast()) };
            x = op512(kind, x, _mm512_alignr_epi32::<15>(x, fill));
            x = op512(kind, x, _mm512_alignr_epi32::<14>(x, fill));
            x = op512(kind, x, _mm512_alignr_epi32::<12>(x, fill));
            x = op512(kind, x, _mm512_alignr_epi32::<8>(x, fill));
            x = op512(kind, x, run);
            // SAFETY: as above.
            unsafe { _mm512_storeu_si512(c.as_mut_ptr().cast(), x) };
            run = _mm512_permutexvar_epi32(last, x);
        }
        let carry = _mm_cvtsi128_si32(_mm512_castsi512_si128(run));
        tail(rest, carry, kind)
    }

    #[target_feature(enable = "avx2")]
    fn op256(kind: Kind, a: __m256i, b: __m256i) -> __m256i {
        match kind {
            Kind::Sum => _mm256_add_epi32(a, b),
            Kind::MinI => _mm256_min_epi32(a, b),
            Kind::MaxI => _mm256_max_epi32(a, b),
            Kind::MinU => _mm256_min_epu32(a, b),
            Kind::MaxU => _mm256_max_epu32(a, b),
        }
    }

    /// 8 lanes a vector, as `scan512`: a shift is a permutation and a blend of the identity.
    #[target_feature(enable = "avx2")]
    pub(super) fn scan256(row: &mut [i32], carry: i32, kind: Kind) -> i32 {
        let fill = _mm256_set1_epi32(kind.identity());
        let mut run = _mm256_set1_epi32(carry);
        let (s1, s2, s4) = (
            _mm256_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6),
            _mm256_setr_epi32(0, 0, 0, 1, 2, 3, 4, 5),
            _mm256_setr_epi32(0, 0, 0, 0, 0, 1, 2, 3),
        );
        let last = _mm256_set1_epi32(7);
        let (chunks, rest) = row.as_chunks_mut::<8>();
        for c in chunks {
            // SAFETY: `c` is 8 `i32`s.
            let mut x = unsafe { _mm256_loadu_si256(c.as_ptr().cast()) };
            let y = _mm256_blend_epi32::<0b0000_0001>(_mm256_permutevar8x32_epi32(x, s1), fill);
            x = op256(kind, x, y);
            let y = _mm256_blend_epi32::<0b0000_0011>(_mm256_permutevar8x32_epi32(x, s2), fill);
            x = op256(kind, x, y);
            let y = _mm256_blend_epi32::<0b0000_1111>(_mm256_permutevar8x32_epi32(x, s4), fill);
            x = op256(kind, x, y);
            x = op256(kind, x, run);
            // SAFETY: as above.
            unsafe { _mm256_storeu_si256(c.as_mut_ptr().cast(), x) };
            run = _mm256_permutevar8x32_epi32(x, last);
        }
        let carry = _mm256_extract_epi32::<0>(run);
        tail(rest, carry, kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operator and type, from lengths 0 to 40 and offsets within the row, against the
    /// scan in order.
    #[test]
    fn scan_row_matches_the_loop_in_order() {
        let mut seed = 0x9e37_79b9_u32;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        for op in [ScanOp::Sum, ScanOp::Min, ScanOp::Max] {
            for n in 0..40i64 {
                for lo in [0i64, 1, 3] {
                    let row: Vec<u32> = (0..n + 4).map(|_| next()).collect();
                    let carry = next();
                    let mut want = row.clone();
                    let (a, b) = (lo.min(n + 4) as usize, (lo + n).min(n + 4) as usize);
                    let last_u = serial(&mut want[a..b], carry, op);
                    for isa in CpuIsa::available() {
                        let mut got = row.clone();
                        assert_eq!(scan_row(isa, &mut got, lo, lo + n, carry, op), last_u);
                        assert_eq!(got, want, "u32 {op:?} n {n} lo {lo} {isa:?}");
                    }
                    let row: Vec<i32> = row.iter().map(|v| *v as i32).collect();
                    let mut want = row.clone();
                    let last_i = serial(&mut want[a..b], carry as i32, op);
                    for isa in CpuIsa::available() {
                        let mut got = row.clone();
                        assert_eq!(
                            scan_row(isa, &mut got, lo, lo + n, carry as i32, op),
                            last_i
                        );
                        assert_eq!(got, want, "i32 {op:?} n {n} lo {lo} {isa:?}");
                    }
                }
            }
        }
        let isa = CpuIsa::Auto;
        assert_eq!(scan_row(isa, &mut [1i32, 2], 2, 1, 7, ScanOp::Sum), 7);
        assert_eq!(scan_row(isa, &mut [1i32, 2], -5, 9, 7, ScanOp::Sum), 10);
    }
}
