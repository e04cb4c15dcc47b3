//! Built programs: a program's kernels (pooled per name), its work-group fallbacks and its plan
//! memo, and the per-device cache of programs in memory. Building them and the disk cache of
//! program binaries are `build.rs`.

use std::any::Any;
use std::borrow::Cow;
use std::cell::LazyCell;
use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::path::Path;
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};

use opencl3::kernel::Kernel;
use opencl3::program::Program as ClProgram;

use super::{cl_error, code};
use crate::Error;

/// A built OpenCL program of one device. Its kernels are created on first use and pooled per
/// name, so concurrent launches of the same kernel from several threads never share a kernel
/// object (whose arguments are per object). `Send + Sync`.
pub struct Program {
    name: String,
    // Kernels are released before the program.
    kernels: Mutex<HashMap<String, Vec<PooledKernel>>>,
    /// For a kernel name and a requested local size, the local size that worked instead (`None`:
    /// the driver's choice), so that a failing local size is retried once, not per launch.
    fallbacks: Mutex<HashMap<(String, Vec<usize>), Fallback>>,
    program: ClProgram,
    /// The kernels it defines, read once (a launch asks whether it holds a candidate's kernel).
    kernel_names: Vec<String>,
    context: usize,
    from_disk: bool,
    /// A hash of the device, driver, source and options: names the plan cache file.
    pub(super) key_hash: String,
    /// What the plan search keeps for this program (its searches so far, by region and size
    /// class, loaded from the plan cache file on first use): `plan.rs`'s memo, held here without
    /// naming its type so that this module does not depend on the search's.
    pub(super) plans: Mutex<Option<Box<dyn Any + Send>>>,
}

/// The source of a candidate plan's own program: a text, or made when first read. A pipeline
/// prints a candidate's kernel only when a call needs that program (the search times it, or
/// the program holding the model's plans lacks it): the candidates of a large window take a
/// while to print, and most calls build none of them. Not `Send`: what makes it may hold the
/// pipeline's IR, which is not.
#[derive(Clone)]
pub struct Source(SourceKind);

#[derive(Clone)]
enum SourceKind {
    Text(Cow<'static, str>),
    Made(Rc<LazyCell<String, Box<dyn FnOnce() -> String>>>),
}

impl Source {
    /// A source made by `make` when it is first read.
    pub fn made_by(make: impl FnOnce() -> String + 'static) -> Source {
        Source(SourceKind::Made(Rc::new(LazyCell::new(Box::new(make)))))
    }

    /// The text (made now if it is not yet).
    pub fn text(&self) -> &str {
        match &self.0 {
            SourceKind::Text(t) => t,
            SourceKind::Made(m) => m,
        }
    }
}

impl From<&'static str> for Source {
    fn from(t: &'static str) -> Source {
        Source(SourceKind::Text(Cow::Borrowed(t)))
    }
}

impl From<String> for Source {
    fn from(t: String) -> Source {
        Source(SourceKind::Text(Cow::Owned(t)))
    }
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            SourceKind::Text(t) => write!(f, "Source({} bytes)", t.len()),
            SourceKind::Made(_) => f.write_str("Source(made on first use)"),
        }
    }
}

/// The local size used instead of a requested one (`None`: the driver's choice).
type Fallback = Option<Vec<usize>>;

/// A kernel object with its argument count.
pub(super) struct PooledKernel {
    pub(super) kernel: Kernel,
    pub(super) num_args: u32,
}

impl fmt::Debug for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Program")
            .field("name", &self.name)
            .field("kernels", &self.kernel_names)
            .field("from_disk", &self.from_disk)
            .finish_non_exhaustive()
    }
}

impl Program {
    /// The name given to [`Device::program`](super::Device::program) (for messages and
    /// `PARAC_DUMP`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The kernels the program defines.
    pub fn kernel_names(&self) -> Vec<String> {
        self.kernel_names.clone()
    }

    /// Whether the program defines kernel `name`.
    pub fn has_kernel(&self, name: &str) -> bool {
        self.kernel_names.iter().any(|k| k == name)
    }

    /// Whether this program was loaded from the disk cache of program binaries rather than built
    /// from its source.
    pub fn from_disk(&self) -> bool {
        self.from_disk
    }

    pub(super) fn context_id(&self) -> usize {
        self.context
    }

