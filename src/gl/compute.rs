//! Compute programs (OpenGL 4.3): one compute shader linked alone, checked against its
//! declaration ([`ComputeKernel`], in its family's table, e.g. `crate::tiled::table`; all of
//! them in `crate::compute_kernels::ALL`), with uniforms set by declared name, dispatches,
//! and the memory barrier that orders one dispatch's storage writes before the next one's
//! reads.

use super::context::Context;
use super::program::{compile_failure, start_compile};
use crate::error::{DeviceError, Error, Result};
use glow::HasContext;
use std::collections::HashMap;

/// A compute kernel declared once: its `.comp` file, the storage blocks it binds and the
/// uniforms it reads. [`ComputeProgram::new`] checks the linked program against it.
#[derive(Debug)]
pub struct ComputeKernel {
    /// The kernel's name (its file under `glsl/` without `.comp`), for messages.
    pub name: &'static str,
    /// The file's text; callers put the version line and their defines in front.
    pub source: &'static str,
    /// Storage blocks by name and binding point (set on the linked program).
    pub buffers: &'static [(&'static str, u32)],
    /// Uniforms the program must have active (samplers included).
    pub uniforms: &'static [&'static str],
    /// Uniforms that may be set but that some variants (#defines) leave inactive.
    pub optional: &'static [&'static str],
}

impl ComputeKernel {
    /// Whether `name` is one of this kernel's uniforms.
    pub fn declares(&self, name: &str) -> bool {
        self.uniforms.contains(&name) || self.optional.contains(&name)
    }
}

/// A linked compute program; deleted on drop.
pub struct ComputeProgram {
    ctx: Context,
    raw: glow::Program,
    name: String,
    // Every declared uniform's location (`None`: an optional one the variant left out).
    locations: HashMap<&'static str, Option<glow::UniformLocation>>,
    // GL_MAX_COMPUTE_WORK_GROUP_COUNT in x, y and z: what one dispatch may launch.
    max_groups: [u32; 3],
}

/// The most loop iterations one shader invocation may run on Mesa's llvmpipe: gallivm ends
/// every loop of an invocation, silently, once all its loops together have run 65,535
/// iterations (LP_MAX_TGSI_LOOP_ITERATIONS). Kernels whose loops grow with the problem take at
/// most [`LOOP_BUDGET`] iterations per launch on every device; the host splits the rest.
pub const LOOP_LIMIT: usize = 65535;

/// The loop iterations a kernel may spend per launch on its size-dependent loops: a quarter of
/// [`LOOP_LIMIT`], leaving room for the loops a compiler does not unroll.
pub const LOOP_BUDGET: usize = 16384;

/// GLSL #defines shared by every Cholesky factor kernel (`glsl/pivot.glsl`): `PIVOT_FAILS(p)`
/// and `PIVOT_FAILS_DOUBLE(p)`, a pivot that is not positive or is NaN, read from its bits (a
/// compiler that assumes no NaN may drop the NaN from `!(p > 0.0)`). Prepended after the
/// `#define`s of every tiled kernel (`KernelConfig::source`), the batched kernels and the f64
/// factors; only #defines, so it goes before any `#extension` a kernel carries.
pub const PIVOT_GLSL: &str = include_str!("../../glsl/pivot.glsl");

thread_local! {
    /// Compute launches issued by this thread (a GL context is current on one thread), for
    /// counting an operation's dispatches: read [`dispatches`] before and after. Per thread, so
    /// that operations on other threads (tests run in parallel) do not count.
    static DISPATCHES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// The compute launches this thread has issued so far.
pub fn dispatches() -> u64 {
    DISPATCHES.with(std::cell::Cell::get)
}

/// A value for a scalar uniform.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Uniform {
    /// `int`.
    I32(i32),
    /// `uint`.
    U32(u32),
    /// `float`.
    F32(f32),
}

impl ComputeProgram {
    /// Compiles and links `source` (`kernel`'s text with the caller's header; `variant` names
    /// the defines in messages, or is empty); a failure carries the numbered source and the
    /// driver's log. The linked program must match `kernel`: every active uniform declared,
    /// every required one active, else [`DeviceError::KernelInterface`]; declared storage
    /// blocks are bound at their declared binding.
    pub fn new(
        ctx: &Context,
        kernel: &'static ComputeKernel,
        variant: &str,
        source: &str,
    ) -> Result<Self> {
        Self::start(ctx, kernel, variant, source)?.finish()
    }

