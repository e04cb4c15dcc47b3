//! The OpenCL layer on a real device (PoCL in CI).
//!
//! Without OpenCL the tests that need a device print "skipped: no OpenCL" and pass, unless
//! `PARAC_REQUIRE_OPENCL=1`, which turns a missing device into a failure. `PARAC_DEVICE=opencl:…`
//! picks the device the tests run on.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock, PoisonError, RwLock, RwLockReadGuard};
use std::thread;

use parac_runtime::opencl::{self, Arg, Device, Program};
use parac_runtime::{Element, Error, Matrix, Runtime};

/// Tests that allocate device buffers hold this shared; the leak test holds it exclusively, so
/// that the process-wide count of live buffers is its own.
static BUFFERS: RwLock<()> = RwLock::new(());

fn buffers() -> RwLockReadGuard<'static, ()> {
    BUFFERS.read().unwrap_or_else(PoisonError::into_inner)
}

/// A fresh runtime on an OpenCL device (`PARAC_DEVICE` if it names one, else `opencl`), or
/// `None` when there is none: then it prints "skipped: no OpenCL", or panics when
/// `PARAC_REQUIRE_OPENCL=1`.
fn opencl() -> Option<Runtime> {
    let spec = std::env::var("PARAC_DEVICE")
        .ok()
        .filter(|s| s.trim().to_ascii_lowercase().starts_with("opencl"))
        .unwrap_or_else(|| "opencl".to_string());
    match Runtime::from_spec(&spec) {
        Ok(rt) => {
            assert!(rt.device().is_some(), "`{spec}` gave {}", rt.describe());
            Some(rt)
        }
        Err(e) => {
            if std::env::var("PARAC_REQUIRE_OPENCL").is_ok_and(|v| v == "1") {
                panic!("PARAC_REQUIRE_OPENCL=1, but there is no OpenCL device: {e}");
            }
            println!("skipped: no OpenCL ({e})");
            None
        }
    }
}

/// One runtime shared by the tests that need no fresh device; its disk cache is off.
fn shared() -> Option<&'static Runtime> {
    static RT: OnceLock<Option<Runtime>> = OnceLock::new();
    let rt = RT
        .get_or_init(|| {
            let rt = opencl()?;
            rt.device()?.set_program_cache_dir(None);
            Some(rt)
        })
        .as_ref();
    if rt.is_none() {
        println!("skipped: no OpenCL");
    }
    rt
}

fn dev(rt: &Runtime) -> &Device {
    rt.device().expect("an OpenCL runtime")
}

/// A directory of its own under the temporary directory, empty, removed when dropped.
fn temp_dir(what: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("parac-test-{what}-"))
        .tempdir()
        .expect("temp dir")
}

const ADD: &str = r"
__kernel void add(__global const T *a, __global const T *b, __global T *c,
                  int rows, int cols, int pitch) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= cols || y >= rows) return;
    int i = y * pitch + x;
    c[i] = (T)(a[i] + b[i]);
}
";

const IOTA: &str = r"
__kernel void iota(__global int *out, int rows, int cols, int pitch) {
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= cols || y >= rows) return;
    out[y * pitch + x] = y * 1000 + x;
}

__kernel void iota1(__global int *out, int n) {
    int i = get_global_id(0);
    if (i < n) out[i] = i;
}
";

const SCALARS: &str = r"
__kernel void sum(__global const int *a, int n, __global int *s) {
    int i = get_global_id(0);
    if (i < n) atomic_add(s, a[i]);
}

__kernel void put_long(__global long *s, long v) {
    if (get_global_id(0) == 0) *s = v * 3;
}
";

/// An element type of the tests, with values whose sums stay exact and in range.
trait TestElem: Element {
    const CL: &'static str;
    fn val(i: usize, salt: usize) -> Self;
    fn add(a: Self, b: Self) -> Self;
}

impl TestElem for u8 {
    const CL: &'static str = "uchar";
    fn val(i: usize, salt: usize) -> Self {
        ((i * 7 + salt) % 120) as u8
    }
    fn add(a: Self, b: Self) -> Self {
        a + b
    }
}

