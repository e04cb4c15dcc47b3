//! How much a random-program test runs: a count of programs or a time budget, and the seed the
//! programs come from.
//!
//! - `PARAC_FUZZ_PROGRAMS=N`: exactly `N` programs, whatever they take (the long runs:
//!   `PARAC_FUZZ_PROGRAMS=10000`, see the guide's chapter 10, `docs/guide/10-configuration.md`).
//! - Otherwise the test runs programs until `PARAC_FUZZ_SECONDS` (default: the test's own,
//!   sized so that the README's test command fits CI's 20 minutes on 2 cores) have passed, and
//!   at least [`Budget::MIN`] programs, so a slow machine still tests a few.
//! - `PARAC_FUZZ_SEED=S`: the programs of seed `S`; without it the seed comes from the clock, so
//!   every run (every CI run) tests new programs. The seed is printed at the start and the end,
//!   with the command that replays the run.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| {
        let v = v.trim();
        match v.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => v.parse().ok(),
        }
    })
}

/// A test's share of programs: see the module's documentation.
pub struct Budget {
    test: &'static str,
    seed: u64,
    count: Option<u64>,
    time: Duration,
    start: Instant,
    done: u64,
}

impl Budget {
    /// The fewest programs a time-budgeted run tests.
    pub const MIN: u64 = 3;

    /// The budget of test `test` from the environment, `seconds` of programs by default.
    pub fn from_env(test: &'static str, seconds: f64) -> Budget {
        let seed = env_u64("PARAC_FUZZ_SEED").unwrap_or_else(|| {
            let t = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            // Seconds and nanoseconds mixed, so two binaries started together still differ.
            (t.as_secs() << 20) ^ u64::from(t.subsec_nanos()) ^ u64::from(std::process::id())
        });
        let secs = std::env::var("PARAC_FUZZ_SECONDS")
            .ok()
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .unwrap_or(seconds);
        let b = Budget {
            test,
            seed,
            count: env_u64("PARAC_FUZZ_PROGRAMS"),
            time: Duration::from_secs_f64(secs),
            start: Instant::now(),
            done: 0,
        };
        // Past the test harness's capture (it keeps `eprintln!` until the test ends): a run
        // that aborts (a stack overflow) still leaves its seed on stderr.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!("[{test}] seed {seed:#x}, {}\n", b.limit()).as_bytes(),
        );
        b
    }

    /// The seed of the run.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// What bounds the run, in words.
    fn limit(&self) -> String {
        match self.count {
            Some(n) => format!("{n} programs (PARAC_FUZZ_PROGRAMS)"),
            None => format!(
                "programs for {:.0?} (PARAC_FUZZ_SECONDS; PARAC_FUZZ_PROGRAMS=N for a count)",
                self.time
            ),
        }
    }

    /// Whether to test one more program (counted as tested).
    pub fn more(&mut self) -> bool {
        let go = match self.count {
            Some(n) => self.done < n,
            None => self.done < Self::MIN || self.start.elapsed() < self.time,
        };
        self.done += u64::from(go);
        go
    }

    /// When the time budget ends (`None` with a count of programs).
    pub fn deadline(&self) -> Option<Instant> {
        match self.count {
            Some(_) => None,
            None => Some(self.start + self.time),
        }
    }

    /// Programs tested so far.
    pub fn done(&self) -> u64 {
        self.done
    }

    /// The closing line: how many programs in how long, and how to replay them.
    pub fn report(&self) -> String {
        format!(
            "[{}] {} programs in {:.1?}, seed {:#x} (replay: PARAC_FUZZ_SEED={:#x} PARAC_FUZZ_PROGRAMS={})",
            self.test,
            self.done,
            self.start.elapsed(),
            self.seed,
            self.seed,
            self.done
        )
    }
}
