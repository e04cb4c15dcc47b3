//! Pipelines compiled at run time: [`Pipeline::compile`] takes ParaC source (the content of a
//! `parac!` invocation, or a `.parac` file) and gives functions that run on a [`Runtime`] with
//! the same kernels and plans as the code the macro emits.
//!
//! There is no second implementation of the host logic here: the run follows the compiler's own
//! descriptions of it.
//!
//! - Arguments are bound and checked as the generated code does: every matrix parameter's rank
//!   ([`check_rank`]), then the size symbols from the dimensions that bind them, then every
//!   shape ([`check_shape`]), with the declared dimensions as written
//!   (`parac_core::codegen::declared`).
//! - On the CPU path (`rt.device() == None`) the function runs in the reference interpreter
//!   (`parac_core::interp::run`), which reproduces the macro's CPU path with its errors.
//! - On an OpenCL device (`device.rs`): the program `parac_core::codegen::opencl::program`, the
//!   kernel arguments, candidate plans, launch slots and reduction layouts of
//!   `parac_core::codegen::launch`; before each region the host's proof of
//!   `parac_core::interp::region_check` (accesses and divisors, as the CPU path's
//!   `codegen::cpu::proof::region_check`);
//!   host expressions by the interpreter's evaluator; the error flag decoded by
//!   `parac_core::codegen::safety::decode`.
//!
//! A [`Pipeline`] holds the compiler's IR, whose token spans are not thread-safe: it is neither
//! `Send` nor `Sync` (compile one per thread; programs and plan choices are still shared
//! through the device's caches).

mod device;
mod embedded;
mod flags;
mod host_arg;
mod time_steps;
mod warm;

use std::cell::OnceCell;
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::{Mutex, PoisonError};

use parac_core::codegen::launch as host;
use parac_core::codegen::opencl as cl;
use parac_core::codegen::plan::{Target, ranking};
use parac_core::interp::{self, InterpError};
use parac_core::ir::{Function, MatrixKind, Module, ParamRef, RegionKind};

pub use parac_core::interp::{Arg, Data, Tensor, Val};

// What the code `parac!` emits calls (through `parac::__private`): public for it only, so
// hidden from the documentation.
#[doc(hidden)]
pub use crate::background::CpuTurn;
#[doc(hidden)]
pub use embedded::{Ran, dump_ir, run_embedded};
#[doc(hidden)]
pub use host_arg::{FromVal, HostArg, IntoVal, Lang, Slice, SliceMut, returned};

use host_arg::ArgInfo;

use crate::error::{check_rank, check_shape};
use crate::opencl::{Candidate, RegionPlans, Source};
use crate::{Element, Error, Matrix, Runtime};

/// Pipeline functions compiled from source at run time.
///
/// ```
/// use parac_runtime::pipeline::{Arg, Data, Tensor, matrix_of, tensor_of};
/// use parac_runtime::{Matrix, Pipeline, Runtime};
///
/// let p = Pipeline::compile(
///     "fn inc(a: &u8[N], b: &mut u8[N]) { parac_iterator it(0:N:1) { b[itx] = a[itx] + 1; } }",
/// )?;
/// let a = Matrix::<u8>::from_vec([3], vec![1, 2, 255]).unwrap();
/// let mut args = [
///     Arg::Matrix(tensor_of(a).unwrap()),
///     Arg::Matrix(Tensor::new([3], Data::U8(vec![0; 3])).unwrap()),
/// ];
/// assert_eq!(p.run(&Runtime::cpu(), "inc", &mut args)?, None);
/// let Arg::Matrix(b) = &args[1] else { unreachable!() };
/// assert_eq!(matrix_of::<u8>(b).unwrap().as_slice(), &[2, 3, 0]);
/// # Ok::<(), parac_runtime::Error>(())
/// ```
pub struct Pipeline {
    /// Shared with the candidates' sources, printed when first needed ([`Source`]).
    module: Rc<Module>,
    /// Per function, what its OpenCL path needs (made on its first run on a device).
    prepared: Vec<OnceCell<Prepared>>,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.module.functions.iter().map(|f| &*f.name).collect();
        f.debug_struct("Pipeline")
            .field("functions", &names)
            .finish()
    }
}

