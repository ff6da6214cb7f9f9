//! Framebuffers that render into one texture, or into several at once (multiple render
//! targets, as the Brook+ sample's 4 x 4 blocks), of any texel format.

use super::context::Context;
use super::texture::{TexelFormat, Texture};
use crate::error::{DeviceError, Error, Result};
use glow::HasContext;

/// A framebuffer with one or more textures as its colour attachments (fragment output i draws
/// into attachment i), checked complete on creation.
pub struct Framebuffer {
    ctx: Context,
    raw: glow::Framebuffer,
}

impl Framebuffer {
    /// Attaches `texture` as colour attachment 0 and checks completeness.
    pub fn new<F: TexelFormat>(ctx: &Context, texture: &Texture<F>) -> Result<Self> {
        Self::with_attachments(ctx, &[texture])
    }

    /// Attaches `textures` (equal sizes, at most GL_MAX_DRAW_BUFFERS; GL 3.3 guarantees 8) as
    /// colour attachments 0, 1, ..., all drawn into, and checks completeness.
    pub fn with_attachments<F: TexelFormat>(
        ctx: &Context,
        textures: &[&Texture<F>],
    ) -> Result<Self> {
        let texture = textures[0];
        let gl = ctx.gl();
        let raw = unsafe { gl.create_framebuffer() }.map_err(|message| {
            Error::from(DeviceError::GlCreate {
                what: "framebuffer",
                message,
            })
        })?;
        let fb = Self {
            ctx: ctx.clone(),
            raw,
        };
        unsafe {
            gl.bind_framebuffer(glow::FRAMEBUFFER, Some(raw));
            let mut buffers = Vec::with_capacity(textures.len());
            for (i, t) in textures.iter().enumerate() {
                let attachment = glow::COLOR_ATTACHMENT0 + i as u32;
                gl.framebuffer_texture_2d(
                    glow::FRAMEBUFFER,
                    attachment,
                    glow::TEXTURE_2D,
                    Some(t.raw()),
                    0,
                );
                buffers.push(attachment);
            }
            gl.draw_buffers(&buffers);
            let status = gl.check_framebuffer_status(glow::FRAMEBUFFER);
            if status != glow::FRAMEBUFFER_COMPLETE {
                return Err(Error::from(DeviceError::FramebufferIncomplete {
                    status,
                    width: texture.width() as u32,
                    height: texture.height() as u32,
                    format: F::NAME,
                }));
            }
        }
        ctx.check(|| format!("creating a framebuffer for a {} texture", F::NAME))?;
        Ok(fb)
    }

    /// Makes this the draw (and read) target.
    pub fn bind(&self) {
        unsafe {
            self.ctx
                .gl()
                .bind_framebuffer(glow::FRAMEBUFFER, Some(self.raw))
        }
    }

    /// Makes the context's default framebuffer the draw (and read) target: a window's back
    /// buffer (a surfaceless context has none to draw in).
    pub fn bind_default(ctx: &Context) {
        unsafe { ctx.gl().bind_framebuffer(glow::FRAMEBUFFER, None) }
    }
}

impl Drop for Framebuffer {
    fn drop(&mut self) {
        unsafe { self.ctx.gl().delete_framebuffer(self.raw) }
    }
}
