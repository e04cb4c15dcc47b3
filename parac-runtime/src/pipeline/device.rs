//! A pipeline on an OpenCL device, run from the compiler's descriptions of it
//! (`parac_core::codegen::opencl`): the one executor of the OpenCL path, for
//! [`Pipeline`](super::Pipeline) and for the code `parac!` emits alike.
//!
//! Matrices: inputs and outputs are the device views of the caller's matrices
//! ([`Device::input`]/[`Device::output`]: in place where the device's memory is the host's, else
//! copies with padded rows, made when the call starts and copied back when it ends; an output
//! not written whole is copied in, so that what the kernels do not write keeps the caller's
//! values); intermediates are allocated on the device (zero-filled unless their first region
//! writes them whole).

use parac_core::codegen::launch::{self as host, KernelArg, Partials};
use parac_core::interp::{self, Data, Val, cast, cast_f64};
use parac_core::ir::{Function, HostStep, MatrixKind, ParamRef, RegionKind, Scalar};

use super::flags::{FlagTable, flag_error};
use super::host_arg::{HostArg, Slice, SliceMut};
use super::time_steps::{self, Steps};
use super::{Binding, Prepared, from_interp, intern};
use crate::layout::{checked_parts, checked_parts_mut};
use crate::opencl::{self, Buffer, Device, Input, MemArg, Output};
use crate::resident::Region;
use crate::{
    Element, Elements, ElementsMut, Error, LayoutError, MatrixRef, MatrixViewMut, PlanPolicy,
    Strided, StridedMut,
};

/// A matrix argument has 1 to 3 dimensions.
fn rank<T: Element, M: MatrixRef<T>>(m: M) -> Result<M, LayoutError> {
    match m.shape().len() {
        1..=3 => Ok(m),
        n => Err(LayoutError::Rank(n)),
    }
}

