//! The error flag of a call on OpenCL: what each raised code stands for (`safety::flag_codes`),
//! as the call's typed error.

use parac_core::codegen::safety::Flag;
use parac_core::ir::Function;

use super::{Prepared, intern};
use crate::Error;

/// What a raised flag of a call stands for, owned (`Send`): read at the end of the call or at
/// a later wait (`opencl/pending.rs`).
pub(super) struct FlagTable {
    function: &'static str,
    regions: Vec<&'static str>,
    matrices: Vec<&'static str>,
    codes: std::sync::Arc<[(i32, Flag)]>,
    dims: Vec<Vec<i64>>,
}

impl FlagTable {
    pub(super) fn of(f: &Function, prep: &Prepared, dims: &[Vec<i64>]) -> FlagTable {
        FlagTable {
            function: intern(&f.name),
            regions: f.regions.iter().map(|r| intern(&r.name)).collect(),
            matrices: f.matrices.iter().map(|m| intern(&m.name)).collect(),
            codes: prep.flag_codes(f),
            dims: dims.to_vec(),
        }
    }

    /// The error the raised flag `e` (its words) stands for (`safety::flag_codes`).
    pub(super) fn error(&self, e: &[i32]) -> Error {
        let function = self.function;
        let flag = self.codes.iter().find(|(c, _)| *c == e[0]).map(|(_, f)| *f);
        match flag {
            Some(Flag::OutOfBounds {
                region,
                what,
                matrix,
                indices,
            }) => Error::OutOfBounds {
                function,
                region: self.regions[region],
                what,
                matrix: self.matrices[matrix],
                index: e[1..1 + indices].iter().map(|i| *i as i64).collect(),
                shape: self.dims[matrix]
                    .iter()
                    .map(|d| (*d).max(0) as usize)
                    .collect(),
            },
            Some(Flag::DivisionByZero { region }) => Error::DivisionByZero {
                function,
                region: self.regions[region],
            },
            None => Error::OutOfBounds {
                function,
                region: "(unknown)",
                what: "access to",
                matrix: "(unknown)",
                index: Vec::new(),
                shape: Vec::new(),
            },
        }
    }
}

/// The error a raised flag `e` of a call of `f` stands for.
pub(super) fn flag_error(f: &Function, prep: &Prepared, dims: &[Vec<i64>], e: &[i32]) -> Error {
    FlagTable::of(f, prep, dims).error(e)
}