    /// Hands `source` to the driver to compile and link without waiting for either: where the
    /// driver compiles in its own threads (GL_KHR_parallel_shader_compile), programs started
    /// together compile side by side. [`PendingCompute::finish`] waits and checks as
    /// [`ComputeProgram::new`] does.
    pub fn start(
        ctx: &Context,
        kernel: &'static ComputeKernel,
        variant: &str,
        source: &str,
    ) -> Result<PendingCompute> {
        let name = match variant {
            "" => kernel.name.to_string(),
            v => format!("{} ({v})", kernel.name),
        };
        let started = std::time::Instant::now();
        let gl = ctx.gl();
        let shader = start_compile(ctx, glow::COMPUTE_SHADER, source)?;
        let raw = match unsafe { gl.create_program() } {
            Ok(raw) => raw,
            Err(message) => {
                unsafe { gl.delete_shader(shader) };
                return Err(Error::from(DeviceError::GlCreate {
                    what: "compute program",
                    message,
                }));
            }
        };
        unsafe {
            gl.attach_shader(raw, shader);
            gl.link_program(raw);
        }
        Ok(PendingCompute {
            ctx: ctx.clone(),
            kernel,
            name,
            raw: Some(raw),
            shader,
            source: source.to_string(),
            started,
        })
    }

    /// Makes this the current program.
    pub fn bind(&self) {
        unsafe { self.ctx.gl().use_program(Some(self.raw)) }
    }

    /// Sets the scalar uniform `name` of this program (binds it). An optional uniform this
    /// variant left inactive is skipped; a name the kernel does not declare is
    /// [`DeviceError::KernelInterface`] (an internal error), set nowhere.
    pub fn set(&self, name: &str, value: Uniform) -> Result<()> {
        self.bind();
        self.set_bound(name, value)
    }

    /// Sets several uniforms (binding the program once); fails as [`ComputeProgram::set`]
    /// before setting any.
    pub fn set_all(&self, values: &[(&str, Uniform)]) -> Result<()> {
        for &(name, _) in values {
            self.location(name)?;
        }
        self.bind();
        for &(name, value) in values {
            self.set_bound(name, value)?;
        }
        Ok(())
    }

    /// The location of declared uniform `name`.
    fn location(&self, name: &str) -> Result<Option<&glow::UniformLocation>> {
        match self.locations.get(name) {
            Some(loc) => Ok(loc.as_ref()),
            None => Err(DeviceError::KernelInterface {
                kernel: self.name.clone(),
                problem: format!("uniform {name} is set but not declared"),
            }
            .into()),
        }
    }

    /// [`ComputeProgram::set`] on the bound program.
    fn set_bound(&self, name: &str, value: Uniform) -> Result<()> {
        let gl = self.ctx.gl();
        let loc = self.location(name)?;
        unsafe {
            match value {
                Uniform::I32(v) => gl.uniform_1_i32(loc, v),
                Uniform::U32(v) => gl.uniform_1_u32(loc, v),
                Uniform::F32(v) => gl.uniform_1_f32(loc, v),
            }
        }
        Ok(())
    }

    /// Runs `groups` work groups (binds the program first) and makes its storage-buffer
    /// writes visible to later dispatches, buffer reads and buffer-texture fetches. Every
    /// dispatch of the library goes through here: a count past GL_MAX_COMPUTE_WORK_GROUP_COUNT
    /// in any dimension is [`DeviceError::Unsupported`] (GL would skip the launch silently);
    /// split such launches with [`ComputeProgram::dispatch_rows`]. GL errors are not polled
    /// here (a poll per dispatch costs more than a small dispatch): check the context after a
    /// batch.
    pub fn dispatch(&self, groups: [u32; 3]) -> Result<()> {
        self.launch(groups, true)
    }

    /// [`ComputeProgram::dispatch`] without the barrier after it: the driver may run the next
    /// dispatches beside this one, so the caller orders anything that reads its writes with
    /// [`Context::storage_barrier`] first (for look-ahead schedules, whose independent
    /// launches may overlap).
    pub fn dispatch_unfenced(&self, groups: [u32; 3]) -> Result<()> {
        self.launch(groups, false)
    }

    fn launch(&self, groups: [u32; 3], fenced: bool) -> Result<()> {
        if groups.contains(&0) {
            return Ok(());
        }
        if groups.iter().zip(self.max_groups).any(|(&g, max)| g > max) {
            return Err(DeviceError::Unsupported {
                what: format!("launch {} over {groups:?} work groups", self.name),
                why: format!("one launch has at most {:?}", self.max_groups),
            }
            .into());
        }
        self.bind();
        DISPATCHES.with(|d| d.set(d.get() + 1));
        let gl = self.ctx.gl();
        unsafe {
            gl.dispatch_compute(groups[0], groups[1], groups[2]);
        }
        if fenced {
            self.ctx.storage_barrier();
        }
        Ok(())
    }

