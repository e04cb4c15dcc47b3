//! Matrices that stay on the device (`DeviceMatrix`): chains of calls on device
//! matrices move no data between host and device (the runtime's transfer counters), give the
//! results of the same calls on host matrices bit for bit, return without waiting and report a
//! kernel's error at the next wait (a download, `Runtime::finish`), each error once and none
//! lost; a device matrix of another runtime, or given to the CPU path, is a typed error naming
//! the parameter. The same tests run on the CPU path, where a device matrix is a host matrix.
//! (Aliasing an input and an output is a borrow error at compile time:
//! `parac-macros/tests/ui/resident_alias.rs`.) Without OpenCL the device half prints "skipped"
//! and passes, unless `PARAC_REQUIRE_OPENCL=1`.

mod common;

use parac::{DeviceMatrix, Error, LayoutError, Matrix, Runtime, opencl};

parac::parac! {
    /// A 3x3 box sum with clamped borders, widened.
    pub fn resident_box(src: &u8[M][N], out: &mut u16[M][N]) {
        parac_border_rule r = replicate(src[1][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r) {
            out[itx][ity] = parac_matrix_sum(src[itx-1:3][ity-1:3]);
        }
    }

    /// Scales down to bytes, and marks the odd columns (an output not written whole: what it
    /// does not write is zero on a device).
    pub fn resident_narrow(src: &u16[M][N], out: &mut u8[M][N], odd: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = src[itx][ity] / 9;
        }
        parac_iterator jt(0:M:1; 1:N:2) {
            odd[jtx][jty] = 1;
        }
    }

    /// Reads a table at data-dependent indices: checked in the kernel, an error past its end.
    pub fn resident_lookup(idx: &u8[N], table: &u8[4], out: &mut u8[N]) {
        parac_iterator it(0:N:1) {
            out[itx] = table[idx[itx]];
        }
    }
}

/// The runtimes: the CPU path, and the OpenCL device (model plans, no warm-up on the CPU path)
/// when there is one.
fn runtimes() -> Vec<Runtime> {
    let mut v = vec![Runtime::cpu()];
    v.extend(common::runtimes::fresh_opencl());
    v
}

fn image(m: usize, n: usize, seed: u32) -> Matrix<u8> {
    Matrix::from_fn([m, n], |i| {
        let x = (i[0] as u32 * 31 + i[1] as u32 * 17 + seed).wrapping_mul(2_654_435_761);
        (x >> 24) as u8
    })
}

/// The chain on host matrices.
fn on_host(rt: &Runtime, src: &Matrix<u8>) -> (Matrix<u8>, Matrix<u8>) {
    let [m, n] = [src.rows(), src.cols()];
    let mut wide = Matrix::<u16>::zeros([m, n]);
    resident_box(rt, src, &mut wide).expect("box");
    let (mut out, mut odd) = (Matrix::zeros([m, n]), Matrix::zeros([m, n]));
    resident_narrow(rt, &wide, &mut out, &mut odd).expect("narrow");
    (out, odd)
}

/// On a device whose memory is the host's (PoCL), host matrices are used in place and move
/// nothing either: the chain runs with the device treated as discrete (`opencl::copying`),
/// where the same calls on host matrices copy every matrix each way.
#[test]
fn resident_chains_move_no_data_and_match_host_calls() {
    for rt in runtimes() {
        opencl::copying(|| resident_chains(&rt));
    }
}

fn resident_chains(rt: &Runtime) {
    for (m, n) in [
        (1, 1),
        (1, 7),
        (7, 1),
        (3, 5),
        (17, 33),
        (64, 64),
        (65, 127),
    ] {
        let src = image(m, n, (m * n) as u32);
        let before = opencl::transfers();
        let want = on_host(rt, &src);
        let host_moved = opencl::transfers().since(before);
        if rt.device().is_some() {
            assert!(host_moved.bytes_to_device >= m * n && host_moved.bytes_to_host >= m * n);
            // Contiguous host matrices: plain copies into rows without padding, no rectangles.
            assert_eq!(
                (host_moved.rect_to_device, host_moved.rect_to_host),
                (0, 0),
                "{host_moved:?}"
            );
        }
        let d_src = rt.upload(&src).expect("upload");
        assert_eq!(d_src.is_on_device(), rt.device().is_some());
        let mut wide: DeviceMatrix<u16> = rt.device_uninit(&[m, n]).expect("alloc");
        let mut out: DeviceMatrix<u8> = rt.device_uninit(&[m, n]).expect("alloc");
        // Not written whole: what the call does not write keeps the matrix's values (zeros,
        // as the host call's).
        let mut odd: DeviceMatrix<u8> = rt.device_zeros(&[m, n]).expect("alloc");
        let before = opencl::transfers();
        resident_box(rt, &d_src, &mut wide).expect("box");
        resident_narrow(rt, &wide, &mut out, &mut odd).expect("narrow");
        resident_box(rt, &d_src, &mut wide).expect("box again");
        let moved = opencl::transfers().since(before);
        assert_eq!(
            (moved.bytes_to_device, moved.bytes_to_host),
            (0, 0),
            "{}: {m}x{n}: {moved:?}",
            rt.describe()
        );
        rt.finish().expect("no error");
        assert_eq!(out.to_host().expect("download"), want.0, "{m}x{n}");
        assert_eq!(odd.to_host().expect("download"), want.1, "{m}x{n}");
    }
}

