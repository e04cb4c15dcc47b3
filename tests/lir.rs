//! The loop IR against the reference interpreter: every function of every `tests/in` program,
//! lowered with each pass switched on and off, run by the LIR's evaluator
//! (`parac_core::lir::eval`) on random inputs at sizes from 1x1 to odd ones, gives bit for bit
//! the interpreter's outputs and result (calls the interpreter completes).

use parac_core::interp::{self, Arg, Data, Tensor, Val};
use parac_core::ir::{Function, MatrixKind, ParamRef, Scalar};
use parac_core::lir::{self, Options};

#[path = "chains/mod.rs"]
mod chains;

use chains::{Rng, three_stage_chain, two_stage_chain};

/// The values of the integer inputs: over their types' ranges, or where a speculated task's
/// guess holds (`0..256`, within every range the narrowing pass guesses), in every row or in
/// every other row (so that some tasks' guesses hold and others fail in one call).
#[derive(Clone, Copy, PartialEq)]
enum Values {
    Full,
    Small,
    Striped,
}

/// Arguments of `f` with its size symbols set to `sizes` (None where a shape is negative).
fn args(f: &Function, sizes: &[i64], rng: &mut Rng) -> Option<Vec<Arg>> {
    args_of(f, sizes, rng, Values::Full)
}

/// [`args`] with the integer inputs' values `values`.
fn args_of(f: &Function, sizes: &[i64], rng: &mut Rng, values: Values) -> Option<Vec<Arg>> {
    let dims = interp::matrix_dims(f, sizes).ok()?;
    let mut out = Vec::new();
    for p in &f.params {
        out.push(match p {
            ParamRef::Matrix(m) => {
                let mat = &f.matrices[*m];
                let shape: Vec<usize> = dims[*m]
                    .iter()
                    .map(|d| usize::try_from(*d).ok())
                    .collect::<Option<_>>()?;
                let n: usize = shape.iter().product();
                let row = shape.last().copied().unwrap_or(1).max(1);
                let mut data = Data::zeros(mat.elem, n)?;
                if mat.kind == MatrixKind::Input {
                    for i in 0..n {
                        let r = rng.next();
                        let small = match values {
                            Values::Full => false,
                            Values::Small => true,
                            Values::Striped => (i / row) % 2 == 0,
                        };
                        let v = if mat.elem.is_float() {
                            Val::F32((r % 2001) as f32 / 8.0 - 125.0)
                        } else if small {
                            Val::Int((r % 256) as i128)
                        } else {
                            Val::Int((r % 100_000) as i128 - 50_000)
                        };
                        data.set(i, interp::cast(v, mat.elem));
                    }
                }
                Arg::Matrix(Tensor::new(shape, data)?)
            }
            ParamRef::Scalar(s) => {
                let ty = f.scalars[*s].ty;
                Arg::Scalar(if ty == Scalar::F32 {
                    Val::F32(1.5)
                } else {
                    interp::cast(Val::Int(3), ty)
                })
            }
        });
    }
    Some(out)
}