/// A caller's matrix: a host view the device views borrow, or a matrix on the device.
enum Src<'a> {
    None,
    In(InSrc<'a>),
    Out(OutSrc<'a>),
    DevIn(ResIn<'a>),
    DevOut(ResOut<'a>),
}

macro_rules! dev_mats {
    ($($t:ty => $v:ident),*) => {
        enum InSrc<'a> { $($v(Strided<'a, $t>),)* }
        enum OutSrc<'a> { $($v(StridedMut<'a, $t>),)* }
        /// An input on the device ([`DeviceMatrix`](crate::DeviceMatrix)), or a region of
        /// one.
        enum ResIn<'a> { $($v(&'a Buffer<$t>, Option<Region>),)* }
        /// An output on the device, or a region of one.
        enum ResOut<'a> { $($v(&'a mut Buffer<$t>, Option<Region>),)* }

        impl ResIn<'_> {
            /// The matrix the kernels read: the buffer itself, or a copy of the region made on
            /// the device.
            fn mat(&self, dev: &Device, name: &str) -> Result<Mat<'_>, Error> {
                Ok(match self {
                    $(ResIn::$v(b, None) => Mat::Res(*b, b.pitch()),
                    ResIn::$v(b, Some(r)) => {
                        let mut t = dev.alloc_uninit::<$t>(name, &r.shape)?;
                        dev.copy_region(b, r.offset, &mut t, 0, &r.shape)?;
                        Mat::Buf(DevBuf::$v(t))
                    })*
                })
            }
        }

        impl ResOut<'_> {
            fn shape(&self) -> &[usize] {
                match self {
                    $(ResOut::$v(b, None) => b.shape(),
                    ResOut::$v(_, Some(r)) => &r.shape,)*
                }
            }

            fn is_region(&self) -> bool {
                match self {
                    $(ResOut::$v(_, r) => r.is_some(),)*
                }
            }

            /// The whole buffer as the kernels write it (what they do not write keeps its
            /// values).
            fn mat(&mut self) -> Mat<'_> {
                match self {
                    $(ResOut::$v(b, _) => Mat::Res(&**b, b.pitch()),)*
                }
            }

            /// A matrix of the region's shape that the kernels write (the region's values
            /// copied in unless `whole`), copied into the region by
            /// [`copy_back`](Self::copy_back).
            fn staging(&self, dev: &Device, name: &str, whole: bool)
                -> Result<Mat<'static>, Error> {
                let shape = self.shape();
                Ok(Mat::Buf(match self {
                    $(ResOut::$v(b, r) => DevBuf::$v({
                        let mut t = dev.alloc_uninit::<$t>(name, shape)?;
                        if let (false, Some(r)) = (whole, r) {
                            dev.copy_region(b, r.offset, &mut t, 0, &r.shape)?;
                        }
                        t
                    }),)*
                }))
            }

            /// Copies the staging matrix `from` into the region, on the device.
            fn copy_back(&mut self, dev: &Device, from: &Mat) -> Result<(), Error> {
                match (self, from) {
                    $((ResOut::$v(b, Some(r)), Mat::Buf(DevBuf::$v(t))) => {
                        dev.copy_region(t, 0, b, r.offset, &r.shape)
                    })*
                    _ => unreachable!("a region's staging matrix of its type"),
                }
            }
        }

        /// A device matrix of one of the language's element types: an intermediate's buffer,
        /// or the device view of an input or an output.
        enum DevBuf {
            $($v(Buffer<$t>),)*
        }

        enum Mat<'v> {
            Buf(DevBuf),
            /// A matrix on the device (its memory and pitch).
            Res(&'v dyn MemArg, usize),
            $($v(Input<'v, $t>),)*
            Out(OutView<'v>),
        }

        enum OutView<'v> {
            $($v(Output<'v, $t>),)*
        }

        impl DevBuf {
            fn mem(&self) -> &dyn MemArg {
                match self {
                    $(DevBuf::$v(b) => b,)*
                }
            }

            fn pitch(&self) -> usize {
                match self {
                    $(DevBuf::$v(b) => b.pitch(),)*
                }
            }

            /// A new device matrix of element type `t` (`None` for `i64`, `u64`, `bool`).
            fn alloc(dev: &Device, t: Scalar, name: &str, shape: &[usize], zero: bool)
                -> Option<Result<DevBuf, Error>> {
                Some(match t {
                    $(Scalar::$v => if zero {
                        dev.alloc::<$t>(name, shape).map(DevBuf::$v)
                    } else {
                        dev.alloc_uninit::<$t>(name, shape).map(DevBuf::$v)
                    },)*
                    _ => return None,
                })
            }

            /// Reads the matrix back into `data` (of its type and element count).
            fn download(&self, dev: &Device, shape: &[usize], data: &mut Data)
                -> Result<(), Error> {
                match (self, data) {
                    $((DevBuf::$v(b), Data::$v(v)) => {
                        let mut view = MatrixViewMut::new(shape.to_vec(), &mut v[..])
                            .expect("a tensor's data fills its shape");
                        dev.download(b, &mut view)
                    })*
                    _ => unreachable!("a device matrix has its tensor's type"),
                }
            }
        }

        impl<'a> Src<'a> {
            /// The host view of argument `a` (bound: its data fills its shape), or the matrix
            /// on `dev` it is; a matrix on another device (another context) is refused.
            fn of(dev: &Device, f: &Function, m: usize, a: &'a mut HostArg<'_>)
                -> Result<Src<'a>, Error> {
                let bad = |source| Error::Layout {
                    matrix: intern(&f.matrices[m].name),
                    source,
                };
                let here = |d: &Device, source: LayoutError| {
                    if d.context_id() == dev.context_id() { Ok(()) } else { Err(bad(source)) }
                };
                Ok(match a {
                    $(HostArg::In(_, _, Slice::$v(Elements::Device(d))) => {
                        here(d.device(), d.elsewhere())?;
                        Src::DevIn(ResIn::$v(d.buf, d.region.clone()))
                    })*
                    $(HostArg::Out(_, _, SliceMut::$v(ElementsMut::Device(d))) => {
                        here(d.device(), d.elsewhere())?;
                        Src::DevOut(ResOut::$v(&mut *d.buf, d.region.clone()))
                    })*
                    $(HostArg::In(shape, p, Slice::$v(d)) => Src::In(InSrc::$v(
                        checked_parts(shape, *p, d.clone()).and_then(rank).map_err(bad)?,
                    )),)*
                    $(HostArg::Out(shape, p, SliceMut::$v(d)) => Src::Out(OutSrc::$v(
                        checked_parts_mut(shape, *p, d.reborrow())
                            .and_then(rank)
                            .map_err(bad)?,
                    )),)*
                    HostArg::Scalar(_) => Src::None,
                })
            }
        }

        impl<'v> Mat<'v> {
            /// The device view of input `src`.
            fn input(dev: &'v Device, name: &'static str, src: &'v InSrc<'_>)
                -> Result<Mat<'v>, Error> {
                // SAFETY (of `input`): the view is dropped by the end of `run`, before the
                // borrow of the caller's matrix ends; the kernels never write an input (the
                // compiler refuses a store into one).
                Ok(match src {
                    $(InSrc::$v(m) => Mat::$v(unsafe { dev.input::<$t, _>(name, m) }?),)*
                })
            }

            /// The device view of output `src` (`whole`: no zero fill).
            fn output(
                dev: &'v Device,
                name: &'static str,
                src: &'v mut OutSrc<'_>,
                shape: &[usize],
                whole: bool,
                shared: bool,
            ) -> Result<Mat<'v>, Error> {
                // SAFETY (of `output`): the view is finished or dropped by the end of `run`.
                Ok(Mat::Out(match src {
                    $(OutSrc::$v(m) => OutView::$v(
                        unsafe { dev.output_as::<$t, _>(name, m, shape, whole, shared) }?,
                    ),)*
                }))
            }

            fn mem(&self) -> &dyn MemArg {
                match self {
                    Mat::Buf(b) => b.mem(),
                    Mat::Res(m, _) => *m,
                    $(Mat::$v(b) => b,)*
                    Mat::Out(o) => match o {
                        $(OutView::$v(b) => b,)*
                    },
                }
            }

            fn pitch(&self) -> usize {
                match self {
                    Mat::Buf(b) => b.pitch(),
                    Mat::Res(_, p) => *p,
                    $(Mat::$v(b) => b.pitch(),)*
                    Mat::Out(o) => match o {
                        $(OutView::$v(b) => b.pitch(),)*
                    },
                }
            }
        }

        impl OutView<'_> {
            /// Makes the result visible in the caller's matrix ([`Output::finish`]).
            fn finish(self) -> Result<(), Error> {
                match self {
                    $(OutView::$v(o) => o.finish(),)*
                }
            }
        }
    };
}
dev_mats!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, f32 => F32);

