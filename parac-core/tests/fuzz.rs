//! Property tests of the front end's robustness: `compile_str` must never panic, overflow the
//! stack or hang, whatever the input; every bad input must become a diagnostic.
//!
//! Input families (one test each):
//! 1. `token_soup`: random token sequences over the language's alphabet (mostly balanced
//!    brackets, sometimes not), alone or spliced into function, iterator, border-rule, `const`
//!    and `let` templates so that the soup reaches the statement and expression parsers;
//! 2. `mutated_seeds`: every `tests/in/*.parac` and every `parac! { .. }` block of
//!    `examples/*.rs` (read at test time, so new files are picked up), tokenized and mutated
//!    1 to 4 times (delete / duplicate / swap / replace a token, extreme integer literals,
//!    inserted `*`, `-`, `[0]`, `[itx:0:1]`, `[itx:5:0]`, a duplicated statement line, ...);
//!    `seeds_are_found_and_compile` checks the seeds themselves; `invisible_groups` gives
//!    mutated seeds to `compile_tokens` with runs of tokens wrapped in invisible
//!    (`Delimiter::None`) groups, as `macro_rules!` fragments arrive in a `parac!` invocation;
//! 3. `structured_programs`: structurally valid but semantically odd programs (iterators of 1 to
//!    4 dimensions with odd bounds and steps, windows with odd starts, lengths and strides,
//!    border rules and shorthands with widths 0 to 20 on matrices of 1 to 4 dimensions, constant
//!    matrices, host lets, global reductions, `if` chains, many functions), generated from a
//!    choice sequence so that proptest's shrinking simplifies the program;
//! 4. `deep_nesting` (random) and `deep_nesting_sweep` (fixed sizes, further): parentheses
//!    nested up to 500 levels, operator chains up to 2000 terms, unary and `as` chains, nested
//!    `if`s, `else if` chains, nested constant arrays, calls and subscripts, many statements and
//!    functions.
//!
//! Each input is compiled in a child process (this test binary, re-run as a server:
//! `fuzz_server`), on a thread with the default 2 MiB stack, under `catch_unwind`: a panic is
//! reported with its message and location, and a stack overflow (which aborts a process), an
//! input that takes more than the time limit (5 s in release; CPU time of the compiling thread
//! on Linux, so that a loaded machine does not fail the suite) or a hang (no answer within 3x
//! the limit: the child is killed) fails the input like a panic, so that proptest can shrink
//! it too. The invariants: no panic, no crash, no hang; every diagnostic message is non-empty;
//! with no diagnostic, every function of the syntax tree reached the IR
//! (`module.functions.len() == ast.functions.len()`).
//!
//! Knobs (environment variables):
//! - `PARAC_FUZZ_CASES`: cases per strategy (default 256);
//! - `PARAC_FUZZ_SEED`: the proptest RNG seed (default fixed, so runs are reproducible);
//! - `PARAC_FUZZ_LIMIT_MS`: the time limit per input (default 5000 in release, 15000 in debug);
//! - `PARAC_FUZZ_COLLECT=1`: do not stop at the first failure: record every distinct failure
//!   (by panic location, crash or hang), keep the shortest input of each, and print them all
//!   at the end of the test (which then fails if anything was recorded);
//! - `PARAC_FUZZ_SAVE_DIR=dir`: write every failing input to `dir/<test>-<n>.parac`.
//!
//! Failing cases are persisted by proptest (for an integration test, next to this file:
//! `fuzz.proptest-regressions`) and replayed first.

// `*index.get(SLICE)` picks a `&str` from a `&[&str]`; without the `*` inference asks for `[str]`.
#![allow(clippy::explicit_auto_deref)]

use parac_core::compile_str;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config as ProptestConfig, RngSeed, TestCaseError, TestRunner};
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------------

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// Cases per strategy: `PARAC_FUZZ_CASES`, default 256.
fn cases() -> u32 {
    env_u64("PARAC_FUZZ_CASES").map_or(256, |v| v.clamp(1, u32::MAX as u64) as u32)
}

fn collect_mode() -> bool {
    std::env::var("PARAC_FUZZ_COLLECT").is_ok_and(|v| v != "0" && !v.is_empty())
}

/// The time one input may take: 5 s in release, 15 s in debug builds (generous: the seeds take
/// a few hundred milliseconds at most), or `PARAC_FUZZ_LIMIT_MS`.
fn limit() -> Duration {
    static LIMIT: OnceLock<Duration> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        env_u64("PARAC_FUZZ_LIMIT_MS").map_or(
            Duration::from_secs(if cfg!(debug_assertions) { 15 } else { 5 }),
            Duration::from_millis,
        )
    })
}

/// The default stack of a spawned thread (what `parac!` callers and the CLI may have, or less).
const STACK: usize = 2 * 1024 * 1024;

fn runner(test_name: &'static str, salt: u64) -> TestRunner {
    let seed = env_u64("PARAC_FUZZ_SEED").unwrap_or(0x7061_7261_6300_0000);
    let mut config = proptest::test_runner::contextualize_config(ProptestConfig {
        cases: cases(),
        // Fixed by default: the suite is reproducible, not flaky.
        rng_seed: RngSeed::Fixed(seed ^ salt),
        // A hang makes each shrinking step cost `limit()`: bound the whole shrink.
        max_shrink_time: 180_000,
        ..ProptestConfig::default()
    });
    config.source_file = Some(file!());
    config.test_name = Some(test_name);
    TestRunner::new(config)
}

// ---------------------------------------------------------------------------------------------
// The child process: compiles the inputs it is sent, one at a time
// ---------------------------------------------------------------------------------------------

const SERVER_ENV: &str = "PARAC_FUZZ_SERVER";
const REPLY: &str = "@@parac-fuzz@@";
const WORKER: &str = "parac-fuzz-worker";

thread_local! {
    static LAST_PANIC: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Records the message and location of panics on worker threads (instead of printing them);
/// other threads keep the default hook.
fn install_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if thread::current().name() == Some(WORKER) {
                let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
                    (*s).to_string()
                } else if let Some(s) = info.payload().downcast_ref::<String>() {
                    s.clone()
                } else {
                    "<non-string panic payload>".to_string()
                };
                let loc = info.location().map_or_else(
                    || "<unknown location>".to_string(),
                    |l| format!("{}:{}:{}", l.file(), l.line(), l.column()),
                );
                LAST_PANIC.with(|p| *p.borrow_mut() = Some((msg, loc)));
            } else {
                default(info);
            }
        }));
    });
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('\t', "\\t")
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(c) => out.push(c),
                None => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// How the child compiles an input.
#[derive(Clone, Copy, Debug)]
enum Mode {
    /// `compile_str(text)`.
    Str,
    /// `compile_tokens` of the text's tokens, with runs of tokens wrapped in invisible
    /// (`Delimiter::None`) groups, as `macro_rules!` fragments such as `$e:expr` arrive in a
    /// `parac!` invocation; the number seeds the choice of runs.
    Invisible(u64),
}

/// The CPU time of the calling thread (Linux: `/proc/thread-self/stat`, in 10 ms ticks), so
/// that a loaded machine does not make an input look slow; `None` elsewhere.
fn thread_cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(Duration::from_millis((utime + stime) * 10))
}

/// Wraps random runs of tokens (at every level) in `Delimiter::None` groups.
fn wrap_invisible(ts: proc_macro2::TokenStream, rng: &mut u64) -> proc_macro2::TokenStream {
    use proc_macro2::{Delimiter, Group, TokenTree};
    let mut next = || {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        *rng
    };
    let tts: Vec<TokenTree> = ts.into_iter().collect();
    let mut out: Vec<TokenTree> = Vec::new();
    let mut i = 0;
    while i < tts.len() {
        let r = next();
        if r % 6 == 0 {
            let end = (i + 1 + (r >> 8) as usize % 4).min(tts.len());
            let inner: proc_macro2::TokenStream = tts[i..end].iter().cloned().collect();
            out.push(TokenTree::Group(Group::new(Delimiter::None, inner)));
            i = end;
        } else {
            out.push(tts[i].clone());
            i += 1;
        }
    }
    out.into_iter()
        .map(|tt| match tt {
            TokenTree::Group(g) => {
                let mut seed = next() | 1;
                let mut ng = Group::new(g.delimiter(), wrap_invisible(g.stream(), &mut seed));
                ng.set_span(g.span());
                TokenTree::Group(ng)
            }
            other => other,
        })
        .collect()
}

/// Compiles one input on a fresh 2 MiB thread and checks the invariants; the reply line.
fn serve_one(src: String, mode: Mode) -> String {
    let worker = thread::Builder::new()
        .name(WORKER.to_string())
        .stack_size(STACK)
        .spawn(move || {
            let start = Instant::now();
            let cpu_start = thread_cpu_time();
            let result = panic::catch_unwind(AssertUnwindSafe(|| {
                let out = match mode {
                    Mode::Str => compile_str(&src),
                    Mode::Invisible(seed) => {
                        let tokens = src.parse::<proc_macro2::TokenStream>().unwrap_or_default();
                        let mut rng = seed | 1;
                        parac_core::compile_tokens(wrap_invisible(tokens, &mut rng))
                    }
                };
                let mut problems = Vec::new();
                for (i, d) in out.diagnostics.iter().enumerate() {
                    if d.message.trim().is_empty() {
                        problems.push(format!("diagnostic #{i} has an empty message"));
                    }
                }
                if out.diagnostics.is_empty()
                    && out.module.functions.len() != out.ast.functions.len()
                {
                    problems.push(format!(
                        "no diagnostic, but only {} of the {} functions reached the IR",
                        out.module.functions.len(),
                        out.ast.functions.len()
                    ));
                }
                let clean = out.diagnostics.is_empty();
                drop(out); // inside the guard: dropping a deep tree must not overflow either
                (clean, problems)
            }));
            // CPU time where it can be measured, else wall time.
            let elapsed = match (cpu_start, thread_cpu_time()) {
                (Some(a), Some(b)) => b.saturating_sub(a),
                _ => start.elapsed(),
            };
            let micros = elapsed.as_micros();
            let wall = start.elapsed().as_micros();
            match result {
                Ok((clean, problems)) if problems.is_empty() => {
                    format!("{REPLY} OK {micros} {} {wall}", u8::from(clean))
                }
                Ok((_, problems)) => format!(
                    "{REPLY} FAIL {micros} {}\t{}",
                    escape(&problems[0]),
                    escape(&problems.join("\n"))
                ),
                Err(_) => {
                    let (msg, loc) = LAST_PANIC
                        .with(|p| p.borrow_mut().take())
                        .unwrap_or_else(|| ("<no message>".into(), "<unknown location>".into()));
                    format!(
                        "{REPLY} FAIL {micros} {}\t{}",
                        escape(&format!("panic at {loc}")),
                        escape(&format!("compile_str panicked at {loc}: {msg}"))
                    )
                }
            }
        })
        .expect("spawning a worker thread");
    worker.join().unwrap_or_else(|_| {
        format!("{REPLY} FAIL 0 worker died\tthe worker thread died outside catch_unwind")
    })
}

