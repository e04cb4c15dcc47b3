//! What the front end understands of small programs: types under C's promotion rules, block
//! shapes, names of index variables, size binding, host steps, and error collection.

use parac_core::compile_str;
use parac_core::ir::{
    ExprKind, HostStep, KStmt, Len, MatrixKind, RegionKind, Scalar, Type, display::dump,
};

fn ok(src: &str) -> parac_core::ir::Function {
    let out = compile_str(src);
    assert!(
        out.diagnostics.is_empty(),
        "unexpected errors: {:#?}",
        out.diagnostics
            .iter()
            .map(|d| &d.message)
            .collect::<Vec<_>>()
    );
    out.module.functions.into_iter().next().unwrap()
}

fn errors(src: &str) -> Vec<String> {
    compile_str(src)
        .diagnostics
        .into_iter()
        .map(|d| d.message)
        .collect()
}

/// The type of the value stored by the first store of the first region.
fn stored_type(src: &str, local: usize) -> Type {
    let f = ok(src);
    let mut ty = None;
    KStmt::walk(&f.regions[0].body, &mut |s, _| {
        if let KStmt::Let(l, _) = s
            && *l == local
            && ty.is_none()
        {
            ty = Some(f.regions[0].locals[*l].ty);
        }
    });
    ty.expect("a let")
}

fn let_type(expr: &str) -> Type {
    stored_type(
        &format!(
            "fn f(a: &u8[M][N], b: &u16[M][N], c: &u32[M][N], d: &f32[M][N], o: &mut i32[M][N]) {{
                parac_iterator it(2:M/2-2:1; 2:N/2-2:1) {{ let v = {expr}; o[itx][ity] = 0; }}
            }}"
        ),
        0,
    )
}

#[test]
fn c_promotion_rules_type_expressions() {
    let s = |t| Type::Scalar(t);
    assert_eq!(let_type("a[itx][ity] + a[itx][ity]"), s(Scalar::I32));
    assert_eq!(let_type("a[itx][ity] * b[itx][ity]"), s(Scalar::I32));
    assert_eq!(let_type("c[itx][ity] + 1"), s(Scalar::U32));
    assert_eq!(let_type("d[itx][ity] + 1"), s(Scalar::F32));
    assert_eq!(let_type("a[itx][ity] as i64 + c[itx][ity]"), s(Scalar::I64));
    assert_eq!(let_type("a[itx][ity] < 3"), s(Scalar::Bool));
    assert_eq!(let_type("b[itx][ity] >> 2"), s(Scalar::I32));
    assert_eq!(let_type("3000000000"), s(Scalar::I64));
    assert_eq!(let_type("7u8"), s(Scalar::U8));
    assert_eq!(let_type("1.5"), s(Scalar::F32));
    assert_eq!(let_type("min(a[itx][ity], c[itx][ity])"), s(Scalar::U32));
    assert_eq!(let_type("abs(a[itx][ity] - 200)"), s(Scalar::I32));
    assert_eq!(let_type("sqrt(a[itx][ity])"), s(Scalar::F32));
    assert_eq!(
        let_type("a[itx:3:1][ity:3:1]"),
        Type::Block {
            elem: Scalar::U8,
            rows: Len::Const(3),
            cols: Len::Const(3),
        }
    );
    assert_eq!(
        let_type("parac_matrix_sum(a[itx:3:1][ity:3:1])"),
        s(Scalar::I32)
    );
    assert_eq!(
        let_type("parac_matrix_max(d[itx:2:1][ity])"),
        s(Scalar::F32)
    );
}

#[test]
fn window_shapes_count_points_as_one() {
    assert_eq!(
        let_type("a[itx][ity-2:5:1]"),
        Type::Block {
            elem: Scalar::U8,
            rows: Len::Const(1),
            cols: Len::Const(5),
        }
    );
    assert_eq!(
        let_type("a[itx*2-2:5:1][ity]"),
        Type::Block {
            elem: Scalar::U8,
            rows: Len::Const(5),
            cols: Len::Const(1),
        }
    );
    assert_eq!(
        let_type("transe(a[itx:2:1][ity:3:2])"),
        Type::Block {
            elem: Scalar::U8,
            rows: Len::Const(3),
            cols: Len::Const(2),
        }
    );
    assert_eq!(
        let_type("a[itx:4:1][ity:2:1] * a[itx:2:1][ity:3:1]"),
        Type::Block {
            elem: Scalar::I32,
            rows: Len::Const(4),
            cols: Len::Const(3),
        }
    );
    assert_eq!(
        let_type("2.0 * a[itx:2:1][ity:2:1]"),
        Type::Block {
            elem: Scalar::F32,
            rows: Len::Const(2),
            cols: Len::Const(2),
        }
    );
}