/// The minimum (`op` is `Min`) or else the maximum of a min/max reduction's integer partials:
/// for none, `max` or `min` (the type's, each operator's identity).
fn min_max_int<T: Ord + Copy + Into<i128>>(
    op: parac_core::ir::ReduceOp,
    partials: &[T],
    min: T,
    max: T,
) -> i128 {
    if op == parac_core::ir::ReduceOp::Min {
        host::combine_min_int(partials, max).into()
    } else {
        host::combine_max_int(partials, min).into()
    }
}

fn unsupported(f: &Function, what: String) -> Error {
    Error::Unsupported {
        function: intern(&f.name),
        reason: intern(&what),
    }
}

/// The run, step by step: the host's proof before each iterator region, its launch (every
/// candidate plan the policy allows), global operators combined on the host, host `let`s, the
/// error flag read back, the outputs made visible.
pub(super) fn run(
    dev: &Device,
    policy: &PlanPolicy,
    f: &Function,
    prep: &Prepared,
    b: Binding,
    args: &mut [HostArg],
) -> Result<Option<Val>, Error> {
    let Binding {
        sizes,
        dims,
        mut hosts,
    } = b;
    let fname = intern(&f.name);
    if let Some(why) = parac_core::codegen::opencl::unsupported(f) {
        return Err(unsupported(f, why));
    }
    // The model's plans are in the first program unless the policy names the plans itself.
    // A device that forces plans with one program builds every candidate's kernel at once.
    let prog = match policy {
        PlanPolicy::Force(_) | PlanPolicy::Fixed(..) if dev.one_program() => {
            dev.first_program(&f.name, prep.every_source(f), &prep.source)?
        }
        PlanPolicy::Baseline | PlanPolicy::Force(_) | PlanPolicy::Fixed(..) => {
            dev.program(&f.name, &prep.source, "")?
        }
        _ => dev.first_program(&f.name, prep.first_source(f, dev.target()), &prep.source)?,
    };
    let err = dev.alloc::<i32>("error flag", &[8usize])?;
    let shape = |m: usize| -> Vec<usize> { dims[m].iter().map(|d| (*d).max(0) as usize).collect() };
    // The host view of each matrix parameter, then the device matrices borrowing them.
    let mut by_param: Vec<Option<&mut HostArg>> = args.iter_mut().map(Some).collect();
    let mut srcs: Vec<Src> = Vec::with_capacity(f.matrices.len());
    for m in 0..f.matrices.len() {
        let i = f.params.iter().position(|p| *p == ParamRef::Matrix(m));
        srcs.push(match i.and_then(|i| by_param[i].take()) {
            Some(a) => Src::of(dev, f, m, a)?,
            None => Src::None,
        });
    }
    // A call whose matrices are all on the device and that reads no result back returns
    // without waiting for its kernels; its error flag is read at the next wait
    // (`opencl/pending.rs`).
    let waits = srcs.iter().any(|s| matches!(s, Src::In(_) | Src::Out(_)))
        || f.regions
            .iter()
            .any(|r| matches!(r.kind, RegionKind::Reduction { .. }));
    // Outputs that are regions of device matrices: the kernels write a staging matrix, copied
    // into the region once they are enqueued.
    let mut copy_back: Vec<(usize, ResOut)> = Vec::new();
    for (m, s) in srcs.iter_mut().enumerate() {
        if matches!(s, Src::DevOut(r) if r.is_region())
            && let Src::DevOut(r) = std::mem::replace(s, Src::None)
        {
            copy_back.push((m, r));
        }
    }
    let out_shape = |m: usize, got: &[usize]| {
        if got == shape(m) {
            Ok(())
        } else {
            Err(Error::Shape {
                function: fname,
                matrix: intern(&f.matrices[m].name),
                declared: "the shape the pipeline computed",
                expected: shape(m),
                got: got.to_vec(),
            })
        }
    };
    let swapped = f.swapped();
    let mut bufs: Vec<Option<Mat>> = Vec::with_capacity(f.matrices.len());
    for ((m, mat), src) in f.matrices.iter().enumerate().zip(srcs.iter_mut()) {
        let name = intern(&mat.name);
        let unsupported = || unsupported(f, format!("a matrix of {}", mat.elem));
        let buf = match (&mat.kind, src) {
            (MatrixKind::Input, Src::In(v)) => Some(Mat::input(dev, name, v)?),
            (MatrixKind::Output, Src::Out(v)) => Some(Mat::output(
                dev,
                name,
                v,
                &shape(m),
                prep.whole[m],
                !swapped[m],
            )?),
            (MatrixKind::Input, Src::DevIn(r)) => Some(r.mat(dev, name)?),
            // As a host output's, what the kernels do not write keeps its values.
            (MatrixKind::Output, Src::DevOut(r)) => {
                out_shape(m, r.shape())?;
                Some(r.mat())
            }
            (MatrixKind::Output, Src::None) => {
                let Some((_, r)) = copy_back.iter().find(|(i, _)| *i == m) else {
                    return Err(unsupported());
                };
                out_shape(m, r.shape())?;
                Some(r.staging(dev, name, prep.whole[m])?)
            }
            (MatrixKind::Local, _) => Some(Mat::Buf(
                DevBuf::alloc(dev, mat.elem, &mat.name, &shape(m), !prep.whole[m])
                    .ok_or_else(unsupported)??,
            )),
            (MatrixKind::Const(_), _) => None,
            _ => return Err(unsupported()),
        };
        bufs.push(buf);
    }
    let host_expr =
        |hosts: &[Val], e: &parac_core::ir::Expr| interp::host_expr(f, &sizes, hosts, e);
    let z: Vec<i32> = sizes.iter().map(|s| *s as i32).collect();
    let mut ret = None;
    let mut steps = Steps::new(&f.steps);
    // Where the swaps left each matrix's values (`time_steps::deliver`).
    let mut at: Vec<usize> = (0..f.matrices.len()).collect();
    // A time band ran the rest of this step's regions: skipped until its swaps.
    let mut banded = false;
    // A fused plan ran these regions (the next steps) with its own: skipped.
    let mut fused: Vec<usize> = Vec::new();
    // Producers whose searches wait for their consumers' first times (`Device::fused_search`):
    // each run again right after its consumers, once they have them, where what it reads is
    // as it was (nothing but its consumers ran between, and they write nothing it reads), so
    // that its search goes on in this call. A chain's producer waits for its two consumers,
    // the first of which may wait for the second: the latest first.
    let mut resume: Vec<Resume> = Vec::new();
    while let Some(step) = steps.next(|e| {
        host_expr(&hosts, e)
            .map(|v| v.as_i64())
            .map_err(|e| from_interp(f, e))
    })? {
        match step {
            HostStep::Swap(a, b) => {
                bufs.swap(*a, *b);
                at.swap(*a, *b);
                banded = false;
            }
            HostStep::Run(_) if banded => {}
            // A fused plan of the region before ran this one.
            HostStep::Run(rid) if fused.first() == Some(rid) => {
                fused.remove(0);
            }
            HostStep::Repeat { .. } => unreachable!("`Steps` runs a repeat's body"),
            HostStep::Run(rid) => {
                let rid = *rid;
                let r = &f.regions[rid];
                // A time band runs several steps of its repeat (`time_steps::plans_for`).
                let (plans, banding) = time_steps::plans_for(prep, rid, steps.left());
                let kargs =
                    |partials| kernel_args(&prep.args[rid], &bufs, &z, &hosts, &err, partials);
                match r.kind {
                    RegionKind::Iterator => {
                        // The host's proof (`interp::region_check`): accesses and divisors;
                        // where a time band may run the step's other regions, theirs too, and
                        // where a fused plan may run the next regions, theirs (the regions
                        // before them cannot fail: `lir::pass::fuse::gpu`).
                        let mates = if banding { &prep.mates[rid][..] } else { &[] };
                        let consumers = &prep.consumers[rid];
                        let mut proofs = std::iter::once(rid)
                            .chain(mates.iter().copied())
                            .chain(consumers.iter().copied());
                        let proven =
                            proofs.try_for_each(|r| interp::region_check(f, r, &sizes, &hosts));
                        if let Err(e) = proven {
                            // A flag an earlier call or region raised comes first: it happened
                            // before.
                            dev.check_pending()?;
                            dev.check_flag(&err, |w| flag_error(f, prep, &dims, w))?;
                            return Err(from_interp(f, e));
                        }
                        // `launch`: the iteration counts (the consumers' too) and the
                        // interior box of split plans.
                        let launch = |rid: usize| {
                            let r = &f.regions[rid];
                            let mut counts = Vec::new();
                            let mut starts = Vec::new();
                            for slot in &prep.slots[rid] {
                                let d = r.dims[*slot].as_ref().expect("slot");
                                let lo = host_expr(&hosts, &d.lo).map_err(|e| from_interp(f, e))?;
                                let hi = host_expr(&hosts, &d.hi).map_err(|e| from_interp(f, e))?;
                                counts.push(host::iterations(lo.as_i64(), hi.as_i64(), d.step));
                                starts.push((lo.as_i64(), d.step));
                            }
                            Ok::<_, Error>((counts, starts))
                        };
                        let (counts, starts) = launch(rid)?;
                        let theirs = consumers
                            .iter()
                            .map(|c| Ok::<_, Error>(launch(*c)?.0))
                            .collect::<Result<Vec<_>, _>>()?;
                        let interior = prep.bounds[rid]
                            .as_ref()
                            .map(|bs| opencl::interior(&counts, &starts, bs, &dims));
                        let a = kargs(None);
                        let space = (&counts[..], &theirs[..]);
                        let awaits = !consumers.is_empty()
                            && dev.fused_search(&prog, plans, policy, space) == Some(false);
                        let ran =
                            dev.run_region(&prog, plans, policy, space, interior.as_deref(), &a)?;
                        steps.skip(ran.steps - 1);
                        banded = ran.steps > 1;
                        if ran.fused {
                            fused = consumers.clone();
                        }
                        let mut waiting = std::mem::take(&mut resume);
                        while let Some((p, pplans, pcounts, ptheirs, pinterior)) = waiting.pop() {
                            // Something other than its consumers ran: not again.
                            if !prep.consumers[p].contains(&rid) {
                                continue;
                            }
                            // This region is one of `p`'s consumers, run: `p` again once they
                            // all have, its search now weighing its fused candidates (a fused
                            // one writes their outputs again, the same values).
                            let pa = kernel_args(&prep.args[p], &bufs, &z, &hosts, &err, None);
                            let pspace = (&pcounts[..], &ptheirs[..]);
                            // Not where a consumer still has no time (it was not searched).
                            if dev.fused_search(&prog, pplans, policy, pspace) == Some(true) {
                                let pi = pinterior.as_deref();
                                dev.run_region(&prog, pplans, policy, pspace, pi, &pa)?;
                            } else if prep.consumers[p].last() != Some(&rid) && !ran.fused {
                                // Its later consumers have yet to run.
                                resume.insert(0, (p, pplans, pcounts, ptheirs, pinterior));
                            }
                        }
                        if awaits && !ran.fused {
                            resume.push((rid, plans, counts, theirs, interior));
                        }
                    }
                    RegionKind::Reduction { .. } => {
                        let red = host::reduce_launch(f, rid).expect("a global operator");
                        let d = &dims[red.matrix];
                        let rows = host::reduction_rows(d);
                        let len = rows.max(1) * red.per_row;
                        let pb = DevBuf::alloc(dev, red.part, "partials", &[len], true)
                            .expect("partials of i32, u32 or f32")?;
                        let a = kargs(Some(&pb));
                        let n = dev
                            .run_region(&prog, plans, policy, (&[rows], &[]), None, &a)?
                            .partials;
                        let mut p = Data::zeros(red.part, len).expect("a partials type");
                        pb.download(dev, &[len], &mut p)?;
                        let used = (n * red.per_row).min(len);
                        let ty = f.scalars[red.result].ty;
                        let mean = red.op == parac_core::ir::ReduceOp::Mean;
                        let count = host::element_count(d);
                        if mean && count == 0 {
                            return Err(Error::DivisionByZero {
                                function: fname,
                                region: intern(&r.name),
                            });
                        }
                        // `launch`'s `(combine) as T`, or `(combine / n) as T` for a mean.
                        let value = match (red.partials, &p) {
                            (Partials::SumInt, Data::U32(p)) => {
                                let s = host::combine_sum_int(&p[..used]);
                                cast(Val::Int((if mean { s / count } else { s }) as i128), ty)
                            }
                            (Partials::SumF32, Data::F32(p)) => {
                                let s = host::combine_sum_f32(&p[..used]);
                                cast_f64(if mean { s / count as f64 } else { s }, ty)
                            }
                            (Partials::MinMaxF32, Data::F32(p)) => {
                                let p = &p[..used];
                                let v = if red.op == parac_core::ir::ReduceOp::Min {
                                    host::combine_min_f32(p)
                                } else {
                                    host::combine_max_f32(p)
                                };
                                cast(Val::F32(v), ty)
                            }
                            (Partials::MinMaxInt(_), Data::I32(p)) => {
                                let v = min_max_int(red.op, &p[..used], i32::MIN, i32::MAX);
                                cast(Val::Int(v), ty)
                            }
                            (Partials::MinMaxInt(_), Data::U32(p)) => {
                                let v = min_max_int(red.op, &p[..used], u32::MIN, u32::MAX);
                                cast(Val::Int(v), ty)
                            }
                            _ => unreachable!("partials of the layout's type"),
                        };
                        hosts[red.result] = value;
                    }
                }
            }
            HostStep::Let(s, e) => {
                let v = host_expr(&hosts, e).map_err(|e| from_interp(f, e))?;
                hosts[*s] = cast(v, f.scalars[*s].ty);
            }
            HostStep::Return(e) => {
                let v = host_expr(&hosts, e).map_err(|e| from_interp(f, e))?;
                ret = Some(match f.ret {
                    Some(t) => cast(v, t),
                    None => v,
                });
                break;
            }
        }
    }
    // Outputs whose values the swaps left in another matrix's storage: copied home (an
    // exchange through a scratch matrix where both are outputs).
    time_steps::deliver(f, &mut at, |mv| {
        let elem = f.matrices[mv.from].elem;
        let bytes = elem.bytes();
        let mat = |m: usize| {
            let b = bufs[m].as_ref().expect("a device matrix");
            (b.mem(), b.pitch())
        };
        if mv.exchange {
            let tmp = DevBuf::alloc(dev, elem, "swap", &shape(mv.from), false)
                .ok_or_else(|| unsupported(f, format!("a matrix of {elem}")))??;
            let t = (tmp.mem(), tmp.pitch());
            dev.copy_matrix(mat(mv.to), t, &shape(mv.from), bytes)?;
            dev.copy_matrix(mat(mv.from), mat(mv.to), &shape(mv.from), bytes)?;
            dev.copy_matrix(t, mat(mv.from), &shape(mv.from), bytes)?;
        } else {
            dev.copy_matrix(mat(mv.from), mat(mv.to), &shape(mv.from), bytes)?;
        }
        bufs.swap(mv.from, mv.to);
        Ok::<(), Error>(())
    })?;
    for (m, r) in &mut copy_back {
        r.copy_back(dev, bufs[*m].as_ref().expect("a staging matrix"))?;
    }
    if !waits {
        let table = FlagTable::of(f, prep, &dims);
        dev.defer_check(err, Box::new(move |e| table.error(e)))?;
        return Ok(ret);
    }
    // A raised error flag is the call's error, read back with the results; the flags of the
    // calls before it that did not wait come first.
    dev.check_pending()?;
    dev.check_flag(&err, |w| flag_error(f, prep, &dims, w))?;
    for m in bufs.into_iter().flatten() {
        if let Mat::Out(o) = m {
            o.finish()?;
        }
    }
    Ok(ret)
}

