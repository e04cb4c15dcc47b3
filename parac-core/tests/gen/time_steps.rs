//! Random iterated stencils (time steps): one function with `parac_repeat` and `parac_swap`
//! made from a seed: element type, radius, taps and weights, border mode, a source term, one
//! or two regions per step, the grid an output or a local, a `parac_schedule` or none; and
//! (`program3`) on 3-D grids, their planes read clamped.
//! `parac-core/tests/random_programs.rs` runs them tiled and not against the interpreter.

use super::Rng;
use parac_core::interp::{self, Arg, Data, Tensor, Val};
use parac_core::ir::{Function, MatrixKind, ParamRef, Scalar};

impl Rng {
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u32) as usize]
    }
}

/// An index `v` offset by `o`: `x`, `x+2`, `x-1`.
fn at(v: &str, o: i64) -> String {
    match o {
        0 => v.to_string(),
        o if o > 0 => format!("{v}+{o}"),
        o => format!("{v}-{}", -o),
    }
}

/// One random program's source.
pub fn program(rng: &mut Rng) -> String {
    let ty = *rng.pick(&["i32", "i16", "u8", "f32"]);
    let float = ty == "f32";
    let r = 1 + rng.below(3) as i64;
    let mode = rng.below(6);
    let border = match mode {
        0 => format!("replicate(g[{r}][{r}])"),
        1 => format!("reflect(g[{r}][{r}])"),
        2 => format!("reflect101(g[{r}][{r}])"),
        3 => format!("constant(g[{r}][{r}], {})", if float { "1.5" } else { "3" }),
        4 => format!("wrap(g[{r}][{r}])"),
        _ => format!("wrap(g[*][{r}])"),
    };
    // Taps: the centre and up to four others within the radius.
    let mut taps = vec![(0i64, 0i64, 1 + rng.below(3) as i64)];
    for _ in 0..1 + rng.below(4) {
        // `wrap(g[*][r])` borders the columns alone: the rows read are the row itself.
        let a = match mode {
            5 => 0,
            _ => rng.below(2 * r as u32 + 1) as i64 - r,
        };
        let b = rng.below(2 * r as u32 + 1) as i64 - r;
        taps.push((a, b, rng.below(5) as i64 - 1));
    }
    let term = |(a, b, c): &(i64, i64, i64), g: &str| {
        if float {
            format!("{c}.0 * {g}[{}][{}]", at("x", *a), at("y", *b))
        } else {
            format!("{c} * ({g}[{}][{}] as i32)", at("x", *a), at("y", *b))
        }
    };
    let sum = |g: &str| {
        taps.iter()
            .map(|t| term(t, g))
            .collect::<Vec<_>>()
            .join(" + ")
    };
    let source = rng.below(2) == 0;
    // One region and its swap; or a pointwise second region writing the grid (no swap); or
    // a second grid `v` (from `s`, read by the first region as its source term) updated after
    // the first, reading its new values (`h`) at row offsets, each grid swapped with its
    // partner (FDTD-like).
    let shape = rng.below(4);
    let (two, coupled) = (shape == 0, shape == 1);
    let source = source || coupled;
    let term_of = if coupled { "v" } else { "s" };
    let value = |g: &str| {
        let s = sum(g);
        let s = if source {
            if float {
                format!("{s} + {term_of}[x][y]")
            } else {
                format!("{s} + {term_of}[x][y] as i32")
            }
        } else {
            s
        };
        if float {
            format!("({s}) * 0.25")
        } else {
            format!("(({s}) >> 2) as {ty}")
        }
    };
    let schedule = match rng.below(4) {
        0 => {
            let (band, rows) = (1 + rng.below(4), 1 + rng.below(5));
            // Split or overlapped, from the values drawn (the random stream unchanged).
            let split = (band + rows) % 2;
            format!(" parac_schedule(band = {band}, rows = {rows}, split = {split})")
        }
        _ => String::new(),
    };
    let local = rng.below(3) == 0;
    // The grid `g` (the output, or a local copied out at the end) and its partner `h`.
    let mut p = format!(
        "fn iterated(src: &{ty}[M][N], s: &{ty}[M][N], out: &mut {ty}[M][N], steps: i32) {{\n"
    );
    let g = if local { "g" } else { "out" };
    if local {
        p += &format!("    let g: {ty}[M][N];\n");
    }
    p += &format!("    let h: {ty}[M][N];\n");
    if coupled {
        p += &format!("    let v: {ty}[M][N];\n    let vn: {ty}[M][N];\n");
        p += "    parac_border_rule bh = replicate(h[1][1]);\n";
        p += "    parac_iterator initv(x in 0:M:1; y in 0:N:1) { v[x][y] = s[x][y]; }\n";
    }
    let border = border.replace("g[", &format!("{g}["));
    p += &format!("    parac_border_rule b = {border};\n");
    p += &format!("    parac_iterator init(x in 0:M:1; y in 0:N:1) {{ {g}[x][y] = src[x][y]; }}\n");
    p += &format!("    parac_repeat(steps){schedule} {{\n");
    p += &format!(
        "        parac_iterator st(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {{ h[x][y] = {}; }}\n",
        value(g)
    );
    if coupled {
        let a = rng.below(3) as i64 - 1;
        let at = match a {
            0 => "x".to_string(),
            1 => "x+1".to_string(),
            _ => "x-1".to_string(),
        };
        let mix = if float {
            format!("(v[x][y] + h[{at}][y]) * 0.5")
        } else {
            format!("((v[x][y] as i32 + h[{at}][y] as i32) >> 1) as {ty}")
        };
        p += &format!(
            "        parac_iterator st2(x in 0:M:1; y in 0:N:1) parac_border_rule(bh) {{ vn[x][y] = {mix}; }}\n"
        );
        p += &format!("        parac_swap({g}, h);\n        parac_swap(v, vn);\n");
    } else if two {
        // A second region: the step's new grid through a pointwise stage.
        p += &format!(
            "        parac_iterator st2(x in 0:M:1; y in 0:N:1) {{ {g}[x][y] = h[x][y] {} s[x][y]; }}\n",
            if float { "-" } else { "^" }
        );
    } else {
        p += &format!("        parac_swap({g}, h);\n");
    }
    p += "    }\n";
    if local {
        p += "    parac_iterator fin(x in 0:M:1; y in 0:N:1) { out[x][y] = g[x][y]; }\n";
    }
    p += "}\n";
    p
}

