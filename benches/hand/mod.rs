//! Hand-optimized OpenCL versions of the four pipelines of APPS.md, the baseline parac is
//! measured against: the kernels are the `.cl` files beside this one (one file per stage, plus
//! the fused kernels an expert would run the pipeline with), this is their host harness on
//! `opencl3`. Shared by the benches (`benches/apps.rs`) and the tests (`tests/hand_opencl.rs`).
//!
//! Device images have their rows padded (`pitch` elements, at least 64 more than the columns,
//! rounded to 64) and a tail after the last row, so that kernels may load and store whole
//! vectors past the last column: those lanes read and write padding only.

// Each user (bench, test) needs a different subset.
#![allow(dead_code)]

use std::ffi::c_void;
use std::ptr;
use std::time::{Duration, Instant};

use opencl3::command_queue::{CL_QUEUE_PROFILING_ENABLE, CommandQueue};
use opencl3::context::Context;
use opencl3::device::{CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU, Device};
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE, ClMem};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::{CL_BLOCKING, cl_mem};

use parac::{Element, Matrix};

/// Errors are messages: the harness only reports them.
pub type Result<T> = std::result::Result<T, String>;

pub mod call;

/// The kernel sources of each pipeline, in program order (a later file may use an earlier
/// file's helpers), with the stage each file implements.
pub mod sources {
    /// `(file, source)` of the laplacian program.
    pub const LAPLACIAN: &[(&str, &str)] = &[
        ("laplacian_h.cl", include_str!("laplacian_h.cl")),
        ("laplacian_down.cl", include_str!("laplacian_down.cl")),
        ("laplacian_up.cl", include_str!("laplacian_up.cl")),
    ];
    /// `(file, source)` of the sharpen program.
    pub const SHARPEN: &[(&str, &str)] = &[
        ("sharpen_down.cl", include_str!("sharpen_down.cl")),
        ("sharpen_up.cl", include_str!("sharpen_up.cl")),
        ("sharpen_sobel.cl", include_str!("sharpen_sobel.cl")),
        ("sharpen_mean.cl", include_str!("sharpen_mean.cl")),
        ("sharpen_final.cl", include_str!("sharpen_final.cl")),
        ("sharpen_fused.cl", include_str!("sharpen_fused.cl")),
    ];
    /// `(file, source)` of the blur program.
    pub const BLUR: &[(&str, &str)] = &[
        ("blur_bx.cl", include_str!("blur_bx.cl")),
        ("blur_out.cl", include_str!("blur_out.cl")),
        ("blur_fused.cl", include_str!("blur_fused.cl")),
    ];
    /// `(file, source)` of the unsharp program.
    pub const UNSHARP: &[(&str, &str)] = &[
        ("unsharp_gray.cl", include_str!("unsharp_gray.cl")),
        ("unsharp_vertical.cl", include_str!("unsharp_vertical.cl")),
        (
            "unsharp_horizontal.cl",
            include_str!("unsharp_horizontal.cl"),
        ),
    ];
}

/// Work-group sizes, tuned on the 2-core PoCL CPU device (`benches/apps.rs` prints the ones in
/// use): `[columns, rows]` of work-items, each work-item making 16 columns.
const WG_ROWS: [usize; 2] = [8, 8];
const WG_BLOCKS: [usize; 2] = [8, 4];

/// One OpenCL device with a context and an in-order queue with profiling.
pub struct Cl {
    pub context: Context,
    pub queue: CommandQueue,
    pub device: Device,
    /// `<platform> / <device>`.
    pub description: String,
}