/// Not a test of its own: the child process that the other tests send their inputs to (it
/// returns at once unless `PARAC_FUZZ_SERVER` is set). Protocol: `<len> [<seed>]\n<bytes>` in
/// (a seed: `compile_tokens` with invisible groups), one reply line out.
#[test]
fn fuzz_server() {
    if std::env::var_os(SERVER_ENV).is_none() {
        return;
    }
    install_hook();
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    loop {
        let mut header = String::new();
        match input.read_line(&mut header) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let mut fields = header.split_whitespace();
        let Some(Ok(len)) = fields.next().map(str::parse::<usize>) else {
            break;
        };
        let mode = match fields.next().map(str::parse::<u64>) {
            Some(Ok(seed)) => Mode::Invisible(seed),
            _ => Mode::Str,
        };
        let mut buf = vec![0; len];
        if input.read_exact(&mut buf).is_err() {
            break;
        }
        let reply = serve_one(String::from_utf8_lossy(&buf).into_owned(), mode);
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{reply}");
        let _ = out.flush();
    }
    std::process::exit(0);
}

// ---------------------------------------------------------------------------------------------
// The parent side
// ---------------------------------------------------------------------------------------------

struct Server {
    child: Child,
    stdin: ChildStdin,
    replies: mpsc::Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl Server {
    fn start() -> Server {
        // `/proc/self/exe` is this very binary even if a rebuild has replaced the file since
        // (then `current_exe()` names a deleted file).
        let proc_exe = Path::new("/proc/self/exe");
        let exe = if proc_exe.exists() {
            proc_exe.to_path_buf()
        } else {
            std::env::current_exe().expect("the test binary's path")
        };
        let mut child = Command::new(exe)
            .args([
                "--exact",
                "fuzz_server",
                "--nocapture",
                "--test-threads=1",
                "-q",
            ])
            .env(SERVER_ENV, "1")
            .env("RUST_BACKTRACE", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting the fuzz server (this test binary)");
        let stdin = child.stdin.take().expect("child stdin");
        let stdout = child.stdout.take().expect("child stdout");
        let stderr_pipe = child.stderr.take().expect("child stderr");
        let (tx, replies) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if line.starts_with(REPLY) && tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&stderr);
        thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { break };
                let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                t.push_back(line);
                if t.len() > 20 {
                    t.pop_front();
                }
            }
        });
        Server {
            child,
            stdin,
            replies,
            stderr,
        }
    }

    fn stderr_tail(&self) -> String {
        let t = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        t.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// What went wrong with one input.
#[derive(Debug, Clone)]
struct Failure {
    /// Groups failures of one bug (the panic location, crash, hang or broken invariant).
    key: String,
    /// Everything known.
    detail: String,
}

/// Per-test state: the child process and statistics.
struct Stats {
    name: &'static str,
    inputs: AtomicU64,
    clean: AtomicU64,
    max_micros: AtomicU64,
    max_wall_micros: AtomicU64,
    restarts: AtomicU64,
    failures: Mutex<BTreeMap<String, (usize, String, String)>>,
    started: OnceLock<Instant>,
    server: Mutex<Option<Server>>,
}

impl Stats {
    const fn new(name: &'static str) -> Stats {
        Stats {
            name,
            inputs: AtomicU64::new(0),
            clean: AtomicU64::new(0),
            max_micros: AtomicU64::new(0),
            max_wall_micros: AtomicU64::new(0),
            restarts: AtomicU64::new(0),
            failures: Mutex::new(BTreeMap::new()),
            started: OnceLock::new(),
            server: Mutex::new(None),
        }
    }

    /// Prints the totals and stops the child; in collect mode, prints every distinct failure
    /// and fails if there is any.
    fn finish(&self) {
        if let Some(mut s) = self.server.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = s.child.kill();
            let _ = s.child.wait();
        }
        let secs = self
            .started
            .get()
            .map_or(0.0, |t| t.elapsed().as_secs_f64());
        eprintln!(
            "[parac fuzz] {}: {} inputs run ({} without diagnostics), slowest {:.0} ms CPU / {:.0} ms wall, {:.1} s in all",
            self.name,
            self.inputs.load(Ordering::Relaxed),
            self.clean.load(Ordering::Relaxed),
            self.max_micros.load(Ordering::Relaxed) as f64 / 1000.0,
            self.max_wall_micros.load(Ordering::Relaxed) as f64 / 1000.0,
            secs
        );
        let failures = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if !failures.is_empty() {
            for (key, (count, detail, input)) in failures.iter() {
                eprintln!(
                    "[parac fuzz] {}: FAILURE x{count}: {key}\n{detail}\n--- shortest input ({} bytes) ---\n{input}\n---",
                    self.name,
                    input.len()
                );
            }
            panic!(
                "{}: {} distinct failure(s) found (see above)",
                self.name,
                failures.len()
            );
        }
    }
}

/// Compiles `src` in the child process; `Ok(clean)` if every invariant holds.
fn compile_guarded(stats: &Stats, src: &str) -> Result<bool, Failure> {
    compile_guarded_as(stats, src, Mode::Str)
}