impl TestElem for i16 {
    const CL: &'static str = "short";
    fn val(i: usize, salt: usize) -> Self {
        ((i * 31 + salt) % 2000) as i16 - 1000
    }
    fn add(a: Self, b: Self) -> Self {
        a + b
    }
}

impl TestElem for f32 {
    const CL: &'static str = "float";
    fn val(i: usize, salt: usize) -> Self {
        ((i * 13 + salt) % 1000) as f32 * 0.5 - 250.0
    }
    fn add(a: Self, b: Self) -> Self {
        a + b
    }
}

fn matrix<T: TestElem>(shape: &[usize], salt: usize) -> Matrix<T> {
    let n = shape.iter().product();
    Matrix::from_vec(shape, (0..n).map(|i| T::val(i, salt)).collect()).expect("length")
}

fn host_add<T: TestElem>(a: &Matrix<T>, b: &Matrix<T>) -> Matrix<T> {
    let data = a
        .as_slice()
        .iter()
        .zip(b.as_slice())
        .map(|(&x, &y)| T::add(x, y))
        .collect();
    Matrix::from_vec(a.shape(), data).expect("length")
}

fn rows_cols(shape: &[usize]) -> (usize, usize) {
    let cols = shape[shape.len() - 1];
    (shape[..shape.len() - 1].iter().product(), cols)
}

/// `a + b` on the device: upload, launch, download.
fn device_add<T: TestElem>(d: &Device, a: &Matrix<T>, b: &Matrix<T>) -> Result<Matrix<T>, Error> {
    let p = d.program(&format!("add_{}", T::CL), ADD, &format!("-DT={}", T::CL))?;
    let shape = a.shape().to_vec();
    let (rows, cols) = rows_cols(&shape);
    let da = d.upload("a", a)?;
    let db = d.upload("b", b)?;
    let dc = d.alloc::<T>("c", &shape)?;
    d.launch(
        &p,
        "add",
        &[cols, rows],
        Some(&[8, 8]),
        &[
            Arg::Mem(&da),
            Arg::Mem(&db),
            Arg::Mem(&dc),
            Arg::I32(rows as i32),
            Arg::I32(cols as i32),
            Arg::I32(dc.pitch() as i32),
        ],
    )?;
    let mut out = Matrix::zeros(shape);
    d.download(&dc, &mut out)?;
    Ok(out)
}

const SHAPES: [&[usize]; 8] = [
    &[1, 1],
    &[3, 5],
    &[17, 33],
    &[2, 3, 7],
    &[5],
    &[100],
    &[4, 64],
    &[3, 16],
];

fn round_trip<T: TestElem>(d: &Device) {
    for (k, shape) in SHAPES.iter().enumerate() {
        let a = matrix::<T>(shape, k);
        let b = matrix::<T>(shape, 100 + k);
        let got = device_add(d, &a, &b).unwrap_or_else(|e| panic!("{} {shape:?}: {e}", T::NAME));
        assert_eq!(got, host_add(&a, &b), "{} {shape:?}", T::NAME);
        // Upload and download alone round-trip exactly too.
        let up = d.upload("a", &a).expect("upload");
        let mut back = Matrix::zeros(shape.to_vec());
        d.download(&up, &mut back).expect("download");
        assert_eq!(back, a, "{} {shape:?}", T::NAME);
    }
}

#[test]
fn discovery_and_describe() {
    let Some(rt) = opencl() else { return };
    let info = dev(&rt).info();
    let text = rt.describe();
    assert_eq!(
        text,
        format!(
            "OpenCL: {} / {} (driver {})",
            info.platform, info.name, info.driver_version
        )
    );
    println!("{text}\n{info:#?}");
    assert!(!info.name.is_empty() && !info.platform.is_empty());
    assert!(info.compute_units > 0);
    assert!(info.max_work_group_size > 0);
    assert!(info.local_mem_size > 0);
    assert!(info.cache_line > 0);
    assert!(info.max_alloc > 0);
    assert!(
        info.preferred_vector_width.iter().all(|&w| w >= 1),
        "{info:?}"
    );
    let all = opencl::devices().expect("devices");
    assert!(all.contains(info), "{all:?}");
    assert!(format!("{rt:?}").contains(&info.name));
}