fn switches() -> Vec<(&'static str, Options)> {
    let all = Options::default();
    vec![
        ("all passes", all.clone()),
        (
            "no simplify",
            Options {
                simplify: false,
                ..all.clone()
            },
        ),
        (
            "no parallel",
            Options {
                parallel: false,
                ..all.clone()
            },
        ),
        (
            "no partition",
            Options {
                partition: false,
                ..all.clone()
            },
        ),
        (
            "row maps decided",
            Options {
                partition_maps: false,
                ..all.clone()
            },
        ),
        (
            "no narrowing",
            Options {
                narrow_values: false,
                ..all.clone()
            },
        ),
        // Narrowed on what the types prove alone, never on a guess of the inputs' values.
        (
            "not speculated",
            Options {
                speculate: false,
                ..all.clone()
            },
        ),
        // Reads down columns row after row, and in (staged) tiles of 2 rows by 3 points, so
        // that the small sizes have several tiles and partial ones at both ends.
        (
            "not tiled",
            Options {
                tile_transposed: None,
                ..all.clone()
            },
        ),
        (
            "tiles of 2x3",
            Options {
                tile_transposed: Some((2, 3)),
                ..all.clone()
            },
        ),
        // Tiles read down their columns as they are, staged tiles copied row by row rather
        // than into the matrix written, and staged tiles of 17x33, a block and part of one on
        // each side.
        (
            "tiles not staged",
            Options {
                stage_transposed: false,
                ..all.clone()
            },
        ),
        (
            "staged tiles copied row by row",
            Options {
                stage_direct: false,
                ..all.clone()
            },
        ),
        (
            "staged tiles of 17x33",
            Options {
                tile_transposed: Some((17, 33)),
                ..all.clone()
            },
        ),
        // Scans along the outer loop in order and along the row an element at a time,
        // histograms' bins updated in order.
        (
            "no scan blocks or rows, no partials",
            Options {
                scan_blocks: false,
                scan_rows: false,
                partials: false,
                ..all.clone()
            },
        ),
        // Producers fused into their consumers' tasks (`fuse`): off, and tasks of 1 and 3 rows,
        // so that the small sizes have several tasks and the halos cross their edges.
        (
            "not fused",
            Options {
                fuse_rows: 0,
                ..all.clone()
            },
        ),
        (
            "fused in tasks of 3 rows",
            Options {
                fuse_rows: 3,
                ..all.clone()
            },
        ),
        (
            "fused in tasks of 1 row, no partition",
            Options {
                fuse_rows: 1,
                partition: false,
                ..all.clone()
            },
        ),
        (
            "fused in tasks of 3 rows, buffers not folded",
            Options {
                fuse_rows: 3,
                fuse_fold: false,
                ..all.clone()
            },
        ),
        // Time steps in bands (`fuse::time`): off, and bands of 2 and 3 steps in tasks of 1
        // and 2 rows, so that the small sizes have several tasks and the cones cross them.
        (
            "step by step",
            Options {
                time_steps: 0,
                ..all.clone()
            },
        ),
        (
            "bands of 2 steps, tasks of 1 row",
            Options {
                time_steps: 2,
                time_rows: 1,
                time_model: false,
                time_split: Some(false),
                ..all.clone()
            },
        ),
        (
            "bands of 3 steps, tasks of 2 rows, no partition",
            Options {
                time_steps: 3,
                time_rows: 2,
                time_model: false,
                time_split: Some(false),
                partition: false,
                ..all.clone()
            },
        ),
        // Split tiling (`fuse::time::split`): tasks of the fewest rows it allows (`2 (n K + 1)
        // r`), so that the small sizes have several tasks of both phases.
        (
            "split bands of 2 steps",
            Options {
                time_steps: 2,
                time_rows: 1,
                time_model: false,
                time_split: Some(true),
                ..all.clone()
            },
        ),
        (
            "split bands of 3 steps, no partition",
            Options {
                time_steps: 3,
                time_rows: 1,
                time_model: false,
                time_split: Some(true),
                partition: false,
                ..all.clone()
            },
        ),
        (
            "no passes",
            Options {
                simplify: false,
                parallel: false,
                partition: false,
                ..all
            },
        ),
        // The OpenCL lowering: work-items, each testing its point (run here one after the other).
        ("opencl", Options::gpu()),
        (
            "opencl, no interior test",
            Options {
                partition: false,
                ..Options::gpu()
            },
        ),
        (
            "opencl, no merged loads",
            Options {
                select_loads: false,
                ..Options::gpu()
            },
        ),
        // Several points per work-item (`h<W>`, `v<V>`), odd counts included.
        (
            "opencl, 8 points a row",
            Options {
                lanes: [8, 1],
                ..Options::gpu()
            },
        ),
        (
            "opencl, 3x2 points",
            Options {
                lanes: [3, 2],
                ..Options::gpu()
            },
        ),
        (
            "opencl, 3 rows",
            Options {
                lanes: [1, 3],
                ..Options::gpu()
            },
        ),
        // Shared reads and vector loads and stores (`cse`, `vmem`).
        (
            "opencl, 8 points a row, shared reads",
            Options {
                lanes: [8, 1],
                share_loads: true,
                ..Options::gpu()
            },
        ),
        (
            "opencl, 16 points a row, vectors",
            Options {
                lanes: [16, 1],
                vector_memory: true,
                ..Options::gpu()
            },
        ),
        (
            "opencl, 3x2 points, vectors",
            Options {
                lanes: [3, 2],
                vector_memory: true,
                ..Options::gpu()
            },
        ),
        (
            "opencl, one point, vectors",
            Options {
                vector_memory: true,
                ..Options::gpu()
            },
        ),
        // Range-proven division rewrites (`peep`).
        (
            "opencl, 4 points a row, vectors, peephole, mul24",
            Options {
                lanes: [4, 1],
                vector_memory: true,
                peephole: true,
                mul24: true,
                ..Options::gpu()
            },
        ),
        // Work-groups reading through local-memory tiles (`lds`), small groups so that the
        // small sizes have several.
        (
            "opencl, local tiles of 3x2 work-items",
            Options {
                local_tile: Some([3, 2]),
                ..Options::gpu()
            },
        ),
        (
            "opencl, 4 points a row, vectors, peephole, local tiles of 2x2 work-items",
            Options {
                lanes: [4, 1],
                vector_memory: true,
                peephole: true,
                local_tile: Some([2, 2]),
                ..Options::gpu()
            },
        ),
        (
            "opencl, 3x2 points, no interior",
            Options {
                lanes: [3, 2],
                partition: false,
                ..Options::gpu()
            },
        ),
        // Every window's reduction a fold (a loop over its taps), as large windows are.
        (
            "windows looped",
            Options {
                unroll_taps: 0,
                ..Options::default()
            },
        ),
        (
            "windows looped, no partition",
            Options {
                unroll_taps: 0,
                partition: false,
                ..Options::default()
            },
        ),
        // Slid windows: rows looped, columns combined by doubling.
        (
            "windows looped, slid with rows looped and columns doubled",
            Options {
                unroll_taps: 0,
                slide_unroll: 0,
                ..Options::default()
            },
        ),
        // The folds computed directly, not slid (`lir::pass::slide` off).
        (
            "windows looped, not slid",
            Options {
                unroll_taps: 0,
                slide: false,
                ..Options::default()
            },
        ),
        // A work-item's points slide their windows (a plan's `slide`), odd counts included.
        (
            "opencl, 8 points a row slid",
            Options {
                lanes: [8, 1],
                slide: true,
                ..Options::gpu()
            },
        ),
        (
            "opencl, 3 points a row slid, rows looped and columns doubled",
            Options {
                lanes: [3, 1],
                slide: true,
                slide_unroll: 0,
                unroll_taps: 0,
                ..Options::gpu()
            },
        ),
        // Sums carried down a work-item's rows.
        (
            "opencl, 4x3 points slid down the rows",
            Options {
                lanes: [4, 3],
                slide: true,
                ..Options::gpu()
            },
        ),
        (
            "opencl, 5x2 points slid down the rows, rows looped",
            Options {
                lanes: [5, 2],
                slide: true,
                slide_unroll: 0,
                unroll_taps: 0,
                ..Options::gpu()
            },
        ),
        (
            "opencl, windows looped",
            Options {
                unroll_taps: 0,
                ..Options::gpu()
            },
        ),
        (
            "opencl, 3x2 points, shared reads, windows looped",
            Options {
                lanes: [3, 2],
                share_loads: true,
                unroll_taps: 0,
                ..Options::gpu()
            },
        ),
        (
            "opencl, 4 points a row, vectors, peephole, local tiles of 2x2 work-items, windows looped",
            Options {
                lanes: [4, 1],
                vector_memory: true,
                peephole: true,
                local_tile: Some([2, 2]),
                unroll_taps: 0,
                ..Options::gpu()
            },
        ),
    ]
}

