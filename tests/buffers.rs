//! Device buffers on a real device (PoCL in CI): the reuse of dropped buffers' memory (the
//! device's pool, `Device::trim`), `alloc_uninit`, and transfers of padded rows, which go
//! through mappings on a device whose memory is the host's. Each test opens a device of its own,
//! so that the pool it counts is its own; the tests that count live buffers
//! (`parac::opencl::live_buffers()`, process-wide) hold `LIVE` exclusively.
//!
//! Without OpenCL the tests print "skipped: no OpenCL" and pass, unless
//! `PARAC_REQUIRE_OPENCL=1`.

mod common;

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread;

use common::runtimes;
use parac::opencl::{self, Arg, Buffer, Device, MemArg};
use parac::{Element, Matrix, Runtime};

/// Held by every test: those that count live buffers need the count to be their own.
static LIVE: Mutex<()> = Mutex::new(());

fn live() -> MutexGuard<'static, ()> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A runtime on a device of its own, with the disk cache of programs off.
fn fresh() -> Option<Runtime> {
    let rt = runtimes::fresh_opencl()?;
    rt.device()?.set_program_cache_dir(None);
    Some(rt)
}

fn matrix<T: Element + From<u8>>(shape: &[usize], seed: usize) -> Matrix<T> {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|i| T::from(((i * 7 + seed * 13) % 251) as u8))
        .collect();
    Matrix::from_vec(shape, v).expect("length")
}

/// Copies every element of `b`'s padded rows, padding included, into a `[rows][pitch]` buffer
/// (whose rows need no padding) and reads it back: what the device holds, padding included.
fn padded_contents<T: Element>(d: &Device, b: &Buffer<T>) -> Matrix<T> {
    let cl = match T::NAME {
        "u8" => "uchar",
        "i16" => "short",
        "f32" => "float",
        other => panic!("no copy kernel for {other}"),
    };
    let src = "__kernel void copy(__global const T* a, __global T* b, int n) {
        int i = (int)get_global_id(0);
        if (i < n) b[i] = a[i];
    }";
    let p = d
        .program(&format!("copy_{cl}"), src, &format!("-DT={cl}"))
        .expect("program");
    let rows = b.rows().max(1);
    let flat = d
        .alloc_uninit::<T>("flat", &[rows, b.pitch()])
        .expect("alloc");
    assert_eq!(
        flat.pitch(),
        b.pitch(),
        "the pitch is a multiple of the line"
    );
    let n = rows * b.pitch();
    d.launch(
        &p,
        "copy",
        &[n],
        None,
        &[Arg::Mem(b), Arg::Mem(&flat), Arg::I32(n as i32)],
    )
    .expect("launch");
    let mut m = Matrix::<T>::zeros([rows, b.pitch()]);
    d.download(&flat, &mut m).expect("download");
    m
}

/// Fills the memory of a buffer of `shape` with `junk`, drops it (its memory goes to the pool)
/// and checks that the pool holds it.
fn leave_junk<T: Element>(d: &Device, shape: &[usize], junk: T) {
    let b = d.alloc_uninit::<T>("junk", shape).expect("alloc");
    let rows = b.rows().max(1);
    let all = Matrix::from_vec([rows, b.pitch()], vec![junk; rows * b.pitch()]).expect("len");
    let mut flat = d
        .alloc_uninit::<T>("junk_flat", &[rows, b.pitch()])
        .expect("alloc");
    d.write(&mut flat, &all).expect("write");
    // Same byte size: `flat` and `b` are interchangeable memory; keep the one with junk in it.
    drop(b);
    drop(flat);
    d.finish().expect("finish");
    assert!(d.pooled_buffers() >= 1);
}

