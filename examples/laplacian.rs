//! `laplacian`: a Laplacian pyramid built from one level of the paper's Fig. 7 (defined exactly
//! in `shared/APPS.md` §1), applied again to its own `down` output.
//!
//! One level:
//! - `h` = `src` filtered horizontally with `[1 4 6 4 1] / 16` (border rule `br`: linear
//!   extrapolation of two columns on each side of `src`);
//! - `down` = `h` filtered vertically and sampled at every second row and column (border rule
//!   `br1`: the same extrapolation on the rows of `h`);
//! - `lap` = `src` minus the bilinear upsample of `down` (rounded, clamped at the last row and
//!   column).
//!
//! ```text
//! cargo run --release --example laplacian -- [INPUT] [OUT_DIR] [--repeat N] [--levels L] [--device]
//! ```
//!
//! INPUT: a PNG (read as 8-bit gray) or a `u8` `[M][N]` `.npy` file, M, N >= 4; default
//! `assets/camera.png`. L levels (default 4; fewer if a side gets below 4). Writes to OUT_DIR
//! (default `target/parac-out/laplacian/`), each as `.png` and `.npy`: `input`, `lap_<l>` and
//! `down_<l>` for every level `l`, and `recon`, the input rebuilt from the pyramid (the last
//! `down` upsampled and added to each `lap`, top down). Checks at every level that
//! `up(down) + lap == src` (the upsample of APPS.md §1, written here independently of the
//! pipeline) and that `recon == input`; exit status 2 if a check fails, 1 on an error.
//! `--repeat N` times the whole pyramid N more times; `median_ms` is that of the level-0 call.
//! `--device` keeps the pyramid on the runtime's device (`DeviceMatrix`): one upload of the
//! input, every level's call on the last one's `down` where it is, one download of each output
//! at the end (the transfers are counted and printed); with `--repeat`, `median_ms` is that of
//! the whole pyramid so.

#[path = "common/mod.rs"]
mod common;
#[path = "pipelines/laplacian.rs"]
mod pipeline;

use std::process::ExitCode;
use std::time::Duration;

use common::{App, Args, Fail, Outputs, Steps, dims, ms, timed};
use parac::{DeviceMatrix, Matrix, Runtime};
use pipeline::laplacian;

const APP: App = App {
    name: "laplacian",
    summary: "Laplacian pyramid (APPS.md §1), with a reconstruction check at every level",
    input: "u8 [M][N] (8-bit gray), M, N >= 4",
    default_asset: "camera.png",
    levels: Some(4),
};

fn main() -> ExitCode {
    common::main(&APP, run)
}

/// One level's outputs.
struct Level {
    lap: Matrix<i16>,
    down: Matrix<u8>,
}