#[test]
fn device_specs() {
    // These hold with and without OpenCL.
    let cpu = Runtime::from_spec("cpu").expect("cpu");
    assert!(cpu.device().is_none());
    assert!(
        cpu.describe().starts_with("CPU path ("),
        "{}",
        cpu.describe()
    );
    assert!(Runtime::cpu().device().is_none());
    let auto = Runtime::from_spec("auto").expect("auto never fails");
    let empty = Runtime::from_spec("").expect("empty never fails");
    assert_eq!(auto.device().is_some(), empty.device().is_some());
    for bad in ["gpu", "opencl-x", "cuda:0"] {
        assert!(
            matches!(Runtime::from_spec(bad), Err(Error::NoDevice { .. })),
            "{bad}"
        );
    }
    let none = Runtime::from_spec("opencl:nonexistent-device-xyz").expect_err("no such device");
    let Error::NoDevice { spec, reason } = &none else {
        panic!("{none:?}")
    };
    assert_eq!(spec, "opencl:nonexistent-device-xyz");

    let Some(rt) = opencl() else {
        assert!(auto.device().is_none());
        assert!(matches!(
            Runtime::from_spec("opencl"),
            Err(Error::NoDevice { .. })
        ));
        return;
    };
    let info = dev(&rt).info().clone();
    // Auto picks an OpenCL GPU when there is one, else the CPU path (not an OpenCL CPU device
    // such as PoCL); with a name, any device that matches.
    let gpu = opencl_devices_include_a_gpu();
    assert_eq!(auto.device().is_some(), gpu, "{}", auto.describe());
    if let Some(d) = auto.device() {
        assert!(d.info().is_gpu, "{}", auto.describe());
    }
    let named = Runtime::from_spec(&format!("auto:{}", info.name)).expect("auto never fails");
    assert!(named.device().is_some(), "{}", named.describe());
    // The reason lists what exists.
    assert!(reason.contains(&info.name), "{reason}");
    // Matching is by substring of the platform or device name, case-insensitively.
    let name_part: String = info.name.chars().take(6).collect::<String>().to_uppercase();
    let platform_part = info.platform.to_lowercase();
    for spec in [
        format!("opencl:{name_part}"),
        format!("opencl:{platform_part}"),
        format!(" OpenCL:{platform_part} "),
    ] {
        let r = Runtime::from_spec(&spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert!(r.device().is_some(), "{spec}");
    }
    if info.platform == "Portable Computing Language" {
        let r = Runtime::from_spec("opencl:pocl").expect("opencl:pocl");
        assert_eq!(dev(&r).info().platform, info.platform);
    }
    assert!(
        Runtime::from_spec("opencl:")
            .expect("opencl:")
            .device()
            .is_some()
    );
}

/// Whether any OpenCL device is a GPU.
fn opencl_devices_include_a_gpu() -> bool {
    opencl::devices().is_ok_and(|d| d.iter().any(|i| i.is_gpu))
}

#[test]
fn concurrent_discovery() {
    // Sixteen threads opening devices at once (PoCL 3.1 crashed on this before discovery was
    // serialised).
    let found: Vec<bool> = thread::scope(|scope| {
        let handles: Vec<_> = (0..16)
            .map(|_| scope.spawn(|| Runtime::from_spec("auto").expect("auto").device().is_some()))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("join"))
            .collect()
    });
    assert!(found.iter().all(|&f| f == found[0]), "{found:?}");
}

#[test]
fn add_round_trips_u8_i16_f32() {
    let Some(rt) = shared() else { return };
    let _b = buffers();
    let d = dev(rt);
    round_trip::<u8>(d);
    round_trip::<i16>(d);
    round_trip::<f32>(d);
}

