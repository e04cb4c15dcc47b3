//! Tree reduction (`tree<L>`) of a global operator: each work-item reduces a strided share of
//! the matrix serially (rows by work-group, columns by work-item, so reads are coalesced),
//! then the work-group combines its `L` values as a tree in local memory, and work-item 0
//! writes the group's partial; the host combines the groups' partials exactly as the
//! baseline's per-row ones (integer sums: 64-bit, as two 32-bit halves).

use super::*;

pub(super) fn tree_kernel(
    out: &mut String,
    f: &Function,
    op: ReduceOp,
    m: MatrixId,
    v: &Schedule,
    name: &str,
) {
    let l = v.tree().unwrap_or(64).next_power_of_two();
    let mat = &f.matrices[m];
    let (rows, cols) = rows_cols(f, m);
    let t = cty(mat.elem);
    let float = mat.elem.is_float();
    let promoted = mat.elem.promote();
    let (acc_t, init, combine, store): (&str, String, &str, &str) = match (op, float) {
        (ReduceOp::Sum | ReduceOp::Mean, true) => ("float", "0.0f".into(), "a + b", "out[g] = s;"),
        (ReduceOp::Sum | ReduceOp::Mean, false) => (
            "long",
            "0L".into(),
            "a + b",
            "out[2 * g] = (uint)s; out[2 * g + 1] = (uint)(s >> 32);",
        ),
        (ReduceOp::Min, _) => (
            cty(promoted),
            identity(promoted, true),
            if float { "fmin(a, b)" } else { "min(a, b)" },
            "out[g] = s;",
        ),
        (ReduceOp::Max, _) => (
            cty(promoted),
            identity(promoted, false),
            if float { "fmax(a, b)" } else { "max(a, b)" },
            "out[g] = s;",
        ),
    };
    let out_t = match (op, float) {
        (ReduceOp::Sum | ReduceOp::Mean, false) => "uint",
        _ => acc_t,
    };
    let zs: String = (0..f.sizes.len()).map(|i| format!("int z{i}, ")).collect();
    let _ = writeln!(
        out,
        "__kernel __attribute__((reqd_work_group_size({l}, 1, 1)))\nvoid {name}(__global const {t}* m{m}, int p{m}, {zs}__global {out_t}* out) {{\n    __local {acc_t} sh[{l}];\n    const int lid = (int)get_local_id(0);\n    const int g = (int)get_group_id(0);\n    const int ng = (int)get_num_groups(0);\n    {acc_t} s = {init};\n    for (int row = g; row < ({rows}); row += ng) {{\n        for (int j = lid; j < ({cols}); j += {l}) {{\n            const {acc_t} a = s, b = ({acc_t})m{m}[row * p{m} + j];\n            s = {};\n        }}\n    }}\n    sh[lid] = s;\n    barrier(CLK_LOCAL_MEM_FENCE);\n    for (int o = {half}; o > 0; o >>= 1) {{\n        if (lid < o) {{\n            const {acc_t} a = sh[lid], b = sh[lid + o];\n            sh[lid] = {};\n        }}\n        barrier(CLK_LOCAL_MEM_FENCE);\n    }}\n    if (lid == 0) {{\n        s = sh[0];\n        {store}\n    }}\n}}",
        combine,
        combine,
        half = l / 2,
    );
}

/// The identity of `min` (`min` true) or `max` over a (promoted) type.
pub(super) fn identity(t: Scalar, min: bool) -> String {
    match (t, min) {
        (Scalar::F32, true) => "INFINITY".into(),
        (Scalar::F32, false) => "(-INFINITY)".into(),
        (Scalar::U32, true) => "UINT_MAX".into(),
        (Scalar::U32, false) => "0u".into(),
        (Scalar::I64, true) => "LONG_MAX".into(),
        (Scalar::I64, false) => "LONG_MIN".into(),
        (Scalar::U64, true) => "ULONG_MAX".into(),
        (Scalar::U64, false) => "0UL".into(),
        (_, true) => "INT_MAX".into(),
        (_, false) => "INT_MIN".into(),
    }
}