fn compile_guarded_as(stats: &Stats, src: &str, mode: Mode) -> Result<bool, Failure> {
    stats.started.get_or_init(Instant::now);
    stats.inputs.fetch_add(1, Ordering::Relaxed);
    let mut guard = stats.server.lock().unwrap_or_else(|e| e.into_inner());
    if guard.is_none() {
        *guard = Some(Server::start());
    }
    let server = guard.as_mut().expect("a server");
    let header = match mode {
        Mode::Str => format!("{}\n", src.len()),
        Mode::Invisible(seed) => format!("{} {seed}\n", src.len()),
    };
    let sent = write!(server.stdin, "{header}")
        .and_then(|_| server.stdin.write_all(src.as_bytes()))
        .and_then(|_| server.stdin.flush());
    let reply = if sent.is_ok() {
        // Wall time: generous, as the limit itself is on CPU time.
        server
            .replies
            .recv_timeout(limit() * 3 + Duration::from_secs(2))
    } else {
        Err(mpsc::RecvTimeoutError::Disconnected)
    };
    let line = match reply {
        Ok(line) => line,
        Err(e) => {
            // A hang (kill the child) or a crash: either way, start a new child next time.
            let mut s = guard.take().expect("a server");
            stats.restarts.fetch_add(1, Ordering::Relaxed);
            let hang = matches!(e, mpsc::RecvTimeoutError::Timeout);
            if hang {
                let _ = s.child.kill();
            }
            let status = s.child.wait();
            // Let the stderr reader drain.
            thread::sleep(Duration::from_millis(50));
            let tail = s.stderr_tail();
            let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
            return Err(if hang {
                Failure {
                    key: "hang (time limit)".into(),
                    detail: format!(
                        "the compiler did not return within {:?} (wall time)",
                        limit() * 3 + Duration::from_secs(2)
                    ),
                }
            } else if tail.contains("has overflowed its stack") {
                Failure {
                    key: "stack overflow".into(),
                    detail: format!(
                        "compile_str overflowed a 2 MiB stack (child process: {status})\n{tail}"
                    ),
                }
            } else {
                Failure {
                    key: format!("crash ({status})"),
                    detail: format!("the child process died: {status}\n{tail}"),
                }
            });
        }
    };
    drop(guard);
    let body = line[REPLY.len()..].trim_start();
    let (verdict, rest) = body.split_once(' ').unwrap_or((body, ""));
    let (micros, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let micros: u64 = micros.parse().unwrap_or(0);
    stats.max_micros.fetch_max(micros, Ordering::Relaxed);
    if verdict == "OK" {
        let (clean, wall) = rest.split_once(' ').unwrap_or((rest, "0"));
        let clean = clean.trim() == "1";
        let wall: u64 = wall.trim().parse().unwrap_or(0);
        stats.max_wall_micros.fetch_max(wall, Ordering::Relaxed);
        if Duration::from_micros(micros) > limit() {
            return Err(Failure {
                key: "too slow".into(),
                detail: format!(
                    "the compiler took {:?} of CPU time (limit {:?})",
                    Duration::from_micros(micros),
                    limit()
                ),
            });
        }
        if clean {
            stats.clean.fetch_add(1, Ordering::Relaxed);
        }
        Ok(clean)
    } else {
        let (key, detail) = rest.split_once('\t').unwrap_or((rest, rest));
        Err(Failure {
            key: unescape(key),
            detail: unescape(detail),
        })
    }
}

/// Checks one input: in collect mode a failure is recorded and the run goes on.
fn check(stats: &Stats, src: &str) -> Result<bool, TestCaseError> {
    check_as(stats, src, Mode::Str)
}

fn check_as(stats: &Stats, src: &str, mode: Mode) -> Result<bool, TestCaseError> {
    let result = compile_guarded_as(stats, src, mode);
    if let (Err(f), Some(dir)) = (&result, std::env::var_os("PARAC_FUZZ_SAVE_DIR")) {
        // Every failing input, for triage (`<test>-<n>.parac`, the failure in a comment).
        static SAVED: AtomicU64 = AtomicU64::new(0);
        let n = SAVED.fetch_add(1, Ordering::Relaxed);
        let path = Path::new(&dir).join(format!("{}-{n:05}.parac", stats.name));
        let _ = std::fs::create_dir_all(&dir);
        let note = format!("// {}: {:?}\n", f.key.replace('\n', " "), mode);
        let _ = std::fs::write(path, note + src);
    }
    match result {
        Ok(clean) => Ok(clean),
        Err(f) if collect_mode() => {
            let mut map = stats.failures.lock().unwrap_or_else(|e| e.into_inner());
            let entry = map
                .entry(f.key.clone())
                .or_insert_with(|| (0, f.detail.clone(), src.to_string()));
            entry.0 += 1;
            if src.len() < entry.2.len() {
                entry.1 = f.detail;
                entry.2 = src.to_string();
            }
            Ok(false)
        }
        Err(f) => Err(TestCaseError::fail(format!(
            "{}{}\n--- input ({} bytes) ---\n{}\n---",
            f.detail,
            match mode {
                Mode::Str => String::new(),
                Mode::Invisible(seed) => format!(
                    "\n(compile_tokens of the input's tokens with invisible groups, seed {seed})"
                ),
            },
            src.len(),
            src
        ))),
    }
}

fn run_strategy<S: Strategy>(
    stats: &'static Stats,
    salt: u64,
    strategy: S,
    render: impl Fn(&S::Value) -> String,
) {
    let mut runner = runner(stats.name, salt);
    let result = runner.run(&strategy, |v| check(stats, &render(&v)).map(|_| ()));
    stats.finish();
    if let Err(e) = result {
        match e {
            proptest::test_runner::TestError::Fail(reason, value) => {
                let src = render(&value);
                panic!(
                    "{}: minimal failing input after shrinking ({} bytes):\n{src}\n\nreason: {reason}",
                    stats.name,
                    src.len()
                )
            }
            other => panic!("{}: {other}", stats.name),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The alphabet
// ---------------------------------------------------------------------------------------------

const KEYWORDS: &[&str] = &[
    "fn",
    "let",
    "const",
    "parac_iterator",
    "parac_border_rule",
    "return",
    "if",
    "else",
    "in",
    "as",
    "mut",
    "pub",
    "true",
    "false",
];

const TYPES: &[&str] = &[
    "u8", "i8", "u16", "i16", "u32", "i32", "f32", "i64", "u64", "bool", "f64", "usize",
];

const ELEMS: &[&str] = &["u8", "i8", "u16", "i16", "u32", "i32", "f32"];

const PLAIN_SCALARS: &[&str] = &["i32", "u8", "f32", "i64", "i16", "u32"];

const SCALARS: &[&str] = &[
    "i32", "u8", "f32", "i64", "u64", "bool", "i8", "u16", "i16", "u32", "f64",
];

const BUILTINS: &[&str] = &[
    "parac_matrix_sum",
    "parac_matrix_min",
    "parac_matrix_max",
    "parac_matrix_mean",
    "parac_convolution",
    "transe",
    "min",
    "max",
    "clamp",
    "abs",
    "sqrt",
    "exp",
    "floor",
    "ceil",
    "round",
    "replicate",
    "reflect",
    "reflect101",
    "constant",
    "wrap",
];

const IDENTS: &[&str] = &[
    "M", "N", "C", "src", "dst", "out", "itx", "ity", "itz", "it", "it1", "x", "y", "a", "b", "K",
    "h", "br",
];

const INTS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "16",
    "17",
    "64",
    "255",
    "256",
    "2147483647",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "99999999999999999999",
    "340282366920938463463374607431768211456",
    "3u8",
    "300u8",
    "4000000000u32",
    "1i64",
    "5usize",
    "0x7fffffff",
    "1_000",
];

const NEGATIVE: &[&str] = &[
    "-1",
    "-2",
    "-3",
    "-16",
    "-17",
    "-2147483648",
    "-9223372036854775808",
];

const FLOATS: &[&str] = &[
    "0.0", "1.5", "3.14159", "1e10", "1e308", "1e309", "2.5f32", "1.0f64", "0.5e-3", "255.0",
];

const PUNCT: &[&str] = &[
    "+", "-", "*", "/", "%", ".*", "<<", ">>", "&", "|", "^", "&&", "||", "!", "==", "!=", "<",
    "<=", ">", ">=", "=", "+=", "-=", "*=", "/=", ":", ";", ",", "->", ".", "#", "?", "@", "~",
    "'a", "\"s\"", "'c'", "::",
];

/// Every atom of the alphabet.
fn alphabet() -> &'static [&'static str] {
    static ALL: OnceLock<Vec<&'static str>> = OnceLock::new();
    ALL.get_or_init(|| {
        [
            KEYWORDS, TYPES, BUILTINS, IDENTS, INTS, NEGATIVE, FLOATS, PUNCT,
        ]
        .concat()
    })
}

// ---------------------------------------------------------------------------------------------
// 1. Token soup
// ---------------------------------------------------------------------------------------------

fn soup_tree() -> impl Strategy<Value = String> {
    let atom = prop::sample::select(alphabet()).prop_map(str::to_string);
    atom.prop_recursive(6, 160, 8, |inner| {
        (0..3usize, prop::collection::vec(inner, 0..8)).prop_map(|(d, items)| {
            let (o, c) = [("(", ")"), ("[", "]"), ("{", "}")][d];
            format!("{o} {} {c}", items.join(" "))
        })
    })
}

/// A soup: a sequence of atoms and balanced groups, then sometimes unbalanced on purpose.
fn soup() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(soup_tree(), 0..40),
        0..10usize,
        any::<Index>(),
        0..6usize,
    )
        .prop_map(|(items, unbalance, at, which)| {
            let mut s = items.join(" ");
            // One time in ten: a stray delimiter somewhere.
            if unbalance == 0 {
                let stray = ["(", ")", "[", "]", "{", "}"][which];
                let pos = at.index(s.len() + 1);
                let pos = (0..=pos)
                    .rev()
                    .find(|p| s.is_char_boundary(*p))
                    .unwrap_or(0);
                s.insert_str(pos, &format!(" {stray} "));
            }
            s
        })
}

/// Templates that lead the soup into each parser.
const SOUP_TEMPLATES: &[&str] = &[
    "@",
    "fn f(@) { }",
    "fn f(src: &u8[M][N], out: &mut u8[M][N]) { @ }",
    "fn f(src: &u8[M][N], out: &mut u8[M][N]) { parac_iterator it(0:M:1; 0:N:1) { @ } }",
    "fn f(src: &u8[M][N], out: &mut u8[M][N]) { parac_iterator it(@) { out[itx][ity] = src[itx][ity]; } }",
    "fn f(src: &u8[M][N], out: &mut i32[M][N]) { parac_border_rule br { @ } parac_iterator it(0:M:1; 0:N:1) parac_border_rule(br) { out[itx][ity] = src[itx-1][ity+1]; } }",
    "fn f(src: &u8[M][N], out: &mut i32[M][N]) { parac_border_rule br = @; parac_iterator it(0:M:1; 0:N:1) parac_border_rule(br) { out[itx][ity] = src[itx-1][ity+1]; } }",
    "fn f(src: &u8[M][N]) -> i64 { let h = @; return h; }",
    "fn f(src: &u8[M][N], out: &mut f32[M][N]) { const K: f32[3][3] = @; parac_iterator it(0:M:1; 0:N:1) { out[itx][ity] = K[1][1]; } }",
    "fn f(src: &u8[M][N], out: &mut u8[M][N]) { parac_iterator it(0:M:1; 0:N:1) { out[itx][ity] = @; } }",
    "fn f(src: &u8[M][N], out: &mut u8[@]) { parac_iterator it(0:M:1; 0:N:1) { out[itx][ity] = src[itx][ity]; } }",
    "fn f(src: &u8[M][N], out: &mut u8[M][N]) { parac_iterator it(0:M:1; 0:N:1) { if @ { out[itx][ity] = 1; } else { out[itx][ity] = 2; } } }",
];

#[test]
fn token_soup() {
    static STATS: Stats = Stats::new("token_soup");
    let strategy = (0..SOUP_TEMPLATES.len(), soup());
    run_strategy(&STATS, 1, strategy, |(t, s)| {
        SOUP_TEMPLATES[*t].replacen('@', s, 1)
    });
}

// ---------------------------------------------------------------------------------------------
// 2. Mutated seeds
// ---------------------------------------------------------------------------------------------

/// One lexeme of a seed, with its line (to keep lines and duplicate statement lines) and
/// whether it is a punctuation joined to the next one (`+=`, `.*`, `->`).
#[derive(Clone, Debug)]
struct Tok {
    text: String,
    line: usize,
    joint: bool,
}

#[derive(Debug)]
struct Seed {
    name: String,
    text: String,
    toks: Vec<Tok>,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn flatten(ts: proc_macro2::TokenStream, out: &mut Vec<Tok>) {
    use proc_macro2::{Delimiter, Spacing, TokenTree};
    for tt in ts {
        match tt {
            TokenTree::Group(g) => {
                let (o, c) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::None => ("", ""),
                };
                if !o.is_empty() {
                    out.push(Tok {
                        text: o.into(),
                        line: g.span_open().start().line,
                        joint: false,
                    });
                }
                flatten(g.stream(), out);
                if !c.is_empty() {
                    out.push(Tok {
                        text: c.into(),
                        line: g.span_close().start().line,
                        joint: false,
                    });
                }
            }
            TokenTree::Punct(p) => out.push(Tok {
                text: p.as_char().to_string(),
                line: p.span().start().line,
                joint: p.spacing() == Spacing::Joint,
            }),
            TokenTree::Ident(i) => out.push(Tok {
                text: i.to_string(),
                line: i.span().start().line,
                joint: false,
            }),
            TokenTree::Literal(l) => out.push(Tok {
                text: l.to_string(),
                line: l.span().start().line,
                joint: false,
            }),
        }
    }
}

fn render(toks: &[Tok]) -> String {
    let mut s = String::new();
    let mut prev: Option<&Tok> = None;
    for t in toks {
        if let Some(p) = prev {
            if t.line != p.line {
                s.push('\n');
            } else if !p.joint {
                s.push(' ');
            }
        }
        s.push_str(&t.text);
        prev = Some(t);
    }
    s
}

