//! Zero-copy views: a pipeline reads a slice and writes into a slice, on every runtime, with
//! the same result as with owned matrices.

mod common;

use common::{data, reference, runtimes};
use parac::{Matrix, MatrixView, MatrixViewMut};

#[path = "../examples/pipelines/blur.rs"]
mod blur_p;

#[test]
fn pipelines_read_and_write_through_views() {
    let _guard = runtimes::shared_buffers();
    for rt in runtimes::all() {
        for (rows, cols) in [(3, 3), (17, 29), (64, 65)] {
            let src = data::random_u12(rows, cols, 7);
            let want = reference::blur(&src);
            // The input is any slice; the output is written into an existing Vec.
            let raw: Vec<u16> = src.as_slice().to_vec();
            let mut out_raw = vec![0u16; (rows - 2) * (cols - 2)];
            {
                let view = MatrixView::new([rows, cols], &raw).expect("length matches");
                let mut out =
                    MatrixViewMut::new([rows - 2, cols - 2], &mut out_raw).expect("length matches");
                blur_p::blur(rt, &view, &mut out).expect("blur through views");
            }
            assert_eq!(
                out_raw,
                want.as_slice(),
                "{} {rows}x{cols}",
                runtimes::name(rt)
            );
            // Owned matrices give the same.
            let mut owned = Matrix::<u16>::zeros([rows - 2, cols - 2]);
            blur_p::blur(rt, &src, &mut owned).expect("blur");
            assert_eq!(owned.as_slice(), &out_raw[..]);
        }
    }
}

#[test]
fn a_view_of_the_wrong_shape_is_a_shape_error() {
    let raw = vec![0u16; 12];
    let view = MatrixView::new([3, 4], &raw).expect("length matches");
    let mut out = Matrix::<u16>::zeros([2, 2]);
    let err = blur_p::blur(runtimes::cpu(), &view, &mut out).unwrap_err();
    assert!(err.to_string().contains("matrix `out`"), "{err}");
}

/// The canaried matrices of `common::canary` (used around the caller's matrices by the random
/// programs): a pipeline reading and writing them in place leaves the canaries alone (with
/// guard bands on the device's own buffers), and a write past a view is reported, naming it.
#[test]
fn canaried_views_and_guard_bands() {
    use common::canary::{Canaried, take_violations};
    let _guard = runtimes::shared_buffers();
    let cpu = parac::Runtime::cpu();
    let fresh = runtimes::fresh_opencl();
    for rt in std::iter::once(&cpu).chain(fresh.as_ref()) {
        if let Some(d) = rt.device() {
            d.set_guard_bands(true);
        }
        for (rows, cols) in [(3, 3), (17, 29)] {
            let src = data::random_u12(rows, cols, 3);
            let view = Canaried::from_matrix("src", &src);
            let mut out = Canaried::new(
                "out",
                [rows - 2, cols - 2],
                &vec![0; (rows - 2) * (cols - 2)],
            );
            blur_p::blur(rt, &view, &mut out).expect("blur");
            assert_eq!(
                out.to_matrix(),
                reference::blur(&src),
                "{}",
                runtimes::name(rt)
            );
            assert_eq!(view.check().and(out.check()), Ok(()));
            if let Some(d) = rt.device() {
                d.check_guards().expect("guard bands intact");
            }
        }
        assert!(take_violations().is_empty());
    }
    // A write past a view: reported by `check` and, when dropped, by `take_violations`.
    let mut v = Canaried::new("victim", [2, 2], &[1u16, 2, 3, 4]);
    v.clobber(0, 9);
    v.clobber(-3, 9);
    let e = v.check().unwrap_err();
    assert!(e.contains("`victim` [2, 2] of u16"), "{e}");
    assert!(
        e.contains("1 element before it changed (offsets -3 to -3)"),
        "{e}"
    );
    assert!(
        e.contains("1 element after it changed (offsets 4 to 4)"),
        "{e}"
    );
    drop(v);
    assert_eq!(take_violations(), vec![e]);
}

/// A `parac!` function writes its IR where the runtime's configuration says, on the CPU path too
/// (`Config::dump`, `PARAC_DUMP`): the generated code passes its runtime to `dump_ir`.
#[test]
fn the_cpu_path_dumps_the_ir_where_the_builder_says() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let rt = parac::Runtime::builder()
        .device_kind(parac::DeviceKind::Cpu)
        .dump(tmp.path())
        .build()
        .expect("the CPU path");
    let src = Matrix::<u16>::zeros([5, 6]);
    let mut out = Matrix::<u16>::zeros([3, 4]);
    blur_p::blur(&rt, &src, &mut out).expect("blur");
    let ir = std::fs::read_to_string(tmp.path().join("blur.ir")).expect("blur.ir written");
    assert!(ir.contains("fn blur"), "{ir}");
}