/// A function's OpenCL path, from the compiler's descriptions.
pub(crate) struct Prepared {
    /// The program source (`opencl::program`): the baseline's kernels.
    pub(crate) source: String,
    /// The program a call under the model or the search builds first (`launch::first_program`):
    /// the baseline's kernels and the model's plan of each region on a GPU (`[0]`) or a CPU
    /// device (`[1]`); made when a call needs it.
    first_source: [OnceCell<String>; 2],
    /// The program holding every candidate's kernel (`launch::every_candidate_program`), for a
    /// device that forces candidates with one program (`Device::set_one_program`); made when a
    /// call needs it.
    every_source: OnceCell<String>,
    /// What each code of the error flag stands for (`safety::flag_codes`); made when a call
    /// needs it.
    flag_codes: OnceCell<std::sync::Arc<[(i32, parac_core::codegen::safety::Flag)]>>,
    /// Per region: its candidates (`host::plans`).
    pub(crate) plans: Vec<RegionPlans>,
    /// Per region with time bands among its candidates: those of one step, searched apart
    /// (as region `<name>~step`), for the steps of a repeat too few for a band.
    pub(crate) single: Vec<Option<RegionPlans>>,
    /// Per region: the other regions of the time step it begins (`Function::time_step`), which
    /// its time bands run.
    pub(crate) mates: Vec<Vec<usize>>,
    /// Per region with fused candidates: the consumers they run, in order
    /// (`PlanDesc::runs`); empty for the others.
    pub(crate) consumers: Vec<Vec<usize>>,
    /// Per region: its kernel arguments (`host::kernel_args`).
    pub(crate) args: Vec<Vec<host::KernelArg>>,
    /// Per region: the slots OpenCL runs (`host::launch_slots`).
    pub(crate) slots: Vec<Vec<usize>>,
    /// Per region: the bounds of its interior box (`opencl::bounds`).
    pub(crate) bounds: Vec<Option<Vec<cl::Bound>>>,
    /// Per matrix: written whole by its first region (no zero fill needed).
    pub(crate) whole: Vec<bool>,
}

impl Prepared {
    /// [`first_source`](Prepared::first_source) of function `f` (the one this was made from) on
    /// a `target` device.
    pub(crate) fn first_source(&self, f: &Function, target: Target) -> &str {
        self.first_source[(target == Target::Cpu) as usize]
            .get_or_init(|| host::first_program(f, target))
    }

    /// [`every_source`](Prepared::every_source) of function `f` (the one this was made from).
    pub(crate) fn every_source(&self, f: &Function) -> &str {
        self.every_source
            .get_or_init(|| host::every_candidate_program(f))
    }

    /// [`flag_codes`](Prepared::flag_codes) of function `f` (the one this was made from).
    pub(crate) fn flag_codes(
        &self,
        f: &Function,
    ) -> std::sync::Arc<[(i32, parac_core::codegen::safety::Flag)]> {
        self.flag_codes
            .get_or_init(|| parac_core::codegen::safety::flag_codes(f).into())
            .clone()
    }
}

impl Prepared {
    /// Function `i` of `module`.
    fn new(module: &Rc<Module>, i: usize) -> Prepared {
        let f = &module.functions[i];
        let regions = 0..f.regions.len();
        // Per region with fused candidates, the consumers they run.
        let mut consumers: Vec<Vec<usize>> = Vec::new();
        let plans: Vec<RegionPlans> = regions
            .clone()
            .map(|rid| {
                let plans = host::plans(f, rid);
                let schedules: Vec<_> = plans.iter().map(|p| p.schedule.clone()).collect();
                let runs = plans
                    .iter()
                    .find(|p| p.fuses)
                    .map_or_else(Vec::new, |p| p.runs.clone());
                let names: Vec<std::borrow::Cow<'static, str>> = runs
                    .iter()
                    .map(|c| host::plans_region(f, *c).into())
                    .collect();
                consumers.push(runs);
                RegionPlans {
                    region: host::plans_region(f, rid).into(),
                    consumers: names.into(),
                    cpu_order: ranking(f, rid, &schedules, Target::Cpu).into(),
                    searchable: host::searchable(f, rid),
                    candidates: plans
                        .into_iter()
                        .map(|p| Candidate {
                            source: p.own.then(|| {
                                let (module, desc) = (Rc::clone(module), p.clone());
                                Source::made_by(move || {
                                    desc.source(&module.functions[i]).unwrap_or_default()
                                })
                            }),
                            label: p.label.into(),
                            kernel: p.kernel.into(),
                            then: p.then.into_iter().map(Into::into).collect(),
                            per_item: p.per_item,
                            steps: p.steps,
                            fuses: p.fuses,
                            local: p.local.map(Into::into),
                            local_bytes: p.local_bytes,
                            tree: p.tree,
                            split: p.split,
                            origin: p.origin,
                        })
                        .collect::<Vec<_>>()
                        .into(),
                }
            })
            .collect();
        Prepared {
            source: cl::program(f),
            first_source: Default::default(),
            every_source: Default::default(),
            flag_codes: Default::default(),
            single: plans.iter().map(time_steps::single_steps).collect(),
            plans,
            args: regions
                .clone()
                .map(|rid| host::kernel_args(f, rid))
                .collect(),
            mates: regions
                .clone()
                .map(|rid| {
                    f.time_step(rid)
                        .map_or(Vec::new(), |(r, _)| r[1..].to_vec())
                })
                .collect(),
            consumers,
            slots: regions
                .clone()
                .map(|rid| match f.regions[rid].kind {
                    RegionKind::Iterator => host::launch_slots(f, rid),
                    RegionKind::Reduction { .. } => Vec::new(),
                })
                .collect(),
            bounds: regions.map(|rid| cl::bounds(f, rid)).collect(),
            whole: parac_core::analysis::written_whole(f),
        }
    }
}