/// Compares the interpreter and the LIR (`lowered`: each pass switch's lowering of `f`) on
/// one function at `sizes`; the number of calls compared.
fn compare_at(
    name: &str,
    f: &Function,
    lowered: &[(&str, lir::Lowered)],
    sizes: &[i64],
    rng: &mut Rng,
    values: Values,
) -> usize {
    let Some(start) = args_of(f, sizes, rng, values) else {
        return 0;
    };
    let mut want = start.clone();
    let Ok(result) = interp::run(f, &mut want) else {
        return 0;
    };
    let mut compared = 0;
    for (switch, lowered) in lowered {
        let mut got = start.clone();
        match lir::eval::run(&lowered.func, f, &mut got) {
            Err(interp::InterpError::Unsupported(_)) => continue,
            Err(e) => panic!("{name}::{} at {sizes:?} ({switch}): {e}", f.name),
            Ok(r) => {
                assert_eq!(r, result, "{name}::{} at {sizes:?} ({switch})", f.name);
                assert_eq!(got, want, "{name}::{} at {sizes:?} ({switch})", f.name);
                compared += 1;
            }
        }
    }
    compared
}

/// `f` lowered with each pass switch, once for all the sizes it is compared at.
fn lowerings(f: &Function) -> Vec<(&'static str, lir::Lowered)> {
    switches()
        .into_iter()
        .map(|(switch, opts)| (switch, lir::lower(f, &opts)))
        .collect()
}