/// The text between the braces of each `parac! { .. }` in a Rust file.
fn parac_blocks(source: &str) -> Vec<String> {
    use proc_macro2::{Delimiter, TokenStream, TokenTree};
    fn offset(lines: &[usize], lc: proc_macro2::LineColumn, text: &str) -> usize {
        // `lines[i]`: byte offset of line i+1; columns count chars.
        let start = lines[lc.line - 1];
        text[start..]
            .char_indices()
            .nth(lc.column)
            .map_or(text.len(), |(i, _)| start + i)
    }
    fn walk(ts: TokenStream, text: &str, lines: &[usize], out: &mut Vec<String>) {
        let tts: Vec<TokenTree> = ts.into_iter().collect();
        for (i, tt) in tts.iter().enumerate() {
            if let TokenTree::Group(g) = tt {
                let is_macro = i >= 2
                    && matches!(&tts[i - 1], TokenTree::Punct(p) if p.as_char() == '!')
                    && matches!(&tts[i - 2], TokenTree::Ident(id) if id == "parac");
                if is_macro && g.delimiter() == Delimiter::Brace {
                    let lo = offset(lines, g.span_open().end(), text);
                    let hi = offset(lines, g.span_close().start(), text);
                    out.push(text[lo..hi].to_string());
                } else {
                    walk(g.stream(), text, lines, out);
                }
            }
        }
    }
    let mut lines = vec![0];
    lines.extend(source.match_indices('\n').map(|(i, _)| i + 1));
    let mut out = Vec::new();
    if let Ok(ts) = source.parse::<TokenStream>() {
        walk(ts, source, &lines, &mut out);
    }
    out
}

/// Every seed program: `tests/in/*.parac` and the `parac!` blocks of `examples/*.rs`.
fn seeds() -> &'static [Seed] {
    static SEEDS: OnceLock<Vec<Seed>> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let mut texts: Vec<(String, String)> = Vec::new();
        let read_dir = |dir: &str, ext: &str| {
            let mut paths: Vec<PathBuf> = std::fs::read_dir(workspace().join(dir))
                .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            paths.retain(|p| p.extension().is_some_and(|e| e == ext));
            paths.sort();
            paths
        };
        for p in read_dir("tests/in", "parac") {
            let text = std::fs::read_to_string(&p).expect("reading a seed");
            texts.push((p.display().to_string(), text));
        }
        for p in read_dir("examples", "rs") {
            let text = std::fs::read_to_string(&p).expect("reading an example");
            for (i, block) in parac_blocks(&text).into_iter().enumerate() {
                texts.push((format!("{}#{i}", p.display()), block));
            }
        }
        texts
            .into_iter()
            .map(|(name, text)| {
                let mut toks = Vec::new();
                if let Ok(ts) = text.parse::<proc_macro2::TokenStream>() {
                    flatten(ts, &mut toks);
                }
                Seed { name, text, toks }
            })
            .collect()
    })
}

#[test]
fn seeds_are_found_and_compile() {
    static STATS: Stats = Stats::new("seeds_are_found_and_compile");
    let seeds = seeds();
    assert!(
        seeds.iter().any(|s| s.name.ends_with(".parac")),
        "no tests/in/*.parac seed found"
    );
    assert!(
        seeds.iter().any(|s| s.name.contains("examples")),
        "no parac! block found in examples/*.rs"
    );
    for s in seeds {
        assert!(!s.toks.is_empty(), "{}: the seed does not tokenize", s.name);
        // The seeds themselves, and the rendering the mutations start from.
        let r = render(&s.toks);
        for input in [&s.text, &r] {
            if let Err(e) = check(&STATS, input) {
                panic!("{}: {e}", s.name);
            }
        }
    }
    STATS.finish();
}

const EXTREMES: &[&str] = &[
    "0",
    "-1",
    "1",
    "17",
    "2147483647",
    "4294967296",
    "9223372036854775807",
];

const INSERTS: &[&str] = &["*", "-", "[0]", "[itx:0:1]", "[itx:5:0]"];

fn lex(s: &str, line: usize) -> Vec<Tok> {
    let mut v = Vec::new();
    if let Ok(ts) = s.parse::<proc_macro2::TokenStream>() {
        flatten(ts, &mut v);
    }
    for t in &mut v {
        t.line = line;
    }
    v
}

fn is_int_literal(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_digit())
        && !t.contains('.')
        && !t.contains('e')
        && !t.contains("f32")
}

#[derive(Clone, Copy, Debug)]
enum Mutation {
    Delete(Index),
    Duplicate(Index),
    Swap(Index, Index),
    Replace(Index, Index),
    Extreme(Index, Index),
    Insert(Index, Index),
    DuplicateLine(Index),
    InsertAtom(Index, Index),
    /// Replace a token by another token of the same program (a name used elsewhere).
    Borrow(Index, Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let i = any::<Index>;
    prop_oneof![
        i().prop_map(Mutation::Delete),
        i().prop_map(Mutation::Duplicate),
        (i(), i()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        (i(), i()).prop_map(|(a, b)| Mutation::Replace(a, b)),
        (i(), i()).prop_map(|(a, b)| Mutation::Extreme(a, b)),
        (i(), i()).prop_map(|(a, b)| Mutation::Insert(a, b)),
        i().prop_map(Mutation::DuplicateLine),
        (i(), i()).prop_map(|(a, b)| Mutation::InsertAtom(a, b)),
        (i(), i()).prop_map(|(a, b)| Mutation::Borrow(a, b)),
    ]
}

fn apply(toks: &mut Vec<Tok>, m: Mutation) {
    let n = toks.len();
    if n == 0 {
        return;
    }
    match m {
        Mutation::Delete(i) => {
            toks.remove(i.index(n));
        }
        Mutation::Duplicate(i) => {
            let i = i.index(n);
            let t = toks[i].clone();
            toks.insert(i, t);
        }
        Mutation::Swap(a, b) => toks.swap(a.index(n), b.index(n)),
        Mutation::Replace(i, a) => {
            let i = i.index(n);
            let line = toks[i].line;
            let new = lex(*a.get(alphabet()), line);
            toks.splice(i..=i, new);
        }
        Mutation::Extreme(i, v) => {
            let ints: Vec<usize> = (0..n).filter(|k| is_int_literal(&toks[*k].text)).collect();
            if ints.is_empty() {
                return;
            }
            let k = *i.get(&ints);
            let line = toks[k].line;
            toks.splice(k..=k, lex(*v.get(EXTREMES), line));
        }
        Mutation::Insert(i, what) => {
            let i = i.index(n + 1);
            let line = toks[i.min(n - 1)].line;
            let new = lex(*what.get(INSERTS), line);
            toks.splice(i..i, new);
        }
        Mutation::DuplicateLine(i) => {
            let line = toks[i.index(n)].line;
            let first = toks.iter().position(|t| t.line == line).unwrap_or(0);
            let last = toks.iter().rposition(|t| t.line == line).unwrap_or(0);
            let copy: Vec<Tok> = toks[first..=last].to_vec();
            toks.splice(last + 1..last + 1, copy);
        }
        Mutation::InsertAtom(i, a) => {
            let i = i.index(n + 1);
            let line = toks[i.min(n - 1)].line;
            let new = lex(*a.get(alphabet()), line);
            toks.splice(i..i, new);
        }
        Mutation::Borrow(i, j) => {
            let (i, j) = (i.index(n), j.index(n));
            toks[i].text = toks[j].text.clone();
        }
    }
}

#[test]
fn mutated_seeds() {
    static STATS: Stats = Stats::new("mutated_seeds");
    let seeds = seeds();
    assert!(!seeds.is_empty(), "no seed programs found");
    let strategy = (any::<Index>(), prop::collection::vec(mutation(), 1..=4));
    run_strategy(&STATS, 2, strategy, |(s, muts)| {
        let seed = s.get(seeds);
        let mut toks = seed.toks.clone();
        for m in muts {
            apply(&mut toks, *m);
        }
        render(&toks)
    });
}

/// `compile_tokens` on mutated seeds whose tokens are partly wrapped in invisible groups (what
/// `macro_rules!` fragments look like inside a `parac!` invocation).
#[test]
fn invisible_groups() {
    static STATS: Stats = Stats::new("invisible_groups");
    let seeds = seeds();
    assert!(!seeds.is_empty(), "no seed programs found");
    let strategy = (
        any::<Index>(),
        prop::collection::vec(mutation(), 0..=2),
        any::<u64>(),
    );
    let render_src = |(s, muts): (&Index, &Vec<Mutation>)| {
        let mut toks = s.get(seeds).toks.clone();
        for m in muts {
            apply(&mut toks, *m);
        }
        render(&toks)
    };
    let mut runner = runner(STATS.name, 5);
    let result = runner.run(&strategy, |(s, muts, seed)| {
        check_as(&STATS, &render_src((&s, &muts)), Mode::Invisible(seed)).map(|_| ())
    });
    STATS.finish();
    if let Err(e) = result {
        panic!("{}: {e}", STATS.name);
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Structurally valid, semantically odd programs
// ---------------------------------------------------------------------------------------------

/// Draws choices from a sequence of numbers (zero, also past the end of the sequence, is
/// always the plainest choice), so that proptest's shrinking of the sequence (shorter, smaller
/// numbers) simplifies the program.
struct G<'a> {
    data: &'a [u32],
    pos: usize,
    /// How odd this program is, in percent of the base rates of odd choices: 0 (a plain
    /// program, for a third of them), 25, 100 or 200.
    weird: usize,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    In,
    Out,
    Local,
    Const,
}

#[derive(Clone, Debug)]
struct Mat {
    name: String,
    nd: usize,
    kind: Kind,
    /// The shape of a constant matrix.
    shape: Vec<usize>,
}

#[derive(Default)]
struct Fun {
    mats: Vec<Mat>,
    scalars: Vec<String>,
    hosts: Vec<String>,
    rules: Vec<String>,
    counter: usize,
}

impl Fun {
    fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}{}", self.counter)
    }
}

/// Kernel context: the index variables by slot and the `let`s in scope.
struct Kx {
    vars: Vec<Option<String>>,
    lets: Vec<String>,
    /// The iterator applies border rules (reads may then go outside the matrices).
    bordered: bool,
}

impl Kx {
    /// The variable of slot `s`, if that slot is iterated.
    fn var(&self, s: usize) -> Option<&str> {
        self.vars.get(s).and_then(|v| v.as_deref())
    }
}

/// The size symbol of dimension `d` of an `nd`-dimensional matrix (or iteration space): the
/// last two are rows and columns, a first third one the channel.
fn sym(d: usize, nd: usize) -> &'static str {
    match nd {
        1 => "N",
        2 => ["M", "N"][d.min(1)],
        3 => ["C", "M", "N"][d.min(2)],
        _ => ["B", "C", "M", "N"][d.min(3)],
    }
}

impl<'a> G<'a> {
    fn n(&mut self, k: usize) -> usize {
        let v = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        if k == 0 { 0 } else { v as usize % k }
    }

