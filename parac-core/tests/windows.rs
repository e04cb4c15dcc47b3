//! Compile cost against window size: a box mean over an `R x C` window with a shorthand border
//! (each mode), from 3x3 to 31x31 and 1x63 / 63x1, lowered for the CPU path and for OpenCL and
//! printed as the CPU path's Rust. Each must stay within a generous bound *linear in the
//! window's taps* (node counts and text length, not time: deterministic on any machine), so a
//! regression to the old growth (every tap testing every entry of the rule: taps x entries,
//! quartic in the window's side) fails here.

use parac_core::compile_str;
use parac_core::lir::{self, Options};

fn program(mode: &str, rows: usize, cols: usize) -> String {
    let (hr, hc) = (rows / 2, cols / 2);
    let value = if mode == "constant" { ", 7" } else { "" };
    let taps = rows * cols;
    format!(
        "pub fn boxf(src: &u8[H][W], dst: &mut u8[H][W]) {{
            parac_border_rule b = {mode}(src[{w0}][{w1}]{value});
            parac_iterator it(0:H:1; 0:W:1) parac_border_rule(b) {{
                dst[itx][ity] = (parac_matrix_sum(src[itx-{hr}:{rows}:1][ity-{hc}:{cols}:1]) + {half}) / {taps};
            }}
        }}",
        w0 = hr.max(1),
        w1 = hc.max(1),
        half = taps / 2,
    )
}

#[test]
fn compile_cost_is_linear_in_the_taps() {
    let shapes = [(3, 3), (7, 7), (15, 15), (31, 31), (1, 63), (63, 1)];
    for mode in ["reflect101", "constant", "wrap", "replicate", "reflect"] {
        for (rows, cols) in shapes {
            let src = program(mode, rows, cols);
            let out = compile_str(&src);
            assert!(
                out.diagnostics.is_empty(),
                "{mode} {rows}x{cols}: {:?}",
                out.diagnostics
            );
            let f = &out.module.functions[0];
            let taps = rows * cols;
            let cpu = lir::lower(f, &Options::default()).func;
            let gpu = lir::lower(f, &Options::gpu()).func;
            let text = parac_core::codegen::cpu::cpu_body(f).to_string().len();
            // Measured (2026-11-27): about 60-90 LIR nodes per tap on the CPU path, 90-120 on
            // OpenCL, 1,800-3,000 bytes of Rust (a tap's index and load in each copy of the
            // partitioned loop); the constants cover the loops, the guard and the host code.
            let what = format!("{mode} {rows}x{cols} ({taps} taps)");
            assert!(
                cpu.exprs.len() <= 150 * taps + 3_000,
                "{what}: CPU LIR {} nodes",
                cpu.exprs.len()
            );
            assert!(
                gpu.exprs.len() <= 200 * taps + 3_000,
                "{what}: OpenCL LIR {} nodes",
                gpu.exprs.len()
            );
            assert!(
                text <= 5_000 * taps + 60_000,
                "{what}: CPU path {text} bytes of Rust"
            );
        }
    }
}
