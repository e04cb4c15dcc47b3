//! Building programs and their two caches: per device in memory (a program is built once per
//! device and process, `ProgramCache`), and program binaries on disk (a later process skips
//! the compiler), in a file format that holds the full key and a checksum.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError};

use opencl3::program::Program as ClProgram;

use super::device::Device;
use super::program::{Program, dump, numbered};
use super::{cl_error, code};
use crate::Error;

impl Device {
    /// Builds (or fetches from the caches) a program.
    ///
    /// - Process cache: keyed by (source, options) — on this device, each program is built once
    ///   per process; every later call returns the same `Arc`. Concurrent first calls build once.
    /// - Disk cache: program binaries under `dirs::cache_dir()/parac/programs/`, keyed by a hash
    ///   of the platform, device name and version, driver version, source and options (the file
    ///   holds the full key, checked on load); `PARAC_CACHE=0` (read when the device is opened)
    ///   disables it. A corrupt or mismatched cache file is ignored and rewritten.
    /// - `PARAC_DUMP=<dir>`: writes the source to `<dir>/<name>.cl` (creating the directory)
    ///   before building it.
    ///
    /// A failed build is `Error::Build` with the build log and the source with numbered lines.
    pub fn program(&self, name: &str, source: &str, options: &str) -> Result<Arc<Program>, Error> {
        let options = &*self.with_build_options(options);
        let slot = {
            let mut cache = self.programs.lock().unwrap_or_else(PoisonError::into_inner);
            let found = cache
                .by_options
                .get(options)
                .and_then(|by_source| by_source.get(source))
                .cloned();
            match found {
                Some(slot) => slot,
                None => cache
                    .by_options
                    .entry(options.to_string())
                    .or_default()
                    .entry(source.to_string())
                    .or_default()
                    .clone(),
            }
        };
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(p) = &*slot {
            return Ok(Arc::clone(p));
        }
        let p = Arc::new(self.load_or_build(name, source, options)?);
        *slot = Some(Arc::clone(&p));
        Ok(p)
    }

    /// Whether [`program`](Device::program) would return `source` (with `options`) without
    /// compiling it or waiting for a build: it is built in this process, or its binary is in the
    /// disk cache (not while another thread builds it).
    pub(crate) fn has_program(&self, source: &str, options: &str) -> bool {
        let options = &*self.with_build_options(options);
        let slot = self
            .programs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_options
            .get(options)
            .and_then(|by_source| by_source.get(source))
            .cloned();
        if let Some(slot) = slot {
            match slot.try_lock() {
                Ok(p) if p.is_some() => return true,
                Ok(_) => {}
                // Another thread is building it: `program` would wait.
                Err(_) => return false,
            }
        }
        self.program_cache_dir().is_some_and(|dir| {
            dir.join(file_name(&cache_key(self, source, options)))
                .is_file()
        })
    }

    fn load_or_build(&self, name: &str, source: &str, options: &str) -> Result<Program, Error> {
        if options.contains('\0') {
            return Err(cl_error(
                format!("clBuildProgram({name})"),
                code::INVALID_BUILD_OPTIONS,
                "the options contain a NUL byte",
            ));
        }
        if let Some(dir) = self.dump_dir() {
            dump(dir, name, "cl", source)?;
        }
        let cache_dir = self.program_cache_dir();
        let key = cache_key(self, source, options);
        let t = std::time::Instant::now();
        if let Some(program) = cache_dir
            .as_deref()
            .and_then(|dir| self.load_cached(dir, &key, options))
        {
            tracing::debug!(
                target: "parac::cache",
                program = name,
                ms = t.elapsed().as_secs_f64() * 1e3,
                "program binary from the disk cache"
            );
            return Ok(self.wrap(name, program, true, &key));
        }
        if cache_dir.is_some() {
            tracing::debug!(target: "parac::cache", program = name, "program not in the disk cache");
        }
        let t = std::time::Instant::now();
        let delay = *self
            .build_delay
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        std::thread::sleep(delay);
        let program = self.build_source(name, source, options)?;
        tracing::debug!(
            target: "parac::build",
            program = name,
            ms = t.elapsed().as_secs_f64() * 1e3,
            "built from source"
        );
        if let Some(dir) = cache_dir.as_deref().filter(|_| !self.cache_read_only()) {
            match program.get_binaries() {
                Ok(binaries) if binaries.len() == 1 && !binaries[0].is_empty() => {
                    // A cache that cannot be written is no error: the next process builds again.
                    if let Err(e) = store(dir, &key, &binaries[0]) {
                        tracing::debug!(
                            target: "parac::cache",
                            program = name,
                            "the binary could not be stored in {}: {e}",
                            dir.display()
                        );
                    }
                }
                _ => {}
            }
        }
        Ok(self.wrap(name, program, false, &key))
    }