#[test]
fn chained_assignment_converts_like_c() {
    // `o = h = e`: h gets (u8)e, o gets (i32)(u8)e, so o sees the wrapped value.
    let f = ok("fn f(a: &u8[M][N], o: &mut i32[M][N], h: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) { o[itx][ity] = h[itx][ity] = a[itx][ity] + 200; }
    }");
    let text = dump(&parac_core::ir::Module { functions: vec![f] });
    assert!(
        text.contains("let __chain0: u8 = ((a[itx][ity] as i32) + 200) as u8"),
        "{text}"
    );
    assert!(text.contains("h[itx][ity] = __chain0"), "{text}");
    assert!(text.contains("o[itx][ity] = __chain0 as i32"), "{text}");
}

#[test]
fn sizes_are_bound_from_bare_dimensions() {
    let f = ok(
        "fn f(a: &u8[(M+1)/2][N], b: &u8[M][N], o: &mut u8[(M+1)/2][N]) {
        parac_iterator it(0:(M+1)/2:1; 0:N:1) { o[itx][ity] = a[itx][ity]; }
    }",
    );
    let names: Vec<_> = f
        .sizes
        .iter()
        .map(|s| (s.name.as_str(), s.bound_by))
        .collect();
    assert_eq!(names, vec![("N", (0, 1)), ("M", (1, 0))]);
    assert_eq!(
        errors("fn f(a: &u8[(K+1)/2][N]) {}"),
        vec!["cannot find `K` in this pipeline".to_string()]
    );
}

#[test]
fn index_variables_follow_the_paper_or_their_names() {
    let f = ok(
        "fn f(a: &f32[C][M][N], o: &mut f32[C][M][N], r: &mut f32[N]) {
        parac_iterator it(0:C:1; 0:M:1; 0:N:1) { o[itx][ity][itz] = a[itx][ity][itz]; }
        parac_iterator p(c in 0:C:1; x in 0:M:1; y in 0:N:1) { o[c][x][y] = a[c][x][y] * 2.0; }
        parac_iterator it2(; 0:N:1) { r[it2y] = a[0][0][it2y]; }
    }",
    );
    let vars = |r: usize| {
        f.regions[r]
            .dims
            .iter()
            .map(|d| d.as_ref().map(|d| d.var.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        vars(0),
        vec![Some("itx".into()), Some("ity".into()), Some("itz".into())]
    );
    assert_eq!(
        vars(1),
        vec![Some("c".into()), Some("x".into()), Some("y".into())]
    );
    assert_eq!(vars(2), vec![None, Some("it2y".into())]);
    assert_eq!(f.regions[2].par_dims(), 1);
}

#[test]
fn global_operators_become_regions_run_before_their_host_let() {
    let f = ok(
        "fn f(a: &u8[M][N], e: &mut u8[M][N], o: &mut u8[M][N]) -> i64 {
        parac_iterator it(0:M:1; 0:N:1) { e[itx][ity] = a[itx][ity] / 2; }
        let mean = parac_matrix_sum(e) / (M * N) as i64;
        parac_iterator it2(0:M:1; 0:N:1) { o[it2x][it2y] = min(e[it2x][it2y] as i64, mean); }
        return mean;
    }",
    );
    let steps: Vec<String> = f
        .steps
        .iter()
        .map(|s| match s {
            HostStep::Run(r) => format!("run {}", f.regions[*r].name),
            HostStep::Let(v, _) => format!("let {}", f.scalars[*v].name),
            HostStep::Return(_) => "return".into(),
            HostStep::Repeat { .. } => "repeat".into(),
            HostStep::Swap(..) => "swap".into(),
        })
        .collect();
    assert_eq!(
        steps,
        ["run it", "run sum_e", "let mean", "run it2", "return"]
    );
    let RegionKind::Reduction { matrix, .. } = f.regions[1].kind else {
        panic!()
    };
    assert_eq!(f.matrices[matrix].name, "e");
    assert_eq!(f.scalars[1].ty, Scalar::I64);
}

#[test]
fn constant_matrices_keep_their_values() {
    let f = ok("fn f(a: &f32[M][N], o: &mut f32[M][N]) {
        const MP: f32[4][2] = [[7.0/8.0, 1.0/8.0], [5.0/8.0, 3.0/8.0], [3.0/8.0, 5.0/8.0], [1.0/8.0, 7.0/8.0]];
        const F: u8[1][5] = [1, 4, 6, 4, 1];
        parac_iterator it(0:M/4:1; 0:N/4:1) {
            o[itx*4:4:1][ity*4:4:1] = MP * a[itx*4:2:1][ity*4:2:1] * transe(MP);
        }
    }");
    assert_eq!(
        f.matrices[2].kind,
        MatrixKind::Const(vec![0.875, 0.125, 0.625, 0.375, 0.375, 0.625, 0.125, 0.875])
    );
    assert_eq!(
        f.matrices[3].kind,
        MatrixKind::Const(vec![1.0, 4.0, 6.0, 4.0, 1.0])
    );
}

