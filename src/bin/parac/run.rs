//! `parac run`, and the arguments of a call from the command line (shared with `parac tune`).

use std::path::PathBuf;

use parac::pipeline::{Arg, Data, Tensor, Val};
use parac_core::ir::{Function, MatrixKind, ParamRef, Scalar};

use crate::files::{compile, load, save};
use crate::{Failure, Outcome};

/// The options `parac run` and `parac tune` share.
#[derive(clap::Args)]
pub struct CallArgs {
    /// The program: a `.parac` file (`tune` also takes a Rust file's `parac! { ... }` blocks).
    pub file: PathBuf,
    /// The function to run (needed where the program has several).
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,
    /// A matrix parameter from a file (.png or .npy); repeatable.
    #[arg(long = "in", value_name = "NAME=PATH", value_parser = name_path)]
    pub inputs: Vec<(String, PathBuf)>,
    /// A scalar parameter, or a size that only an output binds; repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE", value_parser = name_value)]
    pub sets: Vec<(String, String)>,
    /// The device: cpu, opencl, opencl:<name> or auto [default: PARAC_DEVICE, else auto].
    #[arg(long, value_name = "SPEC")]
    pub device: Option<String>,
}

/// `parac run`'s arguments.
#[derive(clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub call: CallArgs,
    /// Where the outputs are written (created if needed).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// `NAME=VALUE` (a non-empty name).
pub fn name_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((n, v)) if !n.is_empty() => Ok((n.to_string(), v.to_string())),
        _ => Err("expected NAME=VALUE".to_string()),
    }
}

/// `NAME=PATH`.
fn name_path(text: &str) -> Result<(String, PathBuf), String> {
    name_value(text)
        .map(|(n, p)| (n, PathBuf::from(p)))
        .map_err(|_| "expected NAME=PATH".to_string())
}

/// The options of one call: `run`'s, or `tune`'s (where `sets` holds `--size` too).
pub struct RunOptions {
    pub call: CallArgs,
    /// `tune`: inputs not given are random, scalars not given are 1, names a function does not
    /// have are left to the others.
    pub tune: bool,
}

impl RunOptions {
    /// A usage error of this subcommand.
    pub fn usage(&self, message: String) -> Failure {
        Failure::Usage(if self.tune { "tune" } else { "run" }, message)
    }
}

/// `parac run ...`.
pub fn run(args: RunArgs) -> Outcome {
    let out_dir = args.out;
    let o = RunOptions {
        call: args.call,
        tune: false,
    };
    let c = &o.call;
    let p = compile(&c.file)?;
    let file = c.file.display();
    let names = || {
        let names: Vec<&str> = p.functions().iter().map(|f| &*f.name).collect();
        names.join(", ")
    };
    let f = match &c.function {
        Some(name) => p.function(name).ok_or_else(|| {
            o.usage(format!(
                "{file}: no function `{name}` (it has: {})",
                names()
            ))
        })?,
        None => match p.functions() {
            [f] => f,
            fs => {
                return Err(o.usage(format!(
                    "{file} has {} functions ({}): pick one with --function NAME",
                    fs.len(),
                    names()
                )));
            }
        },
    };
    let mut call = arguments(f, &o)?;
    let rt = crate::runtime(c.device.as_deref())?;
    eprintln!("running `{}` on {}", f.name, rt.describe());
    let ret = p.run(&rt, &f.name, &mut call)?;
    std::fs::create_dir_all(&out_dir)
        .map_err(|e| format!("cannot create {}: {e}", out_dir.display()))?;
    for (param, a) in f.params.iter().zip(&call) {
        let (ParamRef::Matrix(m), Arg::Matrix(t)) = (param, a) else {
            continue;
        };
        let mat = &f.matrices[*m];
        if mat.kind != MatrixKind::Output {
            continue;
        }
        for p in save(&out_dir, &mat.name, t)? {
            eprintln!("wrote {}", p.display());
        }
    }
    if let Some(v) = ret {
        outln!("{v}")?;
    }
    Ok(())
}

/// A scalar value of type `t` from the command line.
fn parse_scalar(text: &str, t: Scalar) -> Option<Val> {
    let text = text.trim();
    let v = match t {
        Scalar::F32 => Val::F32(text.parse().ok()?),
        Scalar::Bool => match text {
            "true" | "1" => Val::Bool(true),
            "false" | "0" => Val::Bool(false),
            _ => return None,
        },
        _ => Val::Int(text.parse().ok()?),
    };
    v.fits(t).then_some(v)
}

/// The arguments of `f` from the options: inputs read, outputs zero-filled at the shape their
/// declaration gives with the sizes bound by the inputs (or `--set`), scalars parsed.
/// Under `tune`, names of other functions' parameters and sizes are theirs (`tune` checks that
/// some function has each).
pub fn arguments(f: &Function, o: &RunOptions) -> Result<Vec<Arg>, Failure> {
    if !o.tune {
        check_names(f, &o.call).map_err(|e| o.usage(e))?;
    }
    arguments_checked(f, o)
}

/// Every `--in` and `--set` name is one of `f`'s.
fn check_names(f: &Function, c: &CallArgs) -> Result<(), String> {
    for (n, _) in &c.inputs {
        let known = f.params.iter().any(|p| match p {
            ParamRef::Matrix(m) => f.matrices[*m].name == *n,
            ParamRef::Scalar(_) => false,
        });
        if !known {
            return Err(format!("`{}` has no matrix parameter `{n}`", f.name));
        }
    }
    for (n, _) in &c.sets {
        let known = f.scalars.iter().any(|s| s.name == *n) || f.sizes.iter().any(|s| s.name == *n);
        if !known {
            return Err(format!(
                "`{}` has no scalar parameter or size `{n}`",
                f.name
            ));
        }
    }
    Ok(())
}

