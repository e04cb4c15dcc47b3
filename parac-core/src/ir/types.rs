//! Scalar types and the C promotion rules (as OpenCL C applies them).

/// A scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// Result of comparisons; `0`/`1` in arithmetic.
    Bool,
    /// `u8` (OpenCL `uchar`).
    U8,
    /// `i8` (OpenCL `char`).
    I8,
    /// `u16` (OpenCL `ushort`).
    U16,
    /// `i16` (OpenCL `short`).
    I16,
    /// `u32` (OpenCL `uint`).
    U32,
    /// `i32` (OpenCL `int`).
    I32,
    /// `i64` (OpenCL `long`).
    I64,
    /// `u64` (OpenCL `ulong`).
    U64,
    /// `f32` (OpenCL `float`).
    F32,
}

use Scalar::*;

impl Scalar {
    /// Parses a type name as written in ParaC.
    pub fn from_name(name: &str) -> Option<Scalar> {
        Some(match name {
            "bool" => Bool,
            "u8" => U8,
            "i8" => I8,
            "u16" => U16,
            "i16" => I16,
            "u32" => U32,
            "i32" => I32,
            "i64" => I64,
            "u64" => U64,
            "f32" => F32,
            _ => return None,
        })
    }

    /// The ParaC (Rust) name.
    pub fn name(self) -> &'static str {
        match self {
            Bool => "bool",
            U8 => "u8",
            I8 => "i8",
            U16 => "u16",
            I16 => "i16",
            U32 => "u32",
            I32 => "i32",
            I64 => "i64",
            U64 => "u64",
            F32 => "f32",
        }
    }

    /// The OpenCL C name.
    pub fn cl_name(self) -> &'static str {
        match self {
            Bool => "int",
            U8 => "uchar",
            I8 => "char",
            U16 => "ushort",
            I16 => "short",
            U32 => "uint",
            I32 => "int",
            I64 => "long",
            U64 => "ulong",
            F32 => "float",
        }
    }

    /// The size of a value in bytes (`bool`: 1).
    pub fn bytes(self) -> usize {
        match self {
            Scalar::Bool | Scalar::U8 | Scalar::I8 => 1,
            Scalar::U16 | Scalar::I16 => 2,
            Scalar::U32 | Scalar::I32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 => 8,
        }
    }

    /// True for the types a matrix can hold.
    pub fn is_element(self) -> bool {
        matches!(self, U8 | I8 | U16 | I16 | U32 | I32 | F32)
    }

    /// True for `f32`.
    pub fn is_float(self) -> bool {
        self == F32
    }

    /// True for the integer types (not `bool`).
    pub fn is_int(self) -> bool {
        !matches!(self, F32 | Bool)
    }

    /// The value range of an integer type (`bool` is 0..=1); `None` for `f32`.
    pub fn range(self) -> Option<(i128, i128)> {
        Some(match self {
            Bool => (0, 1),
            U8 => (0, u8::MAX as i128),
            I8 => (i8::MIN as i128, i8::MAX as i128),
            U16 => (0, u16::MAX as i128),
            I16 => (i16::MIN as i128, i16::MAX as i128),
            U32 => (0, u32::MAX as i128),
            I32 => (i32::MIN as i128, i32::MAX as i128),
            I64 => (i64::MIN as i128, i64::MAX as i128),
            U64 => (0, u64::MAX as i128),
            F32 => return None,
        })
    }

    /// C integer promotion: types narrower than `int` (and `bool`) become `i32`.
    pub fn promote(self) -> Scalar {
        match self {
            Bool | U8 | I8 | U16 | I16 => I32,
            t => t,
        }
    }

    fn rank(self) -> u8 {
        match self {
            I32 => 1,
            U32 => 2,
            I64 => 3,
            U64 => 4,
            _ => 0,
        }
    }

    /// The usual arithmetic conversions of C for a binary operator.
    pub fn arith(a: Scalar, b: Scalar) -> Scalar {
        let (a, b) = (a.promote(), b.promote());
        if a == F32 || b == F32 {
            return F32;
        }
        if a.rank() >= b.rank() { a } else { b }
    }
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A block's extent in one dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Len {
    /// A constant from 1 to 64: the block can be written out element by element.
    Const(u32),
    /// A host expression of sizes and scalars, or a constant past 64 (`Function::lens`, by
    /// index; one index per expression text): the block is read tap by tap, in a loop.
    Host(usize),
}

impl Len {
    /// The extent, where it is a constant that can be written out.
    pub fn known(self) -> Option<u32> {
        match self {
            Len::Const(n) => Some(n),
            Len::Host(_) => None,
        }
    }
}

impl std::fmt::Display for Len {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Len::Const(n) => write!(f, "{n}"),
            Len::Host(i) => write!(f, "L{i}"),
        }
    }
}

/// The type of an expression: a scalar, or a block (a matrix value; its shape is known at
/// compile time, or given by host expressions).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// A scalar.
    Scalar(Scalar),
    /// A `rows x cols` block of `elem`.
    Block {
        /// Element type.
        elem: Scalar,
        /// Rows.
        rows: Len,
        /// Columns.
        cols: Len,
    },
}

impl Type {
    /// The scalar type, or the element type of a block.
    pub fn elem(self) -> Scalar {
        match self {
            Type::Scalar(s) => s,
            Type::Block { elem, .. } => elem,
        }
    }

    /// True for a block.
    pub fn is_block(self) -> bool {
        matches!(self, Type::Block { .. })
    }

    /// A block's constant shape, where both extents are constants (`None` for a scalar).
    pub fn shape(self) -> Option<(usize, usize)> {
        match self {
            Type::Block { rows, cols, .. } => {
                Some((rows.known()? as usize, cols.known()? as usize))
            }
            Type::Scalar(_) => None,
        }
    }

    /// True for a block with an extent of `Len::Host` (read tap by tap only).
    pub fn is_long(self) -> bool {
        matches!(self, Type::Block { rows, cols, .. } if rows.known().is_none() || cols.known().is_none())
    }
}

impl std::fmt::Display for Type {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Type::Scalar(s) => write!(f, "{s}"),
            Type::Block { elem, rows, cols } => write!(f, "{elem}[{rows}][{cols}]"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_promotion_rules() {
        assert_eq!(Scalar::arith(U8, U8), I32);
        assert_eq!(Scalar::arith(U16, I16), I32);
        assert_eq!(Scalar::arith(U32, I32), U32);
        assert_eq!(Scalar::arith(I64, U32), I64);
        assert_eq!(Scalar::arith(U64, I64), U64);
        assert_eq!(Scalar::arith(F32, I64), F32);
        assert_eq!(Scalar::arith(Bool, U8), I32);
    }
}