#[test]
fn independent_errors_are_all_reported() {
    let errs = errors(
        "fn f(a: &u8[M][N], o: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            o[itx][ity] = b[itx][ity];
            let x: i32 = a[itx:3:1][ity:3:1];
            a[itx][ity] = 0;
            o[itx][ity] = foo(1) ;
        }
        parac_iterator it2(0:M:x; 0:N:1) { o[it2x][it2y] = 1; }
    }
    fn g(q: &u8[A][B][C][D]) {}",
    );
    assert_eq!(errs.len(), 6, "{errs:#?}");
}

#[test]
fn tokens_and_strings_compile_alike() {
    let src = "fn f(a: &u8[M][N], o: &mut u8[M][N]) { parac_iterator it(0:M:1; 0:N:1) { o[itx][ity] = a[itx][ity]; } }";
    let a = parac_core::compile_str(src);
    let b = parac_core::compile_tokens(src.parse().unwrap());
    assert_eq!(dump(&a.module), dump(&b.module));
    assert!(matches!(
        a.module.functions[0].regions[0].body[0],
        KStmt::Store(..)
    ));
    let KStmt::Store(_, e) = &a.module.functions[0].regions[0].body[0] else {
        unreachable!()
    };
    assert!(
        matches!(e.kind, ExprKind::Load(1)),
        "the target is access 0, the read access 1"
    );
}

#[test]
fn host_length_windows_are_loops_checked_at_their_tokens() {
    let f = ok(
        "fn f(a: &u8[M][K], b: &u8[K][N], c: &mut i32[M][N], l: &u8[M][128], r: i32) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            c[x][y] = a[x][0:K] * b[0:K][y] + parac_matrix_sum(a[x][0:2*r+1] .* a[x][0:2*r+1])
                + parac_matrix_max(l[x][0:100]);
        }
    }",
    );
    let texts: Vec<&str> = f.lens.iter().map(|l| l.text.as_str()).collect();
    assert_eq!(texts, ["K", "(2 * r) + 1", "100"], "one entry per text");
    let errs = errors(
        "fn f(a: &u8[M][K], b: &u8[K][N], c: &mut i32[M][N], d: &mut u8[M][K]) {
        const F: i32[3][3] = [[1, 2, 1], [2, 4, 2], [1, 2, 1]];
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            let w = a[x][0:K];
            c[x][y] = parac_matrix_sum(a[x][0:K] * b[0:K][0:N]);
            d[x][0:K] = a[x][0:K];
            c[x][y] = parac_matrix_sum(a[x][0:x]);
            c[x][y] = (x > 0 && parac_matrix_sum(a[x][0:K]) > 3) as i32;
            c[x][y] = parac_matrix_sum(F[0:K][0:3]);
            c[x][y] = parac_matrix_sum(a[x][0:K] + b[0:K][y]);
            c[x][y] = parac_convolution(F, a[x:K][y:3]);
        }
    }",
    );
    let expect = [
        "cannot be bound by `let`",
        "its result must have a constant shape (here 1xN)",
        "a window of host length (1xK) cannot be written",
        "a window's length is the same at every point",
        "it cannot be the right operand of `&&`",
        "a window of the constant matrix `F` has a constant length",
        "they are 1xK and Kx1",
        "the filter is 3x3 but the window is Kx3",
    ];
    assert_eq!(errs.len(), expect.len(), "{errs:#?}");
    for (e, want) in errs.iter().zip(expect) {
        assert!(e.contains(want), "{e:?} should say {want:?}");
    }
}

/// Regression (found by the random programs): the peephole's float division of a divisor holding
/// a window of host length put the window's fold under the zero test's arms, where the OpenCL
/// printer cannot run it (a panic printing every candidate); such a division stays the checked
/// one.
#[test]
fn a_host_length_window_in_a_divisor_prints_in_every_candidate() {
    let f = ok("fn f(a: &u8[M][N], o: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            let v: i16 = a[itx][ity] / ((parac_matrix_max(a[clamp(itx, 0, M - 3):(3 + M - M):1][clamp(ity, 0, N - 3):(3 + N - N):1]) & 7) + 1);
            o[itx][ity] = v;
        }
    }");
    let text = parac_core::codegen::launch::all_programs(&f);
    assert!(text.contains("__kernel"), "{text}");
}