#[test]
fn resident_and_host_matrices_mix() {
    for rt in runtimes() {
        let src = image(19, 23, 5);
        let want = on_host(&rt, &src);
        // A host input, device outputs, then a device input and host outputs.
        let mut wide: DeviceMatrix<u16> = rt.device_zeros(&[19, 23]).expect("alloc");
        resident_box(&rt, &src, &mut wide).expect("box");
        let (mut out, mut odd) = (Matrix::zeros([19, 23]), Matrix::<u8>::zeros([19, 23]));
        // Host outputs of garbage: what the call does not write is zero on a device, kept on
        // the CPU path (as for any host output).
        resident_narrow(&rt, &wide, &mut out, &mut odd).expect("narrow");
        assert_eq!(out, want.0);
        assert_eq!(odd, want.1);
        // A device matrix overwritten in place from the host (a frame loop's upload).
        let mut d_src = rt.upload(&image(19, 23, 99)).expect("upload");
        d_src.upload_from(&src).expect("upload_from");
        let mut wide2 = Matrix::<u16>::zeros([19, 23]);
        resident_box(&rt, &d_src, &mut wide2).expect("box");
        assert_eq!(wide2, wide.to_host().expect("download"));
        // A region of interest read back into.
        let mut big = Matrix::<u16>::zeros([21, 25]);
        {
            let mut roi = big.roi_mut(1, 1, 19, 23).expect("roi");
            wide.download_into(&mut roi)
                .expect("download into a region");
        }
        assert_eq!(big.get(&[1, 1]), wide2.get(&[0, 0]));
        assert_eq!(big.get(&[0, 0]), 0);
        // Shapes that do not fit: typed errors.
        assert!(matches!(
            d_src.upload_from(&image(2, 2, 0)),
            Err(Error::Shape { .. })
        ));
        let mut small = Matrix::<u8>::zeros([3, 3]);
        assert!(matches!(
            resident_box(&rt, &d_src, &mut rt.device_zeros::<u16>(&[3, 3]).unwrap()),
            Err(Error::Shape { .. })
        ));
        assert!(d_src.download_into(&mut small).is_err());
    }
}

/// Regions of interest of device matrices, as inputs and outputs, against the same regions of
/// host matrices: the same elements written, nothing outside them, no data moved.
#[test]
fn resident_regions_of_interest_match_host_views() {
    for rt in runtimes() {
        opencl::copying(|| {
            let big = image(40, 50, 3);
            for (r, c, rows, cols) in [(3, 5, 20, 30), (0, 0, 40, 50), (39, 49, 1, 1), (1, 2, 5, 1)]
            {
                let mut want = Matrix::<u16>::zeros([41, 51]);
                let mut roi = want.roi_mut(1, 1, rows, cols).expect("roi");
                resident_box(&rt, &big.roi(r, c, rows, cols).unwrap(), &mut roi).expect("host");
                let d_big = rt.upload(&big).expect("upload");
                let mut d_out: DeviceMatrix<u16> = rt.device_zeros(&[41, 51]).expect("alloc");
                let before = opencl::transfers();
                {
                    let src = d_big.roi(r, c, rows, cols).expect("roi");
                    let mut dst = d_out.roi_mut(1, 1, rows, cols).expect("roi_mut");
                    resident_box(&rt, &src, &mut dst).expect("device");
                }
                let moved = opencl::transfers().since(before);
                assert_eq!((moved.bytes_to_device, moved.bytes_to_host), (0, 0));
                assert_eq!(
                    d_out.to_host().expect("download"),
                    want,
                    "{r},{c} {rows}x{cols}"
                );
                let view = d_big.roi(r, c, rows, cols).unwrap();
                assert_eq!(
                    view.to_host().unwrap(),
                    big.roi(r, c, rows, cols).unwrap().to_matrix()
                );
                // An output region not written whole: zero where the call does not write.
                let mut odd: DeviceMatrix<u8> = rt.upload(&image(41, 51, 7)).expect("upload");
                let mut out = Matrix::<u8>::zeros([rows, cols]);
                let wide = Matrix::<u16>::from_fn([rows, cols], |i| (i[0] * 9 + i[1]) as u16);
                {
                    let mut dst = odd.roi_mut(1, 1, rows, cols).unwrap();
                    resident_narrow(&rt, &wide, &mut out, &mut dst).expect("narrow");
                }
                let got = odd.to_host().unwrap();
                let outside = image(41, 51, 7);
                for i in 0..41 {
                    for j in 0..51 {
                        let inside = (1..=rows).contains(&i) && (1..=cols).contains(&j);
                        let want = if !inside {
                            outside.get(&[i, j])
                        } else if (j - 1) % 2 == 1 {
                            1
                        } else {
                            // Not written: the matrix's own value, on every path.
                            outside.get(&[i, j])
                        };
                        assert_eq!(got.get(&[i, j]), want, "[{i}][{j}] of {rows}x{cols}");
                    }
                }
            }
            let d = rt.upload(&big).unwrap();
            assert!(matches!(d.roi(30, 0, 11, 5), Err(Error::Layout { .. })));
        });
    }
}

