//! The cloneable GL context handle every GL object keeps, and the device's description.

use crate::error::{DeviceError, Error, Result};
use glow::HasContext;
use std::rc::Rc;

/// A cloneable handle to the current GL context's function table.
///
/// Not `Send`: a GL context is current on one thread, and so is everything made from it.
#[derive(Clone)]
pub struct Context {
    gl: Rc<glow::Context>,
}

/// What the driver says about itself.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// GL_VENDOR.
    pub vendor: String,
    /// GL_RENDERER.
    pub renderer: String,
    /// GL_VERSION.
    pub version: String,
    /// GL_MAX_TEXTURE_SIZE.
    pub max_texture_size: usize,
    /// Index of the EGL device used, among those EGL enumerated.
    pub egl_device_index: usize,
    /// Number of EGL devices found.
    pub egl_device_count: usize,
    /// Whether the device is Mesa's software rasterizer.
    pub software: bool,
}

impl Context {
    /// Wraps a glow context that is current on this thread: the headless one, or a window's
    /// (the viewer), so the kernels can run on whichever context will display their textures.
    pub fn new(gl: glow::Context) -> Self {
        Self { gl: Rc::new(gl) }
    }

    /// The raw glow context.
    pub fn gl(&self) -> &glow::Context {
        &self.gl
    }

    /// Turns a pending GL error into a typed error naming what was being done.
    pub fn check(&self, during: impl FnOnce() -> String) -> Result<()> {
        let code = unsafe { self.gl.get_error() };
        if code == glow::NO_ERROR {
            return Ok(());
        }
        // Drain any further queued errors so the next check starts clean.
        for _ in 0..16 {
            if unsafe { self.gl.get_error() } == glow::NO_ERROR {
                break;
            }
        }
        Err(Error::from(DeviceError::Gl {
            code,
            name: error_name(code),
            during: during(),
        }))
    }

    /// Sets the viewport to `width` x `height` pixels from the origin.
    pub fn viewport(&self, width: usize, height: usize) {
        unsafe { self.gl.viewport(0, 0, width as i32, height as i32) }
    }

    /// Blocks until the GPU has finished all submitted work.
    pub fn finish(&self) {
        unsafe { self.gl.finish() }
    }
}

fn error_name(code: u32) -> &'static str {
    match code {
        glow::INVALID_ENUM => "GL_INVALID_ENUM",
        glow::INVALID_VALUE => "GL_INVALID_VALUE",
        glow::INVALID_OPERATION => "GL_INVALID_OPERATION",
        glow::INVALID_FRAMEBUFFER_OPERATION => "GL_INVALID_FRAMEBUFFER_OPERATION",
        glow::OUT_OF_MEMORY => "GL_OUT_OF_MEMORY",
        glow::STACK_UNDERFLOW => "GL_STACK_UNDERFLOW",
        glow::STACK_OVERFLOW => "GL_STACK_OVERFLOW",
        _ => "unknown GL error",
    }
}
