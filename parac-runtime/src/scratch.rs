//! Scratch rows for the CPU path: the temporary rows a `lir::pass::slide` region keeps per
//! task (column reductions, van Herk's blocks) taken from a pool per thread and given back
//! when dropped, so that a task does not allocate (and the system zero, page by page) a fresh
//! buffer for each chunk of rows. A row's elements are whatever the last user left (never
//! uninitialized memory); the generated code writes every element before reading it.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::{Deref, DerefMut};

thread_local! {
    /// Per element type, the buffers given back on this thread.
    static POOL: RefCell<HashMap<TypeId, Vec<Box<dyn Any>>>> = RefCell::new(HashMap::new());
}

/// A buffer of `T`s from the thread's pool, back in it when dropped.
pub struct Scratch<T: Copy + Default + 'static> {
    buf: Vec<T>,
}

/// A buffer of `n` elements (`n` below zero: none), reused from this thread's pool where one
/// was given back.
pub fn scratch<T: Copy + Default + 'static>(n: i64) -> Scratch<T> {
    let n = usize::try_from(n).unwrap_or(0);
    let reused = POOL.with(|p| {
        p.borrow_mut()
            .get_mut(&TypeId::of::<T>())
            .and_then(|v| v.pop())
            .and_then(|b| b.downcast::<Vec<T>>().ok())
    });
    let mut buf = reused.map_or_else(Vec::new, |b| *b);
    if buf.len() >= n {
        buf.truncate(n);
    } else {
        buf.resize(n, T::default());
    }
    Scratch { buf }
}

impl<T: Copy + Default + 'static> Drop for Scratch<T> {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        // A few per type and thread: a region keeps at most a handful at once.
        POOL.with(|p| {
            let mut p = p.borrow_mut();
            let v = p.entry(TypeId::of::<T>()).or_default();
            if v.len() < 16 {
                v.push(Box::new(buf));
            }
        });
    }
}

impl<T: Copy + Default + 'static> Deref for Scratch<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.buf
    }
}

impl<T: Copy + Default + 'static> DerefMut for Scratch<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::scratch;

    #[test]
    fn a_buffer_given_back_is_reused_at_any_length() {
        let mut a = scratch::<u16>(5);
        assert_eq!(a.len(), 5);
        a[4] = 7;
        let p = a.as_ptr();
        drop(a);
        let b = scratch::<u16>(3);
        assert_eq!((b.len(), b.as_ptr()), (3, p));
        drop(b);
        let c = scratch::<u16>(9);
        assert_eq!(c.len(), 9);
        assert_eq!(scratch::<u16>(-1).len(), 0);
    }
}