    fn wrap(&self, name: &str, program: ClProgram, from_disk: bool, key: &str) -> Program {
        let key_hash = file_name(key).trim_end_matches(".bin").to_string();
        Program::new(name, program, self.context_id(), from_disk, key_hash)
    }

    fn build_source(&self, name: &str, source: &str, options: &str) -> Result<ClProgram, Error> {
        let mut program = ClProgram::create_from_source(&self.context, source)
            .map_err(|e| cl_error(format!("clCreateProgramWithSource({name})"), e.0, ""))?;
        let devices = [self.device.id()];
        match program.build(&devices, options) {
            Ok(()) => {
                // The compiler's warnings of a program that built go to the `build` log target,
                // never to stderr (the generated kernels are meant to compile without any).
                let log = program.get_build_log(self.device.id()).unwrap_or_default();
                if !log.trim().is_empty() {
                    tracing::debug!(target: "parac::build", program = name, "build log: {}", log.trim_end());
                }
                if log.contains("warning") {
                    self.warnings
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(format!("{name}: {}", log.trim_end()));
                }
                Ok(program)
            }
            Err(e) => {
                let log = program
                    .get_build_log(self.device.id())
                    .unwrap_or_default()
                    .trim_end()
                    .to_string();
                if matches!(
                    e.0,
                    code::BUILD_PROGRAM_FAILURE
                        | code::COMPILE_PROGRAM_FAILURE
                        | code::LINK_PROGRAM_FAILURE
                ) {
                    Err(Error::Build {
                        program: name.to_string(),
                        log: if log.is_empty() {
                            "(the driver gave no build log)".to_string()
                        } else {
                            log
                        },
                        source_listing: numbered(source),
                    })
                } else {
                    let mut detail = format!("options `{options}`");
                    if !log.is_empty() {
                        detail.push_str("; build log:\n");
                        detail.push_str(&log);
                    }
                    Err(cl_error(format!("clBuildProgram({name})"), e.0, detail))
                }
            }
        }
    }

    /// The program from the disk cache, or `None` (no file, a corrupt or mismatched one, or a
    /// binary the driver refuses).
    fn load_cached(&self, dir: &Path, key: &str, options: &str) -> Option<ClProgram> {
        let bytes = fs::read(dir.join(file_name(key))).ok()?;
        let binary = parse_cache_file(&bytes, key)?;
        let devices = [self.device.id()];
        // SAFETY: the device is the one of the context.
        let mut program =
            unsafe { ClProgram::create_from_binary(&self.context, &devices, &[binary]) }.ok()?;
        program.build(&devices, options).ok()?;
        Some(program)
    }
}

/// Everything a program binary depends on, as text: the file stores it and a load compares it
/// in full, so a hash collision or another driver's file is never used.
fn cache_key(d: &Device, source: &str, options: &str) -> String {
    let i = &d.info;
    format!(
        "parac program binary v1\nplatform: {}\ndevice: {}\nvendor: {}\ndevice version: {}\n\
         driver: {}\noptions: {options}\nsource ({} bytes):\n{source}",
        i.platform,
        i.name,
        i.vendor,
        d.version,
        i.driver_version,
        source.len()
    )
}