fn run(args: &Args, rt: &Runtime) -> Result<ExitCode, Fail> {
    let mut steps = Steps::default();
    let src = common::load_input::<u8>(&APP, args, &mut steps)?;
    common::require(&APP, src.ndim() == 2, || {
        format!("the input has shape {}, not [M][N]", dims(src.shape()))
    })?;
    common::require(&APP, src.rows() >= 4 && src.cols() >= 4, || {
        format!("the input {} is smaller than 4x4", dims(src.shape()))
    })?;
    let mut out = Outputs::create(args)?;
    steps.add("write", out.write("input", &src)?);

    // The pyramid: level by level on host matrices (each call timed), or with `--device`
    // on the device all through (one upload, the calls, one download of each output).
    let (levels, calls) = if args.device {
        let before = parac::opencl::transfers();
        let (r, t) = timed(|| pyramid_on_device(rt, &src, args.levels));
        let levels = r.map_err(|e| Fail(format!("the pyramid on the device: {e}")))?;
        let moved = parac::opencl::transfers().since(before);
        println!(
            "pyramid on the device: {} levels in {} (upload, calls, downloads): {} transfer(s) \
             to the device ({} bytes), {} to the host ({} bytes)",
            levels.len(),
            ms(t),
            moved.to_device,
            moved.bytes_to_device,
            moved.to_host,
            moved.bytes_to_host
        );
        steps.add("call", t);
        let calls = vec![None; levels.len()];
        (levels, calls)
    } else {
        let mut levels: Vec<Level> = Vec::new();
        let mut calls = Vec::new();
        for l in 0..args.levels {
            let cur = levels.last().map_or(&src, |lv| &lv.down);
            let Some((mut lap, mut down)) = outputs_of(cur) else {
                break;
            };
            let (r, call) = timed(|| laplacian(rt, cur, &mut lap, &mut down));
            r.map_err(|e| Fail(format!("level {l}: {e}")))?;
            steps.add("call", call);
            calls.push(Some(call));
            levels.push(Level { lap, down });
        }
        (levels, calls)
    };
    if levels.len() < args.levels {
        let last = levels.last().map_or(&src, |lv| &lv.down);
        println!(
            "level {}: none: {} is smaller than 4x4",
            levels.len(),
            dims(last.shape())
        );
    }
    let mut ok = true;
    for (l, (lv, call)) in levels.iter().zip(&calls).enumerate() {
        let cur = if l == 0 { &src } else { &levels[l - 1].down };
        let (check, check_t) = timed(|| check_level(cur, &lv.lap, &lv.down));
        let write =
            out.write(&format!("lap_{l}"), &lv.lap)? + out.write(&format!("down_{l}"), &lv.down)?;
        let verdict = match &check {
            Ok(()) => "ok".to_string(),
            Err(why) => format!("FAILED: {why}"),
        };
        let call = call.map_or(String::new(), |c| format!("call {}, ", ms(c)));
        println!(
            "level {l}: src {} -> lap i16 {}, down u8 {}: {call}write {}; \
             up(down) + lap == src: {verdict}",
            dims(cur.shape()),
            dims(lv.lap.shape()),
            dims(lv.down.shape()),
            ms(write),
        );
        ok &= check.is_ok();
        steps.add("check", check_t);
        steps.add("write", write);
    }

    // Rebuild the input from the top of the pyramid down: the last `down`, then for every level
    // `up(current) + lap`.
    let ((recon, recon_check), t) = timed(|| collapse(&src, &levels));
    steps.add("check", t);
    let verdict = match &recon_check {
        Ok(()) => "ok".to_string(),
        Err(why) => format!("FAILED: {why}"),
    };
    let top = levels.last().map_or(String::new(), |lv| {
        format!(" + top down_{} {}", levels.len() - 1, dims(lv.down.shape()))
    });
    println!(
        "pyramid: {} level{}{top}; rebuilt from it == input: {verdict}",
        levels.len(),
        if levels.len() == 1 { "" } else { "s" },
    );
    ok &= recon_check.is_ok();
    steps.add("write", out.write("recon", &recon)?);
    out.print();
    steps.print();

    if !ok {
        eprintln!("laplacian: the reconstruction check FAILED");
        return Ok(ExitCode::from(2));
    }

    if let Some(n) = args.repeat {
        // The same inputs as above, fresh output matrices; each call timed alone.
        let inputs: Vec<&Matrix<u8>> = std::iter::once(&src)
            .chain(levels.iter().map(|lv| &lv.down))
            .take(levels.len())
            .collect();
        let mut scratch: Vec<Level> = levels
            .iter()
            .map(|lv| Level {
                lap: Matrix::zeros(lv.lap.shape()),
                down: Matrix::zeros(lv.down.shape()),
            })
            .collect();
        if args.device {
            // The whole pyramid on the device each time: upload, calls, downloads.
            let totals = common::repeat(n, || pyramid_on_device(rt, &src, args.levels).map(drop))?;
            common::print_stats("whole pyramid on the device", &totals);
            common::print_median_line(&totals);
            return Ok(ExitCode::SUCCESS);
        }
        let mut per_level: Vec<Vec<Duration>> = vec![Vec::with_capacity(n); levels.len()];
        // One sample per whole pyramid; each level's call is also timed alone.
        let totals = common::repeat(n, || {
            for (l, (input, s)) in inputs.iter().zip(&mut scratch).enumerate() {
                let (r, t) = timed(|| laplacian(rt, input, &mut s.lap, &mut s.down));
                r?;
                per_level[l].push(t);
            }
            Ok(())
        })?;
        for (l, samples) in per_level.iter().enumerate() {
            common::print_stats(&format!("level {l} {}", dims(inputs[l].shape())), samples);
        }
        common::print_stats("whole pyramid", &totals);
        common::print_median_line(&per_level[0]);
    }
    Ok(ExitCode::SUCCESS)
}

/// A level's outputs for input `cur`, or `None` when `cur` is smaller than 4x4.
fn outputs_of(cur: &Matrix<u8>) -> Option<(Matrix<i16>, Matrix<u8>)> {
    let (m, n) = (cur.rows(), cur.cols());
    (m >= 4 && n >= 4).then(|| {
        (
            Matrix::zeros([m, n]),
            Matrix::zeros([m.div_ceil(2), n.div_ceil(2)]),
        )
    })
}

/// Up to `levels` levels of the pyramid of `src` with every matrix on the runtime's device
/// (`DeviceMatrix`; on the CPU path, host matrices): one upload of `src`, the calls, each one's
/// input the last one's `down` without a copy, then one download of each output. The calls do
/// not wait for one another; the downloads wait, and report any call's error.
fn pyramid_on_device(
    rt: &Runtime,
    src: &Matrix<u8>,
    levels: usize,
) -> Result<Vec<Level>, parac::Error> {
    let mut on_device: Vec<(DeviceMatrix<i16>, DeviceMatrix<u8>)> = Vec::new();
    let first = rt.upload(src)?;
    for _ in 0..levels {
        let cur = on_device.last().map_or(&first, |(_, down)| down);
        let [m, n] = [cur.shape()[0], cur.shape()[1]];
        if m < 4 || n < 4 {
            break;
        }
        // Written whole by the call: no zero fill.
        let mut lap = rt.device_uninit(&[m, n])?;
        let mut down = rt.device_uninit(&[m.div_ceil(2), n.div_ceil(2)])?;
        laplacian(rt, cur, &mut lap, &mut down)?;
        on_device.push((lap, down));
    }
    on_device
        .iter()
        .map(|(lap, down)| {
            Ok(Level {
                lap: lap.to_host()?,
                down: down.to_host()?,
            })
        })
        .collect()
}