impl Cl {
    /// The device parac would pick for `PARAC_DEVICE` unset, `opencl` or `opencl:<text>` (the
    /// first GPU of any platform, else the first device; with `<text>`, the first device whose
    /// platform or device name or vendor contains it, case-insensitively).
    pub fn new() -> Result<Cl> {
        let filter = std::env::var("PARAC_DEVICE")
            .ok()
            .and_then(|s| {
                let s = s.trim().to_ascii_lowercase();
                s.strip_prefix("opencl:").map(|t| t.trim().to_string())
            })
            .filter(|t| !t.is_empty());
        let platforms = get_platforms().map_err(|e| format!("no OpenCL platform ({e})"))?;
        let mut found = Vec::new();
        for p in &platforms {
            let pname = p.name().unwrap_or_default();
            let pvendor = p.vendor().unwrap_or_default();
            for id in p.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default() {
                let d = Device::new(id);
                let name = d.name().unwrap_or_default();
                let vendor = d.vendor().unwrap_or_default();
                let gpu = d.dev_type().unwrap_or(0) & CL_DEVICE_TYPE_GPU != 0;
                let hay = format!("{pname} {pvendor} {name} {vendor}").to_lowercase();
                if filter.as_ref().is_none_or(|t| hay.contains(t.as_str())) {
                    found.push((gpu, format!("{} / {}", pname.trim(), name.trim()), d));
                }
            }
        }
        found.sort_by_key(|(gpu, _, _)| !gpu);
        let (_, description, device) = found
            .into_iter()
            .next()
            .ok_or_else(|| "no OpenCL device".to_string())?;
        let context = Context::from_device(&device).map_err(|e| format!("clCreateContext: {e}"))?;
        #[allow(deprecated)]
        let queue = CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE)
            .map_err(|e| format!("clCreateCommandQueue: {e}"))?;
        Ok(Cl {
            context,
            queue,
            device,
            description,
        })
    }

    /// Builds a program from its files (concatenated); returns it with the build time.
    pub fn build(&self, files: &[(&str, &str)]) -> Result<(Program, Duration)> {
        let source: String = files.iter().map(|(_, s)| *s).collect::<Vec<_>>().join("\n");
        let t = Instant::now();
        let program = Program::create_and_build_from_source(&self.context, &source, "")
            .map_err(|log| format!("build failed: {log}"))?;
        Ok((program, t.elapsed()))
    }

    /// Waits for everything enqueued.
    pub fn finish(&self) -> Result<()> {
        self.queue.finish().map_err(|e| format!("clFinish: {e}"))
    }
}

/// The row pitch (in elements) of a device image of `cols` columns.
pub fn pitch_for(cols: usize) -> usize {
    cols.div_ceil(64) * 64 + 64
}

/// A device image: `planes` x `rows` x `cols` elements, rows `pitch` elements apart.
pub struct Image<T> {
    buf: Buffer<T>,
    pub planes: usize,
    pub rows: usize,
    pub cols: usize,
    pub pitch: usize,
}

impl<T: Element> Image<T> {
    /// An uninitialised image.
    pub fn new(cl: &Cl, planes: usize, rows: usize, cols: usize) -> Result<Image<T>> {
        let pitch = pitch_for(cols);
        let count = planes * rows * pitch + 64;
        // SAFETY: no host pointer; the size is the count of `T`s.
        let buf = unsafe {
            Buffer::<T>::create(&cl.context, CL_MEM_READ_WRITE, count, ptr::null_mut())
                .map_err(|e| format!("clCreateBuffer ({count} elements): {e}"))?
        };
        Ok(Image {
            buf,
            planes,
            rows,
            cols,
            pitch,
        })
    }

    /// The raw handle, for kernel arguments.
    pub fn mem(&self) -> cl_mem {
        self.buf.get()
    }

    /// The pitch as a kernel argument.
    pub fn pitch_arg(&self) -> i32 {
        self.pitch as i32
    }

    /// The distance between planes, as a kernel argument.
    pub fn plane_arg(&self) -> i32 {
        (self.pitch * self.rows) as i32
    }

    /// `[rows][cols]` or `[planes][rows][cols]`.
    fn shape(&self) -> Vec<usize> {
        if self.planes == 1 {
            vec![self.rows, self.cols]
        } else {
            vec![self.planes, self.rows, self.cols]
        }
    }

    fn rect(&self) -> ([usize; 3], usize, usize, usize, usize) {
        let e = size_of::<T>();
        (
            [self.cols * e, self.rows, self.planes],
            self.pitch * e,
            self.pitch * self.rows * e,
            self.cols * e,
            self.cols * self.rows * e,
        )
    }

