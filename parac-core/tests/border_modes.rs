//! The standard border modes desugar into rule entries whose source indices match the
//! textbook definitions (numpy.pad's `edge`, `symmetric`, `reflect`, `wrap`, `constant`),
//! in 1-D and 2-D with corners, for widths 1 to 3.

use parac_core::check::eval::{Env, Val, eval};
use parac_core::ir::{BorderEntry, ExprKind, Function, Sel, Sub};

/// Where position `p` of a dimension of size `n` reads from, by definition of the mode.
fn reference(mode: &str, p: i64, n: i64) -> i64 {
    match mode {
        "replicate" | "clamp" => p.clamp(0, n - 1),
        "reflect" if p < 0 => -p - 1,
        "reflect" => 2 * n - 1 - p,
        "reflect101" if p < 0 => -p,
        "reflect101" => 2 * n - 2 - p,
        "wrap" => p.rem_euclid(n),
        _ => unreachable!(),
    }
}

/// The position a selector names (`*` stands for an index inside, here 2).
fn position(sel: Sel, n: i64) -> i64 {
    match sel {
        Sel::Star => 2,
        Sel::Before(k) => -(k as i64),
        Sel::After(k) => n - 1 + k as i64,
    }
}

fn compile(src: &str) -> Function {
    let out = parac_core::compile_str(src);
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    out.module.functions.into_iter().next().unwrap()
}

fn source_index(f: &Function, e: &BorderEntry, env: &Env, sizes: &[i64]) -> Vec<i64> {
    assert!(matches!(e.value.kind, ExprKind::Load(0)));
    e.accesses[0]
        .subs
        .iter()
        .zip(&e.sels)
        .enumerate()
        .map(|(d, (sub, sel))| match sub {
            Sub::Star => position(*sel, sizes[d]),
            Sub::Point(ix) => eval(ix, env).and_then(Val::int).expect("index evaluates"),
            Sub::Window { .. } => panic!("window in border value of {}", f.name),
        })
        .collect()
}

const MODES: [&str; 5] = ["replicate", "clamp", "reflect", "reflect101", "wrap"];

#[test]
fn one_dimensional_modes_match_definitions() {
    for mode in MODES {
        for w in 1..=3u32 {
            let f = compile(&format!(
                "fn f(v: &u8[N], o: &mut u8[N]) {{
                    parac_border_rule b = {mode}(v[{w}]);
                    parac_iterator it(0:N:1) parac_border_rule(b) {{ o[itx] = v[itx-{w}] + v[itx+{w}]; }}
                }}"
            ));
            let rule = &f.rules[0];
            assert_eq!(rule.entries.len(), 2 * w as usize, "{mode} width {w}");
            for n in [4i64, 5, 7] {
                let env = Env {
                    sizes: vec![n],
                    ..Env::default()
                };
                for e in &rule.entries {
                    let p = position(e.sels[0], n);
                    let got = source_index(&f, e, &env, &[n]);
                    assert_eq!(got, vec![reference(mode, p, n)], "{mode} w={w} n={n} p={p}");
                }
            }
        }
    }
}

#[test]
fn two_dimensional_modes_match_definitions_with_corners() {
    for mode in MODES {
        for w in 1..=3u32 {
            let f = compile(&format!(
                "fn f(s: &i16[M][N], o: &mut i16[M][N]) {{
                    parac_border_rule b = {mode}(s[{w}][{w}]);
                    parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {{
                        o[itx][ity] = parac_matrix_sum(s[itx-{w}:{}:1][ity-{w}:{}:1]);
                    }}
                }}",
                2 * w + 1,
                2 * w + 1
            ));
            let rule = &f.rules[0];
            let w = w as usize;
            assert_eq!(
                rule.entries.len(),
                2 * 2 * w + 4 * w * w,
                "{mode} width {w}"
            );
            for (m, n) in [(4i64, 5i64), (6, 6), (7, 9)] {
                let env = Env {
                    sizes: vec![m, n],
                    ..Env::default()
                };
                for e in &rule.entries {
                    let (pr, pc) = (position(e.sels[0], m), position(e.sels[1], n));
                    let want = vec![
                        if e.sels[0] == Sel::Star {
                            pr
                        } else {
                            reference(mode, pr, m)
                        },
                        if e.sels[1] == Sel::Star {
                            pc
                        } else {
                            reference(mode, pc, n)
                        },
                    ];
                    assert_eq!(
                        source_index(&f, e, &env, &[m, n]),
                        want,
                        "{mode} {:?} at {m}x{n}",
                        e.sels
                    );
                }
            }
        }
    }
}

#[test]
fn constant_mode_gives_the_value_everywhere_including_corners() {
    let f = compile(
        "fn f(s: &u8[M][N], o: &mut u8[M][N]) {
            parac_border_rule b = constant(s[2][1], 7);
            parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) {
                o[itx][ity] = parac_matrix_max(s[itx-2:5:1][ity-1:3:1]);
            }
        }",
    );
    let rule = &f.rules[0];
    assert_eq!(rule.entries.len(), 4 + 2 + 4 * 2);
    for e in &rule.entries {
        assert!(e.accesses.is_empty());
        assert_eq!(eval(&e.value, &Env::default()), Some(Val::I(7)));
    }
}

#[test]
fn one_sided_shorthand_covers_only_its_dimension() {
    // Rows only: a column access outside the image is an error that names the side.
    let out = parac_core::compile_str(
        "fn f(s: &u8[M][N], o: &mut u8[M][N]) {
            parac_border_rule b = wrap(s[1][*]);
            parac_iterator it(0:M:1; 0:N:1) parac_border_rule(b) { o[itx][ity] = s[itx-1][ity-1]; }
        }",
    );
    assert_eq!(out.diagnostics.len(), 1, "{:?}", out.diagnostics);
    assert!(
        out.diagnostics[0]
            .message
            .contains("1 column left of the first column"),
        "{}",
        out.diagnostics[0].message
    );
}
