//! Shared by `benches/peers.rs` and `benches/time_steps.rs`: the timing of whole calls, and
//! the host's copy bandwidth the floors are measured by.

// Each bench is its own crate and uses part of this (time_steps prints no sample count).
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// Host copy bandwidth in bytes per second, read plus written: a 256 MiB copy split over every
/// core (one thread does not saturate memory), best of 5.
pub fn copy_bandwidth() -> f64 {
    let n = 256 << 20;
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let src = vec![1u8; n];
    let mut dst = vec![0u8; n];
    let chunk = n.div_ceil(threads);
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        std::thread::scope(|s| {
            for (d, c) in dst.chunks_mut(chunk).zip(src.chunks(chunk)) {
                s.spawn(move || d.copy_from_slice(std::hint::black_box(c)));
            }
        });
        std::hint::black_box(&mut dst);
        best = best.min(t.elapsed());
    }
    2.0 * n as f64 / best.as_secs_f64()
}

/// One timing: the median and the fastest call, ms, and how many calls.
pub struct Stats {
    pub median_ms: f64,
    pub min_ms: f64,
    pub samples: usize,
}

/// Times `f`: a warm-up of at least one call and `warm` seconds, then calls for at least
/// `secs` seconds (and 5 calls).
pub fn measure(mut f: impl FnMut(), warm: f64, secs: f64) -> Stats {
    let start = Instant::now();
    f();
    while start.elapsed().as_secs_f64() < warm {
        f();
    }
    let mut times = Vec::new();
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < secs || times.len() < 5 {
        let t = Instant::now();
        f();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Stats {
        median_ms: times[times.len() / 2],
        min_ms: times[0],
        samples: times.len(),
    }
}
