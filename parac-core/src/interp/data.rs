//! Host matrices: typed, row-major, contiguous element storage.

use super::value::{Val, cast};
use crate::ir::Scalar;

/// The elements of a matrix, row-major, in its element type.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// `u8`.
    U8(Vec<u8>),
    /// `i8`.
    I8(Vec<i8>),
    /// `u16`.
    U16(Vec<u16>),
    /// `i16`.
    I16(Vec<i16>),
    /// `u32`.
    U32(Vec<u32>),
    /// `i32`.
    I32(Vec<i32>),
    /// `i64` (not a matrix element type of the language; accepted for completeness).
    I64(Vec<i64>),
    /// `u64` (as `I64`).
    U64(Vec<u64>),
    /// `f32`.
    F32(Vec<f32>),
}

macro_rules! each {
    ($d:expr, $v:ident => $e:expr) => {
        match $d {
            Data::U8($v) => $e,
            Data::I8($v) => $e,
            Data::U16($v) => $e,
            Data::I16($v) => $e,
            Data::U32($v) => $e,
            Data::I32($v) => $e,
            Data::I64($v) => $e,
            Data::U64($v) => $e,
            Data::F32($v) => $e,
        }
    };
}

impl Data {
    /// `n` zeros of type `t` (`None` for `bool`, which no matrix holds).
    pub fn zeros(t: Scalar, n: usize) -> Option<Data> {
        Some(match t {
            Scalar::U8 => Data::U8(vec![0; n]),
            Scalar::I8 => Data::I8(vec![0; n]),
            Scalar::U16 => Data::U16(vec![0; n]),
            Scalar::I16 => Data::I16(vec![0; n]),
            Scalar::U32 => Data::U32(vec![0; n]),
            Scalar::I32 => Data::I32(vec![0; n]),
            Scalar::I64 => Data::I64(vec![0; n]),
            Scalar::U64 => Data::U64(vec![0; n]),
            Scalar::F32 => Data::F32(vec![0.0; n]),
            Scalar::Bool => return None,
        })
    }

    /// The element type.
    pub fn scalar(&self) -> Scalar {
        match self {
            Data::U8(_) => Scalar::U8,
            Data::I8(_) => Scalar::I8,
            Data::U16(_) => Scalar::U16,
            Data::I16(_) => Scalar::I16,
            Data::U32(_) => Scalar::U32,
            Data::I32(_) => Scalar::I32,
            Data::I64(_) => Scalar::I64,
            Data::U64(_) => Scalar::U64,
            Data::F32(_) => Scalar::F32,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        each!(self, v => v.len())
    }

    /// Whether it holds no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` (panics outside).
    pub fn get(&self, i: usize) -> Val {
        match self {
            Data::F32(v) => Val::F32(v[i]),
            Data::U8(v) => Val::Int(v[i] as i128),
            Data::I8(v) => Val::Int(v[i] as i128),
            Data::U16(v) => Val::Int(v[i] as i128),
            Data::I16(v) => Val::Int(v[i] as i128),
            Data::U32(v) => Val::Int(v[i] as i128),
            Data::I32(v) => Val::Int(v[i] as i128),
            Data::I64(v) => Val::Int(v[i] as i128),
            Data::U64(v) => Val::Int(v[i] as i128),
        }
    }

    /// Stores `x` converted to the element type (`as`) at `i` (panics outside).
    pub fn set(&mut self, i: usize, x: Val) {
        let t = self.scalar();
        let x = cast(x, t);
        match (self, x) {
            (Data::F32(v), x) => v[i] = x.as_f32(),
            (Data::U8(v), x) => v[i] = x.as_i128() as u8,
            (Data::I8(v), x) => v[i] = x.as_i128() as i8,
            (Data::U16(v), x) => v[i] = x.as_i128() as u16,
            (Data::I16(v), x) => v[i] = x.as_i128() as i16,
            (Data::U32(v), x) => v[i] = x.as_i128() as u32,
            (Data::I32(v), x) => v[i] = x.as_i128() as i32,
            (Data::I64(v), x) => v[i] = x.as_i128() as i64,
            (Data::U64(v), x) => v[i] = x.as_i128() as u64,
        }
    }
}

/// A host matrix: its shape (outermost first) and its elements, row-major and contiguous.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// The dimensions, outermost first.
    pub shape: Vec<usize>,
    /// The elements (`shape.iter().product()` of them).
    pub data: Data,
}

impl Tensor {
    /// A tensor, if `data` has as many elements as `shape` says.
    pub fn new(shape: impl Into<Vec<usize>>, data: Data) -> Option<Tensor> {
        let shape = shape.into();
        (shape.iter().product::<usize>() == data.len()).then_some(Tensor { shape, data })
    }

    /// A zero-filled tensor of element type `t` (`None` for `bool`).
    pub fn zeros(t: Scalar, shape: impl Into<Vec<usize>>) -> Option<Tensor> {
        let shape = shape.into();
        let data = Data::zeros(t, shape.iter().product())?;
        Some(Tensor { shape, data })
    }

    /// The element type.
    pub fn elem(&self) -> Scalar {
        self.data.scalar()
    }

    /// The row-major offset of `idx`, if it is inside.
    pub fn offset(&self, idx: &[usize]) -> Option<usize> {
        if idx.len() != self.shape.len() {
            return None;
        }
        let mut off = 0usize;
        for (i, d) in idx.iter().zip(&self.shape) {
            if i >= d {
                return None;
            }
            off = off * d + i;
        }
        Some(off)
    }

    /// The element at `idx` (panics outside).
    pub fn get(&self, idx: &[usize]) -> Val {
        self.data
            .get(self.offset(idx).expect("index inside the tensor"))
    }
}