/// The call's sizes, every matrix's dimensions and the host scalars' values (parameters set,
/// the others 0 until their step): the generated prelude's `__z`, `__d` and `__s` bindings.
pub(crate) struct Binding {
    pub(crate) sizes: Vec<i64>,
    pub(crate) dims: Vec<Vec<i64>>,
    pub(crate) hosts: Vec<Val>,
}

impl Pipeline {
    /// Compiles ParaC source (one or more functions, as inside `parac! { ... }`). Every error is
    /// [`Error::Compile`] with the diagnostics rendered (line, column, the source line).
    pub fn compile(source: &str) -> Result<Pipeline, Error> {
        Pipeline::compile_named("<source>", source)
    }

    /// As [`compile`](Pipeline::compile), naming the source `path` in the diagnostics.
    pub fn compile_named(path: &str, source: &str) -> Result<Pipeline, Error> {
        let c = parac_core::compile_str(source);
        if !c.diagnostics.is_empty() {
            let mut message: String = c
                .diagnostics
                .iter()
                .map(|d| d.render(path, source))
                .collect();
            let n = c.diagnostics.len();
            message.push_str(&format!(
                "{path}: {n} error{}",
                if n == 1 { "" } else { "s" }
            ));
            return Err(Error::Compile { message });
        }
        let prepared = c.module.functions.iter().map(|_| OnceCell::new()).collect();
        Ok(Pipeline {
            module: Rc::new(c.module),
            prepared,
        })
    }

    /// The functions, in source order.
    pub fn functions(&self) -> &[Function] {
        &self.module.functions
    }

    /// The function called `name`.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.module.functions.iter().find(|f| f.name == name)
    }

    /// The OpenCL C program of function `name`: what the macro builds on a device.
    pub fn opencl_source(&self, name: &str) -> Option<&str> {
        let i = self.index(name)?;
        Some(&self.prepare(i).source)
    }

    fn index(&self, name: &str) -> Option<usize> {
        self.module.functions.iter().position(|f| f.name == name)
    }

    fn prepare(&self, i: usize) -> &Prepared {
        self.prepared[i].get_or_init(|| Prepared::new(&self.module, i))
    }

    /// Runs function `function` on `rt` with `args`, one per parameter in `Function::params`
    /// order: matrices as [`Arg::Matrix`] (outputs are overwritten with the results; after an
    /// error their elements are unspecified), scalars as [`Arg::Scalar`]. Gives the function's
    /// return value, if it returns one.
    ///
    /// The errors are the generated function's: [`Error::Rank`] and [`Error::Shape`] for the
    /// matrices, [`Error::OutOfBounds`] and [`Error::DivisionByZero`] from the run, device
    /// errors; plus [`Error::Argument`] for arguments of the wrong kind or type (the generated
    /// function's signature rules those out).
    pub fn run(
        &self,
        rt: &Runtime,
        function: &str,
        args: &mut [Arg],
    ) -> Result<Option<Val>, Error> {
        let Some(i) = self.index(function) else {
            let names: Vec<&str> = self.module.functions.iter().map(|f| &*f.name).collect();
            return Err(Error::Argument {
                function: function.to_string(),
                message: format!("no such function (the pipeline has: {})", names.join(", ")),
            });
        };
        let f = &self.module.functions[i];
        let infos: Vec<ArgInfo> = args.iter().map(ArgInfo::of).collect();
        let b = bind(f, &infos)?;
        if let Some(dir) = &rt.config().dump {
            crate::opencl::dump(dir, &f.name, "ir", &parac_core::ir::display::dump_one(f))?;
        }
        match rt.device() {
            None => interp::run(f, args).map_err(|e| from_interp(f, e)),
            Some(dev) => {
                let outputs: Vec<bool> = f
                    .params
                    .iter()
                    .map(|p| {
                        matches!(p, ParamRef::Matrix(m) if f.matrices[*m].kind == MatrixKind::Output)
                    })
                    .collect();
                let mut args = host_arg::borrow_args(args, &outputs);
                device::run(dev, rt.policy(), f, self.prepare(i), b, &mut args)
            }
        }
    }

    /// Runs function `i` on an OpenCL device with borrowed arguments (the macro's path).
    fn run_device(
        &self,
        dev: &crate::opencl::Device,
        policy: &crate::PlanPolicy,
        i: usize,
        args: &mut [HostArg],
    ) -> Result<Option<Val>, Error> {
        let f = &self.module.functions[i];
        let infos: Vec<ArgInfo> = args.iter().map(HostArg::info).collect();
        let b = bind(f, &infos)?;
        device::run(dev, policy, f, self.prepare(i), b, args)
    }
}

