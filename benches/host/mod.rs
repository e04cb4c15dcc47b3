//! What the benches measure the host by, shared by `benches/peers.rs` and
//! `benches/time_steps.rs`.

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