#[test]
fn resident_errors_come_at_the_next_wait_once_each() {
    for rt in runtimes() {
        let good = Matrix::<u8>::from_vec([5], vec![0, 1, 2, 3, 3]).expect("shape");
        let bad = Matrix::<u8>::from_vec([5], vec![0, 1, 2, 9, 3]).expect("shape");
        let table = rt
            .upload(&Matrix::<u8>::from_vec([4], vec![10, 20, 30, 40]).expect("shape"))
            .expect("upload");
        let (d_good, d_bad) = (rt.upload(&good).unwrap(), rt.upload(&bad).unwrap());
        let mut out: DeviceMatrix<u8> = rt.device_zeros(&[5]).expect("alloc");
        let expect_oob = |r: Result<(), Error>, what: &str| match r {
            Err(Error::OutOfBounds {
                function,
                matrix,
                index,
                ..
            }) => {
                assert_eq!((function, matrix), ("resident_lookup", "table"), "{what}");
                assert_eq!(index, vec![9], "{what}");
            }
            other => panic!(
                "{}: {what}: expected OutOfBounds, got {other:?}",
                rt.describe()
            ),
        };
        if rt.device().is_none() {
            // The CPU path waits for every call: the error is the call's.
            expect_oob(resident_lookup(&rt, &d_bad, &table, &mut out), "the call");
            continue;
        }
        // On a device the call returns at once; the next wait reports its error, once.
        resident_lookup(&rt, &d_bad, &table, &mut out).expect("a call that does not wait");
        resident_lookup(&rt, &d_good, &table, &mut out).expect("a call that does not wait");
        expect_oob(out.to_host().map(drop), "the download after it");
        rt.finish().expect("reported once");
        // Two failing calls: each wait reports the oldest error left.
        resident_lookup(&rt, &d_bad, &table, &mut out).expect("no wait");
        resident_lookup(&rt, &d_bad, &table, &mut out).expect("no wait");
        expect_oob(rt.finish(), "the first");
        expect_oob(rt.finish(), "the second");
        rt.finish().expect("none left");
        // A call with a host matrix waits, and reports an earlier call's error before its own.
        resident_lookup(&rt, &d_bad, &table, &mut out).expect("no wait");
        let mut host_out = Matrix::<u8>::zeros([5]);
        expect_oob(
            resident_lookup(&rt, &good, &table, &mut host_out),
            "the earlier call's, at a call that waits",
        );
        resident_lookup(&rt, &good, &table, &mut host_out).expect("clean");
        assert_eq!(host_out.as_slice(), &[10, 20, 30, 40, 40]);
        // Many calls without a wait: the device reads the oldest flags past its limit.
        for _ in 0..300 {
            resident_lookup(&rt, &d_good, &table, &mut out).expect("no wait");
        }
        rt.finish().expect("clean");
        assert_eq!(out.to_host().unwrap().as_slice(), &[10, 20, 30, 40, 40]);
    }
}

#[test]
fn resident_matrices_of_another_runtime_are_refused_by_name() {
    let Some(a) = common::runtimes::fresh_opencl() else {
        return;
    };
    let src = image(4, 4, 1);
    let on_a = a.upload(&src).expect("upload");
    let refused = |r: Result<(), Error>, param: &str, what: &str| match r {
        Err(Error::Layout {
            matrix,
            source: LayoutError::OnDevice { .. },
        }) => assert_eq!(matrix, param, "{what}"),
        other => panic!("{what}: expected Error::Layout(OnDevice), got {other:?}"),
    };
    // The CPU path cannot read it.
    let mut wide = Matrix::<u16>::zeros([4, 4]);
    refused(
        resident_box(&Runtime::cpu(), &on_a, &mut wide),
        "src",
        "an input on the CPU path",
    );
    let mut out_a: DeviceMatrix<u8> = a.device_zeros(&[4, 4]).unwrap();
    let mut odd = Matrix::<u8>::zeros([4, 4]);
    refused(
        resident_narrow(&Runtime::cpu(), &wide, &mut out_a, &mut odd),
        "out",
        "an output on the CPU path",
    );
    // Nor another runtime's device (another context), even the same hardware.
    let b = common::runtimes::fresh_opencl().expect("a second runtime");
    refused(
        resident_box(&b, &on_a, &mut wide),
        "src",
        "an input of another runtime",
    );
    refused(
        resident_narrow(&b, &wide, &mut out_a, &mut odd),
        "out",
        "an output of another runtime",
    );
    // Its own runtime takes it.
    resident_box(&a, &on_a, &mut wide).expect("its own runtime");
}
