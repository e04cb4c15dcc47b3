//! Canaries around a caller's matrices (the guard-band test of memory safety): a [`Canaried`] matrix is
//! a view ([`MatrixRef`], [`MatrixMut`]) of the middle of a larger `Vec` whose head and tail,
//! [`CANARY_BYTES`] each, hold a known pattern. A device whose memory is the host's (PoCL on
//! a CPU) reads and writes a call's matrices in place, so a kernel writing past a matrix would
//! write the caller's heap; with a canaried matrix it writes a canary instead.
//!
//! [`Canaried::check`] says which canary changed and where. A canaried matrix also checks
//! itself when dropped and records a changed canary in a list of its thread, which
//! [`take_violations`] empties: a test can check after every call without changing how its
//! matrices are passed around.
//!
//! The device's own buffers have guard bands instead (`PARAC_GUARD_BANDS=1`,
//! `Device::set_guard_bands`, `Device::check_guards`).

#![allow(dead_code)]

use std::cell::RefCell;

use parac::{Element, Matrix, MatrixMut, MatrixRef};

/// The size of each canary region in bytes.
pub const CANARY_BYTES: usize = 4096;

/// The byte at position `i` of a canary region (it varies with `i`; never 0 or 0xFF).
fn pattern_byte(i: usize) -> u8 {
    let b = 0x3C ^ (i.wrapping_mul(0x2F) % 241) as u8;
    if b == 0 || b == 0xFF { 0xC3 } else { b }
}

/// The element types a canary can be made of: every bit pattern is a value, compared by bits.
pub trait Canary: Element {
    /// The element at position `i` of a canary region.
    fn canary(i: usize) -> Self;
    /// Whether two elements have the same bits (NaNs included).
    fn same_bits(self, other: Self) -> bool;
}

macro_rules! canary {
    ($($t:ty),*) => {$(
        impl Canary for $t {
            fn canary(i: usize) -> Self {
                const N: usize = std::mem::size_of::<$t>();
                let mut b = [0u8; N];
                for (k, x) in b.iter_mut().enumerate() {
                    *x = pattern_byte(i * N + k);
                }
                <$t>::from_ne_bytes(b)
            }
            fn same_bits(self, other: Self) -> bool {
                self.to_ne_bytes() == other.to_ne_bytes()
            }
        }
    )*};
}
canary!(u8, i8, u16, i16, u32, i32, f32);

thread_local! {
    static VIOLATIONS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// The changed canaries found when canaried matrices of this thread were dropped, since the
/// last call (one line each, naming the matrix).
pub fn take_violations() -> Vec<String> {
    VIOLATIONS.with(|v| std::mem::take(&mut *v.borrow_mut()))
}

/// A matrix in the middle of a larger allocation, between two canary regions.
pub struct Canaried<T: Canary> {
    name: String,
    shape: Vec<usize>,
    /// `head` canary elements, the matrix's `len` elements, `head` canary elements.
    data: Vec<T>,
    head: usize,
    len: usize,
}

impl<T: Canary> Canaried<T> {
    /// A canaried matrix of `shape` holding `elems` (row-major; as many as the shape has).
    /// `name` names it in reports.
    pub fn new(name: impl Into<String>, shape: impl Into<Vec<usize>>, elems: &[T]) -> Self {
        let shape = shape.into();
        assert_eq!(
            shape.iter().product::<usize>(),
            elems.len(),
            "elements for shape {shape:?}"
        );
        let head = CANARY_BYTES.div_ceil(std::mem::size_of::<T>().max(1));
        let len = elems.len();
        let mut data = Vec::with_capacity(2 * head + len);
        data.extend((0..head).map(T::canary));
        data.extend_from_slice(elems);
        data.extend((0..head).map(T::canary));
        Canaried {
            name: name.into(),
            shape,
            data,
            head,
            len,
        }
    }

    /// A canaried copy of `m`.
    pub fn from_matrix(name: impl Into<String>, m: &Matrix<T>) -> Self {
        Canaried::new(name, m.shape().to_vec(), m.as_slice())
    }

    /// The matrix's elements as a `Matrix`.
    pub fn to_matrix(&self) -> Matrix<T> {
        Matrix::from_vec(self.shape.clone(), self.as_slice().to_vec()).expect("the shape's")
    }

    /// Overwrites the canary element `k` elements after the matrix's last one (`k >= 0`) or
    /// `-k` before its first (`k < 0`): the tests of this helper write past a view with it.
    pub fn clobber(&mut self, k: isize, v: T) {
        let i = if k >= 0 {
            self.head + self.len + k as usize
        } else {
            self.head - k.unsigned_abs()
        };
        self.data[i] = v;
    }

    /// The name given at creation.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `Err` naming the matrix, the canary (before or after it), how many elements changed and
    /// the nearest and farthest, as element offsets from the matrix's first element.
    pub fn check(&self) -> Result<(), String> {
        let mut bad = Vec::new();
        let before: Vec<usize> = (0..self.head)
            .filter(|&i| !self.data[i].same_bits(T::canary(i)))
            .collect();
        if let (Some(&far), Some(&near)) = (before.first(), before.last()) {
            bad.push(format!(
                "{} element{} before it changed (offsets {} to {})",
                before.len(),
                if before.len() == 1 { "" } else { "s" },
                near as i64 - self.head as i64,
                far as i64 - self.head as i64
            ));
        }
        let tail = self.head + self.len;
        let after: Vec<usize> = (0..self.head)
            .filter(|&i| !self.data[tail + i].same_bits(T::canary(i)))
            .collect();
        if let (Some(&near), Some(&far)) = (after.first(), after.last()) {
            bad.push(format!(
                "{} element{} after it changed (offsets {} to {})",
                after.len(),
                if after.len() == 1 { "" } else { "s" },
                self.len + near,
                self.len + far
            ));
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "canary around the caller's matrix `{}` {:?} of {}: {}",
                self.name,
                self.shape,
                T::NAME,
                bad.join(", ")
            ))
        }
    }
}

impl<T: Canary> MatrixRef<T> for Canaried<T> {
    fn shape(&self) -> &[usize] {
        &self.shape
    }

    fn as_slice(&self) -> &[T] {
        &self.data[self.head..self.head + self.len]
    }
}

impl<T: Canary> MatrixMut<T> for Canaried<T> {
    fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data[self.head..self.head + self.len]
    }
}

impl<T: Canary> Drop for Canaried<T> {
    /// Checks the canaries; a changed one goes to this thread's list ([`take_violations`]).
    fn drop(&mut self) {
        if let Err(e) = self.check() {
            VIOLATIONS.with(|v| v.borrow_mut().push(e));
        }
    }
}