#[test]
fn rows_are_padded_to_the_cache_line() {
    let Some(rt) = shared() else { return };
    let _b = buffers();
    let d = dev(rt);
    let line = d.info().cache_line;
    fn check<T: Element>(d: &Device, line: usize) {
        for shape in SHAPES {
            let b = d.alloc::<T>("m", shape).expect("alloc");
            let cols = shape[shape.len() - 1];
            assert_eq!(b.shape(), shape);
            assert!(b.pitch() >= cols, "{shape:?}");
            assert_eq!(
                b.pitch() * size_of::<T>() % line,
                0,
                "{} {shape:?}",
                T::NAME
            );
            assert!(b.pitch() * size_of::<T>() < cols * size_of::<T>() + 2 * line);
            // A fresh buffer is zero.
            let mut m = Matrix::<T>::from_vec(shape, vec![T::default(); shape.iter().product()])
                .expect("length");
            d.download(&b, &mut m).expect("download");
            assert!(m.as_slice().iter().all(|v| *v == T::default()));
        }
    }
    check::<u8>(d, line);
    check::<i8>(d, line);
    check::<u16>(d, line);
    check::<i16>(d, line);
    check::<u32>(d, line);
    check::<i32>(d, line);
    check::<f32>(d, line);
    // Shapes outside 1 to 3 dimensions, and shape mismatches, are errors.
    assert!(d.alloc::<u8>("m", &[]).is_err());
    assert!(d.alloc::<u8>("m", &[1, 2, 3, 4]).is_err());
    let b = d.alloc::<u8>("m", &[3, 5]).expect("alloc");
    let mut wrong = Matrix::<u8>::zeros([5, 3]);
    match d.download(&b, &mut wrong) {
        Err(Error::Shape { expected, got, .. }) => {
            assert_eq!((expected, got), (vec![3, 5], vec![5, 3]));
        }
        other => panic!("{other:?}"),
    }
    // Zero-sized matrices work.
    let z = d
        .upload("z", &Matrix::<f32>::zeros([0, 4]))
        .expect("empty upload");
    let mut zm = Matrix::<f32>::zeros([0, 4]);
    d.download(&z, &mut zm).expect("empty download");
    // A rewrite through `write`.
    let mut b = d.upload("w", &matrix::<i16>(&[17, 33], 1)).expect("upload");
    let m2 = matrix::<i16>(&[17, 33], 2);
    d.write(&mut b, &m2).expect("write");
    let mut back = Matrix::zeros([17, 33]);
    d.download(&b, &mut back).expect("download");
    assert_eq!(back, m2);
}

fn check_iota(d: &Device, p: &Program, rows: usize, cols: usize, local: Option<&[usize]>) {
    let out = d.alloc::<i32>("out", &[rows, cols]).expect("alloc");
    d.launch(
        p,
        "iota",
        &[cols, rows],
        local,
        &[
            Arg::Mem(&out),
            Arg::I32(rows as i32),
            Arg::I32(cols as i32),
            Arg::I32(out.pitch() as i32),
        ],
    )
    .unwrap_or_else(|e| panic!("launch with local {local:?}: {e}"));
    let mut m = Matrix::<i32>::zeros([rows, cols]);
    d.download(&out, &mut m).expect("download");
    for y in 0..rows {
        for x in 0..cols {
            assert_eq!(
                m.as_slice()[y * cols + x],
                (y * 1000 + x) as i32,
                "[{y}][{x}]"
            );
        }
    }
}