    /// Runs `groups[0]` x `total` work groups as launches of at most the device's y count,
    /// the uniform `base` (a `uint`) set to each launch's first group along y: for kernels
    /// that add `base` to `gl_WorkGroupID.y`. Returns the launches made.
    pub fn dispatch_rows(&self, x: u32, total: usize, base: &str) -> Result<u64> {
        self.dispatch_rows_fenced(x, total, base, true)
    }

    /// [`ComputeProgram::dispatch_rows`], its last launch without the barrier after it where
    /// not `fenced` (as [`ComputeProgram::dispatch_unfenced`]).
    pub fn dispatch_rows_fenced(&self, x: u32, total: usize, base: &str, fenced: bool) -> Result<u64> {
        let max = self.max_groups[1].max(1) as usize;
        let mut first = 0;
        let mut launches = 0;
        while first < total {
            let count = (total - first).min(max);
            self.set(base, Uniform::U32(first as u32))?;
            self.launch([x, count as u32, 1], fenced || first + count < total)?;
            launches += 1;
            first += count;
        }
        Ok(launches)
    }

    /// The program's name, for messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The driver's binary of the linked program (glGetProgramBinary: its format and bytes),
    /// where it gives one: NVIDIA's holds the program's assembly as text, for checking a
    /// kernel's unrolling and local-memory use on the device.
    pub fn binary(&self) -> Option<(u32, Vec<u8>)> {
        let b = unsafe { self.ctx.gl().get_program_binary(self.raw) }?;
        Some((b.format, b.buffer))
    }
}

impl Drop for ComputeProgram {
    fn drop(&mut self) {
        unsafe { self.ctx.gl().delete_program(self.raw) }
    }
}

/// A compute program handed to the driver by [`ComputeProgram::start`], its compile and link
/// not yet waited for; deleted on drop unless finished.
pub struct PendingCompute {
    ctx: Context,
    kernel: &'static ComputeKernel,
    name: String,
    // `None` once finished (the program then belongs to the `ComputeProgram`).
    raw: Option<glow::Program>,
    shader: glow::Shader,
    source: String,
    started: std::time::Instant,
}

impl PendingCompute {
    /// Waits for the compile and the link and checks the program: a failure carries the
    /// numbered source and the driver's log; the linked program must match its kernel (see
    /// [`ComputeProgram::new`]).
    pub fn finish(mut self) -> Result<ComputeProgram> {
        let gl = self.ctx.gl();
        let raw = self.raw.expect("a pending program is finished once");
        let name = self.name.clone();
        unsafe {
            if !gl.get_program_link_status(raw) {
                if !gl.get_shader_compile_status(self.shader) {
                    let name = format!("{name} (compute)");
                    return Err(compile_failure(&self.ctx, self.shader, &name, &self.source));
                }
                let log = gl.get_program_info_log(raw);
                log::debug!("program {name} failed to link:\n{log}");
                return Err(Error::from(DeviceError::ProgramLink { name, log }));
            }
        }
        // Owned by the program from here on, so an early return deletes it.
        unsafe { gl.detach_shader(raw, self.shader) };
        self.raw = None;
        let mut program = ComputeProgram {
            ctx: self.ctx.clone(),
            raw,
            name: name.clone(),
            locations: HashMap::new(),
            max_groups: max_group_counts(&self.ctx),
        };
        self.ctx
            .check(|| format!("linking compute program {name}"))?;
        program.locations = check_interface(&self.ctx, raw, self.kernel, &name)?;
        self.ctx
            .check(|| format!("checking compute program {name}"))?;
        log::debug!(
            "compute program {name} compiled and linked in {:.1} ms",
            self.started.elapsed().as_secs_f64() * 1e3
        );
        Ok(program)
    }
}

impl Drop for PendingCompute {
    fn drop(&mut self) {
        let gl = self.ctx.gl();
        unsafe {
            if let Some(raw) = self.raw {
                gl.detach_shader(raw, self.shader);
                gl.delete_program(raw);
            }
            gl.delete_shader(self.shader);
        }
    }
}

