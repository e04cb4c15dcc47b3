//! Compile cost against window size: a box mean over an `R x C` window with a shorthand border
//! (each mode), from 3x3 to 63x63 and 1x63 / 63x1, lowered for the CPU path and for OpenCL and
//! printed as the CPU path's Rust. Node counts and text length, not time (deterministic on any
//! machine):
//! - windows written out (every tap an expression, `unroll_taps` past the window) stay within a
//!   generous bound *linear in the taps*, so a regression to the old growth (every tap testing
//!   every entry of the rule: taps x entries, quartic in the window's side) fails here;
//! - with the default threshold, a window past it is a loop: its cost does not grow with it.

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
fn compile_cost_is_linear_in_the_taps_written_out() {
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
            let all = usize::MAX;
            let cpu = lir::lower(
                f,
                &Options {
                    unroll_taps: all,
                    ..Options::default()
                },
            )
            .func;
            let gpu = lir::lower(
                f,
                &Options {
                    unroll_taps: all,
                    ..Options::gpu()
                },
            )
            .func;
            let text = lir::print(&cpu).len();
            // Measured: about 60-90 LIR nodes per tap on the CPU path, 90-120 on
            // OpenCL (a tap's index and load in each copy of the partitioned loop); the
            // constants cover the loops, the guard and the host code.
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

#[test]
fn windows_past_the_threshold_cost_the_same_whatever_their_size() {
    for mode in ["reflect101", "constant", "wrap", "replicate", "reflect"] {
        let mut sizes = Vec::new();
        for n in [9, 15, 31, 63] {
            let src = program(mode, n, n);
            let out = compile_str(&src);
            assert!(
                out.diagnostics.is_empty(),
                "{mode} {n}x{n}: {:?}",
                out.diagnostics
            );
            let f = &out.module.functions[0];
            // Not slid: slid (the CPU default), the window's rows and columns are written out
            // over a row, linear in its side (`lir::pass::slide`), checked below.
            let direct = Options {
                slide: false,
                ..Options::default()
            };
            let cpu = lir::lower(f, &direct).func.exprs.len();
            let slid = lir::lower(f, &Options::default()).func.exprs.len();
            assert!(slid <= 400 * n + 2_000, "{mode} {n}x{n} slid: {slid} nodes");
            let gpu = lir::lower(f, &Options::gpu()).func.exprs.len();
            let text = parac_core::codegen::cpu::cpu_body(f).to_string().len();
            assert!(
                text <= 20_000 * n + 50_000,
                "{mode} {n}x{n}: {text} bytes of Rust"
            );
            sizes.push((n, cpu, gpu, text));
        }
        let (_, c0, g0, t0) = sizes[0];
        for (n, c, g, t) in sizes {
            // The same loop nest; only constants (the counts, the border's widths) change.
            assert!(
                c <= c0 + 50 && g <= g0 + 50,
                "{mode} {n}x{n}: {c} / {g} nodes, {t} bytes, against {c0} / {g0} / {t0} at 9x9"
            );
        }
    }
}