    /// True with probability `pct` percent (false on a zero choice).
    fn chance(&mut self, pct: usize) -> bool {
        self.n(100) >= 100 - pct.min(100)
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.n(xs.len())]
    }

    /// One of `normal`, or with probability `pct` percent (scaled by `weird`) one of `odd`.
    fn odd<T: Copy>(&mut self, pct: usize, normal: &[T], odd: &[T]) -> T {
        if self.weird_chance(pct) {
            self.pick(odd)
        } else {
            self.pick(normal)
        }
    }

    /// True with probability `pct` percent scaled by `weird`: an odd choice.
    fn weird_chance(&mut self, pct: usize) -> bool {
        let p = pct * self.weird / 100;
        p > 0 && self.chance(p)
    }

    fn int_lit(&mut self) -> String {
        if self.weird_chance(10) {
            self.pick(INTS).to_string()
        } else {
            self.n(20).to_string()
        }
    }

    fn small(&mut self) -> &'static str {
        self.odd(
            15,
            &["1", "2", "1", "3"],
            &["0", "4", "16", "17", "20", "64", "-1", "2147483647"],
        )
    }

    /// How many dimensions: mostly 2, sometimes 1 or 3, rarely 4 (an error).
    fn nd(&mut self) -> usize {
        self.odd(4, &[2, 2, 2, 1, 3], &[4])
    }

    fn dims(&mut self, nd: usize, input: bool) -> String {
        (0..nd)
            .map(|d| {
                let s = sym(d, nd);
                let e = if nd >= 3 && d == nd - 3 && !self.chance(20) {
                    "3".to_string()
                } else if input || !self.weird_chance(30) {
                    s.to_string()
                } else {
                    self.odd(
                        30,
                        &[
                            "({s}+1)/2",
                            "{s}*2",
                            "{s}/4",
                            "{s}-2",
                            "1",
                            "3",
                            "{s}+1",
                            "(({s}))",
                        ],
                        &[
                            "0",
                            "{s}*{s}",
                            "2147483647",
                            "-{s}",
                            "{s}<<31",
                            "4294967296",
                            "{s}/0",
                            "{s}%0",
                            "{s}-20",
                            "{s}*{s}*{s}*{s}",
                            "9223372036854775807",
                        ],
                    )
                    .replace("{s}", s)
                };
                format!("[{e}]")
            })
            .collect()
    }

    fn program(&mut self) -> String {
        let nfun = if self.chance(3) {
            10 + self.n(40)
        } else {
            1 + self.n(2)
        };
        let mut out = String::new();
        for i in 0..nfun {
            // Rarely, two functions share a name.
            let name = if self.weird_chance(2) {
                "f0".to_string()
            } else {
                format!("f{i}")
            };
            out.push_str(&self.function(&name));
            out.push('\n');
        }
        out
    }

    fn function(&mut self, name: &str) -> String {
        let mut f = Fun::default();
        let mut params = Vec::new();
        for k in 0..1 + self.n(2) {
            let nd = self.nd();
            let n = format!("a{k}");
            params.push(format!("{n}: &{}{}", self.pick(ELEMS), self.dims(nd, true)));
            f.mats.push(Mat {
                name: n,
                nd,
                kind: Kind::In,
                shape: vec![],
            });
        }
        for k in 0..1 + self.n(2) {
            let nd = self.nd();
            let n = format!("o{k}");
            params.push(format!(
                "{n}: &mut {}{}",
                self.pick(ELEMS),
                self.dims(nd, false)
            ));
            f.mats.push(Mat {
                name: n,
                nd,
                kind: Kind::Out,
                shape: vec![],
            });
        }
        for k in 0..self.n(3) {
            let n = format!("s{k}");
            params.push(format!(
                "{n}: {}",
                self.odd(10, &["i32", "u8", "f32", "i64", "bool"], SCALARS)
            ));
            f.scalars.push(n);
        }
        if self.chance(10) {
            // Outputs before inputs: sizes bound by an output.
            params.reverse();
        }
        let ret = if self.chance(10) {
            Some(self.odd(10, PLAIN_SCALARS, SCALARS))
        } else {
            None
        };
        let mut body = String::new();
        for _ in 0..1 + self.n(5) {
            let s = self.fn_stmt(&mut f);
            body.push_str("    ");
            body.push_str(&s);
            body.push('\n');
        }
        if ret.is_some() {
            let e = self.host_expr(&f, 2);
            body.push_str(&format!("    return {e};\n"));
        } else if self.weird_chance(2) {
            body.push_str("    return 0;\n");
        }
        format!(
            "{}fn {name}({}){} {{\n{body}}}\n",
            if self.chance(50) { "pub " } else { "" },
            params.join(", "),
            ret.map_or(String::new(), |t| format!(" -> {t}"))
        )
    }

    fn fn_stmt(&mut self, f: &mut Fun) -> String {
        match self.n(12) {
            0..=4 => self.iterator(f),
            5 | 6 => self.shorthand(f),
            7 => self.border_block(f),
            8 => self.host_let(f),
            9 => {
                let nd = self.nd();
                let n = f.fresh("t");
                let s = format!("let {n}: {}{};", self.pick(ELEMS), self.dims(nd, false));
                f.mats.push(Mat {
                    name: n,
                    nd,
                    kind: Kind::Local,
                    shape: vec![],
                });
                s
            }
            10 => self.const_matrix(f),
            _ => {
                if self.weird_chance(20) {
                    // Something misplaced at function level.
                    self.pick(&[
                        "o0[0][0] = 1;",
                        "if M > 2 { }",
                        "let = ;",
                        "parac_iterator;",
                    ])
                    .to_string()
                } else {
                    self.iterator(f)
                }
            }
        }
    }

    fn const_matrix(&mut self, f: &mut Fun) -> String {
        let nd = self.odd(5, &[2, 1, 2], &[3, 4]);
        let shape: Vec<usize> = (0..nd)
            .map(|_| {
                if self.weird_chance(4) {
                    self.pick(&[0, 65, 100])
                } else {
                    1 + self.n(5)
                }
            })
            .collect();
        let elem = self.pick(ELEMS);
        let float = elem == "f32";
        fn init(g: &mut G, shape: &[usize], float: bool) -> String {
            if shape.is_empty() {
                return if g.weird_chance(4) {
                    g.pick(&[
                        "1e40",
                        "-129",
                        "70000",
                        "sqrt(-1.0)",
                        "1.0/0.0",
                        "x",
                        "1 / 0",
                        "-(3)",
                    ])
                    .to_string()
                } else if float {
                    format!("{}.{}", g.n(10), g.n(10))
                } else {
                    g.n(100).to_string()
                };
            }
            let mut len = shape[0].min(8);
            if g.weird_chance(4) {
                len = g.n(10);
            }
            let items: Vec<String> = (0..len).map(|_| init(g, &shape[1..], float)).collect();
            format!("[{}]", items.join(", "))
        }
        let value = if self.chance(15) {
            let total: usize = shape.iter().product::<usize>().min(64);
            let items: Vec<String> = (0..total).map(|_| init(self, &[], float)).collect();
            format!("[{}]", items.join(", "))
        } else {
            init(self, &shape, float)
        };
        let n = f.fresh("K");
        let dims: String = shape.iter().map(|d| format!("[{d}]")).collect();
        f.mats.push(Mat {
            name: n.clone(),
            nd,
            kind: Kind::Const,
            shape: shape.clone(),
        });
        format!("const {n}: {elem}{dims} = {value};")
    }

    fn host_expr(&mut self, f: &Fun, depth: usize) -> String {
        if depth == 0 || self.n(3) == 0 {
            if self.chance(25) && !f.mats.is_empty() {
                let m = self.pick_mat(f, |m| m.kind != Kind::Const);
                let op = self.pick(&[
                    "parac_matrix_sum",
                    "parac_matrix_min",
                    "parac_matrix_max",
                    "parac_matrix_mean",
                ]);
                return format!("{op}({})", m.name);
            }
            if self.chance(10) {
                return self
                    .odd(10, &["0.5", "1.5", "2.0", "255.0"], FLOATS)
                    .to_string();
            }
            let mut leaves: Vec<String> = vec![self.int_lit(), "M".into(), "N".into()];
            leaves.extend(f.scalars.iter().cloned());
            leaves.extend(f.hosts.iter().cloned());
            let i = self.n(leaves.len());
            return leaves[i].clone();
        }
        match self.n(6) {
            0 | 5 => {
                let op = self.pick(BINOPS);
                format!(
                    "{} {op} {}",
                    self.host_expr(f, depth - 1),
                    self.host_expr(f, depth - 1)
                )
            }
            1 => format!("({})", self.host_expr(f, depth - 1)),
            2 => format!(
                "{} as {}",
                self.host_expr(f, depth - 1),
                self.odd(10, PLAIN_SCALARS, SCALARS)
            ),
            3 => format!("-{}", self.host_expr(f, depth - 1)),
            _ => {
                if self.weird_chance(20) {
                    // A matrix element on the host: an error.
                    let m = self.pick_mat(f, |_| true);
                    let idx: String = (0..m.nd).map(|_| "[0]").collect();
                    return format!("{}{idx}", m.name);
                }
                let fun = self.pick(&["min", "max", "abs", "sqrt", "exp", "clamp", "floor"]);
                let k = match fun {
                    "clamp" => 3,
                    "min" | "max" => 2,
                    _ => 1,
                };
                let args: Vec<String> = (0..k).map(|_| self.host_expr(f, depth - 1)).collect();
                format!("{fun}({})", args.join(", "))
            }
        }
    }

    fn host_let(&mut self, f: &mut Fun) -> String {
        if self.chance(20) {
            let (a, b) = (f.fresh("h"), f.fresh("h"));
            let s = format!(
                "let ({a}, {b}) = ({}, {});",
                self.host_expr(f, 2),
                self.host_expr(f, 2)
            );
            f.hosts.push(a);
            f.hosts.push(b);
            return s;
        }
        let n = f.fresh("h");
        let ty = if self.chance(40) {
            format!(": {}", self.odd(10, PLAIN_SCALARS, SCALARS))
        } else {
            String::new()
        };
        let s = format!("let {n}{ty} = {};", self.host_expr(f, 3));
        f.hosts.push(n);
        s
    }

    fn pick_mat(&mut self, f: &Fun, want: impl Fn(&Mat) -> bool) -> Mat {
        let ok: Vec<&Mat> = f.mats.iter().filter(|m| want(m)).collect();
        if ok.is_empty() {
            return f.mats[self.n(f.mats.len())].clone();
        }
        ok[self.n(ok.len())].clone()
    }

    /// Widths of a shorthand: `[*]` on a channel, 1 to 3 mostly, 0 to 20 sometimes.
    fn widths(&mut self, nd: usize) -> String {
        let mut k = nd;
        if self.weird_chance(4) {
            k = self.n(5);
        }
        let w: Vec<String> = (0..k)
            .map(|d| {
                if (nd == 3 && d == 0 && !self.chance(10)) || self.chance(15) {
                    "[*]".to_string()
                } else if self.weird_chance(3) {
                    format!("[{}]", self.pick(&["-1", "4294967296", "x", "1:2", "M"]))
                } else if self.weird_chance(30) {
                    format!("[{}]", self.n(21))
                } else {
                    format!("[{}]", 1 + self.n(3))
                }
            })
            .collect();
        if k > 0 && w.iter().all(|x| x == "[*]") && !self.weird_chance(10) {
            return w[..k - 1].concat() + "[1]";
        }
        w.concat()
    }

    fn shorthand(&mut self, f: &mut Fun) -> String {
        let m = self.pick_mat(f, |m| matches!(m.kind, Kind::In | Kind::Local));
        let mode = self.odd(
            3,
            &[
                "replicate",
                "constant",
                "clamp",
                "reflect",
                "reflect101",
                "wrap",
            ],
            &["mirror", "Replicate"],
        );
        let value = if mode == "constant" || self.weird_chance(3) {
            let v = self.odd(
                15,
                &["0", "255", "1", "M"],
                &["0.5", "-1", "9223372036854775807", "1e40", "s0", "a0[0][0]"],
            );
            format!(", {v}")
        } else {
            String::new()
        };
        let n = f.fresh("r");
        f.rules.push(n.clone());
        format!(
            "parac_border_rule {n} = {mode}({}{}{value});",
            m.name,
            self.widths(m.nd)
        )
    }

    fn sel(&mut self, planar: bool) -> String {
        if !planar || self.chance(30) {
            return "*".to_string();
        }
        let sign = self.pick(&["-", "+"]);
        if self.weird_chance(20) {
            format!("{sign}{}", self.n(21))
        } else {
            format!("{sign}{}", 1 + self.n(3))
        }
    }

    fn border_block(&mut self, f: &mut Fun) -> String {
        let m = self.pick_mat(f, |m| matches!(m.kind, Kind::In | Kind::Local));
        let mut stmts = Vec::new();
        for _ in 0..1 + self.n(6) {
            let mut k = m.nd;
            if self.weird_chance(4) {
                k = self.n(5);
            }
            let mut sels: Vec<String> = (0..k).map(|d| self.sel(!(m.nd == 3 && d == 0))).collect();
            if k > 0 && sels.iter().all(|s| s == "*") && !self.weird_chance(10) {
                let sign = self.pick(&["-", "+"]);
                sels[k - 1] = format!("{sign}1");
            }
            let mut targets = vec![format!(
                "{}{}",
                m.name,
                sels.iter().map(|s| format!("[{s}]")).collect::<String>()
            )];
            if self.chance(10) {
                let sels2: String = (0..m.nd)
                    .map(|d| format!("[{}]", self.sel(!(m.nd == 3 && d == 0))))
                    .collect();
                targets.push(format!("{}{sels2}", m.name));
            }
            // A value: constants, or interior elements of the same matrix (`*` where the
            // target has `*`), sometimes something illegal.
            let read: String = sels
                .iter()
                .enumerate()
                .map(|(d, s)| {
                    if s == "*" && !self.weird_chance(5) {
                        "[*]".to_string()
                    } else {
                        let sz = sym(d, m.nd);
                        let i = self.odd(
                            10,
                            &["0", "1", "2", "{s}-1", "{s}-2"],
                            &[
                                "-1",
                                "{s}",
                                "{s}+5",
                                "*",
                                "itx",
                                "0:3:1",
                                "-9223372036854775807",
                            ],
                        );
                        format!("[{}]", i.replace("{s}", sz))
                    }
                })
                .collect();
            let value = match self.n(4) {
                0 => self.int_lit(),
                1 => format!("{}{read}", m.name),
                2 => format!("{}{read} * 2 - {}{read}", m.name, m.name),
                _ => self
                    .host_expr(f, 2)
                    .replace("parac_matrix_", "parac_matrix_sum_of_"),
            };
            let value = if self.weird == 0 && value.contains("parac_matrix_sum_of_") {
                "0".to_string()
            } else {
                value.replace("parac_matrix_sum_of_", "parac_matrix_")
            };
            if self.weird == 0
                && stmts
                    .iter()
                    .any(|s: &String| targets.iter().any(|t| s.contains(t.as_str())))
            {
                continue;
            }
            stmts.push(format!("{} = {value};", targets.join(" = ")));
        }
        let n = f.fresh("r");
        f.rules.push(n.clone());
        format!("parac_border_rule {n} {{ {} }}", stmts.join(" "))
    }

    fn iterator(&mut self, f: &mut Fun) -> String {
        let nd = self.odd(8, &[2, 2, 1, 3], &[4, 0]);
        let name = self.pick(&["it", "it", "p", "it1"]);
        let mut vars = Vec::new();
        let mut slots = Vec::new();
        for d in 0..nd.max(1) {
            if nd == 0 || self.chance(5) {
                slots.push(String::new());
                vars.push(None);
                continue;
            }
            let var = if self.chance(25) {
                ["x", "y", "z", "w"][d].to_string()
            } else {
                format!("{name}{}", ["x", "y", "z", "w"][d])
            };
            let named = if var.starts_with(name) {
                String::new()
            } else {
                format!("{var} in ")
            };
            let s = sym(d, nd);
            let s = if s == "C" { "3" } else { s };
            let lo = self
                .odd(
                    10,
                    &["0", "0", "0", "1", "2"],
                    &[
                        "-1",
                        "-5",
                        "16",
                        "{s}",
                        "-2147483648",
                        "9223372036854775807",
                        "-9223372036854775807",
                        "{s}/2",
                    ],
                )
                .replace("{s}", s);
            let hi = self
                .odd(
                    12,
                    &[
                        "{s}",
                        "{s}",
                        "{s}",
                        "{s}-1",
                        "({s}+1)/2",
                        "{s}/4*4",
                        "{s}-2",
                    ],
                    &[
                        "0",
                        "1",
                        "{s}*{s}",
                        "2147483647",
                        "9223372036854775807",
                        "-{s}",
                        "{s}+3",
                        "{s}*{s}*{s}*{s}",
                        "{s}*64",
                        "4294967296",
                    ],
                )
                .replace("{s}", s);
            let step = self
                .odd(
                    12,
                    &["", ":1", ":1", ":2", ":4"],
                    &[
                        ":0",
                        ":-1",
                        ":3",
                        ":17",
                        ":2147483647",
                        ":{s}",
                        ":9223372036854775807",
                        ":1+1",
                        ":(0-1)",
                    ],
                )
                .replace("{s}", s);
            slots.push(format!("{named}{lo}:{hi}{step}"));
            vars.push(Some(var));
        }
        let rules = if !f.rules.is_empty() && self.chance(60) {
            let mut rs: Vec<String> = Vec::new();
            for _ in 0..1 + self.n(2) {
                let i = self.n(f.rules.len());
                if !rs.contains(&f.rules[i]) || self.weird_chance(5) {
                    rs.push(f.rules[i].clone());
                }
            }
            if self.weird_chance(3) {
                rs.push("nope".into());
            }
            format!(" parac_border_rule({})", rs.join(", "))
        } else {
            String::new()
        };
        let mut kx = Kx {
            vars,
            lets: Vec::new(),
            bordered: !rules.is_empty(),
        };
        let count = 1 + self.n(4);
        let body = self.kstmts(f, &mut kx, 0, count);
        format!(
            "parac_iterator {name}({}){rules} {{ {body} }}",
            slots.join("; ")
        )
    }

    fn kstmts(&mut self, f: &mut Fun, kx: &mut Kx, depth: usize, count: usize) -> String {
        let saved = kx.lets.len();
        let mut out = Vec::new();
        for _ in 0..count {
            out.push(self.kstmt(f, kx, depth));
        }
        kx.lets.truncate(saved);
        out.join(" ")
    }

    fn writable(m: &Mat) -> bool {
        matches!(m.kind, Kind::Out | Kind::Local)
    }

    fn kstmt(&mut self, f: &mut Fun, kx: &mut Kx, depth: usize) -> String {
        match self.n(9) {
            0 | 4 | 7 | 8 => {
                let targets = if self.chance(10) { 2 + self.n(2) } else { 1 };
                let ts: Vec<String> = (0..targets)
                    .map(|_| {
                        let m = self.pick_mat(f, Self::writable);
                        self.access(kx, &m, 10, true)
                    })
                    .collect();
                format!("{} = {};", ts.join(" = "), self.kexpr(f, kx, 3))
            }
            1 => {
                let m = self.pick_mat(f, Self::writable);
                let op = self.odd(10, &["+=", "-=", "*=", "/="], &["%=", "<<=", "|="]);
                format!(
                    "{} {op} {};",
                    self.access(kx, &m, 10, true),
                    self.kexpr(f, kx, 2)
                )
            }
            2 => {
                if self.chance(20) {
                    let (a, b) = (f.fresh("l"), f.fresh("l"));
                    let s = format!(
                        "let ({a}, {b}) = ({}, {});",
                        self.kexpr(f, kx, 2),
                        self.kexpr(f, kx, 2)
                    );
                    kx.lets.push(a);
                    kx.lets.push(b);
                    return s;
                }
                let n = f.fresh("l");
                let ty = if self.chance(25) {
                    format!(": {}", self.odd(10, PLAIN_SCALARS, SCALARS))
                } else {
                    String::new()
                };
                let s = format!("let {n}{ty} = {};", self.kexpr(f, kx, 3));
                kx.lets.push(n);
                s
            }
            3 if depth < 4 => {
                let cond = self.kexpr(f, kx, 2);
                let count = 1 + self.n(2);
                let then = self.kstmts(f, kx, depth + 1, count);
                let els = match self.n(3) {
                    0 => String::new(),
                    1 => {
                        let count = 1 + self.n(2);
                        format!(" else {{ {} }}", self.kstmts(f, kx, depth + 1, count))
                    }
                    _ => {
                        let cond = self.kexpr(f, kx, 2);
                        let then = self.kstmts(f, kx, depth + 1, 1);
                        format!(" else if {cond} {{ {then} }}")
                    }
                };
                format!("if {cond} {{ {then} }}{els}")
            }
            _ => {
                if self.weird_chance(10) {
                    self.pick(&[
                        "parac_iterator inner(0:M:1) { }",
                        "parac_border_rule q = replicate(a0[1][1]);",
                        "return 1;",
                        "a0[itx][ity] = 1;",
                        "let x: u8[M] = 0;",
                    ])
                    .to_string()
                } else {
                    let m = self.pick_mat(f, Self::writable);
                    format!(
                        "{} = {};",
                        self.access(kx, &m, 30, true),
                        self.kexpr(f, kx, 2)
                    )
                }
            }
        }
    }

    /// An index for dimension `d` of an `nd`-dimensional matrix: the iterator's variable of the
    /// matching slot (aligned on the last dimension), plus an offset, mostly.
    fn index(&mut self, kx: &Kx, d: usize, nd: usize, write: bool) -> String {
        let slots = kx.vars.len();
        let slot = (slots + d).checked_sub(nd);
        let v = match slot.and_then(|s| kx.var(s)) {
            Some(v) if !self.weird_chance(5) => v.to_string(),
            _ => {
                if !self.weird_chance(20) {
                    // A channel, or a slot that is not iterated: a constant.
                    return self.pick(&["0", "1", "2"]).to_string();
                }
                self.pick(&["itx", "ity", "itz", "x", "M", "q"]).to_string()
            }
        };
        if write && !self.weird_chance(15) {
            return v;
        }
        let k = self.small();
        let s = match sym(d, nd) {
            "C" | "B" => "3",
            s => s,
        };
        let inside: &[&str] = &[
            "{v}",
            "{v}",
            "{s}-1-{v}",
            "min({v}+1, {s}-1)",
            "clamp({v}-{k}, 0, {s}-1)",
            "{v}/{k}",
            "max({v}-{k}, 0)",
        ];
        let outside: &[&str] = &["{v}", "{v}+{k}", "{v}-{k}", "{v}+{k}", "{v}-{k}", "{v}/{k}"];
        self.odd(
            15,
            if kx.bordered { outside } else { inside },
            &[
                "{k}",
                "{v}*{k}",
                "{v}%{k}",
                "-{v}",
                "{v}*{v}",
                "{v}+{s}",
                "{v}-9223372036854775807-1",
                "{v}+9223372036854775807",
                "{v}<<{k}",
                "{v}>>{k}",
                "{v} as u8",
                "{v} == 0",
                "({v}+{k})*2",
                "2147483647",
                "-2147483648",
                "{v}*2147483647*2147483647",
            ],
        )
        .replace("{v}", &v)
        .replace("{k}", k)
        .replace("{s}", s)
    }

    /// `m[..][..]`: points, windows (with `pct` percent chance per planar dimension), rarely
    /// `*` or the wrong number of subscripts.
    fn access(&mut self, kx: &Kx, m: &Mat, pct: usize, write: bool) -> String {
        if m.kind == Kind::Const && !m.shape.is_empty() && !self.weird_chance(20) {
            let idx: String = m
                .shape
                .iter()
                .map(|len| format!("[{}]", self.n((*len).max(1))))
                .collect();
            return format!("{}{idx}", m.name);
        }
        let mut nd = m.nd;
        if self.weird_chance(3) {
            nd = self.n(5);
        }
        let mut s = m.name.clone();
        for d in 0..nd {
            let channel = m.nd == 3 && d == 0;
            // Windows where a block is expected (`pct` >= 50), else only in odd programs.
            let window = if pct >= 50 {
                self.chance(pct)
            } else {
                self.weird_chance(pct)
            };
            if self.weird_chance(1) {
                s.push_str("[*]");
            } else if (!channel || self.weird_chance(5)) && window {
                let start = self.index(kx, d, m.nd, false);
                let len = self.odd(
                    10,
                    &["3", "1", "2", "5", "4"],
                    &["0", "-1", "64", "65", "M", "1000000", "1+2"],
                );
                let stride = self.odd(
                    10,
                    &["", ":1", ":1", ":2"],
                    &[":0", ":-1", ":3", ":4294967296", ":M"],
                );
                s.push_str(&format!("[{start}:{len}{stride}]"));
            } else {
                let i = self.index(kx, d, m.nd, write);
                s.push_str(&format!("[{i}]"));
            }
        }
        s
    }

    fn kexpr(&mut self, f: &Fun, kx: &Kx, depth: usize) -> String {
        let readable = |m: &Mat| m.kind != Kind::Out;
        if depth == 0 || self.n(3) == 0 {
            return match self.n(8) {
                0..=2 => {
                    let m = self.pick_mat(f, readable);
                    self.access(kx, &m, 5, false)
                }
                3 => self.int_lit(),
                4 => self
                    .odd(10, &["0.5", "1.5", "2.0", "255.0"], FLOATS)
                    .to_string(),
                5 => {
                    let s = self.n(kx.vars.len());
                    kx.var(s).unwrap_or("0").to_string()
                }
                6 if !kx.lets.is_empty() => {
                    let i = self.n(kx.lets.len());
                    kx.lets[i].clone()
                }
                _ => {
                    let mut names: Vec<String> = vec!["M".into(), "N".into(), "true".into()];
                    names.extend(f.scalars.iter().cloned());
                    names.extend(f.hosts.iter().cloned());
                    if self.weird_chance(10) {
                        names.extend(f.mats.iter().map(|m| m.name.clone()));
                    }
                    let i = self.n(names.len());
                    names[i].clone()
                }
            };
        }
        let d = depth - 1;
        let mut node = self.n(12);
        if self.weird == 0 && matches!(node, 7 | 8) {
            // A block where a scalar is expected: only in odd programs.
            node = 0;
        }
        match node {
            0 | 9 | 10 => {
                let op = self.pick(ARITH);
                format!("{} {op} {}", self.kexpr(f, kx, d), self.kexpr(f, kx, d))
            }
            1 => format!("({})", self.kexpr(f, kx, d)),
            2 => format!(
                "{}{}",
                self.odd(20, &["-", "-", "-", "!"], &["+", "- -", "!!"]),
                self.kexpr(f, kx, d)
            ),
            3 => format!(
                "{} as {}",
                self.kexpr(f, kx, d),
                self.odd(10, PLAIN_SCALARS, SCALARS)
            ),
            4 => {
                let fun = self.odd(
                    5,
                    &[
                        "min", "max", "clamp", "abs", "sqrt", "exp", "floor", "ceil", "round",
                    ],
                    &["nope", "transe"],
                );
                let mut k = match fun {
                    "clamp" => 3,
                    "min" | "max" => 2,
                    _ => 1,
                };
                if self.weird_chance(5) {
                    k = self.n(4);
                }
                let args: Vec<String> = (0..k).map(|_| self.kexpr(f, kx, d)).collect();
                format!("{fun}({})", args.join(", "))
            }
            5 => {
                let op = self.pick(&[
                    "parac_matrix_sum",
                    "parac_matrix_min",
                    "parac_matrix_max",
                    "parac_matrix_mean",
                ]);
                let m = self.pick_mat(f, readable);
                let arg = if self.weird_chance(5) {
                    m.name.clone()
                } else {
                    self.access(kx, &m, 90, false)
                };
                format!("{op}({arg})")
            }
            6 => {
                let m = self.pick_mat(f, |m| m.kind == Kind::In);
                let consts: Vec<Mat> = f
                    .mats
                    .iter()
                    .filter(|m| m.kind == Kind::Const && m.nd <= 2)
                    .cloned()
                    .collect();
                if consts.is_empty() && self.weird == 0 {
                    return format!("parac_matrix_sum({})", self.access(kx, &m, 90, false));
                }
                if consts.is_empty() || self.weird_chance(10) {
                    let c = self.pick_mat(f, |m| m.kind == Kind::Const);
                    return format!(
                        "parac_convolution({}, {})",
                        c.name,
                        self.access(kx, &m, 90, false)
                    );
                }
                let c = consts[self.n(consts.len())].clone();
                // The filter's block shape: [r][c], or [1][n] for a vector.
                let (r, cols) = match c.shape.as_slice() {
                    [n] => (1, *n),
                    [r, c] => (*r, *c),
                    _ => (1, 1),
                };
                let slots = kx.vars.len();
                let var = |d: usize| -> String {
                    (slots + d)
                        .checked_sub(2)
                        .and_then(|s| kx.var(s))
                        .unwrap_or("0")
                        .to_string()
                };
                let win = |v: String, len: usize| {
                    if len == 1 {
                        format!("[{v}]")
                    } else {
                        format!("[{v}:{len}:1]")
                    }
                };
                let w = match m.nd {
                    1 if r == 1 => format!("{}{}", m.name, win(var(1), cols)),
                    1 => format!("{}[{}:{cols}:1]", m.name, var(1)),
                    2 => format!("{}{}{}", m.name, win(var(0), r), win(var(1), cols)),
                    _ => format!("{}[0]{}{}", m.name, win(var(0), r), win(var(1), cols)),
                };
                format!("parac_convolution({}, {w})", c.name)
            }
            7 => {
                let m = self.pick_mat(f, readable);
                format!("transe({})", self.access(kx, &m, 90, false))
            }
            8 => {
                let a = self.pick_mat(f, readable);
                let b = self.pick_mat(f, readable);
                let op = self.pick(&["*", ".*", "+", "-", "/"]);
                format!(
                    "{} {op} {}",
                    self.access(kx, &a, 90, false),
                    self.access(kx, &b, 90, false)
                )
            }
            _ => {
                let op = self.pick(&[
                    "<", "==", "!=", ">=", "&&", "||", "&", "|", "^", "<<", ">>", "%",
                ]);
                format!("{} {op} {}", self.kexpr(f, kx, d), self.kexpr(f, kx, d))
            }
        }
    }
}