/// The kernel arguments `args` of a region (`opencl::args`), with `partials` for a global
/// operator.
/// A producer to run again after its consumers (`run`): its region, plans, iteration points,
/// its consumers' and its interior box.
type Resume<'p> = (
    usize,
    &'p opencl::RegionPlans,
    Vec<usize>,
    Vec<Vec<usize>>,
    Option<Vec<std::ops::Range<usize>>>,
);

fn kernel_args<'a>(
    args: &[KernelArg],
    bufs: &'a [Option<Mat>],
    z: &[i32],
    hosts: &[Val],
    err: &'a Buffer<i32>,
    partials: Option<&'a DevBuf>,
) -> Vec<opencl::Arg<'a>> {
    let buf = |m: usize| bufs[m].as_ref().expect("a device matrix");
    args.iter()
        .map(|a| match *a {
            KernelArg::Matrix(m) => opencl::Arg::Mem(buf(m).mem()),
            KernelArg::Pitch(m) => opencl::Arg::I32(buf(m).pitch() as i32),
            KernelArg::Size(i) => opencl::Arg::I32(z[i]),
            KernelArg::Host(h, t) => host_arg(hosts[h], t),
            KernelArg::ErrorFlag => opencl::Arg::Mem(err),
            KernelArg::Partials => opencl::Arg::Mem(partials.expect("a partials buffer").mem()),
        })
        .collect()
}

/// A host scalar as a kernel argument of type `t` (`opencl::args`: Rust's `as`).
fn host_arg(v: Val, t: Scalar) -> opencl::Arg<'static> {
    match t {
        Scalar::U32 => opencl::Arg::U32(v.as_i128() as u32),
        Scalar::I64 => opencl::Arg::I64(v.as_i64()),
        Scalar::U64 => opencl::Arg::U64(v.as_i128() as u64),
        Scalar::F32 => opencl::Arg::F32(v.as_f32()),
        _ => opencl::Arg::I32(v.as_i128() as i32),
    }
}
