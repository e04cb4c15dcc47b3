/// An element type a ParaC matrix can hold: the types of the language (u8, i8, u16, i16, u32,
/// i32, f32).
pub trait Element: Copy + Default + Send + Sync + PartialEq + std::fmt::Debug + 'static {
    /// The type's name in ParaC (and in Rust).
    const NAME: &'static str;
}

macro_rules! element {
    ($($t:ty),*) => {$(impl Element for $t { const NAME: &'static str = stringify!($t); })*};
}
element!(u8, i8, u16, i16, u32, i32, f32);

/// A dense host matrix of 1 to 3 dimensions, row-major, contiguous.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix<T> {
    shape: Vec<usize>,
    data: Vec<T>,
}

impl<T: Element> Matrix<T> {
    /// A matrix of the given shape filled with zeros.
    pub fn zeros(shape: impl Into<Vec<usize>>) -> Self {
        let shape = shape.into();
        let n = shape.iter().product();
        Matrix {
            shape,
            data: vec![T::default(); n],
        }
    }

    /// A matrix over existing data; `None` if the length does not match the shape.
    pub fn from_vec(shape: impl Into<Vec<usize>>, data: Vec<T>) -> Option<Self> {
        let shape = shape.into();
        (shape.iter().product::<usize>() == data.len()).then_some(Matrix { shape, data })
    }

    /// The shape, outermost dimension first.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The elements, row-major.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The elements, row-major, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_vec_checks_length() {
        assert!(Matrix::<u8>::from_vec([2, 3], vec![0; 6]).is_some());
        assert!(Matrix::<u8>::from_vec([2, 3], vec![0; 5]).is_none());
        assert_eq!(Matrix::<f32>::zeros([2, 2]).as_slice(), &[0.0; 4]);
    }
}