#[test]
fn dropped_memory_is_reused_and_not_live() {
    let _l = live();
    let Some(rt) = fresh() else { return };
    let d = rt.device().expect("device");
    assert_eq!(d.pooled_bytes(), 0);
    assert!(d.pool_limit() > 0 && d.pool_limit() <= 1 << 30);
    let before = opencl::live_buffers();
    let m = matrix::<u8>(&[17, 33], 1);
    let a = d.upload("a", &m).expect("upload");
    let raw = a.raw_mem();
    let bytes = 17 * a.pitch();
    assert_eq!(opencl::live_buffers(), before + 1);
    drop(a);
    // A pooled buffer is not live.
    assert_eq!(opencl::live_buffers(), before);
    assert_eq!((d.pooled_buffers(), d.pooled_bytes()), (1, bytes));
    // A buffer of another size does not take it.
    let other = d.alloc::<u8>("other", &[3, 5]).expect("alloc");
    assert_eq!(d.pooled_buffers(), 1);
    // One of the same size in bytes does, whatever its type and shape; `alloc` zero-fills it.
    let same = d
        .alloc::<i16>("same", &[17, a_pitch_half(d, 33)])
        .expect("alloc");
    assert_eq!(same.raw_mem(), raw, "the pooled memory object is reused");
    assert_eq!(d.pooled_buffers(), 0);
    let mut back = Matrix::<i16>::zeros(same.shape());
    back.as_mut_slice().fill(-1);
    d.download(&same, &mut back).expect("download");
    assert!(back.as_slice().iter().all(|v| *v == 0), "alloc zero-fills");
    assert_eq!(opencl::live_buffers(), before + 2);
    drop((other, same));
    assert_eq!(opencl::live_buffers(), before);
    assert_eq!(d.pooled_buffers(), 2);
    // `trim` releases everything it kept.
    let pooled = d.pooled_bytes();
    assert_eq!(d.trim(), pooled);
    assert_eq!((d.pooled_buffers(), d.pooled_bytes()), (0, 0));
    assert_eq!(d.trim(), 0);
}

/// The column count of an `i16` matrix whose padded rows have the byte size of `u8` rows of
/// `cols` columns.
fn a_pitch_half(d: &Device, cols: usize) -> usize {
    let line = d.info().cache_line;
    cols.div_ceil(line) * line / 2
}

#[test]
fn scalars_reuse_memory_and_hold_their_value() {
    let _l = live();
    let Some(rt) = fresh() else { return };
    let d = rt.device().expect("device");
    let before = opencl::live_buffers();
    let s = d.scalar(-5i64).expect("scalar");
    let raw = s.raw_mem();
    drop(s);
    assert_eq!(d.pooled_buffers(), 1);
    let t = d.scalar(123_456_789_012i64).expect("scalar");
    assert_eq!(t.raw_mem(), raw);
    assert_eq!(d.read_scalar(&t).expect("read"), 123_456_789_012);
    let u = d.scalar(7u64).expect("scalar");
    assert_eq!(d.read_scalar(&u).expect("read"), 7);
    assert_eq!(opencl::live_buffers(), before + 2);
    drop((t, u));
    assert_eq!(opencl::live_buffers(), before);
}

#[test]
fn the_pool_is_bounded_and_releases_the_oldest_first() {
    let _l = live();
    let Some(rt) = fresh() else { return };
    let d = rt.device().expect("device");
    let line = d.info().cache_line;
    // Buffers of 1, 2 and 3 lines per row, 4 rows.
    let sizes = [line, 2 * line, 3 * line];
    d.set_pool_limit(4 * (sizes[1] + sizes[2]));
    assert_eq!(d.pool_limit(), 4 * (sizes[1] + sizes[2]));
    let bufs: Vec<_> = sizes
        .iter()
        .map(|c| d.alloc::<u8>("b", &[4, *c]).expect("alloc"))
        .collect();
    let raws: Vec<_> = bufs.iter().map(|b| b.raw_mem()).collect();
    drop(bufs);
    // The first (oldest) had to go to make room for the third.
    assert_eq!(d.pooled_bytes(), 4 * (sizes[1] + sizes[2]));
    assert_eq!(d.pooled_buffers(), 2);
    let again = d.alloc::<u8>("b", &[4, sizes[2]]).expect("alloc");
    assert_eq!(again.raw_mem(), raws[2]);
    // Memory larger than the limit is never kept.
    d.set_pool_limit(4 * sizes[0]);
    assert_eq!(
        d.pooled_bytes(),
        0,
        "lowering the limit releases the oldest"
    );
    drop(again);
    assert_eq!(d.pooled_bytes(), 0);
    // A limit of 0 turns the reuse off.
    d.set_pool_limit(0);
    drop(d.alloc::<u8>("b", &[1, 1]).expect("alloc"));
    assert_eq!(d.pooled_buffers(), 0);
}