/// Arithmetic operators (the common case in kernels).
const ARITH: &[&str] = &["+", "-", "*", "/", "+", "-", "*", ".*"];

const BINOPS: &[&str] = &[
    "+", "-", "*", "/", "%", ".*", "<<", ">>", "&", "|", "^", "&&", "||", "==", "!=", "<", "<=",
    ">", ">=",
];

fn structured(data: &[u32]) -> String {
    let mut g = G {
        data,
        pos: 0,
        weird: 0,
    };
    g.weird = g.pick(&[0, 0, 25, 100, 200]);
    g.program()
}

#[test]
fn structured_programs() {
    static STATS: Stats = Stats::new("structured_programs");
    let strategy = prop::collection::vec(any::<u32>(), 0..600);
    run_strategy(&STATS, 3, strategy, |data| structured(data));
    // The generator must produce programs that compile, or it explores only the error paths.
    let clean = STATS.clean.load(Ordering::Relaxed);
    let total = STATS.inputs.load(Ordering::Relaxed);
    eprintln!("[parac fuzz] structured_programs: {clean} of {total} compiled without diagnostics");
}

// ---------------------------------------------------------------------------------------------
// 4. Deep nesting and long chains
// ---------------------------------------------------------------------------------------------

const DEEP_KINDS: usize = 16;