/// A string that lives as long as the process, interned: the runtime's errors name functions,
/// matrices and regions by `&'static str` (the generated code's literals); a pipeline compiled
/// at run time gets each distinct name leaked once per process, however often it is compiled
/// or fails.
pub(crate) fn intern(s: &str) -> &'static str {
    static NAMES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut names = NAMES.lock().unwrap_or_else(PoisonError::into_inner);
    let names = names.get_or_insert_with(HashSet::new);
    if let Some(s) = names.get(s) {
        return s;
    }
    let s: &'static str = Box::leak(s.to_string().into_boxed_str());
    names.insert(s);
    s
}

fn argument(f: &Function, message: String) -> Error {
    Error::Argument {
        function: f.name.clone(),
        message,
    }
}

/// Checks the arguments and binds the sizes, as the generated function's prelude does.
fn bind(f: &Function, args: &[ArgInfo]) -> Result<Binding, Error> {
    if args.len() != f.params.len() {
        return Err(argument(
            f,
            format!("takes {} arguments, got {}", f.params.len(), args.len()),
        ));
    }
    let fname = intern(&f.name);
    let mut hosts = vec![Val::Int(0); f.scalars.len()];
    for (p, a) in f.params.iter().zip(args) {
        match (p, a) {
            (ParamRef::Matrix(m), ArgInfo::Matrix(elem, shape, len)) => {
                let mat = &f.matrices[*m];
                if *elem != mat.elem {
                    return Err(argument(
                        f,
                        format!("matrix `{}` holds {}, got {elem}", mat.name, mat.elem),
                    ));
                }
                if shape.iter().try_fold(1usize, |a, d| a.checked_mul(*d)) != Some(*len) {
                    return Err(argument(
                        f,
                        format!("matrix `{}`: shape {shape:?} but {len} elements", mat.name),
                    ));
                }
            }
            (ParamRef::Scalar(s), ArgInfo::Scalar(v)) => {
                let sc = &f.scalars[*s];
                if !v.fits(sc.ty) {
                    return Err(argument(
                        f,
                        format!("scalar `{}: {}` got {v:?}", sc.name, sc.ty),
                    ));
                }
                hosts[*s] = *v;
            }
            (ParamRef::Matrix(m), ArgInfo::Scalar(_)) => {
                return Err(argument(
                    f,
                    format!("`{}` is a matrix", f.matrices[*m].name),
                ));
            }
            (ParamRef::Scalar(s), ArgInfo::Matrix(..)) => {
                return Err(argument(f, format!("`{}` is a scalar", f.scalars[*s].name)));
            }
        }
    }
    let shape_of = |m: usize| -> &[usize] {
        let i = f
            .params
            .iter()
            .position(|p| *p == ParamRef::Matrix(m))
            .expect("a matrix parameter");
        match args[i] {
            ArgInfo::Matrix(_, shape, _) => shape,
            ArgInfo::Scalar(_) => &[],
        }
    };
    let matrices = || {
        f.params.iter().filter_map(|p| match p {
            ParamRef::Matrix(m) => Some(*m),
            ParamRef::Scalar(_) => None,
        })
    };
    // Ranks first: sizes are bound from dimensions that must exist.
    for m in matrices() {
        let mat = &f.matrices[m];
        let declared = intern(&parac_core::codegen::declared(f, m));
        check_rank(
            fname,
            intern(&mat.name),
            declared,
            mat.dims.len(),
            shape_of(m),
        )?;
    }
    let sizes: Vec<i64> = f
        .sizes
        .iter()
        .map(|s| {
            shape_of(s.bound_by.0)
                .get(s.bound_by.1)
                .copied()
                .unwrap_or(0) as i64
        })
        .collect();
    let dims = interp::matrix_dims(f, &sizes).map_err(|e| from_interp(f, e))?;
    for m in matrices() {
        let mat = &f.matrices[m];
        let declared = intern(&parac_core::codegen::declared(f, m));
        let expected: Vec<usize> = dims[m]
            .iter()
            .map(|d| usize::try_from(*d).unwrap_or(0))
            .collect();
        check_shape(fname, intern(&mat.name), declared, &expected, shape_of(m))?;
    }
    Ok(Binding { sizes, dims, hosts })
}

