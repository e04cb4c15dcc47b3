//! Pipelines of our own, outside APPS.md, on the CPU path against Halide's CPU schedules (so that
//! the ratios are measured on pipelines not written for the benches), in one run:
//!
//! - `gauss5`: a separable 5-tap Gaussian (1 4 6 4 1) / 256 of a u8 image with reflect-101
//!   borders (two stages; the horizontal pass fused into the vertical one's tasks);
//! - `unsharp7` (`benches/own`): a 7-tap separable Gaussian with clamped borders and an unsharp
//!   mask from it (a 3-stage chain: both intermediates fused into the last stage's tasks);
//! - `box3`: a 3x3 box mean of a u8 image through a 16-bit intermediate, interior only (the
//!   output two smaller per side), rounded;
//! - `sobel_mean` (`benches/own`): a Sobel magnitude with replicated borders and its mean (a
//!   stage and a reduction over its output).
//!
//! 3840x2160 u8 (`PARAC_BENCH_SMALL=1`: 960x540). The Rust side writes the input and parac's
//! outputs to `target/own_peers/`; `benches/peers/halide_own.py` (in `benches/peers/.venv`:
//! `bash benches/peers/setup.sh`) times Halide on the same input and compares its outputs with
//! parac's (exact). `cargo bench --bench own_peers`; prints a markdown table.

mod host;
#[path = "own/mod.rs"]
mod own;

use parac::{Matrix, Runtime};

parac::parac! {
    /// A separable 5-tap Gaussian (1 4 6 4 1) / 256 with reflect-101 borders.
    pub fn gauss5(src: &u8[M][N], out: &mut u8[M][N]) {
        let h: u16[M][N];
        parac_border_rule r = reflect101(src[*][2]);
        parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(r) {
            h[x][y] = src[x][y-2] + 4 * src[x][y-1] + 6 * src[x][y] + 4 * src[x][y+1] + src[x][y+2];
        }
        parac_border_rule s = reflect101(h[2][*]);
        parac_iterator it1(x in 0:M:1; y in 0:N:1) parac_border_rule(s) {
            out[x][y] = (h[x-2][y] + 4 * h[x-1][y] + 6 * h[x][y] + 4 * h[x+1][y] + h[x+2][y] + 128)
                / 256;
        }
    }
}

parac::parac! {
    /// A 3x3 box mean, rounded, through 16-bit row sums; the interior only.
    pub fn box3(src: &u8[M][N], out: &mut u8[M-2][N-2]) {
        let h: u16[M][N-2];
        parac_iterator it(x in 0:M:1; y in 0:N-2:1) {
            h[x][y] = src[x][y] + src[x][y+1] + src[x][y+2];
        }
        parac_iterator it1(x in 0:M-2:1; y in 0:N-2:1) {
            out[x][y] = (h[x][y] + h[x+1][y] + h[x+2][y] + 4) / 9;
        }
    }
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let small = std::env::var("PARAC_BENCH_SMALL").is_ok_and(|v| v == "1");
    let (m, n) = if small { (540, 960) } else { (2160, 3840) };
    let mut s = 0x9e37_79b9_u32;
    let data: Vec<u8> = (0..m * n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s >> 24) as u8
        })
        .collect();
    let src = Matrix::from_vec(vec![m, n], data).expect("an image");
    let dir = std::path::Path::new("target/own_peers");
    std::fs::create_dir_all(dir).expect("target/own_peers");
    src.write_npy(dir.join("src.npy")).expect("src.npy");
    let rt = Runtime::cpu().with_cpu_isa(cpu_isa_from_env());
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    println!("{n}x{m} u8, CPU path, {threads} threads; medians of whole calls, ms");
    println!("| pipeline | contender | median ms | min ms | note |");
    println!("|---|---|---:|---:|---|");
    type Call = fn(&Runtime, &Matrix<u8>, &mut Matrix<u8>) -> Result<(), parac::Error>;
    let sobel: Call = |rt, src, out| own::sobel_mean(rt, src, out).map(drop);
    let cases: [(&str, Call, [usize; 2]); 4] = [
        ("gauss5", gauss5, [m, n]),
        ("unsharp7", own::unsharp7, [m, n]),
        ("box3", box3, [m - 2, n - 2]),
        ("sobel_mean", sobel, [m, n]),
    ];
    for (name, f, shape) in cases {
        let mut out = Matrix::<u8>::zeros(shape);
        let time = host::measure(|| f(&rt, &src, &mut out).expect(name), 0.0, 5.0);
        out.write_npy(dir.join(format!("{name}.npy")))
            .expect("an output");
        println!(
            "| {name} | parac CPU | {:.2} | {:.2} | |",
            time.median_ms, time.min_ms
        );
    }
    let py = std::path::Path::new("benches/peers/.venv/bin/python");
    if !py.exists() {
        println!("(Halide: no benches/peers/.venv; `bash benches/peers/setup.sh`)");
        return;
    }
    match std::process::Command::new(py)
        .arg("benches/peers/halide_own.py")
        .arg(dir)
        .output()
    {
        Ok(o) => print!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => println!("(Halide: {e})"),
    }
}

/// The CPU path's vector level `PARAC_CPU_ISA` names (`auto` where unset), so that one bench
/// compares levels.
fn cpu_isa_from_env() -> parac::CpuIsa {
    parac::Config::from_env()
        .map(|c| c.cpu_isa)
        .expect("PARAC_* variables")
}
