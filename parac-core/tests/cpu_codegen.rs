//! The CPU path printed from the LIR (`codegen::cpu`) stays the size of the program, not of its
//! tree: the LIR shares sub-expressions (a window's elements, border chains, matrix products),
//! and printing them once per use made `border_shorthands` tens of megabytes. Every
//! `tests/in` program's expansion is held under a bound per program (its tokens as text,
//! unformatted; each bound about 1.3 times today's size), and a window with a 2-D border rule
//! prints its chain of rule entries once, however many elements the window has.

use parac_core::codegen::expand;
use parac_core::compile_str;

/// The expansion of `source`, as text.
fn expansion(source: &str) -> String {
    expand(&compile_str(source)).to_string()
}

#[test]
fn expansions_of_the_test_programs_stay_bounded() {
    // (program, bound in KB): 1.3 times the unformatted size, set when partitioned loops came
    // (their interior is printed twice more: an AVX2 copy, a plain copy, beside the checked
    // loop; 1.3x to 2.3x the earlier sizes).
    let bounds = [
        ("assignments", 135),
        ("block_ops", 222),
        ("border_blocks", 315),
        ("border_shorthands", 949),
        ("builtins", 212),
        ("const_matrices", 113),
        // With the second form of its rows into outputs it only writes, streamed (`slices`):
        // 57 KB, 52 without.
        ("control_flow", 74),
        ("global_reductions", 81),
        ("iterators", 92),
        // Its `h` fused into `down` (tasks of rows, the rows of `br1` computed once): 239 KB;
        // with the two stages apart beside them, under the model's test: 322 KB.
        ("laplacian_level", 420),
        // With its rows' streamed forms: 105 KB, 96 without.
        ("operators_casts", 136),
        ("params_sizes", 157),
        ("scalar_params", 85),
        ("vectors", 53),
        // Its downsampling reads as slices of chunks (`partition`'s chunk ends): 175 KB; with
        // its fused stages' apart copies beside them (the model's test): 211 KB.
        ("windows", 275),
    ];
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/in");
    let mut report = Vec::new();
    for (name, kb) in bounds {
        let src = std::fs::read_to_string(format!("{dir}/{name}.parac")).expect("a test program");
        let n = expansion(&src).len();
        report.push(format!("{name}: {} KB (bound {kb} KB)", n / 1024));
        assert!(n <= kb * 1024, "{}", report.join("\n"));
    }
    eprintln!("{}", report.join("\n"));
}

#[test]
fn a_bordered_window_prints_its_rule_chain_once() {
    let src = |k: usize| {
        format!(
            "fn f(a: &i32[M][N], o: &mut i32[M][N]) {{
                parac_border_rule r = reflect(a[2][2]);
                parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r) {{
                    o[itx][ity] = parac_matrix_sum(a[itx-2:{k}:1][ity-2:{k}:1]);
                }}
            }}"
        )
    };
    let (small, large) = (expansion(&src(2)), expansion(&src(5)));
    // 4 elements against 25: the per-element code grows, the shared chain does not.
    let per_element = (large.len() - small.len()) / 21;
    assert!(
        per_element < 2000,
        "{per_element} bytes per window element: the chain is printed per element"
    );
    assert_eq!(large.matches("let __b0 =").count(), 1, "one closure");
}

#[test]
fn non_finite_float_constants_print() {
    let c = compile_str(
        "fn f(o: &mut f32[N]) {
            parac_iterator it(0:N:1) { o[itx] = 1e39 - 1e39 * 2.0; }
        }",
    );
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let text = expand(&c).to_string();
    assert!(text.contains("f32 :: INFINITY"), "{text}");
}
