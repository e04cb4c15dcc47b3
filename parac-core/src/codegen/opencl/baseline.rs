//! The baseline plan's kernels: an iterator region's (one work-item per iteration point, the
//! interior body unchecked) and a global operator's (one partial result per row).

use super::*;

pub(super) fn iterator_kernel(out: &mut String, f: &Function, rid: RegionId) {
    let r = &f.regions[rid];
    let name = kernel_name(f, rid);
    // The first work-item's index per dimension comes as arguments (`o<d>`), and the runtime
    // launches this kernel with no global offset: PoCL compiles a kernel at its first launch for
    // each work-group size and again for a zero global offset, so a split plan's border strips
    // (one at the origin, the others not) would cost two compilations where they now cost one.
    let mut ps = params(f, r);
    ps.extend((0..cl_slots(r).len()).map(|cl| format!("int o{cl}")));
    let _ = writeln!(out, "__kernel void {name}({}) {{", ps.join(", "));
    let names = names::kernel_namer(f, rid, 1);
    let k = K::plain(f, r, true, &names);
    for (cl, slot) in cl_slots(r).iter().enumerate() {
        let d = r.dims[*slot].as_ref().expect("slot");
        let _ = writeln!(
            out,
            "    const int v{slot} = ({}) + ((int)get_global_id({cl}) + o{cl}) * {};\n    if (v{slot} >= ({})) return;",
            k.expr_pure(&d.lo),
            d.step,
            k.expr_pure(&d.hi)
        );
    }
    let bordered: Vec<AccessId> = (0..r.accesses.len()).filter(|a| k.bordered(*a)).collect();
    if bordered.is_empty() {
        let mut body = String::new();
        k.stmts(&mut body, &r.body, 1);
        out.push_str(&body);
    } else {
        // The interior: every bordered read inside its matrix, decided once per work-item.
        let mut conds = Vec::new();
        for a in &bordered {
            match k.inside(*a) {
                Some(c) => conds.push(c),
                None => {
                    conds = vec!["0".to_string()];
                    break;
                }
            }
        }
        let interior = K::plain(f, r, false, &names);
        let mut fast = String::new();
        interior.stmts(&mut fast, &r.body, 2);
        let mut slow = String::new();
        k.stmts(&mut slow, &r.body, 2);
        let _ = writeln!(
            out,
            "    if ({}) {{\n{fast}    }} else {{\n{slow}    }}",
            conds.join(" && ")
        );
    }
    out.push_str("}\n");
    border_helpers(out, f, rid, &name);
}

/// A reduced matrix as rows (every dimension but the last, multiplied) and columns, in C.
pub(super) fn rows_cols(f: &Function, rid: RegionId, m: MatrixId) -> (String, String) {
    let names = names::kernel_namer(f, rid, 1);
    let k = K::plain(f, &f.regions[rid], false, &names);
    let dims: Vec<String> = f.matrices[m].dims.iter().map(|d| k.expr_pure(d)).collect();
    let nd = dims.len();
    let rows = if nd == 1 {
        "1".to_string()
    } else {
        dims[..nd - 1].join(") * (")
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
    let (rows, cols) = rows_cols(f, rid, m);
    let t = cty(mat.elem);
    let (acc_t, init, step, store) = match (op, mat.elem.is_float()) {
        (ReduceOp::Sum | ReduceOp::Mean, true) => ("float", "0.0f", "s += v;", "out[row] = s;"),
        (ReduceOp::Sum | ReduceOp::Mean, false) => (
            "long",
            "0L",
            "s += (long)v;",
            "out[2 * row] = (uint)s; out[2 * row + 1] = (uint)(s >> 32);",
        ),
        (ReduceOp::Min, _) => ("ACC", "first", "s = min(s, (ACC)v);", "out[row] = s;"),
        (ReduceOp::Max, _) => ("ACC", "first", "s = max(s, (ACC)v);", "out[row] = s;"),
    };
    let promoted = cty(mat.elem.promote());
    let acc_t = if acc_t == "ACC" { promoted } else { acc_t };
    let step = step.replace("ACC", promoted);
    let out_t = match (op, mat.elem.is_float()) {
        (ReduceOp::Sum | ReduceOp::Mean, false) => "uint",
        _ => acc_t,
    };
    let init = if init == "first" {
        format!("({acc_t})m{m}[row * p{m}]")
    } else {
        init.to_string()
    };
    let _ = writeln!(
        out,
        "__kernel void {name}(__global const {t}* m{m}, int p{m}, {}__global {out_t}* out) {{\n    const int row = (int)get_global_id(0);\n    if (row >= ({rows})) return;\n    {acc_t} s = {init};\n    for (int j = 0; j < ({cols}); j++) {{\n        const {t} v = m{m}[row * p{m} + j];\n        {step}\n    }}\n    {store}\n}}",
        (0..f.sizes.len())
            .map(|i| format!("int z{i}, "))
            .collect::<String>()
    );
}