/// Compares the interpreter and the LIR on one function; the number of calls compared.
fn compare(name: &str, f: &Function, rng: &mut Rng) -> usize {
    let lowered = lowerings(f);
    let mut compared = 0;
    let small = [Values::Full, Values::Small];
    for (k, base) in [[1, 1], [2, 3], [5, 7], [8, 8], [17, 6]].iter().enumerate() {
        let sizes: Vec<i64> = (0..f.sizes.len()).map(|i| base[i % 2]).collect();
        // The last size's rows striped, the others alternately full and small.
        let values = if k == 4 {
            Values::Striped
        } else {
            small[k % 2]
        };
        compared += compare_at(name, f, &lowered, &sizes, rng, values);
    }
    compared
}

#[test]
fn lir_matches_the_interpreter_on_every_program() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut compared = 0;
    let mut dir: Vec<_> = ["tests/in", "tests/in/backends"]
        .into_iter()
        .flat_map(|d| std::fs::read_dir(d).expect(d))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "parac"))
        .collect();
    dir.sort();
    for path in dir {
        let source = std::fs::read_to_string(&path).expect("read");
        let out = parac_core::compile_str(&source);
        let name = path.display().to_string();
        for f in &out.module.functions {
            compared += compare(&name, f, &mut rng);
        }
    }
    eprintln!("{compared} calls compared");
    assert!(compared > 100, "only {compared} calls compared");
}

/// Upsampling reads (`(y + 1) / 2`, `(y - 2) >> 1`, a `min` and a `clamp` at the last column)
/// are written out in lanes by the partition (`lir/pass/lanes.rs`), and the result is still
/// the interpreter's, at every size from 1x1 to odd ones.
#[test]
fn lanes_of_upsampling_reads_match_the_interpreter() {
    let src = "fn up(d: &u8[P][Q], o: &mut i32[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            let a = min((y + 1) / 2, Q - 1);
            let b = clamp((y - 2) >> 1, 0, Q - 1);
            o[x][y] = d[min(x / 2, P - 1)][min(y / 2, Q - 1)] * 3 + d[0][a] + 5 * d[0][b];
        }
    }";
    let out = parac_core::compile_str(src);
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    let f = &out.module.functions[0];
    let text = lir::print(&lir::lower(f, &Options::default()).func);
    assert!(text.contains("lane"), "no lanes:\n{text}");
    let mut rng = Rng(7);
    let mut compared = 0;
    let lowered = lowerings(f);
    for m in [1i64, 2, 3, 5, 8] {
        for n in [1i64, 2, 3, 4, 7, 9, 16, 33] {
            // Sizes P, Q, M, N (in the order the function binds them).
            let sizes: Vec<i64> = f
                .sizes
                .iter()
                .map(|s| match s.name.as_str() {
                    "P" => m.div_euclid(2).max(1),
                    "Q" => (n + 1) / 2,
                    "M" => m,
                    _ => n,
                })
                .collect();
            compared += compare_at("up", f, &lowered, &sizes, &mut rng, Values::Full);
        }
    }
    assert!(compared > 100, "only {compared} calls compared");
}

/// Local-memory tiles (`lds`) are made where work-items read neighbouring elements: the
/// stencil and the vertical filter of `tests/in/backends` get a `__local` tile, read through
/// it (vector reads too), and still give the interpreter's results at every size, the groups
/// cut by the image's edges included.
#[test]
fn local_tiles_serve_the_stencils_reads() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for file in ["stencil", "vertical"] {
        let path = format!("tests/in/backends/{file}.parac");
        let source = std::fs::read_to_string(&path).expect("read");
        let out = parac_core::compile_str(&source);
        for f in &out.module.functions {
            for lanes in [[1, 1], [4, 1]] {
                let opts = Options {
                    lanes,
                    vector_memory: lanes != [1, 1],
                    local_tile: Some([4, 2]),
                    ..Options::gpu()
                };
                let lowered = lir::lower(f, &opts);
                let text = lir::print(&lowered.func);
                assert!(
                    text.contains("allocate local tile_"),
                    "{path}: no tile\n{text}"
                );
                assert!(text.contains("barrier"), "{path}: no barrier\n{text}");
                for sizes in [[1, 1], [3, 5], [9, 13], [16, 8]] {
                    let sizes: Vec<i64> = (0..f.sizes.len()).map(|i| sizes[i % 2]).collect();
                    let Some(start) = args(f, &sizes, &mut rng) else {
                        continue;
                    };
                    let mut want = start.clone();
                    let result = interp::run(f, &mut want).expect("the interpreter");
                    let mut got = start.clone();
                    let r = lir::eval::run(&lowered.func, f, &mut got).expect("the evaluator");
                    assert_eq!((r, got), (result, want), "{path} at {sizes:?}, {lanes:?}");
                }
            }
        }
    }
}