/// A program with one deep or long construct of the given kind and size.
fn deep_program(kind: usize, n: usize, salt: u64) -> String {
    let wrap = |body: &str| {
        format!(
            "fn f(src: &u8[M][N], out: &mut i32[M][N], s: i32) {{\n    parac_iterator it(0:M:1; 0:N:1) {{\n        {body}\n    }}\n}}\n"
        )
    };
    // A deterministic operator sequence.
    let mut x = salt | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    match kind {
        // Parentheses around an element.
        0 => wrap(&format!(
            "out[itx][ity] = {}src[itx][ity]{};",
            "(".repeat(n),
            ")".repeat(n)
        )),
        // A long chain of binary operators (every precedence level).
        1 => {
            let mut e = String::from("src[itx][ity]");
            for _ in 1..n {
                let op = BINOPS[(next() % BINOPS.len() as u64) as usize];
                // Comparisons do not chain: keep them rare by mapping them to `+`.
                let op = if ["==", "!=", "<", "<=", ">", ">="].contains(&op) {
                    "+"
                } else {
                    op
                };
                e.push_str(&format!(
                    " {op} {}",
                    ["1", "s", "itx", "src[itx][ity]"][(next() % 4) as usize]
                ));
            }
            wrap(&format!("out[itx][ity] = {e};"))
        }
        // `+` only: a left-deep tree of n terms.
        2 => wrap(&format!(
            "out[itx][ity] = {};",
            vec!["src[itx][ity]"; n.max(1)].join(" + ")
        )),
        // Unary chains.
        3 => wrap(&format!("out[itx][ity] = {}s;", "- ".repeat(n))),
        4 => wrap(&format!("out[itx][ity] = ({}s) as i32;", "!".repeat(n))),
        // `as` chains.
        5 => wrap(&format!("out[itx][ity] = s{};", " as i32".repeat(n))),
        // Nested `if`s.
        6 => wrap(&format!(
            "{}out[itx][ity] = 1;{}",
            "if s > 0 { ".repeat(n),
            " }".repeat(n)
        )),
        // An `else if` chain.
        7 => wrap(&format!(
            "if s == 0 {{ out[itx][ity] = 0; }}{} else {{ out[itx][ity] = 1; }}",
            (1..n)
                .map(|i| format!(" else if s == {i} {{ out[itx][ity] = {i}; }}"))
                .collect::<String>()
        )),
        // Nested constant arrays.
        8 => format!(
            "fn f(out: &mut f32[M][N]) {{ const K: f32[1][1] = {}1.0{}; parac_iterator it(0:M:1; 0:N:1) {{ out[itx][ity] = K[0][0]; }} }}",
            "[".repeat(n),
            "]".repeat(n)
        ),
        // Nested calls.
        9 => wrap(&format!(
            "out[itx][ity] = {}s{};",
            "abs(".repeat(n),
            ")".repeat(n)
        )),
        10 => wrap(&format!(
            "out[itx][ity] = {}s{};",
            "min(1, ".repeat(n),
            ")".repeat(n)
        )),
        // Nested subscripts.
        11 => wrap(&format!(
            "out[itx][ity] = {}0{};",
            "src[0][".repeat(n),
            "]".repeat(n)
        )),
        // Parentheses in a dimension and in iterator bounds, and in a host `let`.
        12 => format!(
            "fn f(src: &u8[M][N], out: &mut u8[{}M{}][N]) {{ let h = {}M{}; parac_iterator it(0:{}M{}:1; 0:N:1) {{ out[itx][ity] = src[itx][ity]; }} }}",
            "(".repeat(n),
            ")".repeat(n),
            "(".repeat(n),
            ")".repeat(n),
            "(".repeat(n),
            ")".repeat(n)
        ),
        // Parentheses each holding a chain: a tree as deep as the product.
        13 => {
            let depth = (n / 10).max(1);
            let chain = ["s"; 10].join(" + ");
            let mut e = chain.clone();
            for _ in 0..depth {
                e = format!("({e}) + {chain}");
            }
            format!(
                "{}{}",
                wrap(&format!("out[itx][ity] = {e};")),
                format!("fn g(src: &u8[M][N]) -> i64 {{ let h = {e}; return h; }}")
                    .replace('s', "M")
            )
        }
        // Many statements, many functions, many border rules.
        14 => {
            let stmts: String = (0..n)
                .map(|i| format!("let v{i} = src[itx][ity] + {i};\n"))
                .collect();
            let rules: String = (0..n.min(100))
                .map(|i| format!("parac_border_rule r{i} = replicate(src[1][1]);\n"))
                .collect();
            let funcs: String = (0..n.min(100))
                .map(|i| format!("fn g{i}(a: &u8[M][N], b: &mut u8[M][N]) {{ parac_iterator it(0:M:1; 0:N:1) {{ b[itx][ity] = a[itx][ity]; }} }}\n"))
                .collect();
            format!(
                "fn f(src: &u8[M][N], out: &mut i32[M][N]) {{\n{rules}parac_iterator it(0:M:1; 0:N:1) {{\n{stmts}out[itx][ity] = 0;\n}}\n}}\n{funcs}"
            )
        }
        // Deeply nested token groups that are not expressions.
        _ => {
            let (o, c) = [("(", ")"), ("[", "]"), ("{", "}")][(salt % 3) as usize];
            wrap(&format!(
                "out[itx][ity] = 1; {}{}",
                o.repeat(n),
                c.repeat(n)
            ))
        }
    }
}