#[test]
fn alloc_zero_fills_and_uploads_zero_the_padding_of_reused_memory() {
    let _l = live();
    let Some(rt) = fresh() else { return };
    let d = rt.device().expect("device");
    // Shapes with padded rows (and one without), in 1 to 3 dimensions.
    let shapes: [&[usize]; 5] = [&[17, 33], &[3, 5, 7], &[5], &[1, 1], &[4, 64]];
    for shape in shapes {
        leave_junk::<u8>(d, shape, 0xAB);
        let z = d.alloc::<u8>("z", shape).expect("alloc");
        let all = padded_contents(d, &z);
        assert!(all.as_slice().iter().all(|v| *v == 0), "alloc {shape:?}");
        drop(z);

        leave_junk::<u8>(d, shape, 0xCD);
        let m = matrix::<u8>(shape, 3);
        let up = d.upload("m", &m).expect("upload");
        let mut back = Matrix::<u8>::zeros(shape);
        d.download(&up, &mut back).expect("download");
        assert_eq!(back, m, "round trip {shape:?}");
        let cols = shape[shape.len() - 1];
        let all = padded_contents(d, &up);
        for (r, row) in all.as_slice().chunks(up.pitch()).enumerate() {
            assert_eq!(&row[..cols], &m.as_slice()[r * cols..(r + 1) * cols]);
            assert!(row[cols..].iter().all(|v| *v == 0), "padding {shape:?}");
        }
    }
}

#[test]
fn alloc_uninit_then_write_and_download() {
    let _l = live();
    let Some(rt) = fresh() else { return };
    let d = rt.device().expect("device");
    for shape in [&[9, 13][..], &[2, 3, 17], &[40]] {
        leave_junk::<f32>(d, shape, f32::NAN);
        let mut u = d.alloc_uninit::<f32>("u", shape).expect("alloc_uninit");
        assert_eq!(u.shape(), shape);
        let line = d.info().cache_line;
        assert_eq!(u.pitch() * 4 % line, 0);
        let m = Matrix::<f32>::from_fn(shape, |i| i.iter().sum::<usize>() as f32 + 0.5);
        d.write(&mut u, &m).expect("write");
        let mut back = Matrix::<f32>::zeros(shape);
        d.download(&u, &mut back).expect("download");
        assert_eq!(back, m);
        // `write` leaves the padding zero, whatever was there.
        let cols = shape[shape.len() - 1];
        let all = padded_contents(d, &u);
        for row in all.as_slice().chunks(u.pitch()) {
            assert!(row[cols..].iter().all(|v| v.to_bits() == 0), "{shape:?}");
        }
    }
    // Empty matrices.
    let e = d.alloc_uninit::<i16>("e", &[0, 5]).expect("alloc_uninit");
    let mut em = Matrix::<i16>::zeros([0, 5]);
    d.download(&e, &mut em).expect("download");
}

#[test]
fn padded_transfers_of_every_width() {
    let _l = live();
    let Some(rt) = fresh() else { return };
    let d = rt.device().expect("device");
    if d.info().name.to_lowercase().contains("pthread") || !d.info().is_gpu {
        assert!(
            d.info().host_unified_memory,
            "a CPU device's memory is the host's"
        );
    }
    for cols in [1, 2, 3, 31, 63, 64, 65, 100, 127, 129] {
        for rows in [1, 2, 7] {
            let m = matrix::<i16>(&[rows, cols], cols + rows);
            let up = d.upload("m", &m).expect("upload");
            let mut back = Matrix::<i16>::zeros([rows, cols]);
            d.download(&up, &mut back).expect("download");
            assert_eq!(back, m, "[{rows}][{cols}]");
            let m3 = matrix::<i16>(&[2, rows, cols], cols * rows);
            let up3 = d.upload("m3", &m3).expect("upload");
            let mut back3 = Matrix::<i16>::zeros([2, rows, cols]);
            d.download(&up3, &mut back3).expect("download");
            assert_eq!(back3, m3, "[2][{rows}][{cols}]");
        }
    }
}

