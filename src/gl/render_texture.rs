//! A texture with its framebuffer, or several textures drawn at once (multiple render
//! targets): an offscreen render target of any texel format.

use super::context::Context;
use super::framebuffer::Framebuffer;
use super::texture::{R32F, TexelFormat, Texture};
use crate::error::Result;

/// A texture that can be rendered into (R32F unless named): the algorithms' targets, or an
/// RGBA8 frame drawn offscreen and read back.
///
/// With several layers (equal textures), fragment output i draws into layer i.
pub struct RenderTexture<F: TexelFormat = R32F> {
    // Field order: the framebuffer goes before the textures it points at.
    framebuffer: Framebuffer,
    layers: Vec<Texture<F>>,
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
        Self::allocate_layers(ctx, width, height, 1)
    }

    /// Allocates `layers` textures of `width` x `height` texels drawn by one framebuffer
    /// (multiple render targets).
    pub fn allocate_layers(
        ctx: &Context,
        width: usize,
        height: usize,
        layers: usize,
    ) -> Result<Self> {
        let layers = (0..layers.max(1))
            .map(|_| Texture::allocate(ctx, width, height))
            .collect::<Result<Vec<_>>>()?;
        let framebuffer = Framebuffer::with_attachments(ctx, &layers.iter().collect::<Vec<_>>())?;
        Ok(Self {
            framebuffer,
            layers,
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

    /// The texture (the first layer).
    pub fn texture(&self) -> &Texture<F> {
        &self.layers[0]
    }

    /// Every layer, in attachment order.
    pub fn layers(&self) -> &[Texture<F>] {
        &self.layers
    }

    /// The framebuffer drawing into it.
    pub fn framebuffer(&self) -> &Framebuffer {
        &self.framebuffer
    }

    /// Width in texels.
    pub fn width(&self) -> usize {
        self.layers[0].width()
    }

    /// Height in texels.
    pub fn height(&self) -> usize {
        self.layers[0].height()
    }
}