/// Checks linked program `raw` against `kernel` (see [`ComputeProgram::new`]) and returns the
/// locations of its declared uniforms.
fn check_interface(
    ctx: &Context,
    raw: glow::Program,
    kernel: &ComputeKernel,
    name: &str,
) -> Result<HashMap<&'static str, Option<glow::UniformLocation>>> {
    let gl = ctx.gl();
    let fail = |problem: String| {
        Error::from(DeviceError::KernelInterface {
            kernel: name.to_string(),
            problem,
        })
    };
    let count = unsafe { gl.get_active_uniforms(raw) };
    for index in 0..count {
        let Some(active) = (unsafe { gl.get_active_uniform(raw, index) }) else {
            continue;
        };
        let base = active.name.trim_end_matches("[0]");
        // Built-in inputs some drivers list as active uniforms (NVIDIA: gl_SubgroupSize)
        // belong to no kernel's declaration.
        if base.starts_with("gl_") {
            continue;
        }
        if !kernel.declares(base) {
            return Err(fail(format!(
                "the program has uniform {base}, which is not declared"
            )));
        }
    }
    let mut locations = HashMap::new();
    for &uniform in kernel.uniforms.iter().chain(kernel.optional) {
        let loc = unsafe { gl.get_uniform_location(raw, uniform) };
        if loc.is_none() && kernel.uniforms.contains(&uniform) {
            return Err(fail(format!(
                "declared uniform {uniform} is not active in the program"
            )));
        }
        locations.insert(uniform, loc);
    }
    // The table's binding is the one the program uses, whatever the layout says (glow 0.18's
    // get_program_resource_i32 reads nothing back, so the layout's cannot be compared).
    for &(block, binding) in kernel.buffers {
        if let Some(index) = unsafe { gl.get_shader_storage_block_index(raw, block) } {
            unsafe { gl.shader_storage_block_binding(raw, index, binding) };
        }
    }
    Ok(locations)
}

/// What the device allows compute work (queried once per context).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ComputeLimits {
    /// GL_MAX_SHADER_STORAGE_BLOCK_SIZE in bytes: the most one storage buffer binding can show
    /// a shader.
    pub max_storage_block_bytes: u64,
    /// GL_MAX_COMPUTE_SHARED_MEMORY_SIZE in bytes.
    pub max_shared_bytes: u64,
    /// GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS.
    pub max_invocations: u32,
    /// GL_MAX_COMPUTE_WORK_GROUP_COUNT along x.
    pub max_groups_x: u32,

    /// The GPU's dedicated memory in bytes where the driver says
    /// (GL_NVX_gpu_memory_info's GPU_MEMORY_INFO_DEDICATED_VIDMEM_NVX), else `None`.
    pub device_memory_bytes: Option<u64>,
}

/// GL_NVX_gpu_memory_info: dedicated video memory in KiB.
const GPU_MEMORY_INFO_DEDICATED_VIDMEM_NVX: u32 = 0x9047;

impl ComputeLimits {
    /// Asks the driver of `ctx` (which must have compute shaders).
    pub fn query(ctx: &Context) -> Result<Self> {
        let gl = ctx.gl();
        let limits = unsafe {
            Self {
                max_storage_block_bytes: gl
                    .get_parameter_i64(glow::MAX_SHADER_STORAGE_BLOCK_SIZE)
                    .max(0) as u64,
                max_shared_bytes: gl
                    .get_parameter_i32(glow::MAX_COMPUTE_SHARED_MEMORY_SIZE)
                    .max(0) as u64,
                max_invocations: gl
                    .get_parameter_i32(glow::MAX_COMPUTE_WORK_GROUP_INVOCATIONS)
                    .max(0) as u32,
                max_groups_x: max_group_counts(ctx)[0],
                device_memory_bytes: gl
                    .supported_extensions()
                    .contains("GL_NVX_gpu_memory_info")
                    .then(|| {
                        gl.get_parameter_i32(GPU_MEMORY_INFO_DEDICATED_VIDMEM_NVX)
                            .max(0) as u64
                            * 1024
                    }),
            }
        };
        ctx.check(|| "querying compute limits".into())?;
        Ok(limits)
    }
}

/// GL_MAX_COMPUTE_WORK_GROUP_SIZE in x, y and z: the most invocations a work group may have
/// along each dimension.
pub fn max_group_size(ctx: &Context) -> [u32; 3] {
    let gl = ctx.gl();
    [0, 1, 2].map(|i| unsafe {
        gl.get_parameter_indexed_i32(glow::MAX_COMPUTE_WORK_GROUP_SIZE, i)
            .max(0) as u32
    })
}

/// GL_MAX_COMPUTE_WORK_GROUP_COUNT in x, y and z (GL guarantees at least 65535 each).
fn max_group_counts(ctx: &Context) -> [u32; 3] {
    let gl = ctx.gl();
    [0, 1, 2].map(|i| unsafe {
        gl.get_parameter_indexed_i32(glow::MAX_COMPUTE_WORK_GROUP_COUNT, i)
            .max(0) as u32
    })
}