#[test]
fn threads_share_a_device_and_its_pool() {
    let _l = live();
    let Some(rt) = fresh() else { return };
    let d = rt.device().expect("device");
    let before = opencl::live_buffers();
    thread::scope(|s| {
        for t in 0..4usize {
            s.spawn(move || {
                for i in 0..60usize {
                    // A few sizes, so that threads take each other's memory.
                    let shape = [3 + (i + t) % 4, 20 + 7 * ((i * 3 + t) % 5)];
                    let m = matrix::<u8>(&shape, i * 4 + t);
                    let up = d.upload("m", &m).expect("upload");
                    let z = d.alloc::<u8>("z", &shape).expect("alloc");
                    let mut back = Matrix::<u8>::zeros(shape);
                    d.download(&up, &mut back).expect("download");
                    assert_eq!(back, m, "thread {t}, round {i}");
                    d.download(&z, &mut back).expect("download");
                    assert!(back.as_slice().iter().all(|v| *v == 0));
                }
            });
        }
    });
    d.finish().expect("finish");
    assert_eq!(opencl::live_buffers(), before);
    // At most every size (4) times the buffers alive at once (2 per thread).
    assert!(d.pooled_buffers() <= 32, "{} kept", d.pooled_buffers());
}

#[test]
fn dropping_the_device_releases_the_pool_and_outliving_buffers_still_drop() {
    let _l = live();
    let Some(rt) = fresh() else { return };
    let before = opencl::live_buffers();
    let d = rt.device().expect("device");
    drop(d.upload("a", &matrix::<u8>(&[8, 8], 1)).expect("upload"));
    let kept = d.upload("b", &matrix::<u8>(&[9, 8], 2)).expect("upload");
    assert_eq!(d.pooled_buffers(), 1);
    drop(rt);
    assert_eq!(opencl::live_buffers(), before + 1);
    // Its device is gone: the memory is released, not kept.
    drop(kept);
    assert_eq!(opencl::live_buffers(), before);
}

/// `rows x cols` elements of `a` (rows of `pa`) into `b` (rows of `pb`), one work-item each.
fn copy_rows(
    d: &Device,
    a: &dyn MemArg,
    pa: usize,
    b: &dyn MemArg,
    pb: usize,
    rows: usize,
    cols: usize,
) {
    let src = "__kernel void copy2(__global const float* a, int pa, __global float* b, int pb, int cols) {
        int r = (int)get_global_id(0), c = (int)get_global_id(1);
        if (c < cols) b[r * pb + c] = a[r * pa + c] + 1.0f;
    }";
    let p = d.program("copy2", src, "").expect("program");
    d.launch(
        &p,
        "copy2",
        &[rows, cols],
        None,
        &[
            Arg::Mem(a),
            Arg::I32(pa as i32),
            Arg::Mem(b),
            Arg::I32(pb as i32),
            Arg::I32(cols as i32),
        ],
    )
    .expect("launch");
}

