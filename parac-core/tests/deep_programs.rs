//! Deep programs compile on an ordinary thread: `Pipeline::compile` and the embedded functions
//! compile on the caller's thread, whose stack may be 2 MiB (a test's, a spawned thread's).
//! Regression: the random program of seed 0x6b0a101663fe3 (`tests/in/deep_lanes.parac`)
//! overflowed 2 MiB in `lir::pass::select_loads`' recursion over its expressions.

use parac_core::codegen;

const STACK: usize = 2 * 1024 * 1024;

fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(f)
        .expect("a thread")
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));
}

#[test]
fn deep_lanes_compile_on_two_mebibytes() {
    on_small_stack(|| {
        let src = include_str!("in/deep_lanes.parac");
        let c = parac_core::compile_str(src);
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
        let f = &c.module.functions[0];
        codegen::opencl::program(f);
        for rid in 0..f.regions.len() {
            for p in codegen::launch::plans(f, rid) {
                let _ = p.source(f);
            }
        }
        for opts in [
            parac_core::lir::Options::default(),
            parac_core::lir::Options::gpu(),
        ] {
            parac_core::lir::lower(f, &opts);
        }
        codegen::expand(&c);
    });
}
