//! The OpenCL printer's names, through the one namer (`codegen::namer`): OpenCL C's reserved
//! words and the built-ins the kernels call, the program-scope names (the guard helpers, the
//! `__constant` matrices, kernels and bordered-load helpers), then per kernel the names the
//! printer spells from the function's entities (`m<m>`, `p<m>`, `z<i>`, `s<h>`, `v<slot>`,
//! `l<local>`, ...). The generated locals (`t<n>`, the lanes' shared loads `c<n>` and vector
//! loads `cv<n>`) are then handed out by one [`Namer`] per kernel, shared by every body it
//! holds (the interior and the border path, every lane, the slow path), so none can shadow
//! another name.

use super::*;
use crate::codegen::namer::Namer;

/// OpenCL C keywords, qualifiers and type names (separated by white space).
const KEYWORDS: &str = "auto break case char const continue default do double else enum extern
    float for goto if inline int long register restrict return short signed sizeof static struct
    switch typedef union unsigned void volatile while bool half uchar ushort uint ulong size_t
    ptrdiff_t intptr_t uintptr_t true false kernel __kernel global __global local __local
    constant __constant private __private read_only write_only read_write __attribute__ complex
    imaginary";

/// The built-ins and macros the kernels call, and the guard helpers of every program
/// (`GUARDS`).
const BUILTINS: &str = "get_global_id get_local_id get_group_id get_local_size get_num_groups
    get_global_size barrier CLK_LOCAL_MEM_FENCE atomic_cmpxchg min max fmin fmax clamp abs fabs
    sqrt exp log sin cos floor ceil round pow as_int as_long as_uint as_float vload2 vload4
    vload8 vload16 vstore2 vstore4 vstore8 vstore16 INFINITY INT_MAX INT_MIN UINT_MAX LONG_MAX
    LONG_MIN ULONG_MAX pc_oob PC_DIVS PC_DIVU pc_div_int pc_rem_int pc_div_uint pc_rem_uint
    pc_div_long pc_rem_long pc_div_ulong pc_rem_ulong";

/// The types a bordered-load helper of a matrix of `elem` is made for (a read as another type
/// calls the `int` one).
pub(super) fn load_types(elem: Scalar) -> [Scalar; 6] {
    [
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::F32,
        elem,
    ]
}

/// The namer of one kernel (or bordered-load helper) of region `rid` of `f`, with `lanes`
/// iteration points per work-item: reserved words, the program-scope names (the guard
/// helpers, the `__constant` matrices, every region's kernel, the region's bordered-load
/// helpers; a candidate's kernel name extends its region's), then every name the printer
/// spells in the kernel.
pub(super) fn kernel_namer(f: &Function, rid: RegionId, lanes: usize) -> RefCell<Namer> {
    let r = &f.regions[rid];
    let mut n = Namer::default();
    for w in KEYWORDS
        .split_whitespace()
        .chain(BUILTINS.split_whitespace())
    {
        n.reserve(w);
    }
    for r in 0..f.regions.len() {
        n.reserve(&kernel_name(f, r));
    }
    let kernel = kernel_name(f, rid);
    for (m, mat) in f.matrices.iter().enumerate() {
        if let MatrixKind::Const(_) = mat.kind {
            n.reserve(&format!("cst{m}"));
        }
        for t in load_types(mat.elem) {
            n.reserve(&format!("ld_{kernel}_m{m}_{}", cty(t)));
        }
        for p in ["m", "p", "tile", "tr", "tc"] {
            n.reserve(&format!("{p}{m}"));
        }
    }
    for i in 0..f.sizes.len() {
        n.reserve(&format!("z{i}"));
    }
    for h in 0..f.scalars.len() {
        n.reserve(&format!("s{h}"));
    }
    for s in 0..r.dims.len().max(3) {
        for p in ["v", "g", "w", "q", "i", "j", "e", "o"] {
            n.reserve(&format!("{p}{s}"));
        }
    }
    for l in 0..r.locals.len() {
        n.reserve(&format!("l{l}"));
        for lane in 0..lanes {
            n.reserve(&format!("l{l}_{lane}"));
        }
    }
    // Fixed names: the error flag, partials, loop counters of blocks, tiles and reductions.
    for w in [
        "err", "out", "bi", "bj", "bk", "i", "j", "gr", "gc", "row", "s", "v", "a", "b", "o", "g",
        "ng", "lid", "sh",
    ] {
        n.reserve(w);
    }
    RefCell::new(n)
}