    /// Copies `m` (of this image's shape) in; blocking.
    pub fn write(&mut self, cl: &Cl, m: &Matrix<T>) -> Result<()> {
        if m.shape() != self.shape() {
            return Err(format!(
                "write: shape {:?}, image {:?}",
                m.shape(),
                self.shape()
            ));
        }
        let (region, bp, bs, hp, hs) = self.rect();
        let origin = [0usize; 3];
        // SAFETY: the region lies inside both the buffer and the host slice; blocking.
        unsafe {
            cl.queue
                .enqueue_write_buffer_rect(
                    &mut self.buf,
                    CL_BLOCKING,
                    origin.as_ptr(),
                    origin.as_ptr(),
                    region.as_ptr(),
                    bp,
                    bs,
                    hp,
                    hs,
                    m.as_slice().as_ptr() as *mut c_void,
                    &[],
                )
                .map_err(|e| format!("clEnqueueWriteBufferRect: {e}"))?;
        }
        Ok(())
    }

    /// Copies the image out; blocking (after everything enqueued before it).
    pub fn read(&self, cl: &Cl) -> Result<Matrix<T>> {
        let mut m = Matrix::<T>::zeros(self.shape());
        self.read_into(cl, &mut m)?;
        Ok(m)
    }

    /// Copies the image into `m` (of this image's shape); blocking.
    pub fn read_into(&self, cl: &Cl, m: &mut Matrix<T>) -> Result<()> {
        if m.shape() != self.shape() {
            return Err(format!(
                "read: shape {:?}, image {:?}",
                m.shape(),
                self.shape()
            ));
        }
        let (region, bp, bs, hp, hs) = self.rect();
        let origin = [0usize; 3];
        // SAFETY: as in `write`.
        unsafe {
            cl.queue
                .enqueue_read_buffer_rect(
                    &self.buf,
                    CL_BLOCKING,
                    origin.as_ptr(),
                    origin.as_ptr(),
                    region.as_ptr(),
                    bp,
                    bs,
                    hp,
                    hs,
                    m.as_mut_slice().as_mut_ptr() as *mut c_void,
                    &[],
                )
                .map_err(|e| format!("clEnqueueReadBufferRect: {e}"))?;
        }
        Ok(())
    }
}

/// A kernel argument.
#[derive(Clone, Copy)]
pub enum Arg {
    Mem(cl_mem),
    I32(i32),
    F32(f32),
}

/// A kernel with its arguments set and its NDRange.
pub struct Launch {
    kernel: Kernel,
    global: [usize; 2],
    local: [usize; 2],
}

impl Launch {
    /// `work` work-items (columns, rows), rounded up to whole work-groups of `local`.
    pub fn new(
        program: &Program,
        name: &str,
        args: &[Arg],
        work: [usize; 2],
        local: [usize; 2],
    ) -> Result<Launch> {
        let kernel = Kernel::create(program, name).map_err(|e| format!("kernel {name}: {e}"))?;
        for (i, a) in args.iter().enumerate() {
            // SAFETY: each argument has the kernel's parameter type (checked by the driver's
            // size check and by the tests).
            let r = unsafe {
                match a {
                    Arg::Mem(m) => kernel.set_arg(i as u32, m),
                    Arg::I32(v) => kernel.set_arg(i as u32, v),
                    Arg::F32(v) => kernel.set_arg(i as u32, v),
                }
            };
            r.map_err(|e| format!("kernel {name}, argument {i}: {e}"))?;
        }
        let global = [
            work[0].max(1).div_ceil(local[0]) * local[0],
            work[1].max(1).div_ceil(local[1]) * local[1],
        ];
        Ok(Launch {
            kernel,
            global,
            local,
        })
    }

    fn enqueue(&self, cl: &Cl) -> Result<Event> {
        // SAFETY: the arguments were set at creation and the buffers outlive the launch.
        unsafe {
            cl.queue
                .enqueue_nd_range_kernel(
                    self.kernel.get(),
                    2,
                    ptr::null(),
                    self.global.as_ptr(),
                    self.local.as_ptr(),
                    &[],
                )
                .map_err(|e| format!("clEnqueueNDRangeKernel: {e}"))
        }
    }
}

