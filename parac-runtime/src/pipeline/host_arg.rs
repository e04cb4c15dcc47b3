//! Borrowed call arguments: what the device executor (`device.rs`) runs on, whether the call
//! comes from a [`Pipeline`](super::Pipeline) (its owned tensors, borrowed) or from the code
//! `parac!` emits (the caller's `MatrixRef`/`MatrixMut`s and scalars, borrowed as they are, so
//! that a device whose memory is the host's reads and writes them in place).

use std::borrow::Cow;

use parac_core::interp::{Arg, Data, Val, cast};
use parac_core::ir::Scalar;

use crate::layout::gather_strided;
use crate::{Element, Elements, ElementsMut, MatrixMut, MatrixRef, Pitch};

/// One argument of a call, in `Function::params` order.
pub enum HostArg<'a> {
    /// A matrix the pipeline reads: its shape, layout and elements (from the first to the
    /// last).
    In(&'a [usize], Pitch, Slice<'a>),
    /// A matrix the pipeline writes: its shape, layout and elements.
    Out(Cow<'a, [usize]>, Pitch, SliceMut<'a>),
    /// A scalar parameter.
    Scalar(Val),
}

/// The language's element types, each with its variant of [`Slice`]/[`SliceMut`] (the
/// generated code's matrices are of these; [`Element`] alone is open to other types).
pub trait Lang: Element {
    /// The type in the IR.
    const SCALAR: Scalar;
    /// `data` as a [`Slice`].
    fn slice(data: Elements<'_, Self>) -> Slice<'_>;
    /// `data` as a [`SliceMut`].
    fn slice_mut(data: ElementsMut<'_, Self>) -> SliceMut<'_>;
}

/// An enum of borrowed matrix elements (`$elements`: [`Elements`] or [`ElementsMut`]), one
/// variant per element type of the language, with its element type and length.
macro_rules! slice_enum {
    ($(#[$attr:meta])* $name:ident, $elements:ident, $($t:ty => $v:ident),*) => {
        $(#[$attr])*
        pub enum $name<'a> {
            $(#[doc = concat!("`", stringify!($t), "`.")]
            $v($elements<'a, $t>),)*
        }

        impl $name<'_> {
            /// The element type.
            pub fn elem(&self) -> Scalar {
                match self {
                    $($name::$v(_) => Scalar::$v,)*
                }
            }
            /// The number of elements from the first to the last, gaps included.
            pub fn len(&self) -> usize {
                match self {
                    $($name::$v($elements::Slice(d)) => d.len(),
                    $name::$v($elements::Strided(d)) => d.span(),
                    $name::$v($elements::Refused(_) | $elements::Device(_)) => 0,)*
                }
            }
            /// Whether there are no elements.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
            /// Whether the elements are on a device ([`DeviceMatrix`](crate::DeviceMatrix)).
            pub fn on_device(&self) -> bool {
                match self {
                    $($name::$v($elements::Device(_)) => true,)*
                    _ => false,
                }
            }
        }
    };
}

macro_rules! lang {
    ($($t:ty => $v:ident),*) => {
        $(impl Lang for $t {
            const SCALAR: Scalar = Scalar::$v;
            fn slice(data: Elements<'_, $t>) -> Slice<'_> {
                Slice::$v(data)
            }
            fn slice_mut(data: ElementsMut<'_, $t>) -> SliceMut<'_> {
                SliceMut::$v(data)
            }
        })*

        slice_enum!(
            /// The elements of a borrowed input matrix, in its element type (a slice, or a
            /// pointer and a layout for a matrix whose gaps between rows are not its own:
            /// [`Elements`]).
            #[derive(Clone)]
            Slice, Elements, $($t => $v),*
        );

        slice_enum!(
            /// The elements of a borrowed output matrix, in its element type.
            SliceMut, ElementsMut, $($t => $v),*
        );

        /// A copy of an input's elements and the pitch it is laid out in (a strided one
        /// gathered into rows without gaps); `None` for a refused layout.
        fn copy_in(s: &Slice, shape: &[usize], pitch: Pitch) -> Option<(Data, Pitch)> {
            Some(match s {
                $(Slice::$v(Elements::Slice(d)) => (Data::$v(d.to_vec()), pitch),
                Slice::$v(Elements::Strided(d)) => {
                    (Data::$v(gather_strided(d)), Pitch::contiguous(shape))
                }
                Slice::$v(Elements::Refused(_) | Elements::Device(_)) => return None,)*
            })
        }

        /// As `copy_in`, of an output (whose elements a function may read before it writes
        /// them).
        fn copy_out(s: &SliceMut, shape: &[usize], pitch: Pitch) -> Option<(Data, Pitch)> {
            Some(match s {
                $(SliceMut::$v(ElementsMut::Slice(d)) => (Data::$v(d.to_vec()), pitch),
                SliceMut::$v(ElementsMut::Strided(d)) => {
                    (Data::$v(gather_strided(&d.as_strided())), Pitch::contiguous(shape))
                }
                SliceMut::$v(ElementsMut::Refused(_) | ElementsMut::Device(_)) => return None,)*
            })
        }

        /// Borrows tensor data as a [`Slice`] (`None` for `i64`/`u64`, which no matrix of the
        /// language holds).
        fn data_slice(d: &Data) -> Option<Slice<'_>> {
            Some(match d {
                $(Data::$v(v) => Slice::$v(Elements::Slice(v)),)*
                Data::I64(_) | Data::U64(_) => return None,
            })
        }

        /// Borrows tensor data as a [`SliceMut`].
        fn data_slice_mut(d: &mut Data) -> Option<SliceMut<'_>> {
            Some(match d {
                $(Data::$v(v) => SliceMut::$v(ElementsMut::Slice(v)),)*
                Data::I64(_) | Data::U64(_) => return None,
            })
        }
    };
}
lang!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, f32 => F32);

impl HostArg<'_> {
    /// Whether the argument is a matrix on a device ([`DeviceMatrix`](crate::DeviceMatrix)).
    pub fn on_device(&self) -> bool {
        match self {
            HostArg::In(_, _, s) => s.on_device(),
            HostArg::Out(_, _, s) => s.on_device(),
            HostArg::Scalar(_) => false,
        }
    }

    /// An input matrix.
    pub fn input<T: Lang, M: MatrixRef<T> + ?Sized>(m: &M) -> HostArg<'_> {
        HostArg::In(m.shape(), Pitch::of(m), T::slice(m.elements()))
    }

    /// An output matrix. Its shape is copied before its elements are borrowed mutably (the
    /// two borrows of `m` cannot coexist); a `MatrixMut` whose `shape` and `as_mut_slice`
    /// disagree is refused by the call's length check.
    pub fn output<T: Lang, M: MatrixMut<T> + ?Sized>(m: &mut M) -> HostArg<'_> {
        let (shape, pitch) = (Cow::Owned(m.shape().to_vec()), Pitch::of(m));
        HostArg::Out(shape, pitch, T::slice_mut(m.elements_mut()))
    }

