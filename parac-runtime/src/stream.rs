//! Streaming stores for the CPU path's outputs: a vectorized interior that writes an output
//! matrix its function only writes (the compiler's `lir::pass::stream`), where the call finds
//! the matrix at least [`Runtime::cpu_stream_bytes`](crate::Runtime::cpu_stream_bytes) (the
//! last-level cache by default), computes each block of a row into a buffer of its own and
//! [`put`]s it into the matrix with non-temporal stores: to memory directly, without first
//! reading every line it fills (a store that misses the cache reads its line, so an output
//! written with plain stores costs its bytes twice in memory traffic), and without evicting the
//! inputs from the cache. Smaller outputs, which the next reader finds in the cache, are written
//! as every other row is.

use std::sync::OnceLock;

/// A block's bytes: 2 KiB, in the first-level cache.
const BLOCK_BYTES: usize = 2048;

/// The bytes of a line that a streaming store fills: blocks end on them ([`block_end`]), so
/// that no line is streamed in parts (each part would be a write of its own to memory).
const LINE: usize = 64;

/// The elements of a block (`block_len::<T>()`).
pub const fn block_len<T>() -> usize {
    match std::mem::size_of::<T>() {
        0 => 1,
        n => BLOCK_BYTES / n,
    }
}

/// A block's buffer, on a line's boundary (vector stores into it split no line).
#[repr(C, align(64))]
pub struct Block([u8; BLOCK_BYTES]);

impl Block {
    /// A zeroed buffer.
    #[inline(always)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Block {
        Block([0; BLOCK_BYTES])
    }

    /// Its [`block_len`] elements of `T`.
    #[inline(always)]
    pub fn of<T: bytemuck::Pod>(&mut self) -> &mut [T] {
        bytemuck::cast_slice_mut(&mut self.0)
    }
}

/// Where the block from `blk` of a row of `n` elements ends: `blk + len` or the row's end,
/// moved back to the start of a line of `row` (the row's first element) where that leaves
/// some of the block.
#[inline(always)]
pub fn block_end<T>(row: *const T, blk: usize, len: usize, n: usize) -> usize {
    let want = blk.saturating_add(len);
    if want >= n {
        return n;
    }
    let size = std::mem::size_of::<T>().max(1);
    let back = (row.wrapping_add(want) as usize % LINE) / size;
    want.checked_sub(back)
        .filter(|end| *end > blk)
        .unwrap_or(want)
}

/// Copies `src` into `dst` (of the same length; else the shorter) with streaming stores: on
/// x86_64 SSE2's 16-byte `movntdq` for the whole lines of `dst`, the elements before the first
/// and after the last plain; elsewhere a plain copy. The stores are ordered before another
/// thread's reads by [`fence`], which the code that streams runs before its task ends.
#[inline]
pub fn put<T: Copy>(dst: &mut [T], src: &[T]) {
    let n = dst.len().min(src.len());
    let (dst, src) = (&mut dst[..n], &src[..n]);
    let size = std::mem::size_of::<T>();
    #[cfg(target_arch = "x86_64")]
    if size > 0 && 16 % size == 0 {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        // Elements to the first line of `dst`, then whole lines.
        let head = dst.as_ptr().align_offset(LINE).min(n);
        let per = LINE / size;
        let body = (n - head) / per * per;
        plain(&mut dst[..head], &src[..head]);
        let (d, s) = (dst[head..].as_mut_ptr(), src[head..].as_ptr());
        let piece = 16 / size;
        for k in (0..body).step_by(piece) {
            // SAFETY: `k + piece <= body <= n - head` elements lie inside both slices from
            // `head` (`body` is whole lines, each of whole 16-byte pieces); `d.add(k)` is
            // 16-byte aligned (`align_offset`, and `piece` elements are 16 bytes); SSE2 is in
            // every x86_64 processor.
            unsafe {
                let v = _mm_loadu_si128(s.add(k).cast::<__m128i>());
                _mm_stream_si128(d.add(k).cast::<__m128i>(), v);
            }
        }
        plain(&mut dst[head + body..], &src[head + body..]);
        return;
    }
    let _ = size;
    dst.copy_from_slice(src);
}

/// A few elements, plain (no call of `memcpy` for them).
#[inline(always)]
fn plain<T: Copy>(dst: &mut [T], src: &[T]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
    }
}

/// Orders this thread's streaming stores before its later stores (`sfence` on x86_64): after
/// it, a thread that sees a later store (the end of a task) sees them too.
#[inline]
pub fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is in every x86_64 processor.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// The processor's last-level cache in bytes (Linux: the highest level `sysfs` lists for the
/// first processor; 32 MiB where it lists none), read once.
pub fn last_level_cache() -> usize {
    static BYTES: OnceLock<usize> = OnceLock::new();
    *BYTES.get_or_init(|| read_last_level().unwrap_or(32 << 20))
}

fn read_last_level() -> Option<usize> {
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let mut best: Option<(u32, usize)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let read = |f: &str| std::fs::read_to_string(entry.path().join(f)).ok();
        let (Some(level), Some(size)) = (read("level"), read("size")) else {
            continue;
        };
        let (Ok(level), Some(bytes)) = (level.trim().parse::<u32>(), parse_size(size.trim()))
        else {
            continue;
        };
        if best.is_none_or(|(l, _)| level > l) {
            best = Some((level, bytes));
        }
    }
    best.map(|(_, b)| b)
}

/// `32768K`, `2M`, `512`: a size as `sysfs` writes it.
fn parse_size(s: &str) -> Option<usize> {
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let n: usize = digits.parse().ok()?;
    n.checked_mul(match unit {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element copied at every alignment and length around the lines, for each element
    /// size; nothing past the ends.
    #[test]
    fn a_block_is_copied_whole() {
        fn check<T: Copy + PartialEq + std::fmt::Debug + TryFrom<u32>>() {
            let src: Vec<T> = (0..300u32)
                .map(|v| T::try_from(v % 200 + 1).ok().unwrap())
                .collect();
            let zero = T::try_from(0).ok().unwrap();
            for from in 0..20 {
                for n in [0, 1, 7, 15, 16, 17, 40, 64, 90, 200] {
                    let mut dst = vec![zero; 300];
                    put(&mut dst[from..from + n], &src[..n]);
                    fence();
                    assert_eq!(&dst[from..from + n], &src[..n], "{from} {n}");
                    assert!(
                        dst[..from]
                            .iter()
                            .chain(&dst[from + n..])
                            .all(|v| *v == zero)
                    );
                }
            }
        }
        check::<u8>();
        check::<u16>();
        check::<i32>();
        check::<f64>();
        check::<u64>();
    }

    /// A block ends on a line of the row, or at the row's end; never at or before its start.
    #[test]
    fn blocks_end_on_lines() {
        let row = vec![0u16; 4096];
        let p = row.as_ptr();
        for from in 0..40 {
            let q = p.wrapping_add(from);
            for blk in [0, 5, 1000] {
                let end = block_end(q, blk, 1024, 3000);
                assert!(end > blk && end <= blk + 1024, "{from} {blk} {end}");
                assert_eq!(q.wrapping_add(end) as usize % 64, 0, "{from} {blk}");
            }
            assert_eq!(block_end(q, 2500, 1024, 3000), 3000);
            assert!(block_end(q, 0, 8, 3000) <= 8);
        }
    }

    #[test]
    fn sizes_read_as_sysfs_writes_them() {
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
        assert!(last_level_cache() > 0);
    }
}
