//! The baseline plan's kernel of a global operator (one partial result per row); an iterator
//! region's is printed from the loop IR (`kernel/`).

use super::*;

/// A reduced matrix as rows (every dimension but the last, multiplied) and columns, in C.
pub(super) fn rows_cols(f: &Function, m: MatrixId) -> (String, String) {
    let dims: Vec<String> = f.matrices[m]
        .dims
        .iter()
        .map(|d| super::kernel::extent(f, d))
        .collect();
    let nd = dims.len();
    let rows = if nd == 1 {
        "1".to_string()
    } else {
        dims[..nd - 1].join(" * ")
    };
    (rows, dims[nd - 1].clone())
}

pub(super) fn reduction_kernel(
    out: &mut String,
    f: &Function,
    rid: RegionId,
    op: ReduceOp,
    m: MatrixId,
) {
    let name = kernel_name(f, rid);
    let mat = &f.matrices[m];
    let (rows, cols) = rows_cols(f, m);
    let t = cty(mat.elem);
    let (acc_t, init, step, store) = match (op, mat.elem.is_float()) {
        (ReduceOp::Sum | ReduceOp::Mean, true) => ("float", "0.0f", "s += v;", "out[row] = s;"),
        (ReduceOp::Sum | ReduceOp::Mean, false) => (
            "long",
            "0L",
            "s += (long)v;",
            "out[2 * row] = (uint)s; out[2 * row + 1] = (uint)(s >> 32);",
        ),
        (ReduceOp::Min, _) => ("ACC", "min", "s = min(s, (ACC)v);", "out[row] = s;"),
        (ReduceOp::Max, _) => ("ACC", "max", "s = max(s, (ACC)v);", "out[row] = s;"),
    };
    let promoted = cty(mat.elem.promote());
    let acc_t = if acc_t == "ACC" { promoted } else { acc_t };
    let step = step.replace("ACC", promoted);
    let out_t = match (op, mat.elem.is_float()) {
        (ReduceOp::Sum | ReduceOp::Mean, false) => "uint",
        _ => acc_t,
    };
    // A row's minimum or maximum from the identity (a row of no columns reads nothing: its
    // partial result is the identity, as the interpreter's and the tree plans' are).
    let init = match init {
        "min" | "max" => super::reduce::identity(mat.elem.promote(), init == "min"),
        _ => init.to_string(),
    };
    let _ = writeln!(
        out,
        "__kernel void {name}(__global const {t}* m{m}, int p{m}, {}__global {out_t}* out) {{\n    const int row = (int)get_global_id(0);\n    if (row >= ({rows})) return;\n    {acc_t} s = {init};\n    for (int j = 0; j < ({cols}); j++) {{\n        const {t} v = m{m}[row * p{m} + j];\n        {step}\n    }}\n    {store}\n}}",
        (0..f.sizes.len())
            .map(|i| format!("int z{i}, "))
            .collect::<String>()
    );
}