/// One stage: its name and its launches.
pub struct Stage {
    pub name: &'static str,
    launches: Vec<Launch>,
}

/// The launches of a pipeline: per stage, and (where an expert would fuse) the fused sequence
/// the pipeline runs with.
pub struct Hand {
    pub stages: Vec<Stage>,
    fused: Option<Vec<Launch>>,
}

/// The device time of an event (profiling start to end).
fn event_time(e: &Event) -> Result<Duration> {
    let s = e
        .profiling_command_start()
        .map_err(|e| format!("profiling: {e}"))?;
    let t = e
        .profiling_command_end()
        .map_err(|e| format!("profiling: {e}"))?;
    Ok(Duration::from_nanos(t.saturating_sub(s)))
}

impl Hand {
    /// Whether the pipeline runs fused kernels rather than its stage kernels.
    pub fn is_fused(&self) -> bool {
        self.fused.is_some()
    }

    /// Enqueues the whole pipeline (fused if it has a fused form, else stage by stage) and
    /// waits.
    pub fn run(&self, cl: &Cl) -> Result<()> {
        match &self.fused {
            Some(f) => {
                for l in f {
                    l.enqueue(cl)?;
                }
            }
            None => return self.run_stages(cl),
        }
        cl.finish()
    }

    /// Enqueues every stage kernel in order and waits.
    pub fn run_stages(&self, cl: &Cl) -> Result<()> {
        for s in &self.stages {
            for l in &s.launches {
                l.enqueue(cl)?;
            }
        }
        cl.finish()
    }

    /// Runs stage `i` alone (its inputs must be in place: run the pipeline's stages once
    /// first) and returns its device time, the sum of its kernels' profiled times.
    pub fn run_stage(&self, cl: &Cl, i: usize) -> Result<Duration> {
        let events = self.stages[i]
            .launches
            .iter()
            .map(|l| l.enqueue(cl))
            .collect::<Result<Vec<_>>>()?;
        cl.finish()?;
        events.iter().map(event_time).sum()
    }
}

/// A work-group size from the environment (`<cols>x<rows>`), else `default`.
fn wg_env(var: &str, default: [usize; 2]) -> [usize; 2] {
    std::env::var(var)
        .ok()
        .and_then(|v| {
            let (a, b) = v.split_once('x')?;
            Some([a.trim().parse().ok()?, b.trim().parse().ok()?])
        })
        .filter(|[a, b]| *a > 0 && *b > 0)
        .unwrap_or(default)
}

/// The work-group of kernels whose work-items make one row of 16 outputs
/// (`PARAC_HAND_WG_ROWS` overrides it, for tuning).
pub fn wg_rows() -> [usize; 2] {
    wg_env("PARAC_HAND_WG_ROWS", WG_ROWS)
}

/// The work-group of kernels whose work-items make a block of rows
/// (`PARAC_HAND_WG_BLOCKS` overrides it, for tuning).
pub fn wg_blocks() -> [usize; 2] {
    wg_env("PARAC_HAND_WG_BLOCKS", WG_BLOCKS)
}

// ---- laplacian ---------------------------------------------------------------------------------

/// laplacian on one image size: `src` in, `lap` and `down` out; `he` = the even columns of `h`.
pub struct Laplacian {
    pub hand: Hand,
    pub src: Image<u8>,
    pub he: Image<u8>,
    pub down: Image<u8>,
    pub lap: Image<i16>,
}

