//! Shader programs compiled from the files in `glsl/`.

use super::context::Context;
use crate::error::{DeviceError, Error, Result};
use glow::HasContext;

/// A linked vertex + fragment program.
pub struct Program {
    ctx: Context,
    raw: glow::Program,
    name: String,
    viewport: Option<glow::UniformLocation>,
}

impl Program {
    /// Compiles and links; a failure carries the numbered source and the driver's log.
    pub fn new(ctx: &Context, name: &str, vertex: &str, fragment: &str) -> Result<Self> {
        let gl = ctx.gl();
        let raw = unsafe { gl.create_program() }.map_err(|message| {
            Error::from(DeviceError::GlCreate {
                what: "program",
                message,
            })
        })?;
        let mut program = Self {
            ctx: ctx.clone(),
            raw,
            name: name.to_string(),
            viewport: None,
        };
        let vs = compile(
            ctx,
            &format!("{name} (vertex)"),
            glow::VERTEX_SHADER,
            vertex,
        )?;
        let fs = match compile(
            ctx,
            &format!("{name} (fragment)"),
            glow::FRAGMENT_SHADER,
            fragment,
        ) {
            Ok(fs) => fs,
            Err(e) => {
                unsafe { gl.delete_shader(vs) };
                return Err(e);
            }
        };
        unsafe {
            gl.attach_shader(raw, vs);
            gl.attach_shader(raw, fs);
            gl.link_program(raw);
            gl.detach_shader(raw, vs);
            gl.detach_shader(raw, fs);
            gl.delete_shader(vs);
            gl.delete_shader(fs);
            if !gl.get_program_link_status(raw) {
                let log = gl.get_program_info_log(raw);
                log::debug!("program {name} failed to link:\n{log}");
                return Err(Error::from(DeviceError::ProgramLink {
                    name: name.to_string(),
                    log,
                }));
            }
        }
        program.viewport = unsafe { gl.get_uniform_location(raw, "viewport") };
        ctx.check(|| format!("linking program {name}"))?;
        Ok(program)
    }

    /// Makes this the current program.
    pub fn bind(&self) {
        unsafe { self.ctx.gl().use_program(Some(self.raw)) }
    }

    /// Sets a sampler uniform to a texture unit (binds the program).
    pub fn set_sampler(&self, uniform: &str, unit: u32) -> Result<()> {
        self.bind();
        let gl = self.ctx.gl();
        let loc = unsafe { gl.get_uniform_location(self.raw, uniform) };
        if loc.is_none() {
            return Err(Error::from(DeviceError::GlCreate {
                what: "sampler uniform",
                message: format!("program {} has no active uniform {uniform}", self.name),
            }));
        }
        unsafe { gl.uniform_1_i32(loc.as_ref(), unit as i32) };
        self.ctx
            .check(|| format!("setting {uniform} of {}", self.name))
    }

    /// Sets the `viewport` uniform (pixels) of this program, which must be bound.
    pub fn set_viewport(&self, width: f32, height: f32) {
        unsafe {
            self.ctx
                .gl()
                .uniform_2_f32(self.viewport.as_ref(), width, height)
        };
    }

    /// The program's name, for messages.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        unsafe { self.ctx.gl().delete_program(self.raw) }
    }
}

/// Compiles shader `source` of `kind` and waits for it: its compile log and numbered source
/// where it fails ([`compile_failure`]).
pub(super) fn compile(ctx: &Context, name: &str, kind: u32, source: &str) -> Result<glow::Shader> {
    let gl = ctx.gl();
    let shader = start_compile(ctx, kind, source)?;
    unsafe {
        if !gl.get_shader_compile_status(shader) {
            let e = compile_failure(ctx, shader, name, source);
            gl.delete_shader(shader);
            return Err(e);
        }
    }
    Ok(shader)
}

/// A new shader of `kind` with `source`, handed to the driver to compile (not waited for).
pub(super) fn start_compile(ctx: &Context, kind: u32, source: &str) -> Result<glow::Shader> {
    let gl = ctx.gl();
    unsafe {
        let shader = gl.create_shader(kind).map_err(|message| {
            Error::from(DeviceError::GlCreate {
                what: "shader",
                message,
            })
        })?;
        gl.shader_source(shader, source);
        gl.compile_shader(shader);
        Ok(shader)
    }
}

/// [`DeviceError::ShaderCompile`] for `shader` (named `name`, compiled from `source`), which
/// failed to compile: the driver's log and the numbered source.
pub(super) fn compile_failure(
    ctx: &Context,
    shader: glow::Shader,
    name: &str,
    source: &str,
) -> Error {
    let log = unsafe { ctx.gl().get_shader_info_log(shader) };
    log::debug!(
        "shader {name} failed to compile:\n{log}\n--- source ---\n{}",
        numbered(source)
    );
    Error::from(DeviceError::ShaderCompile {
        name: name.to_string(),
        log,
        numbered_source: numbered(source),
    })
}

/// The source with 1-based line numbers, as drivers' logs count them.
fn numbered(source: &str) -> String {
    source
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{:4} | {l}", i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}