const PAST_THE_LAST_ROW: &str = r#"
fn past_the_last_row(src: &i16[M][N], out: &mut i32[M][N]) {
    let t: i32[M][N];
    parac_iterator it(x in 0:M:1; y in 0:N:1) {
        t[x][y] = src[x][y] - 1;
    }
    parac_iterator it1(x in 0:M:1; y in 0:N:1) {
        out[x][y] = t[x][y] + t[x + src[x][y] % 3][y];
    }
}
"#;

/// `t` stored for later readers by its fused reader's tasks, which read a row of it through
/// data past its last (an error, raised without a view of `t`, as it was unfused).
const STORED_PAST: &str = r#"
fn stored_past(src: &i16[M][N], out: &mut i32[M][N], also: &mut i32[M][N]) {
    let t: i32[M][N];
    parac_iterator it(x in 0:M:1; y in 0:N:1) {
        t[x][y] = src[x][y] + y;
    }
    parac_iterator it1(x in 0:M:1; y in 0:N:1) {
        out[x][y] = t[x][y] + t[x + src[x][y] % 3][y];
    }
    let s: i64 = parac_matrix_sum(t);
    parac_iterator it2(x in 0:M:1; y in 0:N:1) {
        also[x][y] = t[x][y] - (s % 5) as i32;
    }
}
"#;

/// Fusion (`lir::pass::fuse`) changes no result and no error: each function of
/// `tests/in/fusion.parac`, fused in tasks of 1, 2 and 3 rows (cheap point producers inlined
/// at their reads or computed in the tasks), gives what it gives unfused,
/// errors included (a row read through data past the intermediate's last row), and the
/// interpreter's outputs where it completes.
#[test]
fn fused_stages_give_every_result_and_error_unfused() {
    let mut source = std::fs::read_to_string("tests/in/fusion.parac").expect("read");
    // A row read through data past the intermediate's last row: an error where unfused.
    source.push_str(PAST_THE_LAST_ROW);
    source.push_str(STORED_PAST);
    let out = parac_core::compile_str(&source);
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut fused_fns, mut mapped_fns, mut stored_fns, mut errors) = (0, 0, 0, 0);
    let mut inlined_fns = 0;
    for f in &out.module.functions {
        let unfused = lir::lower(
            f,
            &Options {
                fuse_rows: 0,
                ..Options::default()
            },
        );
        // Tasks of 1, 2 and 3 rows, each with its buffers folded to rings and not, cheap point
        // producers in the tasks too; then those inlined at their reads (`fuse::inline`).
        let plans: Vec<(i64, bool, bool)> = [1, 2, 3]
            .into_iter()
            .flat_map(|rows| [(rows, true, false), (rows, false, false)])
            .chain([(2, false, true), (1, true, true)])
            .collect();
        let fused: Vec<_> = plans
            .iter()
            .map(|&(rows, fold, points)| {
                let opts = Options {
                    fuse_rows: rows,
                    fuse_fold: fold,
                    fuse_points: points,
                    dump: true,
                    ..Options::default()
                };
                lir::lower(f, &opts)
            })
            .collect();
        let fuse_dump = |l: &lir::Lowered| {
            l.dumps
                .iter()
                .find(|(stage, _)| *stage == "fuse")
                .map(|(_, text)| text.clone())
        };
        if fuse_dump(&fused[6]) != fuse_dump(&fused[3]) {
            inlined_fns += 1;
        }
        if fused[0]
            .dumps
            .iter()
            .any(|(_, text)| text.contains("parallel chunks of fs for fx"))
        {
            fused_fns += 1;
        }
        // Rows at the image's edge reading halo rows mapped back inside by a border rule, from
        // the buffer (`fuse::reads::Rows::Mapped`: the rows bound once, `fm`).
        if fused[0]
            .dumps
            .iter()
            .any(|(_, text)| text.contains("let fm"))
        {
            mapped_fns += 1;
        }
        // An intermediate stored by its fused reader's tasks for later readers (the stores
        // of `t` in the tasks' rows; their reads outside `t` are `outside t[..]`).
        if fused[1]
            .dumps
            .iter()
            .any(|(stage, text)| *stage == "fuse" && text.contains("outside t["))
        {
            stored_fns += 1;
        }
        for sizes in [[1, 1], [1, 5], [4, 1], [2, 3], [5, 7], [8, 8], [17, 6]] {
            let sizes: Vec<i64> = (0..f.sizes.len()).map(|i| sizes[i % 2]).collect();
            let Some(start) = args(f, &sizes, &mut rng) else {
                continue;
            };
            let mut want = start.clone();
            let interp = interp::run(f, &mut want);
            let mut base = start.clone();
            let expect = lir::eval::run(&unfused.func, f, &mut base).map_err(|e| e.to_string());
            if let Ok(r) = &interp {
                assert_eq!(
                    expect.as_ref().ok(),
                    Some(r),
                    "{} at {sizes:?}: {expect:?}",
                    f.name
                );
                assert_eq!(base, want, "{} at {sizes:?}", f.name);
            }
            errors += usize::from(expect.is_err());
            for ((rows, fold, points), lowered) in plans.iter().zip(&fused) {
                let mut got = start.clone();
                let r = lir::eval::run(&lowered.func, f, &mut got).map_err(|e| e.to_string());
                let plan = format!("tasks of {rows}, folded {fold}, points inlined {points}");
                assert_eq!(r, expect, "{} at {sizes:?}, {plan}", f.name);
                if expect.is_ok() {
                    assert_eq!(got, base, "{} at {sizes:?}, {plan}", f.name);
                }
            }
        }
    }
    assert!(fused_fns >= 6, "only {fused_fns} functions fused");
    assert!(
        mapped_fns >= 4,
        "only {mapped_fns} functions read mapped rows"
    );
    assert!(stored_fns >= 3, "only {stored_fns} functions store `t`");
    assert!(
        inlined_fns >= 6,
        "only {inlined_fns} functions inline a producer"
    );
    assert!(errors > 0, "no call failed");
}