/// One random program on 3-D grids (`P` planes of `M` x `N`): a 3-D grid's planes take no
/// border rule, so the stencil's planes are read clamped to the grid (`max(z-a, 0)`,
/// `min(z+a, P-1)` or `clamp(z+a, 0, P-1)`), its rows and columns through a border rule;
/// one region and its swap, a schedule or none.
pub fn program3(rng: &mut Rng) -> String {
    let ty = *rng.pick(&["i32", "u8", "f32"]);
    let float = ty == "f32";
    let r = 1 + rng.below(2) as i64;
    let border = match rng.below(3) {
        0 => format!("replicate(g[*][{r}][{r}])"),
        1 => format!("reflect101(g[*][{r}][{r}])"),
        _ => format!(
            "constant(g[*][{r}][{r}], {})",
            if float { "1.5" } else { "3" }
        ),
    };
    let mut terms = Vec::new();
    for k in 0..2 + rng.below(4) {
        let (c, a, b) = (
            rng.below(5) as i64 - 1,
            rng.below(2 * r as u32 + 1) as i64 - r,
            rng.below(2 * r as u32 + 1) as i64 - r,
        );
        let dz = if k == 0 {
            0
        } else {
            rng.below(2 * r as u32 + 1) as i64 - r
        };
        let plane = match (dz, rng.below(2)) {
            (0, _) => "z".to_string(),
            (d, 0) if d < 0 => format!("max(z-{}, 0)", -d),
            (d, 0) => format!("min(z+{d}, P-1)"),
            (d, _) => format!("clamp({}, 0, P-1)", at("z", d)),
        };
        let read = format!("g[{plane}][{}][{}]", at("x", a), at("y", b));
        terms.push(match float {
            true => format!("{c}.0 * {read}"),
            false => format!("{c} * ({read} as i32)"),
        });
    }
    let sum = terms.join(" + ");
    let value = match float {
        true => format!("({sum}) * 0.25"),
        false => format!("(({sum}) >> 2) as {ty}"),
    };
    let schedule = match rng.below(3) {
        0 => {
            let (band, rows) = (1 + rng.below(4), 1 + rng.below(5));
            format!(
                " parac_schedule(band = {band}, rows = {rows}, split = {})",
                (band + rows) % 2
            )
        }
        _ => String::new(),
    };
    let border = border.replace("g[", "out[");
    let value = value.replace("g[", "out[");
    format!(
        "fn iterated3(src: &{ty}[P][M][N], out: &mut {ty}[P][M][N], steps: i32) {{
    let h: {ty}[P][M][N];
    parac_border_rule b = {border};
    parac_iterator init(z in 0:P:1; x in 0:M:1; y in 0:N:1) {{ out[z][x][y] = src[z][x][y]; }}
    parac_repeat(steps){schedule} {{
        parac_iterator st(z in 0:P:1; x in 0:M:1; y in 0:N:1) parac_border_rule(b) {{ h[z][x][y] = {value}; }}
        parac_swap(out, h);
    }}
}}
"
    )
}

pub fn args(f: &Function, sizes: &[i64], steps: i32, rng: &mut Rng) -> Option<Vec<Arg>> {
    let dims = interp::matrix_dims(f, sizes).ok()?;
    let mut out = Vec::new();
    for p in &f.params {
        out.push(match p {
            ParamRef::Matrix(m) => {
                let mat = &f.matrices[*m];
                let shape: Vec<usize> = dims[*m].iter().map(|d| *d as usize).collect();
                let n: usize = shape.iter().product();
                let mut data = Data::zeros(mat.elem, n)?;
                if mat.kind == MatrixKind::Input {
                    for i in 0..n {
                        let v = rng.below(200) as i128 - 60;
                        let v = match mat.elem {
                            Scalar::F32 => Val::F32(v as f32 / 4.0),
                            _ => Val::Int(v),
                        };
                        data.set(i, interp::cast(v, mat.elem));
                    }
                }
                Arg::Matrix(Tensor::new(shape, data)?)
            }
            ParamRef::Scalar(_) => Arg::Scalar(Val::Int(steps as i128)),
        });
    }
    Some(out)
}