/// 64-bit FNV-1a from `basis`.
fn fnv1a(basis: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(basis, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn file_name(key: &str) -> String {
    let a = fnv1a(0xcbf2_9ce4_8422_2325, key.as_bytes());
    let b = fnv1a(0x6c62_272e_07bb_0142, key.as_bytes());
    format!("{a:016x}{b:016x}.bin")
}

const MAGIC: &[u8] = b"PARACBIN1\n";

/// The cache file: magic, key length and key, binary length and binary (lengths as u64 LE),
/// then a checksum (FNV-1a of key and binary).
fn cache_file(key: &str, binary: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAGIC.len() + key.len() + binary.len() + 24);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(key.len() as u64).to_le_bytes());
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(&(binary.len() as u64).to_le_bytes());
    out.extend_from_slice(binary);
    let sum = fnv1a(fnv1a(0xcbf2_9ce4_8422_2325, key.as_bytes()), binary);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// The binary in a cache file, if the file is whole and holds exactly `key`.
fn parse_cache_file<'a>(bytes: &'a [u8], key: &str) -> Option<&'a [u8]> {
    fn take<'a>(rest: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        if rest.len() < n {
            return None;
        }
        let (head, tail) = rest.split_at(n);
        *rest = tail;
        Some(head)
    }
    fn take_len(rest: &mut &[u8]) -> Option<usize> {
        let b: [u8; 8] = take(rest, 8)?.try_into().ok()?;
        usize::try_from(u64::from_le_bytes(b)).ok()
    }
    let mut rest = bytes;
    if take(&mut rest, MAGIC.len())? != MAGIC {
        return None;
    }
    let key_len = take_len(&mut rest)?;
    if take(&mut rest, key_len)? != key.as_bytes() {
        return None;
    }
    let bin_len = take_len(&mut rest)?;
    let binary = take(&mut rest, bin_len)?;
    let sum: [u8; 8] = take(&mut rest, 8)?.try_into().ok()?;
    let expected = fnv1a(fnv1a(0xcbf2_9ce4_8422_2325, key.as_bytes()), binary);
    (rest.is_empty() && u64::from_le_bytes(sum) == expected && !binary.is_empty()).then_some(binary)
}

/// Writes a cache file atomically (a temporary file renamed over it).
fn store(dir: &Path, key: &str, binary: &[u8]) -> std::io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    fs::create_dir_all(dir)?;
    let path: PathBuf = dir.join(file_name(key));
    let tmp = dir.join(format!(
        "{}.{}.{}.tmp",
        file_name(key),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    fs::write(&tmp, cache_file(key, binary))?;
    fs::rename(&tmp, &path).inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// The path of the disk cache file for a program on a device (tests corrupt it).
#[doc(hidden)]
pub fn cache_file_path(d: &Device, source: &str, options: &str) -> Option<PathBuf> {
    d.program_cache_dir()
        .map(|dir| dir.join(file_name(&cache_key(d, source, options))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_file_round_trips_and_rejects_damage() {
        let f = cache_file("key", b"binary");
        assert_eq!(parse_cache_file(&f, "key"), Some(&b"binary"[..]));
        assert_eq!(parse_cache_file(&f, "other key"), None);
        assert_eq!(parse_cache_file(&f[..f.len() - 1], "key"), None);
        let mut g = f.clone();
        let n = g.len();
        g[n - 12] ^= 1; // a bit of the binary
        assert_eq!(parse_cache_file(&g, "key"), None);
        assert_eq!(parse_cache_file(b"garbage", "key"), None);
        assert_eq!(parse_cache_file(b"", "key"), None);
        let mut h = f;
        h.push(0);
        assert_eq!(parse_cache_file(&h, "key"), None);
    }

    #[test]
    fn file_names_differ() {
        assert_ne!(file_name("a"), file_name("b"));
        assert_eq!(file_name("a").len(), 36);
    }
}