#[test]
fn call_views_work_in_place_or_as_copies() {
    let _l = live();
    let Some(rt) = fresh() else { return };
    let d = rt.device().expect("device");
    let unified = d.info().host_unified_memory;
    let line = d.info().cache_line / size_of::<f32>();
    let before = opencl::live_buffers();
    // In place on a host-memory device, whatever the width (rows unpadded there), else copies
    // with padded rows.
    for (rows, cols) in [(3, line), (2, 4 * line), (3, 5), (1, 1), (4, line + 1)] {
        let a = matrix::<f32>(&[rows, cols], rows + cols);
        let mut out = Matrix::<f32>::zeros([rows, cols]);
        out.as_mut_slice().fill(-7.0);
        {
            // SAFETY: the views are dropped (or finished) in this block, and the kernel only
            // reads `ia`.
            let ia = unsafe { d.input("a", &a) }.expect("input");
            assert_eq!(ia.in_place(), unified, "input [{rows}][{cols}]");
            let padded = cols.div_ceil(line) * line;
            assert_eq!(ia.pitch(), if unified { cols } else { padded });
            let ob = unsafe { d.output("out", &mut out, &[rows, cols], true) }.expect("output");
            assert_eq!(ob.in_place(), unified, "output [{rows}][{cols}]");
            assert_eq!(opencl::live_buffers(), before + 2);
            copy_rows(d, &*ia, ia.pitch(), &*ob, ob.pitch(), rows, cols);
            ob.finish().expect("finish");
        }
        let want: Vec<f32> = a.as_slice().iter().map(|v| v + 1.0).collect();
        assert_eq!(out.as_slice(), &want[..], "[{rows}][{cols}]");
        // An output not written whole keeps the caller's values, in place or not.
        let mut z = Matrix::<f32>::zeros([rows, cols]);
        z.as_mut_slice().fill(3.0);
        // SAFETY: finished at once.
        unsafe { d.output("z", &mut z, &[rows, cols], false) }
            .expect("output")
            .finish()
            .expect("finish");
        assert!(z.as_slice().iter().all(|v| *v == 3.0), "[{rows}][{cols}]");
        // In-place views are released, not pooled.
        assert_eq!(opencl::live_buffers(), before);
    }
    let mut wrong = Matrix::<f32>::zeros([2, 3]);
    // SAFETY: no view is made (the shapes differ).
    let e = unsafe { d.output("out", &mut wrong, &[3, 2], true) }
        .err()
        .expect("a shape error");
    let msg = e.to_string();
    assert!(msg.contains("out") && msg.contains("[3][2]"), "{msg}");
}

/// A matrix type that claims more elements than it holds.
struct Liar(Vec<f32>);

impl parac::MatrixRef<f32> for Liar {
    fn shape(&self) -> &[usize] {
        &[4, 16]
    }
    fn as_slice(&self) -> &[f32] {
        &self.0
    }
}

#[test]
fn a_view_of_a_matrix_shorter_than_its_shape_is_a_layout_error() {
    let _l = live();
    let Some(rt) = fresh() else { return };
    let d = rt.device().expect("device");
    let liar = Liar(vec![1.0; 16]);
    // SAFETY: no view is made.
    let e = unsafe { d.input::<f32, _>("liar", &liar) }
        .err()
        .expect("a layout error");
    assert!(
        matches!(
            e,
            parac::Error::Layout {
                matrix: "liar",
                source: parac::LayoutError::TooShort { .. }
            }
        ),
        "{e}"
    );
}

/// Kernels index a device matrix in `int`, a constant column offset added last
/// (`parac_core::codegen::opencl::INDEX_SLACK`): a matrix of more than `i32::MAX - INDEX_SLACK`
/// elements, padding included, is refused with the matrix's name and shape before anything is
/// allocated; one at the limit is not refused for its size.
#[test]
fn a_device_matrix_leaves_room_for_index_offsets() {
    let _l = live();
    let Some(rt) = fresh() else { return };
    let d = rt.device().expect("device");
    let most = i32::MAX as usize - parac_core::codegen::opencl::INDEX_SLACK as usize;
    // One row past the limit (a pitch that pads nothing: the width a multiple of any line).
    let cols = 1 << 16;
    let rows = most / cols + 1;
    let err = d
        .alloc_uninit::<u8>("big", &[rows, cols])
        .expect_err("too many elements");
    let text = err.to_string();
    assert!(
        text.contains("big") && text.contains(&format!("{most}")),
        "{text}"
    );
    let within = most / cols;
    if let Err(e) = d.alloc_uninit::<u8>("fits", &[within, cols]) {
        // Only the device's own limit (its largest allocation) may refuse it.
        assert!(!e.to_string().contains("kernels index it"), "{e}");
    }
}
