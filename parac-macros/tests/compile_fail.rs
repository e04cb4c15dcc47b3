#[test]
fn compile_fail() {
    let run = std::panic::catch_unwind(|| {
        let t = trybuild::TestCases::new();
        t.compile_fail("tests/ui/*.rs");
    });
    if let Err(panic) = run {
        // trybuild builds every case in one `cargo check` and reads each case's errors from its
        // JSON messages; when that build fails outside the cases (a full disk, a killed or
        // crashed rustc), no case has an error and every one reads "Expected test case to fail
        // to compile, but it succeeded". Say what the disk had, for that case.
        let df = std::process::Command::new("df")
            .args(["-h", env!("CARGO_TARGET_TMPDIR")])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_else(|e| format!("df: {e}"));
        eprintln!(
            "compile_fail: if every case 'succeeded', the build itself failed; the target \
             directory's disk:\n{df}"
        );
        std::panic::resume_unwind(panic);
    }
}