/// The bilinear upsample of APPS.md §1 to `[m][n]`, as `int`s: `y0 = x/2`,
/// `y1 = min((x+1)/2, Md-1)`, `x0 = y/2`, `x1 = min((y+1)/2, Nd-1)`,
/// `up = (down[y0][x0] + down[y0][x1] + down[y1][x0] + down[y1][x1] + 2) / 4`.
fn upsample(down: &Matrix<u8>, m: usize, n: usize) -> Matrix<i32> {
    let (md, nd) = (down.rows(), down.cols());
    let d = down.as_slice();
    let at = |r: usize, c: usize| i32::from(d[r * nd + c]);
    Matrix::from_fn([m, n], |i| {
        let (x, y) = (i[0], i[1]);
        // `div_ceil(2)` is the `(x + 1) / 2` of APPS.md.
        let (y0, y1) = (x / 2, x.div_ceil(2).min(md - 1));
        let (x0, x1) = (y / 2, y.div_ceil(2).min(nd - 1));
        (at(y0, x0) + at(y0, x1) + at(y1, x0) + at(y1, x1) + 2) / 4
    })
}

/// `Err` describing the differences between `got` and `want` (same shape), if any.
fn compare(got: &Matrix<i32>, want: &Matrix<u8>) -> Result<(), String> {
    let diffs: Vec<usize> = got
        .as_slice()
        .iter()
        .zip(want.as_slice())
        .enumerate()
        .filter(|(_, (g, w))| **g != i32::from(**w))
        .map(|(i, _)| i)
        .collect();
    match diffs.first() {
        None => Ok(()),
        Some(&first) => Err(format!(
            "{} of {} pixels differ, the first at {}: {} instead of {}",
            diffs.len(),
            want.len(),
            dims(&want.index_of(first)),
            got.as_slice()[first],
            want.as_slice()[first],
        )),
    }
}

/// `up(down) + lap == src`, pixel by pixel.
fn check_level(src: &Matrix<u8>, lap: &Matrix<i16>, down: &Matrix<u8>) -> Result<(), String> {
    let mut sum = upsample(down, src.rows(), src.cols());
    for (s, l) in sum.as_mut_slice().iter_mut().zip(lap.as_slice()) {
        *s += i32::from(*l);
    }
    compare(&sum, src)
}

/// The input rebuilt from the pyramid (values clamped to `0..=255` where a level is wrong), and
/// whether it equals `src`.
fn collapse(src: &Matrix<u8>, levels: &[Level]) -> (Matrix<u8>, Result<(), String>) {
    let Some(top) = levels.last() else {
        return (src.clone(), Ok(()));
    };
    let mut cur = top.down.clone();
    let mut wide = Matrix::<i32>::zeros([0]);
    for lv in levels.iter().rev() {
        wide = upsample(&cur, lv.lap.rows(), lv.lap.cols());
        for (s, l) in wide.as_mut_slice().iter_mut().zip(lv.lap.as_slice()) {
            *s += i32::from(*l);
        }
        cur = wide.map(|v| v.clamp(0, 255) as u8);
    }
    let check = compare(&wide, src);
    (cur, check)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upsample_follows_apps_md() {
        // down [2][2] -> [3][4]: Md = 2, Nd = 2 (odd rows, even columns: the last column clamps).
        let down = Matrix::from_vec([2, 2], vec![0u8, 4, 8, 12]).unwrap();
        let up = upsample(&down, 3, 4);
        assert_eq!(up.as_slice(), &[0, 2, 4, 4, 4, 6, 8, 8, 8, 10, 12, 12]);
    }

    #[test]
    fn checks_see_a_wrong_pixel() {
        let src = Matrix::<u8>::from_fn([5, 6], |i| (i[0] * 40 + i[1] * 7) as u8);
        let down = Matrix::<u8>::from_fn([3, 3], |i| (i[0] * 80 + i[1] * 14) as u8);
        let up = upsample(&down, 5, 6);
        let mut lap =
            Matrix::<i16>::from_fn([5, 6], |i| (i32::from(src.get(i)) - up.get(i)) as i16);
        assert_eq!(check_level(&src, &lap, &down), Ok(()));
        let levels = [Level {
            lap: lap.clone(),
            down: down.clone(),
        }];
        let (recon, ok) = collapse(&src, &levels);
        assert_eq!((recon, ok), (src.clone(), Ok(())));
        lap.set(&[4, 5], lap.get(&[4, 5]) + 1);
        let e = check_level(&src, &lap, &down).unwrap_err();
        assert!(
            e.starts_with("1 of 30 pixels differ, the first at [4][5]"),
            "{e}"
        );
        let levels = [Level { lap, down }];
        assert!(collapse(&src, &levels).1.is_err());
    }
}
