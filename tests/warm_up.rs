//! `WarmUp::CpuPath` (the default on an OpenCL device that is not a GPU): while a `parac!`
//! function warms up on the device (its programs built, its kernels compiled, its plans
//! searched on the background thread), its calls run on the CPU path, with the same results
//! and errors; once the warm-up is done they run on the device. Builds are made slow on purpose
//! (3 s each) to show that no call waits for them. Without OpenCL the tests print "skipped"
//! and pass, unless `PARAC_REQUIRE_OPENCL=1`.

mod common;

use std::time::{Duration, Instant};

use parac::{Matrix, Runtime, WarmUp};

parac::parac! {
    pub fn warm_scale(src: &u8[M][N], out: &mut u16[M][N]) {
        parac_border_rule r = replicate(src[1][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r) {
            out[itx][ity] = src[itx-1][ity] + 2 * src[itx][ity] + src[itx+1][ity+1];
        }
    }
}

parac::parac! {
    pub fn warm_lookup(idx: &u8[N], table: &u8[4], out: &mut u8[N]) {
        parac_iterator it(0:N:1) {
            out[itx] = table[idx[itx]];
        }
    }
}

fn runtime() -> Option<Runtime> {
    match Runtime::from_spec(&common::runtimes::opencl_spec()) {
        Ok(rt) if rt.device().is_some() => {
            common::runtimes::compile_once(rt.device().expect("a device"));
            // The model's plans: a warm-up under the default policy also times every candidate
            // (at several work-group sizes, each a compilation on PoCL), which costs this test
            // a minute and shows nothing more (`benches/calls.rs` measures it).
            Some(
                rt.with_warm_up(WarmUp::CpuPath)
                    .with_policy(parac::PlanPolicy::Model),
            )
        }
        other => {
            let why = other.err().map_or("no device".into(), |e| e.to_string());
            assert!(
                !common::runtimes::opencl_required(),
                "PARAC_REQUIRE_OPENCL=1, but there is no OpenCL device: {why}"
            );
            println!("skipped: no OpenCL ({why})");
            None
        }
    }
}

fn scale_reference(src: &Matrix<u8>) -> Vec<u16> {
    let (m, n) = (src.rows() as isize, src.cols() as isize);
    let at = |i: isize, j: isize| {
        let (i, j) = (i.clamp(0, m - 1), j.clamp(0, n - 1));
        u16::from(src.as_slice()[(i * n + j) as usize])
    };
    let mut out = Vec::new();
    for i in 0..m {
        for j in 0..n {
            out.push(at(i - 1, j) + 2 * at(i, j) + at(i + 1, j + 1));
        }
    }
    out
}

#[test]
fn calls_take_the_cpu_path_while_the_function_warms_up() {
    let Some(rt) = runtime() else {
        return;
    };
    let dev = rt.device().expect("a device");
    let delay = Duration::from_secs(3);
    dev.set_build_delay(delay);
    let src = common::data::random_u8(37, 53, 7);
    let want = scale_reference(&src);
    for call in 0..5 {
        let mut out = Matrix::<u16>::zeros([37, 53]);
        let t = Instant::now();
        warm_scale(&rt, &src, &mut out).expect("warm_scale");
        assert!(
            t.elapsed() < delay,
            "call {call} waited for the device: {:?}",
            t.elapsed()
        );
        assert_eq!(out.as_slice(), &want[..], "call {call}");
    }
    rt.wait_for_background();
    dev.set_build_delay(Duration::ZERO);
    // Now on the device: the call's buffers go back to the device's pool.
    dev.trim();
    let mut out = Matrix::<u16>::zeros([37, 53]);
    warm_scale(&rt, &src, &mut out).expect("warm_scale");
    assert_eq!(out.as_slice(), &want[..], "on the device");
    assert!(dev.pooled_buffers() > 0, "the call ran on the device");
}

#[test]
fn errors_are_the_same_on_both_paths() {
    let Some(rt) = runtime() else {
        return;
    };
    let idx = Matrix::<u8>::from_vec([5], vec![0, 1, 2, 9, 3]).expect("shape");
    let table = Matrix::<u8>::from_vec([4], vec![10, 20, 30, 40]).expect("shape");
    let err = |what: &str| {
        let mut out = Matrix::<u8>::zeros([5]);
        match warm_lookup(&rt, &idx, &table, &mut out) {
            Err(e @ parac::Error::OutOfBounds { .. }) => e.to_string(),
            other => panic!("{what}: expected OutOfBounds, got {other:?}"),
        }
    };
    let first = err("the CPU path");
    rt.wait_for_background();
    let dev = rt.device().expect("a device");
    dev.trim();
    assert_eq!(err("the device"), first);
    assert!(dev.pooled_buffers() > 0, "the call ran on the device");
}

/// `WarmUp::Background`: the calls run on the device from the first, with the model's plans,
/// while the search runs to its end in the background; no call times a candidate (each stays
/// under the builds' delay, which every candidate's build pays), and once the search is done
/// the calls run its plans, with the same results.
#[test]
fn background_search_leaves_calls_on_the_model_plans() {
    if runtime().is_none() {
        return;
    }
    // No disk cache: the search is this process's, whatever earlier runs found.
    let rt = Runtime::builder()
        .device_spec(&common::runtimes::opencl_spec())
        .expect("a device specification")
        .cache(parac::CacheConfig::off())
        .warm_up(WarmUp::Background)
        .policy(parac::PlanPolicy::SearchBudget(Duration::from_millis(100)))
        .build()
        .expect("the OpenCL runtime");
    let dev = rt.device().expect("a device");
    common::runtimes::compile_once(dev);
    let idx = Matrix::<u8>::from_fn([1001], |i| (i[0] * 7 % 4) as u8);
    let table = Matrix::<u8>::from_vec([4], vec![10, 20, 30, 40]).expect("shape");
    let want: Vec<u8> = idx
        .as_slice()
        .iter()
        .map(|i| [10, 20, 30, 40][*i as usize])
        .collect();
    let mut out = Matrix::<u8>::zeros([1001]);
    // The first call builds the model's program (not slowed) and starts the search.
    warm_lookup(&rt, &idx, &table, &mut out).expect("first call");
    assert_eq!(out.as_slice(), &want[..], "the first call");
    let delay = Duration::from_secs(2);
    dev.set_build_delay(delay);
    let timings = parac::opencl::timings_made();
    for call in 0..4 {
        let mut out = Matrix::<u8>::zeros([1001]);
        let t = Instant::now();
        warm_lookup(&rt, &idx, &table, &mut out).expect("a call");
        assert!(
            t.elapsed() < delay,
            "call {call} waited for a build: {:?}",
            t.elapsed()
        );
        assert_eq!(out.as_slice(), &want[..], "call {call}");
    }
    rt.wait_for_background();
    dev.set_build_delay(Duration::ZERO);
    assert!(
        parac::opencl::timings_made() > timings,
        "the search ran in the background"
    );
    let mut out = Matrix::<u8>::zeros([1001]);
    warm_lookup(&rt, &idx, &table, &mut out).expect("after the search");
    assert_eq!(out.as_slice(), &want[..], "after the search");
}