/// Programs whose fused OpenCL kernels (`lir::pass::fuse::gpu`) read the intermediate through
/// border rules: clamped columns (unsharp's `bx`), reflect-101 in both dimensions, a constant
/// border, and a consumer of several outputs reading its producer one-sided.
const GPU_FUSION: &str = r#"
fn cols_clamp(src: &f32[M][N], out: &mut f32[M][N]) {
    let by: f32[M][N];
    parac_iterator v(x in 0:M:1; y in 0:N:1) {
        by[x][y] = src[x][y] * 0.5 + 1.0;
    }
    parac_border_rule by_cols = clamp(by[*][3]);
    parac_iterator h(x in 0:M:1; y in 0:N:1) parac_border_rule(by_cols) {
        out[x][y] = by[x][y - 3] + by[x][y - 1] * 2.0 + by[x][y + 2] - by[x][y] * 0.25;
    }
}
fn both_reflect(src: &u8[M][N], out: &mut i32[M][N]) {
    let t: i16[M][N];
    parac_iterator a(x in 0:M:1; y in 0:N:1) {
        t[x][y] = src[x][y] * 3 - 100;
    }
    parac_border_rule r = reflect101(t[2][2]);
    parac_iterator b(x in 0:M:1; y in 0:N:1) parac_border_rule(r) {
        out[x][y] = t[x - 2][y] + t[x + 1][y + 2] * 2 - t[x][y - 1] + t[x + 2][y - 2];
    }
}
fn constant_border(src: &u8[M][N], out: &mut i32[M][N]) {
    let t: i32[M][N];
    parac_iterator a(x in 0:M:1; y in 0:N:1) {
        t[x][y] = src[x][y] + x - y;
    }
    parac_border_rule r = constant(t[1][1], 7);
    parac_iterator b(x in 0:M:1; y in 0:N:1) parac_border_rule(r) {
        out[x][y] = t[x - 1][y + 1] + t[x + 1][y - 1] - t[x][y];
    }
}
fn two_outputs(src: &u16[M][N], out: &mut u16[M-2][N-3], other: &mut i32[M-2][N-3]) {
    let bx: u16[M][N-3];
    parac_iterator it(x in 0:M:1; y in 0:N-3:1) {
        bx[x][y] = (src[x][y] + src[x][y+1] + src[x][y+3]) / 3;
    }
    parac_iterator it1(x in 0:M-2:1; y in 0:N-3:1) {
        out[x][y] = (bx[x][y] + bx[x+1][y] + bx[x+2][y]) / 3;
        other[x][y] = bx[x+2][y] - bx[x][y];
    }
}
"#;