#[test]
fn program_caches_in_process_and_on_disk() {
    let Some(first) = opencl() else { return };
    let _b = buffers();
    let dir_tmp = temp_dir("cache");
    let dir = dir_tmp.path().to_path_buf();
    let src = format!("{IOTA}\n// program cache test {}\n", dir.display());
    let open = || {
        let rt = opencl().expect("a second runtime on the same device");
        dev(&rt).set_program_cache_dir(Some(dir.clone()));
        rt
    };
    let d1 = dev(&first);
    d1.set_program_cache_dir(Some(dir.clone()));
    assert_eq!(d1.program_cache_dir(), Some(dir.clone()));

    // Built from source once; the second call is the same program.
    let p1 = d1.program("iota_cached", &src, "").expect("build");
    assert!(!p1.from_disk());
    assert_eq!(p1.name(), "iota_cached");
    let mut kernels = p1.kernel_names();
    kernels.sort();
    assert_eq!(kernels, ["iota", "iota1"]);
    let again = d1.program("iota_cached", &src, "").expect("cached");
    assert!(Arc::ptr_eq(&p1, &again));
    let other = d1
        .program("iota_cached", &src, "-DUNUSED=1")
        .expect("other options");
    assert!(!Arc::ptr_eq(&p1, &other));
    check_iota(d1, &p1, 5, 7, None);
    let file = opencl::cache_file_path(d1, &src, "").expect("disk cache on");
    assert!(file.exists(), "{}", file.display());

    // A fresh device on the same machine loads the binary from disk, and it runs.
    let rt2 = open();
    let p2 = dev(&rt2).program("iota_cached", &src, "").expect("load");
    assert!(p2.from_disk());
    check_iota(dev(&rt2), &p2, 9, 70, Some(&[8, 8]));

    // Damaged or foreign cache files are ignored, rebuilt and rewritten.
    let other_file = opencl::cache_file_path(d1, &src, "-DUNUSED=1").expect("path");
    let whole = fs::read(&file).expect("cache file");
    let damage: [(&str, Vec<u8>); 4] = [
        ("garbage", b"not a program binary".to_vec()),
        ("truncated", whole[..whole.len() / 2].to_vec()),
        (
            "another program's",
            fs::read(&other_file).expect("other cache file"),
        ),
        ("empty", Vec::new()),
    ];
    for (what, bytes) in damage {
        fs::write(&file, bytes).expect("write");
        let rt = open();
        let p = dev(&rt).program("iota_cached", &src, "").expect(what);
        assert!(!p.from_disk(), "{what} file was used");
        check_iota(dev(&rt), &p, 3, 3, None);
        let rt = open();
        assert!(
            dev(&rt)
                .program("iota_cached", &src, "")
                .expect(what)
                .from_disk(),
            "{what} file was not rewritten"
        );
    }

    // With the disk cache off nothing is written.
    fs::remove_dir_all(&dir).expect("clean up");
    let rt = open();
    dev(&rt).set_program_cache_dir(None);
    let p = dev(&rt).program("iota_cached", &src, "").expect("build");
    assert!(!p.from_disk());
    assert!(!dir.exists());
}