    /// A scalar parameter.
    pub fn scalar(v: impl IntoVal) -> HostArg<'static> {
        HostArg::Scalar(v.into_val())
    }

    /// What [`bind`](super::bind) checks of it: a matrix counts as many elements as its shape
    /// (the executor checks its layout against its slice, `Error::Layout`, before any launch).
    pub(crate) fn info(&self) -> ArgInfo<'_> {
        let len = |shape: &[usize], len: usize| {
            shape
                .iter()
                .try_fold(1usize, |a, d| a.checked_mul(*d))
                .unwrap_or(len)
        };
        match self {
            HostArg::In(shape, _, s) => ArgInfo::Matrix(s.elem(), shape, len(shape, s.len())),
            HostArg::Out(shape, _, s) => ArgInfo::Matrix(s.elem(), shape, len(shape, s.len())),
            HostArg::Scalar(v) => ArgInfo::Scalar(*v),
        }
    }
}

/// A call's argument copied, for a run that outlives the call (a warm-up on the background
/// thread, `warm.rs`).
pub(crate) enum OwnedArg {
    In(Vec<usize>, Pitch, Data),
    Out(Vec<usize>, Pitch, Data),
    Scalar(Val),
}

impl OwnedArg {
    /// A copy of `a`; `None` for a matrix whose layout is refused (the call reports it).
    pub(crate) fn of(a: &HostArg) -> Option<OwnedArg> {
        Some(match a {
            HostArg::In(shape, pitch, s) => {
                let (d, p) = copy_in(s, shape, *pitch)?;
                OwnedArg::In(shape.to_vec(), p, d)
            }
            HostArg::Out(shape, pitch, s) => {
                let (d, p) = copy_out(s, shape, *pitch)?;
                OwnedArg::Out(shape.to_vec(), p, d)
            }
            HostArg::Scalar(v) => OwnedArg::Scalar(*v),
        })
    }

