//! A texture with its framebuffer: an offscreen render target of any texel format.

use super::context::Context;
use super::framebuffer::Framebuffer;
use super::texture::{R32F, TexelFormat, Texture};
use crate::error::Result;

/// A texture that can be rendered into (R32F unless named): the algorithms' targets, or an
/// RGBA8 frame drawn offscreen and read back.
pub struct RenderTexture<F: TexelFormat = R32F> {
    // Field order: the framebuffer goes before the texture it points at.
    framebuffer: Framebuffer,
    texture: Texture<F>,
}

impl RenderTexture<R32F> {
    /// Allocates a `width` x `height` R32F texture with its framebuffer.
    pub fn new(ctx: &Context, width: usize, height: usize) -> Result<Self> {
        Self::allocate(ctx, width, height)
    }
}

impl<F: TexelFormat> RenderTexture<F> {
    /// Allocates a `width` x `height` texture of format `F` with its framebuffer; an
    /// incomplete framebuffer is [`DeviceError::FramebufferIncomplete`](crate::DeviceError::FramebufferIncomplete) naming the
    /// format.
    pub fn allocate(ctx: &Context, width: usize, height: usize) -> Result<Self> {
        let texture = Texture::allocate(ctx, width, height)?;
        let framebuffer = Framebuffer::new(ctx, &texture)?;
        Ok(Self {
            framebuffer,
            texture,
        })
    }

    /// Sets every texel's channels to `value` on the GPU (glClear: no host copy, unlike
    /// [`Texture::fill`]). Leaves the framebuffer bound and the scissor off.
    pub fn clear(&self, ctx: &Context, value: f32) -> Result<()> {
        self.framebuffer.bind();
        ctx.set_scissor(None);
        ctx.clear([value; 4]);
        ctx.check(|| {
            format!(
                "clearing a {}x{} {} texture",
                self.width(),
                self.height(),
                F::NAME
            )
        })
    }

    /// The texture.
    pub fn texture(&self) -> &Texture<F> {
        &self.texture
    }

    /// The framebuffer drawing into it.
    pub fn framebuffer(&self) -> &Framebuffer {
        &self.framebuffer
    }

    /// Width in texels.
    pub fn width(&self) -> usize {
        self.texture.width()
    }

    /// Height in texels.
    pub fn height(&self) -> usize {
        self.texture.height()
    }
}