impl Laplacian {
    /// Stage names, in order.
    pub const STAGES: [&'static str; 3] = ["h", "down", "up_lap"];

    pub fn new(cl: &Cl, program: &Program, m: usize, n: usize) -> Result<Laplacian> {
        if m < 4 || n < 4 {
            return Err(format!("laplacian needs M, N >= 4, got {m}x{n}"));
        }
        let (md, nd) = (m.div_ceil(2), n.div_ceil(2));
        let src = Image::<u8>::new(cl, 1, m, n)?;
        let he = Image::<u8>::new(cl, 1, m, nd)?;
        let down = Image::<u8>::new(cl, 1, md, nd)?;
        let lap = Image::<i16>::new(cl, 1, m, n)?;
        let (mi, ni) = (Arg::I32(m as i32), Arg::I32(n as i32));
        let h = Launch::new(
            program,
            "lap_h",
            &[
                Arg::Mem(src.mem()),
                Arg::I32(src.pitch_arg()),
                Arg::Mem(he.mem()),
                Arg::I32(he.pitch_arg()),
                mi,
                ni,
            ],
            [nd.div_ceil(16), m],
            wg_rows(),
        )?;
        let dn = Launch::new(
            program,
            "lap_down",
            &[
                Arg::Mem(he.mem()),
                Arg::I32(he.pitch_arg()),
                Arg::Mem(down.mem()),
                Arg::I32(down.pitch_arg()),
                mi,
                ni,
            ],
            [nd.div_ceil(16), md],
            wg_rows(),
        )?;
        let up = Launch::new(
            program,
            "lap_up",
            &[
                Arg::Mem(src.mem()),
                Arg::I32(src.pitch_arg()),
                Arg::Mem(down.mem()),
                Arg::I32(down.pitch_arg()),
                Arg::Mem(lap.mem()),
                Arg::I32(lap.pitch_arg()),
                mi,
                ni,
            ],
            [n.div_ceil(16), md],
            wg_rows(),
        )?;
        let stages = vec![
            Stage {
                name: Self::STAGES[0],
                launches: vec![h],
            },
            Stage {
                name: Self::STAGES[1],
                launches: vec![dn],
            },
            Stage {
                name: Self::STAGES[2],
                launches: vec![up],
            },
        ];
        Ok(Laplacian {
            hand: Hand {
                stages,
                fused: None,
            },
            src,
            he,
            down,
            lap,
        })
    }

    /// `src` in, run, `(lap, down)` out.
    pub fn call(&mut self, cl: &Cl, src: &Matrix<u8>) -> Result<(Matrix<i16>, Matrix<u8>)> {
        self.src.write(cl, src)?;
        self.hand.run(cl)?;
        Ok((self.lap.read(cl)?, self.down.read(cl)?))
    }
}

// ---- sharpen -----------------------------------------------------------------------------------

/// sharpen on one image size.
pub struct Sharpen {
    pub hand: Hand,
    pub src: Image<u8>,
    pub down: Image<u8>,
    pub up: Image<u8>,
    pub edge: Image<u8>,
    pub out: Image<u8>,
    partial: Buffer<u64>,
    pub mean: Buffer<i32>,
}

impl Sharpen {
    pub const STAGES: [&'static str; 5] = ["down", "up", "edge", "mean", "final"];

    pub fn new(cl: &Cl, program: &Program, m: usize, n: usize) -> Result<Sharpen> {
        if !m.is_multiple_of(4) || !n.is_multiple_of(4) || m < 8 || n < 8 {
            return Err(format!("sharpen needs multiples of 4 >= 8, got {m}x{n}"));
        }
        let (md, nd) = (m / 4, n / 4);
        let src = Image::<u8>::new(cl, 1, m, n)?;
        let down = Image::<u8>::new(cl, 1, md, nd)?;
        let up = Image::<u8>::new(cl, 1, m, n)?;
        let edge = Image::<u8>::new(cl, 1, m, n)?;
        let out = Image::<u8>::new(cl, 1, m, n)?;
        // Row bands of the unfused sum: about 4 per work-group and... at least 8 rows.
        let rows_per_group = 8usize;
        let groups_unfused = m.div_ceil(rows_per_group);
        let blocks = [n.div_ceil(16), m.div_ceil(4)];
        let edge_wg = [16usize, 4usize];
        let groups_fused = blocks[0].div_ceil(edge_wg[0]) * blocks[1].div_ceil(edge_wg[1]);
        let groups_max = groups_unfused.max(groups_fused);
        // SAFETY: no host pointer.
        let (partial, mean) = unsafe {
            (
                Buffer::<u64>::create(&cl.context, CL_MEM_READ_WRITE, groups_max, ptr::null_mut())
                    .map_err(|e| format!("clCreateBuffer: {e}"))?,
                Buffer::<i32>::create(&cl.context, CL_MEM_READ_WRITE, 1, ptr::null_mut())
                    .map_err(|e| format!("clCreateBuffer: {e}"))?,
            )
        };
        let (mi, ni) = (Arg::I32(m as i32), Arg::I32(n as i32));
        let img = |i: &Image<u8>| [Arg::Mem(i.mem()), Arg::I32(i.pitch_arg())];
        let cat = |parts: &[&[Arg]]| parts.concat();
        let l_down = || {
            Launch::new(
                program,
                "sh_down",
                &cat(&[&img(&src), &img(&down), &[mi, ni]]),
                [nd.div_ceil(16), md],
                wg_rows(),
            )
        };
        let l_up = Launch::new(
            program,
            "sh_up",
            &cat(&[&img(&down), &img(&up), &[mi, ni]]),
            [n.div_ceil(16), md + 1],
            wg_blocks(),
        )?;
        let l_sobel = Launch::new(
            program,
            "sh_sobel",
            &cat(&[&img(&src), &img(&edge), &[mi, ni]]),
            blocks,
            wg_blocks(),
        )?;
        let l_sum = Launch::new(
            program,
            "sh_sum",
            &cat(&[
                &img(&edge),
                &[
                    mi,
                    ni,
                    Arg::I32(rows_per_group as i32),
                    Arg::Mem(partial.get()),
                ],
            ]),
            [groups_unfused * 64, 1],
            [64, 1],
        )?;
        let l_mean = |groups: usize| {
            Launch::new(
                program,
                "sh_mean",
                &[
                    Arg::Mem(partial.get()),
                    Arg::I32(groups as i32),
                    mi,
                    ni,
                    Arg::Mem(mean.get()),
                ],
                [64, 1],
                [64, 1],
            )
        };
        let l_final = Launch::new(
            program,
            "sh_final",
            &cat(&[
                &img(&src),
                &img(&up),
                &img(&edge),
                &[Arg::Mem(mean.get())],
                &img(&out),
                &[mi, ni],
            ]),
            blocks,
            wg_blocks(),
        )?;
        let l_edge_sum = Launch::new(
            program,
            "sh_edge_sum",
            &cat(&[&img(&src), &[mi, ni, Arg::Mem(partial.get())]]),
            blocks,
            edge_wg,
        )?;
        let l_final_fused = Launch::new(
            program,
            "sh_final_fused",
            &cat(&[
                &img(&src),
                &img(&down),
                &[Arg::Mem(mean.get())],
                &img(&out),
                &[mi, ni],
            ]),
            [n.div_ceil(16), md + 1],
            wg_blocks(),
        )?;
        let stages = vec![
            Stage {
                name: Self::STAGES[0],
                launches: vec![l_down()?],
            },
            Stage {
                name: Self::STAGES[1],
                launches: vec![l_up],
            },
            Stage {
                name: Self::STAGES[2],
                launches: vec![l_sobel],
            },
            Stage {
                name: Self::STAGES[3],
                launches: vec![l_sum, l_mean(groups_unfused)?],
            },
            Stage {
                name: Self::STAGES[4],
                launches: vec![l_final],
            },
        ];
        let fused = vec![l_down()?, l_edge_sum, l_mean(groups_fused)?, l_final_fused];
        Ok(Sharpen {
            hand: Hand {
                stages,
                fused: Some(fused),
            },
            src,
            down,
            up,
            edge,
            out,
            partial,
            mean,
        })
    }

    /// The mean the last run computed.
    pub fn read_mean(&self, cl: &Cl) -> Result<i32> {
        let mut v = [0i32; 1];
        // SAFETY: one element, blocking.
        unsafe {
            cl.queue
                .enqueue_read_buffer(&self.mean, CL_BLOCKING, 0, &mut v, &[])
                .map_err(|e| format!("clEnqueueReadBuffer: {e}"))?;
        }
        Ok(v[0])
    }

    /// `src` in, run (fused), `out` out.
    pub fn call(&mut self, cl: &Cl, src: &Matrix<u8>) -> Result<Matrix<u8>> {
        self.src.write(cl, src)?;
        self.hand.run(cl)?;
        self.out.read(cl)
    }
}

// ---- blur --------------------------------------------------------------------------------------

/// blur on one image size.
pub struct Blur {
    pub hand: Hand,
    pub src: Image<u16>,
    pub bx: Image<u16>,
    pub out: Image<u16>,
}

/// The work-group of the scalar (one output per work-item) blur kernels
/// (`PARAC_HAND_WG_SCALAR` overrides it, for tuning).
pub fn wg_scalar() -> [usize; 2] {
    wg_env("PARAC_HAND_WG_SCALAR", [32, 8])
}

impl Blur {
    pub const STAGES: [&'static str; 2] = ["bx", "out"];

    pub fn new(cl: &Cl, program: &Program, m: usize, n: usize) -> Result<Blur> {
        if m < 3 || n < 3 {
            return Err(format!("blur needs M, N >= 3, got {m}x{n}"));
        }
        let src = Image::<u16>::new(cl, 1, m, n)?;
        let bx = Image::<u16>::new(cl, 1, m, n - 2)?;
        let out = Image::<u16>::new(cl, 1, m - 2, n - 2)?;
        let (mi, ni) = (Arg::I32(m as i32), Arg::I32(n as i32));
        let img = |i: &Image<u16>| [Arg::Mem(i.mem()), Arg::I32(i.pitch_arg())];
        let cols = n - 2;
        let l_bx = Launch::new(
            program,
            "blur_bx",
            &[&img(&src)[..], &img(&bx), &[mi, ni]].concat(),
            [cols, m],
            wg_scalar(),
        )?;
        let l_out = Launch::new(
            program,
            "blur_out",
            &[&img(&bx)[..], &img(&out), &[mi, ni]].concat(),
            [cols, m - 2],
            wg_scalar(),
        )?;
        let l_fused = Launch::new(
            program,
            "blur_fused",
            &[&img(&src)[..], &img(&out), &[mi, ni]].concat(),
            [cols, m - 2],
            wg_scalar(),
        )?;
        Ok(Blur {
            hand: Hand {
                stages: vec![
                    Stage {
                        name: Self::STAGES[0],
                        launches: vec![l_bx],
                    },
                    Stage {
                        name: Self::STAGES[1],
                        launches: vec![l_out],
                    },
                ],
                fused: Some(vec![l_fused]),
            },
            src,
            bx,
            out,
        })
    }

    /// `src` in, run (fused), `out` out.
    pub fn call(&mut self, cl: &Cl, src: &Matrix<u16>) -> Result<Matrix<u16>> {
        self.src.write(cl, src)?;
        self.hand.run(cl)?;
        self.out.read(cl)
    }
}

// ---- unsharp -----------------------------------------------------------------------------------

/// unsharp on one image size.
pub struct Unsharp {
    pub hand: Hand,
    pub img: Image<f32>,
    pub gray: Image<f32>,
    pub by: Image<f32>,
    pub out: Image<f32>,
}

/// Rows per work-item of us_vertical (`ROWS` in the kernel).
const UNSHARP_ROWS: usize = 8;

/// The 4 Gaussian taps (sigma 1.5, not renormalised), computed in f64 and rounded.
pub fn unsharp_taps() -> [f32; 4] {
    let sigma = 1.5f64;
    let norm = (2.0 * std::f64::consts::PI).sqrt() * sigma;
    [0.0f64, 1.0, 2.0, 3.0].map(|i| ((-i * i / (2.0 * sigma * sigma)).exp() / norm) as f32)
}

impl Unsharp {
    pub const STAGES: [&'static str; 3] = ["gray", "vertical", "horizontal_ratio"];

    pub fn new(cl: &Cl, program: &Program, m: usize, n: usize) -> Result<Unsharp> {
        if m < 1 || n < 1 {
            return Err(format!("unsharp needs a non-empty image, got {m}x{n}"));
        }
        let img = Image::<f32>::new(cl, 3, m, n)?;
        let gray = Image::<f32>::new(cl, 1, m, n)?;
        let by = Image::<f32>::new(cl, 1, m, n)?;
        let out = Image::<f32>::new(cl, 3, m, n)?;
        let (mi, ni) = (Arg::I32(m as i32), Arg::I32(n as i32));
        let k = unsharp_taps().map(Arg::F32);
        let cols = n.div_ceil(16);
        let l_gray = Launch::new(
            program,
            "us_gray",
            &[
                Arg::Mem(img.mem()),
                Arg::I32(img.pitch_arg()),
                Arg::I32(img.plane_arg()),
                Arg::Mem(gray.mem()),
                Arg::I32(gray.pitch_arg()),
                mi,
                ni,
            ],
            [cols, m],
            wg_rows(),
        )?;
        let l_v = Launch::new(
            program,
            "us_vertical",
            &[
                &[
                    Arg::Mem(gray.mem()),
                    Arg::I32(gray.pitch_arg()),
                    Arg::Mem(by.mem()),
                    Arg::I32(by.pitch_arg()),
                    mi,
                    ni,
                ][..],
                &k,
            ]
            .concat(),
            [cols, m.div_ceil(UNSHARP_ROWS)],
            wg_blocks(),
        )?;
        let l_h = Launch::new(
            program,
            "us_horizontal",
            &[
                &[
                    Arg::Mem(by.mem()),
                    Arg::I32(by.pitch_arg()),
                    Arg::Mem(gray.mem()),
                    Arg::I32(gray.pitch_arg()),
                    Arg::Mem(img.mem()),
                    Arg::I32(img.pitch_arg()),
                    Arg::I32(img.plane_arg()),
                    Arg::Mem(out.mem()),
                    mi,
                    ni,
                ][..],
                &k,
            ]
            .concat(),
            [cols, m],
            wg_rows(),
        )?;
        Ok(Unsharp {
            hand: Hand {
                stages: vec![
                    Stage {
                        name: Self::STAGES[0],
                        launches: vec![l_gray],
                    },
                    Stage {
                        name: Self::STAGES[1],
                        launches: vec![l_v],
                    },
                    Stage {
                        name: Self::STAGES[2],
                        launches: vec![l_h],
                    },
                ],
                fused: None,
            },
            img,
            gray,
            by,
            out,
        })
    }

    /// `img` in, run, `out` out.
    pub fn call(&mut self, cl: &Cl, img: &Matrix<f32>) -> Result<Matrix<f32>> {
        self.img.write(cl, img)?;
        self.hand.run(cl)?;
        self.out.read(cl)
    }
}

// ---- the floor ---------------------------------------------------------------------------------

/// The device's copy bandwidth in bytes per second (bytes read plus bytes written): the best
/// of `reps` buffer-to-buffer copies of `bytes` bytes (`clEnqueueCopyBuffer`, profiled).
pub fn copy_bandwidth(cl: &Cl, bytes: usize, reps: usize) -> Result<f64> {
    // SAFETY: no host pointers; the copy stays inside both buffers.
    unsafe {
        let a = Buffer::<u8>::create(&cl.context, CL_MEM_READ_WRITE, bytes, ptr::null_mut())
            .map_err(|e| format!("clCreateBuffer: {e}"))?;
        let mut b = Buffer::<u8>::create(&cl.context, CL_MEM_READ_WRITE, bytes, ptr::null_mut())
            .map_err(|e| format!("clCreateBuffer: {e}"))?;
        let mut best = f64::INFINITY;
        // One copy first: it touches every page of both buffers.
        for _ in 0..reps + 1 {
            let e = cl
                .queue
                .enqueue_copy_buffer(&a, &mut b, 0, 0, bytes, &[])
                .map_err(|e| format!("clEnqueueCopyBuffer: {e}"))?;
            e.wait().map_err(|e| format!("wait: {e}"))?;
            best = best.min(event_time(&e)?.as_secs_f64());
        }
        Ok(2.0 * bytes as f64 / best)
    }
}