#[test]
fn build_failure_has_log_and_numbered_source() {
    let Some(rt) = shared() else { return };
    let d = dev(rt);
    let src = "__kernel void broken(__global int *a) {\n    a[0] = 1;\n    this is not C;\n}\n";
    let e = d.program("broken", src, "").expect_err("must not build");
    let text = e.to_string();
    let Error::Build {
        program,
        log,
        source_listing,
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(program, "broken");
    assert!(!log.trim().is_empty());
    assert!(
        source_listing.contains("  3 |     this is not C;"),
        "{source_listing}"
    );
    assert!(
        text.contains(log.as_str()) && text.contains("  3 |     this is not C;"),
        "{text}"
    );
    println!("{text}");
    // Not cached: it fails again.
    assert!(matches!(
        d.program("broken", src, ""),
        Err(Error::Build { .. })
    ));
    // Bad options are an error too (a build error or CL_INVALID_BUILD_OPTIONS).
    assert!(d.program("opts", IOTA, "-cl-no-such-option").is_err());
    assert!(d.program("nul", IOTA, "-DA=1\0").is_err());
}

#[test]
fn impossible_local_size_falls_back() {
    let Some(rt) = shared() else { return };
    let _b = buffers();
    let d = dev(rt);
    let p = d.program("iota", IOTA, "").expect("build");
    for _ in 0..2 {
        // The second launch starts from the remembered size.
        check_iota(d, &p, 30, 50, Some(&[4096, 4096]));
    }
    check_iota(d, &p, 30, 50, Some(&[3, 5]));
    let out = d.alloc::<i32>("out", &[1000]).expect("alloc");
    d.launch(
        &p,
        "iota1",
        &[1000],
        Some(&[1 << 24]),
        &[Arg::Mem(&out), Arg::I32(1000)],
    )
    .expect("1-D launch");
    let mut m = Matrix::<i32>::zeros([1000]);
    d.download(&out, &mut m).expect("download");
    assert!(m.as_slice().iter().enumerate().all(|(i, &v)| v == i as i32));
}

#[test]
fn launch_errors_name_kernel_and_argument() {
    let Some(rt) = shared() else { return };
    let _b = buffers();
    let d = dev(rt);
    let p = d.program("iota", IOTA, "").expect("build");
    let out = d.alloc::<i32>("out", &[4, 4]).expect("alloc");
    let args = [
        Arg::Mem(&out),
        Arg::I32(4),
        Arg::I32(4),
        Arg::I32(out.pitch() as i32),
    ];
    let code = |r: Result<(), Error>| match r {
        Err(Error::OpenCl {
            op,
            code,
            name,
            detail,
        }) => (op, code, name, detail),
        other => panic!("{other:?}"),
    };
    // A wrong argument type (size).
    let mut bad = args;
    bad[1] = Arg::I64(4);
    let (op, c, name, detail) = code(d.launch(&p, "iota", &[4, 4], None, &bad));
    assert_eq!(
        (op.as_str(), c, name),
        ("clSetKernelArg(iota, 1)", -51, "CL_INVALID_ARG_SIZE")
    );
    assert!(
        detail.contains("argument 1") && detail.contains("iota"),
        "{detail}"
    );
    // A wrong argument count.
    let (op, c, _, detail) = code(d.launch(&p, "iota", &[4, 4], None, &args[..3]));
    assert_eq!(c, -52, "{op}: {detail}");
    assert!(detail.contains("takes 4 arguments, 3 given"), "{detail}");
    // An unknown kernel.
    let (op, c, _, detail) = code(d.launch(&p, "nope", &[4], None, &args));
    assert_eq!((op.as_str(), c), ("clCreateKernel(nope)", -46));
    assert!(detail.contains("iota1"), "{detail}");
    // Bad sizes.
    assert_eq!(
        code(d.launch(&p, "iota", &[1, 1, 1, 1], None, &args)).1,
        -53
    );
    assert_eq!(
        code(d.launch(&p, "iota", &[4, 4], Some(&[4]), &args)).1,
        -53
    );
    assert_eq!(
        code(d.launch(&p, "iota", &[4, 4], Some(&[0, 4]), &args)).1,
        -54
    );
    // A buffer of another device (context).
    let other = opencl().expect("second runtime");
    dev(&other).set_program_cache_dir(None);
    let foreign = dev(&other).alloc::<i32>("foreign", &[4, 4]).expect("alloc");
    let mut mixed = args;
    mixed[0] = Arg::Mem(&foreign);
    let (op, c, _, detail) = code(d.launch(&p, "iota", &[4, 4], None, &mixed));
    assert_eq!((op.as_str(), c), ("clSetKernelArg(iota, 0)", -34));
    assert!(detail.contains("foreign"), "{detail}");
    // A program of another device.
    let p_other = dev(&other).program("iota", IOTA, "").expect("build");
    assert_eq!(
        code(d.launch(&p_other, "iota", &[4, 4], None, &args)).1,
        -34
    );
    // An empty range enqueues nothing; the kernel still works afterwards.
    d.launch(&p, "iota", &[0, 4], None, &args)
        .expect("empty range");
    d.launch(&p, "iota", &[4, 4], None, &args).expect("launch");
    d.finish().expect("finish");
}

#[test]
fn scalars() {
    let Some(rt) = shared() else { return };
    let _b = buffers();
    let d = dev(rt);
    let p = d.program("scalars", SCALARS, "").expect("build");
    let n = 1000;
    let a = Matrix::from_vec([n], (0..n as i32).collect()).expect("length");
    let da = d.upload("a", &a).expect("upload");
    let s = d.scalar(0i32).expect("scalar");
    assert_eq!(d.read_scalar(&s).expect("read"), 0);
    d.launch(
        &p,
        "sum",
        &[n],
        Some(&[64]),
        &[Arg::Mem(&da), Arg::I32(n as i32), Arg::Mem(&s)],
    )
    .expect("sum");
    assert_eq!(d.read_scalar(&s).expect("read"), 499_500);
    let l = d.scalar(7i64).expect("scalar");
    assert_eq!(d.read_scalar(&l).expect("read"), 7);
    d.launch(
        &p,
        "put_long",
        &[1],
        None,
        &[(&l).into(), Arg::I64(1 << 40)],
    )
    .expect("put_long");
    assert_eq!(d.read_scalar(&l).expect("read"), 3 << 40);
    assert_eq!(
        d.read_scalar(&d.scalar(u64::MAX).expect("u64"))
            .expect("read"),
        u64::MAX
    );
    assert_eq!(
        d.read_scalar(&d.scalar(-1.5f32).expect("f32"))
            .expect("read"),
        -1.5
    );
}

#[test]
fn one_runtime_shared_by_four_threads() {
    let Some(rt) = shared() else { return };
    let _b = buffers();
    let d = dev(rt);
    let inputs: Vec<(Matrix<f32>, Matrix<f32>)> = (0..4)
        .map(|t| (matrix(&[31, 45], t), matrix(&[31, 45], 50 + t)))
        .collect();
    let single: Vec<Matrix<f32>> = inputs
        .iter()
        .map(|(a, b)| device_add(d, a, b).expect("single thread"))
        .collect();
    for ((a, b), s) in inputs.iter().zip(&single) {
        assert_eq!(*s, host_add(a, b));
    }
    thread::scope(|scope| {
        for (t, (a, b)) in inputs.iter().enumerate() {
            let expected = &single[t];
            scope.spawn(move || {
                for _ in 0..25 {
                    assert_eq!(
                        device_add(d, a, b).expect("thread"),
                        *expected,
                        "thread {t}"
                    );
                }
            });
        }
    });
    // Four threads asking for one new program at once get one build.
    let src = format!("{IOTA}\n// concurrent build\n");
    let programs: Vec<Arc<Program>> = thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| d.program("iota_concurrent", &src, "").expect("build")))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("join"))
            .collect()
    });
    assert!(programs.iter().all(|p| Arc::ptr_eq(p, &programs[0])));
}