    /// The copy, borrowed as the call's argument was.
    pub(crate) fn borrow(&mut self) -> HostArg<'_> {
        const LANG: &str = "copied from a matrix of the language";
        match self {
            OwnedArg::In(shape, pitch, d) => HostArg::In(shape, *pitch, data_slice(d).expect(LANG)),
            OwnedArg::Out(shape, pitch, d) => {
                HostArg::Out(Cow::Borrowed(shape), *pitch, data_slice_mut(d).expect(LANG))
            }
            OwnedArg::Scalar(v) => HostArg::Scalar(*v),
        }
    }
}

/// An argument as [`bind`](super::bind) checks it: a matrix's element type, shape and element
/// count, or a scalar's value.
#[derive(Clone, Copy)]
pub(crate) enum ArgInfo<'a> {
    Matrix(Scalar, &'a [usize], usize),
    Scalar(Val),
}

impl ArgInfo<'_> {
    pub(crate) fn of(a: &Arg) -> ArgInfo<'_> {
        match a {
            Arg::Matrix(t) => ArgInfo::Matrix(t.elem(), &t.shape, t.data.len()),
            Arg::Scalar(v) => ArgInfo::Scalar(*v),
        }
    }
}

/// Borrows a [`Pipeline`](super::Pipeline)'s owned arguments, already bound (so every matrix
/// holds one of the language's types): matrices the function writes as outputs
/// (`outputs[i]`), the others as inputs.
pub(crate) fn borrow_args<'a>(args: &'a mut [Arg], outputs: &[bool]) -> Vec<HostArg<'a>> {
    args.iter_mut()
        .zip(outputs)
        .map(|(a, out)| match a {
            Arg::Scalar(v) => HostArg::Scalar(*v),
            Arg::Matrix(t) => {
                let (shape, data) = (&t.shape, &mut t.data);
                const BOUND: &str = "bound: a matrix type of the language";
                let pitch = Pitch::contiguous(shape);
                if *out {
                    HostArg::Out(
                        Cow::Borrowed(shape),
                        pitch,
                        data_slice_mut(data).expect(BOUND),
                    )
                } else {
                    HostArg::In(shape, pitch, data_slice(data).expect(BOUND))
                }
            }
        })
        .collect()
}

/// A scalar argument's value.
pub trait IntoVal: Copy {
    /// The value, exactly.
    fn into_val(self) -> Val;
}

/// A function's return value in its Rust type.
pub trait FromVal: Sized {
    /// The value converted as the IR's `cast` does (it already has this type).
    fn from_val(v: Val) -> Self;
}

macro_rules! int_val {
    ($($t:ty => $s:ident),*) => {$(
        impl IntoVal for $t {
            fn into_val(self) -> Val {
                Val::Int(self as i128)
            }
        }
        impl FromVal for $t {
            fn from_val(v: Val) -> $t {
                cast(v, Scalar::$s).as_i128() as $t
            }
        }
    )*};
}
int_val!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, u64 => U64,
    i64 => I64);

impl IntoVal for f32 {
    fn into_val(self) -> Val {
        Val::F32(self)
    }
}

impl FromVal for f32 {
    fn from_val(v: Val) -> f32 {
        cast(v, Scalar::F32).as_f32()
    }
}

impl IntoVal for bool {
    fn into_val(self) -> Val {
        Val::Bool(self)
    }
}

impl FromVal for bool {
    fn from_val(v: Val) -> bool {
        v.truthy()
    }
}

impl FromVal for () {
    fn from_val(_: Val) {}
}

/// A call's return value in its Rust type (`()` for a function that returns nothing).
pub fn returned<T: FromVal>(v: Option<Val>) -> T {
    T::from_val(v.unwrap_or(Val::Int(0)))
}