#[test]
fn deep_nesting() {
    static STATS: Stats = Stats::new("deep_nesting");
    let strategy = (
        0..DEEP_KINDS,
        prop_oneof![1usize..=500, 500usize..=2000],
        any::<u64>(),
    );
    run_strategy(&STATS, 4, strategy, |(kind, n, salt)| {
        // Nesting up to 500 levels; chains (kinds 1, 2, 5, 7, 14) up to 2000 terms.
        let n = if matches!(kind, 1 | 2 | 5 | 7 | 13 | 14) {
            *n
        } else {
            (*n).min(500)
        };
        deep_program(*kind, n, *salt)
    });
}

/// Every kind at fixed sizes, up to far past any sensible limit (each on a 2 MiB stack, in the
/// child process); prints a table of the outcomes. Nesting of 1000 levels and more must be
/// refused with a diagnostic.
#[test]
fn deep_nesting_sweep() {
    static STATS: Stats = Stats::new("deep_nesting_sweep");
    let sizes = [1usize, 10, 100, 129, 500, 1000, 2000, 20_000];
    let mut failures = Vec::new();
    let mut table = String::from("kind \\ size");
    for n in sizes {
        table.push_str(&format!(" {n:>6}"));
    }
    for (kind, name) in DEEP_NAMES.iter().enumerate().take(DEEP_KINDS) {
        table.push_str(&format!("\n{:>2} {:<36}", kind, name));
        let mut failed = false;
        for &n in &sizes {
            if failed {
                // Larger sizes of this kind fail the same way (and may take long to do so).
                table.push_str("      -");
                continue;
            }
            if n > max_size(kind) {
                table.push_str("      .");
                continue;
            }
            let src = deep_program(kind, n, n as u64 * 31 + kind as u64);
            let t = Instant::now();
            let cell = match compile_guarded(&STATS, &src) {
                Err(f) => {
                    failed = true;
                    failures.push(format!(
                        "kind {kind} ({}), size {n}: {}",
                        DEEP_NAMES[kind], f.key
                    ));
                    match f.key.as_str() {
                        "stack overflow" => "OVERFL".to_string(),
                        "hang (time limit)" => "HANG".to_string(),
                        "too slow" => "SLOW".to_string(),
                        _ => "PANIC".to_string(),
                    }
                }
                Ok(true) if n >= 1000 && NESTING_KINDS.contains(&kind) => {
                    failures.push(format!(
                        "kind {kind} ({}), size {n}: nesting this deep was accepted without a diagnostic",
                        DEEP_NAMES[kind]
                    ));
                    "ACCEPT".to_string()
                }
                // ok / refused with a diagnostic, and the time in ms
                Ok(clean) => format!(
                    "{}{}",
                    if clean { "ok" } else { "d" },
                    t.elapsed().as_millis()
                ),
            };
            table.push_str(&format!(" {cell:>6}"));
        }
    }
    eprintln!(
        "[parac fuzz] deep_nesting_sweep (okT: compiled, dT: refused with a diagnostic, in T ms; .: not tried):\n{table}"
    );
    STATS.finish();
    assert!(
        failures.is_empty(),
        "deep_nesting_sweep: {} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The largest size the sweep tries for a kind: chains and lists are accepted (or refused
/// with one diagnostic per element), so their time grows with their length; they stop at
/// 2000 (the longest chains `deep_nesting` generates), nesting goes on to 20000.
fn max_size(kind: usize) -> usize {
    match kind {
        1 | 2 | 5 | 7 | 13 | 14 => 2000,
        _ => usize::MAX,
    }
}

/// The kinds of `deep_program` that nest (as opposed to chains and lists).
const NESTING_KINDS: &[usize] = &[0, 3, 4, 8, 9, 10, 11, 12];

const DEEP_NAMES: [&str; DEEP_KINDS] = [
    "parentheses",
    "mixed operator chain",
    "`+` chain",
    "unary `-` chain",
    "`!` chain",
    "`as` chain",
    "nested `if`",
    "`else if` chain",
    "nested constant array",
    "nested `abs(..)`",
    "nested `min(1, ..)`",
    "nested subscripts",
    "parentheses in dims and bounds",
    "parenthesized chains",
    "many statements, rules and functions",
    "nested token groups",
];
