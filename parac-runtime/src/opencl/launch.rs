//! Kernel arguments and launches.

use std::cmp::Reverse;
use std::fmt;
use std::ptr;

use opencl3::event::Event;

use super::buffer::{Buffer, MemArg, Pod, Scalar};
use super::device::Device;
use super::program::{PooledKernel, Program};
use super::{cl_error, code};
use crate::{Element, Error};

/// One kernel argument, in the order of the kernel's parameters.
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    /// A `__global` pointer: a [`Buffer`] or a [`Scalar`] of the same device.
    Mem(&'a dyn MemArg),
    /// An `int`.
    I32(i32),
    /// A `uint`.
    U32(u32),
    /// A `long`.
    I64(i64),
    /// A `ulong`.
    U64(u64),
    /// A `float`.
    F32(f32),
    /// A `__local` buffer of this many bytes.
    Local(usize),
}

impl fmt::Debug for Arg<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arg::Mem(m) => write!(f, "Mem({})", m.label()),
            Arg::I32(v) => write!(f, "I32({v})"),
            Arg::U32(v) => write!(f, "U32({v})"),
            Arg::I64(v) => write!(f, "I64({v})"),
            Arg::U64(v) => write!(f, "U64({v})"),
            Arg::F32(v) => write!(f, "F32({v:?})"),
            Arg::Local(n) => write!(f, "Local({n} bytes)"),
        }
    }
}

impl<'a, T: Element> From<&'a Buffer<T>> for Arg<'a> {
    fn from(b: &'a Buffer<T>) -> Self {
        Arg::Mem(b)
    }
}

impl<'a, T: Pod> From<&'a Scalar<T>> for Arg<'a> {
    fn from(s: &'a Scalar<T>) -> Self {
        Arg::Mem(s)
    }
}

macro_rules! arg_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Arg<'_> {
            fn from(v: $t) -> Self {
                Arg::$v(v)
            }
        }
    )*};
}
arg_from!(i32 => I32, u32 => U32, i64 => I64, u64 => U64, f32 => F32);

/// Enqueue errors after which a smaller (or the driver's) work-group size may succeed.
const RETRY: [i32; 4] = [
    code::OUT_OF_RESOURCES,
    code::INVALID_WORK_GROUP_SIZE,
    code::OUT_OF_HOST_MEMORY,
    code::INVALID_WORK_ITEM_SIZE,
];

/// Where and how a kernel is enqueued: its global size (1 to 3 dimensions, dimension 0 first),
/// its local size (`None`: the driver's choice), a global work offset where it has one, and
/// whether a local size that fails is an error (`exact`: kernels whose local tiles are sized
/// for it) rather than retried smaller.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NdRange<'a> {
    pub(crate) global: &'a [usize],
    pub(crate) local: Option<&'a [usize]>,
    pub(crate) offset: Option<&'a [usize]>,
    pub(crate) exact: bool,
}

/// `global` rounded up to multiples of `local`.
fn round_up(global: &[usize], local: &[usize]) -> Option<Vec<usize>> {
    global
        .iter()
        .zip(local)
        .map(|(&g, &l)| g.checked_next_multiple_of(l))
        .collect()
}

fn sizes(s: Option<&[usize]>) -> String {
    match s {
        Some(s) => format!("{s:?}"),
        None => "the driver's choice".to_string(),
    }
}

