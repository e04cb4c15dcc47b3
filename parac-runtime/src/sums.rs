//! Whole-matrix integer sums on the CPU path (`parac_matrix_sum`, `parac_matrix_mean`): blocks
//! summed in parallel, each in the narrowest accumulator that cannot overflow over a block
//! (`i32` for 8- and 16-bit elements: a block of 32768 is at most 32768 * 65535 < 2^31), so that
//! its loop vectorizes with as many lanes as it can; the blocks' sums added in `i64`, wrapping,
//! as the sum element by element did. Exact.

use crate::isa::{CpuIsa, vector};

/// A matrix element an integer sum runs over.
pub trait SumElement: Copy + Send + Sync {
    /// Elements per block.
    const BLOCK: usize;
    /// The sum of one block of at most [`SumElement::BLOCK`] elements.
    fn block_sum(block: &[Self]) -> i64;
}

macro_rules! narrow {
    ($($t:ty),*) => {$(
        impl SumElement for $t {
            const BLOCK: usize = 1 << 15;
            #[inline(always)]
            fn block_sum(block: &[Self]) -> i64 {
                i64::from(block.iter().fold(0i32, |a, v| a.wrapping_add(i32::from(*v))))
            }
        }
    )*};
}
narrow!(u8, i8, u16, i16);

macro_rules! wide {
    ($($t:ty),*) => {$(
        impl SumElement for $t {
            const BLOCK: usize = 1 << 16;
            #[inline(always)]
            fn block_sum(block: &[Self]) -> i64 {
                block.iter().fold(0i64, |a, v| a.wrapping_add(i64::from(*v)))
            }
        }
    )*};
}
wide!(u32, i32);

/// The sum of every element of `m` (wrapping in `i64`), each block's compiled for vector level
/// `isa` (a resolved one, as the interiors': [`crate::isa::vector`]).
pub fn int_sum<T: SumElement>(isa: CpuIsa, threads: usize, m: &[T]) -> i64 {
    crate::workers::chunk_map(threads, m, T::BLOCK, |b| {
        vector(
            isa,
            #[inline(always)]
            || T::block_sum(b),
        )
        .unwrap_or_else(|| T::block_sum(b))
    })
    .into_iter()
    .fold(0, i64::wrapping_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_sums_are_exact_at_their_extremes() {
        let n = 3 * (1 << 15) + 7;
        for isa in CpuIsa::available() {
            assert_eq!(int_sum(isa, 2, &vec![u16::MAX; n]), n as i64 * 65535);
            assert_eq!(int_sum(isa, 2, &vec![i16::MIN; n]), n as i64 * -32768);
            assert_eq!(int_sum(isa, 2, &vec![u8::MAX; n]), n as i64 * 255);
            assert_eq!(int_sum(isa, 2, &[i32::MIN; 3]), 3 * i64::from(i32::MIN));
            assert_eq!(int_sum(isa, 2, &[u32::MAX; 5]), 5 * i64::from(u32::MAX));
            assert_eq!(int_sum::<u8>(isa, 2, &[]), 0);
        }
    }
}