#[test]
fn repeated_cycles_do_not_leak_buffers() {
    let Some(rt) = shared() else { return };
    let _exclusive = BUFFERS.write().unwrap_or_else(PoisonError::into_inner);
    let d = dev(rt);
    let a = matrix::<u8>(&[17, 33], 1);
    let b = matrix::<u8>(&[17, 33], 2);
    let expected = host_add(&a, &b);
    let before = opencl::live_buffers();
    {
        let _x = d.alloc::<u8>("x", &[2, 2]).expect("alloc");
        let _s = d.scalar(0u64).expect("scalar");
        assert_eq!(opencl::live_buffers(), before + 2);
    }
    assert_eq!(opencl::live_buffers(), before);
    for i in 0..1000 {
        let got = device_add(d, &a, &b).expect("cycle");
        if i % 100 == 0 {
            assert_eq!(got, expected);
        }
    }
    d.finish().expect("finish");
    assert_eq!(opencl::live_buffers(), before);
}

#[test]
fn environment_variables() {
    // `PARAC_DEVICE`, `PARAC_CACHE` and `PARAC_DUMP` are read from the environment, which a
    // test cannot change safely while others run: run `env_child` in a child process.
    let has_opencl = opencl().is_some();
    let dump_tmp = temp_dir("dump");
    let dump = dump_tmp.path().to_path_buf();
    let out = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "env_child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(
            "PARAC_TEST_CHILD",
            if has_opencl { "opencl" } else { "cpu" },
        )
        .env("PARAC_DEVICE", if has_opencl { "opencl" } else { "cpu" })
        .env("PARAC_CACHE", "0")
        .env("PARAC_DUMP", &dump)
        .output()
        .expect("run the child");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
    if has_opencl {
        let dumped = fs::read_to_string(dump.join("dump_me_x.cl")).expect("dumped source");
        assert_eq!(dumped, IOTA);
    }
}