impl Device {
    /// Enqueues a kernel of `program` (no wait: a later blocking transfer, or
    /// [`finish`](Device::finish), waits for it).
    ///
    /// `global` has 1 to 3 dimensions (dimension 0 varies fastest) and is rounded up to a
    /// multiple of `local`, so kernels check their bounds. Arguments are set with fallible calls;
    /// an error names the kernel and the argument's index. If the enqueue fails with
    /// `CL_OUT_OF_RESOURCES`, `CL_INVALID_WORK_GROUP_SIZE`, `CL_INVALID_WORK_ITEM_SIZE` or
    /// `CL_OUT_OF_HOST_MEMORY`, it is retried with the local size halved (the largest dimension
    /// first) down to all ones, then with the driver's choice (`local = None`), before the error
    /// is returned; the size that worked is remembered for the next launches of the kernel with
    /// the same requested local size. A `global` with a zero dimension enqueues nothing.
    pub fn launch(
        &self,
        program: &Program,
        kernel: &str,
        global: &[usize],
        local: Option<&[usize]>,
        args: &[Arg<'_>],
    ) -> Result<(), Error> {
        let op = || format!("clEnqueueNDRangeKernel({kernel})");
        if !(1..=3).contains(&global.len()) {
            return Err(cl_error(
                op(),
                code::INVALID_WORK_DIMENSION,
                format!("global size {global:?}: 1 to 3 dimensions"),
            ));
        }
        if let Some(l) = local {
            if l.len() != global.len() {
                return Err(cl_error(
                    op(),
                    code::INVALID_WORK_DIMENSION,
                    format!("local size {l:?} for global size {global:?}"),
                ));
            }
            if l.contains(&0) {
                return Err(cl_error(
                    op(),
                    code::INVALID_WORK_GROUP_SIZE,
                    format!("local size {l:?} has a zero dimension"),
                ));
            }
        }
        if program.context_id() != self.context_id() {
            return Err(cl_error(
                op(),
                code::INVALID_CONTEXT,
                format!("program `{}` was built for another device", program.name()),
            ));
        }
        let range = NdRange {
            global,
            local,
            offset: None,
            exact: false,
        };
        self.launch_event(program, kernel, range, args).map(|_| ())
    }

    /// [`launch`](Device::launch) over `range`, returning the enqueue's event (`None` when
    /// nothing was enqueued).
    pub(crate) fn launch_event(
        &self,
        program: &Program,
        kernel: &str,
        range: NdRange<'_>,
        args: &[Arg<'_>],
    ) -> Result<Option<Event>, Error> {
        tracing::trace!(
            target: "parac::launch",
            "enqueue {}/{kernel} offset {:?} global {:?} local {:?}",
            program.name(),
            range.offset,
            range.global,
            range.local
        );
        let k = program.take_kernel(kernel)?;
        let result = self.launch_kernel(program, kernel, &k, range, args);
        program.put_kernel(kernel, k);
        result
    }

    fn launch_kernel(
        &self,
        program: &Program,
        kernel: &str,
        k: &PooledKernel,
        range: NdRange<'_>,
        args: &[Arg<'_>],
    ) -> Result<Option<Event>, Error> {
        let NdRange {
            global,
            local,
            offset,
            exact,
        } = range;
        let pname = program.name();
        if offset.is_some_and(|o| o.len() != global.len()) {
            return Err(cl_error(
                format!("clEnqueueNDRangeKernel({kernel})"),
                code::INVALID_WORK_DIMENSION,
                format!("global offset {offset:?} for global size {global:?}"),
            ));
        }
        if args.len() != k.num_args as usize {
            return Err(cl_error(
                format!("clSetKernelArg({kernel})"),
                code::INVALID_KERNEL_ARGS,
                format!(
                    "kernel `{kernel}` of program `{pname}` takes {} arguments, {} given",
                    k.num_args,
                    args.len()
                ),
            ));
        }
        for (i, a) in args.iter().enumerate() {
            let index = i as u32;
            let arg_error = |c: i32, what: &str| {
                cl_error(
                    format!("clSetKernelArg({kernel}, {i})"),
                    c,
                    format!("argument {i} ({a:?}) of kernel `{kernel}` of program `{pname}`{what}"),
                )
            };
            // SAFETY: `clSetKernelArg` copies the value (or the `cl_mem` handle) of the given
            // size; the driver checks index and size and returns an error, which is passed on.
            // Memory handles come from live `Buffer`s and `Scalar`s of this context.
            let r = unsafe {
                match *a {
                    Arg::Mem(m) => {
                        if m.context_id() != self.context_id() {
                            return Err(arg_error(
                                code::INVALID_CONTEXT,
                                ": the memory belongs to another device",
                            ));
                        }
                        let mem = m.raw_mem();
                        k.kernel.set_arg(index, &mem)
                    }
                    Arg::I32(v) => k.kernel.set_arg(index, &v),
                    Arg::U32(v) => k.kernel.set_arg(index, &v),
                    Arg::I64(v) => k.kernel.set_arg(index, &v),
                    Arg::U64(v) => k.kernel.set_arg(index, &v),
                    Arg::F32(v) => k.kernel.set_arg(index, &v),
                    Arg::Local(bytes) => k.kernel.set_arg_local_buffer(index, bytes),
                }
            };
            r.map_err(|e| arg_error(e.0, ""))?;
        }
        if global.contains(&0) {
            return Ok(None);
        }

        let op = || format!("clEnqueueNDRangeKernel({kernel})");
        let mut current: Option<Vec<usize>> = match local {
            Some(l) if exact => Some(l.to_vec()),
            Some(l) => program
                .fallback(kernel, l)
                .unwrap_or_else(|| Some(l.to_vec())),
            None => None,
        };
        let mut tried: Vec<String> = Vec::new();
        loop {
            let g = match &current {
                Some(l) => round_up(global, l).ok_or_else(|| {
                    cl_error(
                        op(),
                        code::INVALID_GLOBAL_WORK_SIZE,
                        format!("global size {global:?} rounded up to local size {l:?} overflows"),
                    )
                })?,
                None => global.to_vec(),
            };
            let l = current.as_deref();
            // SAFETY: `g`, `l` and `offset` have `g.len()` (1 to 3) elements, or `l` / `offset`
            // is null; all arguments are set.
            let r = unsafe {
                self.queue.enqueue_nd_range_kernel(
                    k.kernel.get(),
                    g.len() as u32,
                    offset.map_or(ptr::null(), <[usize]>::as_ptr),
                    g.as_ptr(),
                    l.map_or(ptr::null(), <[usize]>::as_ptr),
                    &[],
                )
            };
            match r {
                Ok(event) => {
                    if let (Some(requested), false) = (local, tried.is_empty()) {
                        program.set_fallback(kernel, requested, current);
                    }
                    return Ok(Some(event));
                }
                Err(e) if RETRY.contains(&e.0) && !exact => {
                    tried.push(sizes(l));
                    match &mut current {
                        Some(l) if l.iter().any(|&x| x > 1) => {
                            let i = (0..l.len())
                                .max_by_key(|&i| (l[i], Reverse(i)))
                                .unwrap_or(0);
                            l[i] = (l[i] / 2).max(1);
                        }
                        Some(_) => current = None,
                        None => {
                            return Err(cl_error(
                                op(),
                                e.0,
                                format!(
                                    "kernel `{kernel}` of program `{pname}`, global size \
                                     {global:?}; tried local sizes: {}",
                                    tried.join(", ")
                                ),
                            ));
                        }
                    }
                }
                Err(e) => {
                    return Err(cl_error(
                        op(),
                        e.0,
                        format!(
                            "kernel `{kernel}` of program `{pname}`, global size {g:?}, local \
                             size {}",
                            sizes(l)
                        ),
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding() {
        assert_eq!(round_up(&[17, 33], &[16, 16]), Some(vec![32, 48]));
        assert_eq!(round_up(&[16], &[16]), Some(vec![16]));
        assert_eq!(round_up(&[usize::MAX], &[16]), None);
    }
}
