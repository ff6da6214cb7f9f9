//! Buffer textures (GL_TEXTURE_BUFFER, OpenGL 3.1): a storage buffer read through the texture
//! units. On a software renderer (llvmpipe) `texelFetch` is a vector gather while a storage
//! buffer read is a loop over the SIMD lanes, so the tiled kernels read their operands this way
//! there.

use super::buffer::Buffer;
use super::context::Context;
use crate::error::{DeviceError, Error, Result};
use glow::HasContext;

/// How a buffer texture shows the floats of its buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TexelWidth {
    /// One float per texel (GL_R32F).
    One,
    /// Four consecutive floats per texel (GL_RGBA32F).
    Four,
}

impl TexelWidth {
    fn internal_format(self) -> u32 {
        match self {
            TexelWidth::One => glow::R32F,
            TexelWidth::Four => glow::RGBA32F,
        }
    }
}

/// A texture object of target GL_TEXTURE_BUFFER; deleted on drop. It names a buffer's storage
/// (no copy): [`BufferTexture::attach`] points it at one.
pub struct BufferTexture {
    ctx: Context,
    raw: glow::Texture,
}

impl BufferTexture {
    /// A buffer texture with no buffer attached yet.
    pub fn new(ctx: &Context) -> Result<Self> {
        let raw = unsafe { ctx.gl().create_texture() }.map_err(|message| {
            Error::from(DeviceError::GlCreate {
                what: "buffer texture",
                message,
            })
        })?;
        Ok(Self {
            ctx: ctx.clone(),
            raw,
        })
    }

    /// Shows `buffer`'s floats through this texture, `width` floats per texel, and binds it to
    /// texture unit `unit`.
    pub fn attach(&self, buffer: &Buffer<f32>, width: TexelWidth, unit: u32) {
        let gl = self.ctx.gl();
        unsafe {
            gl.active_texture(glow::TEXTURE0 + unit);
            gl.bind_texture(glow::TEXTURE_BUFFER, Some(self.raw));
            gl.tex_buffer(
                glow::TEXTURE_BUFFER,
                width.internal_format(),
                Some(buffer.raw()),
            );
        }
    }

    /// GL_MAX_TEXTURE_BUFFER_SIZE: the most texels one buffer texture shows.
    pub fn max_texels(ctx: &Context) -> usize {
        unsafe { ctx.gl().get_parameter_i32(glow::MAX_TEXTURE_BUFFER_SIZE) }.max(0) as usize
    }
}

impl Drop for BufferTexture {
    fn drop(&mut self) {
        unsafe { self.ctx.gl().delete_texture(self.raw) }
    }
}