/// The runtime's error for an interpreter's (same variants, names interned).
pub(crate) fn from_interp(f: &Function, e: InterpError) -> Error {
    let fname = intern(&f.name);
    let declared = |name: &str| {
        f.matrices
            .iter()
            .position(|m| m.name == name)
            .map_or("", |m| intern(&parac_core::codegen::declared(f, m)))
    };
    match e {
        InterpError::Argument(message) => argument(f, message),
        InterpError::Rank {
            matrix,
            expected,
            found,
        } => Error::Rank {
            function: fname,
            matrix: intern(&matrix),
            declared: declared(&matrix),
            expected_rank: expected,
            got_rank: found.len(),
            got: found,
        },
        InterpError::Shape {
            matrix,
            expected,
            found,
        } => Error::Shape {
            function: fname,
            matrix: intern(&matrix),
            declared: declared(&matrix),
            expected,
            got: found,
        },
        InterpError::OutOfBounds {
            region,
            what,
            matrix,
            index,
            shape,
        } => Error::OutOfBounds {
            function: fname,
            region: intern(&region),
            what,
            matrix: intern(&matrix),
            index,
            shape,
        },
        InterpError::WindowLength {
            region,
            matrix,
            lens,
        } => Error::WindowLength {
            function: fname,
            region: intern(&region),
            matrix: intern(&matrix),
            lens,
        },
        InterpError::DivisionByZero { region } => Error::DivisionByZero {
            function: fname,
            region: intern(&region),
        },
        InterpError::Unsupported(reason) => Error::Unsupported {
            function: fname,
            reason: intern(&reason),
        },
    }
}

/// Runs `$body` with `$v` bound to the elements of `$data` (a [`Data`]) and `$t` to their
/// type, for the language's element types; `$other` for `i64`/`u64` data.
macro_rules! each_elem {
    ($data:expr, |$v:ident: $t:ident| $body:expr, $other:expr) => {
        each_elem!(@arms $data, $v, $t, $body, $other;
            u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, f32 => F32)
    };
    (@arms $data:expr, $v:ident, $t:ident, $body:expr, $other:expr; $($ty:ty => $var:ident),*) => {
        match $data {
            $(Data::$var($v) => {
                #[allow(dead_code)]
                type $t = $ty;
                $body
            })*
            Data::I64(_) | Data::U64(_) => $other,
        }
    };
}

/// The tensor of a matrix of one of the language's element types (`None` for another
/// [`Element`] type).
pub fn tensor_of<T: Element>(m: Matrix<T>) -> Option<Tensor> {
    use std::any::Any;
    let shape = m.shape().to_vec();
    let any: Box<dyn Any> = Box::new(m.into_vec());
    macro_rules! try_as {
        ($any:expr, $($t:ty => $v:ident),*) => {{
            let any = $any;
            $(let any = match any.downcast::<Vec<$t>>() {
                Ok(v) => return Tensor::new(shape, Data::$v(*v)),
                Err(any) => any,
            };)*
            drop(any);
            None
        }};
    }
    try_as!(any, u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, f32 => F32)
}

/// The matrix of a tensor holding `T`s (`None` if it holds another type).
pub fn matrix_of<T: Element>(t: &Tensor) -> Option<Matrix<T>> {
    use std::any::Any;
    let shape = t.shape.clone();
    each_elem!(
        &t.data,
        |v: E| (v as &dyn Any)
            .downcast_ref::<Vec<T>>()
            .and_then(|v| Matrix::from_vec(shape, v.clone())),
        None
    )
}