    /// A kernel object for `kernel` that no other launch uses until [`put_kernel`] gives it
    /// back.
    ///
    /// [`put_kernel`]: Program::put_kernel
    pub(super) fn take_kernel(&self, kernel: &str) -> Result<PooledKernel, Error> {
        let pooled = self
            .kernels
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(kernel)
            .and_then(Vec::pop);
        if let Some(k) = pooled {
            return Ok(k);
        }
        let op = || format!("clCreateKernel({kernel})");
        if kernel.contains('\0') {
            return Err(cl_error(
                op(),
                code::INVALID_KERNEL_NAME,
                "the name contains a NUL byte",
            ));
        }
        let k = Kernel::create(&self.program, kernel).map_err(|e| {
            cl_error(
                op(),
                e.0,
                format!(
                    "program `{}` defines: {}",
                    self.name,
                    self.kernel_names.join(", ")
                ),
            )
        })?;
        let num_args = k.num_args().map_err(|e| {
            cl_error(
                format!("clGetKernelInfo({kernel})"),
                e.0,
                "CL_KERNEL_NUM_ARGS",
            )
        })?;
        Ok(PooledKernel {
            kernel: k,
            num_args,
        })
    }

    /// Gives a kernel object back to the pool.
    pub(super) fn put_kernel(&self, kernel: &str, k: PooledKernel) {
        let mut pool = self.kernels.lock().unwrap_or_else(PoisonError::into_inner);
        match pool.get_mut(kernel) {
            Some(v) => v.push(k),
            None => {
                pool.insert(kernel.to_string(), vec![k]);
            }
        }
    }

    /// The local size that replaced `local` for `kernel` in an earlier launch, if any.
    pub(super) fn fallback(&self, kernel: &str, local: &[usize]) -> Option<Fallback> {
        let map = self
            .fallbacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if map.is_empty() {
            return None;
        }
        map.get(&(kernel.to_string(), local.to_vec())).cloned()
    }

    /// Remembers that `used` worked where `local` did not.
    pub(super) fn set_fallback(&self, kernel: &str, local: &[usize], used: Fallback) {
        self.fallbacks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((kernel.to_string(), local.to_vec()), used);
    }
}

impl Program {
    /// A built program of the context `context` (see [`Program::context_id`]); `key_hash`
    /// names its plan cache file.
    pub(super) fn new(
        name: &str,
        program: ClProgram,
        context: usize,
        from_disk: bool,
        key_hash: String,
    ) -> Program {
        let kernel_names = program
            .kernel_names()
            .split(';')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        Program {
            name: name.to_string(),
            kernels: Mutex::default(),
            fallbacks: Mutex::default(),
            program,
            kernel_names,
            context,
            from_disk,
            key_hash,
            plans: Mutex::new(None),
        }
    }
}

/// One program's place in the process cache: filled by the first caller, who builds while
/// later callers for the same program wait.
pub(super) type Slot = Arc<Mutex<Option<Arc<Program>>>>;

/// The process cache of one device: build options, then source.
#[derive(Default)]
pub(crate) struct ProgramCache {
    pub(super) by_options: HashMap<String, HashMap<String, Slot>>,
}

/// The source with numbered lines, for build errors.
pub(crate) fn numbered(source: &str) -> String {
    let width = source.lines().count().max(1).to_string().len().max(3);
    source
        .lines()
        .enumerate()
        .map(|(i, line)| format!("{:>width$} | {line}\n", i + 1))
        .collect()
}

/// Writes `text` to `<dir>/<name>.<ext>` (the dumps of `Config::dump`: `.cl` programs, `.ir`
/// pipelines); characters of `name` other than letters, digits, `_`, `-` and `.` become `_`.
pub(crate) fn dump(dir: &Path, name: &str, ext: &str, text: &str) -> Result<(), Error> {
    let mut file: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if file.is_empty() || file.starts_with('.') {
        file.insert_str(0, "program");
    }
    let path = dir.join(format!("{file}.{ext}"));
    let io = |source: std::io::Error| Error::Io {
        path: path.clone(),
        what: "cannot write the dump (PARAC_DUMP)",
        source,
    };
    fs::create_dir_all(dir).map_err(io)?;
    fs::write(&path, text).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_lines() {
        assert_eq!(numbered("a\nb"), "  1 | a\n  2 | b\n");
        let long: String = (0..1000).map(|i| format!("l{i}\n")).collect();
        assert!(numbered(&long).contains("\n1000 | l999\n"));
    }
}
