//! A texture with its framebuffer, and the ping-pong pair of them the algorithms alternate.

use super::{context::Context, framebuffer::Framebuffer, texture::Texture};
use crate::error::Result;

/// A texture that can be rendered into.
pub struct RenderTexture {
    // Field order: the framebuffer goes before the texture it points at.
    framebuffer: Framebuffer,
    texture: Texture,
}

impl RenderTexture {
    /// Allocates a `width` x `height` R32F texture with its framebuffer.
    pub fn new(ctx: &Context, width: usize, height: usize) -> Result<Self> {
        let texture = Texture::new(ctx, width, height)?;
        let framebuffer = Framebuffer::new(ctx, &texture)?;
        Ok(Self {
            framebuffer,
            texture,
        })
    }

    /// The texture.
    pub fn texture(&self) -> &Texture {
        &self.texture
    }

    /// The framebuffer drawing into it.
    pub fn framebuffer(&self) -> &Framebuffer {
        &self.framebuffer
    }
}

/// Two equal render textures: passes read the source (S) and write the target (T), then swap.
pub struct PingPong {
    pair: [RenderTexture; 2],
    source: usize,
}

impl PingPong {
    /// Allocates both textures.
    pub fn new(ctx: &Context, width: usize, height: usize) -> Result<Self> {
        Ok(Self {
            pair: [
                RenderTexture::new(ctx, width, height)?,
                RenderTexture::new(ctx, width, height)?,
            ],
            source: 0,
        })
    }

    /// The texture passes read (C_S, L_S).
    pub fn source(&self) -> &RenderTexture {
        &self.pair[self.source]
    }

    /// The texture passes write (C_T, L_T).
    pub fn target(&self) -> &RenderTexture {
        &self.pair[1 - self.source]
    }

    /// Exchanges source and target.
    pub fn swap(&mut self) {
        self.source = 1 - self.source;
    }

    /// Width of each texture.
    pub fn width(&self) -> usize {
        self.pair[0].texture.width()
    }

    /// Height of each texture.
    pub fn height(&self) -> usize {
        self.pair[0].texture.height()
    }
}
