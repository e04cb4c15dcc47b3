//! Random chains of stages for fusion on OpenCL (`lir::pass::fuse::gpu`): their sources, for
//! the LIR's evaluator (`tests/lir.rs`) and the device (`tests/fusion.rs`).

/// A small deterministic generator (xorshift).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A random three-stage chain (see `tests/lir.rs`'s `random_three_stage_chains_fuse_on_opencl_as_unfused`),
/// function `c{k}`, and whether its last stage reads the first intermediate too.
pub fn three_stage_chain(rng: &mut Rng, k: usize) -> (String, bool) {
    let mut pick = |n: u64| (rng.next() % n) as i64;
    let modes = ["clamp", "reflect", "reflect101", "constant", "wrap"];
    let rule = |name: &str, m: &str, target: String| match m {
        "constant" => format!("parac_border_rule {name} = constant({target}, 5);"),
        m => format!("parac_border_rule {name} = {m}({target});"),
    };
    // The second stage: `u` at offsets through a rule over rows, columns or both.
    let w = 1 + pick(3);
    let umode = modes[pick(5) as usize];
    let utarget = [
        format!("u[{w}][{w}]"),
        format!("u[{w}][*]"),
        format!("u[*][{w}]"),
        "u[3][3]".to_string(),
    ][pick(4) as usize]
        .clone();
    let (urule, uuses) = match pick(5) {
        0 => (String::new(), ""),
        _ => (rule("ru", umode, utarget), "parac_border_rule(ru)"),
    };
    let ureads: Vec<String> = (0..1 + pick(3))
        .map(|_| {
            let (a, b) = match uuses {
                "" => (0, 0),
                _ => (pick(7) - 3, pick(7) - 3),
            };
            format!("{} * u[x + {a}][y + {b}]", pick(5) - 2)
        })
        .collect();
    // The last stage: over the whole space with a rule over `t`, or a smaller one.
    let (dm, dn) = match pick(2) {
        0 => (0, 0),
        _ => (pick(3), pick(3)),
    };
    let whole = dm == 0 && dn == 0;
    let (trule, tuses) = match whole {
        true => (
            rule("rt", modes[pick(4) as usize], "t[3][3]".to_string()),
            "parac_border_rule(rt)",
        ),
        false => (String::new(), ""),
    };
    let mut creads: Vec<String> = (0..1 + pick(3))
        .map(|_| {
            let (a, b) = match whole {
                true => (pick(7) - 3, pick(7) - 3),
                false => (pick(dm as u64 + 1), pick(dn as u64 + 1)),
            };
            format!("{} * t[x + {a}][y + {b}]", pick(5) - 2)
        })
        .collect();
    // The last stage reads `u` too (unsharp's shape), or not (three stages in a row).
    let reads_u = pick(3) != 0;
    if reads_u {
        creads.push(format!("{} * u[x][y]", 1 + pick(3)));
    }
    if reads_u && !whole {
        creads.push(format!(
            "u[x + {}][y + {}]",
            pick(dm as u64 + 1),
            pick(dn as u64 + 1)
        ));
    }
    let less = |d: i64| match d {
        0 => String::new(),
        d => format!(" - {d}"),
    };
    let (dm, dn) = (less(dm), less(dn));
    let src = format!(
        "fn c{k}(src: &i16[M][N], out: &mut i32[M{dm}][N{dn}]) {{
            let u: i32[M][N];
            let t: i32[M][N];
            parac_iterator q(x in 0:M:1; y in 0:N:1) {{
                u[x][y] = src[x][y] * {} + 2 * x - y;
            }}
            {urule}
            parac_iterator p(x in 0:M:1; y in 0:N:1) {uuses} {{
                t[x][y] = {} + y;
            }}
            {trule}
            parac_iterator c(x in 0:M{dm}:1; y in 0:N{dn}:1) {tuses} {{
                out[x][y] = {} + x;
            }}
        }}",
        1 + pick(4),
        ureads.join(" + "),
        creads.join(" + "),
    );
    (src, reads_u)
}

/// A random two-stage chain (see `tests/lir.rs`'s `random_chains_fuse_on_opencl_as_unfused`), function
/// `g{k}`.
pub fn two_stage_chain(rng: &mut Rng, k: usize) -> String {
    let mut pick = |n: u64| (rng.next() % n) as i64;
    // A third each: a 2-D shorthand of width 3 over the consumer's whole space, reads
    // proven inside a smaller space, anything (mostly not fusable).
    let kind = pick(3);
    let (dm, dn) = match kind {
        0 => (0, 0),
        _ => (pick(4), pick(4)),
    };
    let reads: Vec<String> = (0..1 + pick(3))
        .map(|_| {
            let (a, b) = match kind {
                1 => (pick(dm as u64 + 1), pick(dn as u64 + 1)),
                _ => (pick(7) - 3, pick(7) - 3),
            };
            format!("{} * t[x + {a}][y + {b}]", pick(5) - 2)
        })
        .collect();
    let mode = ["clamp", "reflect", "reflect101", "constant", "wrap"][pick(5) as usize];
    let w = 1 + pick(3);
    let target = match (kind, pick(4)) {
        (0, _) => "t[3][3]".to_string(),
        (1, _) => String::new(),
        (_, 0) => format!("t[{w}][{w}]"),
        (_, 1) => format!("t[{w}][*]"),
        (_, 2) => format!("t[*][{w}]"),
        _ => String::new(),
    };
    let rule = match (target.is_empty(), mode) {
        (true, _) => String::new(),
        (false, "constant") => format!("parac_border_rule r = constant({target}, 5);"),
        (false, m) => format!("parac_border_rule r = {m}({target});"),
    };
    let uses = if rule.is_empty() {
        ""
    } else {
        "parac_border_rule(r)"
    };
    let less = |d: i64| {
        if d == 0 {
            String::new()
        } else {
            format!(" - {d}")
        }
    };
    let (dm, dn) = (less(dm), less(dn));
    // Half of the producers read `src` at offsets through a border rule of their own (the
    // work-item tiles' loops partitioned around them).
    let pmode = ["clamp", "reflect101", "constant", "reflect"][pick(4) as usize];
    let (prule, puses, preads) = match pick(2) {
        0 => (String::new(), "", "src[x][y]".to_string()),
        _ => {
            let rule = match pmode {
                "constant" => "parac_border_rule s = constant(src[3][3], -7);".to_string(),
                m => format!("parac_border_rule s = {m}(src[3][3]);"),
            };
            let taps: Vec<String> = (0..1 + pick(3))
                .map(|_| format!("src[x + {}][y + {}]", pick(7) - 3, pick(7) - 3))
                .collect();
            (rule, "parac_border_rule(s)", taps.join(" + "))
        }
    };
    let src = format!(
        "fn g{k}(src: &i16[M][N], out: &mut i32[M{dm}][N{dn}]) {{
            let t: i32[M][N];
            {prule}
            parac_iterator p(x in 0:M:1; y in 0:N:1) {puses} {{
                t[x][y] = ({preads}) * {} + 3 * x - y;
            }}
            {rule}
            parac_iterator c(x in 0:M{dm}:1; y in 0:N{dn}:1) {uses} {{
                out[x][y] = {} + x;
            }}
        }}",
        1 + pick(4),
        reads.join(" + ")
    );
    src
}
