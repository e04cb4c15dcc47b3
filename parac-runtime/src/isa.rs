//! The instruction set the CPU path's vectorized interiors run with ([`CpuIsa`]): each interior is
//! compiled once per level this architecture has (on x86_64: AVX-512 and AVX2; elsewhere: as the
//! crate is), and the widest the processor has is chosen once per process, as OpenCV's and Halide's
//! multi-target runtimes choose. A level can be forced
//! ([`Config::cpu_isa`](crate::Config::cpu_isa), which `PARAC_CPU_ISA` sets in
//! [`Config::from_env`](crate::Config::from_env);
//! [`Runtime::with_cpu_isa`](crate::Runtime::with_cpu_isa)), so that tests run every level; a level
//! the processor lacks runs as the widest it has.

use std::sync::OnceLock;

/// A level of vector instructions for the CPU path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum CpuIsa {
    /// The widest the processor has (the default).
    #[default]
    Auto,
    /// Nothing chosen at run time: the code as the crate is compiled (on x86_64 the plain
    /// loops, without the interiors over slices; elsewhere the interiors as compiled).
    Portable,
    /// x86_64's AVX2 with FMA, BMI1/2, LZCNT and POPCNT (x86-64-v3).
    Avx2,
    /// x86_64's AVX-512 F, BW, VL, DQ and CD with AVX2's (x86-64-v4).
    Avx512,
}

impl CpuIsa {
    /// `auto`, `portable`, `avx2` or `avx512` (any case).
    pub fn parse(s: &str) -> Option<CpuIsa> {
        Some(match s.to_ascii_lowercase().as_str() {
            "auto" => CpuIsa::Auto,
            "portable" | "none" => CpuIsa::Portable,
            "avx2" | "x86-64-v3" => CpuIsa::Avx2,
            "avx512" | "avx-512" | "x86-64-v4" => CpuIsa::Avx512,
            _ => return None,
        })
    }

    /// The widest level this processor has (detected once).
    pub fn detected() -> CpuIsa {
        static LEVEL: OnceLock<CpuIsa> = OnceLock::new();
        *LEVEL.get_or_init(detect)
    }

    /// Every level this processor runs as itself, the plain loops first: the levels a test
    /// runs to cover each one (a level above [`CpuIsa::detected`] would run as a lower one).
    pub fn available() -> Vec<CpuIsa> {
        [CpuIsa::Portable, CpuIsa::Avx2, CpuIsa::Avx512]
            .into_iter()
            .filter(|isa| isa.resolve() == *isa)
            .collect()
    }

    /// The level that runs for this request: `Auto` the detected one, a level the processor
    /// lacks the widest it has.
    pub fn resolve(self) -> CpuIsa {
        let have = CpuIsa::detected();
        match self {
            CpuIsa::Auto => have,
            want => want.min(have),
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn detect() -> CpuIsa {
    use std::arch::is_x86_feature_detected as has;
    let v3 = has!("avx2")
        && has!("fma")
        && has!("bmi1")
        && has!("bmi2")
        && has!("lzcnt")
        && has!("popcnt");
    let v4 = v3
        && has!("avx512f")
        && has!("avx512bw")
        && has!("avx512vl")
        && has!("avx512dq")
        && has!("avx512cd");
    match (v3, v4) {
        (_, true) => CpuIsa::Avx512,
        (true, false) => CpuIsa::Avx2,
        _ => CpuIsa::Portable,
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> CpuIsa {
    CpuIsa::Portable
}

/// Runs `f`, a vectorized interior, compiled for level `isa` (a resolved one,
/// [`CpuIsa::resolve`]): `None` where it has no copy for that level (x86_64's `Portable`), and
/// the caller runs its plain loop. `f` must be a closure marked `#[inline(always)]`, as the
/// generated code's are: it has a call site in each level's copy, and LLVM inlines a large body
/// into two callers only when told to; left out of line, its one body is compiled for the
/// baseline, and every level runs SSE2 code.
#[inline(always)]
pub fn vector<R>(isa: CpuIsa, f: impl FnOnce() -> R) -> Option<R> {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt")]
        fn v3<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        #[target_feature(
            enable = "avx2,fma,bmi1,bmi2,lzcnt,popcnt,avx512f,avx512bw,avx512vl,avx512dq,avx512cd"
        )]
        fn v4<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        match isa {
            // SAFETY: a resolved level is one the processor has (`CpuIsa::resolve`).
            CpuIsa::Avx512 if CpuIsa::detected() >= CpuIsa::Avx512 => Some(unsafe { v4(f) }),
            CpuIsa::Avx512 | CpuIsa::Avx2 if CpuIsa::detected() >= CpuIsa::Avx2 => {
                // SAFETY: as above; AVX2 is below AVX-512.
                Some(unsafe { v3(f) })
            }
            _ => None,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = isa;
        Some(f())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_and_resolve_within_the_processor() {
        assert_eq!(CpuIsa::parse("AVX512"), Some(CpuIsa::Avx512));
        assert_eq!(CpuIsa::parse("portable"), Some(CpuIsa::Portable));
        assert_eq!(CpuIsa::parse("sse9"), None);
        let have = CpuIsa::detected();
        assert_eq!(CpuIsa::Auto.resolve(), have);
        assert!(CpuIsa::Avx512.resolve() <= have);
        assert_eq!(CpuIsa::Portable.resolve(), CpuIsa::Portable);
        for isa in [CpuIsa::Portable, CpuIsa::Avx2, CpuIsa::Avx512] {
            let ran = vector(isa.resolve(), || 7);
            #[cfg(target_arch = "x86_64")]
            assert_eq!(ran.is_some(), isa.resolve() != CpuIsa::Portable);
            #[cfg(not(target_arch = "x86_64"))]
            assert_eq!(ran, Some(7));
        }
    }
}