/// Whether `f` has a matrix parameter, scalar parameter or size called `n`.
pub fn knows(f: &Function, n: &str) -> bool {
    f.scalars.iter().any(|s| s.name == n)
        || f.sizes.iter().any(|s| s.name == n)
        || f.params.iter().any(|p| match p {
            ParamRef::Matrix(m) => f.matrices[*m].name == n,
            ParamRef::Scalar(_) => false,
        })
}

/// `arguments` once the names are checked. A file that cannot be read is an error of the work;
/// a missing or malformed value, a usage error.
fn arguments_checked(f: &Function, o: &RunOptions) -> Result<Vec<Arg>, Failure> {
    let c = &o.call;
    let mut tensors: Vec<Option<Tensor>> = vec![None; f.matrices.len()];
    for p in &f.params {
        let ParamRef::Matrix(m) = p else { continue };
        let mat = &f.matrices[*m];
        match c.inputs.iter().find(|(n, _)| *n == mat.name) {
            Some((_, path)) => {
                tensors[*m] = Some(load(path, &mat.name, mat.elem, mat.dims.len())?);
            }
            None if mat.kind == MatrixKind::Input && !o.tune => {
                return Err(o.usage(format!(
                    "input `{}` needs `--in {}=PATH`",
                    mat.name, mat.name
                )));
            }
            None => {}
        }
    }
    // Sizes: from the matrices read, else from `--set`.
    let mut sizes = Vec::new();
    for s in &f.sizes {
        let (m, d) = s.bound_by;
        let v = match (&tensors[m], c.sets.iter().find(|(n, _)| *n == s.name)) {
            (Some(t), _) => t.shape.get(d).copied().unwrap_or(0) as i64,
            (None, Some((_, v))) => v
                .trim()
                .parse::<i64>()
                .map_err(|_| o.usage(format!("size `{}`: `{v}` is not an integer", s.name)))?,
            (None, None) if o.tune => {
                return Err(o.usage(format!(
                    "`{}`: size `{}` needs `--size {}=VALUE` (or `--in {}=PATH`)",
                    f.name, s.name, s.name, f.matrices[m].name
                )));
            }
            (None, None) => {
                return Err(o.usage(format!(
                    "size `{}` is bound by output `{}`: give it with `--set {}=VALUE` or the \
                     output with `--in {}=PATH`",
                    s.name, f.matrices[m].name, s.name, f.matrices[m].name
                )));
            }
        };
        sizes.push(v);
    }
    let dims = parac_core::interp::matrix_dims(f, &sizes).map_err(|e| o.usage(e.to_string()))?;
    let mut args = Vec::new();
    for p in &f.params {
        match p {
            ParamRef::Matrix(m) => {
                let mat = &f.matrices[*m];
                let t = match tensors[*m].take() {
                    Some(t) => t,
                    None => {
                        let shape: Vec<usize> =
                            dims[*m].iter().map(|d| (*d).max(0) as usize).collect();
                        let mut t = Tensor::zeros(mat.elem, shape)
                            .ok_or_else(|| format!("`{}`: no matrix of {}", mat.name, mat.elem))?;
                        if mat.kind == MatrixKind::Input {
                            randomize(&mut t.data, *m as u64);
                        }
                        t
                    }
                };
                args.push(Arg::Matrix(t));
            }
            ParamRef::Scalar(s) => {
                let sc = &f.scalars[*s];
                let text = match c.sets.iter().find(|(n, _)| *n == sc.name) {
                    Some((_, text)) => text.as_str(),
                    None if o.tune => "1",
                    None => {
                        return Err(o.usage(format!(
                            "scalar `{}: {}` needs `--set {}=VALUE`",
                            sc.name, sc.ty, sc.name
                        )));
                    }
                };
                let v = parse_scalar(text, sc.ty).ok_or_else(|| {
                    o.usage(format!(
                        "`--set {}={text}`: not a value of {}",
                        sc.name, sc.ty
                    ))
                })?;
                args.push(Arg::Scalar(v));
            }
        }
    }
    Ok(args)
}

/// Fills `data` with seeded pseudo-random values: integers over their type's range, `f32` in
/// [0, 1).
fn randomize(data: &mut Data, seed: u64) {
    let mut x = 0x9e37_79b9_7f4a_7c15_u64 ^ seed.wrapping_mul(0xd1b5_4a32_d192_ed03);
    let mut next = move || {
        // xorshift64*
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    match data {
        Data::U8(v) => v.iter_mut().for_each(|e| *e = (next() >> 56) as u8),
        Data::I8(v) => v.iter_mut().for_each(|e| *e = (next() >> 56) as i8),
        Data::U16(v) => v.iter_mut().for_each(|e| *e = (next() >> 48) as u16),
        Data::I16(v) => v.iter_mut().for_each(|e| *e = (next() >> 48) as i16),
        Data::U32(v) => v.iter_mut().for_each(|e| *e = (next() >> 32) as u32),
        Data::I32(v) => v.iter_mut().for_each(|e| *e = (next() >> 32) as i32),
        Data::I64(v) => v.iter_mut().for_each(|e| *e = next() as i64),
        Data::U64(v) => v.iter_mut().for_each(|e| *e = next()),
        Data::F32(v) => v
            .iter_mut()
            .for_each(|e| *e = (next() >> 40) as f32 / (1u64 << 24) as f32),
    }
}
