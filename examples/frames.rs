//! `frames`: a frame loop through a chain of two pipelines, with the data on the device
//! between them: each frame is sharpened (`sharpen`, APPS.md §2), then split into one
//! Laplacian-pyramid level (`laplacian`, APPS.md §1), and its half-size `down` is read back.
//!
//! ```text
//! cargo run --release --example frames -- [--frames N] [--size MxN] [--discrete]
//! ```
//!
//! Runs the loop twice on the runtime `PARAC_DEVICE` gives (default: a GPU, else the CPU path)
//! and prints frames per second and bytes moved per frame for each:
//! - *host matrices*: every call takes and gives host matrices (each call uploads its inputs
//!   and reads its outputs back);
//! - *device matrices*: one `DeviceMatrix` per stage, made once; per frame one upload into the
//!   frame's device matrix (`upload_from`), the two calls on device matrices (no copies, no
//!   waits), one download of `down`.
//!
//! `--discrete` treats a device whose memory is the host's (PoCL) as a discrete one
//! (`opencl::copying`): host matrices are then copied to and from it as to a GPU, which shows
//! what the transfers cost there. The two loops' last outputs are compared (exit status 2 if they differ). Frames are
//! synthetic (a moving pattern), 1920x1080 and 100 of them by default.

#[path = "pipelines/laplacian.rs"]
mod laplacian;
#[path = "pipelines/sharpen.rs"]
mod sharpen;

use std::process::ExitCode;
use std::time::Instant;

use parac::{DeviceMatrix, Error, Matrix, Runtime, opencl};

fn main() -> ExitCode {
    let discrete = std::env::args().any(|a| a == "--discrete");
    let args = std::env::args().skip(1).filter(|a| a != "--discrete");
    let (frames, m, n) = match parse(args) {
        Ok(v) => v,
        Err(e) => {
            eprintln!(
                "frames: error: {e}\n  usage: cargo run --release --example frames -- \
                 [--frames N] [--size MxN] [--discrete]"
            );
            return ExitCode::FAILURE;
        }
    };
    let rt = match Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("frames: error: no runtime (PARAC_DEVICE): {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("frames: {frames} frames of {m}x{n} u8 through sharpen -> laplacian");
    println!("device: {}", rt.describe());
    let ran = if discrete {
        println!("(the device treated as discrete: host matrices copied to and from it)");
        opencl::copying(|| run(&rt, frames, m, n))
    } else {
        run(&rt, frames, m, n)
    };
    match ran {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("frames: the two loops' outputs differ");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("frames: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--frames N`, `--size MxN`.
fn parse(args: impl Iterator<Item = String>) -> Result<(usize, usize, usize), String> {
    let (mut frames, mut m, mut n) = (100, 1080, 1920);
    let mut args = args;
    while let Some(a) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("`{flag}` needs a value"));
        match a.as_str() {
            "--frames" => {
                frames = value("--frames")?
                    .parse()
                    .ok()
                    .filter(|f| *f >= 1)
                    .ok_or("`--frames` takes a whole number >= 1")?;
            }
            "--size" => {
                let v = value("--size")?;
                let (a, b) = v
                    .split_once('x')
                    .ok_or("`--size` takes MxN, e.g. 1080x1920")?;
                m = a
                    .parse()
                    .map_err(|_| format!("`--size {v}`: M is not a number"))?;
                n = b
                    .parse()
                    .map_err(|_| format!("`--size {v}`: N is not a number"))?;
                // `sharpen` takes sides that are multiples of 4, at least 8.
                if m < 8 || n < 8 || m % 4 != 0 || n % 4 != 0 {
                    return Err("`--size`: M and N must be multiples of 4, at least 8".into());
                }
            }
            "-h" | "--help" => {
                return Err("the options are --frames N, --size MxN and --discrete".into());
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok((frames, m, n))
}

/// Frame `k`: a pattern that moves with `k`.
fn frame(k: usize, m: usize, n: usize) -> Matrix<u8> {
    Matrix::from_fn([m, n], |i| {
        let v = (i[0] * 3 + i[1] * 5 + k * 7) ^ (i[0] * i[1] / 64);
        v as u8
    })
}

fn run(rt: &Runtime, frames: usize, m: usize, n: usize) -> Result<bool, Error> {
    let inputs: Vec<Matrix<u8>> = (0..4).map(|k| frame(k, m, n)).collect();
    let half = [m.div_ceil(2), n.div_ceil(2)];

    // Host matrices: each call uploads and reads back.
    let mut sharp = Matrix::<u8>::zeros([m, n]);
    let mut lap = Matrix::<i16>::zeros([m, n]);
    let mut down = Matrix::<u8>::zeros(half);
    let host_frame = |k: usize, sharp: &mut Matrix<u8>, lap: &mut _, down: &mut _| {
        sharpen::sharpen(rt, &inputs[k % inputs.len()], sharp)?;
        laplacian::laplacian(rt, sharp, lap, down)
    };
    // One frame first: the programs are built and the plans chosen (a first call's costs).
    host_frame(0, &mut sharp, &mut lap, &mut down)?;
    let (t, moved) = timed(|| {
        for k in 0..frames {
            host_frame(k, &mut sharp, &mut lap, &mut down)?;
        }
        Ok(())
    })?;
    report("host matrices", frames, t, moved);
    let host_down = down.clone();

    // Device matrices, made once; per frame one upload and one download.
    let mut d_frame = rt.upload(&inputs[0])?;
    let mut d_sharp: DeviceMatrix<u8> = rt.device_uninit(&[m, n])?;
    let mut d_lap: DeviceMatrix<i16> = rt.device_uninit(&[m, n])?;
    let mut d_down: DeviceMatrix<u8> = rt.device_uninit(&half)?;
    let (t, moved) = timed(|| {
        for k in 0..frames {
            d_frame.upload_from(&inputs[k % inputs.len()])?;
            sharpen::sharpen(rt, &d_frame, &mut d_sharp)?;
            laplacian::laplacian(rt, &d_sharp, &mut d_lap, &mut d_down)?;
            d_down.download_into(&mut down)?;
        }
        Ok(())
    })?;
    report("device matrices", frames, t, moved);
    Ok(down == host_down)
}

/// Runs `f`, with its time and the transfers it made.
fn timed(
    f: impl FnOnce() -> Result<(), Error>,
) -> Result<(std::time::Duration, opencl::Transfers), Error> {
    let before = opencl::transfers();
    let t = Instant::now();
    f()?;
    Ok((t.elapsed(), opencl::transfers().since(before)))
}

fn report(what: &str, frames: usize, t: std::time::Duration, moved: opencl::Transfers) {
    let secs = t.as_secs_f64();
    let bytes = (moved.bytes_to_device + moved.bytes_to_host) as f64 / frames as f64;
    println!(
        "{what:>16}: {:8.1} frames/s ({:.3} ms a frame), {:.2} MB moved a frame \
         ({:.2} GB/s while the loop ran)",
        frames as f64 / secs,
        secs * 1e3 / frames as f64,
        bytes / 1e6,
        bytes * frames as f64 / secs / 1e9
    );
}