/// Fusion on OpenCL (`lir::pass::fuse::gpu`, a plan's `fuse<C>x<R>` or `inline`): every
/// function of `tests/in/fusion.parac` and [`GPU_FUSION`] whose producer can be fused into its
/// consumer's work-group tiles, at tiles of one work-group and of several, or inlined in its
/// points (with lanes of several points too), gives the interpreter's outputs
/// on the LIR's evaluator at sizes from 1x1 to one past a tile, as the executor runs it (the
/// consumer's region empty).
#[test]
fn opencl_fused_stages_match_the_interpreter() {
    let mut source = std::fs::read_to_string("tests/in/fusion.parac").expect("read");
    source.push_str(GPU_FUSION);
    let out = parac_core::compile_str(&source);
    assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    let sizes = [
        [1, 1],
        [1, 5],
        [4, 1],
        [5, 7],
        [8, 16],
        [9, 17],
        [17, 33],
        [25, 15],
    ];
    let (mut fused, mut inlined, mut compared) = (Vec::new(), Vec::new(), 0);
    for f in &out.module.functions {
        let (t, i, n) = fused_plans_match(f, &sizes, &mut rng);
        if t {
            fused.push(f.name.clone());
        }
        if i {
            inlined.push(f.name.clone());
        }
        compared += n;
    }
    eprintln!("fused on OpenCL: {fused:?}, inlined: {inlined:?}, {compared} calls compared");
    let has = |v: &[String], name: &str| v.iter().any(|f| f == name);
    // A producer read by two regions, the first fused into the second: the three in one
    // kernel (`fuse::gpu::chain`), work-items' tiles alone.
    let chain3 = out.module.functions.iter().find(|f| f.name == "chain3");
    let gate = lir::pass::fuse::gpu::plans(chain3.expect("chain3"), 0);
    assert!(gate.items && !gate.tiles && !gate.inline, "{gate:?}");
    // Three stages in a row: the first's plans run both others, as a chain's.
    let line = out.module.functions.iter().find(|f| f.name == "chain_line");
    let gate = lir::pass::fuse::gpu::plans(line.expect("chain_line"), 0);
    assert!(gate.items && !gate.tiles && gate.consumers == 2, "{gate:?}");
    // Read by later steps (a sum, a point stage): the kernel stores `t` for them, tiles and
    // work-items' tiles, never inlined.
    let stored = out
        .module
        .functions
        .iter()
        .find(|f| f.name == "stored_rows");
    let gate = lir::pass::fuse::gpu::plans(stored.expect("stored_rows"), 0);
    assert!(gate.tiles && gate.items && !gate.inline, "{gate:?}");
    for name in [
        "chain3",
        "chain_line",
        "stored_rows",
        "blur2",
        "cols_clamp",
        "both_reflect",
        "constant_border",
        "two_outputs",
    ] {
        assert!(has(&fused, name), "{name} not fused: {fused:?}");
        // Not under a constant border (`fuse::gpu::inline`), nor a chain, nor where `t` is
        // stored for later steps.
        let constant = matches!(name, "constant_border" | "chain3" | "stored_rows");
        assert_eq!(
            has(&inlined, name),
            !constant,
            "{name}: inlined {inlined:?}"
        );
    }
}

/// Every fused OpenCL plan of every region of `f` (tiles of one work-group and of several,
/// tiles of 1x1 to 16x3 points per work-item, their loops partitioned, the producer inlined
/// alone and with lanes and vector memory), run by the LIR's evaluator at each of `sizes`, gives the interpreter's outputs
/// where it completes: whether `f` had tiles, whether it had inlined plans, and the calls
/// compared.
fn fused_plans_match(f: &Function, sizes: &[[i64; 2]], rng: &mut Rng) -> (bool, bool, usize) {
    let (mut tiled, mut inlined, mut compared) = (false, false, 0);
    for rid in 0..f.regions.len() {
        let base = Options {
            region: Some(rid),
            unroll_taps: lir::UNROLL_TAPS,
            dump: true,
            ..Options::gpu()
        };
        let mut plans: Vec<(String, Options, &str)> = Vec::new();
        let gate = lir::pass::fuse::gpu::plans(f, rid);
        if gate.tiles {
            tiled = true;
            for tile in [[16, 8], [32, 16], [16, 24]] {
                let o = Options {
                    fuse_tile: Some(tile),
                    ..base.clone()
                };
                plans.push((format!("tiles {tile:?}"), o, "fuse_gpu"));
            }
        }
        if gate.items {
            tiled = true;
            for tile in [[1, 1], [1, 3], [5, 8], [16, 3]] {
                let o = Options {
                    fuse_item_tile: Some(tile),
                    ..base.clone()
                };
                plans.push((format!("tiles {tile:?} per work-item"), o, "fuse_gpu"));
            }
        }
        if gate.inline {
            inlined = true;
            for lanes in [[1, 1], [4, 2]] {
                let o = Options {
                    fuse_inline: true,
                    lanes,
                    share_loads: true,
                    vector_memory: lanes != [1, 1],
                    peephole: true,
                    ..base.clone()
                };
                plans.push((format!("inlined, lanes {lanes:?}"), o, "fuse_inline"));
            }
        }
        for (plan, opts, stage) in plans {
            let lowered = lir::lower(f, &opts);
            assert!(
                lowered.dumps.iter().any(|(s, _)| *s == stage),
                "{}: {plan} not made",
                f.name
            );
            for s in sizes {
                let sizes: Vec<i64> = (0..f.sizes.len()).map(|i| s[i % 2]).collect();
                let Some(start) = args(f, &sizes, rng) else {
                    continue;
                };
                let mut want = start.clone();
                let Ok(result) = interp::run(f, &mut want) else {
                    continue;
                };
                let mut got = start.clone();
                let r = lir::eval::run(&lowered.func, f, &mut got);
                let at = format!("{} at {sizes:?}, {plan}", f.name);
                assert_eq!(r.map_err(|e| e.to_string()), Ok(result), "{at}");
                assert_eq!(got, want, "{at}");
                compared += 1;
            }
        }
    }
    (tiled, inlined, compared)
}