/// Run by `environment_variables` with the environment set; does nothing otherwise.
#[test]
#[ignore = "run by environment_variables"]
fn env_child() {
    let Ok(expect) = std::env::var("PARAC_TEST_CHILD") else {
        return;
    };
    let rt = Runtime::new().expect("PARAC_DEVICE");
    if expect == "cpu" {
        assert!(rt.device().is_none(), "{}", rt.describe());
        return;
    }
    let d = dev(&rt);
    assert_eq!(d.program_cache_dir(), None, "PARAC_CACHE=0");
    let dump = PathBuf::from(std::env::var_os("PARAC_DUMP").expect("PARAC_DUMP"));
    let p = d.program("dump me/x", IOTA, "").expect("build");
    assert!(!p.from_disk());
    assert!(Path::new(&dump).join("dump_me_x.cl").exists());
}

/// A candidate whose own program does not build is dropped: the model's plan falls back to the
/// next candidate (here the baseline), the search skips it, and only forcing it is an error. The
/// baseline's program never contains candidates' kernels, so it builds regardless.
#[test]
fn a_candidate_that_does_not_build_is_dropped() {
    use parac_runtime::PlanPolicy;
    use parac_runtime::opencl::{Candidate, RegionPlans};
    use std::borrow::Cow;
    let Some(rt) = shared() else { return };
    let _b = buffers();
    let d = dev(rt);
    let base = d
        .program(
            "dropped",
            // Launches round the global size up to the work-group size: kernels check their range.
            "__kernel void r0_fill(__global int* m0, int p0) { if ((int)get_global_id(0) < p0) m0[get_global_id(0)] = 7; }",
            "",
        )
        .expect("the baseline builds");
    let cand =
        |label: &'static str, kernel: &'static str, source: Option<&'static str>| Candidate {
            label: Cow::Borrowed(label),
            kernel: Cow::Borrowed(kernel),
            then: Vec::new(),
            source: source.map(Into::into),
            per_item: [1, 1],
            steps: 1,
            fuses: false,
            local: None,
            local_bytes: 0,
            tree: false,
            split: false,
            origin: false,
        };
    let plans = RegionPlans {
        region: Cow::Borrowed("r0_fill"),
        candidates: Cow::Owned(vec![
            cand("baseline", "r0_fill", None),
            cand(
                "broken",
                "r0_fill__broken",
                Some(
                    "__kernel void r0_fill__broken(__global int* m0, int p0) {\n    this is not C;\n}\n",
                ),
            ),
        ]),
        cpu_order: Cow::Borrowed(&[]),
        searchable: true,
        consumers: Cow::Borrowed(&[]),
    };
    let buf = d.alloc::<i32>("m", &[64]).expect("alloc");
    for policy in [PlanPolicy::Model, PlanPolicy::Search] {
        let mut out = Matrix::<i32>::zeros([64]);
        d.run_region(
            &base,
            &plans,
            &policy,
            (&[64], &[]),
            None,
            &[Arg::Mem(&buf), Arg::I32(64)],
        )
        .unwrap_or_else(|e| panic!("{policy:?}: {e}"));
        d.download(&buf, &mut out).expect("download");
        assert!(out.as_slice().iter().all(|v| *v == 7), "{policy:?}");
    }
    let forced = d.run_region(
        &base,
        &plans,
        &PlanPolicy::Force("broken".into()),
        (&[64], &[]),
        None,
        &[Arg::Mem(&buf), Arg::I32(64)],
    );
    assert!(matches!(forced, Err(Error::Build { .. })), "{forced:?}");
}