/// Random three-stage chains for fusion on OpenCL (`fuse::gpu::chain`): a producer of `u`, a
/// second stage reading `u` at random offsets (-3 to 3) through a random border shorthand over
/// `u` (or none), and a last stage over the same space or a smaller one reading the second's
/// `t` at offsets through a shorthand (or proven inside) and, two times in three, `u` at its
/// point and at offsets proven inside (else three stages in a row); at random sizes from 1x1,
/// every fused plan against the interpreter ([`fused_plans_match`]).
#[test]
fn random_three_stage_chains_fuse_on_opencl_as_unfused() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut chains, mut lines, mut compared) = (0, 0, 0);
    for k in 0..80 {
        let (src, reads_u) = three_stage_chain(&mut rng, k);
        let mut pick = |n: u64| (rng.next() % n) as i64;
        let out = parac_core::compile_str(&src);
        if !out.diagnostics.is_empty() {
            continue;
        }
        let f = &out.module.functions[0];
        let gate = lir::pass::fuse::gpu::plans(f, 0);
        chains += usize::from(gate.items && gate.consumers == 2);
        lines += usize::from(gate.items && gate.consumers == 2 && !reads_u);
        let sizes: Vec<[i64; 2]> = (0..4).map(|_| [1 + pick(40), 1 + pick(40)]).collect();
        compared += fused_plans_match(f, &sizes, &mut rng).2;
    }
    eprintln!(
        "random three-stage chains: {chains} fused ({lines} in a row), {compared} calls compared"
    );
    assert!(chains >= 20, "{chains} chains fused");
    assert!(lines >= 5, "{lines} chains in a row fused");
}

/// Random two-stage chains for fusion on OpenCL: a producer of the whole intermediate, and a
/// consumer over the same space or a smaller one reading it at random offsets (-3 to 3 in
/// each dimension), through a random border shorthand bordering one dimension, the other or
/// both (or none), at random sizes from 1x1; every fused plan against the interpreter
/// ([`fused_plans_match`]), where the interpreter completes (reads a rule does not cover fail
/// there and are not fused).
#[test]
fn random_chains_fuse_on_opencl_as_unfused() {
    let mut rng = Rng(0x1405_7b7e_f767_814f);
    let (mut tiled, mut inlined, mut compared) = (0, 0, 0);
    for k in 0..120 {
        let src = two_stage_chain(&mut rng, k);
        let mut pick = |n: u64| (rng.next() % n) as i64;
        let out = parac_core::compile_str(&src);
        if !out.diagnostics.is_empty() {
            continue;
        }
        let sizes: Vec<[i64; 2]> = (0..4).map(|_| [1 + pick(40), 1 + pick(40)]).collect();
        let (t, i, n) = fused_plans_match(&out.module.functions[0], &sizes, &mut rng);
        (tiled, inlined, compared) = (tiled + t as usize, inlined + i as usize, compared + n);
    }
    eprintln!("random chains: {tiled} tiled, {inlined} inlined, {compared} calls compared");
    assert!(
        tiled >= 30 && inlined >= 30,
        "{tiled} tiled, {inlined} inlined"
    );
}
